// Issue 30: when the identity provider deactivates (`active: false`) or deletes a person,
// everything they hold ends at once: the live session's access token, its refresh
// cookie, every other refresh family, and the API keys they created are refused on the
// very next request (the caches are told through the invalidation bus, not waited out),
// and sign-in is refused. Reactivating does not bring any of it back: it needs a fresh
// sign-in, and the keys stay revoked until an admin activates them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway, type TestResponse } from '../../helpers/gateway.js';
import { issueApiKey } from '../../../src/areas/auth/api-keys/service.js';
import * as OTPAuth from 'otpauth';
import { oktaUser, scim, scimTenant, type ScimTenant } from './support.js';

const COOKIE = 'service_refresh_token';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

function refreshCookieOf(response: TestResponse): string {
  const cookie = response.headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`));
  assert.ok(cookie, 'a refresh cookie');
  return cookie.split(';')[0]!.slice(COOKIE.length + 1);
}

describe('SCIM deactivation ends every credential at once', () => {
  let gw: TestGateway;
  let t: ScimTenant;
  const password = 'provisioned password 1';

  const login = (username: string) => gw.request('POST', '/api/auth/login', { json: { username, password } });
  const me = (token: string) => gw.request('GET', '/api/auth/me', { token });
  const refresh = (cookie: string) => gw.request('POST', '/api/auth/refresh', { headers: { cookie: `${COOKIE}=${cookie}` } });
  const workspaces = (apiKey: string) => gw.request('GET', '/api/os/workspaces', { apiKey });

  /** A provisioned person, signed in twice (two sessions), holding an API key they created, all of it in use (cached). */
  async function signedInPerson() {
    const created = await scim(gw, t.scimToken, 'POST', '/Users', oktaUser({ password }));
    assert.equal(created.status, 201, created.text);
    const user = created.body as { id: string; userName: string };
    const first = await login(user.userName);
    assert.equal(first.status, 200, first.text);
    const second = await login(user.userName);
    const { key } = await issueApiKey(gw.ctx, t.tenantId, { name: 'personal integration' }, user.id);
    const session = {
      token: first.body.token as string,
      cookie: refreshCookieOf(first),
      otherRefresh: second.body.refreshToken as string,
      key,
    };
    assert.equal((await me(session.token)).status, 200);
    assert.equal((await workspaces(key)).status, 200);
    return { user, ...session };
  }

  async function assertAllRefused(p: Awaited<ReturnType<typeof signedInPerson>>, when: string) {
    assert.equal((await me(p.token)).status, 401, `${when}: the access token`);
    assert.equal((await workspaces(p.key)).status, 401, `${when}: the API key`);
    assert.equal((await refresh(p.cookie)).status, 401, `${when}: the refresh cookie`);
    const other = await gw.request('POST', '/api/auth/refresh', { json: { refreshToken: p.otherRefresh } });
    assert.equal(other.status, 401, `${when}: the other session's refresh token`);
  }

  before(async () => {
    // The key cache keeps an entry for its longest (300 s): only the bus can make it let go in time.
    gw = await startGateway({ GATEWAY_KEY_CACHE_TTL_SECONDS: '300' });
    t = await scimTenant(gw, 'scim-deactivation');
  });
  after(async () => {
    assert.ok(!gw.logs().includes(t.scimToken.slice(5)), 'a SCIM token reached a log line');
    await gw.close();
  });

  it("Okta's deactivation (PATCH without a path, active false) refuses the session, the refresh cookie, the access token and the API key at once", async () => {
    const p = await signedInPerson();
    const patched = await scim(gw, t.scimToken, 'PATCH', `/Users/${p.user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.active, false);
    await assertAllRefused(p, 'after deactivation');
    assert.equal((await login(p.user.userName)).status, 401, 'sign-in');
    const [key] = await gw.ctx.db.query<{ status: string }>('SELECT status FROM api_keys WHERE created_by = $1', [p.user.id]);
    assert.equal(key!.status, 'revoked');

    // Reactivated: nothing that was cut works again; a fresh sign-in does.
    const reactivated = await scim(gw, t.scimToken, 'PATCH', `/Users/${p.user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', value: { active: true } }],
    });
    assert.equal(reactivated.body.active, true);
    await assertAllRefused(p, 'after reactivation');
    const fresh = await login(p.user.userName);
    assert.equal(fresh.status, 200, fresh.text);
    assert.equal((await me(fresh.body.token)).status, 200);
    assert.equal((await refresh(refreshCookieOf(fresh))).status, 200);
  });

  it('Entra\'s deactivation (Replace active "False") and a PUT with active false do the same', async () => {
    const entra = await signedInPerson();
    const patched = await scim(gw, t.scimToken, 'PATCH', `/Users/${entra.user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    assert.equal(patched.status, 200, patched.text);
    await assertAllRefused(entra, 'after Entra deactivation');
    assert.equal((await login(entra.user.userName)).status, 401);

    const put = await signedInPerson();
    const current = (await scim(gw, t.scimToken, 'GET', `/Users/${put.user.id}`)).body;
    const replaced = await scim(gw, t.scimToken, 'PUT', `/Users/${put.user.id}`, { ...current, active: false });
    assert.equal(replaced.status, 200, replaced.text);
    await assertAllRefused(put, 'after a PUT');
  });

  it('a DELETE ends everything too, and the person can no longer sign in', async () => {
    const p = await signedInPerson();
    assert.equal((await scim(gw, t.scimToken, 'DELETE', `/Users/${p.user.id}`)).status, 204);
    await assertAllRefused(p, 'after delete');
    assert.equal((await login(p.user.userName)).status, 401);
    const [key] = await gw.ctx.db.query<{ status: string }>('SELECT status FROM api_keys WHERE created_by = $1', [p.user.id]);
    assert.equal(key!.status, 'revoked', "the key is revoked, not left working under a deleted creator's name");
  });

  it('a sign-in half done (password given, two-factor code pending) cannot be completed after the deactivation, nor after a reactivation', async () => {
    const p = await signedInPerson();
    const setup = await gw.request('POST', '/api/auth/2fa/setup', { token: p.token });
    assert.equal(setup.status, 200, setup.text);
    const totp = OTPAuth.URI.parse(setup.body.otpauthUri) as OTPAuth.TOTP;
    const step = Math.floor(Date.now() / 30_000);
    const enabled = await gw.request('POST', '/api/auth/2fa/enable', {
      token: p.token,
      json: { code: totp.generate({ timestamp: step * 30_000 }) },
    });
    assert.equal(enabled.status, 200, enabled.text);
    const pending = await login(p.user.userName);
    assert.equal(pending.body.requiresTwoFactor, true, pending.text);
    const patch = (active: boolean) =>
      scim(gw, t.scimToken, 'PATCH', `/Users/${p.user.id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'replace', path: 'active', value: active }],
      });
    assert.equal((await patch(false)).status, 200);
    assert.equal((await patch(true)).status, 200);
    const verified = await gw.request('POST', '/api/auth/verify-2fa', {
      json: { twoFactorToken: pending.body.twoFactorToken, code: totp.generate({ timestamp: (step + 1) * 30_000 }) },
    });
    assert.equal(verified.status, 401, verified.text);
  });

  it("leaves other people's credentials alone", async () => {
    const bystander = await signedInPerson();
    const leaving = await signedInPerson();
    await scim(gw, t.scimToken, 'PATCH', `/Users/${leaving.user.id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', path: 'active', value: false }],
    });
    assert.equal((await me(bystander.token)).status, 200);
    assert.equal((await workspaces(bystander.key)).status, 200);
    assert.equal((await refresh(bystander.cookie)).status, 200);
  });
});
