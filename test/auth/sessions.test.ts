import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, seedTenant, seedUser, type TestGateway, type TestResponse, withoutCorrelation } from '../helpers/gateway.js';
import { generateApiKey, maskApiKey } from '../../src/areas/auth/api-keys/key-format.js';
import { newId } from '../../src/platform/ids.js';
import { loginThrottleKeys } from '../../src/areas/auth/sessions/service.js';

const COOKIE = 'service_refresh_token';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function refreshCookie(response: TestResponse): string | undefined {
  return response.headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`));
}

async function setStatus(gw: TestGateway, table: 'users' | 'tenants', id: string, status: 'active' | 'disabled') {
  await gw.ctx.db.query(`UPDATE ${table} SET status = $2 WHERE id = $1`, [id, status]);
  await gw.ctx.bus.publish({ kind: table === 'users' ? 'user' : 'tenant', id });
}

describe('auth sessions: login, refresh, logout, me', () => {
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<typeof seedTenant>>;
  let member: Awaited<ReturnType<typeof seedUser>>;
  const memberEmail = `Member.${Date.now()}@Example.com`;
  const secretsSeen: string[] = [];

  const login = async (username: string, password: string) => {
    const response = await gw.request('POST', '/api/auth/login', { json: { username, password } });
    if (response.body?.token) secretsSeen.push(response.body.token, response.body.refreshToken);
    return response;
  };
  const refresh = async (options: { json?: unknown; cookie?: string }) => {
    const response = await gw.request('POST', '/api/auth/refresh', {
      ...(options.json !== undefined ? { json: options.json } : {}),
      ...(options.cookie ? { headers: { cookie: `${COOKIE}=${options.cookie}` } } : {}),
    });
    if (response.body?.token) secretsSeen.push(response.body.token, response.body.refreshToken);
    return response;
  };

  before(async () => {
    // A short grace period so the test can wait it out.
    gw = await startGateway({ GATEWAY_REFRESH_REUSE_GRACE_SECONDS: '1', GATEWAY_ACCESS_TOKEN_TTL_MINUTES: '90' });
    tenant = await seedTenant(gw, 'sessions');
    member = await seedUser(gw, tenant.tenantId, ['member'], memberEmail);
    secretsSeen.push(tenant.admin.password, member.password);
  });
  after(async () => {
    // No password, access token or refresh token ever reaches a log line.
    const logs = gw.logs();
    assert.ok(logs.length > 0);
    for (const secret of secretsSeen) assert.ok(!logs.includes(secret), 'a secret appeared in the logs');
    await gw.close();
  });

  it('logs in by username with the spec 2.4 shape, a refresh cookie and a configured lifetime', async () => {
    const before = Date.now();
    const response = await login(member.username, member.password);
    assert.equal(response.status, 200);
    const { token, refreshToken, expiresAt, user, requiresTwoFactor } = response.body;
    assert.equal(typeof token, 'string');
    assert.match(refreshToken, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(requiresTwoFactor, undefined);
    // GATEWAY_ACCESS_TOKEN_TTL_MINUTES=90 in this gateway.
    const lifetime = Date.parse(expiresAt) - before;
    assert.ok(Math.abs(lifetime - 90 * 60_000) < 60_000, `lifetime ${lifetime} ms`);
    assert.equal(user.id, member.id);
    assert.equal(user.username, member.username);
    assert.equal(user.email, memberEmail);
    assert.equal(user.tenantId, tenant.tenantId);
    assert.deepEqual(user.roles, ['member']);
    assert.equal(user.twoFactorEnabled, false);
    assert.equal(user.password_hash, undefined);
    assert.equal(user.passwordHash, undefined);

    const cookie = refreshCookie(response);
    assert.ok(cookie, 'login sets the refresh cookie');
    const [pair, ...attributes] = cookie.split(/;\s*/);
    assert.equal(pair, `${COOKIE}=${refreshToken}`);
    const attrs = attributes.map((a) => a.toLowerCase());
    assert.ok(attrs.includes('httponly'));
    assert.ok(attrs.includes('secure'));
    assert.ok(attrs.includes('samesite=strict'));
    assert.ok(attrs.includes('path=/api/auth'));
    assert.ok(attrs.includes(`max-age=${30 * 86_400}`));
  });

  it('logs in by e-mail in the username field, any case, also on the legacy path', async () => {
    const response = await login(memberEmail.toUpperCase(), member.password);
    assert.equal(response.status, 200);
    assert.equal(response.body.user.id, member.id);
    const legacy = await gw.request('POST', '/api/Auth/login', { json: { username: memberEmail, password: member.password } });
    assert.equal(legacy.status, 200);
    assert.equal(legacy.body.user.id, member.id);
    secretsSeen.push(legacy.body.token, legacy.body.refreshToken);
  });

  it('rejects an `email` field and malformed bodies with 400 naming the field', async () => {
    const withEmail = await gw.request('POST', '/api/auth/login', { json: { email: memberEmail, password: member.password } });
    assert.equal(withEmail.status, 400);
    assert.equal(withEmail.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.ok(
      withEmail.body.errors.some((e: { field: string }) => e.field === 'email'),
      JSON.stringify(withEmail.body),
    );

    const both = await gw.request('POST', '/api/auth/login', {
      json: { username: member.username, email: memberEmail, password: member.password },
    });
    assert.equal(both.status, 400);
    assert.deepEqual(
      both.body.errors.map((e: { field: string }) => e.field),
      ['email'],
    );

    const noPassword = await gw.request('POST', '/api/auth/login', { json: { username: member.username } });
    assert.equal(noPassword.status, 400);
    assert.deepEqual(
      noPassword.body.errors.map((e: { field: string }) => e.field),
      ['password'],
    );

    const numeric = await gw.request('POST', '/api/auth/login', { json: { username: 42, password: 'x' } });
    assert.equal(numeric.status, 400);
    assert.equal(numeric.body.errors[0].field, 'username');

    const empty = await gw.request('POST', '/api/auth/login');
    assert.equal(empty.status, 400);
    const notJson = await gw.request('POST', '/api/auth/login', { body: '{"username":', headers: { 'content-type': 'application/json' } });
    assert.equal(notJson.status, 400);

    // Unknown fields are ignored.
    const extra = await gw.request('POST', '/api/auth/login', {
      json: { username: member.username, password: member.password, remember: true },
    });
    assert.equal(extra.status, 200);
    secretsSeen.push(extra.body.token, extra.body.refreshToken);
  });

  it('answers unknown user, wrong password, disabled user and disabled tenant identically', async () => {
    const wrong = await login(member.username, 'not-the-password');
    const unknown = await login('nobody-at-all', 'not-the-password');
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
    assert.deepEqual(withoutCorrelation(unknown.body), withoutCorrelation(wrong.body));
    assert.equal(refreshCookie(wrong), undefined);

    const other = await seedTenant(gw, 'to-disable');
    const disabledUser = await seedUser(gw, other.tenantId);
    secretsSeen.push(other.admin.password, disabledUser.password);
    await setStatus(gw, 'users', disabledUser.id, 'disabled');
    const disabled = await login(disabledUser.username, disabledUser.password);
    assert.equal(disabled.status, 401);
    assert.deepEqual(withoutCorrelation(disabled.body), withoutCorrelation(wrong.body));

    await setStatus(gw, 'tenants', other.tenantId, 'disabled');
    const tenantOff = await login(other.admin.username, other.admin.password);
    assert.equal(tenantOff.status, 401);
    assert.deepEqual(withoutCorrelation(tenantOff.body), withoutCorrelation(wrong.body));
  });

  it('issues an access token that works on /api/auth/me and /api/os/workspaces', async () => {
    const { body } = await login(tenant.admin.username, tenant.admin.password);
    const me = await gw.request('GET', '/api/auth/me', { token: body.token });
    assert.equal(me.status, 200);
    assert.deepEqual(me.body, body.user);
    assert.deepEqual(me.body.roles, ['admin']);
    assert.equal((await gw.request('GET', '/api/os/workspaces', { token: body.token })).status, 200);
    // The legacy casing answers the same.
    assert.equal((await gw.request('GET', '/api/Auth/me', { token: body.token })).status, 200);
  });

  it('/me needs a signed-in user: 401 without or with a bad token, 403 for an API key', async () => {
    const none = await gw.request('GET', '/api/auth/me');
    assert.equal(none.status, 401);
    const garbage = await gw.request('GET', '/api/auth/me', { token: 'eyJhbGciOiJub25lIn0.e30.' });
    assert.equal(garbage.status, 401);
    assert.deepEqual(withoutCorrelation(garbage.body), withoutCorrelation(none.body));
    // A refresh token is not an access token.
    const { body } = await login(member.username, member.password);
    assert.equal((await gw.request('GET', '/api/auth/me', { token: body.refreshToken })).status, 401);

    const key = generateApiKey();
    await gw.ctx.db.query('INSERT INTO api_keys (id, tenant_id, name, key_hash, masked_key) VALUES ($1, $2, $3, $4, $5)', [
      newId('apiKey'),
      tenant.tenantId,
      'ci',
      gw.ctx.secrets.hash('api-key', key),
      maskApiKey(key),
    ]);
    secretsSeen.push(key);
    assert.equal((await gw.request('GET', '/api/os/workspaces', { apiKey: key })).status, 200);
    const byKey = await gw.request('GET', '/api/auth/me', { apiKey: key });
    assert.equal(byKey.status, 403);
    assert.equal(byKey.body.code, 'FORBIDDEN');
  });

  it('a disabled user loses /me at once', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    secretsSeen.push(user.password);
    const { body } = await login(user.username, user.password);
    assert.equal((await gw.request('GET', '/api/auth/me', { token: body.token })).status, 200);
    await setStatus(gw, 'users', user.id, 'disabled');
    assert.equal((await gw.request('GET', '/api/auth/me', { token: body.token })).status, 401);
    const refreshed = await refresh({ json: { refreshToken: body.refreshToken } });
    assert.equal(refreshed.status, 401);
  });

  it('refreshes from the body or from the cookie, rotating the token and the cookie every time', async () => {
    const first = (await login(member.username, member.password)).body;
    const viaBody = await refresh({ json: { refreshToken: first.refreshToken } });
    assert.equal(viaBody.status, 200);
    assert.notEqual(viaBody.body.refreshToken, first.refreshToken);
    assert.notEqual(viaBody.body.token, first.token);
    assert.equal(viaBody.body.user.id, member.id);
    assert.ok(Date.parse(viaBody.body.expiresAt) > Date.now());
    assert.equal(refreshCookie(viaBody)?.split(';')[0], `${COOKIE}=${viaBody.body.refreshToken}`);
    assert.equal((await gw.request('GET', '/api/auth/me', { token: viaBody.body.token })).status, 200);

    // No body at all: the cookie carries the token.
    const viaCookie = await refresh({ cookie: viaBody.body.refreshToken });
    assert.equal(viaCookie.status, 200);
    assert.notEqual(viaCookie.body.refreshToken, viaBody.body.refreshToken);
    assert.equal(refreshCookie(viaCookie)?.split(';')[0], `${COOKIE}=${viaCookie.body.refreshToken}`);

    // An empty JSON body also falls back to the cookie.
    const emptyBody = await refresh({ json: {}, cookie: viaCookie.body.refreshToken });
    assert.equal(emptyBody.status, 200);

    // The historical capitalized path answers the same.
    const legacy = await gw.request('POST', '/api/Auth/refresh', { json: { refreshToken: emptyBody.body.refreshToken } });
    assert.equal(legacy.status, 200);
    secretsSeen.push(legacy.body.token, legacy.body.refreshToken);

    // The body wins over the cookie.
    const bodyWins = await refresh({ json: { refreshToken: 'x'.repeat(43) }, cookie: legacy.body.refreshToken });
    assert.equal(bodyWins.status, 401);
  });

  it('rejects missing, unknown and malformed refresh tokens', async () => {
    const none = await refresh({});
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 'INVALID_REFRESH_TOKEN');
    const unknown = await refresh({ json: { refreshToken: 'A'.repeat(43) } });
    assert.equal(unknown.status, 401);
    assert.deepEqual(withoutCorrelation(unknown.body), withoutCorrelation(none.body));
    const wrongType = await refresh({ json: { refreshToken: 12345 } });
    assert.equal(wrongType.status, 400);
    assert.equal(wrongType.body.errors[0].field, 'refreshToken');
    const empty = await refresh({ json: { refreshToken: '' } });
    assert.equal(empty.status, 400);
  });

  it('race policy: two refreshes with the same token at once both succeed, in the same family', async () => {
    const { body } = await login(member.username, member.password);
    const [a, b] = await Promise.all([
      refresh({ json: { refreshToken: body.refreshToken } }),
      refresh({ json: { refreshToken: body.refreshToken } }),
    ]);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.notEqual(a.body.refreshToken, b.body.refreshToken);
    // Both children keep working.
    const a2 = await refresh({ json: { refreshToken: a.body.refreshToken } });
    const b2 = await refresh({ json: { refreshToken: b.body.refreshToken } });
    assert.equal(a2.status, 200);
    assert.equal(b2.status, 200);
    const families = await gw.ctx.db.query<{ n: number }>(
      `SELECT count(DISTINCT family_id)::int AS n FROM refresh_tokens WHERE token_hash = ANY($1)`,
      [[a2.body.refreshToken, b2.body.refreshToken, body.refreshToken].map((t) => gw.ctx.secrets.hash('refresh-token', t))],
    );
    assert.equal(families[0]!.n, 1);
  });

  it('reuse of a rotated token after the grace period revokes the whole family', async () => {
    const { body } = await login(member.username, member.password);
    const second = await refresh({ json: { refreshToken: body.refreshToken } });
    assert.equal(second.status, 200);
    const third = await refresh({ json: { refreshToken: second.body.refreshToken } });
    assert.equal(third.status, 200);
    // Within the grace period a rotated token still works (the race policy)...
    const withinGrace = await refresh({ json: { refreshToken: second.body.refreshToken } });
    assert.equal(withinGrace.status, 200);
    await sleep(1_300);
    // ...after it, presenting it is reuse: 401, and the newest tokens die with it.
    const reuse = await refresh({ json: { refreshToken: body.refreshToken } });
    assert.equal(reuse.status, 401);
    assert.equal((await refresh({ json: { refreshToken: third.body.refreshToken } })).status, 401);
    assert.equal((await refresh({ cookie: withinGrace.body.refreshToken })).status, 401);
    // Another session of the same user is untouched.
    const other = (await login(member.username, member.password)).body;
    assert.equal((await refresh({ json: { refreshToken: other.refreshToken } })).status, 200);
    // Stored only as keyed hashes.
    const stored = await gw.ctx.db.query<{ token_hash: string }>('SELECT token_hash FROM refresh_tokens');
    assert.ok(!stored.some((r) => r.token_hash === body.refreshToken || r.token_hash === other.refreshToken));
  });

  it('expired refresh tokens are refused', async () => {
    const { body } = await login(member.username, member.password);
    await gw.ctx.db.query(`UPDATE refresh_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [
      gw.ctx.secrets.hash('refresh-token', body.refreshToken),
    ]);
    assert.equal((await refresh({ json: { refreshToken: body.refreshToken } })).status, 401);
    // Long-expired tokens are swept at the user's next login.
    const hash = gw.ctx.secrets.hash('refresh-token', body.refreshToken);
    await gw.ctx.db.query(`UPDATE refresh_tokens SET expires_at = now() - interval '2 days' WHERE token_hash = $1`, [hash]);
    await login(member.username, member.password);
    assert.deepEqual(await gw.ctx.db.query('SELECT id FROM refresh_tokens WHERE token_hash = $1', [hash]), []);
  });

  it('logout revokes the family and clears the cookie; without a token it is a no-op 204', async () => {
    const { body } = await login(member.username, member.password);
    const rotated = await refresh({ json: { refreshToken: body.refreshToken } });
    const out = await gw.request('POST', '/api/auth/logout', { headers: { cookie: `${COOKIE}=${rotated.body.refreshToken}` } });
    assert.equal(out.status, 204);
    const cleared = refreshCookie(out);
    assert.ok(cleared, 'logout clears the cookie');
    assert.match(cleared, /^service_refresh_token=;/);
    assert.match(cleared.toLowerCase(), /path=\/api\/auth/);
    assert.match(cleared.toLowerCase(), /expires=thu, 01 jan 1970|max-age=0/);
    assert.equal((await refresh({ json: { refreshToken: rotated.body.refreshToken } })).status, 401);
    // Even within the grace period, the old token does not revive a logged-out family.
    assert.equal((await refresh({ json: { refreshToken: body.refreshToken } })).status, 401);

    const viaBody = (await login(member.username, member.password)).body;
    assert.equal((await gw.request('POST', '/api/auth/logout', { json: { refreshToken: viaBody.refreshToken } })).status, 204);
    assert.equal((await refresh({ json: { refreshToken: viaBody.refreshToken } })).status, 401);

    assert.equal((await gw.request('POST', '/api/auth/logout')).status, 204);
    assert.equal((await gw.request('POST', '/api/auth/logout', { json: { refreshToken: 'unknown' } })).status, 204);
    assert.equal((await gw.request('POST', '/api/auth/logout', { json: { refreshToken: 7 } })).status, 400);
  });
});

