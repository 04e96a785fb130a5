// Credentials at the edge: what a client can present, that the internal token
// cannot be forged or smuggled in from outside, and that an API key never reaches
// a log line or an error body, whatever path the request takes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startGateway, seedTenant, type TestGateway } from '../helpers/gateway.js';
import { createApiKey, rawRequest, tokenFor } from './support.js';
import { mintInternalToken } from '../../src/platform/internal-token.js';
import type { Principal } from '../../src/platform/identity.js';

describe('edge: credentials', () => {
  let gw: TestGateway;
  let tenantA: string;
  let tenantB: string;
  let keyA: string;
  let adminA: string;
  let workspaceB: string;

  before(async () => {
    gw = await startGateway({ GATEWAY_BODY_LIMIT_BYTES: '2048', GATEWAY_LOG_LEVEL: 'trace' });
    const a = await seedTenant(gw, 'cred-a');
    const b = await seedTenant(gw, 'cred-b');
    tenantA = a.tenantId;
    tenantB = b.tenantId;
    keyA = (await createApiKey(gw, tenantA)).key;
    adminA = await tokenFor(gw, a.admin.id, tenantA);
    const keyB = (await createApiKey(gw, tenantB)).key;
    workspaceB = (await gw.request('POST', '/api/os/workspaces', { apiKey: keyB, json: { name: 'B only' } })).body.id;
    assert.match(workspaceB, /^ws_/);
  });
  after(() => gw.close());

  it('accepts an API key as X-API-Key or as Authorization: Bearer, in any scheme casing', async () => {
    const expected = await gw.request('GET', '/api/os/workspaces', { apiKey: keyA });
    assert.equal(expected.status, 200);
    for (const headers of [
      { authorization: `Bearer ${keyA}` },
      { authorization: `bearer ${keyA}` },
      { authorization: `Bearer   ${keyA}  ` },
      { 'x-api-key': ` ${keyA} ` },
    ] as Record<string, string>[]) {
      const response = await gw.request('GET', '/api/os/workspaces', { headers });
      assert.equal(response.status, 200, JSON.stringify(Object.keys(headers)));
      assert.deepEqual(response.body, expected.body);
    }
  });

  it('gives every unusable credential presentation the same 401 body', async () => {
    const presentations: Array<Record<string, string>> = [
      {},
      { 'x-api-key': '' },
      { 'x-api-key': 'rdk_' },
      { 'x-api-key': keyA.slice(0, -1) + (keyA.endsWith('A') ? 'B' : 'A') },
      { 'x-api-key': `rdk_${randomBytes(36).toString('base64url')}` },
      { authorization: keyA }, // no scheme
      { authorization: `Basic ${Buffer.from(`user:${keyA}`).toString('base64')}` },
      { authorization: 'Bearer' },
      { authorization: `Bearer ${keyA} extra` },
      { authorization: 'Bearer not.a.jwt' },
    ];
    const bodies = new Set<string>();
    for (const headers of presentations) {
      const response = await gw.request('GET', '/api/os/workspaces', { headers });
      assert.equal(response.status, 401, JSON.stringify(headers).slice(0, 60));
      const { correlationId, ...rest } = response.body;
      assert.equal(correlationId, response.headers.get('x-correlation-id'));
      bodies.add(JSON.stringify(rest));
      assert.equal(
        response.headers.get('www-authenticate'),
        (await gw.request('GET', '/api/os/workspaces')).headers.get('www-authenticate'),
      );
    }
    assert.equal(bodies.size, 1, [...bodies].join('\n'));
  });

  describe('the internal token cannot come from outside', () => {
    const forgedPrincipal = (): Principal => ({
      tenantId: tenantB,
      kind: 'user',
      subject: 'usr_forged',
      roles: ['platform_admin'],
      scopes: [],
    });

    it('a correctly signed internal token is not a credential', async () => {
      // Even one minted with the real key (as if it leaked from inside) is refused at the edge.
      const token = mintInternalToken(gw.ctx.secrets.internalTokenKey, forgedPrincipal(), 'forged');
      for (const headers of [
        { authorization: `Bearer ${token}` },
        { 'x-api-key': token },
        { 'x-internal-token': token },
        { 'internal-token': token },
        { internaltoken: token },
        { cookie: `internalToken=${token}` },
      ] as Record<string, string>[]) {
        const response = await gw.request('GET', '/api/os/workspaces', { headers });
        assert.equal(response.status, 401, Object.keys(headers)[0]);
      }
    });

    it('does not let a smuggled token or header change whose data a valid key sees', async () => {
      const token = mintInternalToken(gw.ctx.secrets.internalTokenKey, forgedPrincipal(), 'forged');
      const response = await gw.request('GET', `/api/os/workspaces/${workspaceB}`, {
        apiKey: keyA,
        headers: { 'x-internal-token': token, 'x-tenant-id': tenantB, cookie: `internalToken=${token}` },
      });
      assert.equal(response.status, 404, "tenant A's key never sees tenant B's workspace");
      const list = await gw.request('GET', `/api/os/workspaces?internalToken=${encodeURIComponent(token)}&tenantId=${tenantB}`, {
        apiKey: keyA,
      });
      assert.equal(list.status, 200);
      assert.ok(!list.text.includes(workspaceB));
    });

    it('a body field cannot set the principal either', async () => {
      const response = await gw.request('POST', '/api/os/workspaces', {
        apiKey: keyA,
        json: {
          name: 'mine',
          internalToken: mintInternalToken(gw.ctx.secrets.internalTokenKey, forgedPrincipal(), 'x'),
          principal: forgedPrincipal(),
        },
      });
      assert.equal(response.status, 201);
      const [row] = await gw.ctx.db.query<{ tenant_id: string }>('SELECT tenant_id FROM workspaces WHERE id = $1', [response.body.id]);
      assert.equal(row?.tenant_id, tenantA);
    });
  });

  it('the cached key path does no database work at the edge', async () => {
    await gw.request('GET', '/api/os/workspaces', { apiKey: keyA }); // warm the cache
    const before = gw.ctx.db.stats.queries;
    const rounds = 20;
    for (let i = 0; i < rounds; i++) assert.equal((await gw.request('GET', '/api/os/workspaces', { apiKey: keyA })).status, 200);
    // One query per request: the handler's own list. Resolving the key adds none.
    assert.equal(gw.ctx.db.stats.queries - before, rounds);
    // The 410 route needs no database at all, with a key or without.
    const mark = gw.ctx.db.stats.queries;
    for (let i = 0; i < 5; i++) await gw.request('POST', '/api/llm/v1/chat/stream', { apiKey: keyA });
    assert.equal(gw.ctx.db.stats.queries, mark);
  });

  it('never writes an API key or token to a log line or an error body, on any path', async () => {
    const fresh = (await createApiKey(gw, tenantA, 'log-probe')).key;
    const unknown = `rdk_${randomBytes(36).toString('base64url')}`;
    const secrets = [fresh, unknown, adminA];
    const texts: string[] = [];
    const send = async (method: string, path: string, options: Parameters<TestGateway['request']>[2] = {}) => {
      const response = await gw.request(method, path, options);
      texts.push(response.text);
      return response;
    };
    for (const key of [fresh, unknown]) {
      await send('GET', '/api/os/workspaces', { apiKey: key }); // 200 / 401
      await send('GET', '/api/os/workspaces', { headers: { authorization: `Bearer ${key}` } });
      await send('GET', `/api/os/workspaces?api_key=${key}&key=${key}`, { apiKey: key }); // in the query string too
      await send('GET', '/no/such/route', { apiKey: key }); // 404
      await send('POST', '/api/os/workspaces', { apiKey: key, json: { name: 42, apiKey: key } }); // 400
      await send('POST', '/api/os/workspaces', { apiKey: key, body: `{"key":"${key}"`, headers: { 'content-type': 'application/json' } }); // bad JSON
      await send('POST', '/api/os/workspaces', { apiKey: key, json: { name: 'x'.repeat(4096), key } }); // 413
      await send('POST', '/api/llm/v1/chat/stream', { apiKey: key }); // 410
      await send('GET', '/health', { apiKey: key });
      await send('OPTIONS', '/api/os/workspaces', {
        apiKey: key,
        headers: { origin: 'https://x.example', 'access-control-request-method': 'GET' },
      });
    }
    await send('GET', '/api/os/workspaces', { token: adminA, headers: { cookie: `service_refresh_token=${fresh}` } });
    await rawRequest(gw, 'GET', '/api/OS//Workspaces', { headers: { 'x-api-key': fresh } });

    // A 500 with a key on the request: the error is logged, the key is not.
    const db = gw.ctx.db as { query: typeof gw.ctx.db.query };
    const original = db.query;
    db.query = async () => {
      throw new Error('database exploded');
    };
    try {
      const failed = await send('GET', '/api/os/workspaces', { apiKey: fresh });
      assert.equal(failed.status, 500);
    } finally {
      db.query = original;
    }

    const logs = gw.logs();
    assert.ok(logs.includes('database exploded'), 'the log captured the requests (trace level)');
    assert.ok(logs.includes('/api/os/workspaces'), 'the log captured the requests');
    for (const secret of secrets) {
      assert.ok(!logs.includes(secret), 'a credential reached the log');
      assert.ok(!logs.includes(secret.slice(4, 24)), 'part of a credential reached the log');
      for (const text of texts) assert.ok(!text.includes(secret), 'a credential was echoed in a response body');
    }
  });
});
