// Recall of the approximate vector search against the exact one, under the filter
// retrieval always applies (tenant and collection). pgvector filters after walking
// the HNSW graph, so a small collection inside a large corpus is where an index scan
// can come back short; the gateway's vector leg keeps scanning (hnsw.iterative_scan).
// Both sides are the gateway's own query (retrieval/vector.ts): `index` walks the
// graph, `exact` orders every vector of the collection by distance (the planner
// cannot use the index for it). Candidates are taken as retrieval takes them; the
// first k of each are compared.
import { vectorCandidates } from '../../src/areas/os/retrieval/vector.js';
import type { Database } from '../../src/platform/db/database.js';
import { summarize, type Summary } from '../support/stats.js';

export interface RecallScope {
  tenantId: string;
  collectionIds: string[];
  chunkCount: number;
  embedder: string;
  dimensions: number;
}

export interface RecallFigures {
  queries: number;
  k: number;
  /** Mean over queries of |ANN top k ∩ exact top k| / |exact top k|. */
  recall: number;
  /** Queries whose index scan returned fewer than k rows while the collection has more. */
  short: number;
  indexMs: Summary;
  exactMs: Summary;
}

export async function annRecall(db: Database, scope: RecallScope, queryVectors: ArrayLike<number>[], k = 10): Promise<RecallFigures> {
  let recallSum = 0;
  let short = 0;
  const indexMs: number[] = [];
  const exactMs: number[] = [];
  for (const vector of queryVectors) {
    const search = { ...scope, documentIds: null, vector };
    let started = performance.now();
    const approximate = (await vectorCandidates(db, { ...search, plan: 'index' })).slice(0, k);
    indexMs.push(performance.now() - started);
    started = performance.now();
    const exact = (await vectorCandidates(db, { ...search, plan: 'exact' })).slice(0, k);
    exactMs.push(performance.now() - started);
    if (exact.length === 0) throw new Error('the exact search found no vector at all: the collection has none');
    const truth = new Set(exact.map((hit) => hit.chunkId));
    recallSum += approximate.filter((hit) => truth.has(hit.chunkId)).length / truth.size;
    if (approximate.length < Math.min(k, scope.chunkCount)) short++;
  }
  return {
    queries: queryVectors.length,
    k,
    recall: recallSum / queryVectors.length,
    short,
    indexMs: summarize(indexMs),
    exactMs: summarize(exactMs),
  };
}
