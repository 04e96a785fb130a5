// POST /api/llm/v1/rerank request and response: the shape vLLM, llama.cpp server, TEI,
// Jina and Cohere share. Documents are strings or `{text}` objects; the answer lists
// them by relevance, best first, `top_n` of them.
import { Type, type Static } from '@fastify/type-provider-typebox';

/** Documents per request: rerankers score 30-100 candidates; a thousand is a generous ceiling. */
export const MAX_DOCUMENTS = 1000;
/** Per query and per document: past every reranker's context (512-8192 tokens); the body limit caps the whole. */
export const MAX_TEXT_CHARS = 32_768;

const Text = Type.String({ minLength: 1, maxLength: MAX_TEXT_CHARS, pattern: '\\S', text: 'verbatim' });

export const RerankBody = Type.Object({
  model: Type.String({ minLength: 1, maxLength: 200 }),
  query: Text,
  documents: Type.Array(Type.Union([Text, Type.Object({ text: Text })]), { minItems: 1, maxItems: MAX_DOCUMENTS }),
  /** How many results to return, best first (default: all). */
  top_n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DOCUMENTS })),
  /** Whether each result carries its document's text (default: no). */
  return_documents: Type.Optional(Type.Boolean()),
});
export type RerankBody = Static<typeof RerankBody>;

export const RerankList = Type.Object({
  id: Type.String(),
  model: Type.String(),
  results: Type.Array(
    Type.Object({
      /** The document's position in the request. */
      index: Type.Integer(),
      /** The model's score, as the engine gives it (0..1 for sigmoid rerankers); higher is more relevant. */
      relevance_score: Type.Number(),
      document: Type.Optional(Type.Object({ text: Type.String() })),
    }),
  ),
  usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});
export type RerankList = Static<typeof RerankList>;
