// The start banner's word on models, printed once every node's first probe is in
// (the server listens before then): what is served, or "no models yet" and the two
// ways to get one, the same ways the 503 of a chat without a model names.
import type { NodeRegistry } from '../areas/llm/router/registry.js';
import { MODELS_README } from '../areas/llm/router/no-model.js';

const SHOWN = 5;

export function modelsNotice(registry: Pick<NodeRegistry, 'nodes'>, cli: string): string[] {
  const nodes = registry.nodes().filter((n) => n.definition.enabled && !n.retired);
  const served = [...new Set(nodes.filter((n) => n.routable).flatMap((n) => n.models.map((m) => m.id)))].sort();
  const down = nodes.filter((n) => !n.routable).map((n) => n.definition.name);
  const unreachable =
    down.length > 0 ? [`  (not reachable at start: ${down.join(', ')}; their models appear once a health check reaches them)`] : [];
  if (served.length > 0) {
    const more = served.length > SHOWN ? ` and ${served.length - SHOWN} more` : '';
    return [`  models:    ${served.slice(0, SHOWN).join(', ')}${more} (GET /api/llm/v1/models lists each tenant's)`, ...unreachable];
  }
  const local = nodes.some((n) => n.definition.engine === 'local');
  return [
    'No models yet: chats answer 503 until a compute node serves one. To add one:',
    ...(local ? [`  ${cli} models pull <name> --url <url-of-a-gguf-file>   (into the built-in local engine)`] : []),
    '  POST /api/llm/v1/nodes with {"name", "engine": "ollama" | "openai", "url"}   (connect Ollama, vLLM or any OpenAI-compatible server)',
    `  See ${MODELS_README}.`,
    ...unreachable,
  ];
}
