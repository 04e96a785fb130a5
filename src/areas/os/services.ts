// The os area's long-lived parts, built once per process by the composition root:
// the embedders (the built-in word vectors on their worker thread, a node's models
// through the llm area), the ingestion runner, and retrieval as a function the llm
// area's grounding calls.
import path from 'node:path';
import type { Config } from '../../platform/config.js';
import type { Database } from '../../platform/db/database.js';
import type { CheckScope, Retrieve } from '../grounding.js';
import { BUILT_IN_DESCRIPTION, BUILT_IN_EMBEDDER, Embedders, type ModelCheck, type NodeEmbedding } from './embedders/embedders.js';
import { WordVectorEmbedder } from './embedders/word-vectors/embedder.js';
import { ExtractorPool } from './ingestion/extractor.js';
import { IngestionRunner, type IngestionLog } from './ingestion/runner.js';
import { retrieve, type RetrievalDeps } from './retrieval/search.js';
import { resolveScopes } from './retrieval/scopes.js';

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
  /** Sends ingestion's progress and failures to `log` (buildApp points it at the server's logger). */
  setLog(log: IngestionLog): void;
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
}

export function createOsServices({ config, db, vector, nodeEmbedding, modelCheck }: OsServiceDeps): OsServices {
  let sink: IngestionLog = () => {};
  const wordVectors = new WordVectorEmbedder({
    dataDir: config.dataDir,
    ...(config.documents.wordVectorsFile ? { binaryFile: path.resolve(config.documents.wordVectorsFile) } : {}),
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
  const retrieval: RetrievalDeps = { db, vector, embedQuery: embedders.embedQuery.bind(embedders) };
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
    setLog(log) {
      sink = log;
    },
    async close() {
      await ingestion.close();
      await Promise.all([extractors.close(), embedders.close()]);
    },
  };
}
