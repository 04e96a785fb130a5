// One document through ingestion: its bytes are extracted and chunked on a worker
// thread, the chunks embedded by the collection's embedder(s), and everything is
// written in one transaction, so retrieval sees all of the document or none of it.
import type { Database } from '../../../platform/db/database.js';
import { replaceDocumentChunks, insertVectors, type ChunkInput } from '../chunks/store.js';
import { ensureVectorIndex } from '../chunks/vector-index.js';
import type { MediaType } from '../documents/media-types.js';
import type { Embedders } from '../embedders/embedders.js';
import { ingestionJobs, type ClaimedDocument, type Stage } from './jobs.js';

/** Extraction and chunking, off the request thread (ingestion/extractor.ts). */
export type Extract = (bytes: Uint8Array, mediaType: MediaType, name: string) => Promise<{ title: string; chunks: ChunkInput[] }>;

export interface ProcessDeps {
  db: Database;
  /** Whether chunk_vectors exists (pgvector): without it, collections are lexical only. */
  vector: boolean;
  extract: Extract;
  embedders: Pick<Embedders, 'embed' | 'preparing' | 'builtInReady'>;
}

/** Thrown when the document was deleted (or claimed by another worker) while this one worked: nothing to record. */
export class DocumentGone extends Error {}

/** What an embedder is given for a chunk: where it sits, then what it says. */
export const embeddingText = (chunk: ChunkInput): string => [chunk.title, ...chunk.headingPath, chunk.content].join('\n');

export async function processDocument(
  deps: ProcessDeps,
  doc: ClaimedDocument,
  keepLease: (stage?: Stage) => Promise<void>,
): Promise<number> {
  const bytes = await ingestionJobs.content(deps.db, doc.id);
  if (!bytes) throw new DocumentGone();
  const { chunks } = await deps.extract(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), doc.media_type, doc.name);

  const collection = await ingestionJobs.collectionOf(deps.db, doc.collection_id);
  if (!collection) throw new DocumentGone();
  const embedders = deps.vector ? [collection.embedding_model, collection.pending_embedding_model].filter((e): e is string => !!e) : [];
  const vectors: { embedder: string; vectors: ArrayLike<number>[] }[] = [];
  if (embedders.length > 0 && chunks.length > 0) {
    // The built-in embedder's one-off preparation (started with the server) may still run:
    // the document says so while it waits, rather than sitting at "embedding" for minutes.
    if (embedders.some((e) => deps.embedders.preparing(e))) {
      await keepLease('preparing_embedder');
      await deps.embedders.builtInReady();
    }
    await keepLease('embedding');
    const texts = chunks.map(embeddingText);
    for (const embedder of embedders) vectors.push({ embedder, vectors: await deps.embedders.embed(doc.tenant_id, embedder, texts) });
  }

  await keepLease('indexing');
  for (const v of vectors) await ensureVectorIndex(deps.db, dimensionsOf(v.vectors));
  await deps.db.tx(async (q) => {
    if (!(await ingestionJobs.lockOwned(q, doc.id, doc.attempts))) throw new DocumentGone();
    const ref = { tenantId: doc.tenant_id, collectionId: doc.collection_id, documentId: doc.id, language: collection.language };
    const ids = await replaceDocumentChunks(q, ref, chunks);
    for (const v of vectors) {
      const dimensions = dimensionsOf(v.vectors);
      await insertVectors(q, doc.collection_id, ids, { embedder: v.embedder, dimensions, vectors: v.vectors });
      // The collection learns its embedder's size from the first vectors.
      await q.query(
        `UPDATE collections SET embedding_dimensions = $3 WHERE id = $1 AND embedding_model = $2 AND embedding_dimensions IS NULL`,
        [doc.collection_id, v.embedder, dimensions],
      );
    }
    await ingestionJobs.markReady(q, doc.id, chunks.length);
  });
  return chunks.length;
}

function dimensionsOf(vectors: ArrayLike<number>[]): number {
  const dimensions = vectors[0]?.length ?? 0;
  if (vectors.some((v) => v.length !== dimensions || dimensions === 0)) throw new Error('The embedder gave vectors of differing sizes.');
  return dimensions;
}
