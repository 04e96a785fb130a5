// POST /api/llm/v1/embeddings request and response shapes, OpenAI's. The schema
// checks types only; `input`'s bounds (counts, lengths, empty strings) are checked
// by input.ts, where each refusal can name the item at fault: a union's schema
// errors would name the wrong branch ("input: must be string" for an array too long).
import { Type, type Static } from '@fastify/type-provider-typebox';

/** OpenAI's limit on inputs per request. */
export const MAX_INPUTS = 2048;
/** Per text input: about 16k tokens of English, past every embedding model's context; the body limit (1 MiB by default) caps the whole. */
export const MAX_INPUT_CHARS = 65_536;
/** Per token-array input: OpenAI's context for its embedding models. */
export const MAX_INPUT_TOKENS = 8192;
export const MAX_DIMENSIONS = 16_384;

export const EmbeddingBody = Type.Object({
  // A string, an array of strings, an array of token ids, or an array of token-id arrays.
  input: Type.Union([
    Type.String({ text: 'verbatim' }),
    Type.Array(Type.Union([Type.String({ text: 'verbatim' }), Type.Integer(), Type.Array(Type.Integer())])),
  ]),
  model: Type.String({ minLength: 1, maxLength: 200 }),
  encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
  dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DIMENSIONS })),
  // OpenAI's end-user id for abuse monitoring: accepted, not forwarded.
  user: Type.Optional(Type.String({ maxLength: 512 })),
});
export type EmbeddingBody = Static<typeof EmbeddingBody>;

export const EmbeddingList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      object: Type.Literal('embedding'),
      index: Type.Integer(),
      // Floats, or with encoding_format "base64" their little-endian float32 bytes in base64.
      embedding: Type.Union([Type.Array(Type.Number()), Type.String()]),
    }),
  ),
  model: Type.String(),
  usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});
export type EmbeddingList = Static<typeof EmbeddingList>;
