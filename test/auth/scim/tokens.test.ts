// Per-tenant SCIM tokens (issue 30): managed by the tenant's admin (or a platform
// admin), shown once, stored as a keyed hash, with an expiry; a token is bound to its
// tenant, works on the SCIM routes only, and nothing else works there. Also the
// discovery endpoints (RFC 7644 §4) the clients read first.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, seedUser, startGateway, tokenFor, type TestGateway } from '../../helpers/gateway.js';
import { createApiKey } from '../../gateway/support.js';
import { isScimError, oktaUser, SCHEMA, SCIM, scim, scimTenant, type ScimTenant } from './support.js';

describe('SCIM tokens and discovery', () => {
  let gw: TestGateway;
  let a: ScimTenant;
  let b: ScimTenant;
  const tokensSeen: string[] = [];
  const tokensOf = (tenantId: string, token: string) => gw.request('GET', `/api/auth/tenants/${tenantId}/scim-tokens`, { token });
  const createToken = async (tenantId: string, token: string, json: object = { name: 'Okta' }) => {
    const response = await gw.request('POST', `/api/auth/tenants/${tenantId}/scim-tokens`, { token, json });
    if (response.body?.token) tokensSeen.push(response.body.token);
    return response;
  };

  before(async () => {
    gw = await startGateway();
    a = await scimTenant(gw, 'scim-tokens-a');
    b = await scimTenant(gw, 'scim-tokens-b');
    tokensSeen.push(a.scimToken, b.scimToken);
  });
  after(async () => {
    const logs = gw.logs();
    for (const token of tokensSeen) assert.ok(!logs.includes(token.slice(5)), 'a SCIM token reached a log line');
    await gw.close();
  });

  it('shows a new token once, keeps only a keyed hash of it, and lists tokens without it', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await createToken(a.tenantId, a.adminToken, { name: 'Entra ID', expiresAt });
    assert.equal(created.status, 201, created.text);
    const { id, token, maskedToken, name } = created.body;
    assert.match(id, /^scimt_/);
    assert.match(token, /^scim_[A-Za-z0-9_-]{48}$/);
    assert.equal(name, 'Entra ID');
    assert.equal(created.body.expiresAt, expiresAt);
    assert.ok(token.startsWith(maskedToken.split('…')[0]) && token.endsWith(maskedToken.split('…')[1]));
    const rows = await gw.ctx.db.query<{ token_hash: string }>('SELECT token_hash FROM scim_tokens WHERE id = $1', [id]);
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0]!.token_hash, token);
    assert.ok(!rows[0]!.token_hash.includes(token.slice(5, 20)));
    const listed = await tokensOf(a.tenantId, a.adminToken);
    assert.equal(listed.status, 200);
    const entry = listed.body.data.find((t: any) => t.id === id);
    assert.deepEqual(Object.keys(entry).sort(), ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'maskedToken', 'name']);
    assert.ok(!listed.text.includes(token));
    // It works on the SCIM routes, and its use is recorded.
    assert.equal((await scim(gw, token, 'GET', '/Users')).status, 200);
    const after = await tokensOf(a.tenantId, a.adminToken);
    assert.ok(after.body.data.find((t: any) => t.id === id).lastUsedAt);
  });

  it("lets only the tenant's admin or a platform admin manage its tokens: a member 403, an API key 403, another tenant's admin 404", async () => {
    const member = await seedUser(gw, a.tenantId);
    const memberToken = await tokenFor(gw, member.id, a.tenantId);
    const key = await createApiKey(gw, a.tenantId, 'not for tokens');
    assert.equal((await createToken(a.tenantId, memberToken)).status, 403);
    assert.equal(
      (await gw.request('POST', `/api/auth/tenants/${a.tenantId}/scim-tokens`, { apiKey: key.key, json: { name: 'x' } })).status,
      403,
    );
    assert.equal((await createToken(a.tenantId, b.adminToken)).status, 404);
    assert.equal((await tokensOf(a.tenantId, b.adminToken)).status, 404);
    const platform = await seedTenant(gw, 'scim-platform', ['admin', 'platform_admin']);
    const platformToken = await tokenFor(gw, platform.admin.id, platform.tenantId);
    assert.equal((await createToken(a.tenantId, platformToken)).status, 201);
    assert.equal((await createToken(a.tenantId, a.adminToken, { name: 'x', expiresAt: '2001-01-01T00:00:00Z' })).status, 400);
    assert.equal((await createToken(a.tenantId, a.adminToken, { name: '   ' })).status, 400);
    assert.equal((await createToken(a.tenantId, a.adminToken, { name: 'x', scopes: ['admin'] })).status, 400);
  });

  it('binds a token to its tenant: what it provisions lands there, and it never sees another tenant', async () => {
    const created = (await scim(gw, a.scimToken, 'POST', '/Users', oktaUser())).body;
    const [row] = await gw.ctx.db.query<{ tenant_id: string }>('SELECT tenant_id FROM users WHERE id = $1', [created.id]);
    assert.equal(row!.tenant_id, a.tenantId);
    const fromB = await scim(gw, b.scimToken, 'GET', `/Users?filter=${encodeURIComponent(`userName eq "${created.userName}"`)}`);
    assert.equal(fromB.body.totalResults, 0);
    assert.equal(isScimError(await scim(gw, b.scimToken, 'GET', `/Users/${created.id}`), 404), undefined);
  });

  it('refuses a deleted token and an expired one on the very next request, with the SCIM 401', async () => {
    const created = (await createToken(a.tenantId, a.adminToken, { name: 'to delete' })).body;
    assert.equal((await scim(gw, created.token, 'GET', '/ServiceProviderConfig')).status, 200);
    const deleted = await gw.request('DELETE', `/api/auth/tenants/${a.tenantId}/scim-tokens/${created.id}`, { token: a.adminToken });
    assert.equal(deleted.status, 204);
    assert.equal(isScimError(await scim(gw, created.token, 'GET', '/ServiceProviderConfig'), 401), undefined);
    assert.equal(
      (await gw.request('DELETE', `/api/auth/tenants/${a.tenantId}/scim-tokens/${created.id}`, { token: a.adminToken })).status,
      404,
    );
    assert.equal(
      (await gw.request('DELETE', `/api/auth/tenants/${b.tenantId}/scim-tokens/${created.id}`, { token: b.adminToken })).status,
      404,
    );

    const expiring = (
      await createToken(a.tenantId, a.adminToken, { name: 'expiring', expiresAt: new Date(Date.now() + 60_000).toISOString() })
    ).body;
    assert.equal((await scim(gw, expiring.token, 'GET', '/Users')).status, 200);
    await gw.ctx.db.query("UPDATE scim_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", [expiring.id]);
    const refused = await scim(gw, expiring.token, 'GET', '/Users');
    assert.equal(isScimError(refused, 401), undefined);
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer/);
  });

  it('refuses a disabled tenant’s token', async () => {
    const t = await scimTenant(gw, 'scim-disabled');
    assert.equal((await scim(gw, t.scimToken, 'GET', '/Users')).status, 200);
    await gw.ctx.db.query("UPDATE tenants SET status = 'disabled' WHERE id = $1", [t.tenantId]);
    assert.equal(isScimError(await scim(gw, t.scimToken, 'GET', '/Users'), 401), undefined);
  });

  it('takes nothing but a SCIM token on the SCIM routes, and a SCIM token nowhere else', async () => {
    const key = await createApiKey(gw, a.tenantId, 'not SCIM');
    for (const headers of <Record<string, string>[]>[
      { authorization: `Bearer ${a.adminToken}` },
      { authorization: `Bearer ${key.key}` },
      { 'x-api-key': key.key },
      { 'x-api-key': a.scimToken },
      { authorization: `Basic ${Buffer.from(`x:${a.scimToken}`).toString('base64')}` },
      { authorization: `Bearer ${a.scimToken.slice(0, -2)}xx` },
      {},
    ]) {
      const answer = await gw.request('GET', `${SCIM}/Users`, { headers });
      assert.equal(isScimError(answer, 401), undefined, JSON.stringify(Object.keys(headers)));
    }
    for (const [method, path] of <[string, string][]>[
      ['GET', '/api/auth/me'],
      ['GET', '/api/os/workspaces'],
      ['GET', `/api/auth/tenants/${a.tenantId}/users`],
      ['GET', `/api/auth/tenants/${a.tenantId}/scim-tokens`],
      ['GET', '/api/llm/v1/models'],
    ]) {
      const answer = await gw.request(method, path, { token: a.scimToken });
      assert.equal(answer.status, 401, path);
      assert.equal(answer.body.code, 'UNAUTHENTICATED', path);
    }
  });

  it('serves ServiceProviderConfig, ResourceTypes and Schemas (RFC 7644 §4) to the tenant’s token', async () => {
    const config = await scim(gw, a.scimToken, 'GET', '/ServiceProviderConfig');
    assert.equal(config.status, 200, config.text);
    assert.match(config.headers.get('content-type') ?? '', /^application\/scim\+json/);
    assert.deepEqual(config.body.schemas, ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig']);
    assert.equal(config.body.patch.supported, true);
    assert.equal(config.body.bulk.supported, false);
    assert.deepEqual(config.body.filter, { supported: true, maxResults: 200 });
    assert.equal(config.body.authenticationSchemes[0].type, 'oauthbearertoken');

    const types = await scim(gw, a.scimToken, 'GET', '/ResourceTypes');
    assert.equal(types.body.totalResults, 2);
    assert.deepEqual(
      types.body.Resources.map((r: any) => [r.id, r.endpoint, r.schema]),
      [
        ['User', '/Users', SCHEMA.user],
        ['Group', '/Groups', SCHEMA.group],
      ],
    );
    assert.equal((await scim(gw, a.scimToken, 'GET', '/ResourceTypes/User')).body.schemaExtensions[0].schema, SCHEMA.enterpriseUser);
    assert.equal(isScimError(await scim(gw, a.scimToken, 'GET', '/ResourceTypes/Printer'), 404), undefined);

    const schemas = await scim(gw, a.scimToken, 'GET', '/Schemas');
    assert.deepEqual(
      schemas.body.Resources.map((s: any) => s.id),
      [SCHEMA.user, SCHEMA.enterpriseUser, SCHEMA.group],
    );
    const user = (await scim(gw, a.scimToken, 'GET', `/Schemas/${SCHEMA.user}`)).body;
    const attribute = (name: string) => user.attributes.find((x: any) => x.name === name);
    assert.equal(attribute('userName').uniqueness, 'server');
    assert.equal(attribute('roles').mutability, 'readOnly');
    assert.equal(attribute('password').returned, 'never');
    assert.equal(isScimError(await gw.request('GET', `${SCIM}/ServiceProviderConfig`), 401), undefined);
  });
});
