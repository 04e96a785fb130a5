// How many documents wait for ingestion and how many are being ingested, across every
// replica (the queue is the documents table: jobs.ts). Read when /metrics is scraped,
// on the partial index that holds exactly these rows.
import type { Queryable } from '../../../platform/db/database.js';

export async function ingestionQueueDepth(q: Queryable): Promise<{ queued: number; processing: number }> {
  const rows = await q.query<{ status: string; count: number }>(
    `SELECT status, count(*)::int AS count FROM documents WHERE status IN ('queued', 'processing') GROUP BY status`,
  );
  let queued = 0;
  let processing = 0;
  for (const row of rows) {
    if (row.status === 'queued') queued = row.count;
    else processing = row.count;
  }
  return { queued, processing };
}
