// Single sign-on in the console, in Chromium, against a real gateway and real OpenID
// providers: two oidc-provider IdPs on loopback over HTTPS (test/auth/sso-support.ts),
// the gateway a child process trusting their certificate through NODE_EXTRA_CA_CERTS,
// the console browsed at http://localhost:PORT (Chromium keeps the Secure refresh
// cookie there). The IdPs sign in whoever the test names, so "the IdP login" is a
// round trip of real redirects: console → /start → IdP → /callback → console.
//
// Covered: a tenant admin adds a connection through the dialogs (the API's field error
// under its field, then the URIs to copy), edits, disables, enables and deletes; a
// sign-in by e-mail discovery lands signed in at the page asked for, and its sign-out
// reaches the IdP's end-session page and comes back; a tenant link starts its
// connection (and a bad one says so); a refused sign-in shows its reason with the
// address cleaned; a user with TOTP is asked for it after SSO; a member is not allowed
// on the page; the platform admin reaches any tenant's page from Tenants; a SCIM token
// is shown once (with Copy, and it works against the SCIM API) and only masked after,
// until deleted; the Users page's "verified" tick; axe in light and dark, and 390 px wide.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TEST_TMP } from '../helpers/paths.js';
import { makeCa, type SsoGateway, startIdp, startSsoGateway, type TestCa, type TestIdp } from '../auth/sso-support.js';
import { describeViolations, settle } from './accessibility-support.js';
import { CONSOLE_DIR, keepScreenshot, launchBrowser, openWalk, seriousViolations, type Walk } from './browser.js';
import { enrolTwoFactor, signIn } from './console-gateway.js';

interface Made {
  id: string;
  clientId: string;
  clientSecret: string;
}

