// The sign-in Throttle's account-wide growing delay, on the real in-process counter
// with a clock the test moves: which delay follows which failure is exact here, with
// no waiting. (sessions.test.ts and two-factor.test.ts drive the limits over HTTP;
// test/replicas/redis.test.ts across two replicas on Redis.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LocalFailureCounter } from '../../src/platform/coordination/failure-counter.js';
import { ConfigError, loadConfig } from '../../src/platform/config.js';
import { AppError } from '../../src/platform/errors.js';
import { backoffDelaySeconds, type Limit, Throttle } from '../../src/areas/auth/sessions/throttle.js';

function setup(windowSeconds = 900) {
  const clock = { now: 1_700_000_000_000 };
  const counter = new LocalFailureCounter(windowSeconds, () => clock.now);
  const throttle = new Throttle(counter, 'slow down');
  const limits: Limit[] = [{ key: 'login:acct:alice', backoff: { after: 3, maxDelaySeconds: 10 } }];
  /** The Retry-After a new attempt gets now, or 0 when it may go ahead (and then fails if `fail`). */
  const attempt = async (fail = true): Promise<number> => {
    let started: Awaited<ReturnType<Throttle['begin']>>;
    try {
      started = await throttle.begin(limits);
    } catch (error) {
      assert.ok(error instanceof AppError && error.code === 'TOO_MANY_REQUESTS', String(error));
      return error.extra.retryAfterSeconds!;
    }
    if (fail) await started.fail();
    started.end();
    return 0;
  };
  return { clock, counter, throttle, limits, attempt };
}

describe('sign-in throttle: the account-wide growing delay', () => {
  it('doubles per further failure from the threshold on, up to its cap, counted from the last failure', async () => {
    const { clock, attempt } = setup();
    for (let i = 0; i < 3; i++) assert.equal(await attempt(), 0, 'under the threshold nothing waits');
    const seen: number[] = [];
    for (let failures = 3; failures <= 8; failures++) {
      const delay = await attempt();
      seen.push(delay);
      clock.now += delay * 1000 - 1;
      assert.equal(await attempt(), 1, 'one millisecond early is still refused');
      clock.now += 1;
      assert.equal(await attempt(), 0, 'on time, the next attempt goes ahead (and fails)');
    }
    assert.deepEqual(seen, [1, 2, 4, 8, 10, 10]);
    assert.deepEqual(
      [3, 4, 5, 6, 7, 40, 10_000].map((n) => backoffDelaySeconds(n, { after: 3, maxDelaySeconds: 10 })),
      [1, 2, 4, 8, 10, 10, 10],
    );
  });

  it('refused attempts add nothing, and the delay ends with the window', async () => {
    const { clock, counter, attempt } = setup(60);
    for (let i = 0; i < 3; i++) assert.equal(await attempt(), 0);
    for (let i = 0; i < 5; i++) assert.equal(await attempt(), 1);
    assert.equal((await counter.peek('login:acct:alice')).count, 3);
    clock.now += 60_000;
    assert.equal(await attempt(), 0, 'a new window starts from nothing');
    assert.equal((await counter.peek('login:acct:alice')).count, 1);
  });

  it('at the threshold, counts attempts in flight: a parallel burst cannot outrun it', async () => {
    const { throttle, limits, attempt } = setup();
    await attempt();
    await attempt();
    const inFlight = await throttle.begin(limits); // would be the third failure
    assert.equal(await attempt(false), 1, 'waits for the one in flight');
    await inFlight.fail();
    inFlight.end();
    assert.equal(await attempt(false), 1, 'then for the delay after it');
  });

  it('the Retry-After of a refused attempt is the longest of its limits', async () => {
    const { clock, counter, throttle } = setup(600);
    const limits: Limit[] = [
      { key: 'login:acct-ip:alice|10.0.0.1', max: 2 },
      { key: 'login:acct:alice', backoff: { after: 3, maxDelaySeconds: 10 } },
    ];
    for (let i = 0; i < 2; i++) await counter.fail('login:acct-ip:alice|10.0.0.1');
    clock.now += 100_000;
    for (let i = 0; i < 3; i++) await counter.fail('login:acct:alice');
    await assert.rejects(throttle.begin(limits), (error: AppError) => error.extra.retryAfterSeconds === 500);
  });
});

describe('sign-in throttling configuration', () => {
  const rejects = (env: Record<string, string>, variable: string, message: RegExp) =>
    assert.throws(
      () => loadConfig(env),
      (error: Error) => error instanceof ConfigError && error.variable === variable && message.test(error.message),
    );

  it('has per-(account, address) limits, and an account-wide delay far above them', () => {
    const { auth } = loadConfig({});
    assert.deepEqual(
      [auth.loginMaxFailuresPerAccountAndAddress, auth.loginMaxFailuresPerAddress, auth.loginAccountBackoffAfterFailures],
      [5, 20, 50],
    );
    assert.deepEqual([auth.twoFactorMaxFailuresPerAccountAndAddress, auth.twoFactorAccountBackoffAfterFailures], [10, 20]);
    assert.equal(auth.accountBackoffMaxSeconds, 300);
    rejects(
      { GATEWAY_LOGIN_MAX_FAILURES_PER_ACCOUNT_AND_ADDRESS: '10', GATEWAY_LOGIN_ACCOUNT_BACKOFF_AFTER_FAILURES: '10' },
      'GATEWAY_LOGIN_ACCOUNT_BACKOFF_AFTER_FAILURES',
      /between 11 and/,
    );
  });

  it('refuses the retired per-account variables, naming their replacements', () => {
    rejects({ GATEWAY_LOGIN_MAX_FAILURES_PER_ACCOUNT: '5' }, 'GATEWAY_LOGIN_MAX_FAILURES_PER_ACCOUNT', /PER_ACCOUNT_AND_ADDRESS/);
    rejects({ GATEWAY_2FA_MAX_FAILURES_PER_ACCOUNT: '5' }, 'GATEWAY_2FA_MAX_FAILURES_PER_ACCOUNT', /2FA_ACCOUNT_BACKOFF/);
  });

  it('GATEWAY_TRUST_PROXY: off, on (one proxy) or a number of proxies', () => {
    assert.equal(loadConfig({}).trustProxyHops, 0);
    assert.equal(loadConfig({ GATEWAY_TRUST_PROXY: 'off' }).trustProxyHops, 0);
    assert.equal(loadConfig({ GATEWAY_TRUST_PROXY: 'on' }).trustProxyHops, 1);
    assert.equal(loadConfig({ GATEWAY_TRUST_PROXY: '2' }).trustProxyHops, 2);
    for (const bad of ['yes', '0', '11']) rejects({ GATEWAY_TRUST_PROXY: bad }, 'GATEWAY_TRUST_PROXY', /proxy hops/);
  });
});
