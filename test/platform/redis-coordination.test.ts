// Coordination on Redis, unit by unit, against a real redis-server the test starts
// (and stops and restarts, to play an outage): the invalidation bus between two
// replicas' instances, the shared failure counters, and what each does while Redis
// is gone and once it is back.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/platform/config.js';
import { deriveSecrets } from '../../src/platform/secrets.js';
import { createCoordination, type Coordination } from '../../src/platform/coordination/coordination.js';
import type { Invalidation } from '../../src/platform/coordination/invalidation-bus.js';
import { RenewingCache } from '../../src/platform/renewing-cache.js';
import { eventually } from '../helpers/eventually.js';
import { redisServerMissing, startRedis, type TestRedis } from '../helpers/redis.js';

const keyedHashOf = (secret: string) => {
  const secrets = deriveSecrets(secret);
  return (value: string) => secrets.hash('coordination', value);
};

describe('REDIS_URL', () => {
  it('is optional, and must be a redis:// or rediss:// URL', () => {
    assert.equal(loadConfig({}).redisUrl, undefined);
    assert.equal(loadConfig({ REDIS_URL: 'rediss://:pw@redis.internal:6380/2' }).redisUrl, 'rediss://:pw@redis.internal:6380/2');
    for (const bad of ['http://redis.internal', 'not a url'])
      assert.throws(
        () => loadConfig({ REDIS_URL: bad }),
        (error: Error) => error instanceof ConfigError && /REDIS_URL/.test(error.message),
      );
  });

  it('unset: coordination is in-process and healthy, with no Redis anywhere', async () => {
    const coordination = createCoordination({
      redisUrl: undefined,
      keyedHash: keyedHashOf('x'.repeat(32)),
      loginThrottleWindowSeconds: 60,
    });
    assert.deepEqual(coordination.status(), { kind: 'local', status: 'ok' });
    const seen: Invalidation[] = [];
    coordination.bus.subscribe((event) => seen.push(event));
    void coordination.bus.publish({ kind: 'apiKey', id: 'key_1' });
    assert.deepEqual(seen, [{ kind: 'apiKey', id: 'key_1' }]); // synchronously
    await coordination.close();
  });
});

