// Walks the gateway's own route table, so a route added later is covered without
// anyone remembering to: every route that needs a credential answers no credential,
// a revoked key, a deleted key, an expired-looking garbage token and a malformed key
// with one and the same 401, and its handler never runs (a SCIM token counts as a bad
// credential everywhere but on the SCIM routes, where an API key and an access token do,
// and the one 401 is SCIM's error). Then every route is called
// by each person and key of the world (seedWorld) and must answer as the access it
// declares (`config.access`, see RouteAccess) says: a member's 403, an API key's 403,
// another tenant's 404 for tenant A's ids, and no refusal for those it lets in.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { startGateway, seedTenant, tokenFor, type TestGateway, withoutCorrelation } from '../helpers/gateway.js';
import { issueScimToken } from '../../src/areas/auth/scim-tokens/service.js';
import { seedWorld, type World } from '../helpers/world.js';
import { createApiKey, rawRequest } from './support.js';
import { bodyWithRecords, credentialOf, EXCEPTIONS, RULES, TenantARecords, type Caller, type Outcome } from './access-matrix.js';
import { setApiKeyStatus, deleteApiKey } from '../../src/areas/auth/api-keys/service.js';
import { buildApp } from '../../src/gateway/app.js';
import type { Principal } from '../../src/platform/identity.js';
import type { RouteSummary } from '../../src/gateway/fastify-types.js';
import { closedLoopbackUrl } from '../helpers/closed-port.js';

