// GET /metrics (Prometheus text, parsed by a Prometheus parser) and the Server-Timing
// header on chat answers: what chat requests move, who may scrape (never anyone on
// the public listener by default), and the separate listener.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, startGateway, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { closedLoopbackUrl } from '../helpers/closed-port.js';
import { eventually } from '../helpers/eventually.js';
import { Scrape } from '../helpers/prometheus.js';
import { loadConfig } from '../../src/platform/config.js';
import { createApiKey } from './support.js';
import { gatewayOver, openStream } from '../llm/chat-support.js';

const CHAT = '/api/llm/v1/chat/completions';
const TOKEN = 'metrics-token-0123456789abcdef';
const hello = [{ role: 'user', content: 'hello there metrics' }];
const MS = String.raw`\d+\.\d{2}`;
const JSON_TIMING = new RegExp(`^gateway;dur=${MS}, engine;dur=${MS}$`);
const STREAM_TIMING = new RegExp(`^gateway;dur=${MS}, engine-ttfb;dur=${MS}$`);

describe('/metrics with a bearer token on the public listener', () => {
  let gw: TestGateway;
  let engine: FakeEngine;
  let tenantId: string;
  let key: string;

  const scrape = async () => {
    const res = await gw.request('GET', '/metrics', { token: TOKEN });
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return new Scrape(res.text);
  };

  before(async () => {
    engine = await startFakeOpenAI({ models: ['metrics-model'] });
    gw = await gatewayOver([engine], { GATEWAY_METRICS_TOKEN: TOKEN });
    tenantId = (await seedTenant(gw, 'metrics')).tenantId;
    key = (await createApiKey(gw, tenantId, 'metrics')).key;
  });
  after(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('answers 401 without the token or with a wrong one, whatever other credential is sent', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-token-0123456789abcdef' },
      { authorization: `Basic ${TOKEN}` },
      { 'x-api-key': key },
    ];
    for (const headers of attempts) {
      const res = await gw.request('GET', '/metrics', { headers });
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      assert.equal(res.body.code, 'UNAUTHENTICATED');
      assert.doesNotMatch(res.text, /gateway_/);
    }
    // An operator's endpoint with its own credential: not in the OpenAPI document.
    const doc = await gw.request('GET', '/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.paths['/metrics'], undefined);
    // An API key of the tenant is no metrics token either, sent as a bearer.
    assert.equal((await gw.request('GET', '/metrics', { token: key })).status, 401);
  });

  it('counts chat requests (JSON and stream) by route and status, with tokens, engine time, overhead and time to first token', async () => {
    const before = await scrape();
    const route = { method: 'POST', route: CHAT, status: '200' };
    const tokens = { model: 'metrics-model', tenant: tenantId };

    let prompt = 0;
    let completion = 0;
    for (let i = 0; i < 2; i++) {
      const res = await gw.request('POST', CHAT, { apiKey: key, json: { model: 'metrics-model', messages: hello } });
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get('server-timing') ?? '', JSON_TIMING);
      prompt += res.body.usage.prompt_tokens;
      completion += res.body.usage.completion_tokens;
    }
    const s = await openStream(
      gw,
      CHAT,
      { model: 'metrics-model', stream: true, messages: hello, stream_options: { include_usage: true } },
      { 'x-api-key': key },
    );
    assert.equal(s.status, 200);
    assert.match(String(s.headers['server-timing']), STREAM_TIMING);
    const items = await s.end();
    const usage = items
      .filter((i): i is { data: string } => 'data' in i && i.data !== '[DONE]')
      .map((i) => JSON.parse(i.data))
      .find((f) => f.usage)?.usage;
    prompt += usage.prompt_tokens;
    completion += usage.completion_tokens;

    // The stream's usage is recorded right after its last frame: wait for it.
    let now = await scrape();
    await eventually('the stream counted', async () => {
      now = await scrape();
      return now.value('gateway_http_requests_total', route) - before.value('gateway_http_requests_total', route) === 3;
    });
    assert.equal(now.family('gateway_http_requests_total').type, 'COUNTER');
    assert.equal(now.value('gateway_input_tokens_total', tokens) - before.value('gateway_input_tokens_total', tokens), prompt);
    assert.equal(now.value('gateway_output_tokens_total', tokens) - before.value('gateway_output_tokens_total', tokens), completion);
    assert.ok(prompt > 0 && completion > 0);

    const delta = (name: string, labels: Record<string, string>) => now.count(name, labels) - before.count(name, labels);
    assert.equal(delta('gateway_http_request_duration_seconds', { method: 'POST', route: CHAT }), 3);
    assert.equal(delta('gateway_engine_request_duration_seconds', { engine: 'openai' }), 3);
    assert.equal(delta('gateway_overhead_seconds', { mode: 'json' }), 2);
    assert.equal(delta('gateway_overhead_seconds', { mode: 'stream' }), 1);
    assert.equal(delta('gateway_time_to_first_token_seconds', { model: 'metrics-model' }), 1);
    assert.equal(now.value('gateway_active_streams'), 0);

    // Histograms carry their buckets, cumulative, ending in +Inf = count.
    const overhead = now.sample('gateway_overhead_seconds', { mode: 'json' })!;
    assert.equal(now.family('gateway_overhead_seconds').type, 'HISTOGRAM');
    const bounds = Object.keys(overhead.buckets ?? {});
    assert.ok(bounds.includes('0.001') && bounds.includes('+Inf'), bounds.join(','));
    const counts = bounds.map((b) => Number(overhead.buckets![b]));
    assert.deepEqual(
      counts,
      [...counts].sort((a, b) => a - b),
    );
    assert.equal(Number(overhead.buckets!['+Inf']), Number(overhead.count));
    assert.ok(Number(overhead.sum) > 0);
  });

  it('labels unmatched paths as one route, never by their URL, and exports caches, queue depth, event-loop lag and GC', async () => {
    await gw.request('GET', '/no/such/path-12345');
    const now = await scrape();
    assert.ok(now.value('gateway_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }) >= 1);
    assert.doesNotMatch(now.text, /path-12345/);
    // The key's validation was cached after its first use.
    assert.ok(now.value('gateway_cache_hits_total', { cache: 'api_keys' }) >= 1);
    assert.ok(now.value('gateway_cache_misses_total', { cache: 'api_keys' }) >= 1);
    for (const cache of ['access_tokens', 'accounts', 'tenant_settings'])
      assert.ok(now.sample('gateway_cache_hits_total', { cache }), cache);
    assert.equal(now.value('gateway_ingestion_queue_depth', { state: 'queued' }), 0);
    assert.ok(now.sample('gateway_ingestion_queue_depth', { state: 'processing' }));
    assert.ok(now.families.has('gateway_nodejs_eventloop_lag_seconds'));
    assert.ok(now.families.has('gateway_nodejs_gc_duration_seconds'));
    assert.ok(now.families.has('gateway_process_cpu_seconds_total'));
    // No key or user ids in any label.
    assert.doesNotMatch(now.text, /key_[0-9A-Za-z]|usr_[0-9A-Za-z]/);
  });

  it('counts rate-limit rejections by scope and limit, as the limiter refuses them', async () => {
    const seeded = await seedTenant(gw, 'metrics-limited');
    const created = await createApiKey(gw, seeded.tenantId, 'limited');
    const adminToken = await tokenFor(gw, seeded.admin.id, seeded.tenantId);
    const patched = await gw.request('PATCH', `/api/auth/tenants/${seeded.tenantId}/api-keys/${created.id}`, {
      token: adminToken,
      json: { limits: { requestsPerMinute: 1 } },
    });
    assert.equal(patched.status, 200, patched.text);
    const before = await scrape();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await gw.request('POST', CHAT, { apiKey: created.key, json: { model: 'metrics-model', messages: hello } })).status);
    assert.deepEqual(statuses, [200, 429, 429]);
    const now = await scrape();
    const labels = { scope: 'key', limit: 'requestsPerMinute' };
    assert.equal(
      now.value('gateway_rate_limit_rejections_total', labels) -
        (before.sample('gateway_rate_limit_rejections_total', labels) ? before.value('gateway_rate_limit_rejections_total', labels) : 0),
      2,
    );
    assert.equal(now.value('gateway_http_requests_total', { method: 'POST', route: CHAT, status: '429' }), 2);
  });

  it('counts engine failures by node and failure kind', async () => {
    const before = await scrape();
    await engine.close();
    const res = await gw.request('POST', CHAT, { apiKey: key, json: { model: 'metrics-model', messages: hello } });
    assert.equal(res.status, 503);
    const now = await scrape();
    assert.ok(
      now.value('gateway_engine_errors_total', { engine: 'openai', failure: 'unreachable' }) >
        before.value('gateway_engine_errors_total', { engine: 'openai', failure: 'unreachable' }),
    );
  });
});

