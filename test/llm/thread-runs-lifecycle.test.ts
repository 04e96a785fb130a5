// Thread runs when the server goes away or time runs out: a restart while a run
// executes leaves it failed (never in_progress) with its message incomplete, and the
// thread takes a new run; so does a run a dead process left open (recovery at start);
// a shutdown tells a streaming reader (thread.run.failed, then done); a run past its
// expiry is stopped as expired.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { seedTenant, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { eventually } from '../helpers/eventually.js';
import { createApiKey } from '../gateway/support.js';
import { newId } from '../../src/platform/ids.js';
import { conversationRepository, itemRepository } from '../../src/areas/llm/history/repository.js';
import { runRepository } from '../../src/areas/llm/runs/repository.js';
import { INTERRUPTED_MESSAGE } from '../../src/areas/llm/runs/recovery.js';
import { SHUTDOWN_MESSAGE } from '../../src/areas/llm/runs/executor.js';
import { idempotencyRepository } from '../../src/areas/llm/idempotency/repository.js';
import { fingerprintOf } from '../../src/areas/llm/idempotency/idempotency.js';
import { runObject } from '../../src/areas/llm/thread-runs/objects.js';
import { deltaOf } from '../../src/areas/llm/thread-runs/events.js';
import { gatewayOver } from './chat-support.js';
import { assistantMessages, BASE, deltaText, names, postStream, textOf } from './thread-runs-support.js';

const MODEL = 'life-model';

