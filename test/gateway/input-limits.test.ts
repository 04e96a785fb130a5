// What the edge does with request bodies and slow clients: strict validation,
// the body limit (413 before any handler), malformed JSON, header and request
// timeouts, and the one problem+json shape, which never leaks internals on 5xx.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import tls from 'node:tls';
import { buildApp } from '../../src/gateway/app.js';
import { loadTls } from '../../src/platform/tls.js';
import { startGateway, seedTenant, type TestGateway } from '../helpers/gateway.js';
import { createApiKey, parseRawResponse, rawRequest, silentClient, tokenFor, UUID } from './support.js';

const BODY_LIMIT = 2048;
const REQUEST_TIMEOUT_MS = 1500;
const HEADERS_TIMEOUT_MS = 1000;
// How long a silent client waits for the server to close before giving up: a deadline
// against a hang, far past the timeouts above even on a loaded machine. Which timeout
// closed the connection shows in the answer (408 REQUEST_TIMEOUT, or a 408 before the headers were read).
const SILENT_CLIENT_DEADLINE_MS = 60_000;

const PROBLEM_KEYS = ['code', 'correlationId', 'detail', 'status', 'title', 'type'];

function assertProblem(response: { status: number; headers: Headers | Record<string, unknown>; body: any }, status: number, code: string) {
  const header = (name: string) =>
    response.headers instanceof Headers ? response.headers.get(name) : (response.headers[name] as string | undefined);
  assert.equal(response.status, status);
  assert.equal(header('content-type'), 'application/problem+json; charset=utf-8');
  assert.deepEqual(
    Object.keys(response.body)
      .filter((k) => k !== 'errors')
      .sort(),
    PROBLEM_KEYS,
  );
  assert.equal(response.body.status, status);
  assert.equal(response.body.code, code);
  assert.match(response.body.type, new RegExp(`^\\S+[:/]${code.toLowerCase().replaceAll('_', '-')}$`), 'the type is a URI naming the code');
  assert.equal(typeof response.body.title, 'string');
  assert.equal(typeof response.body.detail, 'string');
  assert.equal(response.body.correlationId, header('x-correlation-id'));
}