describe('console single sign-on', () => {
  let dir: string;
  let ca: TestCa;
  let idpA: TestIdp;
  let idpB: TestIdp;
  let gw: SsoGateway;
  let browser: Browser;
  /** The console's origin: http://localhost:PORT. */
  let origin: string;
  let tenantId: string;
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const admin = { username: 'acme-admin', password };
  const member = { username: 'acme-member', password };
  const tess = { username: 'tess', password };
  /** Acme's connection on IdP A (jit, acme.example, admins → admin), and a strict one (no jit, no domains: reached by its link). */
  let entra: Made;
  let strict: Made;
  /** What the tenant admin adds through the dialogs, on IdP B. */
  const oktaSecret = `okta-${randomBytes(18).toString('base64url')}`;
  let oktaId = '';
  let oktaLink = '';
  let tessAuthenticator: { next(): string };
  const failures: string[] = [];

  const api = (method: string, url: string, json?: unknown, token = gw.admin.token) =>
    gw.process.request(method, url, { token, ...(json !== undefined ? { json } : {}) });
  const connections = () => `/api/auth/tenants/${tenantId}/sso/connections`;
  /** What the IdP is told: the browser reaches the gateway at localhost, so its URIs are built on that origin. */
  const clientOf = (made: Made) => ({
    client_id: made.clientId,
    client_secret: made.clientSecret,
    redirect_uris: [`${origin}/api/auth/sso/callback/${made.id}`],
    post_logout_redirect_uris: [`${origin}/`],
  });

  async function connection(idp: TestIdp, clientId: string, fields: Record<string, unknown>): Promise<Made> {
    const clientSecret = randomBytes(18).toString('base64url');
    const created = await api('POST', connections(), { name: clientId, issuer: idp.issuer, clientId, clientSecret, ...fields });
    assert.equal(created.status, 201, created.text);
    return { id: created.body.id, clientId, clientSecret };
  }

  async function user(body: Record<string, unknown>) {
    const created = await api('POST', `/api/auth/tenants/${tenantId}/users`, { password, ...body });
    assert.equal(created.status, 201, created.text);
    return created.body;
  }

  const walkWithIdps = (options: { dark?: boolean } = {}) =>
    openWalk(browser, origin, { ...options, identityProviders: [idpA.issuer, idpB.issuer] });

  async function audit(page: Page, name: string) {
    const violations = await seriousViolations(page);
    if (violations.length) failures.push(`${name}:\n${describeViolations(violations)}`);
    await keepScreenshot(page, name);
  }

  function assertClean(walk: Walk) {
    assert.deepEqual(walk.foreign, [], 'requests to an origin that is neither the gateway nor a test IdP');
    assert.deepEqual(walk.faults, []);
  }

  before(async () => {
    dir = mkdtempSync(path.join(TEST_TMP, 'console-sso-'));
    ca = await makeCa(dir);
    [idpA, idpB] = await Promise.all([startIdp(ca), startIdp(ca)]);
    // A tenant admin's issuer is held to the tenant deny list (loopback among it by default): the test IdPs are on loopback.
    gw = await startSsoGateway(ca, { GATEWAY_CONSOLE_DIR: CONSOLE_DIR, GATEWAY_TENANT_NODE_DENY_CIDRS: 'none' });
    origin = gw.url.replace('127.0.0.1', 'localhost');
    browser = await launchBrowser();
    tenantId = (await api('POST', '/api/auth/tenants', { name: 'Acme' })).body.id;
    await user({ username: admin.username, roles: ['admin'] });
    await user({ username: member.username, roles: ['member'] });
    // Tess has a verified address in the connection's domain (SSO links her by it) and TOTP.
    await user({ username: tess.username, email: 'tess@acme.example', emailVerified: true, roles: ['member'] });
    const tessLogin = await api('POST', '/api/auth/login', tess, '');
    tessAuthenticator = await enrolTwoFactor(gw.process, { token: tessLogin.body.token });

    entra = await connection(idpA, 'acme-entra', {
      name: 'Acme Entra',
      jit: true,
      allowedEmailDomains: ['acme.example'],
      roleMapping: { admins: 'admin' },
    });
    strict = await connection(idpA, 'acme-strict', { name: 'Acme strict', jit: false });
    idpA.serve([clientOf(entra), clientOf(strict)]);
    idpA.users.set('alice', { email: 'alice@acme.example', email_verified: true, groups: ['staff'] });
    idpA.users.set('tess-at-idp', { email: 'tess@acme.example', email_verified: true });
    idpA.users.set('nobody', { email: 'nobody@elsewhere.example', email_verified: true });
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await idpA?.close();
    await idpB?.close();
    ca?.agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets a tenant admin add a connection through the dialogs: a refused field says why under it, then the URIs to enter at the IdP', async () => {
    const old = await connection(idpA, 'old', { name: 'Old connection' });
    const walk = await openWalk(browser, origin);
    await walk.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    const page = await walk.newPage();
    await signIn(page, origin, admin);
    await page.getByRole('link', { name: 'Single sign-on' }).click();
    await settle(page, 'Single sign-on');
    const entraCard = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Acme Entra' }) });
    assert.equal(await entraCard.getByLabel('Redirect URI', { exact: true }).inputValue(), `${origin}/api/auth/sso/callback/${entra.id}`);
    assert.equal(await entraCard.getByLabel('Sign-in link', { exact: true }).inputValue(), `${origin}/?sso=${entra.id}`);
    await audit(page, 'sso-light');

    await page.getByRole('button', { name: 'Add a connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a single sign-on connection' });
    await dialog.waitFor();
    await dialog.getByLabel('Name', { exact: true }).fill('Acme Okta');
    await dialog.getByLabel('Issuer URL').fill(idpB.issuer);
    await dialog.getByLabel('Client ID').fill('acme-okta');
    await dialog.getByLabel('Client secret').fill(oktaSecret);
    await dialog.getByLabel('Client authentication at the token endpoint').selectOption('client_secret_post');
    // Without openid: the API refuses the scopes, and says so under that field.
    await dialog.getByLabel('Scopes').fill('email profile');
    await dialog.getByLabel('Allowed e-mail domains').fill('okta.acme.example, Okta2.acme.example');
    await dialog.getByLabel('Create an account at the first sign-in').check();
    // SSO only would leave this admin (no TOTP) without a password sign-in: the form says so.
    await dialog.getByLabel('Single sign-on only').check();
    await dialog.getByText('You have not enrolled a two-factor code').waitFor();
    await dialog.getByLabel('Single sign-on only').uncheck();
    await dialog.getByText('You have not enrolled a two-factor code').waitFor({ state: 'detached' });
    await dialog.getByRole('button', { name: 'Add a group' }).click();
    await dialog.getByLabel('Group 1', { exact: true }).fill('okta-admins');
    await dialog.getByLabel('Role for group 1').selectOption('admin');
    await dialog.getByRole('button', { name: 'Add a group' }).click();
    await dialog.getByLabel('Group 2', { exact: true }).fill('to-remove');
    await dialog.getByRole('button', { name: 'Remove group 2' }).click();
    await audit(page, 'sso-create-dialog-light');
    await dialog.getByRole('button', { name: 'Add connection' }).click();
    const scopes = dialog.getByLabel('Scopes');
    await dialog.getByText('must include openid').waitFor();
    assert.equal(await scopes.getAttribute('aria-invalid'), 'true');
    assert.ok(await scopes.evaluate((input) => input === document.activeElement), 'focus is on the refused field');
    assert.match(
      await scopes.evaluate(
        (input) => document.getElementById(input.getAttribute('aria-describedby')!.split(' ').pop()!)?.textContent ?? '',
      ),
      /must include openid/,
      'the message is tied to the field',
    );
    await keepScreenshot(page, 'sso-field-error-light');
    await scopes.fill('openid email profile');
    await dialog.getByRole('button', { name: 'Add connection' }).click();

    // Saved: the dialog shows what to enter at the IdP, with Copy buttons.
    const redirect = dialog.getByLabel('Redirect URI', { exact: true });
    await redirect.waitFor();
    const redirectUri = await redirect.inputValue();
    assert.match(redirectUri, new RegExp(`^${origin}/api/auth/sso/callback/sso_[A-Za-z0-9]+$`));
    oktaId = redirectUri.split('/').pop()!;
    assert.equal(await dialog.getByLabel('Post-logout redirect URI', { exact: true }).inputValue(), `${origin}/`);
    assert.equal(
      await dialog.getByLabel('Back-channel logout URI', { exact: true }).inputValue(),
      `${origin}/api/auth/sso/backchannel-logout/${oktaId}`,
    );
    oktaLink = await dialog.getByLabel('Sign-in link', { exact: true }).inputValue();
    assert.equal(oktaLink, `${origin}/?sso=${oktaId}`);
    await dialog.getByRole('button', { name: 'Copy the Redirect URI of Acme Okta' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), redirectUri);
    await audit(page, 'sso-created-dialog-light');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const stored = (await api('GET', `${connections()}/${oktaId}`)).body;
    assert.deepEqual(
      {
        name: stored.name,
        issuer: stored.issuer,
        clientId: stored.clientId,
        tokenEndpointAuthMethod: stored.tokenEndpointAuthMethod,
        scopes: stored.scopes,
        allowedEmailDomains: stored.allowedEmailDomains,
        roleMapping: stored.roleMapping,
        jit: stored.jit,
        ssoOnly: stored.ssoOnly,
        trustIdpMfa: stored.trustIdpMfa,
        enabled: stored.enabled,
        groupsClaim: stored.groupsClaim,
        subjectClaim: stored.subjectClaim,
      },
      {
        name: 'Acme Okta',
        issuer: idpB.issuer,
        clientId: 'acme-okta',
        tokenEndpointAuthMethod: 'client_secret_post',
        scopes: ['openid', 'email', 'profile'],
        allowedEmailDomains: ['okta.acme.example', 'okta2.acme.example'],
        roleMapping: { 'okta-admins': 'admin' },
        jit: true,
        ssoOnly: false,
        trustIdpMfa: false,
        enabled: true,
        groupsClaim: 'groups',
        subjectClaim: 'sub',
      },
    );
    assert.equal(stored.clientSecret, undefined, 'the secret is write-only');

    // Edit: the secret field starts empty and, left so, keeps the stored one (the sign-in through this connection below uses it).
    const okta = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Acme Okta' }) });
    await okta.waitFor();
    await page.getByRole('button', { name: 'Edit Acme Okta' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Acme Okta' });
    await edit.waitFor();
    assert.equal(await edit.getByLabel('Client secret').inputValue(), '');
    assert.equal(await edit.getByLabel('Group 1', { exact: true }).inputValue(), 'okta-admins');
    await edit.getByLabel('Subject claim').fill('oid');
    await edit.getByLabel('Subject claim').fill('sub');
    await edit.getByLabel('Groups claim').fill('roles');
    await edit.getByRole('button', { name: 'Save connection' }).click();
    await edit.waitFor({ state: 'hidden' });
    await page.getByText('Connection Acme Okta saved.').waitFor();
    const edited = (await api('GET', `${connections()}/${oktaId}`)).body;
    assert.equal(edited.groupsClaim, 'roles');
    assert.equal(edited.subjectClaim, 'sub');
    await page.getByRole('button', { name: 'Edit Acme Okta' }).click();
    await edit.getByLabel('Groups claim').fill('groups');
    await edit.getByRole('button', { name: 'Save connection' }).click();
    await edit.waitFor({ state: 'hidden' });

    // Disable, then enable, each confirmed in its dialog.
    await page.getByRole('button', { name: 'Disable Acme Okta' }).click();
    const disable = page.getByRole('dialog', { name: 'Disable Acme Okta?' });
    await disable.getByRole('button', { name: 'Disable' }).click();
    await disable.waitFor({ state: 'hidden' });
    await okta.getByText('disabled', { exact: true }).waitFor();
    assert.equal((await api('GET', `${connections()}/${oktaId}`)).body.enabled, false);
    await page.getByRole('button', { name: 'Enable Acme Okta' }).click();
    await page.getByRole('dialog', { name: 'Enable Acme Okta?' }).getByRole('button', { name: 'Enable' }).click();
    await okta.getByText('enabled', { exact: true }).waitFor();
    assert.equal((await api('GET', `${connections()}/${oktaId}`)).body.enabled, true);

    // Delete.
    await page.getByRole('button', { name: 'Delete Old connection' }).click();
    await page.getByRole('dialog', { name: 'Delete a connection' }).getByRole('button', { name: 'Delete connection' }).click();
    await page.getByText('Connection Old connection deleted.').waitFor();
    assert.equal((await api('GET', `${connections()}/${old.id}`)).status, 404);

    // The Users page: the administrator vouches for a member's address.
    await page.getByRole('link', { name: 'Users' }).click();
    await settle(page, 'Users');
    await page.getByRole('button', { name: `Edit ${member.username}` }).click();
    const userDialog = page.getByRole('dialog', { name: `Edit ${member.username}` });
    const verified = userDialog.getByLabel('The address is verified');
    assert.ok(await verified.isDisabled(), 'no address, nothing to verify');
    await userDialog.getByLabel('E-mail', { exact: true }).fill('member@acme.example');
    await verified.check();
    await userDialog.getByRole('button', { name: 'Save role and e-mail' }).click();
    await page.getByText(`${member.username} saved.`).waitFor();
    await page.keyboard.press('Escape');
    await page
      .getByRole('row', { name: new RegExp(member.username) })
      .getByText('verified', { exact: true })
      .waitFor();
    const members = (await api('GET', `/api/auth/tenants/${tenantId}/users`, undefined)).body.data as {
      username: string;
      email: string;
      emailVerified: boolean;
    }[];
    assert.deepEqual(
      members.filter((u) => u.username === member.username).map((u) => [u.email, u.emailVerified]),
      [['member@acme.example', true]],
    );

    assert.deepEqual(failures, [], failures.join('\n'));
    assertClean(walk);
    await walk.context.close();
    assert.ok(!gw.process.output().includes(oktaSecret), 'the client secret typed in the dialog is in no log line');

    // IdP B knows the connection now that its redirect URI exists.
    idpB.serve([
      { ...clientOf({ id: oktaId, clientId: 'acme-okta', clientSecret: oktaSecret }), token_endpoint_auth_method: 'client_secret_post' },
    ]);
    idpB.users.set('olga', { email: 'olga@okta.acme.example', email_verified: true, groups: ['okta-admins'] });
  });

  it('shows a new SCIM token once, with Copy, then only masked; it provisions until it is deleted', async () => {
    const walk = await openWalk(browser, origin);
    await walk.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    const page = await walk.newPage();
    await signIn(page, origin, admin, '/sso');
    await settle(page, 'Single sign-on');
    await page.getByRole('heading', { name: 'SCIM provisioning' }).waitFor();
    assert.equal(await page.getByLabel('SCIM base URL', { exact: true }).inputValue(), `${origin}/api/auth/scim/v2`);
    await page.getByText('No SCIM token').waitFor();

    await page.getByRole('button', { name: 'Create a SCIM token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a SCIM token' });
    await dialog.getByLabel('Name', { exact: true }).fill('Okta provisioning');
    await dialog.getByLabel('Expires (optional)').fill('2031-01-15');
    await dialog.getByRole('button', { name: 'Create token' }).click();
    const field = dialog.getByLabel('Your new SCIM token', { exact: true });
    await field.waitFor();
    const token = await field.inputValue();
    assert.match(token, /^scim_/);
    await dialog.getByText('It will not be shown again').waitFor();
    assert.equal(await dialog.getByLabel('SCIM base URL', { exact: true }).inputValue(), `${origin}/api/auth/scim/v2`);
    await dialog.getByRole('button', { name: 'Copy Your new SCIM token' }).click();
    await page.getByText('Copied to the clipboard.').first().waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);
    await audit(page, 'sso-scim-token-once-light');

    // The token is the tenant's SCIM bearer.
    const users = await gw.process.request('GET', '/api/auth/scim/v2/Users', { token });
    assert.equal(users.status, 200, users.text);

    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const row = page.getByRole('row', { name: /Okta provisioning/ });
    await row.waitFor();
    const masked = (await api('GET', `/api/auth/tenants/${tenantId}/scim-tokens`)).body.data[0];
    assert.equal(masked.name, 'Okta provisioning');
    assert.equal(new Date(masked.expiresAt).getFullYear(), 2031);
    await row.getByText(masked.maskedToken).waitFor();
    assert.notEqual(masked.maskedToken, token);
    const shown = await page.evaluate(
      () => (document.body.textContent ?? '') + [...document.querySelectorAll('input')].map((input) => input.value).join(' '),
    );
    assert.ok(!shown.includes(token), 'once closed, the token is nowhere on the page');
    // Opened again, the dialog is a new form: the old token is gone.
    await page.getByRole('button', { name: 'Create a SCIM token' }).click();
    assert.equal(await dialog.getByLabel('Your new SCIM token', { exact: true }).count(), 0);
    await dialog.getByLabel('Name', { exact: true }).waitFor();
    await page.keyboard.press('Escape');
    await keepScreenshot(page, 'sso-scim-light');

    await page.getByRole('button', { name: 'Delete SCIM token Okta provisioning' }).click();
    await page.getByRole('dialog', { name: 'Delete a SCIM token' }).getByRole('button', { name: 'Delete token' }).click();
    await page.getByText('SCIM token Okta provisioning deleted.').waitFor();
    await page.getByText('No SCIM token').waitFor();
    assert.equal((await gw.process.request('GET', '/api/auth/scim/v2/Users', { token })).status, 401);
    assert.ok(!gw.process.output().includes(token), 'the SCIM token is in no log line');
    assert.deepEqual(failures, [], failures.join('\n'));
    assertClean(walk);
    await walk.context.close();
  });

  it('signs in by e-mail discovery through the IdP, lands signed in at the page asked for, and signs out at the IdP too', async () => {
    const walk = await walkWithIdps();
    const page = await walk.newPage();
    await page.goto(`${origin}/workspaces`);
    await page.getByRole('heading', { name: 'Sign in with your company account' }).waitFor();
    await audit(page, 'sign-in-sso-light');
    await page.getByLabel('Work e-mail').fill('someone@nowhere.example');
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByText('No company sign-in is set up for someone@nowhere.example').waitFor();

    idpA.loginAs = 'alice';
    await page.getByLabel('Work e-mail').fill('alice@acme.example');
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByText(/^Signed in as alice\.[0-9a-z]{10}$/).waitFor();
    assert.equal(page.url(), `${origin}/workspaces`, 'back at the page asked for, nothing in the address');
    await settle(page, 'Workspaces');

    // Sign-out ends the session here, then at the IdP (its end-session page), which sends the browser back.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.origin === idpA.issuer && url.pathname.startsWith('/session/end'));
    const endSession = new URL(page.url()).searchParams;
    assert.ok(endSession.get('id_token_hint'), 'the end-session URL carries id_token_hint');
    assert.equal(endSession.get('post_logout_redirect_uri'), `${origin}/`);
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(`${origin}/`);
    await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    assert.equal((await page.request.post(`${origin}/api/auth/refresh`, { data: {}, headers: { origin } })).status(), 401);
    assertClean(walk);
    await walk.context.close();
  });

  it("starts a tenant link's connection directly, and a refused sign-in says why, with the address cleaned", async () => {
    const walk = await walkWithIdps();
    const page = await walk.newPage();

    // The strict connection has no jit, and nobody has an account: refused, not linked.
    idpA.loginAs = 'nobody';
    await page.goto(`${origin}/keys?sso=${strict.id}`);
    await page.getByText('Your company account is not linked to an account here').waitFor();
    assert.equal(page.url(), `${origin}/`, 'the fragment is read, then removed');
    await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await audit(page, 'sign-in-sso-refused-light');

    // Every reason the gateway names has its own message.
    const reasons: [string, RegExp][] = [
      ['transaction', /took too long, was already used/],
      ['idp', /identity provider refused the sign-in/],
      ['unavailable', /could not be reached/],
      ['account_disabled', /account here is disabled/],
      ['too_many_attempts', /Too many refused sign-ins/],
      ['something_new', /Something went wrong during the company sign-in/],
    ];
    for (const [reason, message] of reasons) {
      // From elsewhere: a fragment change alone would not load the page again.
      await page.goto('about:blank');
      await page.goto(`${origin}/#ssoError=${reason}`);
      await page.getByRole('alert').filter({ hasText: message }).waitFor();
      assert.equal(page.url(), `${origin}/`);
    }

    // A link to a connection that does not exist says so, and offers the other ways.
    await page.goto(`${origin}/?sso=sso_doesnotexist1`);
    await page.getByText('This sign-in link does not work').waitFor();
    await page.getByRole('button', { name: 'Other ways to sign in' }).click();
    await page.getByRole('heading', { name: 'Sign in with your company account' }).waitFor();

    // The link the tenant admin copied: IdP B, Olga is new (jit) and in okta-admins, so an administrator.
    idpB.loginAs = 'olga';
    await page.goto(oktaLink);
    await page.getByText(/^Signed in as olga\.[0-9a-z]{10}$/).waitFor();
    await page.waitForURL(`${origin}/playground`);
    await page.getByRole('link', { name: 'Single sign-on' }).waitFor();
    assertClean(walk);
    await walk.context.close();
  });

  it('asks for the TOTP code after a single sign-on of a user who enrolled it, then lands at the page asked for', async () => {
    const walk = await walkWithIdps();
    const page = await walk.newPage();
    idpA.loginAs = 'tess-at-idp';
    await page.goto(`${origin}/threads`);
    await page.getByLabel('Work e-mail').fill('tess@acme.example');
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByRole('heading', { name: 'Two-factor code' }).waitFor();
    assert.equal(page.url(), `${origin}/threads`, 'the two-factor token is out of the address bar');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'code');
    await audit(page, 'sign-in-sso-two-factor-light');
    await page.keyboard.type(tessAuthenticator.next());
    await page.keyboard.press('Enter');
    await page.getByText(`Signed in as ${tess.username}`).waitFor();
    await settle(page, 'Threads');
    assert.equal(page.url(), `${origin}/threads`);
    // The session verify-2fa started is the SSO one: sign-out goes on to the IdP.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.origin === idpA.issuer);
    assertClean(walk);
    await walk.context.close();
  });

  it('tells a member the page is not allowed, and the platform admin reaches any tenant’s page from Tenants', async () => {
    const walk = await openWalk(browser, origin);
    const page = await walk.newPage();
    await signIn(page, origin, member);
    assert.equal(await page.getByRole('link', { name: 'Single sign-on' }).count(), 0, 'no link for a member');
    for (const path of ['/sso', `/tenants/${tenantId}/sso`]) {
      await page.goto(origin + path);
      await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    }
    assert.equal(await page.getByText('Acme Entra').count(), 0);
    await walk.context.close();

    const platform = await openWalk(browser, origin);
    const admin = await platform.newPage();
    await signIn(admin, origin, gw.admin);
    await admin.getByRole('link', { name: 'Tenants' }).click();
    await settle(admin, 'Tenants');
    await admin.getByRole('link', { name: 'Single sign-on of Acme' }).click();
    await settle(admin, 'Single sign-on');
    await admin.getByText('Tenant: Acme').waitFor();
    await admin.getByRole('heading', { name: 'Acme Okta' }).waitFor();
    await admin.goto(`${origin}/tenants/ten_doesnotexist/sso`);
    await admin.getByRole('heading', { name: 'Not found' }).waitFor();
    assertClean(walk);
    assertClean(platform);
    await platform.context.close();
  });

  it('has no serious axe violations in the dark scheme, and nothing scrolls sideways at 390 px', async () => {
    const walk = await openWalk(browser, origin, { dark: true });
    const page = await walk.newPage();
    await page.goto(`${origin}/#ssoError=idp`);
    await page.getByRole('heading', { name: 'Sign in with your company account' }).waitFor();
    await audit(page, 'sign-in-sso-dark');
    await signIn(page, origin, admin, '/sso');
    await settle(page, 'Single sign-on');
    await audit(page, 'sso-dark');
    await page.getByRole('button', { name: 'Edit Acme Entra' }).click();
    await page.getByRole('dialog', { name: 'Edit Acme Entra' }).getByLabel('Group 1', { exact: true }).waitFor();
    await audit(page, 'sso-edit-dialog-dark');
    await page.keyboard.press('Escape');

    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, path, heading] of [
      ['sso', '/sso', 'Single sign-on'],
      ['users', '/users', 'Users'],
    ] as const) {
      await page.goto(origin + path);
      await settle(page, heading);
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: innerWidth }));
      assert.ok(widths.scroll <= widths.inner, `${path}: ${widths.scroll} px wide in ${widths.inner}`);
      await keepScreenshot(page, `${name}-390-dark`);
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto(`${origin}/`);
    await page.getByRole('heading', { name: 'Sign in with your company account' }).waitFor();
    const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: innerWidth }));
    assert.ok(widths.scroll <= widths.inner, `sign-in: ${widths.scroll} px wide in ${widths.inner}`);
    await keepScreenshot(page, 'sign-in-sso-390-dark');
    assert.deepEqual(failures, [], failures.join('\n'));
    assertClean(walk);
    await walk.context.close();
  });
});
