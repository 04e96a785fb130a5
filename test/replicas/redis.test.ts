// Two gateway replicas on one PostgreSQL database and one Redis, called directly
// (no balancer): what one replica changes holds on the other within a second, login
// throttling counts attempts sent to both (locking out an address, not the owner elsewhere), and a Redis outage degrades as documented
// (caches of seconds, throttling per replica, /health says so) and heals by itself.
//
// Each replica is a `gateway start` process of its own (replica-process.ts); the test
// seeds the shared database beside them. sigkill.test.ts kills one mid-job.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, seedUser, tokenFor } from '../helpers/gateway.js';
import { createApiKey } from '../gateway/support.js';
import { eventually } from '../helpers/eventually.js';
import { redisServerMissing, startRedis, type TestRedis } from '../helpers/redis.js';
import { startReplicaSet, type GatewayProcess, type ReplicaSet } from '../helpers/replica-process.js';

const skip =
  !process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL
    ? 'replicas need TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (.ci/run sets both)'
    : false;

const throttleEnv = {
  GATEWAY_TRUST_PROXY: 'on',
  GATEWAY_LOGIN_MAX_FAILURES_PER_ACCOUNT_AND_ADDRESS: '4',
  GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS: '50',
  GATEWAY_LOGIN_THROTTLE_WINDOW_SECONDS: '600',
};

/**
 * Polls until `request` answers `status`. The caches keep an entry for 300 s
 * (GATEWAY_KEY_CACHE_TTL_SECONDS' default): answered within the far shorter `timeoutMs`,
 * the change reached the replica (by the bus, or the degraded few-second TTL) rather
 * than waited out its cache.
 */
async function until(status: number, request: () => Promise<{ status: number }>, timeoutMs: number): Promise<void> {
  await eventually(`status ${status}`, async () => (await request()).status === status, timeoutMs);
}

describe('two replicas on one PostgreSQL and one Redis', { skip }, () => {
  let set: ReplicaSet;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let tenantId: string;
  let adminA: string;
  // An API key may read the model list; a revoked one gets 401 at the edge.
  const models = (gw: GatewayProcess, apiKey: string) => gw.request('GET', '/api/llm/v1/models', { apiKey });
  const me = (gw: GatewayProcess, token: string) => gw.request('GET', '/api/auth/me', { token });
  const loginAt = (gw: GatewayProcess, username: string, password: string, ip = '10.9.0.1') =>
    gw.request('POST', '/api/auth/login', { json: { username, password }, headers: { 'x-forwarded-for': ip } });

  before(async () => {
    set = await startReplicaSet({ REDIS_URL: process.env.TEST_REDIS_URL!, GATEWAY_LOCAL_ENGINE: 'off', ...throttleEnv });
    [a, b] = await Promise.all([set.start(), set.start()]);
    const seeded = await seedTenant(set, 'replicas');
    tenantId = seeded.tenantId;
    adminA = await tokenFor(set, seeded.admin.id, tenantId);
    await eventually('both coordinated', async () => {
      const [ha, hb] = await Promise.all([a.request('GET', '/health'), b.request('GET', '/health')]);
      return ha.body.coordination.status === 'ok' && hb.body.coordination.status === 'ok';
    });
  });
  after(async () => {
    await set?.close();
  });

  it('/health on each replica reports coordination on Redis', async () => {
    for (const gw of [a, b]) assert.deepEqual((await gw.request('GET', '/health')).body.coordination, { kind: 'redis', status: 'ok' });
  });

  it('a key revoked on A answers 401 on B, told rather than waiting out its cache', async () => {
    const { id, key } = await createApiKey(set, tenantId, 'replicated');
    assert.equal((await models(b, key)).status, 200, 'B has the key cached');
    const revoked = await a.request('POST', `/api/auth/tenants/${tenantId}/api-keys/${id}/revoke`, { token: adminA });
    assert.equal(revoked.status, 200, revoked.text);
    await until(401, () => models(b, key), 60_000);
  });

  it('a user disabled on A cannot use their token on B', async () => {
    const user = await seedUser(set, tenantId);
    const login = await loginAt(b, user.username, user.password, '10.9.1.1');
    assert.equal(login.status, 200, login.text);
    const token = login.body.token;
    assert.equal((await me(b, token)).status, 200, 'B has the account cached');
    const disabled = await a.request('PATCH', `/api/auth/tenants/${tenantId}/users/${user.id}`, {
      token: adminA,
      json: { status: 'disabled' },
    });
    assert.equal(disabled.status, 200, disabled.text);
    await until(401, () => me(b, token), 60_000);
  });

  // Issue 26, item 3: failures from one address lock that address out on every replica, never the owner elsewhere.
  it('login throttling counts the attempts sent to both replicas, per account and address', async () => {
    const user = await seedUser(set, tenantId);
    for (const gw of [a, b, a, b]) assert.equal((await loginAt(gw, user.username, 'wrong', '10.9.2.1')).status, 401);
    // Four failures from 10.9.2.1 in all (the limit), two on each: both refuse that address, even the right password…
    for (const gw of [a, b]) {
      const refused = await loginAt(gw, user.username, user.password, '10.9.2.1');
      assert.equal(refused.status, 429, refused.text);
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    }
    // …while the owner at another address signs in on both.
    for (const gw of [a, b]) assert.equal((await loginAt(gw, user.username, user.password, '10.9.2.2')).status, 200);

    // A burst from one address split over both replicas, in flight together: at most the limit get to guess.
    const other = await seedUser(set, tenantId);
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => loginAt(i % 2 ? a : b, other.username, 'wrong', '10.9.3.1')));
    const statuses = burst.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 401).length, 4, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 6, statuses.join(','));
    for (const gw of [a, b]) assert.equal((await loginAt(gw, other.username, other.password, '10.9.3.2')).status, 200);
  });
});