describe('/metrics off by default', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway();
  });
  after(() => gw?.close());

  it('is not served on the public listener (404 like any unknown path), and nothing is collected', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${TOKEN}` }]) {
      const res = await gw.request('GET', '/metrics', { headers });
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'NOT_FOUND');
    }
    assert.equal(gw.ctx.metrics, undefined);
    assert.ok(!gw.app.routeTable.some((r) => r.url === '/metrics'));
  });
});

describe('/metrics on its own port', () => {
  let gw: TestGateway;
  let engine: FakeEngine;
  let metricsUrl: string;
  before(async () => {
    const port = new URL(await closedLoopbackUrl()).port;
    metricsUrl = `http://127.0.0.1:${port}`;
    engine = await startFakeOpenAI({ models: ['port-model'] });
    gw = await gatewayOver([engine], { GATEWAY_METRICS_PORT: port });
  });
  after(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('serves /metrics there without a credential, and not on the public listener', async () => {
    const { tenantId } = await seedTenant(gw, 'port');
    const { key } = await createApiKey(gw, tenantId, 'port');
    const chat = await gw.request('POST', CHAT, { apiKey: key, json: { model: 'port-model', messages: hello } });
    assert.equal(chat.status, 200);
    assert.match(chat.headers.get('server-timing') ?? '', JSON_TIMING);

    const res = await fetch(`${metricsUrl}/metrics`);
    assert.equal(res.status, 200);
    const scrape = new Scrape(await res.text());
    assert.equal(scrape.value('gateway_http_requests_total', { method: 'POST', route: CHAT, status: '200' }), 1);

    assert.equal((await gw.request('GET', '/metrics')).status, 404);
    assert.equal((await gw.request('GET', '/metrics', { token: TOKEN })).status, 404);
    // Only /metrics answers on the metrics listener.
    const other = await fetch(`${metricsUrl}/health`);
    assert.equal(other.status, 404);
    assert.equal((await other.json()).code, 'NOT_FOUND');
    assert.equal((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status, 404);
  });

  it('stops listening when the gateway closes', async () => {
    await gw.close();
    await assert.rejects(fetch(`${metricsUrl}/metrics`));
    gw = undefined as unknown as TestGateway;
  });
});