describe('auth sessions: login throttling', () => {
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<typeof seedTenant>>;

  // Behind a trusted proxy, so each test can speak from its own client address.
  const loginFrom = (ip: string, username: string, password: string) =>
    gw.request('POST', '/api/auth/login', { json: { username, password }, headers: { 'x-forwarded-for': ip } });
  const assertThrottled = (response: TestResponse, retryAfter?: number) => {
    assert.equal(response.status, 429, response.text);
    assert.equal(response.body.code, 'TOO_MANY_REQUESTS');
    const seconds = Number(response.headers.get('retry-after'));
    assert.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= 600, `Retry-After ${seconds}`);
    if (retryAfter !== undefined) assert.equal(seconds, retryAfter);
  };

  before(async () => {
    gw = await startGateway({
      GATEWAY_TRUST_PROXY: 'on',
      GATEWAY_LOGIN_MAX_FAILURES_PER_ACCOUNT_AND_ADDRESS: '3',
      GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS: '8',
      GATEWAY_LOGIN_ACCOUNT_BACKOFF_AFTER_FAILURES: '9',
      GATEWAY_ACCOUNT_BACKOFF_MAX_SECONDS: '120',
      GATEWAY_LOGIN_THROTTLE_WINDOW_SECONDS: '600',
    });
    tenant = await seedTenant(gw, 'throttle');
  });
  after(() => gw.close());

  // Issue 26, item 3: five wrong passwords from anywhere locked the administrator out everywhere.
  it('locks an account out at one address, even for the right password, while the owner signs in from another', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    for (let i = 0; i < 3; i++) assert.equal((await loginFrom('10.1.0.1', user.username, 'wrong-password')).status, 401);
    assertThrottled(await loginFrom('10.1.0.1', user.username.toUpperCase(), user.password));
    assert.equal((await loginFrom('10.1.0.2', user.username, user.password)).status, 200, 'the owner, elsewhere');
    // Going on beyond the limit changes nothing for the owner: refused attempts are not counted.
    for (let i = 0; i < 5; i++) assertThrottled(await loginFrom('10.1.0.1', user.username, 'wrong-password'));
    assert.equal((await loginFrom('10.1.0.2', user.username, user.password)).status, 200);
    // Other accounts from the locked-out address are not affected.
    assert.equal((await loginFrom('10.1.0.1', tenant.admin.username, tenant.admin.password)).status, 200);
  });

  it('counts unknown accounts too, case-insensitively', async () => {
    for (const name of ['Ghost-User', 'ghost-user', 'GHOST-USER']) assert.equal((await loginFrom('10.2.0.1', name, 'x')).status, 401);
    assertThrottled(await loginFrom('10.2.0.1', 'ghost-user', 'x'));
    assert.equal((await loginFrom('10.2.0.2', 'ghost-user', 'x')).status, 401);
  });

  it('a successful login resets the count of its account at its address', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 2; i++) assert.equal((await loginFrom('10.3.0.1', user.username, 'wrong-password')).status, 401);
      assert.equal((await loginFrom('10.3.0.1', user.username, user.password)).status, 200);
    }
  });

  it('across addresses, an account far past its limit is slowed for everyone, the owner too; a success does not clear it', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    const accountKey = loginThrottleKeys.account(user.username);
    for (const [ip, failures] of [
      ['10.6.0.1', 3],
      ['10.6.0.2', 3],
      ['10.6.0.3', 2],
    ] as const)
      for (let i = 0; i < failures; i++) assert.equal((await loginFrom(ip, user.username, 'wrong-password')).status, 401);
    // Eight failures, under the account-wide nine: no delay, and the owner's sign-in leaves them counted.
    assert.equal((await loginFrom('10.6.0.9', user.username, user.password)).status, 200);
    assert.equal((await gw.ctx.failures.peek(accountKey)).count, 8);
    assert.equal((await loginFrom('10.6.0.3', user.username, 'wrong-password')).status, 401);
    // Nine, then as many more as a patient guesser spreads over time (recorded straight into the
    // real counter, so the test waits through no delay): the delay, which doubles per failure, is at its cap.
    for (let i = 0; i < 12; i++) await gw.ctx.failures.fail(accountKey);
    const fresh = await loginFrom('10.6.0.4', user.username, 'wrong-password');
    assertThrottled(fresh);
    assert.ok(Number(fresh.headers.get('retry-after')) <= 120, 'capped by GATEWAY_ACCOUNT_BACKOFF_MAX_SECONDS');
    assertThrottled(await loginFrom('10.6.0.9', user.username, user.password));
    assert.equal((await gw.ctx.failures.peek(accountKey)).count, 21, 'refused attempts are not counted');
    // Other accounts sign in as usual.
    assert.equal((await loginFrom('10.6.0.4', tenant.admin.username, tenant.admin.password)).status, 200);
  });

  it('limits failures per client address across accounts', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    for (let i = 0; i < 8; i++) assert.equal((await loginFrom('10.4.0.1', `spray-${i}`, 'guess')).status, 401);
    assertThrottled(await loginFrom('10.4.0.1', user.username, user.password));
    assert.equal((await loginFrom('10.4.0.2', user.username, user.password)).status, 200);
  });

  it('believes only the X-Forwarded-For entry the proxy appended, not what the client wrote before it', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    for (let i = 0; i < 3; i++) assert.equal((await loginFrom(`192.0.2.${i}, 10.7.0.1`, user.username, 'wrong-password')).status, 401);
    assertThrottled(await loginFrom('192.0.2.99, 10.7.0.1', user.username, user.password));
    assert.equal((await loginFrom('10.7.0.1, 10.7.0.2', user.username, user.password)).status, 200);
  });

  it('holds the limit against a parallel burst', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    const burst = await Promise.all(Array.from({ length: 8 }, () => loginFrom('10.5.0.1', user.username, 'wrong-password')));
    const statuses = burst.map((r) => r.status).sort();
    assert.deepEqual(statuses, [401, 401, 401, 429, 429, 429, 429, 429], statuses.join(','));
  });
});
