// Replicas as separate processes on one PostgreSQL and one Redis, one of them killed with
// SIGKILL (no shutdown, nothing flushed or released) in the middle of background work:
// - a document it was writing is taken over by a live replica once its lease runs out and
//   ends `ready` once, with the same chunks as an undisturbed copy and no duplicate rows;
// - a thread run it was streaming cannot resume a half-written answer: a live replica's
//   sweep ends it as failed (the interrupted message) within a bounded time, its one
//   assistant message incomplete, and the thread takes a new run that completes there;
// - the usage records it had flushed are stored once each.
// Leases are shortened to 3 s (GATEWAY_JOB_LEASE_SECONDS) so each takeover takes seconds.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import OpenAI from 'openai';
import { seedTenant } from '../helpers/gateway.js';
import { createApiKey } from '../gateway/support.js';
import { eventually } from '../helpers/eventually.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { startReplicaSet, type GatewayProcess, type ReplicaSet } from '../helpers/replica-process.js';
import { assistantMessages, BASE, postStream, textOf } from '../llm/thread-runs-support.js';
import { INTERRUPTED_MESSAGE } from '../../src/areas/llm/runs/recovery.js';

const skip =
  !process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL
    ? 'replicas need TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (.ci/run sets both)'
    : false;

const MODEL = 'kill-model';
const LEASE_SECONDS = 3;

const DOCUMENT = [
  '# Harbour manual',
  ...Array.from(
    { length: 12 },
    (_, i) =>
      `## Pier ${i + 1}\n\nPier ${i + 1} takes vessels of up to ${(i + 1) * 40} metres. The harbour master ` +
      `inspects its bollards every ${i + 2} weeks and logs the tide at ${i + 5} o'clock. `.repeat(6),
  ),
].join('\n\n');

