// Issue 30, OIDC sign-in against real OpenID providers: two oidc-provider IdPs on
// loopback over HTTPS (a certificate the test makes, trusted by the gateway process
// through NODE_EXTRA_CA_CERTS), two tenants, and test users whose email,
// email_verified, groups and amr the test sets. Every refusal ends with no session.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { TEST_TMP } from '../helpers/paths.js';
import { totpCode } from '../../src/areas/auth/two-factor/totp.js';
import { browse, CookieJar, makeCa, startIdp, startSsoGateway, type SsoGateway, type TestCa, type TestIdp } from './sso-support.js';

interface Connection {
  id: string;
  redirectUri: string;
  clientId: string;
  idp: TestIdp;
  tenantId: string;
}

describe('OIDC sign-in against real IdPs', () => {
  let dir: string;
  let ca: TestCa;
  let idpA: TestIdp;
  let idpB: TestIdp;
  let gw: SsoGateway;
  let tenantA: string;
  let tenantB: string;
  /** Tenant A on IdP A, jit on, roles from groups; the same IdP with jit off; tenant B on IdP B (client_secret_post, ssoOnly, trustIdpMfa). */
  let a: Connection;
  let aNoJit: Connection;
  let b: Connection;
  const secrets: string[] = [];
  /** Every refresh and access token the gateway handed out here (none may be in its log). */
  const issued: string[] = [];

  const api = (method: string, url: string, json?: unknown, token = gw.admin.token) =>
    gw.process.request(method, url, { token, ...(json !== undefined ? { json } : {}) });

  async function connection(tenantId: string, idp: TestIdp, clientId: string, fields: Record<string, unknown>): Promise<Connection> {
    const clientSecret = randomBytes(18).toString('base64url');
    secrets.push(clientSecret);
    const created = await api('POST', `/api/auth/tenants/${tenantId}/sso/connections`, {
      name: clientId,
      issuer: idp.issuer,
      clientId,
      clientSecret,
      ...fields,
    });
    assert.equal(created.status, 201, created.text);
    return { id: created.body.id, redirectUri: created.body.redirectUri, clientId, idp, tenantId, clientSecret } as Connection & {
      clientSecret: string;
    };
  }
  const clientOf = (c: Connection & { clientSecret?: string }, method?: 'client_secret_post') => ({
    client_id: c.clientId,
    client_secret: (c as { clientSecret: string }).clientSecret,
    redirect_uris: [c.redirectUri],
    post_logout_redirect_uris: [`${gw.url}/`],
    // The IdP puts its session id (sid) in ID tokens for clients that take back-channel logout.
    backchannel_logout_uri: `${gw.url}/api/auth/sso/backchannel-logout/${c.id}`,
    backchannel_logout_session_required: true,
    ...(method ? { token_endpoint_auth_method: method } : {}),
  });

  /** From /start to the IdP's redirect back (not yet delivered to the gateway). */
  async function authorize(c: Connection, sub: string, returnTo = '/', jar = new CookieJar()) {
    const start = await browse(jar, `${gw.url}/api/auth/sso/${c.id}/start?returnTo=${encodeURIComponent(returnTo)}`, ca);
    assert.equal(start.status, 302, await start.text());
    c.idp.loginAs = sub;
    let location = new URL(start.headers.get('location')!);
    for (let hop = 0; hop < 8; hop++) {
      const response = await browse(jar, location, ca);
      const next = response.headers.get('location');
      if (!next) throw new Error(`the IdP stopped at ${location.pathname}: ${response.status} ${await response.text()}`);
      location = new URL(next, location);
      if (location.origin === gw.url) return { jar, start, callback: location };
    }
    throw new Error('the IdP never sent the browser back');
  }

  /** Delivers the IdP's redirect to the gateway: its answer, and where it sends the browser. */
  async function deliver(jar: CookieJar, callback: URL) {
    const response = await browse(jar, callback, ca);
    assert.equal(response.status, 302, await response.text());
    return { response, location: new URL(response.headers.get('location')!) };
  }

  /** The session the jar's refresh cookie holds, or the refusal. */
  async function session(jar: CookieJar) {
    const response = await browse(jar, `${gw.url}/api/auth/refresh`, ca, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const body = await response.json();
    if (response.status === 200) issued.push(body.token, body.refreshToken);
    return { status: response.status, body };
  }

  async function signIn(c: Connection, sub: string, returnTo = '/') {
    const { jar, callback } = await authorize(c, sub, returnTo);
    const { location, response } = await deliver(jar, callback);
    return { jar, location, response };
  }

  function assertRefused(location: URL, reason: string) {
    assert.equal(`${location.origin}${location.pathname}`, `${gw.url}/`);
    assert.equal(location.hash, `#ssoError=${reason}`);
  }

  async function assertNoSession(jar: CookieJar) {
    assert.equal(jar.get(gw.url, 'service_refresh_token'), undefined, 'no refresh cookie');
    assert.equal((await session(jar)).status, 401);
  }

  before(async () => {
    dir = mkdtempSync(path.join(TEST_TMP, 'sso-ca-'));
    ca = await makeCa(dir);
    [idpA, idpB] = await Promise.all([startIdp(ca), startIdp(ca)]);
    gw = await startSsoGateway(ca);
    tenantA = (await api('POST', '/api/auth/tenants', { name: 'SSO tenant A' })).body.id;
    tenantB = (await api('POST', '/api/auth/tenants', { name: 'SSO tenant B' })).body.id;
    a = await connection(tenantA, idpA, 'gateway-a', {
      jit: true,
      allowedEmailDomains: ['a.example'],
      roleMapping: { admins: 'admin', staff: 'member' },
    });
    aNoJit = await connection(tenantA, idpA, 'gateway-a-nojit', { jit: false, allowedEmailDomains: ['a.example'] });
    b = await connection(tenantB, idpB, 'gateway-b', {
      jit: true,
      ssoOnly: true,
      trustIdpMfa: true,
      allowedEmailDomains: ['b.example'],
      tokenEndpointAuthMethod: 'client_secret_post',
    });
    idpA.serve([clientOf(a), clientOf(aNoJit)]);
    idpB.serve([clientOf(b, 'client_secret_post')]);
  });
  after(async () => {
    await gw?.close();
    await idpA?.close();
    await idpB?.close();
    ca?.agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts with a redirect to the IdP: code flow, PKCE S256, state, nonce, and a Lax transaction cookie on /api/auth/sso for at most 10 minutes', async () => {
    const jar = new CookieJar();
    const start = await browse(jar, `${gw.url}/api/auth/sso/${a.id}/start?returnTo=%2Fdocuments`, ca);
    assert.equal(start.status, 302);
    const to = new URL(start.headers.get('location')!);
    assert.equal(to.origin, idpA.issuer);
    const params = to.searchParams;
    assert.equal(params.get('response_type'), 'code');
    assert.equal(params.get('client_id'), 'gateway-a');
    assert.equal(params.get('redirect_uri'), `${gw.url}/api/auth/sso/callback/${a.id}`);
    assert.deepEqual(params.get('scope')!.split(' ').sort(), ['email', 'openid', 'profile']);
    assert.equal(params.get('code_challenge_method'), 'S256');
    assert.match(params.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.match(params.get('state')!, /^[A-Za-z0-9_-]{20,}$/);
    assert.match(params.get('nonce')!, /^[A-Za-z0-9_-]{20,}$/);
    const cookie = start.headers.getSetCookie().find((c) => c.startsWith('gateway_sso_transaction='))!;
    assert.ok(cookie, 'the transaction cookie');
    const attributes = cookie.split(';').map((p) => p.trim().toLowerCase());
    for (const expected of ['httponly', 'secure', 'samesite=lax', 'path=/api/auth/sso']) assert.ok(attributes.includes(expected), expected);
    const maxAge = Number(attributes.find((p) => p.startsWith('max-age='))!.slice(8));
    assert.ok(maxAge > 0 && maxAge <= 600, `Max-Age ${maxAge}`);
    assert.equal(start.headers.get('cache-control'), 'no-store');
  });

  it("signs a new person in to the connection's tenant (jit), with the session a password login issues, and back to returnTo", async () => {
    idpA.users.set('alice', { email: 'alice@a.example', email_verified: true, groups: ['staff'] });
    const { jar, location, response } = await signIn(a, 'alice', '/documents?tab=mine');
    assert.equal(location.href, `${gw.url}/documents?tab=mine`);
    const refresh = response.headers.getSetCookie().find((c) => c.startsWith('service_refresh_token='))!;
    assert.match(refresh, /HttpOnly/i);
    assert.match(refresh, /SameSite=Strict/i);
    assert.match(refresh, /Path=\/api\/auth(;|$)/);
    const signedIn = await session(jar);
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.user.tenantId, tenantA);
    assert.equal(signedIn.body.user.email, 'alice@a.example');
    assert.equal(signedIn.body.user.emailVerified, true);
    assert.deepEqual(signedIn.body.user.roles, ['member']);
    assert.match(signedIn.body.user.username, /^alice\.[0-9a-z]{10}$/);
    const me = await gw.process.request('GET', '/api/auth/me', { token: signedIn.body.token });
    assert.equal(me.body.id, signedIn.body.user.id);
  });

  it("refuses IdP A's code at tenant B's callback, with no session", async () => {
    idpA.users.set('mallory', { email: 'mallory@a.example', email_verified: true });
    const { jar, callback } = await authorize(a, 'mallory');
    const atB = new URL(`${gw.url}/api/auth/sso/callback/${b.id}${callback.search}`);
    const { location } = await deliver(jar, atB);
    assertRefused(location, 'transaction');
    await assertNoSession(jar);
    // The transaction is spent by that attempt: its own callback fails now too.
    assertRefused((await deliver(jar, callback)).location, 'transaction');
    await assertNoSession(jar);
  });

  it('refuses a replayed callback (the transaction is spent), a missing state, a swapped state and another transaction’s code', async () => {
    idpA.users.set('replay', { email: 'replay@a.example', email_verified: true });
    const first = await authorize(a, 'replay');
    const replayJar = first.jar.clone();
    const done = await deliver(first.jar, first.callback);
    assert.equal(done.location.hash, '');
    assert.equal((await session(first.jar)).status, 200);
    // The same redirect again, with the transaction cookie it came with: spent.
    assertRefused((await deliver(replayJar, first.callback)).location, 'transaction');
    assert.equal(replayJar.get(gw.url, 'service_refresh_token'), undefined);

    // No state at all.
    const noState = await authorize(a, 'replay');
    const stripped = new URL(noState.callback);
    stripped.searchParams.delete('state');
    assertRefused((await deliver(noState.jar, stripped)).location, 'transaction');
    await assertNoSession(noState.jar);

    // Two sign-ins in two browsers: each one's cookie with the other's code and state.
    const one = await authorize(a, 'replay');
    const two = await authorize(a, 'replay');
    assertRefused((await deliver(one.jar, two.callback)).location, 'transaction');
    await assertNoSession(one.jar);

    // One's own state, with the code the IdP issued to the other transaction (its PKCE verifier and nonce differ).
    const three = await authorize(a, 'replay');
    const four = await authorize(a, 'replay');
    const injected = new URL(three.callback);
    injected.searchParams.set('code', four.callback.searchParams.get('code')!);
    assertRefused((await deliver(three.jar, injected)).location, 'idp');
    await assertNoSession(three.jar);
  });

  it('refuses a callback whose iss is not the issuer (RFC 9207), and an IdP error answer', async () => {
    idpA.users.set('iss', { email: 'iss@a.example', email_verified: true });
    const { jar, callback } = await authorize(a, 'iss');
    const wrong = new URL(callback);
    assert.equal(wrong.searchParams.get('iss'), idpA.issuer, 'the IdP sends iss');
    wrong.searchParams.set('iss', idpB.issuer);
    assertRefused((await deliver(jar, wrong)).location, 'idp');
    await assertNoSession(jar);

    const denied = await authorize(a, 'iss');
    const error = new URL(denied.callback);
    error.search = `?error=access_denied&state=${denied.callback.searchParams.get('state')}&iss=${encodeURIComponent(idpA.issuer)}`;
    assertRefused((await deliver(denied.jar, error)).location, 'idp');
    await assertNoSession(denied.jar);
  });

  it('links an existing account only when the IdP verified the address, the domain is allowed and the local address was verified', async () => {
    const users = `/api/auth/tenants/${tenantA}/users`;
    const make = async (username: string, email: string, emailVerified: boolean) => {
      const created = await api('POST', users, { username, password: 'p'.repeat(14), email, emailVerified });
      assert.equal(created.status, 201, created.text);
      return created.body.id as string;
    };
    const carol = await make('carol', 'carol@a.example', true);
    const dave = await make('dave', 'dave@a.example', false);

    // The IdP does not vouch for the address: no link (jit makes another account; without jit, refused).
    idpA.users.set('carol-unverified', { email: 'carol@a.example', email_verified: false });
    const unverified = await signIn(aNoJit, 'carol-unverified');
    assertRefused(unverified.location, 'not_linked');
    await assertNoSession(unverified.jar);
    const other = await signIn(a, 'carol-unverified');
    const otherSession = await session(other.jar);
    assert.notEqual(otherSession.body.user.id, carol);
    assert.equal(otherSession.body.user.email, null, "another account's address is never given to a JIT user");

    // The local address was never verified: no link either.
    idpA.users.set('dave-idp', { email: 'dave@a.example', email_verified: true });
    assertRefused((await signIn(aNoJit, 'dave-idp')).location, 'not_linked');

    // Everything verified: the existing account.
    idpA.users.set('carol-idp', { email: 'carol@a.example', email_verified: true });
    const linked = await signIn(aNoJit, 'carol-idp');
    assert.equal((await session(linked.jar)).body.user.id, carol);
    // The account holds an identity from this issuer now: another IdP subject with the same address is never linked to it.
    idpA.users.set('carol-second', { email: 'carol@a.example', email_verified: true });
    assertRefused((await signIn(aNoJit, 'carol-second')).location, 'not_linked');
    assert.ok(dave);
  });

  it('keeps the same user when the IdP changes the address', async () => {
    idpA.users.set('frank', { email: 'frank@a.example', email_verified: true });
    const before = await session((await signIn(a, 'frank')).jar);
    idpA.users.set('frank', { email: 'frank.new@a.example', email_verified: true });
    const after = await session((await signIn(a, 'frank')).jar);
    assert.equal(after.body.user.id, before.body.user.id);
  });

  it('signs a SCIM-provisioned person in as that user, found by externalId (not the e-mail), and refuses them once deactivated', async () => {
    const minted = await api('POST', `/api/auth/tenants/${tenantA}/scim-tokens`, { name: 'IdP A provisioning' });
    assert.equal(minted.status, 201, minted.text);
    issued.push(minted.body.token);
    const scim = (method: string, url: string, json?: unknown) => api(method, `/api/auth/scim/v2${url}`, json, minted.body.token);
    const provisioned = await scim('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'provisioned.carol@a.example',
      externalId: 'scim-carol-sub',
      emails: [{ value: 'provisioned.carol@a.example', primary: true }],
      active: true,
    });
    assert.equal(provisioned.status, 201, provisioned.text);
    // The IdP names another address, unverified: only the externalId can find her.
    idpA.users.set('scim-carol-sub', { email: 'carol.other@a.example', email_verified: false, groups: ['staff'] });
    const { jar, location } = await signIn(a, 'scim-carol-sub');
    assert.equal(location.href, `${gw.url}/`);
    const signedIn = await session(jar);
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.user.id, provisioned.body.id);
    assert.equal(signedIn.body.user.username, 'provisioned.carol@a.example');

    const off = await scim('PATCH', `/Users/${provisioned.body.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    assert.equal(off.status, 200, off.text);
    assert.equal((await session(jar)).status, 401, 'the live session ended with the deactivation');
    const again = await signIn(a, 'scim-carol-sub');
    assertRefused(again.location, 'account_disabled');
    await assertNoSession(again.jar);
  });

  it('keeps unsafe returnTo values on our origin', async () => {
    idpA.users.set('grace', { email: 'grace@a.example', email_verified: true });
    for (const unsafe of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)']) {
      const { location } = await signIn(a, 'grace', unsafe);
      assert.equal(location.href, `${gw.url}/`, unsafe);
    }
  });

  it('refuses a person with no account when jit is off, and creates nobody', async () => {
    const count = async () =>
      (await api('GET', `/api/auth/tenants/${tenantA}/users`)).body.total ??
      (await api('GET', `/api/auth/tenants/${tenantA}/users`)).body.data.length;
    const before = await count();
    idpA.users.set('nobody', { email: 'nobody@a.example', email_verified: true });
    const { jar, location } = await signIn(aNoJit, 'nobody');
    assertRefused(location, 'not_linked');
    await assertNoSession(jar);
    assert.equal(await count(), before);
  });

  it('makes roles follow the groups at every sign-in, up and down, and never platform_admin', async () => {
    idpA.users.set('erin', { email: 'erin@a.example', email_verified: true, groups: ['staff'] });
    assert.deepEqual((await session((await signIn(a, 'erin')).jar)).body.user.roles, ['member']);
    idpA.users.set('erin', { email: 'erin@a.example', email_verified: true, groups: ['admins', 'platform_admin', 'platform_admins'] });
    const admin = await session((await signIn(a, 'erin')).jar);
    assert.deepEqual(admin.body.user.roles, ['admin']);
    // The promotion is real: the tenant's users are hers to list now, the platform's tenants are not.
    assert.equal((await gw.process.request('GET', `/api/auth/tenants/${tenantA}/users`, { token: admin.body.token })).status, 200);
    assert.equal((await gw.process.request('POST', '/api/auth/tenants', { token: admin.body.token, json: { name: 'nope' } })).status, 403);
    idpA.users.set('erin', { email: 'erin@a.example', email_verified: true, groups: [] });
    const demoted = await session((await signIn(a, 'erin')).jar);
    assert.deepEqual(demoted.body.user.roles, ['member']);
    assert.equal(
      (await gw.process.request('GET', `/api/auth/tenants/${tenantA}/users`, { token: admin.body.token })).status,
      403,
      'the old token too',
    );
  });

  it("never lands tenant B's IdP user in tenant A, and refuses a member's password in ssoOnly tenant B", async () => {
    const created = await api('POST', `/api/auth/tenants/${tenantB}/users`, {
      username: 'bea',
      password: 'bea-password-long',
      email: 'bea@b.example',
      emailVerified: true,
    });
    assert.equal(created.status, 201, created.text);
    const password = await gw.process.request('POST', '/api/auth/login', { json: { username: 'bea', password: 'bea-password-long' } });
    assert.equal(password.status, 401, 'ssoOnly: the right password gets the wrong-password answer');
    idpB.users.set('bea', { email: 'bea@b.example', email_verified: true });
    const viaSso = await session((await signIn(b, 'bea')).jar);
    assert.equal(viaSso.status, 200);
    assert.equal(viaSso.body.user.id, created.body.id);
    assert.equal(viaSso.body.user.tenantId, tenantB);
    // IdP A's person whose address claims tenant B's domain still lands in tenant A (and is not bea).
    idpA.users.set('bea-at-a', { email: 'bea@b.example', email_verified: true });
    const atA = await session((await signIn(a, 'bea-at-a')).jar);
    assert.equal(atA.body.user.tenantId, tenantA);
    assert.notEqual(atA.body.user.id, created.body.id);
  });

  it('still asks for TOTP after SSO, unless the connection trusts the IdP and the ID token shows a second factor', async () => {
    // Bea (tenant B) enrols TOTP.
    idpB.users.set('bea', { email: 'bea@b.example', email_verified: true, amr: ['pwd'] });
    const { token } = (await session((await signIn(b, 'bea')).jar)).body;
    const setup = await gw.process.request('POST', '/api/auth/2fa/setup', { token });
    const enabled = await gw.process.request('POST', '/api/auth/2fa/enable', { token, json: { code: totpCode(setup.body.secret) } });
    assert.equal(enabled.status, 200, enabled.text);

    // A password-only IdP sign-in: the TOTP step, with no session until it is done.
    const asked = await signIn(b, 'bea', '/account');
    assert.equal(asked.location.pathname, '/account');
    const twoFactorToken = new URLSearchParams(asked.location.hash.slice(1)).get('twoFactorToken');
    assert.ok(twoFactorToken, asked.location.href);
    await assertNoSession(asked.jar);
    const verified = await gw.process.request('POST', '/api/auth/verify-2fa', {
      json: { twoFactorToken, recoveryCode: enabled.body.recoveryCodes[0] },
    });
    assert.equal(verified.status, 200, verified.text);
    assert.equal(verified.body.user.tenantId, tenantB);
    issued.push(verified.body.token, verified.body.refreshToken);
    // The session verify-2fa started is the SSO sign-in's: its sign-out names the IdP's end-session URL too.
    const signedOut = await gw.process.request('POST', '/api/auth/logout', { json: { refreshToken: verified.body.refreshToken } });
    assert.equal(signedOut.status, 200, signedOut.text);
    assert.equal(new URL(signedOut.body.endSessionUrl).origin, idpB.issuer);
    issued.push(new URL(signedOut.body.endSessionUrl).searchParams.get('id_token_hint')!);

    // The IdP did MFA and connection B trusts it: no TOTP step.
    idpB.users.set('bea', { email: 'bea@b.example', email_verified: true, amr: ['pwd', 'mfa'] });
    const trusted = await signIn(b, 'bea');
    assert.equal(trusted.location.hash, '');
    assert.equal((await session(trusted.jar)).status, 200);

    // Connection A does not trust its IdP's MFA: asked whatever the amr says.
    idpA.users.set('hank', { email: 'hank@a.example', email_verified: true, amr: ['pwd', 'mfa'] });
    const hank = await session((await signIn(a, 'hank')).jar);
    const hankSetup = await gw.process.request('POST', '/api/auth/2fa/setup', { token: hank.body.token });
    await gw.process.request('POST', '/api/auth/2fa/enable', { token: hank.body.token, json: { code: totpCode(hankSetup.body.secret) } });
    const hankAgain = await signIn(a, 'hank');
    assert.match(hankAgain.location.hash, /^#twoFactorToken=/);
    await assertNoSession(hankAgain.jar);
  });

  it("answers the IdP's end-session URL at sign-out, and the session is over", async () => {
    idpA.users.set('ivy', { email: 'ivy@a.example', email_verified: true });
    const { jar } = await signIn(a, 'ivy');
    const logout = await browse(jar, `${gw.url}/api/auth/logout`, ca, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(logout.status, 200);
    const { endSessionUrl } = (await logout.json()) as { endSessionUrl: string };
    const url = new URL(endSessionUrl);
    assert.equal(url.origin, idpA.issuer);
    assert.ok(url.searchParams.get('id_token_hint'), 'id_token_hint');
    assert.equal(url.searchParams.get('post_logout_redirect_uri'), `${gw.url}/`);
    issued.push(url.searchParams.get('id_token_hint')!);
    assert.equal((await session(jar)).status, 401);
    // A password session's logout stays a plain 204.
    const password = await gw.process.request('POST', '/api/auth/login', {
      json: { username: gw.admin.username, password: gw.admin.password },
    });
    const plain = await gw.process.request('POST', '/api/auth/logout', { json: { refreshToken: password.body.refreshToken } });
    assert.equal(plain.status, 204);
  });

  it('ends the sessions a signed back-channel logout token names (by sub, by sid), and refuses forged ones', async () => {
    const backchannel = (c: Connection, logoutToken: string) =>
      fetch(`${gw.url}/api/auth/sso/backchannel-logout/${c.id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ logout_token: logoutToken }).toString(),
      });
    idpA.users.set('jack', { email: 'jack@a.example', email_verified: true });
    const first = await signIn(a, 'jack');
    const second = await signIn(a, 'jack');
    assert.equal((await session(first.jar)).status, 200);

    // Forged: another key, another issuer, another audience. Nothing ends.
    for (const forged of [
      await idpA.logoutToken('gateway-a', { sub: 'jack' }, { key: 'foreign' }),
      await idpA.logoutToken('gateway-a', { sub: 'jack' }, { issuer: idpB.issuer }),
      await idpA.logoutToken('gateway-b', { sub: 'jack' }),
    ])
      assert.equal((await backchannel(a, forged)).status, 400);
    assert.equal((await session(second.jar)).status, 200);

    // By sid: only that IdP session's gateway session.
    const sid = idpA.lastSid.get('jack');
    assert.ok(sid, 'the IdP put a sid in the ID token');
    const third = await signIn(a, 'jack');
    const bySid = await backchannel(a, await idpA.logoutToken('gateway-a', { sub: 'jack', sid: idpA.lastSid.get('jack')! }));
    assert.equal(bySid.status, 200, await bySid.text());
    assert.equal((await session(third.jar)).status, 401);

    // By sub: every session of jack from this connection.
    const bySub = await backchannel(a, await idpA.logoutToken('gateway-a', { sub: 'jack' }));
    assert.equal(bySub.status, 200);
    assert.equal((await session(first.jar)).status, 401);
    assert.equal((await session(second.jar)).status, 401);
  });

  it('rate limits refused callbacks per address on their own, so password sign-in still works', async () => {
    // The other tests' refusals count too; up to the limit (20 by default) more get the same refusal, then too_many_attempts.
    let last = '';
    for (let i = 0; i < 25 && last !== '#ssoError=too_many_attempts'; i++) {
      const response = await fetch(`${gw.url}/api/auth/sso/callback/${a.id}?code=x&state=y`, { redirect: 'manual' });
      last = new URL(response.headers.get('location')!).hash;
    }
    assert.equal(last, '#ssoError=too_many_attempts');
    const password = await gw.process.request('POST', '/api/auth/login', {
      json: { username: gw.admin.username, password: gw.admin.password },
    });
    assert.equal(password.status, 200);
  });

  it('writes no client secret, code, code_verifier or token to its log', () => {
    const log = gw.process.output();
    assert.ok(log.includes('sso sign-in refused'), 'the refusals were logged (so the log was read)');
    const handed = [...idpA.handed.codes, ...idpB.handed.codes, ...idpA.handed.verifiers, ...idpB.handed.verifiers];
    assert.ok(idpA.handed.codes.length > 5 && idpA.handed.verifiers.length > 5, 'the IdP saw the codes and verifiers');
    const tokens = [...idpA.handed.tokens, ...idpB.handed.tokens, ...issued];
    for (const secret of [...secrets, ...handed, ...tokens]) assert.ok(!log.includes(secret), `the log holds ${secret.slice(0, 12)}…`);
  });
});