describe('coordination on Redis', { skip: redisServerMissing() }, () => {
  let redis: TestRedis;
  const open: Coordination[] = [];
  const replica = (secret: string, windowSeconds = 60) => {
    const coordination = createCoordination({
      redisUrl: redis.url,
      keyedHash: keyedHashOf(secret),
      loginThrottleWindowSeconds: windowSeconds,
    });
    open.push(coordination);
    return coordination;
  };
  const healthy = (...replicas: Coordination[]) =>
    eventually('coordination ok', () => replicas.every((r) => r.status().status === 'ok'), 10_000);

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const coordination of open) await coordination.close();
    await redis?.close();
  });

  it('delivers a change here synchronously and pushes it to the other replica, never twice here', async () => {
    const secret = randomBytes(32).toString('base64url');
    const [a, b] = [replica(secret), replica(secret)];
    const stranger = replica(randomBytes(32).toString('base64url')); // another deployment on the same Redis
    await healthy(a, b, stranger);
    const seen = { a: [] as Invalidation[], b: [] as Invalidation[], stranger: [] as Invalidation[] };
    a.bus.subscribe((event) => seen.a.push(event));
    b.bus.subscribe((event) => seen.b.push(event));
    stranger.bus.subscribe((event) => seen.stranger.push(event));

    const published = a.bus.publish({ kind: 'apiKey', id: 'key_revoked' });
    assert.deepEqual(seen.a, [{ kind: 'apiKey', id: 'key_revoked' }], 'here before publish resolves');
    await published;
    // Pushed, not polled: nothing else would ever tell b (the deadline only guards against a hang).
    await eventually('the other replica hears it', () => seen.b.length === 1, 30_000);
    assert.deepEqual(seen.b, [{ kind: 'apiKey', id: 'key_revoked' }]);

    await b.bus.publish({ kind: 'user', id: 'usr_disabled' });
    await eventually('a hears b', () => seen.a.length === 2, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(seen.a, [
      { kind: 'apiKey', id: 'key_revoked' },
      { kind: 'user', id: 'usr_disabled' },
    ]);
    assert.deepEqual(
      seen.b,
      [
        { kind: 'apiKey', id: 'key_revoked' },
        { kind: 'user', id: 'usr_disabled' },
      ],
      'b does not hear its own message back',
    );
    assert.deepEqual(seen.stranger, [], 'a deployment with another secret shares nothing');
  });

  it('counts failures and attempts in flight across replicas, in fixed windows', async () => {
    const secret = randomBytes(32).toString('base64url');
    const [a, b] = [replica(secret, 1), replica(secret, 1)];
    await healthy(a, b);
    assert.equal(await a.failures.fail('login:acct:alice'), 1);
    assert.equal(await b.failures.fail('login:acct:alice'), 2);
    const peek = await a.failures.peek('login:acct:alice');
    assert.equal(peek.count, 2);
    assert.equal(peek.retryAfterSeconds, 1);
    assert.deepEqual(await a.failures.peek('login:acct:bob'), { count: 0, retryAfterSeconds: 0 });
    // So is the time of the last failure (on Redis's clock), which the account-wide delay counts from.
    const sinceAlice = await b.failures.begin('login:acct:alice');
    const sinceBob = await b.failures.begin('login:acct:bob');
    sinceAlice.end();
    sinceBob.end();
    assert.equal(typeof sinceAlice.msSinceLastFailure, 'number');
    assert.ok(sinceAlice.msSinceLastFailure! >= 0);
    assert.equal(sinceBob.msSinceLastFailure, undefined, 'no failure, no time');

    const first = await a.failures.begin('login:ip:10.0.0.1');
    const second = await b.failures.begin('login:ip:10.0.0.1');
    assert.equal(first.inFlight, 1);
    assert.equal(second.inFlight, 2, 'b sees the attempt a has in flight');
    first.end();
    first.end(); // once only
    second.end();
    await eventually('in-flight marks gone', async () => {
      const third = await a.failures.begin('login:ip:10.0.0.1');
      third.end();
      return third.inFlight === 1;
    });

    await eventually('the window ends', async () => (await b.failures.peek('login:acct:alice')).count === 0, 3000);
    assert.equal(await b.failures.fail('login:acct:alice'), 1, 'a new window starts');
    await a.failures.reset('login:acct:alice');
    assert.equal((await b.failures.peek('login:acct:alice')).count, 0);
    const afterReset = await b.failures.begin('login:acct:alice');
    afterReset.end();
    assert.equal(afterReset.msSinceLastFailure, undefined, 'a reset forgets the last failure too');
  });

  it('degrades when Redis stops (caches keep seconds, throttling per replica) and recovers by itself when it is back', async () => {
    const secret = randomBytes(32).toString('base64url');
    const [a, b] = [replica(secret), replica(secret)];
    await healthy(a, b);
    const statuses: boolean[] = [];
    b.bus.onStatus((ok) => statuses.push(ok));
    const cache = new RenewingCache<string>({ maxEntries: 10, ttlMs: () => 300_000, retryMs: 1000, bus: b.bus });
    await cache.load('k', async () => 'before');
    assert.equal(
      cache.cached('k', async () => 'x'),
      'before',
    );

    await redis.stop();
    await eventually('both degraded', () => a.status().status === 'degraded' && b.status().status === 'degraded', 10_000);
    assert.deepEqual(statuses, [false]);
    assert.equal(
      cache.cached('k', async () => 'x'),
      undefined,
      'the cache started over going down',
    );

    // Throttling goes on per replica, answering at once rather than waiting for Redis: the
    // calls end before Redis is back, and b's count apart from a's shows where they were answered.
    assert.equal(await a.failures.fail('login:acct:carol'), 1);
    assert.equal(await a.failures.fail('login:acct:carol'), 2);
    assert.equal((await a.failures.peek('login:acct:carol')).count, 2);
    assert.equal((await b.failures.peek('login:acct:carol')).count, 0, 'b counts on its own meanwhile');
    const attempt = await a.failures.begin('login:acct:carol');
    assert.equal(attempt.inFlight, 1);
    attempt.end();

    // While degraded an entry is read again within seconds, not after its usual five minutes.
    let reads = 0;
    const read = async () => `value ${++reads}`;
    // (Its TTL is 300 s: re-read within this deadline, it lived the degraded few seconds.)
    await cache.load('short', read);
    await eventually('the degraded entry is read again', () => cache.cached('short', read) === 'value 2', 60_000);

    // A change here still takes effect here at once.
    const seenA: Invalidation[] = [];
    a.bus.subscribe((event) => seenA.push(event));
    await a.bus.publish({ kind: 'tenant', id: 'ten_1' });
    assert.deepEqual(seenA, [{ kind: 'tenant', id: 'ten_1' }]);

    await cache.load('k', async () => 'during');
    await redis.start();
    await healthy(a, b);
    assert.deepEqual(statuses, [false, true]);
    assert.equal(
      cache.cached('k', async () => 'x'),
      undefined,
      'the cache started over coming back',
    );

    const seenB: Invalidation[] = [];
    b.bus.subscribe((event) => seenB.push(event));
    await a.bus.publish({ kind: 'apiKey', id: 'key_after' });
    await eventually('delivery works again', () => seenB.some((event) => event.id === 'key_after'), 1000);
    assert.equal(await a.failures.fail('login:acct:dave'), 1);
    assert.equal((await b.failures.peek('login:acct:dave')).count, 1, 'counting is shared again');
  });
});
