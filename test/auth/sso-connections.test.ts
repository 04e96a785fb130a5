// Issue 30, OIDC: a tenant's SSO connections (CRUD, who may, what is refused at save),
// the parts of SSO that need no IdP (ssoOnly password sign-in, discovery, emailVerified,
// roleForGroups, safe returnTo), and refusals that happen before any IdP is asked.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, seedUser, tokenFor, withoutCorrelation, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { closedLoopbackUrl } from '../helpers/closed-port.js';
import { randomBytes } from 'node:crypto';
import { roleForGroups } from '../../src/areas/auth/sso/connections.js';
import { transactionRepository } from '../../src/areas/auth/sso/repository.js';
import { safeReturnTo } from '../../src/areas/auth/sso/sign-in.js';
import { idpShowsMfa } from '../../src/areas/auth/sso/sign-in.js';
import { totpCode } from '../../src/areas/auth/two-factor/totp.js';

const CONNECTION_FIELDS = [
  'allowedEmailDomains',
  'backchannelLogoutUri',
  'clientId',
  'createdAt',
  'enabled',
  'groupsClaim',
  'id',
  'issuer',
  'jit',
  'name',
  'postLogoutRedirectUri',
  'redirectUri',
  'roleMapping',
  'scopes',
  'ssoOnly',
  'subjectClaim',
  'tenantId',
  'tokenEndpointAuthMethod',
  'trustIdpMfa',
  'updatedAt',
];

