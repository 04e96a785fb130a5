// The contract between grounding in the llm area (chat answers from the tenant's
// documents) and retrieval in the os area: what may be asked (scopes), what comes
// back (snippets, a status). Both areas validate and answer with these schemas; the
// composition root hands the llm area os's retrieve function, typed by this file.
import { Type, type Static } from '@fastify/type-provider-typebox';

export const MAX_SCOPE_IDS = 100;
export const MAX_TOP_K = 50;

const Id = Type.String({ minLength: 1, maxLength: 200 });
const Ids = Type.Array(Id, { maxItems: MAX_SCOPE_IDS });
export const TopK = Type.Integer({ minimum: 1, maximum: MAX_TOP_K });
/** A model id as POST /api/llm/v1/rerank takes it. */
export const RerankModel = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });

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
    /** The reranker (a model on a compute node) this scope's best candidates are reordered with; overrides the collections'. */
    rerankModel: Type.Optional(RerankModel),
  },
  { additionalProperties: false },
);
export type RagScope = Static<typeof RagScope>;

/** The grounding fields of a chat request (spec 2.5) and of a search. */
export const GroundingFields = {
  workspaceIds: Type.Optional(Ids),
  collectionIds: Type.Optional(Ids),
  ragScopes: Type.Optional(Type.Array(RagScope, { maxItems: MAX_SCOPE_IDS })),
};

export const Mode = Type.Union([Type.Literal('hybrid'), Type.Literal('lexical'), Type.Literal('vector')]);
export type Mode = Static<typeof Mode>;

/**
 * A passage of a document, as grounding puts it into the prompt. `score` (0..1) is
 * the strength of its best evidence: the share of the query's information (BM25 idf
 * mass, each term saturating at one average occurrence) the passage covers, or the
 * cosine similarity of its vector to the query's, whichever is higher; where a rerank
 * model ordered them, that model's score. Snippets are ordered by the final ranking
 * (fused, aligned, reranked), not by this score.
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

/**
 * What a retrieval found:
 * - `active`: snippets were found.
 * - `indexing`: none, and documents of the scope are still queued or processing.
 * - `no_documents`: none, and the scope has no searchable chunk at all.
 * - `embedder_unavailable`: none lexically, and the embedder could not embed the query.
 * - `no_matches`: the query's best evidence did not hold up (judged once per query, retrieval/answerability.ts).
 */
export const RetrievalStatus = Type.Union([
  Type.Literal('active'),
  Type.Literal('no_documents'),
  Type.Literal('no_matches'),
  Type.Literal('indexing'),
  Type.Literal('embedder_unavailable'),
]);
export type RetrievalStatus = Static<typeof RetrievalStatus>;

/** An answer's rag_status: a retrieval's, or `inactive` when the request had no grounding field. */
export const RagStatus = Type.Union([Type.Literal('inactive'), ...RetrievalStatus.anyOf]);
export type RagStatus = Static<typeof RagStatus>;

export interface RetrievalRequest {
  query: string;
  workspaceIds?: string[];
  collectionIds?: string[];
  ragScopes?: RagScope[];
  topK?: number;
  mode?: Mode;
  /** Reranks every scope that names none itself, over the collections' own rerankModel. */
  rerankModel?: string;
}

export interface RetrievalResult {
  snippets: Snippet[];
  status: RetrievalStatus;
  /**
   * What actually ran: `lexical` when no query vector could be had (no pgvector, no embedder, embedder down
   * or still being prepared); `note` says which embedder was left out and why.
   */
  retrieval: {
    mode: Mode;
    embedder: string | null;
    note?: string;
    /** Present when a scope named a reranker: `applied`, or `unavailable` when one could not answer (that scope kept the fused order). */
    reranker?: 'applied' | 'unavailable';
  };
}

/** os's retrieval for one tenant; throws AppError 404 for an id that is not the tenant's. */
export type Retrieve = (tenantId: string, request: RetrievalRequest) => Promise<RetrievalResult>;

/** A grounding scope kept with a thread or an assistant (the threads API's `workspace_ids`, `collection_ids`). */
export interface ScopeIds {
  workspaceIds?: string[];
  collectionIds?: string[];
}

/**
 * os's check that every id of a scope is the tenant's: resolves when they all are,
 * throws AppError 404 naming the kind (as retrieval does) for one that is not, or
 * that does not exist. For scopes stored now and searched later (threads, assistants).
 */
export type CheckScope = (tenantId: string, scope: ScopeIds) => Promise<void>;
