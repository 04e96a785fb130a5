// The ingestion queue is the documents table itself: a document waiting for work is
// `queued` (or `processing` with a lease that ran out: its worker died), and a worker
// claims it by taking a short lease that it keeps renewing while it works. A restart
// (or a replica dying) therefore loses nothing: the lease runs out and the document
// is claimed again. SKIP LOCKED lets several replicas claim side by side.
import type { Queryable } from '../../../platform/db/database.js';
import type { MediaType } from '../documents/media-types.js';
import type { DocumentStage } from '../documents/schemas.js';

export interface ClaimedDocument {
  id: string;
  tenant_id: string;
  collection_id: string;
  name: string;
  media_type: MediaType;
  attempts: number;
}

/** Where a document's processing is (documents/schemas.ts DocumentStage). */
export type Stage = DocumentStage;

export const ingestionJobs = {
  /** Claims the next due document, or undefined when there is none. */
  async claim(q: Queryable, leaseSeconds: number): Promise<ClaimedDocument | undefined> {
    const [row] = await q.query<ClaimedDocument>(
      `UPDATE documents SET status = 'processing', stage = 'extracting', attempts = attempts + 1,
              lease_until = now() + make_interval(secs => $1), updated_at = now()
       WHERE id = (
         SELECT id FROM documents
         WHERE (status = 'queued' OR (status = 'processing' AND lease_until < now())) AND run_after <= now()
         ORDER BY run_after, id
         LIMIT 1
         FOR UPDATE SKIP LOCKED
       )
       RETURNING id, tenant_id, collection_id, name, media_type, attempts`,
      [leaseSeconds],
    );
    return row;
  },

  /** Hands every claimed document (and re-embedding collection) back at once: the embedded database's start (IngestionRunner.resume). */
  async releaseAll(q: Queryable): Promise<number> {
    await q.query('UPDATE collections SET reembed_lease_until = NULL WHERE reembed_lease_until IS NOT NULL');
    const rows = await q.query(
      `UPDATE documents SET status = 'queued', stage = NULL, lease_until = NULL, run_after = now() WHERE status = 'processing' RETURNING id`,
    );
    return rows.length;
  },

  /** Keeps the lease and shows the stage; false when the document is gone (deleted meanwhile). */
  async renew(q: Queryable, id: string, attempt: number, leaseSeconds: number, stage?: Stage): Promise<boolean> {
    const rows = await q.query(
      `UPDATE documents SET lease_until = now() + make_interval(secs => $3), stage = COALESCE($4, stage), updated_at = now()
       WHERE id = $1 AND attempts = $2 AND status = 'processing' RETURNING id`,
      [id, attempt, leaseSeconds, stage ?? null],
    );
    return rows.length > 0;
  },

  /**
   * What processing the document needs, in one statement (on the embedded database
   * every statement waits for the one connection, which a batch's write may hold):
   * its bytes, and its collection's language and embedders. Undefined when either is gone.
   */
  async material(q: Queryable, id: string, collectionId: string) {
    const [row] = await q.query<{
      content: Buffer;
      language: string;
      embedding_model: string | null;
      embedding_dimensions: number | null;
      pending_embedding_model: string | null;
    }>(
      `SELECT dc.content, c.language, c.embedding_model, c.embedding_dimensions, c.pending_embedding_model
       FROM document_contents dc, collections c WHERE dc.document_id = $1 AND c.id = $2`,
      [id, collectionId],
    );
    return row;
  },

  /**
   * Locks the documents for the final write, those this attempt still owns: a document
   * deleted, or claimed again by another worker after this one's lease ran out, is
   * not written by this one. Returns the ids locked (in id order, so two writers never
   * wait on each other's).
   */
  async lockOwned(q: Queryable, docs: { id: string; attempt: number }[]): Promise<Set<string>> {
    if (docs.length === 0) return new Set();
    const rows = await q.query<{ id: string }>(
      `SELECT d.id FROM documents d JOIN unnest($1::text[], $2::int[]) AS u(id, attempt) ON d.id = u.id AND d.attempts = u.attempt
       WHERE d.status = 'processing' ORDER BY d.id FOR UPDATE OF d`,
      [docs.map((d) => d.id), docs.map((d) => d.attempt)],
    );
    return new Set(rows.map((r) => r.id));
  },

  async markReady(q: Queryable, docs: { id: string; chunkCount: number }[]): Promise<void> {
    if (docs.length === 0) return;
    await q.query(
      `UPDATE documents SET status = 'ready', stage = NULL, error = NULL, chunk_count = u.n, lease_until = NULL, updated_at = now()
       FROM unnest($1::text[], $2::int[]) AS u(id, n) WHERE documents.id = u.id`,
      [docs.map((d) => d.id), docs.map((d) => d.chunkCount)],
    );
  },

  /** Back to the queue after `delaySeconds`, the error kept visible meanwhile. */
  async retryLater(q: Queryable, id: string, attempt: number, error: string, delaySeconds: number): Promise<void> {
    await q.query(
      `UPDATE documents SET status = 'queued', stage = NULL, error = $3, lease_until = NULL,
              run_after = now() + make_interval(secs => $4), updated_at = now()
       WHERE id = $1 AND attempts = $2 AND status = 'processing'`,
      [id, attempt, error, delaySeconds],
    );
  },

  async markFailed(q: Queryable, id: string, attempt: number, error: string): Promise<void> {
    await q.query(
      `UPDATE documents SET status = 'failed', stage = NULL, error = $3, lease_until = NULL, updated_at = now()
       WHERE id = $1 AND attempts = $2 AND status = 'processing'`,
      [id, attempt, error],
    );
  },
};
