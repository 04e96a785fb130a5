// The model-pull request (camelCase, spec 6.1) and its per-engine rules.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { validation } from '../../../platform/errors.js';

export const PULL_ENGINES = ['ollama', 'local'] as const;
export type PullEngine = (typeof PULL_ENGINES)[number];

export const PullParams = Type.Object({ engine: Type.String() });

export const PullBody = Type.Object({
  // Ollama: the model name (`llama3.2:1b`, `hf.co/org/repo:Q4_K_M`). Local: the file name to store it under.
  model: Type.String({ minLength: 1, maxLength: 300, pattern: '^\\S+$' }),
  // Local only: where the GGUF file is downloaded from.
  url: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  // Local only: the expected SHA-256 of the file, hex.
  sha256: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$' })),
});
export type PullBody = Static<typeof PullBody>;

// A bare file name: no separators, no leading dot, nothing a path could be made of
// (the local engine's own rule: up to 200 characters before an optional `.gguf`).
const LOCAL_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}(\.gguf)?$/;

/** The rules the schema cannot say because they depend on the engine; throws a 400 naming the field. */
export function checkPullBody(engine: PullEngine, body: PullBody): void {
  if (engine === 'ollama') {
    if (body.url !== undefined) throw validation('url', 'is only accepted by the local engine; Ollama pulls from its own registry');
    if (body.sha256 !== undefined) throw validation('sha256', 'is only accepted by the local engine');
    return;
  }
  if (!LOCAL_FILE_NAME.test(body.model)) {
    throw validation('model', 'must be a plain file name (letters, digits, ".", "_", "+" and "-"; no path) for the local engine');
  }
  if (body.url === undefined) throw validation('url', 'is required for the local engine');
  let url: URL;
  try {
    url = new URL(body.url);
  } catch {
    throw validation('url', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validation('url', 'must be an absolute http or https URL');
}
