// Vectors of each size get their own partial HNSW index (the column is an untyped
// `vector`, so the index is over a cast to the size). The built-in embedder's 100 is
// made by the migration; a node's embedder brings its size the first time it is used.
import type { Queryable } from '../../../platform/db/database.js';
import { isUniqueViolation } from '../../../platform/db/database.js';

// pgvector's HNSW takes `vector` up to 2,000 dimensions; larger ones are searched exactly.
const HNSW_MAX_DIMENSIONS = 2000;
const known = new Set<number>([100]);

export async function ensureVectorIndex(q: Queryable, dimensions: number): Promise<void> {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > HNSW_MAX_DIMENSIONS || known.has(dimensions)) return;
  try {
    await q.query(
      `CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw_${dimensions} ON chunk_vectors
       USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) WHERE dimensions = ${dimensions}`,
    );
  } catch (error) {
    // Another replica created it at the same moment.
    if (!isUniqueViolation(error)) throw error;
  }
  known.add(dimensions);
}
