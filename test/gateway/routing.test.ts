// Route spelling at the edge: the capitalized historical duplicates answer like the
// lowercase routes (ids keep their case), and no odd spelling of a protected path
// ever reaches a handler without a credential. Paths are sent raw: fetch would
// normalise `..`, `./` and `//` before they reach the server.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startGateway, seedTenant, type TestGateway } from '../helpers/gateway.js';
import { createApiKey, parseRawResponse, rawRequest, tokenFor } from './support.js';

describe('edge: legacy casing and odd spellings', () => {
  let gw: TestGateway;
  let apiKey: string;
  let adminToken: string;
  let workspaceId: string;

  before(async () => {
    gw = await startGateway();
    const tenant = await seedTenant(gw, 'routing');
    apiKey = (await createApiKey(gw, tenant.tenantId)).key;
    adminToken = await tokenFor(gw, tenant.admin.id, tenant.tenantId);
    const created = await gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'Legacy' } });
    assert.equal(created.status, 201);
    workspaceId = created.body.id;
  });
  after(() => gw.close());

  describe('legacy casing', () => {
    it('capitalized area and resource literals answer like the lowercase routes', async () => {
      const expected = await rawRequest(gw, 'GET', '/api/os/workspaces', { headers: { 'x-api-key': apiKey } });
      assert.equal(expected.status, 200);
      assert.equal(expected.body.data.length, 1);
      for (const path of ['/api/OS/Workspaces', '/api/Os/workspaces', '/api/os/WORKSPACES', '/Api/OS/Workspaces']) {
        const response = await rawRequest(gw, 'GET', path, { headers: { 'x-api-key': apiKey } });
        assert.equal(response.status, 200, path);
        assert.deepEqual(response.body, expected.body, path);
        // Without a credential, the legacy spelling is just as protected.
        const denied = await rawRequest(gw, 'GET', path);
        assert.equal(denied.status, 401, `${path} without a credential`);
      }
    });

    it('keeps the case of ids in the path', async () => {
      const response = await rawRequest(gw, 'GET', `/api/OS/Workspaces/${workspaceId}`, { headers: { 'x-api-key': apiKey } });
      assert.equal(response.status, 200);
      assert.equal(response.body.id, workspaceId);
      const lowered = await rawRequest(gw, 'GET', `/api/OS/Workspaces/${workspaceId.toLowerCase()}`, { headers: { 'x-api-key': apiKey } });
      assert.equal(lowered.status, 404, 'an id is an id: lowercasing it names another (missing) workspace');
      const patched = await rawRequest(gw, 'PATCH', `/api/Os/Workspaces/${workspaceId}`, {
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ description: 'via legacy path' }),
      });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.description, 'via legacy path');
    });

    it('keeps query strings untouched', async () => {
      const response = await rawRequest(gw, 'GET', '/api/OS/Workspaces?Cursor=AbC', { headers: { 'x-api-key': apiKey } });
      assert.equal(response.status, 200);
    });

    it('the removed endpoint answers 410 in any casing', async () => {
      for (const path of ['/api/LLM/v1/chat/stream', '/api/llm/V1/Chat/Stream']) {
        const response = await rawRequest(gw, 'POST', path);
        assert.equal(response.status, 410, path);
      }
    });

    it('the auth area answers its capitalized duplicates like the lowercase routes', async () => {
      // Compare the two spellings route by route: same status and same error code.
      const routes: Array<[string, string, unknown]> = [
        ['POST', 'login', { username: 'nobody-here', password: 'wrong-password' }],
        ['POST', 'refresh', { refreshToken: 'not-a-refresh-token' }],
        ['POST', 'verify-2fa', { twoFactorToken: 'nope', code: '000000' }],
        ['GET', 'me', undefined],
      ];
      for (const [method, route, body] of routes) {
        const send = (path: string) =>
          rawRequest(
            gw,
            method,
            path,
            body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
          );
        const lower = await send(`/api/auth/${route}`);
        const legacy = await send(`/api/Auth/${route.replace(/^./, (c) => c.toUpperCase())}`);
        assert.notEqual(lower.status, 404, `/api/auth/${route} exists`);
        assert.equal(legacy.status, lower.status, `/api/Auth/${route}`);
        assert.equal(legacy.body?.code, lower.body?.code, `/api/Auth/${route}`);
      }
    });
  });

  describe('odd spellings never bypass authentication', () => {
    const ODD = [
      '//api/os/workspaces',
      '///api//os//workspaces',
      '/api/os//workspaces',
      '/api/os/./workspaces',
      '/api/./os/workspaces',
      '/api/auth/../os/workspaces',
      '/api/os/workspaces/../workspaces',
      '/api/os/%2e%2e/os/workspaces',
      '/api/auth/%2e%2e/os/workspaces',
      '/api/auth/%2E%2E/os/workspaces',
      '/api/os/%2e/workspaces',
      '/api/os%2fworkspaces',
      '/api/os%2Fworkspaces',
      '/api/os/workspaces/',
      '/api/os/workspaces?x',
      '/api/os/workspaces?',
      '/api/os/workspaces#x',
      '/api/os/workspaces;x',
      '/api/os/workspaces%00',
      '/api/os/workspaces%20',
      '/api/os/work%73paces',
      '/API/os/workspaces',
      '/API/OS/WORKSPACES',
      '//API/OS/Workspaces',
      '/health/../api/os/workspaces',
      '/api/llm/v1/chat/stream/../../../../os/workspaces',
      '/api/llm/v1/chat/stream/..%2f..%2f..%2f..%2fos/workspaces',
      `/api/os/workspaces/${'%2e%2e/'.repeat(3)}workspaces`,
    ];

    it('without a credential: 401 or 404, never a handler', async () => {
      const before = await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM workspaces');
      for (const path of ODD) {
        for (const method of ['GET', 'HEAD', 'POST', 'DELETE']) {
          const response = await rawRequest(
            gw,
            method,
            path,
            method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{"name":"bypass"}' } : {},
          );
          assert.ok(response.status === 401 || response.status === 404, `${method} ${path} → ${response.status}`);
          if (method !== 'HEAD') assert.ok(!response.text.includes(workspaceId), `${method} ${path} leaked a workspace`);
        }
      }
      const after = await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM workspaces');
      assert.deepEqual(after, before, 'no workspace was created through an odd spelling');
    });

    it('with a garbage credential: 401 or 404, never a handler', async () => {
      for (const path of ODD) {
        for (const headers of [{ 'x-api-key': 'rdk_garbage' }, { authorization: 'Bearer garbage.jwt.here' }] as Record<string, string>[]) {
          const response = await rawRequest(gw, 'GET', path, { headers });
          assert.ok(response.status === 401 || response.status === 404, `${path} → ${response.status}`);
        }
      }
    });

    it('the spellings that do route are the protected route itself', async () => {
      // Duplicate slashes, a bare query and legacy casing reach the route; they must behave exactly like it.
      for (const path of ['//api/os/workspaces', '/api/os//workspaces', '/api/os/workspaces?x', '/API/os/workspaces']) {
        assert.equal((await rawRequest(gw, 'GET', path)).status, 401, path);
        assert.equal((await rawRequest(gw, 'GET', path, { headers: { 'x-api-key': apiKey } })).status, 200, path);
      }
    });

    it('broken percent-encoding is a 400 or 404 problem with the correlation id, never a 500 or a handler', async () => {
      for (const path of [
        '/api/os/workspaces/%E0%A4%A',
        '/api/os/workspaces/%',
        '/api/os/%zz/workspaces',
        '/api/os/workspaces?x=%E0%A4%A',
      ]) {
        for (const headers of [{}, { 'x-api-key': apiKey }] as Record<string, string>[]) {
          const response = await rawRequest(gw, 'GET', path, { headers });
          if (path.includes('?') && headers['x-api-key']) {
            assert.ok(response.status === 200 || response.status === 400, `${path} → ${response.status}`);
          } else {
            assert.ok([400, 401, 404].includes(response.status), `${path} → ${response.status}`);
          }
          if (response.status !== 200) assert.equal(response.body.correlationId, response.headers['x-correlation-id'], path);
        }
      }
    });

    it('an absolute-form request target is no way around authentication either', async () => {
      const { port } = new URL(gw.url);
      for (const target of [`http://127.0.0.1:${port}/api/os/workspaces`, `http://evil.example/api/os/workspaces`]) {
        const raw = await new Promise<string>((resolve, reject) => {
          const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () =>
            socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
          );
          let text = '';
          socket.setTimeout(5000, () => socket.destroy(new Error('no answer')));
          socket.on('data', (c) => (text += c.toString('utf8')));
          socket.on('end', () => resolve(text));
          socket.on('error', reject);
        });
        const { status } = parseRawResponse(raw);
        assert.ok(status === 400 || status === 401 || status === 404, `${target} → ${status}`);
      }
    });

    it('a HEAD request Node cannot parse gets its 400 without a body (the fuzz found one: the client choked on the body)', async () => {
      const { port } = new URL(gw.url);
      for (const method of ['HEAD', 'GET']) {
        const raw = await new Promise<string>((resolve, reject) => {
          const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () =>
            socket.write(`${method} %2Fhealth HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
          );
          let text = '';
          socket.setTimeout(5000, () => socket.destroy(new Error('no answer')));
          socket.on('data', (c) => (text += c.toString('utf8')));
          socket.on('close', () => resolve(text));
          socket.on('error', reject);
        });
        const [head, body] = raw.split('\r\n\r\n');
        assert.match(head!, /^HTTP\/1\.1 400 /, method);
        assert.match(head!, /content-length: [1-9]\d*/i, method);
        if (method === 'HEAD') assert.equal(body, '', 'no body after the headers');
        else assert.equal(JSON.parse(body!).status, 400);
      }
    });
  });
});
