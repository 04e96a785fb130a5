// A collection changing embedder: the new embedder's vectors are filled in beside
// the old ones (retrieval keeps reading the old), a batch at a time, and when every
// chunk has one the collection switches over and the old vectors go. One worker of any
// replica works a collection at a time, under a short lease (reembed_lease_until), so a
// batch is not embedded (and paid for) twice; batches are idempotent (ON CONFLICT), so a
// worker that dies mid-batch only has its batch done again once its lease runs out.
import type { Database } from '../../../platform/db/database.js';
import { insertVectors } from '../chunks/store.js';
import { ensureVectorIndex } from '../chunks/vector-index.js';
import type { Embedders } from '../embedders/embedders.js';
import { embeddingText } from './process-document.js';

const BATCH = 64;

export interface ReembedDeps {
  db: Database;
  embedders: Pick<Embedders, 'embed'>;
  /** How long a claim on a collection holds without renewal (renewed every third of it). */
  leaseSeconds?: number;
}

/** Works one batch of one collection with a pending embedder; false when there is none free. */
export async function reembedStep(deps: ReembedDeps): Promise<boolean> {
  const leaseSeconds = deps.leaseSeconds ?? 30;
  const [collection] = await deps.db.query<{ id: string; tenant_id: string; pending_embedding_model: string }>(
    `UPDATE collections SET reembed_lease_until = now() + make_interval(secs => $1)
      WHERE id = (
        SELECT id FROM collections
         WHERE pending_embedding_model IS NOT NULL AND (reembed_lease_until IS NULL OR reembed_lease_until < now())
         ORDER BY updated_at LIMIT 1
         FOR UPDATE SKIP LOCKED
      )
      RETURNING id, tenant_id, pending_embedding_model`,
    [leaseSeconds],
  );
  if (!collection) return false;
  const renew = setInterval(
    () => {
      deps.db
        .query('UPDATE collections SET reembed_lease_until = now() + make_interval(secs => $2) WHERE id = $1', [
          collection.id,
          leaseSeconds,
        ])
        .catch(() => undefined); // a database blip: the next renewal tries again
    },
    (leaseSeconds * 1000) / 3,
  );
  renew.unref();
  try {
    return await reembedBatch(deps, collection);
  } finally {
    clearInterval(renew);
    await deps.db.query('UPDATE collections SET reembed_lease_until = NULL WHERE id = $1', [collection.id]).catch(() => undefined);
  }
}

async function reembedBatch(
  deps: ReembedDeps,
  collection: { id: string; tenant_id: string; pending_embedding_model: string },
): Promise<boolean> {
  const embedder = collection.pending_embedding_model;
  const chunks = await deps.db.query<{ id: string; content: string; title: string; heading_path: string[] }>(
    `SELECT c.id, c.content, c.title, c.heading_path FROM chunks c
     WHERE c.collection_id = $1
       AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id AND v.embedder = $2)
     ORDER BY c.id LIMIT ${BATCH}`,
    [collection.id, embedder],
  );
  if (chunks.length === 0) {
    await switchOver(deps.db, collection.id, embedder);
    return true;
  }
  const texts = chunks.map((c) =>
    embeddingText({ content: c.content, title: c.title, headingPath: c.heading_path, page: null, tokenCount: 0 }),
  );
  const vectors = await deps.embedders.embed(collection.tenant_id, embedder, texts);
  const dimensions = vectors[0]?.length ?? 0;
  await ensureVectorIndex(deps.db, dimensions);
  await deps.db.tx(async (q) => {
    // Still wanted? The collection may have been given yet another embedder, or deleted.
    const [still] = await q.query('SELECT 1 FROM collections WHERE id = $1 AND pending_embedding_model = $2 FOR UPDATE', [
      collection.id,
      embedder,
    ]);
    if (!still) return;
    const present = await q.query<{ id: string }>('SELECT id FROM chunks WHERE id = ANY($1::text[])', [chunks.map((c) => c.id)]);
    const keep = new Set(present.map((r) => r.id));
    const ids = chunks.map((c) => c.id).filter((id) => keep.has(id));
    const kept = vectors.filter((_, i) => keep.has(chunks[i]!.id));
    await insertVectors(q, collection.id, ids, { embedder, dimensions, vectors: kept });
  });
  return true;
}

async function switchOver(db: Database, collectionId: string, embedder: string): Promise<void> {
  await db.tx(async (q) => {
    const [row] = await q.query<{ dimensions: number | null }>(
      `SELECT (SELECT dimensions FROM chunk_vectors WHERE collection_id = $1 AND embedder = $2 LIMIT 1) AS dimensions
       FROM collections WHERE id = $1 AND pending_embedding_model = $2 FOR UPDATE`,
      [collectionId, embedder],
    );
    if (!row) return;
    await q.query(
      `UPDATE collections SET embedding_model = $2, embedding_dimensions = $3,
              pending_embedding_model = NULL, updated_at = now()
       WHERE id = $1`,
      [collectionId, embedder, row.dimensions],
    );
    await q.query('DELETE FROM chunk_vectors WHERE collection_id = $1 AND embedder <> $2', [collectionId, embedder]);
  });
}
