// One document through ingestion: its bytes are extracted and chunked on a worker
// thread, the chunks embedded by the collection's embedder(s), and everything is
// written in one transaction (shared with other documents ready at the same moment:
// batch-writer.ts), so retrieval sees all of the document or none of it.
import type { Database } from '../../../platform/db/database.js';
import type { ChunkInput } from '../chunks/store.js';
import type { MediaType } from '../documents/media-types.js';
import type { Embedders } from '../embedders/embedders.js';
import { type BatchWriter, DocumentGone } from './batch-writer.js';
import { ingestionJobs, type ClaimedDocument, type Stage } from './jobs.js';

export { DocumentGone };

/** Extraction and chunking, off the request thread (ingestion/extractor.ts). */
export type Extract = (bytes: Uint8Array, mediaType: MediaType, name: string) => Promise<{ title: string; chunks: ChunkInput[] }>;

export interface ProcessDeps {
  db: Database;
  /** Whether chunk_vectors exists (pgvector): without it, collections are lexical only. */
  vector: boolean;
  extract: Extract;
  embedders: Pick<Embedders, 'embed' | 'preparing' | 'builtInReady'>;
  writer: Pick<BatchWriter, 'write'>;
}

/** What an embedder is given for a chunk: where it sits, then what it says. */
export const embeddingText = (chunk: ChunkInput): string => [chunk.title, ...chunk.headingPath, chunk.content].join('\n');

export async function processDocument(
  deps: ProcessDeps,
  doc: ClaimedDocument,
  keepLease: (stage?: Stage) => Promise<void>,
): Promise<number> {
  const collection = await ingestionJobs.material(deps.db, doc.id, doc.collection_id);
  if (!collection) throw new DocumentGone();
  const bytes = collection.content;
  const { chunks } = await deps.extract(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), doc.media_type, doc.name);

  const embedders = deps.vector ? [collection.embedding_model, collection.pending_embedding_model].filter((e): e is string => !!e) : [];
  const vectors: { embedder: string; vectors: ArrayLike<number>[] }[] = [];
  if (embedders.length > 0 && chunks.length > 0) {
    // The built-in embedder's one-off preparation (started with the server) may still run:
    // the document says so while it waits, rather than sitting at "embedding" for minutes.
    if (embedders.some((e) => deps.embedders.preparing(e))) {
      await keepLease('preparing_embedder');
      await deps.embedders.builtInReady();
    }
    showStage(keepLease, 'embedding');
    const texts = chunks.map(embeddingText);
    for (const embedder of embedders) vectors.push({ embedder, vectors: await deps.embedders.embed(doc.tenant_id, embedder, texts) });
  }

  showStage(keepLease, 'indexing');
  await deps.writer.write({ doc, language: collection.language, chunks, vectors });
  return chunks.length;
}

/**
 * Shows the stage without waiting for it: the statement waits for the database's
 * connection, which a batch's write may hold for a while, and the document need not.
 * A document gone meanwhile is found by the write (ingestionJobs.lockOwned).
 */
function showStage(keepLease: (stage?: Stage) => Promise<void>, stage: Stage): void {
  keepLease(stage).catch(() => {});
}
