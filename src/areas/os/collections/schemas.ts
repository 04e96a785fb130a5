// The collection record and the request shapes of the collection routes; the
// TypeScript types are derived from them, so the two can never disagree.
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Text, Timestamp } from '../../schemas.js';

export const Collection = Type.Object({
  id: Type.String(),
  workspaceId: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  /** The text-search configuration (pg_ts_config) its chunks are indexed and queried with. */
  language: Type.String(),
  /** The embedder retrieval reads vectors of; null: lexical search only. */
  embedding: Type.Union([Type.Object({ model: Type.String(), dimensions: Type.Union([Type.Integer(), Type.Null()]) }), Type.Null()]),
  /** The embedder being filled in the background; swapped in when every chunk has its vector. */
  pendingEmbeddingModel: Type.Union([Type.String(), Type.Null()]),
  /** The reranker (a model on a compute node) its searches reorder their best candidates with; null: none. */
  rerankModel: Type.Union([Type.String(), Type.Null()]),
  /** The workspace's own collection (uploads to the workspace land here); it goes only with the workspace. */
  isDefault: Type.Boolean(),
  documentCount: Type.Integer(),
  chunkCount: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Collection = Static<typeof Collection>;

export const WorkspaceCollectionsParams = Type.Object({ workspaceId: Type.String() });
export const CollectionParams = Type.Object({ collectionId: Type.String() });

// pg_ts_config names are plain identifiers; whether one exists is asked of the database.
const Language = Type.String({ minLength: 1, maxLength: 63, pattern: '^[A-Za-z0-9_]+$' });
const EmbeddingModel = Type.Union([Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }), Type.Null()]);
/** A model id as POST /api/llm/v1/rerank takes it; null: no reranking. */
const RerankModel = Type.Union([Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }), Type.Null()]);
const Description = Type.String({ maxLength: 2000, text: 'multiline' });

export const NewCollection = Type.Object({
  name: Text(200),
  description: Type.Optional(Description),
  /** Omitted: the built-in embedder where pgvector is available; null: lexical only. */
  embeddingModel: Type.Optional(EmbeddingModel),
  language: Type.Optional(Language),
  rerankModel: Type.Optional(RerankModel),
});
export type NewCollection = Static<typeof NewCollection>;

export const CollectionPatch = Type.Object({
  name: Type.Optional(Text(200)),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  embeddingModel: Type.Optional(EmbeddingModel),
  language: Type.Optional(Language),
  rerankModel: Type.Optional(RerankModel),
});
export type CollectionPatch = Static<typeof CollectionPatch>;
