// The credential caches at the edge. The API-key cache over time: a busy key's entry
// is renewed in the background before it runs out (no request waits for the
// database, one read), and concurrent misses of one key share one read; a 2-second
// TTL stands in for the five minutes. The clock (Date) is the test's, moved on by hand,
// so that where a request lands in an entry's life does not depend on how busy the
// machine is. A signed-in user's account state: concurrent misses share one read too.
import { after, before, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, seedTenant, seedUser, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { createApiKey } from '../gateway/support.js';

const TTL_MS = 2000;

describe('API-key cache renewal', () => {
  let gw: TestGateway;
  let tenantId: string;
  let admin: string;
  const queries = () => gw.ctx.db.stats.queries;
  // An API key may not manage keys: 403 after the key check, before any query of the handler's own.
  const edgeOnly = (key: string) => gw.request('GET', `/api/auth/tenants/${tenantId}/api-keys`, { apiKey: key });
  const burst = async (key: string, n: number) => {
    const statuses = (await Promise.all(Array.from({ length: n }, () => edgeOnly(key)))).map((r) => r.status);
    assert.deepEqual(statuses, Array(n).fill(403));
  };

  before(async () => {
    // Before the gateway starts, so that every cache it makes reads this clock.
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    // No timed lastUsedAt flush: the query counts must be exact.
    gw = await startGateway({ GATEWAY_KEY_CACHE_TTL_SECONDS: String(TTL_MS / 1000), GATEWAY_LAST_USED_FLUSH_SECONDS: '3600' });
    const seeded = await seedTenant(gw, 'key-cache');
    tenantId = seeded.tenantId;
    admin = await tokenFor(gw, seeded.admin.id, tenantId);
  });
  after(async () => {
    await gw.close();
    mock.timers.reset();
  });

  it('looks a key up once however many requests miss at the same time', async () => {
    const { key } = await createApiKey(gw, tenantId, 'burst');
    const before = queries();
    await burst(key, 20);
    assert.equal(queries() - before, 1);
  });

  it("renews a busy key's entry before it runs out: one background read, and no request waits for it", async () => {
    const { key } = await createApiKey(gw, tenantId, 'busy');
    await burst(key, 1);

    mock.timers.tick(TTL_MS * 0.85);
    let before = queries();
    await burst(key, 20);
    assert.equal(queries() - before, 1, 'past 80 % of the TTL: one renewal for the twenty requests');

    // Past the first read's end: still answered from the cache, which the renewal refreshed.
    mock.timers.tick(TTL_MS * 0.4);
    before = queries();
    await burst(key, 20);
    assert.equal(queries() - before, 0, 'the renewed entry serves on');
  });

  it('still drops a revoked key at once: a renewal never undoes the invalidation', async () => {
    const { id, key } = await createApiKey(gw, tenantId, 'revoked');
    await burst(key, 1);
    mock.timers.tick(TTL_MS * 0.85);
    // Starts a renewal; the revoke below lands while it may still be in flight.
    const renewing = edgeOnly(key);
    const revoked = await gw.request('POST', `/api/auth/tenants/${tenantId}/api-keys/${id}/revoke`, { token: admin });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal((await renewing).status, 403);
    assert.equal((await edgeOnly(key)).status, 401);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await edgeOnly(key)).status, 401, 'and stays revoked after the renewal settles');
  });

  it("reads a signed-in user's account state once however many requests miss at the same time", async () => {
    const member = await seedUser(gw, tenantId);
    const token = await tokenFor(gw, member.id, tenantId);
    const before = queries();
    // A member may not list API keys: 403 after the account check, before any query of the handler's own.
    const statuses = await Promise.all(
      Array.from({ length: 20 }, () => gw.request('GET', `/api/auth/tenants/${tenantId}/api-keys`, { token })),
    );
    assert.deepEqual(
      statuses.map((r) => r.status),
      Array(20).fill(403),
    );
    assert.equal(queries() - before, 1);
  });
});