describe('edge: input, limits and errors', () => {
  let gw: TestGateway;
  let tenantId: string;
  let apiKey: string;
  let adminToken: string;

  const workspaceCount = async () =>
    (await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM workspaces WHERE tenant_id = $1', [tenantId]))[0]!.n;

  before(async () => {
    gw = await startGateway({
      GATEWAY_BODY_LIMIT_BYTES: String(BODY_LIMIT),
      GATEWAY_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      GATEWAY_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    });
    const tenant = await seedTenant(gw, 'limits');
    tenantId = tenant.tenantId;
    apiKey = (await createApiKey(gw, tenantId)).key;
    adminToken = await tokenFor(gw, tenant.admin.id, tenantId);
  });
  after(() => gw.close());

  describe('strict validation', () => {
    it('a number or boolean where a string belongs is 400 naming the field, never coerced', async () => {
      for (const [body, field] of [
        [{ name: 42 }, 'name'],
        [{ name: true }, 'name'],
        [{ name: 'ok', description: 7 }, 'description'],
        [{ name: 'ok', description: false }, 'description'],
        [{ name: ['a'] }, 'name'],
        [{ name: { a: 1 } }, 'name'],
        [{}, 'name'],
      ] as const) {
        const response = await gw.request('POST', '/api/os/workspaces', { apiKey, json: body });
        assertProblem(response, 400, 'VALIDATION_FAILED');
        assert.ok(
          response.body.errors.some((e: { field: string }) => e.field === field),
          `${JSON.stringify(body)}: ${JSON.stringify(response.body.errors)}`,
        );
        assert.match(response.body.detail, new RegExp(field));
      }
      assert.equal(await workspaceCount(), 0, 'nothing was created from invalid input');
    });

    it('the same on PATCH, where null is allowed for description but not for name', async () => {
      const created = await gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'patchable' } });
      for (const [body, field] of [
        [{ name: 1 }, 'name'],
        [{ name: null }, 'name'],
        [{ description: 0 }, 'description'],
      ] as const) {
        const response = await gw.request('PATCH', `/api/os/workspaces/${created.body.id}`, { token: adminToken, json: body });
        assertProblem(response, 400, 'VALIDATION_FAILED');
        assert.equal(response.body.errors[0].field, field, JSON.stringify(body));
      }
      const unchanged = await gw.request('GET', `/api/os/workspaces/${created.body.id}`, { apiKey });
      assert.equal(unchanged.body.name, 'patchable');
      await gw.request('DELETE', `/api/os/workspaces/${created.body.id}`, { apiKey });
    });

    it('other routes are just as strict: login, API-key creation', async () => {
      for (const [path, options, field] of [
        ['/api/auth/login', { json: { username: 12345, password: 'long-enough-password' } }, 'username'],
        ['/api/auth/login', { json: { username: 'someone', password: true } }, 'password'],
        [`/api/auth/tenants/${tenantId}/api-keys`, { token: adminToken, json: { name: 'k', scopes: 'llm:read' } }, 'scopes'],
        [`/api/auth/tenants/${tenantId}/api-keys`, { token: adminToken, json: { name: 'k', scopes: [1] } }, 'scopes[0]'],
        [`/api/auth/tenants/${tenantId}/api-keys`, { token: adminToken, json: { name: false } }, 'name'],
      ] as const) {
        const response = await gw.request('POST', path, options);
        assertProblem(response, 400, 'VALIDATION_FAILED');
        assert.ok(
          response.body.errors.some((e: { field: string }) => e.field === field),
          `${path} ${JSON.stringify(response.body.errors)}`,
        );
      }
      const keys = await gw.request('GET', `/api/auth/tenants/${tenantId}/api-keys`, { token: adminToken });
      assert.equal(keys.body.data.length, 1, 'no key was created from invalid input');
    });

    it('a body that is not an object is 400', async () => {
      for (const text of ['[]', '"name"', '42', 'null', 'true']) {
        const response = await gw.request('POST', '/api/os/workspaces', {
          apiKey,
          body: text,
          headers: { 'content-type': 'application/json' },
        });
        assertProblem(response, 400, 'VALIDATION_FAILED');
      }
    });

    it('unknown fields are ignored: not stored, not echoed, and never able to pick the tenant', async () => {
      const other = await seedTenant(gw, 'other');
      const response = await gw.request('POST', '/api/os/workspaces', {
        apiKey,
        json: { name: 'extra', unknownField: 1, tenantId: other.tenantId, tenant_id: other.tenantId, id: 'ws_01ARZ3NDEKTSV4RRFFQ69G5FAV' },
      });
      assert.equal(response.status, 201);
      assert.deepEqual(Object.keys(response.body).sort(), ['createdAt', 'description', 'id', 'name', 'updatedAt']);
      assert.notEqual(response.body.id, 'ws_01ARZ3NDEKTSV4RRFFQ69G5FAV');
      const [row] = await gw.ctx.db.query<{ tenant_id: string }>('SELECT tenant_id FROM workspaces WHERE id = $1', [response.body.id]);
      assert.equal(row?.tenant_id, tenantId);
      await gw.request('DELETE', `/api/os/workspaces/${response.body.id}`, { apiKey });
    });
  });

  describe('malformed bodies', () => {
    it('malformed JSON is a 400 problem that does not echo the input', async () => {
      for (const text of ['{"name":', '{name: "x"}', "{'name':'x'}", '{"name":"x"}}', '\u0000']) {
        const response = await gw.request('POST', '/api/os/workspaces', {
          apiKey,
          body: text,
          headers: { 'content-type': 'application/json' },
        });
        assertProblem(response, 400, 'BAD_REQUEST');
        assert.equal(response.body.detail, 'The request body is not valid JSON.');
      }
      assert.equal(await workspaceCount(), 0);
    });

    it('prototype poisoning is refused, not merged', async () => {
      const response = await gw.request('POST', '/api/os/workspaces', {
        apiKey,
        body: '{"name":"x","__proto__":{"admin":true}}',
        headers: { 'content-type': 'application/json' },
      });
      assert.ok(response.status === 400 || response.status === 201, `status ${response.status}`);
      assert.equal(({} as Record<string, unknown>).admin, undefined);
      if (response.status === 201) await gw.request('DELETE', `/api/os/workspaces/${response.body.id}`, { apiKey });
    });

    it('a media type the route does not take is 415', async () => {
      const response = await gw.request('POST', '/api/os/workspaces', {
        apiKey,
        body: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assertProblem(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });
  });

  describe('body limit', () => {
    it('answers 413 before any handler runs, by Content-Length', async () => {
      await gw.request('GET', '/api/os/workspaces', { apiKey }); // the key is now cached: the edge needs no query
      const queries = gw.ctx.db.stats.queries;
      const response = await gw.request('POST', '/api/os/workspaces', {
        apiKey,
        json: { name: 'big', description: 'x'.repeat(BODY_LIMIT) },
      });
      assertProblem(response, 413, 'PAYLOAD_TOO_LARGE');
      assert.equal(gw.ctx.db.stats.queries, queries, 'no query ran: the handler never started');
      assert.equal(await workspaceCount(), 0);
    });

    it('answers 413 for a chunked body that grows past the limit', async () => {
      const queries = gw.ctx.db.stats.queries;
      const chunk = Buffer.from('x'.repeat(512));
      const response = await rawRequest(gw, 'POST', '/api/os/workspaces', {
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        chunks: [Buffer.from('{"name":"big","description":"'), ...Array.from({ length: 8 }, () => chunk), Buffer.from('"}')],
      });
      assertProblem(response, 413, 'PAYLOAD_TOO_LARGE');
      assert.equal(gw.ctx.db.stats.queries, queries, 'no query ran: the handler never started');
      assert.equal(await workspaceCount(), 0);
    });

    it('accepts a body just under the limit', async () => {
      const json = { name: 'fits', description: '' };
      json.description = 'y'.repeat(Math.min(2000, BODY_LIMIT - JSON.stringify(json).length));
      const response = await gw.request('POST', '/api/os/workspaces', { apiKey, json });
      assert.equal(response.status, 201);
      await gw.request('DELETE', `/api/os/workspaces/${response.body.id}`, { apiKey });
    });

    it('checks the credential before reading a large body', async () => {
      const response = await gw.request('POST', '/api/os/workspaces', { json: { name: 'x'.repeat(BODY_LIMIT * 4) } });
      assertProblem(response, 401, 'UNAUTHENTICATED');
    });
  });

  describe('slow clients', () => {
    it('a client that sends headers but never the body is cut off by the request timeout', async () => {
      const queries = gw.ctx.db.stats.queries;
      const head =
        'POST /api/os/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `X-API-Key: ${apiKey}\r\nContent-Length: 100\r\n\r\n{"name":`;
      // The 408 REQUEST_TIMEOUT below says which timeout closed it; the wait is only a deadline against a hang.
      const { received, closed } = await silentClient(gw, head, SILENT_CLIENT_DEADLINE_MS);
      assert.ok(closed, 'the server closed the connection');
      const response = parseRawResponse(received);
      assert.equal(response.status, 408, received);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.match(response.headers['x-correlation-id'] ?? '', UUID);
      assert.equal(JSON.parse(response.body).code, 'REQUEST_TIMEOUT');
      assert.equal(gw.ctx.db.stats.queries, queries, 'the handler never ran');
    });

    it('a client that never finishes its headers is cut off by the headers timeout', async () => {
      const { received, closed } = await silentClient(gw, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ', SILENT_CLIENT_DEADLINE_MS);
      assert.ok(closed, 'the server closed the connection');
      const response = parseRawResponse(received);
      assert.equal(response.status, 408, received);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      const body = JSON.parse(response.body);
      assert.equal(body.correlationId, response.headers['x-correlation-id']);
      assert.match(body.correlationId, UUID);
    });

    it('headers over the size limit get a 431 problem with a correlation id', async () => {
      const { received, closed } = await silentClient(
        gw,
        `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`,
        SILENT_CLIENT_DEADLINE_MS,
      );
      assert.ok(closed, 'the server closed the connection');
      const response = parseRawResponse(received);
      assert.equal(response.status, 431, received.slice(0, 200));
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(JSON.parse(response.body).correlationId, response.headers['x-correlation-id']);
      assert.equal(JSON.parse(response.body).code, 'HEADERS_TOO_LARGE', 'the code of the one table, not a 400 code');
    });

    it('a request that is not valid HTTP gets a 400 problem, not a hang', async () => {
      const { received, closed } = await silentClient(gw, 'GET /health HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n', SILENT_CLIENT_DEADLINE_MS);
      assert.ok(closed, 'the server closed the connection');
      const response = parseRawResponse(received);
      assert.equal(response.status, 400, received.slice(0, 200));
      assert.equal(JSON.parse(response.body).code, 'BAD_REQUEST');
      assert.match(response.headers['x-correlation-id'] ?? '', UUID);
    });

    it('over HTTPS (the default listener) the same timeouts cut a silent client off', async () => {
      const certDir = mkdtempSync(path.join(gw.dataDir, 'tls-'));
      const material = await loadTls({
        ...gw.ctx.config,
        dataDir: certDir,
        tls: { enabled: true, certFile: undefined, keyFile: undefined },
      });
      assert.ok(material);
      const app = await buildApp(gw.ctx, {
        https: { key: material.key, cert: material.cert },
        logStream: new Writable({ write: (_c, _e, done) => done() }),
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      try {
        const port = (app.server.address() as { port: number }).port;
        const result = await new Promise<{ received: string; closed: boolean }>((resolve) => {
          let received = '';
          const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () =>
            socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n'),
          );
          const giveUp = setTimeout(() => {
            socket.destroy();
            resolve({ received, closed: false });
          }, SILENT_CLIENT_DEADLINE_MS);
          socket.on('data', (chunk) => (received += chunk.toString('utf8')));
          socket.on('error', () => undefined);
          socket.on('close', () => {
            clearTimeout(giveUp);
            resolve({ received, closed: true });
          });
        });
        assert.ok(result.closed, 'the server closed the TLS connection');
        assert.equal(parseRawResponse(result.received).status, 408, result.received);
      } finally {
        await app.close();
      }
    });

    it('a request that arrives in time is answered normally', async () => {
      const response = await rawRequest(gw, 'GET', '/api/os/workspaces', { headers: { 'x-api-key': apiKey } });
      assert.equal(response.status, 200);
    });
  });

  describe('server errors', () => {
    it('a 5xx never leaks internals; the log keeps them for operators under the same correlation id', async () => {
      const db = gw.ctx.db as { query: typeof gw.ctx.db.query };
      const original = db.query;
      const secret = 'relation "internal_secret_table" does not exist at /srv/gateway/src/areas/os/workspaces/repository.ts:17';
      db.query = async () => {
        throw new Error(secret);
      };
      try {
        const response = await gw.request('GET', '/api/os/workspaces', { token: adminToken, headers: { 'x-correlation-id': 'boom-1' } });
        assertProblem(response, 500, 'INTERNAL');
        assert.equal(response.body.correlationId, 'boom-1');
        for (const leak of ['internal_secret_table', 'repository.ts', '/srv/', 'stack', 'Error:']) {
          assert.ok(!response.text.includes(leak), `response leaks ${leak}`);
        }
        const logged = gw
          .logs()
          .split('\n')
          .filter((l) => l.includes('internal_secret_table'));
        assert.ok(logged.length > 0 && logged.every((l) => JSON.parse(l).correlationId === 'boom-1'), 'logged with the correlation id');

        // /health stays 200 and reports the database down instead of failing.
        const health = await gw.request('GET', '/health');
        assert.equal(health.status, 200);
        assert.equal(health.body.status, 'degraded');
        assert.equal(health.body.database.status, 'down');
      } finally {
        db.query = original;
      }
      assert.equal((await gw.request('GET', '/health')).body.status, 'ok');
    });
  });
});
