// The last step of ingestion, shared by the runner's workers: documents whose chunks
// and vectors are ready are written together, in one transaction per batch (group
// commit). While one batch is written the next ones queue, so batches grow exactly
// when the database is the bottleneck and a lone document is written at once. On the
// embedded database's one thread a statement covering twenty documents costs far less
// than twenty statements, and a term common to them updates its statistics row once.
//
// Each document still ends `ready` only with all its chunks, vectors and statistics:
// a batch commits or rolls back whole, and when it fails each of its documents is
// written again on its own, so one document's failure is its own and no other's.
import type { Database, Queryable } from '../../../platform/db/database.js';
import { type ChunkInput, writeDocumentsChunks } from '../chunks/store.js';
import { catchUpVectorIndex, ensureVectorIndex } from '../chunks/vector-index.js';
import { type ClaimedDocument, ingestionJobs } from './jobs.js';

export interface DocumentWrite {
  doc: ClaimedDocument;
  /** The collection's text-search configuration. */
  language: string;
  chunks: ChunkInput[];
  /** Each embedder's vectors, aligned with the chunks. */
  vectors: { embedder: string; vectors: ArrayLike<number>[] }[];
}

/** Thrown when the document was deleted (or claimed by another worker) while this one worked: nothing to record. */
export class DocumentGone extends Error {}

interface Queued {
  write: DocumentWrite;
  resolve: () => void;
  reject: (error: unknown) => void;
}

// A batch's transaction holds the embedded database's one connection: about a second of writes at most.
const MAX_BATCH_CHUNKS = 400;

export class BatchWriter {
  readonly #queue: Queued[] = [];
  #writing = false;

  constructor(private readonly db: Database) {}

  /** Settles once the document is written (or rejects: DocumentGone, or the write's own error). */
  write(write: DocumentWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ write, resolve, reject });
      if (!this.#writing) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#next();
        try {
          settle(batch, await writeBatch(this.db, batch));
        } catch (error) {
          if (batch.length === 1) batch[0]!.reject(error);
          // Which one failed, and why, is told by writing each alone.
          else for (const one of batch) await writeBatch(this.db, [one]).then((gone) => settle([one], gone), one.reject);
        }
      }
    } finally {
      this.#writing = false;
    }
  }

  /** The queue's head, up to MAX_BATCH_CHUNKS chunks (at least one document, whatever its size). */
  #next(): Queued[] {
    let chunks = this.#queue[0]!.write.chunks.length;
    let n = 1;
    while (n < this.#queue.length && chunks + this.#queue[n]!.write.chunks.length <= MAX_BATCH_CHUNKS)
      chunks += this.#queue[n++]!.write.chunks.length;
    return this.#queue.splice(0, n);
  }
}

function settle(batch: Queued[], gone: Set<string>): void {
  for (const one of batch) {
    if (gone.has(one.write.doc.id)) one.reject(new DocumentGone());
    else one.resolve();
  }
}

/** Writes the batch in one transaction; returns the documents it no longer owns (deleted, or claimed again), which it did not write. */
async function writeBatch(db: Database, batch: Queued[]): Promise<Set<string>> {
  const writes = batch.map((b) => b.write);
  for (const w of writes) for (const v of w.vectors) await ensureVectorIndex(db, dimensionsOf(v.vectors));
  const gone = await db.tx(async (q) => {
    const owned = await ingestionJobs.lockOwned(
      q,
      writes.map((w) => ({ id: w.doc.id, attempt: w.doc.attempts })),
    );
    const mine = writes.filter((w) => owned.has(w.doc.id));
    await writeDocumentsChunks(
      q,
      mine.map((w) => ({
        ref: { tenantId: w.doc.tenant_id, collectionId: w.doc.collection_id, documentId: w.doc.id, language: w.language },
        chunks: w.chunks,
        vectors: w.vectors.map((v) => ({ embedder: v.embedder, dimensions: dimensionsOf(v.vectors), vectors: v.vectors })),
      })),
    );
    await learnDimensions(q, mine);
    await ingestionJobs.markReady(
      q,
      mine.map((w) => ({ id: w.doc.id, chunkCount: w.chunks.length })),
    );
    return new Set(writes.filter((w) => !owned.has(w.doc.id)).map((w) => w.doc.id));
  });
  // In a transaction of its own, after the batch: a collection grown past the exact-scan
  // limit has a few hundred of its older vectors put in its graph per write. Search scans
  // the rest exactly meanwhile, so a failure here costs time, never results: the next write tries again.
  const vectorCollections = [...new Set(writes.filter((w) => w.vectors.length).map((w) => w.doc.collection_id))];
  await catchUpVectorIndex(db, vectorCollections).catch(() => 0);
  return gone;
}

/** A collection learns its embedder's size from the first vectors. */
async function learnDimensions(q: Queryable, writes: DocumentWrite[]): Promise<void> {
  const seen = new Set<string>();
  for (const w of writes) {
    for (const v of w.vectors) {
      const dimensions = dimensionsOf(v.vectors);
      const key = `${w.doc.collection_id} ${v.embedder} ${dimensions}`;
      if (seen.has(key)) continue;
      seen.add(key);
      await q.query(
        'UPDATE collections SET embedding_dimensions = $3 WHERE id = $1 AND embedding_model = $2 AND embedding_dimensions IS NULL',
        [w.doc.collection_id, v.embedder, dimensions],
      );
    }
  }
}

export function dimensionsOf(vectors: ArrayLike<number>[]): number {
  const dimensions = vectors[0]?.length ?? 0;
  if (vectors.some((v) => v.length !== dimensions || dimensions === 0)) throw new Error('The embedder gave vectors of differing sizes.');
  return dimensions;
}