describe('two replicas through a Redis outage', { skip: skip || redisServerMissing() }, () => {
  // A Redis of this test's own: it is stopped and started again mid-run.
  let redis: TestRedis;
  let set: ReplicaSet;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let tenantId: string;
  let adminA: string;
  const models = (gw: GatewayProcess, apiKey: string) => gw.request('GET', '/api/llm/v1/models', { apiKey });
  const coordination = async (gw: GatewayProcess) => (await gw.request('GET', '/health')).body;

  before(async () => {
    redis = await startRedis();
    set = await startReplicaSet({ REDIS_URL: redis.url, GATEWAY_LOCAL_ENGINE: 'off', ...throttleEnv });
    [a, b] = await Promise.all([set.start(), set.start()]);
    const seeded = await seedTenant(set, 'outage');
    tenantId = seeded.tenantId;
    adminA = await tokenFor(set, seeded.admin.id, tenantId);
    await eventually('both coordinated', async () => (await coordination(a)).status === 'ok' && (await coordination(b)).status === 'ok');
  });
  after(async () => {
    await set?.close();
    await redis?.close();
  });

  it('degrades while Redis is down (seconds-long caches, per-replica throttling) and recovers by itself', async () => {
    const { id, key } = await createApiKey(set, tenantId, 'outage');
    assert.equal((await models(b, key)).status, 200);

    await redis.stop();
    for (const gw of [a, b])
      await eventually(
        'health says degraded',
        async () => {
          const health = await coordination(gw);
          return health.status === 'degraded' && health.coordination.status === 'degraded';
        },
        10_000,
      );
    // Still serving: keys, sign-in, and a revoke on A reaches B within seconds, through the short caches.
    assert.equal((await models(b, key)).status, 200);
    const user = await seedUser(set, tenantId);
    assert.equal((await a.request('POST', '/api/auth/login', { json: { username: user.username, password: user.password } })).status, 200);
    const revoked = await a.request('POST', `/api/auth/tenants/${tenantId}/api-keys/${id}/revoke`, { token: adminA });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal((await models(a, key)).status, 401, 'at once on the replica that revoked it');
    await until(401, () => models(b, key), 60_000);

    await redis.start();
    for (const gw of [a, b])
      await eventually(
        'health ok again',
        async () => {
          const health = await coordination(gw);
          return health.status === 'ok' && health.coordination.status === 'ok';
        },
        10_000,
      );
    const second = await createApiKey(set, tenantId, 'after');
    assert.equal((await models(b, second.key)).status, 200);
    await a.request('POST', `/api/auth/tenants/${tenantId}/api-keys/${second.id}/revoke`, { token: adminA });
    // Back on the bus: caches keep their full 300 s again, so only the bus tells B in time.
    await until(401, () => models(b, second.key), 60_000);
  });
});