describe('SSO connections', () => {
  let gw: TestGateway;
  let world: World;
  /** An https issuer on loopback nobody listens on: allowed to a platform admin only. */
  let loopbackIssuer: string;
  const path = (tenantId: string, id?: string) => `/api/auth/tenants/${tenantId}/sso/connections${id ? `/${id}` : ''}`;
  const body = (extra: Record<string, unknown> = {}) => ({
    name: 'Corporate IdP',
    issuer: 'https://192.0.2.10/realms/acme',
    clientId: 'gateway',
    clientSecret: 'the-client-secret-value',
    ...extra,
  });

  before(async () => {
    // Issuers are address literals (TEST-NET-1 for a public one): nothing here resolves a public name.
    gw = await startGateway({ GATEWAY_SSO_DISCOVER_MAX_PER_ADDRESS: '6' });
    world = await seedWorld(gw, 'sso');
    loopbackIssuer = (await closedLoopbackUrl()).replace(/^http:/, 'https:');
  });
  after(() => gw.close());

  it('lets a platform admin create a connection on loopback, answers it without the secret, and keeps the secret encrypted', async () => {
    const created = await gw.request('POST', path(world.a.tenantId), {
      token: world.platform.admin.token,
      json: body({ issuer: loopbackIssuer, roleMapping: { admins: 'admin' }, allowedEmailDomains: ['Example.COM'] }),
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), CONNECTION_FIELDS);
    assert.match(created.body.id, /^sso_/);
    assert.equal(created.body.redirectUri, `${gw.url}/api/auth/sso/callback/${created.body.id}`);
    assert.equal(created.body.backchannelLogoutUri, `${gw.url}/api/auth/sso/backchannel-logout/${created.body.id}`);
    assert.deepEqual(created.body.scopes, ['openid', 'email', 'profile']);
    assert.deepEqual(created.body.allowedEmailDomains, ['example.com']);
    assert.equal(created.body.tokenEndpointAuthMethod, 'client_secret_basic');
    assert.equal(created.body.subjectClaim, 'sub');
    assert.equal(created.body.groupsClaim, 'groups');
    assert.deepEqual([created.body.jit, created.body.ssoOnly, created.body.trustIdpMfa, created.body.enabled], [false, false, false, true]);
    assert.ok(!created.text.includes('the-client-secret-value'));
    const [row] = await gw.ctx.db.query<{ client_secret: string }>('SELECT client_secret FROM sso_connections WHERE id = $1', [
      created.body.id,
    ]);
    assert.notEqual(row!.client_secret, 'the-client-secret-value');
    assert.equal(gw.ctx.secrets.decrypt(row!.client_secret), 'the-client-secret-value');
  });

  it("lets the tenant's admin list, read, change and delete; members and keys get 403, another tenant's admin 404", async () => {
    const admin = world.a.admin.token;
    const created = await gw.request('POST', path(world.a.tenantId), { token: admin, json: body() });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id as string;

    const list = await gw.request('GET', path(world.a.tenantId), { token: admin });
    assert.equal(list.status, 200);
    assert.ok(list.body.data.some((c: { id: string }) => c.id === id));

    for (const [who, options, status] of [
      ['member', { token: world.a.member.token }, 403],
      ['API key', { apiKey: world.a.key.key }, 403],
      ["another tenant's admin", { token: world.b.admin.token }, 404],
      ["another tenant's key", { apiKey: world.b.key.key }, 403],
    ] as const) {
      for (const [method, target] of [
        ['GET', path(world.a.tenantId)],
        ['GET', path(world.a.tenantId, id)],
        ['PATCH', path(world.a.tenantId, id)],
        ['DELETE', path(world.a.tenantId, id)],
      ] as const) {
        const answer = await gw.request(method, target, { ...options, ...(method === 'PATCH' ? { json: { enabled: false } } : {}) });
        assert.equal(answer.status, status, `${who}: ${method} ${target}`);
      }
    }
    // B's admin naming A's connection under B's own tenant: 404 as well.
    assert.equal((await gw.request('GET', path(world.b.tenantId, id), { token: world.b.admin.token })).status, 404);

    const patched = await gw.request('PATCH', path(world.a.tenantId, id), {
      token: admin,
      json: { clientSecret: 'a-new-secret', tokenEndpointAuthMethod: 'client_secret_post', jit: true, ssoOnly: true, subjectClaim: 'oid' },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.tokenEndpointAuthMethod, 'client_secret_post');
    assert.equal(patched.body.subjectClaim, 'oid');
    assert.ok(patched.body.jit && patched.body.ssoOnly);
    const [row] = await gw.ctx.db.query<{ client_secret: string }>('SELECT client_secret FROM sso_connections WHERE id = $1', [id]);
    assert.equal(gw.ctx.secrets.decrypt(row!.client_secret), 'a-new-secret');

    assert.equal((await gw.request('GET', path(world.a.tenantId, id), { token: admin })).body.ssoOnly, true);
    assert.equal((await gw.request('DELETE', path(world.a.tenantId, id), { token: admin })).status, 204);
    assert.equal((await gw.request('GET', path(world.a.tenantId, id), { token: admin })).status, 404);
    assert.equal((await gw.request('DELETE', path(world.a.tenantId, id), { token: admin })).status, 404);
  });

  it('refuses issuers that are not https, carry a query, are multi-tenant, or are on the tenant deny list; and scopes without openid', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['http issuer', { issuer: 'http://192.0.2.10' }, /issuer: must use https/],
      ['query', { issuer: 'https://192.0.2.10/?x=1' }, /query or a fragment/],
      ['credentials', { issuer: 'https://user:pw@192.0.2.10' }, /credentials/],
      ['Entra common', { issuer: 'https://login.microsoftonline.com/common/v2.0' }, /multi-tenant "common"/],
      ['Entra organizations', { issuer: 'https://login.microsoftonline.com/organizations/v2.0' }, /multi-tenant/],
      ['loopback for a tenant admin', { issuer: loopbackIssuer }, /deny list/],
      ['private range', { issuer: 'https://10.1.2.3/realms/x' }, /deny list/],
      ['metadata address', { issuer: 'https://169.254.169.254/' }, /deny list/],
      ['no openid scope', { scopes: ['email'] }, /scopes: must include openid/],
      ['Google without domains', { issuer: 'https://accounts.google.com' }, /allowedEmailDomains: must name your domains/],
      ['unknown token auth method', { tokenEndpointAuthMethod: 'private_key_jwt' }, /tokenEndpointAuthMethod|must be equal/],
      ['platform role', { roleMapping: { ops: 'platform_admin' } }, /roleMapping|must be equal/],
    ];
    for (const [label, extra, message] of cases) {
      const answer = await gw.request('POST', path(world.a.tenantId), { token: world.a.admin.token, json: body(extra) });
      assert.equal(answer.status, 400, `${label}: ${answer.text}`);
      assert.match(answer.body.detail, message, label);
    }
    // The same rule on a change: a tenant admin cannot move an issuer onto loopback either.
    const created = await gw.request('POST', path(world.a.tenantId), { token: world.a.admin.token, json: body() });
    const moved = await gw.request('PATCH', path(world.a.tenantId, created.body.id), {
      token: world.a.admin.token,
      json: { issuer: loopbackIssuer },
    });
    assert.equal(moved.status, 400);
    assert.match(moved.body.detail, /deny list/);
  });

  it('maps groups to roles for the SCIM side through every enabled connection (admin over member), never platform_admin', async () => {
    const tenant = world.b.tenantId;
    await gw.request('POST', path(tenant), { token: world.b.admin.token, json: body({ roleMapping: { staff: 'member', it: 'admin' } }) });
    await gw.request('POST', path(tenant), {
      token: world.b.admin.token,
      json: body({ roleMapping: { ops: 'admin', platform_admin: 'member' }, enabled: false }),
    });
    assert.equal(await roleForGroups(gw.ctx.db, tenant, ['staff']), 'member');
    assert.equal(await roleForGroups(gw.ctx.db, tenant, ['staff', 'it']), 'admin');
    assert.equal(await roleForGroups(gw.ctx.db, tenant, ['ops']), 'member', 'a disabled connection maps nothing');
    assert.equal(await roleForGroups(gw.ctx.db, tenant, ['nobody', '__proto__', 'constructor']), 'member', 'unmapped groups give member');
    assert.equal(await roleForGroups(gw.ctx.db, tenant, []), 'member', 'in no group at all: member');
    assert.equal(await roleForGroups(gw.ctx.db, world.platform.tenantId, ['it']), null, 'a tenant that maps no group leaves roles alone');
  });

  it('keeps returnTo on our origin', () => {
    for (const unsafe of [
      'https://evil.example',
      '//evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      '/\t/evil.example',
      'javascript:alert(1)',
      'evil.example',
      '',
      '/%0a/evil',
    ]) {
      const safe = safeReturnTo(unsafe);
      assert.ok(safe.startsWith('/') && !safe.startsWith('//'), `${JSON.stringify(unsafe)} → ${safe}`);
      assert.equal(new URL(safe, 'https://gw.example').origin, 'https://gw.example', JSON.stringify(unsafe));
    }
    assert.equal(safeReturnTo('https://evil.example'), '/');
    assert.equal(safeReturnTo('//evil.example/x'), '/');
    assert.equal(safeReturnTo('/\\evil.example'), '/');
    assert.equal(safeReturnTo('/documents?tab=2#frag'), '/documents?tab=2');
    assert.equal(safeReturnTo('/a/../b'), '/b');
  });

  it('writes no client secret to its log', () => {
    for (const secret of ['the-client-secret-value', 'a-new-secret']) assert.ok(!gw.logs().includes(secret), secret);
    assert.ok(gw.logs().includes('request completed'), 'the log was captured');
  });

  it('reads a second factor from amr (mfa, otp, hwk, two methods) or from acr', () => {
    assert.equal(idpShowsMfa({ amr: ['pwd'] }), false);
    assert.equal(idpShowsMfa({}), false);
    assert.equal(idpShowsMfa({ amr: ['pwd', 'mfa'] }), true);
    assert.equal(idpShowsMfa({ amr: ['otp'] }), true);
    assert.equal(idpShowsMfa({ amr: ['pwd', 'kba'] }), true);
    assert.equal(idpShowsMfa({ amr: 'mfa' }), false, 'amr must be an array');
    assert.equal(idpShowsMfa({ acr: 'http://schemas.openid.net/pape/policies/2007/06/multi-factor' }), true);
    assert.equal(idpShowsMfa({ acr: '1' }), false);
  });
});

