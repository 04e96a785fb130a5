// OpenTelemetry traces as an operator turns them on: `gateway start` (bin/gateway.js)
// with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a collector (here a node:http server
// taking OTLP/HTTP JSON). A chat completion gives one trace: the route's server span
// with the correlation id and tenant, the call to the engine, the database queries.
// Nothing secret leaves in it. Without the variable, no OpenTelemetry module loads.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { TEST_TMP } from '../helpers/paths.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { tracingRequested } from '../../src/platform/tracing.js';
import { REPO_ROOT, cliJson, dataDirsForSuite, killChildren, request, startCliServer, watchOutput } from '../cli/helpers.js';

const BIN = path.join(REPO_ROOT, 'bin/gateway.js');
const MODEL = 'trace-model';
const ENGINE_KEY = 'engine-secret-4f1c9a7d2b';
const ADMIN_PASSWORD = 'tracing-admin-password-1';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

/** An OTLP/HTTP JSON collector: every body as sent, and the spans in them. */
async function startCollector() {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      bodies.push(`${req.method} ${req.url}\n${JSON.stringify(req.headers)}\n${body}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const spans = (): Span[] =>
    bodies.flatMap((entry) => {
      const body = entry.slice(entry.indexOf('\n', entry.indexOf('\n') + 1) + 1);
      return (JSON.parse(body).resourceSpans ?? []).flatMap((rs: any) =>
        rs.scopeSpans.flatMap((ss: any) =>
          ss.spans.map((s: any) => ({
            ...s,
            attributes: Object.fromEntries(s.attributes.map((a: any) => [a.key, Object.values(a.value)[0]])),
          })),
        ),
      );
    });
  const resources = () => bodies.map((entry) => entry.slice(entry.indexOf('\n', entry.indexOf('\n') + 1) + 1));
  const serviceNames = () => [
    ...new Set(
      bodies.flatMap((entry) =>
        (JSON.parse(entry.slice(entry.indexOf('\n', entry.indexOf('\n') + 1) + 1)).resourceSpans ?? []).map(
          (rs: any) => rs.resource.attributes.find((a: any) => a.key === 'service.name')?.value.stringValue,
        ),
      ),
    ),
  ];
  return { url, bodies, spans, resources, serviceNames, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** `node bin/gateway.js start` with only the environment given; a probe reports the modules it loaded at exit. */
function startGateway(env: Record<string, string>, probeOut: string, nodeArgs: string[] = []) {
  const child = spawn(process.execPath, [...nodeArgs, '--import', PROBE, BIN, 'start'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GATEWAY_LOG_LEVEL: 'warn', PROBE_OUT: probeOut, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const watch = watchOutput(child);
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      watch.closed();
      resolve(code);
    }),
  );
  return { child, output: watch.output, waitFor: watch.waitFor, exited };
}

// Loaded with --import in the gateway process (and the one bin/gateway.js re-runs with
// the V8 flags, which inherits it): at exit, the CommonJS modules loaded (the
// OpenTelemetry packages are CommonJS, also when imported from ESM), per process.
const PROBE_SOURCE = `
import { createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
const require = createRequire(import.meta.url);
process.on('exit', () => {
  const loaded = Object.keys(require.cache).filter((file) => file.includes('node_modules'));
  appendFileSync(process.env.PROBE_OUT, JSON.stringify({ pid: process.pid, loaded }) + '\\n');
});
`;
let PROBE = '';

/** Polls `find` until it returns something, or fails naming `what` (spans arrive in batches, after the response). */
async function until<T>(what: () => string, find: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function loadedModules(probeOut: string): string[] {
  return readFileSync(probeOut, 'utf8')
    .trim()
    .split('\n')
    .flatMap((line) => JSON.parse(line).loaded as string[]);
}

describe('when traces are on', () => {
  it('an OTLP endpoint (all signals or traces only) turns them on; OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none keep them off', () => {
    const endpoint = 'http://collector:4318';
    assert.equal(tracingRequested({}), false);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }), false);
    assert.equal(tracingRequested({ OTEL_SERVICE_NAME: 'gateway', OTEL_TRACES_SAMPLER: 'always_on' }), false);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }), true);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces` }), true);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'TRUE' }), false);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'false' }), true);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'none' }), false);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'otlp' }), true);
  });
});

