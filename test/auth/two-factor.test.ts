import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as OTPAuth from 'otpauth';
import { startGateway, seedTenant, seedUser, type TestGateway } from '../helpers/gateway.js';
import { matchTotpStep, totpCode } from '../../src/areas/auth/two-factor/totp.js';
import { generateApiKey, maskApiKey } from '../../src/areas/auth/api-keys/key-format.js';
import { newId } from '../../src/platform/ids.js';
import { twoFactorThrottleKeys } from '../../src/areas/auth/two-factor/service.js';

const STEP_MS = 30_000;
const COOKIE = 'service_refresh_token';

describe('TOTP module', () => {
  it('matches the RFC 6238 SHA-1 test vectors (last 6 digits)', () => {
    const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'; // "12345678901234567890"
    const vectors: Array<[number, string]> = [
      [59, '94287082'],
      [1111111109, '07081804'],
      [1111111111, '14050471'],
      [1234567890, '89005924'],
      [2000000000, '69279037'],
    ];
    for (const [seconds, eight] of vectors) assert.equal(totpCode(secret, seconds * 1000), eight.slice(-6), `T=${seconds}`);
  });

  it('accepts one step either side and no further, and names the step', () => {
    const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
    const now = 1_700_000_000_000;
    const step = Math.floor(now / STEP_MS);
    for (const offset of [-1, 0, 1]) assert.equal(matchTotpStep(secret, totpCode(secret, now + offset * STEP_MS), now), step + offset);
    for (const offset of [-2, 2]) assert.equal(matchTotpStep(secret, totpCode(secret, now + offset * STEP_MS), now), undefined);
    assert.equal(matchTotpStep(secret, '12345', now), undefined);
    assert.equal(matchTotpStep(secret, 'abcdef', now), undefined);
  });
});

