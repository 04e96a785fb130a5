// Edge behaviour every response shares: the correlation id, CORS, /health and the
// 410 for the removed stream endpoint.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, seedTenant, type TestGateway } from '../helpers/gateway.js';
import { createApiKey, rawRequest, tokenFor, UUID } from './support.js';
import { Writable } from 'node:stream';
import { VERSION } from '../../src/context.js';
import { buildApp } from '../../src/gateway/app.js';

const ALLOWED = 'https://app.example.com';
const ALLOWED_DEV = 'http://localhost:5173';
const BODY_LIMIT = 2048;

describe('edge: correlation id, CORS, health, 410', () => {
  let gw: TestGateway;
  let apiKey: string;
  let adminToken: string;

  before(async () => {
    gw = await startGateway({ GATEWAY_CORS_ORIGINS: `${ALLOWED}, ${ALLOWED_DEV}`, GATEWAY_BODY_LIMIT_BYTES: String(BODY_LIMIT) });
    const tenant = await seedTenant(gw, 'edge');
    apiKey = (await createApiKey(gw, tenant.tenantId)).key;
    adminToken = await tokenFor(gw, tenant.admin.id, tenant.tenantId);
  });
  after(() => gw.close());

  describe('X-Correlation-ID', () => {
    it('is on every kind of response, and problem bodies carry the same id', async () => {
      const cases: Array<[string, number, () => Promise<{ status: number; headers: Headers; body: any }>]> = [
        ['health', 200, () => gw.request('GET', '/health')],
        ['authenticated list', 200, () => gw.request('GET', '/api/os/workspaces', { apiKey })],
        ['create', 201, () => gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'corr' } })],
        [
          'malformed JSON',
          400,
          () => gw.request('POST', '/api/os/workspaces', { apiKey, body: '{"name":', headers: { 'content-type': 'application/json' } }),
        ],
        ['validation', 400, () => gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 7 } })],
        ['no credential', 401, () => gw.request('GET', '/api/os/workspaces')],
        ['bad credential', 401, () => gw.request('GET', '/api/os/workspaces', { apiKey: 'rdk_nope' })],
        ['unknown workspace', 404, () => gw.request('GET', '/api/os/workspaces/ws_01ARZ3NDEKTSV4RRFFQ69G5FAV', { apiKey })],
        ['unknown route', 404, () => gw.request('GET', '/no/such/route')],
        ['removed endpoint', 410, () => gw.request('POST', '/api/llm/v1/chat/stream', { json: {} })],
        ['body too large', 413, () => gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'x'.repeat(BODY_LIMIT) } })],
        [
          'unsupported media type',
          415,
          () =>
            gw.request('POST', '/api/os/workspaces', {
              apiKey,
              body: 'name=x',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
            }),
        ],
        [
          'CORS preflight',
          204,
          () => gw.request('OPTIONS', '/api/os/workspaces', { headers: { origin: ALLOWED, 'access-control-request-method': 'GET' } }),
        ],
      ];
      for (const [label, status, send] of cases) {
        const response = await send();
        assert.equal(response.status, status, label);
        const id = response.headers.get('x-correlation-id');
        assert.match(id ?? '', UUID, `${label}: generated id`);
        if (status >= 400) {
          assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8', label);
          assert.equal(response.body.correlationId, id, `${label}: body and header carry the same id`);
          assert.equal(response.body.status, status, label);
        }
      }
    });

    it('is on event streams written straight to the raw response (hijacked replies)', async () => {
      // Streaming routes write to reply.raw; headers set only on the Fastify reply would be lost there.
      const app = await buildApp(gw.ctx, { logStream: new Writable({ write: (_c, _e, done) => done() }) });
      app.get('/test/stream', { config: { access: 'public' } }, (_request, reply) => {
        reply.hijack();
        reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'x-accel-buffering': 'no' });
        reply.raw.end('data: [DONE]\n\n');
      });
      try {
        const generated = await app.inject({ method: 'GET', url: '/test/stream' });
        assert.equal(generated.statusCode, 200);
        assert.match(String(generated.headers['x-correlation-id']), UUID);
        const kept = await app.inject({ method: 'GET', url: '/test/stream', headers: { 'x-correlation-id': 'stream-1' } });
        assert.equal(kept.headers['x-correlation-id'], 'stream-1');
        assert.equal(kept.body, 'data: [DONE]\n\n');
      } finally {
        await app.close();
      }
    });

    it('keeps a well-formed inbound id, on success and on errors', async () => {
      for (const id of ['abc', 'A.b_c-9', 'x'.repeat(64), '0']) {
        const ok = await gw.request('GET', '/health', { headers: { 'x-correlation-id': id } });
        assert.equal(ok.headers.get('x-correlation-id'), id);
        const denied = await gw.request('GET', '/api/os/workspaces', { headers: { 'x-correlation-id': id } });
        assert.equal(denied.headers.get('x-correlation-id'), id);
        assert.equal(denied.body.correlationId, id);
      }
    });

    it('replaces an inbound id that is too long or has other characters', async () => {
      const seen = new Set<string>();
      for (const bad of ['x'.repeat(65), 'has space', 'semi;colon', 'a/b', 'quote"', '<script>', 'ümlaut'.normalize(), '%41']) {
        const response = await rawRequest(gw, 'GET', '/api/os/workspaces', {
          headers: { 'x-correlation-id': Buffer.from(bad, 'utf8').toString('latin1') },
        });
        const id = String(response.headers['x-correlation-id']);
        assert.match(id, UUID, `${JSON.stringify(bad)} replaced`);
        assert.equal(response.body.correlationId, id);
        seen.add(id);
      }
      // An empty or repeated header is not an id either.
      const empty = await rawRequest(gw, 'GET', '/health', { headers: { 'x-correlation-id': '' } });
      assert.match(String(empty.headers['x-correlation-id']), UUID);
      seen.add(String(empty.headers['x-correlation-id']));
      assert.equal(seen.size, 9, 'every generated id is fresh');
    });

    it('is in every log line of the request', async () => {
      const id = `trace-${Date.now()}`;
      await gw.request('GET', '/api/os/workspaces', { apiKey, headers: { 'x-correlation-id': id } });
      await gw.request('GET', '/api/os/workspaces', { headers: { 'x-correlation-id': `${id}-denied` } });
      const lines = gw
        .logs()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const mine = lines.filter((l) => JSON.stringify(l).includes(id));
      for (const line of mine) assert.ok(line.correlationId === id || line.correlationId === `${id}-denied`, JSON.stringify(line));
      // One access line per request, when it completes: method, path, status, duration.
      for (const [correlationId, statusCode] of [
        [id, 200],
        [`${id}-denied`, 401],
      ] as const) {
        const access = mine.filter((l) => l.correlationId === correlationId && l.res);
        assert.equal(access.length, 1, `one access line for ${correlationId}: ${JSON.stringify(mine)}`);
        assert.equal(access[0].res.statusCode, statusCode);
        assert.deepEqual([access[0].req.method, access[0].req.url], ['GET', '/api/os/workspaces']);
        assert.equal(typeof access[0].responseTime, 'number');
        assert.equal(access[0].level, 30, 'at info');
      }
      // And no request-scoped line anywhere in the log lacks an id.
      for (const line of lines.filter((l) => l.req || l.res))
        assert.match(String(line.correlationId), /^[A-Za-z0-9._-]{1,64}$/, JSON.stringify(line));
    });
  });

  describe('CORS', () => {
    it('echoes an allowed origin exactly, with Vary: Origin and credentials, never *', async () => {
      for (const origin of [ALLOWED, ALLOWED_DEV]) {
        for (const response of [
          await gw.request('GET', '/health', { headers: { origin } }),
          await gw.request('GET', '/api/os/workspaces', { apiKey, headers: { origin } }),
          await gw.request('GET', '/api/os/workspaces', { headers: { origin } }), // the 401 must be readable by the app too
        ]) {
          assert.equal(response.headers.get('access-control-allow-origin'), origin);
          assert.equal(response.headers.get('access-control-allow-credentials'), 'true');
          assert.match(response.headers.get('vary') ?? '', /\bOrigin\b/i);
          assert.match(response.headers.get('access-control-expose-headers') ?? '', /X-Correlation-ID/i);
        }
      }
    });

    it('gives a disallowed or missing origin no CORS headers', async () => {
      for (const origin of [
        'https://evil.example.com',
        'https://app.example.com.evil.com',
        'http://app.example.com',
        'https://APP.example.com:443x',
        'null',
        undefined,
      ]) {
        const response = await gw.request('GET', '/api/os/workspaces', { apiKey, headers: origin ? { origin } : {} });
        assert.equal(response.status, 200, 'CORS does not change what the server answers, only what browsers may read');
        for (const header of ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-expose-headers']) {
          assert.equal(response.headers.get(header), null, `${origin}: ${header}`);
        }
      }
    });

    it('answers a preflight from an allowed origin without credentials', async () => {
      const response = await gw.request('OPTIONS', '/api/os/workspaces', {
        headers: { origin: ALLOWED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type' },
      });
      assert.equal(response.status, 204);
      assert.equal(response.headers.get('access-control-allow-origin'), ALLOWED);
      assert.equal(response.headers.get('access-control-allow-credentials'), 'true');
      assert.match(response.headers.get('access-control-allow-methods') ?? '', /POST/);
      assert.match(response.headers.get('access-control-allow-headers') ?? '', /x-api-key/i);
      assert.match(response.headers.get('vary') ?? '', /\bOrigin\b/i);
      assert.match(response.headers.get('x-correlation-id') ?? '', UUID);
    });

    it('refuses a preflight from another origin: no CORS headers, a problem with the correlation id', async () => {
      const response = await gw.request('OPTIONS', '/api/os/workspaces', {
        headers: {
          origin: 'https://evil.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'x-api-key',
        },
      });
      assert.ok(response.status >= 400, `status ${response.status}`);
      assert.equal(response.headers.get('access-control-allow-origin'), null);
      assert.equal(response.headers.get('access-control-allow-credentials'), null);
      assert.equal(response.headers.get('access-control-allow-methods'), null);
      assert.equal(response.body.correlationId, response.headers.get('x-correlation-id'));
    });
  });

  describe('GET /health', () => {
    it('answers 200 without credentials, with status, version, the database state and coordination', async () => {
      const response = await gw.request('GET', '/health');
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(response.body, {
        status: 'ok',
        version: VERSION,
        database: { status: 'up', kind: gw.ctx.db.kind, vector: gw.ctx.vector ? 'available' : 'unavailable' },
        // In-process without REDIS_URL: never degraded for want of a Redis.
        coordination: { kind: 'local', status: 'ok' },
        // startGateway returns once the built-in embedder is prepared (off without pgvector).
        embedder: { model: 'gateway-word-vectors-en', status: gw.ctx.vector ? 'ready' : 'off' },
      });
    });

    it('is independent of credentials: a garbage or valid one changes nothing', async () => {
      const expected = (await gw.request('GET', '/health')).body;
      for (const options of [{ apiKey: 'rdk_garbage' }, { token: 'not.a.jwt' }, { apiKey }, { token: adminToken }]) {
        const response = await gw.request('GET', '/health', options);
        assert.equal(response.status, 200);
        assert.deepEqual(response.body, expected);
      }
    });
  });

  describe('removed POST /api/llm/v1/chat/stream', () => {
    it('answers 410 naming the replacement, for no credential, a garbage one and a valid one', async () => {
      const body = { model: 'auto', messages: [{ role: 'user', content: 'hi' }] };
      for (const options of [{}, { apiKey: 'rdk_garbage' }, { token: 'garbage' }, { apiKey }, { token: adminToken }]) {
        const response = await gw.request('POST', '/api/llm/v1/chat/stream', { ...options, json: body });
        assert.equal(response.status, 410, JSON.stringify(options));
        assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
        assert.equal(response.body.code, 'GONE');
        assert.match(response.body.detail, /POST \/api\/llm\/v1\/chat\/completions/);
        assert.match(response.body.detail, /"?stream"?: true/);
        assert.equal(response.body.correlationId, response.headers.get('x-correlation-id'));
      }
    });

    it('answers 410 whatever the body: none, malformed JSON, another media type, or over the limit', async () => {
      for (const options of [
        {},
        { body: '{not json', headers: { 'content-type': 'application/json' } },
        { body: 'hello', headers: { 'content-type': 'text/plain' } },
        { body: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
        { json: { messages: 'x'.repeat(BODY_LIMIT * 2) } },
      ]) {
        const response = await gw.request('POST', '/api/llm/v1/chat/stream', options);
        assert.equal(response.status, 410, JSON.stringify(options).slice(0, 80));
        assert.equal(response.body.correlationId, response.headers.get('x-correlation-id'));
      }
    });
  });
});
