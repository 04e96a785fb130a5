// Shutdown with model calls in flight: new requests are refused at once (edge test),
// calls get GATEWAY_SHUTDOWN_GRACE_SECONDS to finish, then are ended cleanly: a
// stream with an in-band error frame and [DONE], a JSON answer with a 503, the
// engine's work cancelled, the usage recorded as `interrupted`. A call that finishes
// within the grace closes its keep-alive connection, so the server's close does not
// wait on an idle socket.
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { startFakeOllama, startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { eventually } from '../helpers/eventually.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver, openStream, payloads, usageRows } from './chat-support.js';

const CHAT = '/api/llm/v1/chat/completions';

describe('llm calls at shutdown', () => {
  let fake: FakeEngine;
  let gw: TestGateway | undefined;
  let tenantId: string;
  let key: string;

  async function start(grace: number, behaviour: FakeEngine['behaviour'], env: Record<string, string> = {}): Promise<TestGateway> {
    fake ??= await startFakeOpenAI({ models: ['slow-model'] });
    fake.behaviour = { models: ['slow-model'], ...behaviour };
    const started = await gatewayOver([fake], { GATEWAY_SHUTDOWN_GRACE_SECONDS: String(grace), ...env });
    gw = started;
    tenantId = (await seedTenant(started, 'shutdown')).tenantId;
    key = (await createApiKey(started, tenantId, 'shutdown')).key;
    return started;
  }
  /** Closes the HTTP side the way a SIGTERM does. */
  async function closeApp(g: TestGateway): Promise<void> {
    await g.app.close();
  }

  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });
  after(() => fake?.close());

  it('ends a stream still running after the grace period with an error frame and [DONE], cancelling the engine', async () => {
    // An answer far longer than the grace (over 1,000 tokens 100 ms apart, past the 60 s the
    // test waits for its end): only the grace ends it.
    const g = await start(2, { tokenDelayMs: 100, repeat: 1_000 });
    const s = await openStream(
      g,
      CHAT,
      { model: 'slow-model', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      { 'x-api-key': key },
    );
    assert.equal(s.status, 200);
    await s.until((items) => payloads(items).some((f) => f.choices?.[0]?.delta?.content));
    const framesAtClose = s.items.length;
    const closing = closeApp(g);
    const items = await s.end(60_000);
    const frames = items.filter((i): i is { data: string } => 'data' in i).map((i) => i.data);
    assert.equal(frames.at(-1), '[DONE]');
    const error = JSON.parse(frames.at(-2)!).error;
    assert.deepEqual({ type: error.type, code: error.code }, { type: 'server_error', code: 'server_shutting_down' });
    assert.match(error.message, /shutting down.*incomplete/);
    await fake.waitForAbort(1, 30_000);
    await closing;
    // The grace was given: the answer went on after the close began (two seconds of 100 ms
    // tokens; stopped at once, at most a token in transit would follow), then was cut off.
    const contentAfterClose = payloads(items.slice(framesAtClose)).filter((f) => f.choices?.[0]?.delta?.content).length;
    assert.ok(contentAfterClose >= 2, `${contentAfterClose} tokens streamed during the grace`);
    const [row] = await usageRows(g, tenantId);
    assert.equal(row.status, 'interrupted');
    assert.ok(row.completion_tokens >= 1);
  });

  it('answers a JSON request still waiting on the engine with a 503 and Retry-After', async () => {
    const g = await start(1, { silentMs: 20_000 });
    const answer = g.request('POST', CHAT, { apiKey: key, json: { model: 'slow-model', messages: [{ role: 'user', content: 'hi' }] } });
    await eventually('the engine to receive the request', () => fake.inFlight() !== 0);
    const closing = closeApp(g);
    const response = await answer;
    assert.equal(response.status, 503, response.text);
    assert.equal(response.body.code, 'SERVICE_UNAVAILABLE');
    assert.match(response.body.detail, /shutting down/);
    assert.equal(response.headers.get('retry-after'), '1');
    // The engine, silent for 20 s, never answered it: the 503 is the grace's end.
    await fake.waitForAbort(1, 30_000);
    await closing;
    const [row] = await usageRows(g, tenantId);
    assert.equal(row.status, 'interrupted');
  });

  it('lets a stream that ends within the grace period finish untouched, and closes its keep-alive connection', async () => {
    // An idle keep-alive connection would hold the server's close for the keep-alive timeout,
    // here the longest allowed (10 minutes, past the test runner's own timeout): closing at
    // all shows the connection was closed once its answer was out.
    const g = await start(10, { tokenDelayMs: 50, repeat: 2 }, { GATEWAY_KEEP_ALIVE_TIMEOUT_MS: '600000' });
    // fetch keeps its connection alive: the server must close it once the answer is out.
    const response = await fetch(g.url + CHAT, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 200);
    const closing = closeApp(g);
    const text = await response.text();
    assert.ok(text.endsWith('data: [DONE]\n\n'));
    assert.ok(!text.includes('server_shutting_down'));
    assert.match(text, /"finish_reason":"stop"/);
    await closing;
    const [row] = await usageRows(g, tenantId);
    assert.equal(row.status, 'ok');
  });

  it('ends a model pull still running after the grace period with an error frame', async () => {
    const ollama = await startFakeOllama({
      tokenDelayMs: 100,
      pullFrames: Array.from({ length: 100 }, (_, i) => ({ status: 'downloading', total: 100, completed: i })),
    });
    try {
      const g = await gatewayOver([ollama], { GATEWAY_SHUTDOWN_GRACE_SECONDS: '1' });
      gw = g;
      const t = await seedTenant(g, 'shutdown-pull');
      const admin = await tokenFor(g, t.admin.id, t.tenantId);
      const s = await openStream(g, '/api/llm/v1/ollama/models/pull/stream', { model: 'big:latest' }, { authorization: `Bearer ${admin}` });
      assert.equal(s.status, 200);
      await s.until((items) => payloads(items).length >= 2);
      const closing = closeApp(g);
      const last = payloads(await s.end(60_000)).at(-1);
      assert.equal(last.status, 'error');
      assert.equal(last.error.code, 'server_shutting_down');
      await ollama.waitForAbort(1, 30_000);
      await closing;
    } finally {
      await ollama.close();
    }
  });

  it('answers a model pull stopped before its first frame with a 503 problem and Retry-After', async () => {
    const ollama = await startFakeOllama();
    try {
      const g = await gatewayOver([ollama], { GATEWAY_SHUTDOWN_GRACE_SECONDS: '1' });
      gw = g;
      const t = await seedTenant(g, 'shutdown-pull-start');
      const admin = await tokenFor(g, t.admin.id, t.tenantId);
      ollama.behaviour = { delayHeadersMs: 20_000 };
      const answer = g.request('POST', '/api/llm/v1/ollama/models/pull/stream', {
        json: { model: 'big:latest' },
        headers: { authorization: `Bearer ${admin}` },
      });
      await eventually('the engine to receive the request', () => ollama.inFlight() !== 0);
      const closing = closeApp(g);
      const response = await answer;
      assert.equal(response.status, 503, response.text);
      assert.match(response.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(response.body.code, 'SERVICE_UNAVAILABLE');
      assert.match(response.body.detail, /shutting down/);
      assert.equal(response.headers.get('retry-after'), '1');
      await ollama.waitForAbort(1, 30_000);
      await closing;
    } finally {
      await ollama.close();
    }
  });
});
