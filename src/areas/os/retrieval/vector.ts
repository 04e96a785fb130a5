// The vector leg: cosine kNN over chunk_vectors for one embedder. pgvector applies a
// WHERE filter after the HNSW scan, so a small collection inside a large corpus would
// get fewer than k rows from a plain index scan; hnsw.iterative_scan keeps scanning
// until the filtered rows are enough. Small searches skip the graph altogether: an
// exact scan over a few thousand vectors is as fast, and exact. The graphs hold only
// the vectors of large collections (chunks/vector-index.ts): an index search adds an
// exact scan of the searched rows no graph holds yet, and takes the nearest of both.
import type { Database, Queryable } from '../../../platform/db/database.js';
import { vectorLiteral } from '../chunks/store.js';
import { EXACT_SCAN_MAX_CHUNKS } from '../chunks/vector-index.js';

export const VECTOR_CANDIDATES = 50;
/** Up to this many chunks in the searched collections, an exact scan (no index, full recall). */
export { EXACT_SCAN_MAX_CHUNKS };
/** The graph's candidate list while scanning: above the candidates wanted, for recall. */
export const HNSW_EF_SEARCH = 100;
/** With iterative scan: how many tuples one search may visit before it gives up. */
export const HNSW_MAX_SCAN_TUPLES = 40000;

export interface VectorHit {
  chunkId: string;
  /** Cosine similarity, -1..1. */
  similarity: number;
}

export interface VectorSearch {
  tenantId: string;
  collectionIds: string[];
  /** Chunks in those collections (decides the plan under 'auto'). */
  chunkCount: number;
  documentIds: string[] | null;
  embedder: string;
  dimensions: number;
  vector: ArrayLike<number>;
  limit?: number;
  /** 'auto' picks exact for small searches and for document scopes, the HNSW index otherwise. */
  plan?: 'auto' | 'index' | 'exact';
}

export async function vectorCandidates(db: Database, search: VectorSearch): Promise<VectorHit[]> {
  const dims = search.dimensions;
  // Inlined, not a parameter: the partial index (WHERE dimensions = N) and its cast expression only match literal text.
  if (!Number.isInteger(dims) || dims < 1 || dims > 16000) throw new Error(`invalid vector dimensions ${dims}`);
  if (search.vector.length !== dims) throw new Error(`query vector has ${search.vector.length} dimensions, the collection ${dims}`);
  const plan =
    search.plan && search.plan !== 'auto'
      ? search.plan
      : search.documentIds || search.chunkCount <= EXACT_SCAN_MAX_CHUNKS
        ? 'exact'
        : 'index';
  const params = [
    search.tenantId,
    search.collectionIds,
    search.embedder,
    vectorLiteral(search.vector),
    search.limit ?? VECTOR_CANDIDATES,
    search.documentIds,
  ];
  if (plan === 'exact') return toHits(await exactNearest(db, dims, params));
  const [inGraph, notYet] = await Promise.all([
    indexNearest(db, dims, params),
    exactNearest(db, dims, params, 'AND NOT cv.indexed AND cv.collection_id = ANY($2::text[])'),
  ]);
  const nearest = [...inGraph, ...notYet].sort((a, b) => a.distance - b.distance || (a.chunk_id < b.chunk_id ? -1 : 1));
  return toHits(nearest.slice(0, search.limit ?? VECTOR_CANDIDATES));
}

/** The HNSW graph's nearest among the collections' indexed rows. */
function indexNearest(db: Database, dims: number, params: unknown[]) {
  return db.tx(async (q) => {
    // relaxed_order: the index returns rows slightly out of order while it keeps scanning; re-sorted below.
    await q.query('SET LOCAL hnsw.iterative_scan = relaxed_order');
    await q.query(`SET LOCAL hnsw.ef_search = ${HNSW_EF_SEARCH}`);
    await q.query(`SET LOCAL hnsw.max_scan_tuples = ${HNSW_MAX_SCAN_TUPLES}`);
    return q.query<{ chunk_id: string; distance: number }>(
      `WITH nearest AS MATERIALIZED (
           SELECT cv.chunk_id, (cv.embedding::vector(${dims})) <=> $4::vector(${dims}) AS distance
           FROM chunk_vectors cv
           WHERE cv.dimensions = ${dims} AND cv.indexed AND cv.embedder = $3 AND cv.collection_id = ANY($2::text[])
           ORDER BY (cv.embedding::vector(${dims})) <=> $4::vector(${dims})
           LIMIT $5
         )
         SELECT n.chunk_id, n.distance FROM nearest n
         JOIN chunks c ON c.id = n.chunk_id AND c.tenant_id = $1
         WHERE $6::text[] IS NULL OR c.document_id = ANY($6::text[])
         ORDER BY n.distance, n.chunk_id`,
      params,
    );
  });
}

// The bare column (not the indexed cast) in the distance keeps the planner off the HNSW index.
function exactNearest(q: Queryable, dims: number, params: unknown[], only = '') {
  return q.query<{ chunk_id: string; distance: number }>(
    `SELECT cv.chunk_id, cv.embedding <=> $4::vector AS distance
     FROM chunks c JOIN chunk_vectors cv ON cv.chunk_id = c.id AND cv.embedder = $3 AND cv.dimensions = ${dims} ${only}
     WHERE c.tenant_id = $1 AND c.collection_id = ANY($2::text[]) AND ($6::text[] IS NULL OR c.document_id = ANY($6::text[]))
     ORDER BY distance, cv.chunk_id
     LIMIT $5`,
    params,
  );
}

const toHits = (rows: { chunk_id: string; distance: number }[]): VectorHit[] =>
  rows.map((row) => ({ chunkId: row.chunk_id, similarity: 1 - Number(row.distance) }));
