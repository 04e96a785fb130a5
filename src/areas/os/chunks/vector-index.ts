// Vectors of each size get their own partial HNSW index (the column is an untyped
// `vector`, so the index is over a cast to the size). The built-in embedder's 100 is
// made by the migration; a node's embedder brings its size the first time it is used.
// The graphs hold only the vectors of collections larger than EXACT_SCAN_MAX_CHUNKS
// (`indexed` rows, migration 0019): a smaller collection is scanned exactly, and
// keeping its vectors in a graph was the costliest step of ingestion.
import type { Queryable } from '../../../platform/db/database.js';
import { isUniqueViolation } from '../../../platform/db/database.js';

/** Collections of up to this many chunks are searched by an exact scan; only larger ones' vectors are kept in a graph. */
export const EXACT_SCAN_MAX_CHUNKS = 5000;
/** Older vectors of a collection that grew past the limit put in its graph per write, so no one transaction holds the database long. */
export const INDEX_CATCH_UP_ROWS = 500;

// pgvector's HNSW takes `vector` up to 2,000 dimensions; larger ones are searched exactly.
const HNSW_MAX_DIMENSIONS = 2000;
const known = new Set<number>([100]);

export async function ensureVectorIndex(q: Queryable, dimensions: number): Promise<void> {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > HNSW_MAX_DIMENSIONS || known.has(dimensions)) return;
  try {
    await q.query(
      `CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw_${dimensions} ON chunk_vectors
       USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) WHERE dimensions = ${dimensions} AND indexed`,
    );
  } catch (error) {
    // Another replica created it at the same moment.
    if (!isUniqueViolation(error)) throw error;
  }
  known.add(dimensions);
}

/** SQL: whether a new vector of collection `collection` goes into its graph now. */
export const indexedOnWrite = (collection: string) =>
  `COALESCE((SELECT c.chunk_count > ${EXACT_SCAN_MAX_CHUNKS} FROM collections c WHERE c.id = ${collection}), false)`;

/**
 * Puts up to INDEX_CATCH_UP_ROWS older vectors of the given collections into their
 * graphs where a collection has grown past EXACT_SCAN_MAX_CHUNKS; returns how many.
 * Until then search scans those rows exactly, so this only moves cost, never results.
 */
export async function catchUpVectorIndex(q: Queryable, collectionIds: string[]): Promise<number> {
  if (collectionIds.length === 0) return 0;
  const rows = await q.query<{ n: number }>(
    `WITH due AS (
       SELECT cv.chunk_id, cv.embedder FROM chunk_vectors cv JOIN collections c ON c.id = cv.collection_id
       WHERE cv.collection_id = ANY($1::text[]) AND NOT cv.indexed AND c.chunk_count > ${EXACT_SCAN_MAX_CHUNKS}
       LIMIT ${INDEX_CATCH_UP_ROWS}
     ), done AS (
       UPDATE chunk_vectors cv SET indexed = true FROM due WHERE cv.chunk_id = due.chunk_id AND cv.embedder = due.embedder RETURNING 1
     )
     SELECT count(*)::int AS n FROM done`,
    [collectionIds],
  );
  return rows[0]?.n ?? 0;
}