describe('a replica killed with SIGKILL mid-job', { skip }, () => {
  let fake: FakeEngine;
  let set: ReplicaSet;
  let tenantId: string;
  let key: string;
  let workspaceId: string;
  let survivor: GatewayProcess;

  before(async () => {
    fake = await startFakeOpenAI({ models: [MODEL] });
    set = await startReplicaSet({
      REDIS_URL: process.env.TEST_REDIS_URL!,
      GATEWAY_LOCAL_ENGINE: 'off',
      GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: fake.url, name: 'fake' }]),
      GATEWAY_JOB_LEASE_SECONDS: String(LEASE_SECONDS),
      GATEWAY_USAGE_FLUSH_SECONDS: '1',
      GATEWAY_CHUNK_TOKENS: '64',
    });
    tenantId = (await seedTenant(set, 'sigkill')).tenantId;
    key = (await createApiKey(set, tenantId, 'sigkill')).key;
  });
  after(async () => {
    await set?.close();
    await fake?.close();
  });

  const documentOn = async (gw: GatewayProcess, id: string) => (await gw.request('GET', `/api/os/documents/${id}`, { apiKey: key })).body;
  const upload = async (gw: GatewayProcess, name: string, workspace = workspaceId) => {
    const uploaded = await gw.request('POST', `/api/os/workspaces/${workspace}/documents`, { apiKey: key, json: { name, text: DOCUMENT } });
    assert.equal(uploaded.status, 202, uploaded.text);
    return uploaded.body.id as string;
  };
  const readyLines = (gw: GatewayProcess, id: string) =>
    gw
      .output()
      .split('\n')
      .filter((line) => line.includes(`ingestion: ${id} ready`)).length;

  it('a document whose replica died in its final write is finished once by another replica', async (t) => {
    // Both replicas idle first: the one that did not take the upload looks again within a lease.
    const replicas = [await set.start(), await set.start()];
    const made = await replicas[0]!.request('POST', '/api/os/workspaces', { apiKey: key, json: { name: 'Harbour' } });
    assert.equal(made.status, 201, made.text);
    workspaceId = made.body.id;

    // The test holds the chunks table, so the final write waits inside its transaction: the
    // document locked by the replica writing it, its chunks half written. It is killed there.
    const blocker = new pg.Client({ connectionString: set.env.DATABASE_URL });
    await blocker.connect();
    let id: string;
    let holder: GatewayProcess;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE chunks IN SHARE MODE');
      id = await upload(replicas[0]!, 'harbour.md');
      let writing: string | undefined;
      await eventually(
        'a replica waiting in its final write',
        async () => {
          const rows = await set.db.query<{ application_name: string }>(
            `SELECT application_name FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'INSERT INTO chunks%'`,
          );
          writing = rows[0]?.application_name;
          return rows.length === 1;
        },
        20_000,
      );
      // The replica that took the upload claims it at once; the other could only in the same millisecond.
      holder = replicas.find((r) => r.name === writing)!;
      assert.ok(holder, `the writer ${writing} is one of the replicas`);
      survivor = replicas.find((r) => r !== holder)!;
      assert.equal((await documentOn(survivor, id)).status, 'processing');
      await holder.kill();
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      await blocker.end();
    }

    const killedAt = Date.now();
    let doc: any;
    // Nothing but the survivor's takeover of the expired lease finishes it: the holder is
    // dead and no replica restarts (the deadline only guards against a hang).
    await eventually(
      'the survivor finishes the document',
      async () => {
        doc = await documentOn(survivor, id);
        return doc.status === 'ready' || doc.status === 'failed';
      },
      120_000,
    );
    t.diagnostic(`document taken over and ready ${Date.now() - killedAt} ms after the kill`);
    assert.equal(doc.status, 'ready', doc.error);

    // The same text through B undisturbed (in a workspace of its own: the same bytes in one
    // collection are one document): the chunk count the document must have.
    const other = await survivor.request('POST', '/api/os/workspaces', { apiKey: key, json: { name: 'Control' } });
    const control = await upload(survivor, 'control.md', other.body.id);
    await eventually('the control copy ready', async () => (await documentOn(survivor, control)).status === 'ready', 30_000);
    const expected = (await documentOn(survivor, control)).chunkCount;
    assert.ok(expected > 1, `${expected} chunks`);
    assert.equal(doc.chunkCount, expected);

    const [rows] = await set.db.query<{ n: number; distinct_index: number; attempts: number }>(
      `SELECT (SELECT count(*)::int FROM chunks WHERE document_id = $1) AS n,
              (SELECT count(DISTINCT chunk_index)::int FROM chunks WHERE document_id = $1) AS distinct_index,
              (SELECT attempts FROM documents WHERE id = $1) AS attempts`,
      [id],
    );
    assert.deepEqual(rows, { n: expected, distinct_index: expected, attempts: 2 }, 'one claim by each replica; no duplicate chunk rows');
    // The log line follows the commit that the API already shows.
    await survivor.waitFor(new RegExp(`ingestion: ${id} ready`), 10_000);
    assert.equal(readyLines(holder, id), 0, 'the killed replica never finished it');
    assert.equal(readyLines(survivor, id), 1, 'the survivor finished it once');
    const [stuck] = await set.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM documents WHERE status IN ('queued', 'processing')`);
    assert.equal(stuck!.n, 0, 'no document left queued or processing');
  });

  it('a thread run streaming on a killed replica is ended as failed by another; its usage flushed before stays once', async (t) => {
    assert.ok(survivor, 'runs after the ingestion case (B is its survivor)');
    const c = await set.start();
    const onC = new OpenAI({ apiKey: key, baseURL: `${c.url}${BASE}`, maxRetries: 0 });
    const onB = new OpenAI({ apiKey: key, baseURL: `${survivor.url}${BASE}`, maxRetries: 0 });

    // Usage C records and flushes (every second here) before it dies.
    const correlationIds = ['kill-usage-1', 'kill-usage-2', 'kill-usage-3'];
    for (const correlationId of correlationIds) {
      const answer = await c.request('POST', `${BASE}/chat/completions`, {
        apiKey: key,
        headers: { 'x-correlation-id': correlationId },
        json: { model: MODEL, messages: [{ role: 'user', content: 'count me' }] },
      });
      assert.equal(answer.status, 200, answer.text);
    }
    const usageRows = async () =>
      set.db.query<{ correlation_id: string; n: number }>(
        'SELECT correlation_id, count(*)::int AS n FROM usage_records WHERE correlation_id = ANY($1) GROUP BY correlation_id ORDER BY correlation_id',
        [correlationIds],
      );
    await eventually('C flushed its usage', async () => (await usageRows()).length === correlationIds.length, 10_000);

    const assistantId = (await onC.beta.assistants.create({ model: MODEL })).id;
    const threadId = (await onC.beta.threads.create({ messages: [{ role: 'user', content: 'tell me a long story' }] })).id;
    fake.behaviour = { models: [MODEL], tokenDelayMs: 150, repeat: 200 };
    const stream = await postStream(c, `/threads/${threadId}/runs`, { assistant_id: assistantId, stream: true }, { 'x-api-key': key });
    const runId = (await stream.until((events) => events.some((e) => e.event === 'thread.message.delta'))).at(0)!.data.id as string;
    // Long enough for some of the answer to be saved into the message (every second).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await c.kill();
    const killedAt = Date.now();
    await stream.end();
    fake.behaviour = { models: [MODEL] };

    let run: OpenAI.Beta.Threads.Run | undefined;
    await eventually(
      'the survivor ends the run',
      async () => {
        run = await onB.beta.threads.runs.retrieve(runId, { thread_id: threadId });
        return run.status !== 'in_progress';
      },
      120_000,
    );
    t.diagnostic(`run ended as failed ${Date.now() - killedAt} ms after the kill`);
    // Its lease (renewed every second until the kill) runs out, then B's sweep ends it: C is
    // dead and no replica restarts, so nothing else could (the deadline only guards against a hang).
    assert.equal(run!.status, 'failed');
    assert.deepEqual(run!.last_error, { code: 'server_error', message: INTERRUPTED_MESSAGE });
    const messages = await assistantMessages(onB, threadId);
    assert.equal(messages.length, 1, 'one assistant message for the run');
    assert.equal(messages[0]!.status, 'incomplete');
    assert.equal(messages[0]!.run_id, runId);

    // The thread is free again: a new run executes on B and completes.
    const next = await onB.beta.threads.runs.createAndPoll(threadId, { assistant_id: assistantId });
    assert.equal(next.status, 'completed');
    const after = await assistantMessages(onB, threadId);
    assert.equal(after.length, 2);
    assert.equal(after[1]!.status, 'completed');
    assert.ok(textOf(after[1]!).length > 0);

    // What C flushed before it died is there once; nothing of it was written again.
    assert.deepEqual(
      await usageRows(),
      correlationIds.map((correlation_id) => ({ correlation_id, n: 1 })),
    );
    const [open] = await set.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM runs WHERE status IN ('queued', 'in_progress', 'cancelling')`,
    );
    assert.equal(open!.n, 0, 'no run left open');
  });
});
