// Setting rate limits: PATCH /api/auth/tenants/{tenantId}/api-keys/{keyId} `limits` by a
// tenant admin (with the route's security cases), and `limits` on the tenant record by
// a platform admin only. Enforcement is test/llm/rate-limits.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, seedUser, startGateway, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { createApiKey } from '../gateway/support.js';

describe('rate limit settings', () => {
  let gw: TestGateway;
  let tenantA: string, adminA: string, memberA: string;
  let tenantB: string, adminB: string;
  let platformAdmin: string;
  const keyPath = (tenantId: string, keyId: string) => `/api/auth/tenants/${tenantId}/api-keys/${keyId}`;

  before(async () => {
    gw = await startGateway({ GATEWAY_LOCAL_ENGINE: 'off' });
    const a = await seedTenant(gw, 'limits-a');
    tenantA = a.tenantId;
    adminA = await tokenFor(gw, a.admin.id, tenantA);
    memberA = await tokenFor(gw, (await seedUser(gw, tenantA)).id, tenantA);
    const b = await seedTenant(gw, 'limits-b');
    tenantB = b.tenantId;
    adminB = await tokenFor(gw, b.admin.id, tenantB);
    const platform = await seedTenant(gw, 'limits-platform', ['platform_admin']);
    platformAdmin = await tokenFor(gw, platform.admin.id, platform.tenantId);
  });
  after(async () => {
    await gw?.close();
  });

  it('sets, shows, replaces and clears a key’s limits', async () => {
    const { id } = await createApiKey(gw, tenantA, 'limited');
    const fresh = await gw.request('GET', keyPath(tenantA, id), { token: adminA });
    assert.deepEqual(fresh.body.limits, {}, 'no limits by default');
    const set = await gw.request('PATCH', keyPath(tenantA, id), {
      token: adminA,
      json: { limits: { requestsPerMinute: 60, tokensPerDay: 100_000, tokensPerMonth: null } },
    });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.id, id);
    assert.deepEqual(set.body.limits, { requestsPerMinute: 60, tokensPerDay: 100_000 });
    assert.equal(set.body.key, undefined, 'never the plaintext');
    const listed = await gw.request('GET', `/api/auth/tenants/${tenantA}/api-keys`, { token: adminA });
    assert.deepEqual(listed.body.data.find((k: { id: string }) => k.id === id).limits, { requestsPerMinute: 60, tokensPerDay: 100_000 });
    // The object replaces what was set.
    const replaced = await gw.request('PATCH', keyPath(tenantA, id), { token: adminA, json: { limits: { tokensPerMinute: 500 } } });
    assert.deepEqual(replaced.body.limits, { tokensPerMinute: 500 });
    for (const limits of [{}, null]) {
      const cleared = await gw.request('PATCH', keyPath(tenantA, id), { token: adminA, json: { limits } });
      assert.equal(cleared.status, 200, cleared.text);
      assert.deepEqual(cleared.body.limits, {});
    }
  });

  it('refuses malformed limits with 400 naming the field', async () => {
    const { id } = await createApiKey(gw, tenantA, 'malformed');
    const cases: [unknown, string][] = [
      [{ limits: { requestsPerMinute: 0 } }, 'limits.requestsPerMinute'],
      [{ limits: { requestsPerMinute: 1.5 } }, 'limits.requestsPerMinute'],
      [{ limits: { tokensPerMinute: -3 } }, 'limits.tokensPerMinute'],
      [{ limits: { tokensPerDay: '100' } }, 'limits.tokensPerDay'],
      [{ limits: { tokensPerMonth: 10 ** 13 } }, 'limits.tokensPerMonth'],
      [{ limits: { requestsPerHour: 5 } }, 'limits'],
      [{ limits: 'lots' }, 'limits'],
      [{}, 'limits'],
    ];
    for (const [json, field] of cases) {
      const response = await gw.request('PATCH', keyPath(tenantA, id), { token: adminA, json });
      assert.equal(response.status, 400, JSON.stringify(json));
      assert.equal(response.body.code, 'VALIDATION_FAILED');
      assert.ok(
        response.body.errors.some((e: { field: string }) => e.field.startsWith(field)),
        `${JSON.stringify(json)} → ${response.text}`,
      );
    }
    assert.deepEqual((await gw.request('GET', keyPath(tenantA, id), { token: adminA })).body.limits, {}, 'nothing changed');
  });

  it('has the security cases: 401 without or with a revoked credential, 403 for a member or a key, 404 across tenants', async () => {
    const { id } = await createApiKey(gw, tenantA, 'guarded');
    const json = { limits: { requestsPerMinute: 1 } };
    assert.equal((await gw.request('PATCH', keyPath(tenantA, id), { json })).status, 401);
    assert.equal((await gw.request('PATCH', keyPath(tenantA, id), { token: 'not-a-token', json })).status, 401);
    const revoked = await createApiKey(gw, tenantA, 'revoked');
    await gw.request('POST', `${keyPath(tenantA, revoked.id)}/revoke`, { token: adminA });
    assert.equal((await gw.request('PATCH', keyPath(tenantA, id), { apiKey: revoked.key, json })).status, 401);
    assert.equal((await gw.request('PATCH', keyPath(tenantA, id), { token: memberA, json })).status, 403);
    const live = await createApiKey(gw, tenantA, 'live');
    assert.equal((await gw.request('PATCH', keyPath(tenantA, id), { apiKey: live.key, json })).status, 403);
    // Tenant B's admin, on tenant A's key: by A's path, and by B's path with A's key id.
    assert.equal((await gw.request('PATCH', keyPath(tenantA, id), { token: adminB, json })).status, 404);
    assert.equal((await gw.request('PATCH', keyPath(tenantB, id), { token: adminB, json })).status, 404);
    assert.equal((await gw.request('PATCH', keyPath(tenantA, 'key_nope'), { token: adminA, json })).status, 404);
    assert.deepEqual((await gw.request('GET', keyPath(tenantA, id), { token: adminA })).body.limits, {}, 'nothing changed');
  });

  it('lets a platform admin set a tenant’s limits, and refuses its own admin with 403', async () => {
    const path = `/api/auth/tenants/${tenantB}`;
    const before = await gw.request('GET', path, { token: adminB });
    assert.deepEqual(before.body.limits, {});
    const refused = await gw.request('PATCH', path, { token: adminB, json: { limits: { requestsPerMinute: 1000 } } });
    assert.equal(refused.status, 403, refused.text);
    const set = await gw.request('PATCH', path, {
      token: platformAdmin,
      json: { limits: { requestsPerMinute: 100, tokensPerMonth: 5_000_000 } },
    });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body.limits, { requestsPerMinute: 100, tokensPerMonth: 5_000_000 });
    // Its admin still renames it, and sees (cannot change) the limits.
    const renamed = await gw.request('PATCH', path, { token: adminB, json: { name: `${set.body.name} renamed` } });
    assert.equal(renamed.status, 200, renamed.text);
    assert.deepEqual(renamed.body.limits, { requestsPerMinute: 100, tokensPerMonth: 5_000_000 });
    const bad = await gw.request('PATCH', path, { token: platformAdmin, json: { limits: { tokensPerDay: 0 } } });
    assert.equal(bad.status, 400);
    assert.ok(
      bad.body.errors.some((e: { field: string }) => e.field.startsWith('limits.tokensPerDay')),
      bad.text,
    );
    const cleared = await gw.request('PATCH', path, { token: platformAdmin, json: { limits: null } });
    assert.deepEqual(cleared.body.limits, {});
  });
});
