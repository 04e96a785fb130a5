// /api/llm/v1/mcp/servers: CRUD, who sees and changes what, secrets masked and
// encrypted at rest, unique names, and the node deny lists on every URL (on save, and
// at connection for redirects). Loopback mocks are registered by the platform admin:
// the default tenant deny list keeps a tenant admin off loopback.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { createApiKey } from '../gateway/support.js';
import { setApiKeyStatus } from '../../src/areas/auth/api-keys/service.js';
import type { Principal } from '../../src/platform/identity.js';
import { mcpRequests, startMockUpstream, type MockUpstream } from './mcp-registry-support.js';

const TOKEN = 'upstream-token-5d41402abc4b2a76';
const CLIENT_SECRET = 'client-secret-9e107d9d372bb682';

describe('MCP servers API', () => {
  let gw: TestGateway;
  let upstream: MockUpstream;
  let world: World;
  let revokedKeyA: string;
  const texts: string[] = []; // every response body, searched for the secrets at the end

  const call = async (method: string, path: string, options: Parameters<TestGateway['request']>[2] = {}) => {
    const response = await gw.request(method, `/api/llm/v1/mcp/servers${path}`, options);
    texts.push(response.text);
    return response;
  };

  before(async () => {
    upstream = await startMockUpstream();
    gw = await startGateway();
    world = await seedWorld(gw, 'mcp-servers');
    const revoked = await createApiKey(gw, world.a.tenantId, 'revoked');
    const admin: Principal = { tenantId: world.a.tenantId, kind: 'user', subject: world.a.admin.id, roles: ['admin'], scopes: [] };
    await setApiKeyStatus(gw.ctx, admin, world.a.tenantId, revoked.id, 'revoked');
    revokedKeyA = revoked.key;
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it('creates a server for a tenant, lists and pins its tools at once, and masks and encrypts its secret', async () => {
    const created = await call('POST', '', {
      token: world.platform.admin.token,
      json: { name: 'github', url: upstream.url, auth: { type: 'bearer', token: TOKEN }, tenantIds: [world.a.tenantId] },
    });
    assert.equal(created.status, 201, created.text);
    const server = created.body;
    assert.match(server.id, /^mcps_[0-9A-Z]{26}$/);
    assert.deepEqual(server.auth, { type: 'bearer', token: `********${TOKEN.slice(-4)}` });
    assert.equal(server.timeoutSeconds, 60);
    assert.deepEqual(server.tenantIds, [world.a.tenantId]);
    assert.equal(server.status.state, 'ok');
    assert.deepEqual(server.status.tools, ['echo', 'hang', 'progress'], 'every page of the listing');
    assert.equal(server.pinnedTools.length, 3);
    assert.match(server.pinnedTools[0].sha256, /^[0-9a-f]{64}$/);
    assert.equal(server.pendingChanges, null);
    assert.ok(
      mcpRequests(upstream).every((r) => r.headers.authorization === `Bearer ${TOKEN}`),
      'the configured credential on every request',
    );

    const [row] = await gw.ctx.db.query<{ auth: { token: string } }>('SELECT auth FROM mcp_servers WHERE id = $1', [server.id]);
    assert.ok(row && !JSON.stringify(row.auth).includes(TOKEN), 'never stored as given');
    assert.match(row.auth.token, /^v1\./, 'AES-GCM ciphertext, like TOTP secrets');

    const read = await call('GET', `/${server.id}`, { token: world.a.admin.token });
    assert.equal(read.status, 200);
    assert.equal(read.body.editable, true, "a server for exactly one tenant is that tenant's admin's to manage");
    assert.deepEqual(read.body.auth, server.auth);
    const list = await call('GET', '', { token: world.a.admin.token });
    assert.deepEqual(
      list.body.data.map((s: { id: string }) => s.id),
      [server.id],
    );

    const renamed = await call('PATCH', `/${server.id}`, { token: world.a.admin.token, json: { name: 'gh', timeoutSeconds: 5 } });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.name, 'gh');
    assert.equal(renamed.body.timeoutSeconds, 5);
    assert.deepEqual(renamed.body.auth, server.auth, 'a PATCH changes only what it names');

    assert.equal((await call('DELETE', `/${server.id}`, { token: world.a.admin.token })).status, 204);
    assert.equal((await call('GET', `/${server.id}`, { token: world.a.admin.token })).status, 404);
    assert.equal((await call('DELETE', `/${server.id}`, { token: world.a.admin.token })).status, 404);
  });

  it('masks every kind of secret, and stores header values and client secrets encrypted', async () => {
    const headers = await call('POST', '', {
      token: world.platform.admin.token,
      json: {
        name: 'headers',
        url: upstream.url,
        auth: { type: 'headers', headers: { 'X-Upstream-Key': TOKEN } },
        tenantIds: [world.a.tenantId],
      },
    });
    assert.equal(headers.status, 201, headers.text);
    assert.deepEqual(headers.body.auth, { type: 'headers', headers: { 'X-Upstream-Key': `********${TOKEN.slice(-4)}` } });
    assert.equal(mcpRequests(upstream).at(-1)?.headers['x-upstream-key'], TOKEN);

    const oauth = await call('POST', '', {
      token: world.platform.admin.token,
      json: {
        name: 'oauth',
        url: upstream.url,
        auth: {
          type: 'oauth2_client_credentials',
          tokenUrl: upstream.tokenUrl,
          clientId: 'gateway',
          clientSecret: CLIENT_SECRET,
          scope: 'tools',
        },
        tenantIds: [world.a.tenantId],
      },
    });
    assert.equal(oauth.status, 201, oauth.text);
    assert.deepEqual(oauth.body.auth, {
      type: 'oauth2_client_credentials',
      tokenUrl: upstream.tokenUrl,
      clientId: 'gateway',
      clientSecret: `********${CLIENT_SECRET.slice(-4)}`,
      scope: 'tools',
    });
    assert.equal(oauth.body.status.state, 'ok', oauth.body.status.error);
    const tokenRequest = upstream.requests.find((r) => r.path === '/token')!;
    assert.equal(tokenRequest.headers.authorization, `Basic ${Buffer.from(`gateway:${CLIENT_SECRET}`).toString('base64')}`);
    assert.match(tokenRequest.body, /grant_type=client_credentials/);
    assert.match(tokenRequest.body, /scope=tools/);
    assert.equal(mcpRequests(upstream).at(-1)?.headers.authorization, 'Bearer tok-1', 'the fetched token, not the client secret');

    const rows = await gw.ctx.db.query<{ auth: unknown }>('SELECT auth FROM mcp_servers WHERE id = ANY ($1)', [
      [headers.body.id, oauth.body.id],
    ]);
    for (const row of rows) {
      const text = JSON.stringify(row.auth);
      assert.ok(!text.includes(TOKEN) && !text.includes(CLIENT_SECRET), text);
    }
    for (const id of [headers.body.id, oauth.body.id]) await call('DELETE', `/${id}`, { token: world.platform.admin.token });
  });

  it("refuses every caller but admins, and answers 404 for another tenant's server", async () => {
    const created = await call('POST', '', {
      token: world.platform.admin.token,
      json: { name: 'private-a', url: upstream.url, tenantIds: [world.a.tenantId] },
    });
    const id = created.body.id;
    assert.equal((await call('GET', '')).status, 401);
    assert.equal((await call('GET', `/${id}`)).status, 401);
    assert.equal((await call('GET', '', { apiKey: revokedKeyA })).status, 401);
    assert.equal((await call('GET', '', { token: world.a.member.token })).status, 403);
    assert.equal((await call('POST', '', { token: world.a.member.token, json: { name: 'm', url: upstream.url } })).status, 403);
    assert.equal((await call('GET', '', { apiKey: world.a.key.key })).status, 403);
    assert.equal((await call('GET', `/${id}`, { apiKey: world.a.key.key })).status, 403);

    for (const [method, path] of [
      ['GET', `/${id}`],
      ['PATCH', `/${id}`],
      ['DELETE', `/${id}`],
      ['POST', `/${id}/approve`],
    ] as const) {
      const answer = await call(method, path, { token: world.b.admin.token, ...(method === 'PATCH' ? { json: { name: 'taken' } } : {}) });
      assert.equal(answer.status, 404, `${method} ${path}`);
    }
    assert.ok(!(await call('GET', '', { token: world.b.admin.token })).body.data.some((s: { id: string }) => s.id === id));
    assert.equal((await call('GET', '/mcps_nonsense', { token: world.a.admin.token })).status, 404);
    assert.equal((await call('GET', `/${id}`, { token: world.a.admin.token })).status, 200);
    await call('DELETE', `/${id}`, { token: world.platform.admin.token });
  });

  it('refuses malformed input with a 400 naming the field', async () => {
    const admin = world.platform.admin.token;
    const bad: unknown[] = [
      { name: 'Upper_Case', url: upstream.url },
      { name: 'x'.repeat(33), url: upstream.url },
      { name: 'ok', url: upstream.url, auth: { type: 'basic', user: 'u' } },
      { name: 'ok', url: upstream.url, auth: { type: 'bearer' } },
      { name: 'ok', url: upstream.url, timeoutSeconds: 0 },
      { name: 'ok', url: upstream.url, unknown: true },
      { name: 'ok', url: 'ftp://example.com/mcp' },
      { name: 'ok', url: 'not a url' },
      { name: 'ok', url: upstream.url, tenantIds: ['ten_unknown'] },
      { name: 'ok', url: upstream.url, auth: { type: 'headers', headers: { 'Mcp-Session-Id': 'x' } } },
      { name: 'ok', url: upstream.url, auth: { type: 'headers', headers: { 'X-Bad': 'a\r\nb' } } },
    ];
    for (const json of bad) {
      const answer = await call('POST', '', { token: admin, json });
      assert.equal(answer.status, 400, `${JSON.stringify(json)}: ${answer.text}`);
      assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    }
    assert.equal(
      (await call('POST', '', { token: admin, body: '{not json', headers: { 'content-type': 'application/json' } })).status,
      400,
    );
    const forB = await call('POST', '', {
      token: world.a.admin.token,
      json: { name: 'ok', url: 'https://example.com/mcp', tenantIds: [world.b.tenantId] },
    });
    assert.equal(forB.status, 403, "a tenant admin's servers are their tenant's only");
  });

  it('refuses the names of the static paths under /api/llm/v1/mcp/ (400 naming the field)', async () => {
    for (const name of ['servers', 'calls']) {
      for (const token of [world.platform.admin.token, world.a.admin.token]) {
        const answer = await call('POST', '', { token, json: { name, url: 'https://example.com/mcp' } });
        assert.equal(answer.status, 400, answer.text);
        assert.deepEqual(
          answer.body.errors.map((e: { field: string }) => e.field),
          ['name'],
        );
      }
    }
    const server = await call('POST', '', { token: world.platform.admin.token, json: { name: 'fine', url: upstream.url } });
    assert.equal(server.status, 201, server.text);
    const renamed = await call('PATCH', `/${server.body.id}`, { token: world.platform.admin.token, json: { name: 'calls' } });
    assert.equal(renamed.status, 400, renamed.text);
    assert.equal(renamed.body.errors[0].field, 'name');
    assert.equal((await call('GET', `/${server.body.id}`, { token: world.platform.admin.token })).body.name, 'fine');
    await call('DELETE', `/${server.body.id}`, { token: world.platform.admin.token });
  });

  it('keeps names unique among the servers a tenant sees, shared ones included', async () => {
    const admin = world.platform.admin.token;
    const a = await call('POST', '', { token: admin, json: { name: 'jira', url: upstream.url, tenantIds: [world.a.tenantId] } });
    assert.equal(a.status, 201);
    const again = await call('POST', '', { token: admin, json: { name: 'jira', url: upstream.url, tenantIds: [world.a.tenantId] } });
    assert.equal(again.status, 409);
    const forB = await call('POST', '', { token: admin, json: { name: 'jira', url: upstream.url, tenantIds: [world.b.tenantId] } });
    assert.equal(forB.status, 201, 'another tenant may use the name');
    const shared = await call('POST', '', { token: admin, json: { name: 'jira', url: upstream.url } });
    assert.equal(shared.status, 409, 'a shared server would collide in both tenants');
    const sharedOther = await call('POST', '', { token: admin, json: { name: 'wiki', url: upstream.url } });
    assert.equal(sharedOther.status, 201);
    const rename = await call('PATCH', `/${a.body.id}`, { token: world.a.admin.token, json: { name: 'wiki' } });
    assert.equal(rename.status, 409, "a tenant's server may not take a shared server's name");
    for (const id of [a.body.id, forB.body.id, sharedOther.body.id]) await call('DELETE', `/${id}`, { token: admin });
  });

  it('shows shared servers to tenant admins read-only, without url, auth, tenants or errors', async () => {
    const shared = await call('POST', '', {
      token: world.platform.admin.token,
      json: { name: 'shared', url: upstream.url, auth: { type: 'bearer', token: TOKEN } },
    });
    assert.equal(shared.status, 201);
    for (const token of [world.a.admin.token, world.b.admin.token]) {
      const seen = await call('GET', `/${shared.body.id}`, { token });
      assert.equal(seen.status, 200);
      assert.equal(seen.body.editable, false);
      for (const hidden of ['url', 'auth', 'tenantIds', 'pendingChanges']) assert.equal(seen.body[hidden], undefined, hidden);
      assert.equal(seen.body.status.error, undefined);
      assert.deepEqual(seen.body.status.tools, ['echo', 'hang', 'progress']);
      assert.equal((await call('PATCH', `/${shared.body.id}`, { token, json: { timeoutSeconds: 9 } })).status, 403);
      assert.equal((await call('DELETE', `/${shared.body.id}`, { token })).status, 403);
      assert.equal((await call('POST', `/${shared.body.id}/approve`, { token })).status, 403);
    }
    await call('DELETE', `/${shared.body.id}`, { token: world.platform.admin.token });
  });

  it('holds every URL to the deny lists: metadata for everyone, loopback for tenant admins, redirects at connection', async () => {
    const metadata = await call('POST', '', {
      token: world.platform.admin.token,
      json: { name: 'meta', url: 'http://169.254.169.254/mcp' },
    });
    assert.equal(metadata.status, 400);
    assert.deepEqual(
      metadata.body.errors.map((e: { field: string }) => e.field),
      ['url'],
    );
    const metadataToken = await call('POST', '', {
      token: world.platform.admin.token,
      json: {
        name: 'meta',
        url: upstream.url,
        auth: { type: 'oauth2_client_credentials', tokenUrl: 'http://169.254.169.254/token', clientId: 'c', clientSecret: 's' },
      },
    });
    assert.equal(metadataToken.status, 400);
    assert.deepEqual(
      metadataToken.body.errors.map((e: { field: string }) => e.field),
      ['auth.tokenUrl'],
    );

    const before = upstream.requests.length;
    const loopback = await call('POST', '', { token: world.a.admin.token, json: { name: 'loop', url: upstream.url } });
    assert.equal(loopback.status, 400, 'loopback is in the tenant deny list');
    assert.match(loopback.body.detail, /deny list/);
    assert.equal(upstream.requests.length, before, 'refused before any connection');

    // A platform admin may use loopback; the server then redirects to the metadata address.
    upstream.redirectTo = 'http://169.254.169.254/latest/meta-data';
    try {
      const redirected = await call('POST', '', { token: world.platform.admin.token, json: { name: 'redirector', url: upstream.url } });
      assert.equal(redirected.status, 201, redirected.text);
      assert.equal(redirected.body.status.state, 'error');
      assert.match(redirected.body.status.error, /refused address|deny list/);
      assert.deepEqual(redirected.body.pinnedTools, []);
      await call('DELETE', `/${redirected.body.id}`, { token: world.platform.admin.token });
    } finally {
      upstream.redirectTo = undefined;
    }
  });

  it('never answered a secret in any response body', () => {
    for (const text of texts) {
      assert.ok(!text.includes(TOKEN), 'the bearer token or header value');
      assert.ok(!text.includes(CLIENT_SECRET), 'the client secret');
    }
  });
});
