// Ingestion's final write, several documents per transaction (ingestion/batch-writer.ts):
// each document ends ready once with its chunks, vectors and exact BM25 statistics; a
// document deleted or claimed again meanwhile is left alone; one document's bad data
// fails that document only; a resumed document's earlier chunks are replaced.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { newId } from '../../src/platform/ids.js';
import { BatchWriter, DocumentGone, type DocumentWrite } from '../../src/areas/os/ingestion/batch-writer.js';
import type { ChunkInput } from '../../src/areas/os/chunks/store.js';
import { createCollection, createWorkspace, testEmbed, type TestCollection, TEST_EMBEDDER } from './retrieval-support.js';

describe('ingestion batch writer', () => {
  let gw: TestGateway;
  let world: World;
  let collection: TestCollection;
  let other: TestCollection;

  before(async () => {
    gw = await startGateway();
    world = await seedWorld(gw, 'ingestion-batch');
    const workspaceId = await createWorkspace(gw, world.a.tenantId);
    collection = await createCollection(gw, world.a.tenantId, workspaceId, { name: 'one' });
    other = await createCollection(gw, world.a.tenantId, workspaceId, { name: 'two' });
  });
  after(() => gw.close());

  /** A document claimed by a worker (processing, attempt 1), as the runner hands it over. */
  async function claimed(target: TestCollection, name: string): Promise<DocumentWrite['doc']> {
    const id = newId('document');
    await gw.ctx.db.query(
      `INSERT INTO documents (id, tenant_id, collection_id, workspace_id, name, media_type, bytes, sha256, status, attempts)
       VALUES ($1, $2, $3, $4, $5, 'text/plain', 10, $1, 'processing', 1)`,
      [id, target.tenantId, target.id, target.workspaceId, name],
    );
    return { id, tenant_id: target.tenantId, collection_id: target.id, name, media_type: 'text/plain', attempts: 1 };
  }

  const chunksOf = (...contents: string[]): ChunkInput[] =>
    contents.map((content) => ({ content, title: 'Handbook', headingPath: ['Leave'], page: null, tokenCount: content.split(' ').length }));

  function writeOf(doc: DocumentWrite['doc'], chunks: ChunkInput[], dimensions = 100): DocumentWrite {
    const vectors = chunks.map((c) => testEmbed(c.content).slice(0, dimensions));
    return { doc, language: 'english', chunks, vectors: gw.ctx.vector ? [{ embedder: TEST_EMBEDDER, vectors }] : [] };
  }

  /** Every figure BM25 and the vector leg read, against a recount from the chunks. */
  async function assertStatisticsExact(target: TestCollection): Promise<void> {
    const [c] = await gw.ctx.db.query<{ chunk_count: number; total_length: number; n: number; len: number; vectors: number }>(
      `SELECT chunk_count::int, total_length::int,
              (SELECT count(*)::int FROM chunks WHERE collection_id = $1) AS n,
              (SELECT COALESCE(sum(length), 0)::int FROM chunks WHERE collection_id = $1) AS len,
              ${gw.ctx.vector ? '(SELECT count(*)::int FROM chunk_vectors WHERE collection_id = $1)' : '0'} AS vectors
       FROM collections WHERE id = $1`,
      [target.id],
    );
    assert.equal(c!.chunk_count, c!.n, 'chunk_count');
    assert.equal(c!.total_length, c!.len, 'total_length');
    if (gw.ctx.vector) assert.equal(c!.vectors, c!.n, 'one vector per chunk');
    const differing = await gw.ctx.db.query(
      `WITH recount AS (SELECT t.lexeme AS term, count(*)::int AS df FROM chunks c, unnest(c.tsv) t WHERE c.collection_id = $1 GROUP BY 1),
            stored AS (SELECT term, df FROM collection_terms WHERE collection_id = $1)
       SELECT r.term, r.df, s.term AS stored_term, s.df AS stored_df FROM recount r FULL JOIN stored s ON s.term = r.term
       WHERE r.df IS DISTINCT FROM s.df`,
      [target.id],
    );
    assert.deepEqual(differing, [], 'collection_terms equals a recount of the chunks');
  }

  const statusOf = async (id: string) =>
    (await gw.ctx.db.query<{ status: string; chunk_count: number }>('SELECT status, chunk_count FROM documents WHERE id = $1', [id]))[0];

  it('writes documents of two collections together, each ready once with exact statistics', async () => {
    const writer = new BatchWriter(gw.ctx.db);
    const docs = await Promise.all([claimed(collection, 'a'), claimed(collection, 'b'), claimed(other, 'c'), claimed(collection, 'd')]);
    await Promise.all([
      writer.write(writeOf(docs[0]!, chunksOf('Annual leave is 25 days a year.', 'Carry over five days.'))),
      writer.write(writeOf(docs[1]!, chunksOf('Annual leave requests go to your manager.'))),
      writer.write(writeOf(docs[2]!, chunksOf('Expenses are paid monthly.', 'Annual leave is separate.'))),
      writer.write(writeOf(docs[3]!, [])),
    ]);
    for (const [doc, n] of [
      [docs[0]!, 2],
      [docs[1]!, 1],
      [docs[2]!, 2],
      [docs[3]!, 0],
    ] as const)
      assert.deepEqual(await statusOf(doc.id), { status: 'ready', chunk_count: n });
    await assertStatisticsExact(collection);
    await assertStatisticsExact(other);
    const [leave] = await gw.ctx.db.query<{ df: number }>(`SELECT df FROM collection_terms WHERE collection_id = $1 AND term = 'annual'`, [
      collection.id,
    ]);
    assert.equal(leave!.df, 2, "'annual' in two chunks of the collection, from two documents of one batch");
    // The first document is written at once; the three that queued meanwhile share one transaction (one now()).
    const stamps = await gw.ctx.db.query<{ t: string }>('SELECT DISTINCT updated_at::text AS t FROM documents WHERE id = ANY($1)', [
      docs.slice(1).map((d) => d.id),
    ]);
    assert.equal(stamps.length, 1);
  });

  it('leaves alone a document deleted or claimed again meanwhile, and writes the rest of its batch', async () => {
    const writer = new BatchWriter(gw.ctx.db);
    const [first, deleted, reclaimed, kept] = await Promise.all(
      ['first', 'deleted', 'reclaimed', 'kept'].map((n) => claimed(collection, n)),
    );
    await gw.ctx.db.query('DELETE FROM documents WHERE id = $1', [deleted!.id]);
    await gw.ctx.db.query('UPDATE documents SET attempts = 2 WHERE id = $1', [reclaimed!.id]);
    const results = await Promise.allSettled([
      writer.write(writeOf(first!, chunksOf('Parking permits are issued by facilities.'))),
      writer.write(writeOf(deleted!, chunksOf('A deleted document about parking.'))),
      writer.write(writeOf(reclaimed!, chunksOf('A reclaimed document about parking.'))),
      writer.write(writeOf(kept!, chunksOf('Bicycle parking is in the basement.'))),
    ]);
    assert.equal(results[0]!.status, 'fulfilled');
    assert.ok(results[1]!.status === 'rejected' && results[1]!.reason instanceof DocumentGone);
    assert.ok(results[2]!.status === 'rejected' && results[2]!.reason instanceof DocumentGone);
    assert.equal(results[3]!.status, 'fulfilled');
    assert.equal((await statusOf(reclaimed!.id))!.status, 'processing');
    const [{ n }] = (await gw.ctx.db.query('SELECT count(*)::int AS n FROM chunks WHERE document_id = ANY($1)', [
      [deleted!.id, reclaimed!.id],
    ])) as [{ n: number }];
    assert.equal(n, 0);
    await assertStatisticsExact(collection);
  });

  it("fails only the document whose data cannot be stored; its batch's others are written", async (t) => {
    if (!gw.ctx.vector) return t.skip('no pgvector: no vectors to refuse');
    const writer = new BatchWriter(gw.ctx.db);
    const [first, bad, good] = await Promise.all(['first', 'bad', 'good'].map((n) => claimed(collection, n)));
    const badWrite = writeOf(bad!, chunksOf('Vectors of two sizes.', 'Cannot be stored.'));
    badWrite.vectors[0]!.vectors[1] = testEmbed('short').slice(0, 50);
    const results = await Promise.allSettled([
      writer.write(writeOf(first!, chunksOf('Overtime is paid at time and a half.'))),
      writer.write(badWrite),
      writer.write(writeOf(good!, chunksOf('Overtime needs approval in advance.'))),
    ]);
    assert.equal(results[0]!.status, 'fulfilled');
    assert.equal(results[1]!.status, 'rejected');
    assert.ok(!((results[1] as PromiseRejectedResult).reason instanceof DocumentGone));
    assert.equal(results[2]!.status, 'fulfilled');
    assert.deepEqual(await statusOf(bad!.id), { status: 'processing', chunk_count: 0 }, 'the runner decides its retry or failure');
    assert.deepEqual(await statusOf(good!.id), { status: 'ready', chunk_count: 1 });
    await assertStatisticsExact(collection);
  });

  it("replaces a resumed document's earlier chunks and their statistics", async () => {
    const writer = new BatchWriter(gw.ctx.db);
    const doc = await claimed(collection, 'resumed');
    await writer.write(writeOf(doc, chunksOf('Pension contributions start after probation.', 'Pension is five percent.')));
    await gw.ctx.db.query(`UPDATE documents SET status = 'processing', attempts = 2 WHERE id = $1`, [doc.id]);
    await writer.write(writeOf({ ...doc, attempts: 2 }, chunksOf('Dental cover starts at once.')));
    assert.deepEqual(await statusOf(doc.id), { status: 'ready', chunk_count: 1 });
    const terms = await gw.ctx.db.query(`SELECT term FROM collection_terms WHERE collection_id = $1 AND term = 'pension'`, [collection.id]);
    assert.deepEqual(terms, []);
    await assertStatisticsExact(collection);
  });
});
