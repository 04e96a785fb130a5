// SCIM Users (RFC 7643 §4.1, RFC 7644 §3) as Okta's and Entra ID's provisioning clients
// drive them: create, read, replace, patch (both dialects), delete, list with filters
// and paging, the 409s, the bad bodies, and the mapping onto the platform's user
// (the person signs in with the userName). Tenant isolation: tenant B's token on tenant
// A's ids is the same 404 as an unknown id.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedUser, startGateway, type TestGateway } from '../../helpers/gateway.js';
import { isScimError, oktaUser, SCHEMA, SCIM, scim, scimTenant, type ScimTenant } from './support.js';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const patchOf = (...Operations: object[]) => ({ schemas: [PATCH], Operations });
const q = (filter: string) => `?filter=${encodeURIComponent(filter)}`;

describe('SCIM Users', () => {
  let gw: TestGateway;
  let a: ScimTenant;
  let b: ScimTenant;
  const as = (t: ScimTenant) => (method: string, path: string, json?: unknown, headers?: Record<string, string>) =>
    scim(gw, t.scimToken, method, path, json, headers);

  before(async () => {
    gw = await startGateway();
    a = await scimTenant(gw, 'scim-users-a');
    b = await scimTenant(gw, 'scim-users-b');
  });
  after(async () => {
    // No SCIM token ever reaches a log line.
    const logs = gw.logs();
    for (const token of [a.scimToken, b.scimToken]) assert.ok(!logs.includes(token), 'a SCIM token was logged');
    assert.ok(!logs.includes(a.scimToken.slice(5, 25)), 'part of a SCIM token was logged');
    await gw.close();
  });

  it('creates a user (201, the resource with id, meta and the Location of it), as application/scim+json', async () => {
    const sent = oktaUser();
    const created = await as(a)('POST', '/Users', sent);
    assert.equal(created.status, 201, created.text);
    assert.match(created.headers.get('content-type') ?? '', /^application\/scim\+json/);
    const user = created.body;
    assert.deepEqual(user.schemas, [SCHEMA.user]);
    assert.match(user.id, /^usr_/);
    assert.equal(user.userName, sent.userName);
    assert.equal(user.externalId, sent.externalId);
    assert.equal(user.displayName, sent.displayName);
    assert.deepEqual(user.name, sent.name);
    assert.deepEqual(user.emails, sent.emails);
    assert.equal(user.active, true);
    assert.deepEqual(user.groups, []);
    assert.deepEqual(user.roles, [{ value: 'member' }]);
    assert.equal(user.meta.resourceType, 'User');
    assert.equal(user.meta.location, `${gw.url}${SCIM}/Users/${user.id}`);
    assert.equal(user.password, undefined);

    const read = await as(a)('GET', `/Users/${user.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, user);
    // Stored as the user record: the userName is the username, the primary address the e-mail, externalId its column.
    const [row] = await gw.ctx.db.query<any>('SELECT * FROM users WHERE id = $1', [user.id]);
    assert.equal(row.tenant_id, a.tenantId);
    assert.equal(row.username, sent.userName);
    assert.equal(row.email, sent.emails[0]!.value);
    assert.equal(row.external_id, sent.externalId);
    assert.equal(row.provisioned_by, 'scim');
  });

  it('takes application/json too, and a body whose attribute names and booleans are written oddly', async () => {
    const sent = oktaUser();
    const created = await gw.request('POST', `${SCIM}/Users`, {
      token: a.scimToken,
      json: {
        schemas: sent.schemas,
        UserName: sent.userName,
        EMAILS: [{ Value: `x${sent.emails[0]!.value}`, Primary: 'True' }],
        Active: 'False',
      },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.userName, sent.userName);
    assert.equal(created.body.active, false);
    assert.deepEqual(created.body.emails, [{ value: `x${sent.emails[0]!.value}`, primary: true }]);
  });

  it('lets the person sign in with the userName (an e-mail-shaped UPN) and the password the client set, never the password back', async () => {
    const password = 'a SCIM-synced password 1';
    const sent = oktaUser({
      userName: `upn.${Date.now()}@corp.onmicrosoft.example`,
      emails: [{ value: `mail.${Date.now()}@corp.example`, primary: true }],
      password,
    });
    const created = await as(a)('POST', '/Users', sent);
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.password, undefined);
    for (const login of [sent.userName, sent.userName.toUpperCase(), sent.emails[0]!.value]) {
      const signedIn = await gw.request('POST', '/api/auth/login', { json: { username: login, password } });
      assert.equal(signedIn.status, 200, `${login}: ${signedIn.text}`);
      assert.equal(signedIn.body.user.id, created.body.id);
      assert.equal(signedIn.body.user.tenantId, a.tenantId);
    }
    // Without a password the account has none: no password signs it in (the IdP's SSO does).
    const passwordless = await as(a)('POST', '/Users', oktaUser());
    const refused = await gw.request('POST', '/api/auth/login', {
      json: { username: passwordless.body.userName, password: 'anything at all 1' },
    });
    assert.equal(refused.status, 401);
    const short = await as(a)('POST', '/Users', oktaUser({ password: 'short' }));
    assert.equal(isScimError(short, 400, 'invalidValue'), undefined);
  });

  it('answers 409 uniqueness to a second POST of a userName (any case), an externalId, or an address in use', async () => {
    const sent = oktaUser();
    assert.equal((await as(a)('POST', '/Users', sent)).status, 201);
    const again = await as(a)('POST', '/Users', { ...sent, externalId: 'other' });
    assert.equal(isScimError(again, 409, 'uniqueness'), undefined);
    const upper = await as(a)('POST', '/Users', { ...oktaUser(), userName: sent.userName.toUpperCase() });
    assert.equal(isScimError(upper, 409, 'uniqueness'), undefined);
    const sameExternal = await as(a)('POST', '/Users', { ...oktaUser(), externalId: sent.externalId });
    assert.equal(isScimError(sameExternal, 409, 'uniqueness'), undefined);
    const sameMail = await as(a)('POST', '/Users', { ...oktaUser(), emails: sent.emails });
    assert.equal(isScimError(sameMail, 409, 'uniqueness'), undefined);
    // Another tenant may use the same externalId: it is unique per tenant.
    assert.equal((await as(b)('POST', '/Users', { ...oktaUser(), externalId: sent.externalId })).status, 201);
  });

  it('never adopts a local account: its userName or address is 409, it is not listed, and its id is 404', async () => {
    const email = `local.${Date.now()}@corp.example`;
    const local = await seedUser(gw, a.tenantId, ['admin'], email);
    for (const body of [oktaUser({ userName: local.username }), oktaUser({ userName: email }), oktaUser({ emails: [{ value: email }] })]) {
      const answer = await as(a)('POST', '/Users', body);
      assert.equal(isScimError(answer, 409, 'uniqueness'), undefined);
    }
    const listed = await as(a)('GET', `/Users${q(`userName eq "${local.username}"`)}`);
    assert.equal(listed.body.totalResults, 0);
    const read = await as(a)('GET', `/Users/${local.id}`);
    assert.equal(isScimError(read, 404), undefined);
    const patched = await as(a)('PATCH', `/Users/${local.id}`, patchOf({ op: 'replace', value: { active: false } }));
    assert.equal(isScimError(patched, 404), undefined);
    const [row] = await gw.ctx.db.query<any>('SELECT status, provisioned_by FROM users WHERE id = $1', [local.id]);
    assert.deepEqual(row, { status: 'active', provisioned_by: null });
  });

  it('keeps one sign-in name to one account: a local account cannot take a provisioned userName as its e-mail address', async () => {
    const provisioned = (await as(a)('POST', '/Users', oktaUser())).body;
    const local = await seedUser(gw, a.tenantId);
    const taken = await gw.request('PATCH', `/api/auth/tenants/${a.tenantId}/users/${local.id}`, {
      token: a.adminToken,
      json: { email: provisioned.userName.toUpperCase() },
    });
    assert.equal(taken.status, 409, taken.text);
    const created = await gw.request('POST', `/api/auth/tenants/${a.tenantId}/users`, {
      token: a.adminToken,
      json: { username: `local${Date.now()}`, password: 'a long enough password', email: provisioned.userName },
    });
    assert.equal(created.status, 409, created.text);
  });

  it("answers a userName taken in another tenant with the same 409 as its own, revealing nothing of that tenant's user", async () => {
    const theirs = (await as(b)('POST', '/Users', oktaUser())).body;
    const answer = await as(a)('POST', '/Users', oktaUser({ userName: theirs.userName }));
    const own = (await as(a)('POST', '/Users', oktaUser())).body;
    const ownAgain = await as(a)('POST', '/Users', oktaUser({ userName: own.userName }));
    assert.equal(isScimError(answer, 409, 'uniqueness'), undefined);
    assert.deepEqual(answer.body, ownAgain.body);
    assert.ok(!answer.text.includes(theirs.id) && !answer.text.includes(b.tenantId));
  });

  it("is the same 404 for another tenant's user id as for an unknown one, on every method", async () => {
    const theirs = (await as(b)('POST', '/Users', oktaUser())).body;
    const unknown = 'usr_01ABCDEFGHJKMNPQRSTVWXYZ0';
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', oktaUser()],
      ['PATCH', patchOf({ op: 'replace', path: 'active', value: false })],
      ['DELETE', undefined],
    ] as const) {
      const other = await as(a)(method, `/Users/${theirs.id}`, body);
      const none = await as(a)(method, `/Users/${unknown}`, body);
      assert.equal(isScimError(other, 404), undefined, `${method}`);
      assert.equal(isScimError(none, 404), undefined, `${method}`);
      assert.equal(other.body.detail.replace(theirs.id, 'ID'), none.body.detail.replace(unknown, 'ID'), method);
    }
    const still = await as(b)('GET', `/Users/${theirs.id}`);
    assert.equal(still.status, 200);
    assert.equal(still.body.active, true);
    const listed = await as(a)('GET', `/Users${q(`userName eq "${theirs.userName}"`)}`);
    assert.equal(listed.body.totalResults, 0);
  });

  it('replaces a user with PUT: what the body leaves out is cleared', async () => {
    const created = (await as(a)('POST', '/Users', oktaUser({ title: 'Engineer', nickName: 'Pat' }))).body;
    const body = {
      schemas: [SCHEMA.user],
      id: created.id,
      userName: created.userName,
      emails: created.emails,
      active: true,
      title: 'Manager',
    };
    const replaced = await as(a)('PUT', `/Users/${created.id}`, body);
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.body.title, 'Manager');
    assert.equal(replaced.body.nickName, undefined);
    assert.equal(replaced.body.externalId, undefined);
    assert.equal(replaced.body.name, undefined);
    assert.equal((await as(a)('GET', `/Users/${created.id}`)).body.title, 'Manager');
  });

  it("applies Okta's PATCH dialect: replace without a path, whose value names the attributes", async () => {
    const created = (await as(a)('POST', '/Users', oktaUser())).body;
    const patched = await as(a)('PATCH', `/Users/${created.id}`, patchOf({ op: 'replace', value: { active: false } }));
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.active, false);
    const renamed = await as(a)(
      'PATCH',
      `/Users/${created.id}`,
      patchOf({
        op: 'replace',
        value: { id: created.id, active: true, name: { givenName: 'Sam', familyName: 'Smith' }, displayName: 'Sam Smith' },
      }),
    );
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.active, true);
    assert.deepEqual(renamed.body.name, { givenName: 'Sam', familyName: 'Smith' });
    assert.equal(renamed.body.displayName, 'Sam Smith');
  });

  it('applies Entra ID\'s PATCH dialect: op in any case, "False" as a string, paths with filters, dotted names', async () => {
    const created = (await as(a)('POST', '/Users', oktaUser({ emails: undefined }))).body;
    const address = `entra.${Date.now()}@corp.example`;
    const patched = await as(a)(
      'PATCH',
      `/Users/${created.id}`,
      patchOf(
        { op: 'Replace', path: 'emails[type eq "work"].value', value: address },
        { op: 'Add', path: 'name.givenName', value: 'Alex' },
        { op: 'Replace', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'Research' },
        { op: 'Add', value: { 'name.familyName': 'Doe', 'urn:ietf:params:scim:schemas:core:2.0:User:title': 'Lead' } },
        { op: 'Replace', path: 'active', value: 'False' },
      ),
    );
    assert.equal(patched.status, 200, patched.text);
    const user = patched.body;
    assert.deepEqual(user.emails, [{ type: 'work', value: address }]);
    assert.equal(user.name.givenName, 'Alex');
    assert.equal(user.name.familyName, 'Doe');
    assert.equal(user.title, 'Lead');
    assert.equal(user.active, false);
    assert.deepEqual(user.schemas, [SCHEMA.user, SCHEMA.enterpriseUser]);
    assert.deepEqual(user[SCHEMA.enterpriseUser], { department: 'Research' });
    const [row] = await gw.ctx.db.query<any>('SELECT email, status FROM users WHERE id = $1', [created.id]);
    assert.deepEqual(row, { email: address, status: 'disabled' });
    // Entra looks a user up by externalId, and the filter finds them by the new address too.
    for (const filter of [`externalId eq "${created.externalId}"`, `emails.value eq "${address.toUpperCase()}"`]) {
      const found = await as(a)('GET', `/Users${q(filter)}`);
      assert.equal(found.body.totalResults, 1, filter);
      assert.equal(found.body.Resources[0].id, created.id, filter);
    }
    const removed = await as(a)(
      'PATCH',
      `/Users/${created.id}`,
      patchOf({ op: 'remove', path: 'emails[type eq "work"]' }, { op: 'remove', path: 'title' }),
    );
    assert.equal(removed.status, 200, removed.text);
    assert.equal(removed.body.emails, undefined);
    assert.equal(removed.body.title, undefined);
  });

  it('refuses any change of roles, groups or entitlements (400 mutability): SCIM never grants a role', async () => {
    const created = (await as(a)('POST', '/Users', oktaUser())).body;
    for (const operation of [
      { op: 'replace', path: 'roles', value: [{ value: 'platform_admin' }] },
      { op: 'add', path: 'roles', value: [{ value: 'admin' }] },
      { op: 'add', value: { roles: [{ value: 'admin' }] } },
      { op: 'replace', path: 'roles[primary eq "True"].value', value: 'admin' },
      { op: 'add', path: 'groups', value: [{ value: 'grp_x' }] },
      { op: 'add', path: 'entitlements', value: [{ value: 'admin' }] },
      { op: 'replace', path: 'id', value: 'usr_other' },
    ]) {
      const answer = await as(a)('PATCH', `/Users/${created.id}`, patchOf(operation));
      assert.equal(isScimError(answer, 400, 'mutability'), undefined, JSON.stringify(operation));
    }
    const put = await as(a)('PUT', `/Users/${created.id}`, { ...oktaUser({ userName: created.userName }), roles: [{ value: 'admin' }] });
    assert.equal(isScimError(put, 400, 'mutability'), undefined);
    const post = await as(a)('POST', '/Users', { ...oktaUser(), roles: [{ value: 'platform_admin' }] });
    assert.equal(isScimError(post, 400, 'mutability'), undefined);
    const entitled = await as(a)('POST', '/Users', { ...oktaUser(), entitlements: [{ value: 'admin' }] });
    assert.equal(isScimError(entitled, 400, 'mutability'), undefined);
    // Echoing back the roles it read is no change, and is accepted.
    const echoed = await as(a)('PUT', `/Users/${created.id}`, { ...oktaUser({ userName: created.userName }), roles: created.roles });
    assert.equal(echoed.status, 200, echoed.text);
    const [row] = await gw.ctx.db.query<any>('SELECT roles FROM users WHERE id = $1', [created.id]);
    assert.deepEqual(row.roles, ['member']);
  });

  it('refuses PATCHes it cannot apply with the SCIM error that says why', async () => {
    const created = (await as(a)('POST', '/Users', oktaUser())).body;
    const cases: [object, string][] = [
      [{ schemas: [SCHEMA.user], Operations: [{ op: 'replace', path: 'active', value: false }] }, 'invalidSyntax'],
      [patchOf(), 'invalidSyntax'],
      [patchOf({ op: 'move', path: 'active' }), 'invalidSyntax'],
      [patchOf({ op: 'remove' }), 'noTarget'],
      [patchOf({ op: 'replace', path: 'favouriteColour', value: 'red' }), 'invalidPath'],
      [patchOf({ op: 'replace', path: 'emails[type eq "work"', value: 'x' }), 'invalidPath'],
      [patchOf({ op: 'replace', path: 'active', value: 'maybe' }), 'invalidValue'],
      [patchOf({ op: 'replace', path: 'userName', value: '' }), 'invalidValue'],
      [patchOf({ op: 'replace', path: 'emails', value: [{ value: 'not an address' }] }), 'invalidValue'],
      [patchOf({ op: 'replace', path: 'phoneNumbers[type eq "fax"]', value: { value: '1' } }), 'noTarget'],
    ];
    for (const [body, scimType] of cases) {
      const answer = await as(a)('PATCH', `/Users/${created.id}`, body);
      assert.equal(isScimError(answer, 400, scimType), undefined, JSON.stringify(body));
    }
    assert.equal((await as(a)('GET', `/Users/${created.id}`)).body.active, true, 'nothing applied');
  });

  it('refuses bad bodies: malformed JSON, a missing or wrong schema, no userName, a body over the limit, another media type', async () => {
    const raw = (body: string, contentType = 'application/scim+json') =>
      gw.request('POST', `${SCIM}/Users`, { token: a.scimToken, headers: { 'content-type': contentType }, body });
    assert.equal(isScimError(await raw('{"schemas": ['), 400, 'invalidSyntax'), undefined);
    assert.equal(isScimError(await raw('[1, 2]'), 400), undefined);
    assert.equal(isScimError(await raw('{"__proto__": {"x": 1}, "schemas": []}'), 400, 'invalidSyntax'), undefined);
    assert.equal(isScimError(await as(a)('POST', '/Users', { userName: 'x@y.example' }), 400, 'invalidSyntax'), undefined);
    assert.equal(
      isScimError(await as(a)('POST', '/Users', { schemas: [SCHEMA.group], userName: 'x@y.example' }), 400, 'invalidSyntax'),
      undefined,
    );
    assert.equal(isScimError(await as(a)('POST', '/Users', { schemas: [SCHEMA.user] }), 400, 'invalidValue'), undefined);
    assert.equal(isScimError(await as(a)('POST', '/Users', { ...oktaUser(), userName: 'tab\there' }), 400, 'invalidValue'), undefined);
    assert.equal(isScimError(await as(a)('POST', '/Users', { ...oktaUser(), nickName: 'nul\u0000' }), 400, 'invalidValue'), undefined);
    const huge = JSON.stringify({ ...oktaUser(), title: 't'.repeat(1024 * 1024 + 10) });
    assert.equal(isScimError(await raw(huge), 413), undefined);
    const large = JSON.stringify({ ...oktaUser(), addresses: Array.from({ length: 400 }, () => ({ formatted: 'f'.repeat(100) })) });
    assert.equal(isScimError(await raw(large), 400, 'invalidValue'), undefined);
    assert.equal(isScimError(await raw('userName=x', 'application/x-www-form-urlencoded'), 415), undefined);
    // The media type with a charset, as Okta sends it.
    assert.equal((await raw(JSON.stringify(oktaUser()), 'application/scim+json; charset=utf-8')).status, 201);
  });

  it('filters with eq on userName (case-insensitive), externalId (case-exact), emails.value and displayName, joined by and', async () => {
    const sent = oktaUser({ displayName: `Filter Person ${Date.now()}` });
    const created = (await as(a)('POST', '/Users', sent)).body;
    const hits = async (filter: string) => (await as(a)('GET', `/Users${q(filter)}`)).body;
    for (const filter of [
      `userName eq "${sent.userName}"`,
      `USERNAME EQ "${sent.userName.toUpperCase()}"`,
      `urn:ietf:params:scim:schemas:core:2.0:User:userName eq "${sent.userName}"`,
      `externalId eq "${sent.externalId}"`,
      `emails.value eq "${sent.emails[0]!.value}"`,
      `displayName eq "${sent.displayName.toLowerCase()}"`,
      `userName eq "${sent.userName}" and externalId eq "${sent.externalId}"`,
    ]) {
      const list = await hits(filter);
      assert.equal(list.totalResults, 1, filter);
      assert.equal(list.Resources[0].id, created.id, filter);
    }
    for (const filter of [
      `externalId eq "${sent.externalId.toUpperCase()}"`,
      `userName eq "${sent.userName}" and externalId eq "nope"`,
      'userName eq "nobody@nowhere.example"',
    ]) {
      const list = await hits(filter);
      assert.deepEqual([list.totalResults, list.Resources], [0, []], filter);
      assert.deepEqual(list.schemas, [SCHEMA.listResponse]);
    }
  });

  it('answers 400 invalidFilter to any other filter, never the whole list', async () => {
    for (const filter of [
      'userName co "a"',
      'userName sw "a"',
      'userName pr',
      'title eq "x"',
      'active eq true',
      'userName eq "a" or userName eq "b"',
      'not (userName eq "a")',
      '(userName eq "a")',
      'emails[type eq "work"]',
      'userName eq a',
      'userName eq "unterminated',
      'userName eq true',
      'meta.lastModified gt "2011-05-13T04:42:34Z"',
      '',
      'userName eq "a" and',
    ]) {
      const answer = await as(a)('GET', `/Users${q(filter)}`);
      assert.equal(isScimError(answer, 400, 'invalidFilter'), undefined, filter);
    }
  });

  it('pages with startIndex and count: totalResults counts every match, count 0 answers the total alone', async () => {
    const t = await scimTenant(gw, 'scim-paging');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await scim(gw, t.scimToken, 'POST', '/Users', oktaUser())).body.id);
    const page = async (query: string) => (await scim(gw, t.scimToken, 'GET', `/Users${query}`)).body;
    const first = await page('?startIndex=1&count=2');
    assert.deepEqual([first.totalResults, first.startIndex, first.itemsPerPage], [5, 1, 2]);
    assert.deepEqual(
      first.Resources.map((r: any) => r.id),
      ids.slice(0, 2),
    );
    const second = await page('?startIndex=3&count=2');
    assert.deepEqual(
      second.Resources.map((r: any) => r.id),
      ids.slice(2, 4),
    );
    const last = await page('?startIndex=5&count=2');
    assert.deepEqual(
      last.Resources.map((r: any) => r.id),
      ids.slice(4),
    );
    assert.deepEqual((await page('?startIndex=9')).Resources, []);
    const none = await page('?count=0');
    assert.deepEqual([none.totalResults, none.itemsPerPage, none.Resources], [5, 0, []]);
    // Okta's first request: count=1, startIndex=1. Below 1 counts as 1, a negative count as 0 (RFC 7644 §3.4.2.4).
    assert.equal((await page('?count=1&startIndex=1')).Resources.length, 1);
    assert.equal((await page('?startIndex=-4&count=1')).startIndex, 1);
    assert.equal((await page('?count=-1')).itemsPerPage, 0);
    assert.equal(isScimError(await scim(gw, t.scimToken, 'GET', '/Users?count=ten'), 400, 'invalidValue'), undefined);
    // attributes and excludedAttributes choose what each resource carries (id and schemas always).
    const slim = await page('?count=1&attributes=userName');
    assert.deepEqual(Object.keys(slim.Resources[0]).sort(), ['id', 'schemas', 'userName']);
    const noGroups = await page('?count=1&excludedAttributes=groups,meta');
    assert.equal(noGroups.Resources[0].groups, undefined);
    assert.equal(noGroups.Resources[0].meta, undefined);
  });

  it('deletes a user: 204, then 404, and the userName is free again', async () => {
    const created = (await as(a)('POST', '/Users', oktaUser())).body;
    const deleted = await as(a)('DELETE', `/Users/${created.id}`);
    assert.equal(deleted.status, 204);
    assert.equal(isScimError(await as(a)('GET', `/Users/${created.id}`), 404), undefined);
    assert.equal(isScimError(await as(a)('DELETE', `/Users/${created.id}`), 404), undefined);
    assert.equal((await as(a)('POST', '/Users', oktaUser({ userName: created.userName }))).status, 201);
  });

  it('serves the same resources at lowercase paths and answers unknown SCIM paths with a SCIM 404', async () => {
    const created = (await as(a)('POST', '/users', oktaUser())).body;
    assert.equal((await as(a)('GET', `/users/${created.id}`)).status, 200);
    assert.equal(isScimError(await as(a)('GET', '/Bulk'), 404), undefined);
    assert.equal(isScimError(await as(a)('GET', `/Users/${created.id}/extra`), 404), undefined);
  });
});
