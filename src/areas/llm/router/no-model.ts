// What to tell someone who has no model yet: the ways to get one, in the words the
// router's 503 and the start banner share, pointing at the README's Models section.
import type { EngineKind } from '../../../engines/types.js';

/** How the README runs the CLI from a checkout (the start banner says the same). */
export const CLI = 'npx gateway';
export const MODELS_README = 'README.md#models';

/**
 * The ways forward, for the engines the nodes in question run: a pull where one can
 * go (the local engine by the CLI, Ollama by the API), and always a node to connect.
 */
export function waysToAModel(engines: ReadonlySet<EngineKind>, cli = CLI): string {
  const ways: string[] = [];
  if (engines.has('local')) ways.push(`pull a GGUF model into the local engine with \`${cli} models pull <name> --url <gguf-url>\``);
  if (engines.has('ollama')) ways.push('pull one into Ollama with POST /api/llm/v1/ollama/models/pull/stream');
  ways.push('connect a compute node with POST /api/llm/v1/nodes');
  return `${ways.join(', or ')} (see ${MODELS_README})`;
}
