// No silence before the first token: a chat stream whose engine has not answered
// within GATEWAY_STREAM_EARLY_HEAD_MS gets its 200 head and `:` heartbeats at once,
// then the usual frames; failover still happens meanwhile; a failure after the head
// is the in-band error frame and [DONE]; a client leaving meanwhile cancels the
// engine call. Failures before any engine is asked stay plain HTTP problems, and a
// stream whose engine answers in time is byte for byte what it was.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver, openStream, payloads, post, usageRows, type SseItem } from './chat-support.js';

const CHAT = '/api/llm/v1/chat/completions';
const ORIGIN = 'https://app.example.com';
const hello = [{ role: 'user', content: 'hello there' }];
const METADATA = '{"object":"rag_metadata","active":false,"status":"inactive","snippet_count":0,"rag_snippets":null}';
const EARLY_HEAD_MS = 300;

describe('llm chat/completions (stream): the head before the engine answers', () => {
  let gw: TestGateway;
  let main: FakeEngine;
  let failing: FakeEngine;
  let backup: FakeEngine;
  let tenantId: string;
  let key: string;

  const stream = (json: object) => openStream(gw, CHAT, { stream: true, messages: hello, ...json }, { 'x-api-key': key, origin: ORIGIN });
  const comments = (items: SseItem[]) => items.filter((i) => 'comment' in i).length;
  /** The body text without heartbeat comments, ids and times: what two streams of the same answer share. */
  const dataOnly = (items: SseItem[]) =>
    items
      .filter((i): i is { data: string } => 'data' in i)
      .map((i) => i.data.replace(/"id":"[^"]+"/, '"id":"X"').replace(/"created":\d+/, '"created":0'));

  before(async () => {
    main = await startFakeOpenAI({ models: ['main-model'] });
    failing = await startFakeOpenAI({ models: ['shared-model'] });
    backup = await startFakeOpenAI({ models: ['shared-model'] });
    gw = await gatewayOver([main, failing, backup], {
      GATEWAY_STREAM_HEARTBEAT_SECONDS: '1',
      GATEWAY_STREAM_EARLY_HEAD_MS: String(EARLY_HEAD_MS),
      GATEWAY_CORS_ORIGINS: ORIGIN,
    });
    const t = await seedTenant(gw, 'early-head');
    tenantId = t.tenantId;
    key = (await createApiKey(gw, tenantId, 'early-head')).key;
  });
  afterEach(() => {
    main.behaviour = { models: ['main-model'] };
    failing.behaviour = { models: ['shared-model'] };
    backup.behaviour = { models: ['shared-model'] };
  });
  after(async () => {
    await gw?.close();
    await Promise.all([main, failing, backup].map((f) => f?.close()));
  });

  it('is byte for byte the usual stream when the engine answers within the wait', async () => {
    const s = await stream({ model: 'main-model' });
    const items = await s.end();
    assert.equal(comments(items), 0);
    assert.equal((items[0] as { data: string }).data, METADATA);
    assert.deepEqual(items.at(-1), { data: '[DONE]' });
    assert.equal(
      s.bytes(),
      items.reduce((n, i) => n + Buffer.byteLength(`data: ${(i as { data: string }).data}\n\n`), 0),
      'nothing else',
    );
    assert.equal(s.headers['access-control-allow-origin'], ORIGIN);
  });

  it('commits the head and sends heartbeats while the engine has not answered, then the usual frames', async () => {
    const reference = dataOnly(await (await stream({ model: 'main-model' })).end());
    // The engine holds its answer until the test releases it: the head comes while it is held.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    main.behaviour = { models: ['main-model'], holdHeaders: held };
    const s = await stream({ model: 'main-model' });
    await eventually('the engine to have the request', () => main.inFlight() === 1);
    assert.equal(s.status, 200);
    assert.equal(s.headers['content-type'], 'text/event-stream');
    assert.equal(s.headers['cache-control'], 'no-cache');
    assert.equal(s.headers['x-accel-buffering'], 'no');
    assert.equal(s.headers['access-control-allow-origin'], ORIGIN, 'the edge headers go out with the early head');
    assert.match(String(s.headers['x-correlation-id']), /\S/);
    // The first heartbeat at once, then one per heartbeat interval until the engine answers.
    await s.until((items) => comments(items) >= 2, 60_000);
    assert.equal(payloads(s.items).length, 0, 'nothing but heartbeats before the engine answered');
    release();
    const items = await s.end();
    assert.ok(items.slice(0, 2).every((i) => 'comment' in i));
    assert.deepEqual(dataOnly(items), reference, 'then exactly the frames of the usual stream');
  });

  it('fails over to the next node while only heartbeats went out', async () => {
    failing.behaviour = { models: ['shared-model'], delayHeadersMs: 700, status: 503 };
    backup.behaviour = { models: ['shared-model'], delayHeadersMs: 700 };
    const [failingBefore, backupBefore] = [failing.chatRequests(), backup.chatRequests()];
    // Equal nodes take turns, so one of two requests goes to the failing node first.
    for (let i = 0; i < 2; i++) {
      const s = await stream({ model: 'shared-model' });
      assert.equal(s.status, 200);
      const items = await s.end();
      assert.ok(comments(items) >= 1);
      assert.equal((items.find((i) => 'data' in i) as { data: string }).data, METADATA);
      assert.equal(payloads(items).at(-2).choices[0].finish_reason, 'stop');
    }
    assert.equal(failing.chatRequests() - failingBefore, 1, 'the failing node was tried once');
    assert.equal(backup.chatRequests() - backupBefore, 2, 'and the other node answered both');
  });

  it('sends an engine failure after the head as the in-band error frame and [DONE], with status 200', async () => {
    main.behaviour = { models: ['main-model'], delayHeadersMs: 700, status: 500 };
    const s = await stream({ model: 'main-model' });
    assert.equal(s.status, 200);
    const items = await s.end();
    assert.ok('comment' in items[0]!, 'the heartbeat went first');
    const frames = payloads(items);
    assert.equal(frames.length, 2);
    assert.equal(frames[0].error.type, 'server_error');
    assert.equal(frames[0].error.code, 'engine_error');
    assert.match(frames[0].error.message, /main-model.*unavailable.*Retry later/);
    assert.equal(frames[1], '[DONE]');
    await eventually('the failure recorded', async () =>
      (await usageRows(gw, tenantId)).some((r) => r.model === 'main-model' && r.status === 'unavailable' && r.stream === true),
    );
  });

  it('cancels the engine call when the client leaves after the head, before the engine answered', async () => {
    main.behaviour = { models: ['main-model'], hang: true };
    const aborted = main.aborted();
    const s = await stream({ model: 'main-model' });
    await s.until((items) => comments(items) >= 1);
    s.destroy();
    await main.waitForAbort(aborted + 1, 1000);
    await eventually('the call recorded as client_closed', async () =>
      (await usageRows(gw, tenantId)).some((r) => r.model === 'main-model' && r.status === 'client_closed' && r.completion_tokens === 0),
    );
  });

  it('keeps failures found before any engine is asked as plain HTTP problems', async () => {
    const unknown = post(gw, CHAT, { stream: true, messages: hello, model: 'no-such-model' }, { 'x-api-key': key });
    const res = await unknown.response;
    assert.equal(res.statusCode, 400);
    assert.match(String(res.headers['content-type']), /problem\+json/);
    res.resume();
  });
});

describe('llm chat/completions (stream): shutdown while only the early head went out', () => {
  it('ends the stream with the shutdown error frame and [DONE], cancelling the engine', async () => {
    const fake = await startFakeOpenAI({ models: ['slow-model'], hang: true });
    const gw = await gatewayOver([fake], { GATEWAY_STREAM_EARLY_HEAD_MS: '100', GATEWAY_SHUTDOWN_GRACE_SECONDS: '1' });
    try {
      const { tenantId } = await seedTenant(gw, 'early-head-shutdown');
      const { key } = await createApiKey(gw, tenantId, 'early-head-shutdown');
      const s = await openStream(gw, CHAT, { model: 'slow-model', stream: true, messages: hello }, { 'x-api-key': key });
      assert.equal(s.status, 200);
      await s.until((items) => items.some((i) => 'comment' in i));
      const closing = gw.app.close();
      const frames = payloads(await s.end(5000));
      assert.equal(frames.length, 2);
      assert.deepEqual({ type: frames[0].error.type, code: frames[0].error.code }, { type: 'server_error', code: 'server_shutting_down' });
      assert.equal(frames[1], '[DONE]');
      await fake.waitForAbort(1, 3000);
      await closing;
      const [row] = await usageRows(gw, tenantId);
      assert.equal(row.status, 'interrupted');
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});
