// Tenant filtering must not lose recall: pgvector filters after the HNSW scan, so a
// small tenant's collection inside a large corpus of another tenant (one shared
// embedder, one index) could get fewer than k rows from a plain index scan. With
// hnsw.iterative_scan the index search returns the full k, and nearly what an exact
// search would.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedTenant } from '../helpers/gateway.js';
import { vectorCandidates, type VectorSearch } from '../../src/areas/os/retrieval/vector.js';
import { catchUpVectorIndex, EXACT_SCAN_MAX_CHUNKS, INDEX_CATCH_UP_ROWS } from '../../src/areas/os/chunks/vector-index.js';
import { retrieve } from '../../src/areas/os/retrieval/search.js';
import {
  addDocument,
  createCollection,
  createWorkspace,
  depsOf,
  TEST_DIMENSIONS,
  TEST_EMBEDDER,
  type TestCollection,
} from './retrieval-support.js';

const LARGE = EXACT_SCAN_MAX_CHUNKS;
const GROWN = 20;
const SMALL = 30;
const QUERIES = 20;

/** A seeded generator (mulberry32): the same corpus every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function unitVector(next: () => number): Float64Array {
  const v = Float64Array.from({ length: TEST_DIMENSIONS }, () => next() * 2 - 1);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

describe('vector search under a tenant filter', {
  skip: process.env.TEST_DATABASE_URL ? 'needs pgvector (the embedded database)' : false,
}, () => {
  let gw: TestGateway;
  let small: TestCollection;
  let large: TestCollection;
  const next = random(16);
  type Counts = Record<'large' | 'small', { indexed: number; not: number }>;
  let indexedAfterLoad: Counts;
  let indexedAfterCatchUp: Counts;
  let catchUpRounds = 0;
  const indexedCounts = async (): Promise<Counts> => {
    const rows = await gw.ctx.db.query<{ collection_id: string; indexed: number; not: number }>(
      `SELECT collection_id, count(*) FILTER (WHERE indexed)::int AS indexed, count(*) FILTER (WHERE NOT indexed)::int AS not
       FROM chunk_vectors WHERE collection_id = ANY($1::text[]) GROUP BY collection_id`,
      [[large.id, small.id]],
    );
    const of = (id: string) => rows.find((r) => r.collection_id === id) ?? { indexed: 0, not: 0 };
    return {
      large: { indexed: of(large.id).indexed, not: of(large.id).not },
      small: { indexed: of(small.id).indexed, not: of(small.id).not },
    };
  };

  before(async () => {
    gw = await startGateway();
    const a = await seedTenant(gw, 'small');
    const b = await seedTenant(gw, 'large');
    large = await createCollection(gw, b.tenantId, await createWorkspace(gw, b.tenantId), { embedder: TEST_EMBEDDER });
    small = await createCollection(gw, a.tenantId, await createWorkspace(gw, a.tenantId), { embedder: TEST_EMBEDDER });
    const load = async (collection: TestCollection, count: number) => {
      for (let done = 0; done < count; done += 500) {
        const vectors = Array.from({ length: Math.min(500, count - done) }, () => unitVector(next));
        let i = 0;
        await addDocument(
          gw,
          collection,
          `part ${done}`,
          vectors.map((_, n) => `chunk ${done + n}`),
          { vectors: () => vectors[i++]! },
        );
      }
    };
    // Bulk load, then build the graph once (faster than keeping it up row by row). The
    // per-collection btree goes: with it the planner answers a small collection exactly
    // from that index, and the HNSW scan under a filter, what this file is about, would go untested.
    await gw.ctx.db.query('DROP INDEX chunk_vectors_hnsw_100');
    await gw.ctx.db.query('DROP INDEX chunk_vectors_collection_idx');
    const started = performance.now();
    await load(large, LARGE);
    await load(small, SMALL);
    // Past the exact-scan limit: from here the large collection's new vectors go into the graph at once.
    await load(large, GROWN);
    indexedAfterLoad = await indexedCounts();
    while ((await catchUpVectorIndex(gw.ctx.db, [large.id, small.id])) > 0) catchUpRounds++;
    indexedAfterCatchUp = await indexedCounts();
    // The small collection is in the graph too here: an index search under its filter is what this file is about.
    await gw.ctx.db.query('UPDATE chunk_vectors SET indexed = true WHERE collection_id = $1', [small.id]);
    const loaded = performance.now();
    await gw.ctx.db.query(
      'CREATE INDEX chunk_vectors_hnsw_100 ON chunk_vectors USING hnsw ((embedding::vector(100)) vector_cosine_ops) WHERE dimensions = 100 AND indexed',
    );
    await gw.ctx.db.query('ANALYZE chunk_vectors');
    // The planner knows the collection is small and would sort its 30 rows instead (exact,
    // and right); the index is what a large or badly estimated filter gets, so force it here.
    // The embedded database has one session, so this holds for every query below.
    await gw.ctx.db.query('SET enable_sort = off');
    console.log(
      `# loaded ${LARGE + SMALL} chunks with vectors in ${Math.round(loaded - started)} ms, built the HNSW index in ${Math.round(performance.now() - loaded)} ms`,
    );
  });
  after(() => gw.close());

  it(`returns the full topK from the index and recall@10 >= 0.95 against exact search, for ${SMALL} chunks among ${LARGE}`, async () => {
    const base = (vector: Float64Array): VectorSearch => ({
      tenantId: small.tenantId,
      collectionIds: [small.id],
      chunkCount: SMALL,
      documentIds: null,
      embedder: TEST_EMBEDDER,
      dimensions: TEST_DIMENSIONS,
      vector,
      limit: 10,
    });
    let found = 0;
    let plainFound = 0;
    const timings: number[] = [];
    for (let q = 0; q < QUERIES; q++) {
      const vector = unitVector(next);
      const exact = await vectorCandidates(gw.ctx.db, { ...base(vector), plan: 'exact' });
      assert.equal(exact.length, 10);
      const started = performance.now();
      const indexed = await vectorCandidates(gw.ctx.db, { ...base(vector), plan: 'index' });
      timings.push(performance.now() - started);
      assert.equal(indexed.length, 10, 'the index search under the filter returns the full topK');
      const truth = new Set(exact.map((h) => h.chunkId));
      found += indexed.filter((h) => truth.has(h.chunkId)).length;
      // Ordered by distance even though relaxed_order lets the index return rows out of order.
      for (let i = 1; i < indexed.length; i++) assert.ok(indexed[i - 1]!.similarity >= indexed[i]!.similarity);
      // What the index gives without iterative scan, for the record.
      plainFound += (
        await gw.ctx.db.query(
          `SELECT cv.chunk_id FROM chunk_vectors cv WHERE cv.dimensions = 100 AND cv.indexed AND cv.embedder = $1 AND cv.collection_id = $2
           ORDER BY (cv.embedding::vector(100)) <=> $3::vector(100) LIMIT 10`,
          [TEST_EMBEDDER, small.id, `[${vector.join(',')}]`],
        )
      ).length;
    }
    const recall = found / (QUERIES * 10);
    timings.sort((x, y) => x - y);
    assert.ok(plainFound < QUERIES * 10, 'without iterative scan the filtered index search loses rows (else this test proves nothing)');
    console.log(
      `# recall@10 ${recall.toFixed(3)}; index search p50 ${timings[QUERIES / 2]!.toFixed(1)} ms, max ${timings.at(-1)!.toFixed(1)} ms; ` +
        `without iterative scan the index returned ${plainFound} of ${QUERIES * 10} rows`,
    );
    assert.ok(recall >= 0.95, `recall@10 ${recall}`);
  });

  it("keeps only a large collection's vectors in the graph, putting in its older ones a few hundred at a time", () => {
    assert.deepEqual(indexedAfterLoad, { large: { indexed: GROWN, not: LARGE }, small: { indexed: 0, not: SMALL } });
    assert.deepEqual(indexedAfterCatchUp, { large: { indexed: LARGE + GROWN, not: 0 }, small: { indexed: 0, not: SMALL } });
    assert.equal(catchUpRounds, Math.ceil(LARGE / INDEX_CATCH_UP_ROWS));
  });

  it('finds through an index search the vectors no graph holds yet, as an exact search does', async () => {
    const vector = unitVector(next);
    const search: VectorSearch = {
      tenantId: small.tenantId,
      collectionIds: [small.id],
      chunkCount: SMALL,
      documentIds: null,
      embedder: TEST_EMBEDDER,
      dimensions: TEST_DIMENSIONS,
      vector,
      limit: 10,
    };
    const exact = await vectorCandidates(gw.ctx.db, { ...search, plan: 'exact' });
    // The exact search's 1st, 3rd and 5th are taken out of the graph: the index search must still return them, in place.
    const out = [exact[0]!, exact[2]!, exact[4]!].map((h) => h.chunkId);
    await gw.ctx.db.query('UPDATE chunk_vectors SET indexed = false WHERE chunk_id = ANY($1::text[])', [out]);
    try {
      const indexed = await vectorCandidates(gw.ctx.db, { ...search, plan: 'index' });
      assert.deepEqual(
        indexed.slice(0, 5).map((h) => h.chunkId),
        exact.slice(0, 5).map((h) => h.chunkId),
      );
    } finally {
      await gw.ctx.db.query('UPDATE chunk_vectors SET indexed = true WHERE chunk_id = ANY($1::text[])', [out]);
    }
  });

  it('uses the HNSW index for that search, not a sequential scan', async () => {
    const plan = await gw.ctx.db.tx(async (q) => {
      await q.query('SET LOCAL hnsw.iterative_scan = relaxed_order');
      return q.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT cv.chunk_id FROM chunk_vectors cv WHERE cv.dimensions = 100 AND cv.indexed AND cv.embedder = $1 AND cv.collection_id = ANY($2::text[])
         ORDER BY (cv.embedding::vector(100)) <=> $3::vector(100) LIMIT 50`,
        [TEST_EMBEDDER, [small.id], `[${unitVector(next).join(',')}]`],
      );
    });
    assert.match(plan.map((r) => r['QUERY PLAN']).join('\n'), /chunk_vectors_hnsw_100/);
  });

  it("finds the small tenant's own passages end to end, and never the other tenant's", async () => {
    const result = await retrieve(depsOf(gw), small.tenantId, { query: 'chunk', collectionIds: [small.id], topK: 50 });
    assert.equal(result.snippets.length, SMALL);
    assert.ok(result.snippets.every((s) => s.collectionId === small.id));
  });
});