describe('ssoOnly password sign-in', () => {
  let gw: TestGateway;
  let world: World;
  const login = (username: string, password: string) => gw.request('POST', '/api/auth/login', { json: { username, password } });

  before(async () => {
    gw = await startGateway();
    world = await seedWorld(gw, 'sso-only');
    const created = await gw.request('POST', `/api/auth/tenants/${world.a.tenantId}/sso/connections`, {
      token: world.a.admin.token,
      json: { name: 'IdP', issuer: 'https://192.0.2.10', clientId: 'c', clientSecret: 's', ssoOnly: true },
    });
    assert.equal(created.status, 201, created.text);
  });
  after(() => gw.close());

  it("refuses a member's right password with the wrong-password answer; other tenants are not affected", async () => {
    const wrong = await login(world.a.member.username, 'not the password at all');
    const right = await login(world.a.member.username, world.a.member.password);
    assert.equal(right.status, 401);
    assert.deepEqual(withoutCorrelation(right.body), withoutCorrelation(wrong.body));
    assert.equal(right.headers.get('set-cookie'), null);
    const other = await seedUser(gw, world.b.tenantId);
    assert.equal((await login(other.username, other.password)).status, 200);
  });

  it('keeps a break-glass password sign-in for tenant admins, with TOTP required', async () => {
    // Without TOTP: refused like a wrong password.
    const admin = await seedUser(gw, world.a.tenantId, ['admin']);
    assert.equal((await login(admin.username, admin.password)).status, 401);
    // Enrolled (through a token: the admin cannot sign in with the password yet): the password leads to the TOTP step.
    const token = await tokenFor(gw, admin.id, world.a.tenantId);
    const setup = await gw.request('POST', '/api/auth/2fa/setup', { token });
    const enabled = await gw.request('POST', '/api/auth/2fa/enable', { token, json: { code: totpCode(setup.body.secret) } });
    assert.equal(enabled.status, 200, enabled.text);
    const step = await login(admin.username, admin.password);
    assert.equal(step.status, 200, step.text);
    assert.equal(step.body.requiresTwoFactor, true);
    assert.equal(step.body.token, undefined);
    const verified = await gw.request('POST', '/api/auth/verify-2fa', {
      json: { twoFactorToken: step.body.twoFactorToken, recoveryCode: enabled.body.recoveryCodes[0] },
    });
    assert.equal(verified.status, 200, verified.text);
    assert.ok(verified.body.token);
  });

  it('lets password sign-in back in when the connection is disabled', async () => {
    const list = await gw.request('GET', `/api/auth/tenants/${world.a.tenantId}/sso/connections`, { token: world.a.admin.token });
    const id = list.body.data[0].id;
    await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}/sso/connections/${id}`, {
      token: world.a.admin.token,
      json: { enabled: false },
    });
    assert.equal((await login(world.a.member.username, world.a.member.password)).status, 200);
  });
});

describe('SSO discovery, emailVerified, and refusals before any IdP is asked', () => {
  let gw: TestGateway;
  let world: World;
  const discover = (email: string, ip?: string) =>
    gw.request('POST', '/api/auth/sso/discover', { json: { email }, ...(ip ? { headers: { 'x-forwarded-for': ip } } : {}) });

  before(async () => {
    gw = await startGateway({ GATEWAY_SSO_DISCOVER_MAX_PER_ADDRESS: '8', GATEWAY_TRUST_PROXY: 'on' });
    world = await seedWorld(gw, 'sso-discover');
    const create = (tenantId: string, token: string, domains: string[]) =>
      gw.request('POST', `/api/auth/tenants/${tenantId}/sso/connections`, {
        token,
        json: {
          name: `IdP of ${domains[0]}`,
          issuer: 'https://192.0.2.10',
          clientId: 'c',
          clientSecret: 's',
          allowedEmailDomains: domains,
        },
      });
    assert.equal((await create(world.a.tenantId, world.a.admin.token, ['a.example'])).status, 201);
    // Both tenants claim shared.example: nobody gets it.
    assert.equal((await create(world.a.tenantId, world.a.admin.token, ['shared.example'])).status, 201);
    assert.equal((await create(world.b.tenantId, world.b.admin.token, ['shared.example'])).status, 201);
  });
  after(() => gw.close());

  it('answers one shape whether or not a connection serves the domain, and nothing for a domain two tenants claim', async () => {
    const found = await discover('Ada@A.Example', '203.0.113.1');
    assert.equal(found.status, 200);
    assert.equal(found.body.connections.length, 1);
    assert.match(found.body.connections[0].startUrl, /\/api\/auth\/sso\/sso_[0-9A-Z]+\/start$/);
    const none = await discover('ada@unknown.example', '203.0.113.1');
    assert.deepEqual(none.body, { connections: [] });
    assert.deepEqual(Object.keys(found.body), Object.keys(none.body));
    assert.deepEqual((await discover('bob@shared.example', '203.0.113.1')).body, { connections: [] });
    assert.deepEqual((await discover('not-an-address', '203.0.113.1')).body, { connections: [] });
  });

  it('is rate limited per address, on its own count', async () => {
    let status = 200;
    for (let i = 0; i < 10 && status === 200; i++) status = (await discover(`x${i}@a.example`, '203.0.113.9')).status;
    assert.equal(status, 429);
    assert.equal((await discover('x@a.example', '203.0.113.10')).status, 200, 'another address is not affected');
    const member = await seedUser(gw, world.a.tenantId);
    const signedIn = await gw.request('POST', '/api/auth/login', {
      json: { username: member.username, password: member.password },
      headers: { 'x-forwarded-for': '203.0.113.9' },
    });
    assert.equal(signedIn.status, 200, 'password sign-in from that address still works');
  });

  it('lets an admin vouch for an address (emailVerified), and forgets it when the address changes', async () => {
    const users = `/api/auth/tenants/${world.a.tenantId}/users`;
    const created = await gw.request('POST', users, {
      token: world.a.admin.token,
      json: { username: 'verified.user', password: 'p'.repeat(12), email: 'verified@a.example', emailVerified: true },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.emailVerified, true);
    const unverified = await gw.request('POST', users, {
      token: world.a.admin.token,
      json: { username: 'plain.user', password: 'p'.repeat(12), email: 'plain@a.example' },
    });
    assert.equal(unverified.body.emailVerified, false);
    const same = await gw.request('PATCH', `${users}/${created.body.id}`, {
      token: world.a.admin.token,
      json: { email: 'VERIFIED@a.example' },
    });
    assert.equal(same.body.emailVerified, true, 'the same address, in other case');
    const changed = await gw.request('PATCH', `${users}/${created.body.id}`, {
      token: world.a.admin.token,
      json: { email: 'other@a.example' },
    });
    assert.equal(changed.body.emailVerified, false);
    const vouched = await gw.request('PATCH', `${users}/${created.body.id}`, { token: world.a.admin.token, json: { emailVerified: true } });
    assert.equal(vouched.body.emailVerified, true);
    const cleared = await gw.request('PATCH', `${users}/${created.body.id}`, { token: world.a.admin.token, json: { email: null } });
    assert.equal(cleared.body.emailVerified, false, 'no address is never a verified one');
  });

  it('answers 404 for an unknown connection at start, and refuses a callback without a transaction with no session', async () => {
    assert.equal((await gw.request('GET', '/api/auth/sso/sso_01ABCDEFGHJKMNPQRSTVWXYZ00/start')).status, 404);
    assert.equal((await gw.request('GET', '/api/auth/sso/not-an-id/start')).status, 404);
    const list = await gw.request('GET', `/api/auth/tenants/${world.a.tenantId}/sso/connections`, { token: world.a.admin.token });
    const id = list.body.data[0].id;
    const response = await fetch(`${gw.url}/api/auth/sso/callback/${id}?code=abc&state=def`, { redirect: 'manual' });
    assert.equal(response.status, 302);
    assert.equal(response.headers.get('location'), `${gw.url}/#ssoError=transaction`);
    const cookies = response.headers.getSetCookie();
    assert.ok(
      !cookies.some((c) => c.startsWith('service_refresh_token=') && !c.includes('Max-Age=0') && !/Expires=Thu, 01 Jan 1970/.test(c)),
    );
  });

  it('refuses an expired transaction (with its own cookie and state) with no session; a live one gets past that check', async () => {
    const list = await gw.request('GET', `/api/auth/tenants/${world.a.tenantId}/sso/connections`, { token: world.a.admin.token });
    const id = list.body.data[0].id as string;
    const transaction = async (expiresAt: Date) => {
      const cookie = `cookie-${randomBytes(8).toString('hex')}`;
      const state = `state-${randomBytes(8).toString('hex')}`;
      await transactionRepository.insert(gw.ctx.db, {
        id: gw.ctx.secrets.hash('sso-transaction', cookie),
        connection_id: id,
        state_hash: gw.ctx.secrets.hash('sso-transaction', `state:${state}`),
        nonce: 'n',
        code_verifier: gw.ctx.secrets.encrypt('v'),
        return_to: '/',
        expires_at: expiresAt,
      });
      const response = await fetch(`${gw.url}/api/auth/sso/callback/${id}?code=c&state=${state}`, {
        redirect: 'manual',
        headers: { cookie: `gateway_sso_transaction=${cookie}` },
      });
      return { location: response.headers.get('location'), cookies: response.headers.getSetCookie() };
    };
    const expired = await transaction(new Date(Date.now() - 1000));
    assert.equal(expired.location, `${gw.url}/#ssoError=transaction`);
    assert.ok(!expired.cookies.some((c) => c.startsWith('service_refresh_token=')));
    assert.ok(
      expired.cookies.some((c) => c.startsWith('gateway_sso_transaction=;')),
      'the browser is told to forget the transaction',
    );
    // The same, live: refused later, at the IdP (nobody listens at its issuer), not as a transaction.
    const live = await transaction(new Date(Date.now() + 60_000));
    assert.equal(live.location, `${gw.url}/#ssoError=unavailable`);
  });

  it('refuses a back-channel logout token that is not a JWT of the connection, before asking the IdP', async () => {
    const list = await gw.request('GET', `/api/auth/tenants/${world.a.tenantId}/sso/connections`, { token: world.a.admin.token });
    const id = list.body.data[0].id;
    const form = await fetch(`${gw.url}/api/auth/sso/backchannel-logout/${id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'logout_token=not-a-jwt',
    });
    assert.equal(form.status, 400);
    assert.match((await form.json()).detail, /not a JWT/);
    const unknown = await gw.request('POST', '/api/auth/sso/backchannel-logout/sso_01ABCDEFGHJKMNPQRSTVWXYZ00', {
      json: { logout_token: 'x' },
    });
    assert.equal(unknown.status, 404);
  });
});
