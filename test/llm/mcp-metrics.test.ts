// /metrics and traces for MCP tool calls: through the real endpoint (SDK client, the
// registry, an SDK-built upstream), each call that ends is counted by tenant, server,
// tool and status, timed in a histogram, and (traces on) recorded as a span carrying
// server, tool and status. A denied call's names are the client's text and label
// nothing; no argument or result reaches a metric, a span or the log. Tool labels are
// bounded per process (GatewayMetrics, MCP_TOOL_SERIES_LIMIT).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as otel from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { Scrape } from '../helpers/prometheus.js';
import { connectClient, MCP, post } from './mcp-endpoint-support.js';
import { startMockUpstream, tool, type MockUpstream } from './mcp-registry-support.js';
import { stopTracing, traceWith } from '../../src/platform/tracing.js';
import { GatewayMetrics, MCP_TOOL_SERIES_LIMIT } from '../../src/platform/metrics/metrics.js';

const TOKEN = 'mcp-metrics-token-0123456789abcdef';
const SECRET_ARGUMENT = 'argument-content-9f86d081884c7d659a2feaa0c55ad015';
const SECRET_NAME = 'tools_name-the-client-typed-2c26b46b68ffc68ff99b453c1d304134';
const CALLS = 'gateway_mcp_calls_total';
const DURATION = 'gateway_mcp_call_duration_seconds';

