// The models list in OpenAI's shape (GET /api/llm/v1/models).
import { Type, type Static } from '@fastify/type-provider-typebox';

export const Model = Type.Object({
  id: Type.String(),
  object: Type.Literal('model'),
  created: Type.Integer(),
  owned_by: Type.String(),
  // Ours: what a model that is not a chat model is for (the built-in embedder).
  description: Type.Optional(Type.String()),
  // Ours: `embedding` (the built-in embedder) or `rerank` (for POST /rerank; see kind.ts); absent: a chat model, or not known.
  kind: Type.Optional(Type.Union([Type.Literal('embedding'), Type.Literal('rerank')])),
});
export type Model = Static<typeof Model>;

export const ModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(Model) });
export type ModelList = Static<typeof ModelList>;

/** GET /models/{id}: the id is the rest of the path, slashes and colons included. */
export const ModelParams = Type.Object({ '*': Type.String({ minLength: 1, maxLength: 200 }) });
