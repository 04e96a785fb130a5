// After a benchmark's ingest: are each collection's BM25 statistics and vectors exactly
// what its chunks say? chunk_count and total_length against the chunks, every
// collection_terms row against a recount of the chunks' lexemes (nothing missing,
// nothing extra), one vector per chunk, and the documents' chunk counts.
import type { Database } from '../../src/platform/db/database.js';

export interface StatisticsCheck {
  collections: number;
  chunks: number;
  terms: number;
  /** One line per disagreement; empty when all is right. */
  wrong: string[];
}

export async function checkStatistics(db: Database, collectionIds: string[], embedder: string): Promise<StatisticsCheck> {
  const wrong: string[] = [];
  let chunks = 0;
  let terms = 0;
  for (const id of collectionIds) {
    const [totals] = await db.query<{ chunk_count: number; total_length: number; n: number; len: number; docs: number; vectors: number }>(
      `SELECT c.chunk_count::int, c.total_length::bigint::float8 AS total_length,
              (SELECT count(*)::int FROM chunks WHERE collection_id = c.id) AS n,
              (SELECT COALESCE(sum(length), 0)::float8 FROM chunks WHERE collection_id = c.id) AS len,
              (SELECT COALESCE(sum(chunk_count), 0)::int FROM documents WHERE collection_id = c.id AND status = 'ready') AS docs,
              (SELECT count(*)::int FROM chunk_vectors v JOIN chunks k ON k.id = v.chunk_id
                WHERE k.collection_id = c.id AND v.embedder = $2) AS vectors
       FROM collections c WHERE c.id = $1`,
      [id, embedder],
    );
    if (!totals) {
      wrong.push(`${id}: no such collection`);
      continue;
    }
    chunks += totals.n;
    if (totals.chunk_count !== totals.n) wrong.push(`${id}: chunk_count ${totals.chunk_count}, ${totals.n} chunks`);
    if (totals.total_length !== totals.len)
      wrong.push(`${id}: total_length ${totals.total_length}, the chunks' lengths sum to ${totals.len}`);
    if (totals.docs !== totals.n) wrong.push(`${id}: the ready documents count ${totals.docs} chunks, ${totals.n} stored`);
    if (totals.vectors !== totals.n) wrong.push(`${id}: ${totals.vectors} vectors for ${totals.n} chunks`);
    const [terms_] = await db.query<{ stored: number; differing: number }>(
      `WITH recount AS (
         SELECT t.lexeme AS term, count(*)::int AS df FROM chunks c, unnest(c.tsv) t WHERE c.collection_id = $1 GROUP BY t.lexeme
       ), stored AS (SELECT term, df FROM collection_terms WHERE collection_id = $1)
       SELECT (SELECT count(*)::int FROM stored) AS stored,
              (SELECT count(*)::int FROM recount r FULL JOIN stored s ON s.term = r.term WHERE r.df IS DISTINCT FROM s.df) AS differing`,
      [id],
    );
    terms += terms_?.stored ?? 0;
    if (terms_?.differing) wrong.push(`${id}: ${terms_.differing} collection_terms rows differ from the chunks' lexemes`);
  }
  return { collections: collectionIds.length, chunks, terms, wrong };
}