describe('MCP calls in /metrics and in traces', () => {
  let gw: TestGateway;
  let world: World;
  let upstream: MockUpstream;
  const exporter = new tracing.InMemorySpanExporter();
  const provider = new tracing.BasicTracerProvider({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });

  const scrape = async () => {
    const res = await gw.request('GET', '/metrics', { token: TOKEN });
    assert.equal(res.status, 200, res.text);
    return new Scrape(res.text);
  };
  const toolSpans = () => exporter.getFinishedSpans().filter((span) => span.name.startsWith('tools/call'));

  before(async () => {
    // What startTracing does with the NodeSDK, with an in-memory exporter instead of OTLP.
    otel.trace.setGlobalTracerProvider(provider);
    traceWith(otel);
    upstream = await startMockUpstream([tool('echo'), tool('fails'), tool('hang')]);
    gw = await startGateway({ GATEWAY_METRICS_TOKEN: TOKEN });
    world = await seedWorld(gw, 'mcp-metrics');
    const created = await gw.request('POST', '/api/llm/v1/mcp/servers', {
      token: world.platform.admin.token,
      json: { name: 'tools', url: upstream.url, timeoutSeconds: 1, tenantIds: [world.a.tenantId] },
    });
    assert.equal(created.status, 201, created.text);
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
    await stopTracing();
    await provider.shutdown();
    otel.trace.disable();
  });

  it('counts calls by tenant, server, tool and status, and times them', async () => {
    const tenant = world.a.tenantId;
    const client = await connectClient(gw, MCP, { authorization: `Bearer ${world.a.admin.token}` }, 'auto');
    for (let i = 0; i < 2; i++) await client.callTool({ name: 'tools_echo', arguments: { text: SECRET_ARGUMENT } });
    const failed = await client.callTool({ name: 'tools_fails', arguments: { text: SECRET_ARGUMENT } });
    assert.equal(failed.isError, true);
    await assert.rejects(client.callTool({ name: 'tools_hang', arguments: {} }));
    await assert.rejects(client.callTool({ name: SECRET_NAME, arguments: { text: SECRET_ARGUMENT } }));
    await client.close();
    // Arguments the endpoint refuses itself, on a per-server path the client named: denied, unnamed too.
    const deep = JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'made-up-tool', arguments: JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) },
    });
    assert.equal((await post(gw, `${MCP}/made-up-server`, deep, { authorization: `Bearer ${world.a.admin.token}` })).status, 200);

    const metrics = await scrape();
    const labels = (tool: string, status: string) => ({ tenant, server: 'tools', tool, status });
    assert.equal(metrics.value(CALLS, labels('echo', 'ok')), 2);
    assert.equal(metrics.value(CALLS, labels('fails', 'error')), 1);
    assert.equal(metrics.value(CALLS, labels('hang', 'timeout')), 1);
    assert.equal(metrics.value(CALLS, { tenant, server: '_unknown', tool: '_unknown', status: 'denied' }), 2);
    assert.equal(metrics.count(DURATION, { tenant, server: 'tools', tool: 'echo' }), 2);
    assert.equal(metrics.count(DURATION, { tenant, server: 'tools', tool: 'hang' }), 1);
    // The hung call lasted about its timeoutSeconds: in a bucket above 0.5 s.
    assert.equal(metrics.sample(DURATION, { tenant, server: 'tools', tool: 'hang' })!.buckets!['0.5'], '0');
    for (const secret of [SECRET_ARGUMENT, SECRET_NAME, 'made-up']) assert.ok(!metrics.text.includes(secret), secret);
  });

  it('counts a call refused by toolCallsPerMinute as a rate-limit rejection', async () => {
    const patched = await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}/api-keys/${world.a.key.id}`, {
      token: world.a.admin.token,
      json: { limits: { toolCallsPerMinute: 1 }, mcp: { allow: ['tools/*'] } },
    });
    assert.equal(patched.status, 200, patched.text);
    const before = (await scrape()).value('gateway_rate_limit_rejections_total', { scope: 'key', limit: 'toolCallsPerMinute' });
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'tools_echo', arguments: {} } });
    assert.equal((await post(gw, MCP, body, { 'x-api-key': world.a.key.key })).status, 200);
    assert.equal((await post(gw, MCP, body, { 'x-api-key': world.a.key.key })).status, 429);
    const after = (await scrape()).value('gateway_rate_limit_rejections_total', { scope: 'key', limit: 'toolCallsPerMinute' });
    assert.equal(after - before, 1);
  });

  it('records a span per call with server, tool and status; none holds arguments, results or the client-typed name', () => {
    const spans = toolSpans();
    const ofTool = (name: string) => spans.filter((s) => s.attributes['gen_ai.tool.name'] === name);
    const [echo] = ofTool('echo');
    assert.ok(echo, spans.map((s) => s.name).join(', '));
    assert.equal(echo.name, 'tools/call tools/echo');
    assert.equal(echo.attributes['mcp.method.name'], 'tools/call');
    assert.equal(echo.attributes['gateway.mcp.server'], 'tools');
    assert.equal(echo.attributes['gateway.mcp.status'], 'ok');
    assert.equal(echo.attributes['gateway.tenant_id'], world.a.tenantId);
    assert.equal(echo.status.code, otel.SpanStatusCode.UNSET);
    const [failed] = ofTool('fails');
    assert.equal(failed!.attributes['gateway.mcp.status'], 'error');
    assert.equal(failed!.status.code, otel.SpanStatusCode.ERROR);
    const [hang] = ofTool('hang');
    assert.equal(hang!.attributes['gateway.mcp.status'], 'timeout');
    // The span covers the call: it lasted about timeoutSeconds (1 s), so at least half of it.
    assert.ok(hang!.duration[0] * 1000 + hang!.duration[1] / 1e6 >= 500, `${hang!.duration}`);
    const denied = spans.filter((s) => s.attributes['gateway.mcp.status'] === 'denied');
    assert.ok(denied.length >= 2);
    for (const span of denied) {
      assert.equal(span.name, 'tools/call');
      assert.equal(span.attributes['gen_ai.tool.name'], undefined);
    }
    const everything = JSON.stringify(
      exporter.getFinishedSpans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })),
    );
    for (const secret of [SECRET_ARGUMENT, SECRET_NAME, 'made-up', 'the tool failed']) assert.ok(!everything.includes(secret), secret);
  });

  it('writes no argument, result or client-typed name to the log', () => {
    const logs = gw.logs();
    assert.ok(logs.length > 0);
    for (const secret of [SECRET_ARGUMENT, SECRET_NAME, 'the tool failed']) assert.ok(!logs.includes(secret), secret);
  });
});

describe('MCP tool labels are bounded', () => {
  it(`keeps at most ${MCP_TOOL_SERIES_LIMIT} (tenant, server, tool) label sets; later tools count under _other`, async () => {
    const metrics = new GatewayMetrics({ caches: {}, ingestionQueue: async () => ({ queued: 0, processing: 0 }) });
    for (let i = 0; i < MCP_TOOL_SERIES_LIMIT + 50; i++) metrics.mcpCall('ten_a', 'many', `tool-${i}`, 'ok', 5);
    metrics.mcpCall('ten_a', 'many', 'tool-0', 'error', 5);
    metrics.mcpCall('ten_b', 'many', 'tool-late', 'ok', 5);
    const scrape = new Scrape((await metrics.scrape()).body);
    const series = scrape.family(CALLS).metrics;
    assert.equal(series.filter((s) => s.labels?.tool !== '_other').length, MCP_TOOL_SERIES_LIMIT + 1);
    assert.equal(scrape.value(CALLS, { tenant: 'ten_a', server: '_other', tool: '_other', status: 'ok' }), 50);
    assert.equal(scrape.value(CALLS, { tenant: 'ten_b', server: '_other', tool: '_other', status: 'ok' }), 1);
    assert.equal(scrape.value(CALLS, { tenant: 'ten_a', server: 'many', tool: 'tool-0', status: 'error' }), 1);
    assert.equal(scrape.family(DURATION).metrics.length, MCP_TOOL_SERIES_LIMIT + 2);
  });
});
