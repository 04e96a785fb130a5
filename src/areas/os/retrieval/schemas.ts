// POST /api/os/search's shapes; the snippet, the ragScopes element and the statuses
// are the grounding contract's (areas/grounding.ts), shared with the llm area.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { GroundingFields, Mode, RerankModel, RetrievalStatus, Snippet, TopK } from '../../grounding.js';

export { MAX_SCOPE_IDS, MAX_TOP_K, Mode, RagScope, Snippet } from '../../grounding.js';
export const DEFAULT_TOP_K = 5;
export const MAX_QUERY_CHARS = 4000;

export const SearchBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: MAX_QUERY_CHARS, pattern: '\\S', text: 'multiline' }),
  ...GroundingFields,
  topK: Type.Optional(TopK),
  mode: Type.Optional(Mode),
  /** Reranks the fused candidates with this model (POST /api/llm/v1/rerank's), over the scopes' and collections' own. */
  rerankModel: Type.Optional(RerankModel),
});
export type SearchBody = Static<typeof SearchBody>;

export const SearchResponse = Type.Object({
  data: Type.Array(Snippet),
  status: RetrievalStatus,
  retrieval: Type.Object({
    mode: Mode,
    embedder: Type.Union([Type.String(), Type.Null()]),
    /** Present when an embedder was left out (still being prepared, or down): the search ran on text alone there. */
    note: Type.Optional(Type.String()),
    /** Present when a reranker was named: `unavailable` when it could not answer (down, unknown model): the fused order stands there. */
    reranker: Type.Optional(Type.Union([Type.Literal('applied'), Type.Literal('unavailable')])),
  }),
});
