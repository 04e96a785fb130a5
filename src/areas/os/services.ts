// The os area's long-lived parts, built once per process by the composition root:
// the embedders (the built-in word vectors on their worker thread, a node's models
// through the llm area), the ingestion runner, and retrieval as a function the llm
// area's grounding calls.
import path from 'node:path';
import type { Config } from '../../platform/config.js';
import type { Database } from '../../platform/db/database.js';
import type { CheckScope, Retrieve } from '../grounding.js';
import {
  BUILT_IN_DESCRIPTION,
  BUILT_IN_EMBEDDER,
  Embedders,
  type BuiltInStatus,
  type ModelCheck,
  type NodeEmbedding,
} from './embedders/embedders.js';
import { WordVectorEmbedder } from './embedders/word-vectors/embedder.js';
import { ExtractorPool } from './ingestion/extractor.js';
import { IngestionRunner, type IngestionLog } from './ingestion/runner.js';
import { retrieve, type RetrievalDeps } from './retrieval/search.js';
import { resolveScopes } from './retrieval/scopes.js';
import type { Reranker } from './retrieval/rerank.js';

export interface OsServices {
  embedders: Embedders;
  ingestion: IngestionRunner;
  /** Retrieval for one tenant (retrieval/search.ts), as grounding uses it. */
  retrieve: Retrieve;
  /** Whether a scope's workspaces and collections are the tenant's (404 otherwise), for the llm area's threads and assistants. */
  checkScope: CheckScope;
  /** What POST /api/os/search is registered with. */
  retrieval: RetrievalDeps;
  /** The embedders the gateway serves itself, for the models list (none without pgvector). */
  builtInModels: readonly { id: string; description: string }[];
  /** The built-in embedder's state, for /health and the start banner; null without pgvector (nothing uses it then). */
  builtInEmbedder(): BuiltInStatus | null;
  /** Sends ingestion's and the built-in embedder's progress and failures to `log` (buildApp points it at the server's logger). */
  setLog(log: IngestionLog): void;
  /** The serving process's background work: the ingestion runner, and preparing the built-in embedder from the start. */
  start(): void;
  close(): Promise<void>;
}

export interface OsServiceDeps {
  config: Config;
  db: Database;
  vector: boolean;
  /** A compute node's embedding model for a tenant (llm/embeddings/service.ts). */
  nodeEmbedding: NodeEmbedding;
  /** Whether the tenant may use a model (the llm router's check). */
  modelCheck: ModelCheck;
  /** A compute node's reranker for a tenant (llm/rerank/service.ts): what search reorders its candidates with. */
  nodeRerank: Reranker;
  /** For tests: the built-in embedder stays 'preparing' until this settles (WordVectorEmbedderOptions.hold). */
  holdBuiltInEmbedder?: Promise<void>;
}

export function createOsServices({
  config,
  db,
  vector,
  nodeEmbedding,
  modelCheck,
  nodeRerank,
  holdBuiltInEmbedder,
}: OsServiceDeps): OsServices {
  let sink: IngestionLog = () => {};
  const wordVectors = new WordVectorEmbedder({
    dataDir: config.dataDir,
    ...(config.documents.wordVectorsFile ? { binaryFile: path.resolve(config.documents.wordVectorsFile) } : {}),
    log: (level, message) => sink(level, message),
    ...(holdBuiltInEmbedder ? { hold: holdBuiltInEmbedder } : {}),
  });
  const embedders = new Embedders(wordVectors, nodeEmbedding, modelCheck);
  const documents = config.documents;
  // One extraction worker per document in flight, kept between documents.
  const extractors = new ExtractorPool({
    size: documents.ingestConcurrency,
    timeoutMs: documents.extractTimeoutMs,
    maxMemoryMb: documents.extractMaxMemoryMb,
    maxExpandedBytes: documents.extractMaxExpandedBytes,
    chunkTokens: documents.chunkTokens,
    chunkOverlapTokens: documents.chunkOverlapTokens,
  });
  const ingestion = new IngestionRunner({
    db,
    vector,
    config: documents,
    leaseSeconds: config.jobLeaseSeconds,
    embedders,
    extract: (bytes, mediaType, name) => extractors.extract(bytes, mediaType, name),
    log: (level, message) => sink(level, message),
  });
  const retrieval: RetrievalDeps = {
    db,
    vector,
    embedQuery: embedders.embedQuery.bind(embedders),
    align: (query, texts) => embedders.align(query, texts),
    rerank: nodeRerank,
  };
  return {
    embedders,
    ingestion,
    retrieve: (tenantId, request) => retrieve(retrieval, tenantId, request),
    // The same resolution retrieval does, so a stored scope fails now rather than at its first run.
    checkScope: async (tenantId, scope) => {
      if (scope.workspaceIds?.length || scope.collectionIds?.length) await resolveScopes(db, tenantId, scope);
    },
    retrieval,
    builtInModels: vector ? [{ id: BUILT_IN_EMBEDDER, description: BUILT_IN_DESCRIPTION }] : [],
    builtInEmbedder: () => (vector ? embedders.builtInStatus : null),
    setLog(log) {
      sink = log;
    },
    start() {
      ingestion.start();
      // Without pgvector no collection has vectors, so nothing would ever use it.
      if (vector) embedders.prepare();
    },
    async close() {
      await ingestion.close();
      await Promise.all([extractors.close(), embedders.close()]);
    },
  };
}