describe('OpenTelemetry traces', () => {
  const freshData = dataDirsForSuite();
  let engine: FakeEngine;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(path.join(TEST_TMP, 'tracing-'));
    PROBE = path.join(dir, 'probe.mjs');
    writeFileSync(PROBE, PROBE_SOURCE);
    engine = await startFakeOpenAI({ models: [MODEL] });
    collector = await startCollector();
  });
  after(async () => {
    killChildren();
    await engine.close();
    await collector.close();
  });

  function baseEnv(data: { env: Record<string, string> }): Record<string, string> {
    return {
      ...data.env,
      PORT: '0',
      GATEWAY_TLS: 'off',
      GATEWAY_TENANT: 'Traced Co',
      GATEWAY_ADMIN_USERNAME: 'admin',
      GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: engine.url, apiKey: ENGINE_KEY }]),
    };
  }

  async function chat(url: string, key: string, correlationId: string) {
    const response = await fetch(`${url}/api/llm/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say something traceable' }] }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get('x-correlation-id'), correlationId);
    await response.json();
  }

  it('exports one trace per chat request: the route span with correlation id and tenant, the engine call and the queries as its children; no secret in it', async () => {
    const data = await freshData();
    const probeOut = path.join(dir, 'on.jsonl');
    const gateway = startGateway(
      {
        ...baseEnv(data),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
      probeOut,
    );
    const [, tenantId] = await gateway.waitFor(/Created the first tenant "Traced Co" \((ten_[0-9A-Z]{26})\)/);
    const [, url] = await gateway.waitFor(/is running at (http:\/\/127\.0\.0\.1:\d+)/);
    const key = (await cliJson(['keys', 'create', '--tenant', tenantId!, '--name', 'traced'], data.env)).key as string;

    const correlationId = 'trace-test-0001';
    await chat(url!, key, correlationId);

    const names = () => JSON.stringify(collector.spans().map((s) => s.name));
    const serverSpan = await until(
      () => `the server span of the chat request in ${names()}`,
      () => collector.spans().find((s) => s.kind === 2 && s.attributes['gateway.correlation_id'] === correlationId),
    );
    assert.equal(serverSpan.name, 'POST /api/llm/v1/chat/completions');
    assert.equal(serverSpan.attributes['http.route'], '/api/llm/v1/chat/completions');
    assert.equal(serverSpan.attributes['gateway.tenant_id'], tenantId);

    const inTrace = () => collector.spans().filter((s) => s.traceId === serverSpan.traceId);
    const descendsFromServer = (span: Span): boolean => {
      const byId = new Map(inTrace().map((s) => [s.spanId, s]));
      for (let at: Span | undefined = span; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined)
        if (at.spanId === serverSpan.spanId) return true;
      return false;
    };
    // The engine call: undici's client span, to the fake engine's chat route.
    const enginePort = new URL(engine.url).port;
    const engineSpan = await until(
      () => `an engine client span in ${names()}`,
      () => inTrace().find((s) => s.kind === 3 && String(s.attributes['url.full'] ?? '').includes(`:${enginePort}/v1/chat/completions`)),
    );
    assert.ok(descendsFromServer(engineSpan));
    // The engine saw the same trace (W3C traceparent), so its own spans join it.
    const engineRequest = engine.requests.find((r) => r.path === '/v1/chat/completions');
    assert.match(String(engineRequest?.headers.traceparent), new RegExp(`^00-${serverSpan.traceId}-[0-9a-f]{16}-0[01]$`));

    // The database: pg spans (the embedded database is reached through pg too, on its socket).
    const isQuery = (s: Span) => s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql';
    const queries = await until(
      () => `pg spans in ${names()}`,
      () => (inTrace().some(isQuery) ? inTrace().filter(isQuery) : undefined),
    );
    for (const span of queries) assert.ok(descendsFromServer(span), span.name);
    assert.ok(queries.some((s) => typeof (s.attributes['db.statement'] ?? s.attributes['db.query.text']) === 'string'));

    // A streamed answer (the reply hijacked, written by the handler) is traced alike.
    const streamed = await fetch(`${url}/api/llm/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'x-correlation-id': 'trace-test-stream' },
      body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'Say something traceable' }] }),
    });
    assert.equal(streamed.status, 200);
    assert.match(await streamed.text(), /\[DONE\]/);
    const streamSpan = await until(
      () => `the server span of the streamed request in ${names()}`,
      () => collector.spans().find((s) => s.attributes['gateway.correlation_id'] === 'trace-test-stream'),
    );
    assert.equal(streamSpan.attributes['gateway.tenant_id'], tenantId);
    await until(
      () => `the streamed request's engine span in ${names()}`,
      () => collector.spans().find((s) => s.traceId === streamSpan.traceId && s.parentSpanId === streamSpan.spanId && s.kind === 3),
    );

    // A credential sent in the query string by mistake is redacted from the URL recorded.
    assert.equal((await request(`${url}/health?api_key=${key}&token=${ADMIN_PASSWORD}`)).status, 200);
    await until(
      () => `the /health span in ${names()}`,
      () => collector.spans().find((s) => s.attributes['http.route'] === '/health'),
    );

    gateway.child.kill('SIGTERM');
    assert.equal(await gateway.exited, 0, gateway.output());

    // Nothing secret in what was exported: credentials, the engine's key, the bodies.
    const exported = collector.bodies.join('\n');
    const databasePassword = data.env.DATABASE_URL ? decodeURIComponent(new URL(data.env.DATABASE_URL).password) : '';
    const secrets = [key, key.slice(-12), ENGINE_KEY, ADMIN_PASSWORD, 'Say something traceable', 'Bearer', databasePassword];
    for (const secret of secrets.filter(Boolean)) assert.equal(exported.includes(secret), false, `"${secret}" is in the exported spans`);
    assert.equal(/authorization|x-api-key/i.test(collector.resources().join('\n')), false);
    // Background work (the nodes' health checks here) starts no trace of its own: every exported span belongs to a request.
    assert.ok(
      collector.spans().every((s) => s.kind === 2 || s.parentSpanId),
      names(),
    );
    assert.deepEqual(collector.serviceNames(), ['gateway']);
    // The probe sees the OpenTelemetry modules when tracing is on (so its silence below means something).
    assert.ok(loadedModules(probeOut).some((file) => file.includes('@opentelemetry')));
  });

  it('exports the spans still buffered when it stops gracefully; the standard OTEL_* variables apply (OTEL_SERVICE_NAME)', async () => {
    const data = await freshData();
    const gateway = startGateway(
      {
        ...baseEnv(data),
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'gateway-eu-1',
        // Far longer than the test: only the stop can send them.
        OTEL_BSP_SCHEDULE_DELAY: '600000',
      },
      path.join(dir, 'stop.jsonl'),
    );
    const [, url] = await gateway.waitFor(/is running at (http:\/\/127\.0\.0\.1:\d+)/);
    const before = collector.bodies.length;
    const correlationId = 'trace-test-stop';
    assert.equal((await request(`${url}/health`, { headers: { 'x-correlation-id': correlationId } })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(collector.bodies.length, before, 'nothing exported before the stop');
    gateway.child.kill('SIGTERM');
    assert.equal(await gateway.exited, 0, gateway.output());
    const span = collector.spans().find((s) => s.attributes['gateway.correlation_id'] === correlationId);
    assert.equal(span?.name, 'GET /health');
    assert.ok(collector.serviceNames().includes('gateway-eu-1'));
  });

  it('started without bin/gateway.js (npm run dev), says that it exports no traces', async () => {
    const data = await freshData();
    const server = startCliServer({ ...data.env, PORT: '0', GATEWAY_TLS: 'off', OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    try {
      await server.waitFor(/warning: OTEL_EXPORTER_OTLP_ENDPOINT is set, but traces start only with bin\/gateway\.js/);
      await server.waitFor(/is running at/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('without OTEL_EXPORTER_OTLP_ENDPOINT, loads no OpenTelemetry module and exports nothing', async () => {
    const data = await freshData();
    const probeOut = path.join(dir, 'off.jsonl');
    const before = collector.bodies.length;
    // Other OTEL_* variables alone do not turn tracing on.
    const gateway = startGateway({ ...baseEnv(data), OTEL_SERVICE_NAME: 'gateway', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, probeOut);
    const [, tenantId] = await gateway.waitFor(/Created the first tenant "Traced Co" \((ten_[0-9A-Z]{26})\)/);
    const [, url] = await gateway.waitFor(/is running at (http:\/\/127\.0\.0\.1:\d+)/);
    const key = (await cliJson(['keys', 'create', '--tenant', tenantId!, '--name', 'untraced'], data.env)).key as string;
    await chat(url!, key, 'trace-test-0002');
    assert.equal((await request(`${url}/health`)).status, 200);
    const engineRequest = engine.requests.filter((r) => r.path === '/v1/chat/completions').at(-1);
    assert.equal(engineRequest?.headers.traceparent, undefined);

    gateway.child.kill('SIGTERM');
    assert.equal(await gateway.exited, 0, gateway.output());
    const otel = loadedModules(probeOut).filter((file) => file.includes('@opentelemetry') || file.includes('-in-the-middle'));
    assert.deepEqual(otel, []);
    assert.equal(collector.bodies.length, before);
  });
});