describe('thread runs across restarts, shutdowns and expiry', () => {
  let fake: FakeEngine;
  let gw: TestGateway | undefined;
  let key: string;
  let tenantId: string;
  let client: OpenAI;
  let assistantId: string;

  before(async () => {
    fake = await startFakeOpenAI({ models: [MODEL] });
  });
  afterEach(async () => {
    fake.behaviour = { models: [MODEL] };
    await gw?.close();
    gw = undefined;
  });
  after(() => fake?.close());

  async function start(env: Record<string, string> = {}): Promise<TestGateway> {
    const started = await gatewayOver([fake], { GATEWAY_SHUTDOWN_GRACE_SECONDS: '0', ...env });
    gw = started;
    tenantId = (await seedTenant(started, 'life')).tenantId;
    key = (await createApiKey(started, tenantId, 'life')).key;
    connect(started);
    assistantId = (await client.beta.assistants.create({ model: MODEL })).id;
    return started;
  }
  const connect = (g: TestGateway) => {
    client = new OpenAI({ apiKey: key, baseURL: `${g.url}${BASE}`, maxRetries: 0 });
  };
  const threadWith = async (content: string) => (await client.beta.threads.create({ messages: [{ role: 'user', content }] })).id;

  it('a restart while a run executes leaves it failed with its message incomplete; the thread takes a new run', async () => {
    let g = await start();
    fake.behaviour = { models: [MODEL], tokenDelayMs: 300, repeat: 100 };
    const threadId = await threadWith('restart me');
    // Streamed with an Idempotency-Key, and the reader gone: after the restart the key replays what was stored.
    const headers = { 'x-api-key': key, 'idempotency-key': `restart-${threadId}` };
    const body = { assistant_id: assistantId, stream: true };
    const s = await postStream(g, `/threads/${threadId}/runs`, body, headers);
    const runId = (await s.until((events) => events.some((e) => e.event === 'thread.message.delta'))).at(0)!.data.id;
    s.destroy();
    await eventually('the engine generating', () => fake.inFlight() === 1);

    g = await g.restart();
    gw = g;
    connect(g);
    fake.behaviour = { models: [MODEL] };
    const ended = await client.beta.threads.runs.retrieve(runId, { thread_id: threadId });
    assert.equal(ended.status, 'failed');
    assert.equal(ended.last_error?.code, 'server_error');
    assert.equal(ended.last_error?.message, SHUTDOWN_MESSAGE);
    const [message] = await assistantMessages(client, threadId);
    assert.equal(message!.status, 'incomplete');
    assert.deepEqual(message!.incomplete_details, { reason: 'run_failed' });

    const replay = await postStream(g, `/threads/${threadId}/runs`, body, headers);
    const events = await replay.end();
    assert.deepEqual(names(events).slice(0, 3), ['thread.run.created', 'thread.run.queued', 'thread.run.in_progress']);
    assert.deepEqual(names(events).slice(-4), ['thread.message.incomplete', 'thread.run.step.failed', 'thread.run.failed', 'done']);
    assert.equal(deltaText(events), textOf(message!), 'the stored deltas are the message as saved');

    const next = await client.beta.threads.runs.createAndPoll(threadId, { assistant_id: assistantId });
    assert.equal(next.status, 'completed');
    const messages = await assistantMessages(client, threadId);
    assert.equal(textOf(messages.at(-1)!), 'Fake answer to: restart me');
  });

  it('a run a dead process left in_progress is failed at start (recovery); a replay of its stream ends it from the rows', async () => {
    let g = await start();
    const threadId = await threadWith('orphaned');
    // What a process that died mid-run leaves: a run in_progress under its lease, a
    // half-written message, the stream events it had stored, its idempotency key.
    const db = g.ctx.db;
    const thread = (await db.query<{ owner: string }>('SELECT owner FROM conversations WHERE id = $1', [threadId]))[0]!;
    const runId = newId('run');
    const messageId = newId('message');
    const run = await runRepository.insert(db, {
      id: runId,
      tenant_id: tenantId,
      conversation_id: threadId,
      owner: thread.owner,
      assistant_id: assistantId,
      model: MODEL,
      message_id: messageId,
    });
    assert.ok(await conversationRepository.claimActiveRun(db, threadId, runId));
    await itemRepository.append(db, {
      id: messageId,
      conversation_id: threadId,
      tenant_id: tenantId,
      role: 'assistant',
      content: 'half an ans',
      status: 'in_progress',
      run_id: runId,
    });
    // Its lease has run out: on PostgreSQL that is how a restarted replica knows the run's
    // process is gone (the embedded database ends every open run at start anyway).
    const started = await runRepository.start(db, runId, 'proc_dead', 1);
    await runRepository.appendEvents(db, runId, 0, [
      { event: 'thread.run.created', data: runObject(run) },
      { event: 'thread.run.in_progress', data: runObject(started!) },
      { event: 'thread.message.delta', data: deltaOf(messageId, 'half an ans') },
    ]);
    const body = { assistant_id: assistantId, stream: true };
    const request = { method: 'POST', headers: {}, routeOptions: { url: `${BASE}/threads/:threadId/runs` }, params: { threadId }, body };
    const ref = { tenantId, owner: thread.owner, key: 'orphan' };
    const claim = await idempotencyRepository.claim(db, ref, fingerprintOf(request), 3600, 60);
    await idempotencyRepository.complete(db, ref, claim!, runId);

    g = await g.restart();
    gw = g;
    connect(g);
    const ended = await client.beta.threads.runs.retrieve(runId, { thread_id: threadId });
    assert.equal(ended.status, 'failed');
    assert.equal(ended.last_error?.message, INTERRUPTED_MESSAGE);
    const [message] = await assistantMessages(client, threadId);
    assert.equal(message!.status, 'incomplete');
    assert.equal(textOf(message!), 'half an ans');

    const replay = await postStream(g, `/threads/${threadId}/runs`, body, { 'x-api-key': key, 'idempotency-key': 'orphan' });
    const events = await replay.end();
    assert.deepEqual(names(events), [
      'thread.run.created',
      'thread.run.in_progress',
      'thread.message.delta',
      'thread.message.incomplete',
      'thread.run.step.failed',
      'thread.run.failed',
      'done',
    ]);
    assert.equal(events.at(-2)!.data.last_error.message, INTERRUPTED_MESSAGE);

    const next = await client.beta.threads.runs.createAndPoll(threadId, { assistant_id: assistantId });
    assert.equal(next.status, 'completed');
  });

  it('at shutdown a streaming reader gets the run failed, then done, and the engine call is cancelled', async () => {
    const g = await start({ GATEWAY_SHUTDOWN_GRACE_SECONDS: '1' });
    fake.behaviour = { models: [MODEL], tokenDelayMs: 100, repeat: 100 };
    const threadId = await threadWith('until shutdown');
    const s = await postStream(g, `/threads/${threadId}/runs`, { assistant_id: assistantId, stream: true }, { 'x-api-key': key });
    await s.until((events) => events.some((e) => e.event === 'thread.message.delta'));
    const aborted = fake.aborted();
    const closing = g.app.close();
    const events = await s.end(10_000);
    await closing;
    assert.deepEqual(names(events).slice(-4), ['thread.message.incomplete', 'thread.run.step.failed', 'thread.run.failed', 'done']);
    const failed = events.at(-2)!.data;
    assert.equal(failed.last_error.message, SHUTDOWN_MESSAGE);
    assert.equal(events.at(-4)!.data.incomplete_details.reason, 'run_failed');
    await fake.waitForAbort(aborted + 1, 5000);
  });

  it('a run still going at its expiry is stopped as expired, its message incomplete', async () => {
    const g = await start({ GATEWAY_RUN_EXPIRY_SECONDS: '1' });
    fake.behaviour = { models: [MODEL], tokenDelayMs: 100, repeat: 100 };
    const threadId = await threadWith('too slow');
    const s = await postStream(g, `/threads/${threadId}/runs`, { assistant_id: assistantId, stream: true }, { 'x-api-key': key });
    const created = (await s.until((events) => events.length > 0)).at(0)!.data;
    // created + GATEWAY_RUN_EXPIRY_SECONDS (the two clocks read apart may round a second apart).
    assert.ok(Math.abs(created.expires_at - (created.created_at + 1)) <= 1, JSON.stringify(created));
    const events = await s.end(10_000);
    assert.deepEqual(names(events).slice(-4), ['thread.message.incomplete', 'thread.run.step.expired', 'thread.run.expired', 'done']);
    const run = await client.beta.threads.runs.retrieve(created.id, { thread_id: threadId });
    assert.equal(run.status, 'expired');
    const [message] = await assistantMessages(client, threadId);
    assert.deepEqual(message!.incomplete_details, { reason: 'run_expired' });
  });
});