describe('Server-Timing without /metrics', () => {
  let gw: TestGateway;
  let engine: FakeEngine;
  before(async () => {
    engine = await startFakeOpenAI({ models: ['plain-model'] });
    gw = await gatewayOver([engine]);
  });
  after(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('is sent on JSON and stream answers all the same', async () => {
    const { tenantId } = await seedTenant(gw, 'timing');
    const { key } = await createApiKey(gw, tenantId, 'timing');
    const json = await gw.request('POST', CHAT, { apiKey: key, json: { model: 'plain-model', messages: hello } });
    assert.match(json.headers.get('server-timing') ?? '', JSON_TIMING);
    const s = await openStream(gw, CHAT, { model: 'plain-model', stream: true, messages: hello }, { 'x-api-key': key });
    assert.match(String(s.headers['server-timing']), STREAM_TIMING);
    await s.end();
  });

  it('is sent on the legacy completions too (JSON and stream)', async () => {
    const { tenantId } = await seedTenant(gw, 'timing-cmpl');
    const { key } = await createApiKey(gw, tenantId, 'timing-cmpl');
    const json = await gw.request('POST', '/api/llm/v1/completions', { apiKey: key, json: { model: 'plain-model', prompt: 'hello' } });
    assert.equal(json.status, 200, json.text);
    assert.match(json.headers.get('server-timing') ?? '', JSON_TIMING);
    const s = await openStream(
      gw,
      '/api/llm/v1/completions',
      { model: 'plain-model', stream: true, prompt: 'hello' },
      { 'x-api-key': key },
    );
    assert.equal(s.status, 200);
    assert.match(String(s.headers['server-timing']), STREAM_TIMING);
    await s.end();
  });
});

describe('metrics configuration', () => {
  it('is off by default, and each variable is checked, naming it', () => {
    assert.deepEqual(loadConfig({}).metrics, { port: undefined, host: '127.0.0.1', token: undefined });
    assert.deepEqual(loadConfig({ GATEWAY_METRICS_PORT: '9464', GATEWAY_METRICS_HOST: '0.0.0.0', GATEWAY_METRICS_TOKEN: TOKEN }).metrics, {
      port: 9464,
      host: '0.0.0.0',
      token: TOKEN,
    });
    assert.throws(() => loadConfig({ GATEWAY_METRICS_PORT: 'ninety' }), /GATEWAY_METRICS_PORT/);
    assert.throws(() => loadConfig({ GATEWAY_METRICS_PORT: '0' }), /GATEWAY_METRICS_PORT/);
    assert.throws(() => loadConfig({ GATEWAY_METRICS_TOKEN: 'short' }), /GATEWAY_METRICS_TOKEN.*16 characters/);
  });
});