describe('auth two-factor', () => {
  let gw: TestGateway;
  let tenantId: string;
  const secretsSeen: string[] = [];

  // `from`: the client's address, told by the (trusted) proxy in X-Forwarded-For.
  const post = async (path: string, json?: unknown, token?: string, from?: string) => {
    const response = await gw.request('POST', path, {
      ...(json !== undefined ? { json } : {}),
      ...(token ? { token } : {}),
      ...(from ? { headers: { 'x-forwarded-for': from } } : {}),
    });
    for (const field of ['token', 'refreshToken', 'twoFactorToken', 'secret'])
      if (response.body?.[field]) secretsSeen.push(response.body[field]);
    if (response.body?.recoveryCodes) secretsSeen.push(...response.body.recoveryCodes);
    return response;
  };
  const login = (user: { username: string; password: string }, from?: string) =>
    post('/api/auth/login', { username: user.username, password: user.password }, undefined, from);

  /** Codes from a real authenticator (otpauth, configured from the URI we returned), each for a fresh time step. */
  function authenticator(uri: string) {
    const app = OTPAuth.URI.parse(uri) as OTPAuth.TOTP;
    let lastStep = -1;
    return {
      app,
      next(): string {
        const step = Math.max(lastStep + 1, Math.floor(Date.now() / STEP_MS));
        assert.ok(step <= Math.floor(Date.now() / STEP_MS) + 1, 'test used more codes than the ±1 window allows');
        lastStep = step;
        return app.generate({ timestamp: step * STEP_MS });
      },
    };
  }

  /** A user with 2FA enabled, their access token and authenticator, and their recovery codes. */
  async function enrolledUser() {
    const user = await seedUser(gw, tenantId);
    secretsSeen.push(user.password);
    const { body } = await login(user);
    const setup = await post('/api/auth/2fa/setup', undefined, body.token);
    assert.equal(setup.status, 200);
    const totp = authenticator(setup.body.otpauthUri);
    const enable = await post('/api/auth/2fa/enable', { code: totp.next() }, body.token);
    assert.equal(enable.status, 200, JSON.stringify(enable.body));
    return {
      ...user,
      token: body.token as string,
      secret: setup.body.secret as string,
      totp,
      recoveryCodes: enable.body.recoveryCodes as string[],
    };
  }

  async function challengeFor(user: { username: string; password: string }, from?: string): Promise<string> {
    const response = await login(user, from);
    assert.equal(response.status, 200);
    assert.equal(response.body.requiresTwoFactor, true);
    return response.body.twoFactorToken;
  }

  before(async () => {
    gw = await startGateway({
      GATEWAY_TRUST_PROXY: 'on',
      GATEWAY_2FA_MAX_ATTEMPTS_PER_CHALLENGE: '3',
      GATEWAY_2FA_MAX_FAILURES_PER_ACCOUNT_AND_ADDRESS: '5',
      GATEWAY_2FA_ACCOUNT_BACKOFF_AFTER_FAILURES: '8',
      GATEWAY_ACCOUNT_BACKOFF_MAX_SECONDS: '120',
    });
    ({ tenantId } = await seedTenant(gw, 'twofactor'));
  });
  after(async () => {
    const logs = gw.logs();
    assert.ok(logs.length > 0);
    for (const secret of secretsSeen) assert.ok(!logs.includes(secret), 'a secret appeared in the logs');
    await gw.close();
  });

  it('enrolls with a real authenticator, then login needs the second factor and verify-2fa completes it', async () => {
    const user = await seedUser(gw, tenantId);
    secretsSeen.push(user.password);
    const plain = await login(user);
    assert.equal(plain.status, 200);

    const setup = await post('/api/auth/2fa/setup', undefined, plain.body.token);
    assert.equal(setup.status, 200);
    assert.match(setup.body.secret, /^[A-Z2-7]{32}$/);
    const uri = new URL(setup.body.otpauthUri);
    assert.equal(uri.protocol, 'otpauth:');
    assert.equal(uri.host, 'totp');
    assert.equal(decodeURIComponent(uri.pathname), `/Gateway:${user.username}`);
    assert.equal(uri.searchParams.get('secret'), setup.body.secret);
    assert.equal(uri.searchParams.get('issuer'), 'Gateway');
    // Stored encrypted, and not in force before enable.
    const [row] = await gw.ctx.db.query<{ totp_secret: string; totp_enabled: boolean }>(
      'SELECT totp_secret, totp_enabled FROM users WHERE id = $1',
      [user.id],
    );
    assert.ok(row!.totp_secret && !row!.totp_secret.includes(setup.body.secret));
    assert.equal(row!.totp_enabled, false);
    assert.equal((await login(user)).body.requiresTwoFactor, undefined);

    const totp = authenticator(setup.body.otpauthUri);
    const enable = await post('/api/auth/2fa/enable', { code: totp.next() }, plain.body.token);
    assert.equal(enable.status, 200);
    assert.equal(enable.body.recoveryCodes.length, 10);
    assert.equal(new Set(enable.body.recoveryCodes).size, 10);
    const me = await gw.request('GET', '/api/auth/me', { token: plain.body.token });
    assert.equal(me.body.twoFactorEnabled, true);
    assert.equal((await post('/api/auth/2fa/setup', undefined, plain.body.token)).status, 409);
    assert.equal((await post('/api/auth/2fa/enable', { code: '123456' }, plain.body.token)).status, 409);

    // Login: 200, requiresTwoFactor, userId and an opaque challenge; no token, no cookie, no user.
    const challenge = await login(user);
    assert.equal(challenge.status, 200);
    assert.equal(challenge.body.requiresTwoFactor, true);
    assert.equal(challenge.body.userId, user.id);
    assert.match(challenge.body.twoFactorToken, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(challenge.body.token, undefined);
    assert.equal(challenge.body.refreshToken, undefined);
    assert.equal(challenge.body.user, undefined);
    assert.equal(challenge.headers.getSetCookie().length, 0);

    const verified = await post('/api/auth/verify-2fa', { twoFactorToken: challenge.body.twoFactorToken, code: totp.next() });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    // Exactly the login response: the same fields, and the same cookie.
    assert.deepEqual(Object.keys(verified.body).sort(), Object.keys(plain.body).sort());
    assert.deepEqual(verified.body.user, { ...plain.body.user, twoFactorEnabled: true });
    assert.ok(Math.abs(Date.parse(verified.body.expiresAt) - Date.parse(plain.body.expiresAt)) < 5 * 60_000);
    const cookie = verified.headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`));
    assert.equal(cookie?.split(';')[0], `${COOKIE}=${verified.body.refreshToken}`);
    assert.match(cookie!, /HttpOnly/i);
    assert.equal((await gw.request('GET', '/api/auth/me', { token: verified.body.token })).status, 200);
    assert.equal((await post('/api/auth/refresh', { refreshToken: verified.body.refreshToken })).status, 200);

    // The challenge is single use, whatever the second factor.
    const reused = await post('/api/auth/verify-2fa', {
      twoFactorToken: challenge.body.twoFactorToken,
      recoveryCode: enable.body.recoveryCodes[0],
    });
    assert.equal(reused.status, 401);
    assert.equal(reused.body.code, 'INVALID_TWO_FACTOR');
  });

  it('a code works once: replay on a fresh challenge is refused', async () => {
    const user = await enrolledUser();
    const code = user.totp.next();
    assert.equal((await post('/api/auth/verify-2fa', { twoFactorToken: await challengeFor(user), code })).status, 200);
    const replay = await post('/api/auth/verify-2fa', { twoFactorToken: await challengeFor(user), code });
    assert.equal(replay.status, 401);
    assert.equal(replay.body.code, 'INVALID_TWO_FACTOR');
    // The enrollment code (an older step) is refused too.
    const [row] = await gw.ctx.db.query<{ totp_last_step: number }>('SELECT totp_last_step FROM users WHERE id = $1', [user.id]);
    const older = user.totp.app.generate({ timestamp: (row!.totp_last_step - 1) * STEP_MS });
    assert.equal((await post('/api/auth/verify-2fa', { twoFactorToken: await challengeFor(user), code: older })).status, 401);
  });

  it('recovery codes: accepted in `recoveryCode` or in `code`, each once, typed loosely', async () => {
    const user = await enrolledUser();
    const [first, second] = user.recoveryCodes;
    const viaField = await post('/api/auth/verify-2fa', { twoFactorToken: await challengeFor(user), recoveryCode: first });
    assert.equal(viaField.status, 200);
    assert.equal(viaField.body.user.id, user.id);
    const again = await post('/api/auth/verify-2fa', { twoFactorToken: await challengeFor(user), recoveryCode: first });
    assert.equal(again.status, 401);

    const loose = ` ${second!.toUpperCase().replace('-', ' ')} `;
    const viaCode = await post('/api/auth/verify-2fa', { twoFactorToken: await challengeFor(user), code: loose });
    assert.equal(viaCode.status, 200);
    assert.equal((await post('/api/auth/verify-2fa', { twoFactorToken: await challengeFor(user), code: second })).status, 401);

    // Stored only as keyed hashes.
    const stored = await gw.ctx.db.query<{ code_hash: string }>('SELECT code_hash FROM recovery_codes WHERE user_id = $1', [user.id]);
    assert.equal(stored.length, 10);
    for (const { code_hash } of stored)
      assert.ok(!user.recoveryCodes.some((c) => code_hash.includes(c) || code_hash.includes(c.replace('-', ''))));
  });

  it('a challenge dies after its attempts, and expires', async () => {
    const user = await enrolledUser();
    const twoFactorToken = await challengeFor(user);
    for (let i = 0; i < 3; i++) {
      const wrong = await post('/api/auth/verify-2fa', { twoFactorToken, code: '000000' });
      assert.equal(wrong.status, 401);
    }
    // Attempts used up: even the right code fails now.
    assert.equal((await post('/api/auth/verify-2fa', { twoFactorToken, code: user.totp.next() })).status, 401);

    const expiring = await challengeFor(user);
    await gw.ctx.db.query(`UPDATE two_factor_challenges SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [
      gw.ctx.secrets.hash('challenge', expiring),
    ]);
    assert.equal((await post('/api/auth/verify-2fa', { twoFactorToken: expiring, recoveryCode: user.recoveryCodes[0] })).status, 401);
    // The recovery code was not spent on the dead challenge.
    assert.equal(
      (await post('/api/auth/verify-2fa', { twoFactorToken: await challengeFor(user), recoveryCode: user.recoveryCodes[0] })).status,
      200,
    );

    // Challenges expire five minutes after login.
    const fresh = await challengeFor(user);
    const [row] = await gw.ctx.db.query<{ seconds: number }>(
      'SELECT extract(epoch FROM expires_at - now())::float8 AS seconds FROM two_factor_challenges WHERE token_hash = $1',
      [gw.ctx.secrets.hash('challenge', fresh)],
    );
    assert.ok(row!.seconds > 290 && row!.seconds <= 300, `expires in ${row!.seconds} s`);
  });

  it('limits second-factor failures per account and address across challenges: 429 with Retry-After', async () => {
    const user = await enrolledUser();
    const first = await challengeFor(user);
    for (let i = 0; i < 3; i++) assert.equal((await post('/api/auth/verify-2fa', { twoFactorToken: first, code: '111111' })).status, 401);
    const second = await challengeFor(user);
    for (let i = 0; i < 2; i++)
      assert.equal((await post('/api/auth/verify-2fa', { twoFactorToken: second, recoveryCode: 'aaaaa-bbbbb' })).status, 401);
    const blocked = await post('/api/auth/verify-2fa', { twoFactorToken: await challengeFor(user), code: user.totp.next() });
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
    // The limit is per account: the others are unaffected.
    const other = await enrolledUser();
    assert.equal((await post('/api/auth/verify-2fa', { twoFactorToken: await challengeFor(other), code: other.totp.next() })).status, 200);
  });

  // Issue 26, item 3: someone holding the password could keep the owner from the second step everywhere.
  it('wrong codes from one address do not keep the owner out at another; far past the limit the account waits everywhere', async () => {
    const user = await enrolledUser();
    const verifyFrom = (from: string, body: Record<string, string>) => post('/api/auth/verify-2fa', body, undefined, from);
    const first = await challengeFor(user, '10.8.0.1');
    for (let i = 0; i < 3; i++) assert.equal((await verifyFrom('10.8.0.1', { twoFactorToken: first, code: '111111' })).status, 401);
    const second = await challengeFor(user, '10.8.0.1');
    for (let i = 0; i < 2; i++) assert.equal((await verifyFrom('10.8.0.1', { twoFactorToken: second, code: '111111' })).status, 401);
    // Refused at that address even with a right (recovery) code, which stays unused.
    const twoFactorToken = await challengeFor(user, '10.8.0.1');
    const atStranger = await verifyFrom('10.8.0.1', { twoFactorToken, recoveryCode: user.recoveryCodes[0]! });
    assert.equal(atStranger.status, 429, atStranger.text);
    assert.ok(Number(atStranger.headers.get('retry-after')) >= 1);
    const owner = await verifyFrom('10.8.0.2', { twoFactorToken: await challengeFor(user, '10.8.0.2'), code: user.totp.next() });
    assert.equal(owner.status, 200, owner.text);

    // The owner's success clears none of the account's failures: three more from elsewhere make eight.
    const third = await challengeFor(user, '10.8.0.3');
    for (let i = 0; i < 3; i++) assert.equal((await verifyFrom('10.8.0.3', { twoFactorToken: third, code: '111111' })).status, 401);
    const accountKey = twoFactorThrottleKeys.account(user.id);
    assert.equal((await gw.ctx.failures.peek(accountKey)).count, 8);
    // As many more as a patient guesser spreads over time (straight into the real counter, so the
    // test waits through no delay): every address now waits the capped delay, the owner's too.
    for (let i = 0; i < 10; i++) await gw.ctx.failures.fail(accountKey);
    const everywhere = await verifyFrom('10.8.0.2', {
      twoFactorToken: await challengeFor(user, '10.8.0.2'),
      recoveryCode: user.recoveryCodes[0]!,
    });
    assert.equal(everywhere.status, 429, everywhere.text);
    const retryAfter = Number(everywhere.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 120, `Retry-After ${retryAfter}`);
  });

  it('verify-2fa refuses disabled users, bad input and unknown challenges', async () => {
    const user = await enrolledUser();
    const twoFactorToken = await challengeFor(user);
    await gw.ctx.db.query(`UPDATE users SET status = 'disabled' WHERE id = $1`, [user.id]);
    await gw.ctx.bus.publish({ kind: 'user', id: user.id });
    assert.equal((await post('/api/auth/verify-2fa', { twoFactorToken, code: user.totp.next() })).status, 401);

    const unknown = await post('/api/auth/verify-2fa', { twoFactorToken: 'A'.repeat(43), code: '123456' });
    assert.equal(unknown.status, 401);
    for (const [body, field] of [
      [{ code: '123456' }, 'twoFactorToken'],
      [{ twoFactorToken: 'x' }, 'code'],
      [{ twoFactorToken: 'x', code: '123456', recoveryCode: 'abcde-fghjk' }, 'code'],
      [{ twoFactorToken: 'x', code: 123456 }, 'code'],
      [{ twoFactorToken: 'x', code: '' }, 'code'],
    ] as const) {
      const response = await post('/api/auth/verify-2fa', body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.errors[0].field, field, JSON.stringify(body));
    }
    assert.equal((await post('/api/auth/verify-2fa')).status, 400);
  });

  it('enrollment routes need a signed-in user and valid input', async () => {
    const user = await seedUser(gw, tenantId);
    secretsSeen.push(user.password);
    const { body } = await login(user);
    for (const path of ['/api/auth/2fa/setup', '/api/auth/2fa/enable', '/api/auth/2fa/disable']) {
      const none = await post(path, { code: '123456' });
      assert.equal(none.status, 401, path);
    }
    const key = generateApiKey();
    await gw.ctx.db.query('INSERT INTO api_keys (id, tenant_id, name, key_hash, masked_key) VALUES ($1, $2, $3, $4, $5)', [
      newId('apiKey'),
      tenantId,
      'ci',
      gw.ctx.secrets.hash('api-key', key),
      maskApiKey(key),
    ]);
    secretsSeen.push(key);
    assert.equal((await gw.request('POST', '/api/auth/2fa/setup', { apiKey: key })).status, 403);

    assert.equal((await post('/api/auth/2fa/enable', { code: '123456' }, body.token)).status, 409, 'enable before setup');
    assert.equal((await post('/api/auth/2fa/disable', { password: user.password }, body.token)).status, 409, 'disable when not enabled');
    const setup = await post('/api/auth/2fa/setup', undefined, body.token);
    const missing = await post('/api/auth/2fa/enable', {}, body.token);
    assert.equal(missing.status, 400);
    assert.equal(missing.body.errors[0].field, 'code');
    const wrong = await post('/api/auth/2fa/enable', { code: '000000' }, body.token);
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.errors[0].field, 'code');
    // Calling setup again replaces the pending secret: codes from the old one stop working.
    const again = await post('/api/auth/2fa/setup', undefined, body.token);
    assert.notEqual(again.body.secret, setup.body.secret);
    const stale = authenticator(setup.body.otpauthUri).next();
    assert.equal((await post('/api/auth/2fa/enable', { code: stale }, body.token)).status, 400);
    assert.equal((await post('/api/auth/2fa/enable', { code: authenticator(again.body.otpauthUri).next() }, body.token)).status, 200);
  });

  it('disables with the password or a code, never with a wrong one, and login goes back to one step', async () => {
    const byPassword = await enrolledUser();
    const neither = await post('/api/auth/2fa/disable', {}, byPassword.token);
    assert.equal(neither.status, 400);
    const both = await post('/api/auth/2fa/disable', { code: '123456', password: 'x' }, byPassword.token);
    assert.equal(both.status, 400);
    const wrongPassword = await post('/api/auth/2fa/disable', { password: 'not-my-password' }, byPassword.token);
    assert.equal(wrongPassword.status, 400);
    assert.equal(wrongPassword.body.errors[0].field, 'password');
    const wrongCode = await post('/api/auth/2fa/disable', { code: '000000' }, byPassword.token);
    assert.equal(wrongCode.status, 400);
    assert.equal(wrongCode.body.errors[0].field, 'code');

    const off = await post('/api/auth/2fa/disable', { password: byPassword.password }, byPassword.token);
    assert.equal(off.status, 200);
    assert.equal(off.body.twoFactorEnabled, false);
    assert.equal(off.body.id, byPassword.id);
    const [row] = await gw.ctx.db.query<{ totp_secret: string | null; codes: number }>(
      'SELECT totp_secret, (SELECT count(*)::int FROM recovery_codes WHERE user_id = $1) AS codes FROM users WHERE id = $1',
      [byPassword.id],
    );
    assert.deepEqual(row, { totp_secret: null, codes: 0 });
    const plain = await login(byPassword);
    assert.equal(plain.status, 200);
    assert.equal(typeof plain.body.token, 'string');
    assert.equal(plain.body.requiresTwoFactor, undefined);

    const byCode = await enrolledUser();
    const pending = await challengeFor(byCode);
    const offByCode = await post('/api/auth/2fa/disable', { code: byCode.totp.next() }, byCode.token);
    assert.equal(offByCode.status, 200);
    // A challenge issued before 2FA was turned off is dead.
    assert.equal((await post('/api/auth/verify-2fa', { twoFactorToken: pending, recoveryCode: byCode.recoveryCodes[0] })).status, 401);
  });
});
