// The Account page's routes (issue 28): the signed-in person's sessions (list, end
// one, sign-out everywhere) and changing their own password.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, seedUser, startGateway, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { issueApiKey } from '../../src/areas/auth/api-keys/service.js';
import { newId } from '../../src/platform/ids.js';
import { loginThrottleKeys } from '../../src/areas/auth/sessions/service.js';

const COOKIE = 'service_refresh_token';

describe('auth account: sessions and password', () => {
  let gw: TestGateway;
  let tenant: Awaited<ReturnType<typeof seedTenant>>;
  let other: Awaited<ReturnType<typeof seedTenant>>;

  const login = async (user: { username: string; password: string }, userAgent = 'test-agent/1.0') => {
    const response = await gw.request('POST', '/api/auth/login', {
      json: { username: user.username, password: user.password },
      headers: { 'user-agent': userAgent },
    });
    assert.equal(response.status, 200, response.text);
    return response.body as { token: string; refreshToken: string };
  };
  const refresh = (refreshToken: string) => gw.request('POST', '/api/auth/refresh', { json: { refreshToken } });
  const sessions = (token: string) => gw.request('GET', '/api/auth/sessions', { token });

  before(async () => {
    gw = await startGateway();
    tenant = await seedTenant(gw, 'account');
    other = await seedTenant(gw, 'account-other');
  });
  after(() => gw.close());

  it('lists the caller’s live sessions with the client they signed in from, and marks the current one', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    const laptop = await login(user, 'Laptop Browser');
    const phone = await login(user, 'Phone Browser');
    await login({ username: tenant.admin.username, password: tenant.admin.password });

    const listed = await sessions(laptop.token);
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.data.length, 2, 'the user’s own sessions only');
    const [newest, oldest] = listed.body.data;
    assert.equal(newest.userAgent, 'Phone Browser', 'most recently used first');
    assert.equal(oldest.userAgent, 'Laptop Browser');
    assert.match(newest.id, /^fam_/);
    assert.equal(newest.address, '127.0.0.1');
    assert.deepEqual(
      listed.body.data.map((s: { current: boolean }) => s.current),
      [false, true],
    );
    for (const session of listed.body.data) {
      for (const field of ['createdAt', 'lastUsedAt', 'expiresAt']) assert.ok(!Number.isNaN(Date.parse(session[field])), field);
      assert.ok(!JSON.stringify(session).includes(laptop.refreshToken));
    }
    assert.deepEqual(
      (await sessions(phone.token)).body.data.map((s: { current: boolean }) => s.current),
      [true, false],
    );

    // A refresh keeps the session (same id and client), moves lastUsedAt, and the new token still knows it is current.
    const refreshed = await refresh(laptop.refreshToken);
    assert.equal(refreshed.status, 200);
    const after = await sessions(refreshed.body.token);
    assert.equal(after.body.data.length, 2);
    const laptopAfter = after.body.data.find((s: { id: string }) => s.id === oldest.id);
    assert.equal(laptopAfter.userAgent, 'Laptop Browser');
    assert.equal(laptopAfter.current, true);
    assert.ok(Date.parse(laptopAfter.lastUsedAt) >= Date.parse(oldest.lastUsedAt));
    assert.equal(after.body.data[0].id, oldest.id, 'the refreshed session is now the most recently used');

    // Logging out ends it: it leaves the list.
    await gw.request('POST', '/api/auth/logout', { json: { refreshToken: refreshed.body.refreshToken } });
    assert.deepEqual(
      (await sessions(phone.token)).body.data.map((s: { id: string }) => s.id),
      [newest.id],
    );
  });

  it('ends one of the caller’s sessions: its refresh fails, the others keep working; anyone else’s is a 404', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    const first = await login(user);
    const second = await login(user);
    const [secondSession, firstSession] = (await sessions(first.token)).body.data;

    // Someone else in the tenant (its admin included), another tenant's admin: 404, and nothing ends.
    const admin = await login({ username: tenant.admin.username, password: tenant.admin.password });
    const stranger = await login({ username: other.admin.username, password: other.admin.password });
    for (const token of [admin.token, stranger.token]) {
      assert.equal((await gw.request('DELETE', `/api/auth/sessions/${secondSession.id}`, { token })).status, 404);
    }
    for (const id of ['fam_nope', newId('tokenFamily'), 'x'.repeat(64)]) {
      assert.equal((await gw.request('DELETE', `/api/auth/sessions/${id}`, { token: first.token })).status, 404, id);
    }
    assert.equal((await gw.request('DELETE', `/api/auth/sessions/${'x'.repeat(65)}`, { token: first.token })).status, 400);
    assert.equal((await sessions(first.token)).body.data.length, 2);

    const ended = await gw.request('DELETE', `/api/auth/sessions/${secondSession.id}`, { token: first.token });
    assert.equal(ended.status, 204);
    assert.equal((await refresh(second.refreshToken)).status, 401, 'the ended session cannot refresh');
    assert.equal((await refresh(first.refreshToken)).status, 200, 'the other one still can');
    assert.equal((await gw.request('DELETE', `/api/auth/sessions/${secondSession.id}`, { token: first.token })).status, 404, 'ended once');
    assert.equal(firstSession.current, true);
  });

  it('signs out everywhere: every session of the user ends and the cookie is cleared; other users keep theirs', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    const a = await login(user);
    const b = await login(user);
    const colleague = await login({ username: tenant.admin.username, password: tenant.admin.password });
    const response = await gw.request('POST', '/api/auth/logout-all', { token: a.token });
    assert.equal(response.status, 204);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`));
    assert.ok(cookie && /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(cookie), cookie);
    assert.equal((await refresh(a.refreshToken)).status, 401);
    assert.equal((await refresh(b.refreshToken)).status, 401);
    assert.equal((await sessions(a.token)).body.data.length, 0);
    assert.equal((await refresh(colleague.refreshToken)).status, 200);
  });

  it('changes the password after checking the current one, and ends every other session', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    const here = await login(user);
    const elsewhere = await login(user);
    const change = (json: unknown, token = here.token) => gw.request('POST', '/api/auth/password', { token, json });

    const wrong = await change({ currentPassword: 'not the password', newPassword: 'a new password 1' });
    assert.equal(wrong.status, 400, 'the access token is fine: not a 401 that would send the client to refresh');
    assert.equal(wrong.body.errors[0].field, 'currentPassword');
    const short = await change({ currentPassword: user.password, newPassword: 'short' });
    assert.equal(short.status, 400);
    assert.equal(short.body.errors[0].field, 'newPassword');
    const same = await change({ currentPassword: user.password, newPassword: user.password });
    assert.equal(same.status, 400);
    for (const body of [
      {},
      { currentPassword: user.password },
      { newPassword: 'a new password 1' },
      { currentPassword: 1, newPassword: 2 },
    ]) {
      assert.equal((await change(body)).status, 400, JSON.stringify(body));
    }
    assert.equal((await refresh(elsewhere.refreshToken)).status, 200, 'nothing ended by a refused change');
    const elsewhereNow = await login(user);

    const changed = await change({ currentPassword: user.password, newPassword: 'a new password 1' });
    assert.equal(changed.status, 204, changed.text);
    assert.equal((await refresh(elsewhereNow.refreshToken)).status, 401, 'the other sessions ended');
    const kept = await refresh(here.refreshToken);
    assert.equal(kept.status, 200, 'the session that changed it goes on');
    const old = await gw.request('POST', '/api/auth/login', { json: { username: user.username, password: user.password } });
    assert.equal(old.status, 401);
    assert.equal((await login({ username: user.username, password: 'a new password 1' })).token.length > 0, true);
  });

  it('counts a wrong current password as a failed sign-in of the account', async () => {
    const user = await seedUser(gw, tenant.tenantId);
    const { token } = await login(user);
    const key = loginThrottleKeys.accountAtAddress(user.username, '127.0.0.1');
    const before = (await gw.ctx.failures.peek(key)).count;
    const wrong = await gw.request('POST', '/api/auth/password', {
      token,
      json: { currentPassword: 'wrong', newPassword: 'a new password 2' },
    });
    assert.equal(wrong.status, 400);
    assert.equal((await gw.ctx.failures.peek(key)).count, before + 1);
  });

  it('refuses the account routes without a person’s access token: 401 with none, 403 for an API key', async () => {
    const key = await issueApiKey(gw.ctx, tenant.tenantId, { name: 'account' }, tenant.admin.id);
    const routes: [string, string, unknown?][] = [
      ['GET', '/api/auth/sessions'],
      ['DELETE', `/api/auth/sessions/${newId('tokenFamily')}`],
      ['POST', '/api/auth/logout-all'],
      ['POST', '/api/auth/password', { currentPassword: 'whatever', newPassword: 'a new password 3' }],
    ];
    for (const [method, path, json] of routes) {
      const withJson = json === undefined ? {} : { json };
      assert.equal((await gw.request(method, path, withJson)).status, 401, `${method} ${path}`);
      assert.equal((await gw.request(method, path, { ...withJson, apiKey: key.key })).status, 403, `${method} ${path}`);
    }
    // A token issued outside a sign-in (no session in it) lists sessions, none of them current.
    const user = await seedUser(gw, tenant.tenantId);
    await login(user);
    const bare = await tokenFor(gw, user.id, tenant.tenantId);
    assert.deepEqual(
      (await sessions(bare)).body.data.map((s: { current: boolean }) => s.current),
      [false],
    );
  });
});
