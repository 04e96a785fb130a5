// Retrieval's shapes: the snippet grounding and POST /api/os/search return, the
// ragScopes element, and the search request. Types derive from the schemas.
import { Type, type Static } from '@fastify/type-provider-typebox';

export const MAX_SCOPE_IDS = 100;
export const MAX_TOP_K = 50;
export const DEFAULT_TOP_K = 5;
export const MAX_QUERY_CHARS = 4000;

const Id = Type.String({ minLength: 1, maxLength: 200 });
const Ids = Type.Array(Id, { maxItems: MAX_SCOPE_IDS });
const TopK = Type.Integer({ minimum: 1, maximum: MAX_TOP_K });

/**
 * One element of `ragScopes`: where to look, and how much to take from there. At least
 * one of workspaceId, collectionIds and documentIds (checked by the service: a schema
 * union would make every error message about the union). The fields narrow each other:
 * collections must lie in the workspace, documents in the collections (or workspace).
 */
export const RagScope = Type.Object(
  {
    workspaceId: Type.Optional(Id),
    collectionIds: Type.Optional(Ids),
    documentIds: Type.Optional(Ids),
    /** Snippets taken from this scope at most (the request's topK otherwise). */
    topK: Type.Optional(TopK),
    /** Snippets of this scope scoring below it are dropped (see Snippet.score). */
    minScore: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);
export type RagScope = Static<typeof RagScope>;

export const Mode = Type.Union([Type.Literal('hybrid'), Type.Literal('lexical'), Type.Literal('vector')]);
export type Mode = Static<typeof Mode>;

/**
 * A passage of a document, as grounding puts it into the prompt. `score` (0..1) is
 * the strength of its best evidence: the share of the query's information (BM25 idf
 * mass, each term saturating at one average occurrence) the passage covers, or the
 * cosine similarity of its vector to the query's, whichever is higher. Snippets are
 * ordered by the fused rank, not by this score.
 */
export const Snippet = Type.Object({
  id: Type.String(),
  documentId: Type.String(),
  documentName: Type.String(),
  collectionId: Type.String(),
  workspaceId: Type.String(),
  chunkIndex: Type.Integer(),
  content: Type.String(),
  score: Type.Number(),
  source: Type.Object({
    title: Type.String(),
    headingPath: Type.Optional(Type.Array(Type.String())),
    page: Type.Optional(Type.Integer()),
  }),
});
export type Snippet = Static<typeof Snippet>;

export const RagStatus = Type.Union([
  Type.Literal('active'),
  Type.Literal('no_documents'),
  Type.Literal('no_matches'),
  Type.Literal('indexing'),
  Type.Literal('embedder_unavailable'),
]);

export const SearchBody = Type.Object({
  query: Type.String({ minLength: 1, maxLength: MAX_QUERY_CHARS, pattern: '\\S', text: 'multiline' }),
  workspaceIds: Type.Optional(Ids),
  collectionIds: Type.Optional(Ids),
  ragScopes: Type.Optional(Type.Array(RagScope, { maxItems: MAX_SCOPE_IDS })),
  topK: Type.Optional(TopK),
  mode: Type.Optional(Mode),
});
export type SearchBody = Static<typeof SearchBody>;

export const SearchResponse = Type.Object({
  data: Type.Array(Snippet),
  status: RagStatus,
  retrieval: Type.Object({ mode: Mode, embedder: Type.Union([Type.String(), Type.Null()]) }),
});