describe('every protected route', () => {
  let gw: TestGateway;
  let tenantId: string;
  const credentials: Record<string, Record<string, string>> = {};
  const scimOnly: Record<string, Record<string, string>> = {};
  let scimToken: string;

  before(async () => {
    gw = await startGateway();
    const tenant = await seedTenant(gw, 'routes');
    tenantId = tenant.tenantId;
    const admin: Principal = { tenantId, kind: 'user', subject: tenant.admin.id, roles: ['admin', 'platform_admin'], scopes: [] };
    const revoked = await createApiKey(gw, tenantId, 'revoked');
    await setApiKeyStatus(gw.ctx, admin, tenantId, revoked.id, 'revoked');
    const deleted = await createApiKey(gw, tenantId, 'deleted');
    await deleteApiKey(gw.ctx, admin, tenantId, deleted.id);
    credentials['revoked key (X-API-Key)'] = { 'x-api-key': revoked.key };
    credentials['revoked key (Bearer)'] = { authorization: `Bearer ${revoked.key}` };
    credentials['deleted key'] = { 'x-api-key': deleted.key };
    credentials['malformed key'] = { 'x-api-key': 'rdk_not-a-real-key' };
    credentials['garbage bearer token'] = { authorization: 'Bearer eyJhbGciOiJub25lIn0.e30.' };
    credentials['wrong scheme'] = { authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}` };
    // A SCIM token is a credential of the SCIM routes alone (issue 30)…
    scimToken = (await issueScimToken(gw.ctx, tenantId, { name: 'routes' }, null)).token;
    // …where an API key and an admin's access token, valid anywhere else, are not one.
    const key = await createApiKey(gw, tenantId, 'valid');
    const adminToken = await tokenFor(gw, tenant.admin.id, tenantId);
    scimOnly['valid API key'] = { 'x-api-key': key.key };
    scimOnly['valid API key (Bearer)'] = { authorization: `Bearer ${key.key}` };
    scimOnly["valid admin's access token"] = { authorization: `Bearer ${adminToken}` };
  });
  after(() => gw.close());

  it('lists a route table with protected routes in every area', () => {
    const protectedRoutes = gw.app.routeTable.filter((r) => r.access !== 'public');
    for (const prefix of ['/api/auth/', '/api/os/']) {
      assert.ok(
        protectedRoutes.some((r) => r.url.startsWith(prefix)),
        `protected routes under ${prefix}`,
      );
    }
    assert.ok(gw.app.routeTable.some((r) => r.url === '/api/auth/login' && r.access === 'public'));
  });

  it('refuses to register a route that does not say who may call it', async () => {
    const app = await buildApp(gw.ctx, { logStream: new Writable({ write: (_c, _e, done) => done() }) });
    try {
      assert.throws(() => app.get('/undeclared', async () => 'never'), /GET \/undeclared must declare who may call it: config\.access/);
      assert.throws(
        () => app.post('/misspelt', { config: { access: 'admin' as never } }, async () => 'never'),
        /POST \/misspelt must declare/,
      );
      app.get('/declared', { config: { access: 'public' } }, async () => 'ok');
      assert.equal((await app.inject({ method: 'GET', url: '/declared' })).body, 'ok');
    } finally {
      await app.close();
    }
  });

  it('answers the same 401 to every missing or bad credential, and runs no handler', async () => {
    const routes = gw.app.routeTable.filter((r) => r.access !== 'public' && r.method !== 'HEAD' && r.method !== 'OPTIONS');
    assert.ok(routes.length >= 20, `expected the whole auth and os surface, got ${routes.length} routes`);
    const reference = await gw.request('GET', '/api/os/workspaces');
    assert.equal(reference.status, 401);
    // The /api/llm/v1 surface answers the same problem plus OpenAI's `error` member.
    const llmReference = await gw.request('GET', '/api/llm/v1/models');
    assert.equal(llmReference.status, 401);
    assert.deepEqual(
      withoutCorrelation({ ...llmReference.body, error: undefined }),
      withoutCorrelation({ ...reference.body, error: undefined }),
    );
    // The SCIM routes answer in SCIM's error schema (RFC 7644 §3.12), the same for every refusal there.
    const scimReference = await gw.request('GET', '/api/auth/scim/v2/Users');
    assert.equal(scimReference.status, 401);
    assert.deepEqual(scimReference.body, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '401',
      detail: 'A valid SCIM bearer token is required.',
    });
    assert.match(scimReference.headers.get('content-type') ?? '', /^application\/scim\+json/);
    const rowsBefore = await gw.ctx.db.query(
      'SELECT (SELECT count(*) FROM workspaces) + (SELECT count(*) FROM api_keys) + (SELECT count(*) FROM users) + (SELECT count(*) FROM tenants) AS n',
    );

    for (const route of routes) {
      // Real-looking ids of this tenant, so only the credential can be what fails.
      const path = route.url
        .replace(':tenantId', tenantId)
        .replace(/:(\w+)/g, (_, name: string) => `${name.replace(/Id$/, '')}_01ABCDEFGHJKMNPQRSTVWXYZ00`);
      const body = ['POST', 'PATCH', 'PUT'].includes(route.method) ? { name: 'x', code: '123456', password: 'p'.repeat(12) } : undefined;
      const scimRoute = route.access === 'scim';
      const refused = scimRoute
        ? { ...credentials, ...scimOnly }
        : { ...credentials, 'SCIM token': { authorization: `Bearer ${scimToken}` } };
      for (const [label, headers] of [['no credential', {}], ...Object.entries(refused)] as const) {
        const response = await gw.request(route.method, path, { headers, ...(body ? { json: body } : {}) });
        assert.equal(response.status, 401, `${route.method} ${route.url} with ${label}`);
        if (scimRoute) {
          assert.deepEqual(response.body, scimReference.body, `${route.method} ${route.url} with ${label}`);
          continue;
        }
        assert.deepEqual(
          withoutCorrelation(response.body),
          withoutCorrelation((/^\/api\/llm\/v1\//.test(route.url) ? llmReference : reference).body),
          `${route.method} ${route.url} with ${label}`,
        );
      }
    }
    const rowsAfter = await gw.ctx.db.query(
      'SELECT (SELECT count(*) FROM workspaces) + (SELECT count(*) FROM api_keys) + (SELECT count(*) FROM users) + (SELECT count(*) FROM tenants) AS n',
    );
    assert.deepEqual(rowsAfter, rowsBefore, 'nothing was created or deleted');
  });
});

describe('every route, as its declared access says', () => {
  let gw: TestGateway;
  let world: World;
  let records: TenantARecords;
  let engine: FakeEngine;
  // Everything but CORS preflights, which the edge answers for any caller.
  const routes = () => gw.app.routeTable.filter((r) => r.method !== 'OPTIONS');

  before(async () => {
    // A shared node serving one model, so that routes naming a model (GET /models/{id})
    // find it for every tenant and only the credential decides the answer.
    engine = await startFakeOpenAI({ models: ['fake-model'] });
    gw = await startGateway({ GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: engine.url, name: 'shared' }]) });
    world = await seedWorld(gw, 'matrix');
    records = new TenantARecords(gw, world, await closedLoopbackUrl());
  });
  after(async () => {
    await gw.close();
    await engine.close();
  });

  async function call(route: RouteSummary, headers: Record<string, string>) {
    const body = await bodyWithRecords(route, records);
    const path = await records.path(route);
    const json = body === undefined ? {} : { body: JSON.stringify(body), headers: { ...headers, 'content-type': 'application/json' } };
    const response = await rawRequest(gw, route.method, path, { headers, ...json });
    return {
      status: response.status,
      code: response.body?.code as string | undefined,
      detail: response.body?.detail as string | undefined,
    };
  }

  it('has routes of every access level, so that every rule of the matrix is exercised', () => {
    const levels = new Set(routes().map((r) => r.access));
    for (const level of [
      'public',
      'signedIn',
      'tenant',
      'tenantEditor',
      'tenantAdmin',
      'platformAdmin',
      'personal',
      'owner',
      'scim',
    ] as const)
      assert.ok(levels.has(level), level);
  });

  it("answers each caller as the route declares: 403 to those it refuses, 404 on another tenant's ids, no refusal to those it lets in", async () => {
    const disagreements: string[] = [];
    let checked = 0;
    for (const route of routes()) {
      if (route.access === 'public') continue;
      for (const [caller, ruled] of Object.entries(RULES[route.access]) as [Caller, Outcome][]) {
        const expected = EXCEPTIONS[`${route.method} ${route.url}`]?.[caller] ?? ruled;
        if (expected === 404 && !TenantARecords.carriesIds(route)) continue;
        const answer = await call(route, credentialOf(world, caller));
        checked++;
        const refused = answer.status === 401 || answer.status === 403 || answer.status === 404;
        if (expected === 'allowed' ? !refused : answer.status === expected) continue;
        const hint =
          answer.code === 'VALIDATION_FAILED'
            ? ' (the generated body failed validation: give the route one in BODIES, access-matrix.ts)'
            : '';
        disagreements.push(
          `${route.method} ${route.url} (access: ${route.access}): ${caller} got ${answer.status} ${answer.code ?? ''} "${answer.detail ?? ''}", expected ${expected === 'allowed' ? 'no 401/403/404' : expected}${hint}`,
        );
      }
    }
    assert.ok(checked > 100, `only ${checked} calls made`);
    assert.deepEqual(disagreements, [], `routes whose answers disagree with their declared access:\n${disagreements.join('\n')}`);
  });

  it("lets public routes answer without a credential, never with the edge's 401", async () => {
    const publicRoutes = routes().filter((r) => r.access === 'public');
    assert.ok(publicRoutes.some((r) => r.url === '/api/auth/login'));
    for (const route of publicRoutes) {
      const answer = await call(route, {});
      assert.notEqual(
        answer.code,
        'UNAUTHENTICATED',
        `${route.method} ${route.url} is declared public but asks for a credential: ${answer.status} ${answer.detail}`,
      );
    }
  });
});
