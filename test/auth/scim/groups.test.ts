// SCIM Groups (RFC 7643 §4.2) as Okta and Entra ID push them: create with members, read
// (with and without members), list by displayName, member add and remove by PATCH (by a
// value list, by a filter path, the two clients' ways), rename, replace, delete; members
// are the tenant's SCIM users and nothing else; and the role-mapping seam is asked
// about every user whose groups changed, and SCIM itself never grants a role.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedUser, startGateway, type TestGateway } from '../../helpers/gateway.js';
import { createGroup, patchGroup } from '../../../src/areas/auth/scim/groups.js';
import type { RoleForGroups } from '../../../src/areas/auth/scim/users.js';
import type { Principal } from '../../../src/platform/identity.js';
import { isScimError, oktaUser, SCHEMA, scim, scimTenant, type ScimTenant } from './support.js';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const patchOf = (...Operations: object[]) => ({ schemas: [PATCH], Operations });
let seq = 0;
const groupName = (label = 'Group') => `${label} ${Date.now().toString(36)}${++seq}`;

describe('SCIM Groups', () => {
  let gw: TestGateway;
  let a: ScimTenant;
  let b: ScimTenant;
  const as = (t: ScimTenant) => (method: string, path: string, json?: unknown) => scim(gw, t.scimToken, method, path, json);
  const newUser = async (t: ScimTenant = a) =>
    (await scim(gw, t.scimToken, 'POST', '/Users', oktaUser())).body as { id: string; userName: string };
  const memberIds = (group: any) => group.members.map((m: any) => m.value).sort();

  before(async () => {
    gw = await startGateway();
    a = await scimTenant(gw, 'scim-groups-a');
    b = await scimTenant(gw, 'scim-groups-b');
  });
  after(() => gw.close());

  it('creates a group with members, each with its display and $ref, and reads it with and without them', async () => {
    const [u1, u2] = [await newUser(), await newUser()];
    const name = groupName('Engineering');
    const created = await as(a)('POST', '/Groups', {
      schemas: [SCHEMA.group],
      displayName: name,
      externalId: `ext-${name}`,
      members: [{ value: u1.id }, { value: u2.id, type: 'User' }],
    });
    assert.equal(created.status, 201, created.text);
    const group = created.body;
    assert.match(group.id, /^grp_/);
    assert.equal(group.displayName, name);
    assert.deepEqual(memberIds(group), [u1.id, u2.id].sort());
    const one = group.members.find((m: any) => m.value === u1.id);
    assert.equal(one.display, u1.userName);
    assert.match(one.$ref, new RegExp(`/api/auth/scim/v2/Users/${u1.id}$`));
    assert.equal(group.meta.resourceType, 'Group');
    // The user resource lists its groups (read-only there).
    const user = (await as(a)('GET', `/Users/${u1.id}`)).body;
    assert.deepEqual(
      user.groups.map((g: any) => [g.value, g.display]),
      [[group.id, name]],
    );
    const slim = await as(a)('GET', `/Groups/${group.id}?excludedAttributes=members`);
    assert.equal(slim.status, 200);
    assert.equal(slim.body.members, undefined);
    assert.equal(slim.body.displayName, name);
  });

  it("lists groups by displayName (Entra's check before a create), with excludedAttributes=members, and pages", async () => {
    const u = await newUser();
    const name = groupName('Sales');
    const group = (await as(a)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: name, members: [{ value: u.id }] })).body;
    const filter = encodeURIComponent(`displayName eq "${name.toUpperCase()}"`);
    const listed = await as(a)('GET', `/Groups?filter=${filter}&excludedAttributes=members`);
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.totalResults, 1);
    assert.equal(listed.body.Resources[0].id, group.id);
    assert.equal(listed.body.Resources[0].members, undefined);
    const full = await as(a)('GET', `/Groups?filter=${filter}`);
    assert.deepEqual(memberIds(full.body.Resources[0]), [u.id]);
    const byExternal = await as(a)('GET', `/Groups?filter=${encodeURIComponent('externalId eq "nope"')}`);
    assert.equal(byExternal.body.totalResults, 0);
    for (const bad of ['members eq "x"', 'displayName co "S"', 'userName eq "x"'])
      assert.equal(isScimError(await as(a)('GET', `/Groups?filter=${encodeURIComponent(bad)}`), 400, 'invalidFilter'), undefined, bad);
    const page = await as(a)('GET', '/Groups?startIndex=1&count=1');
    assert.equal(page.body.itemsPerPage, 1);
    assert.ok(page.body.totalResults >= 2);
  });

  it("adds and removes members with Entra's PATCH: a value list, and remove of a value list removes only those", async () => {
    const [u1, u2, u3] = [await newUser(), await newUser(), await newUser()];
    const group = (await as(a)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: groupName() })).body;
    const added = await as(a)(
      'PATCH',
      `/Groups/${group.id}`,
      patchOf({ op: 'Add', path: 'members', value: [{ value: u1.id }, { value: u2.id }, { value: u3.id }] }),
    );
    assert.equal(added.status, 200, added.text);
    assert.deepEqual(memberIds(added.body), [u1.id, u2.id, u3.id].sort());
    // Adding one already there changes nothing.
    const again = await as(a)('PATCH', `/Groups/${group.id}`, patchOf({ op: 'add', path: 'members', value: [{ value: u1.id }] }));
    assert.deepEqual(memberIds(again.body), [u1.id, u2.id, u3.id].sort());
    const removed = await as(a)('PATCH', `/Groups/${group.id}`, patchOf({ op: 'Remove', path: 'members', value: [{ value: u2.id }] }));
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(memberIds(removed.body), [u1.id, u3.id].sort());
  });

  it('removes a member by filter path (Okta\'s and Entra\'s members[value eq "…"]) and renames without a path', async () => {
    const [u1, u2] = [await newUser(), await newUser()];
    const group = (
      await as(a)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: groupName(), members: [{ value: u1.id }, { value: u2.id }] })
    ).body;
    const removed = await as(a)('PATCH', `/Groups/${group.id}`, patchOf({ op: 'remove', path: `members[value eq "${u1.id}"]` }));
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(memberIds(removed.body), [u2.id]);
    const newName = groupName('Renamed');
    const renamed = await as(a)('PATCH', `/Groups/${group.id}`, patchOf({ op: 'replace', value: { id: group.id, displayName: newName } }));
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.displayName, newName);
    assert.deepEqual(memberIds(renamed.body), [u2.id]);
    // Replacing members replaces the list; removing `members` without a value empties it (RFC 7644 §3.5.2.2).
    const replaced = await as(a)('PATCH', `/Groups/${group.id}`, patchOf({ op: 'replace', path: 'members', value: [{ value: u1.id }] }));
    assert.deepEqual(memberIds(replaced.body), [u1.id]);
    const emptied = await as(a)('PATCH', `/Groups/${group.id}`, patchOf({ op: 'remove', path: 'members' }));
    assert.deepEqual(emptied.body.members, []);
  });

  it("takes only the tenant's SCIM users as members: an unknown id, another tenant's user and a local account are one 400", async () => {
    const theirs = await newUser(b);
    const local = await seedUser(gw, a.tenantId);
    const group = (await as(a)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: groupName() })).body;
    const details = new Set<string>();
    for (const id of [theirs.id, local.id, 'usr_01ABCDEFGHJKMNPQRSTVWXYZ0', 'not-an-id']) {
      const answer = await as(a)('PATCH', `/Groups/${group.id}`, patchOf({ op: 'add', path: 'members', value: [{ value: id }] }));
      assert.equal(isScimError(answer, 400, 'invalidValue'), undefined, id);
      details.add(answer.body.detail.replace(id, 'ID'));
    }
    assert.equal(details.size, 1, [...details].join(' | '));
    const nested = await as(a)('POST', '/Groups', {
      schemas: [SCHEMA.group],
      displayName: groupName(),
      members: [{ value: group.id, type: 'Group' }],
    });
    assert.equal(isScimError(nested, 400, 'invalidValue'), undefined);
    assert.deepEqual((await as(a)('GET', `/Groups/${group.id}`)).body.members, []);
  });

  it('keeps displayName unique in the tenant (409 uniqueness, any case) but not across tenants', async () => {
    const name = groupName('Unique');
    assert.equal((await as(a)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: name })).status, 201);
    assert.equal(
      isScimError(await as(a)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: name.toLowerCase() }), 409, 'uniqueness'),
      undefined,
    );
    assert.equal((await as(b)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: name })).status, 201);
    const other = (await as(a)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: groupName() })).body;
    const clash = await as(a)('PATCH', `/Groups/${other.id}`, patchOf({ op: 'replace', path: 'displayName', value: name }));
    assert.equal(isScimError(clash, 409, 'uniqueness'), undefined);
  });

  it("is the same 404 for another tenant's group as for an unknown one; replaces with PUT and deletes", async () => {
    const theirs = (await as(b)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: groupName() })).body;
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { schemas: [SCHEMA.group], displayName: 'x' }],
      ['PATCH', patchOf({ op: 'remove', path: 'members' })],
      ['DELETE', undefined],
    ] as const) {
      assert.equal(isScimError(await as(a)(method, `/Groups/${theirs.id}`, body), 404), undefined, method);
      assert.equal(isScimError(await as(a)(method, '/Groups/grp_01ABCDEFGHJKMNPQRSTVWXYZ0', body), 404), undefined, method);
    }
    assert.equal((await as(b)('GET', `/Groups/${theirs.id}`)).body.displayName, theirs.displayName);

    const u = await newUser();
    const group = (await as(a)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: groupName() })).body;
    const name = groupName('Put');
    const put = await as(a)('PUT', `/Groups/${group.id}`, { schemas: [SCHEMA.group], displayName: name, members: [{ value: u.id }] });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.displayName, name);
    assert.deepEqual(memberIds(put.body), [u.id]);
    assert.equal((await as(a)('DELETE', `/Groups/${group.id}`)).status, 204);
    assert.equal(isScimError(await as(a)('GET', `/Groups/${group.id}`), 404), undefined);
    assert.deepEqual((await as(a)('GET', `/Users/${u.id}`)).body.groups, []);
  });

  it('asks the role-mapping seam about each user whose groups change, and applies admin or member, never platform_admin', async () => {
    const asked: [string, string[]][] = [];
    const mapping: RoleForGroups = async (tenantId, names) => {
      asked.push([tenantId, [...names].sort()]);
      return names.some((n) => n.startsWith('Admins')) ? 'admin' : names.length ? 'member' : null;
    };
    const deps = { db: gw.ctx.db, bus: gw.ctx.bus, config: gw.ctx.config, roleForGroups: mapping };
    const principal: Principal = { tenantId: a.tenantId, kind: 'scim', subject: 'scimt_test', roles: [], scopes: [] };
    const base = 'https://gateway.example/api/auth/scim/v2';
    const u = await newUser();
    const rolesOf = async () => (await gw.ctx.db.query<{ roles: string[] }>('SELECT roles FROM users WHERE id = $1', [u.id]))[0]!.roles;
    const admins = groupName('Admins');
    const group = await createGroup(deps, principal, { schemas: [SCHEMA.group], displayName: admins, members: [{ value: u.id }] }, base);
    assert.deepEqual(asked.at(-1), [a.tenantId, [admins]]);
    assert.deepEqual(await rolesOf(), ['admin']);
    // The mapping's answer shows in the user resource, still read-only there.
    assert.deepEqual((await as(a)('GET', `/Users/${u.id}`)).body.roles, [{ value: 'admin' }]);
    // Renamed out of the mapping's admin name: demoted.
    await patchGroup(deps, principal, group.id, patchOf({ op: 'replace', path: 'displayName', value: groupName('Staff') }), base);
    assert.deepEqual(await rolesOf(), ['member']);
    await patchGroup(deps, principal, group.id, patchOf({ op: 'replace', path: 'displayName', value: groupName('Admins') }), base);
    assert.deepEqual(await rolesOf(), ['admin']);
    // Removed from every group: the mapping answers null, and the roles are left as they are.
    await patchGroup(deps, principal, group.id, patchOf({ op: 'remove', path: `members[value eq "${u.id}"]` }), base);
    assert.deepEqual(asked.at(-1), [a.tenantId, []]);
    assert.deepEqual(await rolesOf(), ['admin']);
  });

  it("gives roles through the tenant's SSO role mapping only: promoted by the admins' group, demoted on leaving it, never platform_admin", async () => {
    const rolesOf = async (id: string) =>
      (await gw.ctx.db.query<{ roles: string[] }>('SELECT roles FROM users WHERE id = $1', [id]))[0]!.roles;
    const admins = groupName('Gateway admins');
    // Tenant b maps no group: membership changes no role there.
    const unmapped = await newUser(b);
    await as(b)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: admins, members: [{ value: unmapped.id }] });
    assert.deepEqual(await rolesOf(unmapped.id), ['member']);

    const connection = await gw.request('POST', `/api/auth/tenants/${a.tenantId}/sso/connections`, {
      token: a.adminToken,
      json: {
        name: 'Corporate IdP',
        issuer: 'https://192.0.2.10/realms/acme',
        clientId: 'gateway',
        clientSecret: 'a-client-secret',
        roleMapping: { [admins]: 'admin', platform_admin: 'admin' },
      },
    });
    assert.equal(connection.status, 201, connection.text);
    const u = await newUser();
    const group = (await as(a)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: admins, members: [{ value: u.id }] })).body;
    assert.deepEqual(await rolesOf(u.id), ['admin']);
    assert.deepEqual((await as(a)('GET', `/Users/${u.id}`)).body.roles, [{ value: 'admin' }]);
    const removed = await as(a)('PATCH', `/Groups/${group.id}`, patchOf({ op: 'Remove', path: `members[value eq "${u.id}"]` }));
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(await rolesOf(u.id), ['member'], 'out of every mapped group: member');
    // A group named like the platform role is just a name: it maps to a tenant admin at most.
    const named = await as(a)('POST', '/Groups', { schemas: [SCHEMA.group], displayName: 'platform_admin', members: [{ value: u.id }] });
    assert.equal(named.status, 201, named.text);
    assert.deepEqual(await rolesOf(u.id), ['admin']);
  });
});
