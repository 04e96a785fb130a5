import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, seedUser, type TestGateway, tokenFor } from '../helpers/gateway.js';
import { seedWorld } from '../helpers/world.js';
import { verifyPassword } from '../../src/platform/passwords.js';

const USER_FIELDS = ['createdAt', 'email', 'emailVerified', 'id', 'roles', 'status', 'tenantId', 'twoFactorEnabled', 'username'];

describe('auth users', () => {
  let gw: TestGateway;
  let tenantA: string;
  let tenantB: string;
  let adminAId: string;
  let adminA: string;
  let secondAdminAId: string;
  let secondAdminA: string;
  let memberAId: string;
  let memberA: string;
  let adminB: string;
  let platformAdmin: string;

  const usersPath = (tenantId: string) => `/api/auth/tenants/${tenantId}/users`;
  const userPath = (tenantId: string, userId: string) => `${usersPath(tenantId)}/${userId}`;
  const workspacesAs = (token: string) => gw.request('GET', '/api/os/workspaces', { token });

  before(async () => {
    gw = await startGateway();
    const world = await seedWorld(gw, 'users');
    tenantA = world.a.tenantId;
    tenantB = world.b.tenantId;
    adminAId = world.a.admin.id;
    adminA = world.a.admin.token;
    adminB = world.b.admin.token;
    platformAdmin = world.platform.admin.token;
    memberAId = world.a.member.id;
    memberA = world.a.member.token;
    const second = await seedUser(gw, tenantA, ['admin']);
    secondAdminAId = second.id;
    secondAdminA = await tokenFor(gw, second.id, tenantA);
  });
  after(() => gw.close());

  it('creates a user, lists and gets it, never with the password hash', async () => {
    const password = 'correct horse battery';
    const created = await gw.request('POST', usersPath(tenantA), {
      token: adminA,
      json: { username: 'ada.l', password, email: 'ada@example.com' },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), USER_FIELDS);
    assert.match(created.body.id, /^usr_/);
    assert.equal(created.body.username, 'ada.l');
    assert.equal(created.body.email, 'ada@example.com');
    assert.equal(created.body.tenantId, tenantA);
    assert.deepEqual(created.body.roles, ['member'], 'member unless roles are given');
    assert.equal(created.body.status, 'active');
    assert.equal(created.body.twoFactorEnabled, false);

    const list = await gw.request('GET', usersPath(tenantA), { token: adminA });
    assert.equal(list.status, 200);
    const ids = list.body.data.map((u: { id: string }) => u.id);
    for (const id of [adminAId, secondAdminAId, memberAId, created.body.id]) assert.ok(ids.includes(id));
    assert.ok(list.body.data.every((u: { tenantId: string }) => u.tenantId === tenantA));
    assert.deepEqual(
      list.body.data.find((u: { id: string }) => u.id === created.body.id),
      created.body,
    );

    const got = await gw.request('GET', userPath(tenantA, created.body.id), { token: adminA });
    assert.deepEqual(got.body, created.body);
    for (const text of [created.text, list.text, got.text])
      assert.ok(!text.includes('scrypt') && !text.includes(password) && !text.includes('password'));

    // The new account works in its tenant.
    const ws = await workspacesAs(await tokenFor(gw, created.body.id, tenantA));
    assert.equal(ws.status, 200);

    const admin = await gw.request('POST', usersPath(tenantA), {
      token: adminA,
      json: { username: 'grace', password, roles: ['admin', 'member'] },
    });
    assert.deepEqual(admin.body.roles, ['admin', 'member']);
  });

  it('answers 409 for a username or e-mail already in use, on any tenant', async () => {
    const password = 'another long password';
    const cases = [
      { username: 'ADA.L', password },
      { username: 'ada-2', password, email: 'ADA@example.com' },
    ];
    for (const json of cases) {
      const response = await gw.request('POST', usersPath(tenantA), { token: adminA, json });
      assert.equal(response.status, 409, JSON.stringify(json));
      assert.equal(response.body.code, 'CONFLICT');
    }
    // Usernames are platform-wide: login takes no tenant.
    assert.equal((await gw.request('POST', usersPath(tenantB), { token: adminB, json: { username: 'ada.l', password } })).status, 409);
    const patch = await gw.request('PATCH', userPath(tenantA, memberAId), { token: adminA, json: { email: 'ada@example.com' } });
    assert.equal(patch.status, 409);
  });

  it('lets only administrators of the tenant manage its users', async () => {
    const before = (await gw.request('GET', usersPath(tenantA), { token: adminA })).body.data.length;
    assert.equal((await gw.request('GET', usersPath(tenantA))).status, 401);
    const json = { username: 'by-member', password: 'long enough password' };
    assert.equal((await gw.request('GET', usersPath(tenantA), { token: memberA })).status, 403);
    assert.equal((await gw.request('POST', usersPath(tenantA), { token: memberA, json })).status, 403);
    assert.equal((await gw.request('GET', userPath(tenantA, adminAId), { token: memberA })).status, 403);
    assert.equal((await gw.request('PATCH', userPath(tenantA, memberAId), { token: memberA, json: { roles: ['admin'] } })).status, 403);

    const key = (await gw.request('POST', `/api/auth/tenants/${tenantA}/api-keys`, { token: adminA, json: { name: 'users test' } })).body
      .key;
    assert.equal((await gw.request('GET', usersPath(tenantA), { apiKey: key })).status, 403);
    assert.equal((await gw.request('POST', usersPath(tenantA), { apiKey: key, json })).status, 403);

    assert.equal((await gw.request('GET', usersPath(tenantA), { token: adminA })).body.data.length, before);
    assert.deepEqual((await gw.request('GET', userPath(tenantA, memberAId), { token: adminA })).body.roles, ['member']);
  });

  it("never shows or changes another tenant's users", async () => {
    const before = await gw.request('GET', userPath(tenantA, memberAId), { token: adminA });
    const countBefore = (await gw.request('GET', usersPath(tenantA), { token: adminA })).body.data.length;
    const attempts: [string, string, unknown?][] = [
      ['GET', usersPath(tenantA)],
      ['POST', usersPath(tenantA), { username: 'planted', password: 'long enough password' }],
      ['GET', userPath(tenantA, memberAId)],
      ['PATCH', userPath(tenantA, memberAId), { status: 'disabled' }],
      ['PATCH', userPath(tenantA, memberAId), { password: 'taken over password' }],
      // B's own tenant in the path, A's user id: still not found.
      ['GET', userPath(tenantB, memberAId)],
      ['PATCH', userPath(tenantB, memberAId), { roles: ['admin'] }],
    ];
    for (const [method, path, json] of attempts) {
      const response = await gw.request(method, path, { token: adminB, ...(json ? { json } : {}) });
      assert.equal(response.status, 404, `${method} ${path}`);
    }
    assert.deepEqual((await gw.request('GET', userPath(tenantA, memberAId), { token: adminA })).body, before.body);
    assert.equal((await gw.request('GET', usersPath(tenantA), { token: adminA })).body.data.length, countBefore);
    assert.equal((await workspacesAs(memberA)).status, 200);
    assert.equal((await gw.request('GET', userPath(tenantA, 'usr_00000000000000000000000000'), { token: adminA })).status, 404);
    assert.equal((await gw.request('GET', userPath(tenantA, 'nope'), { token: adminA })).status, 404);
  });

  it('lets a platform admin manage any tenant, and only a platform admin grant platform_admin', async () => {
    const json = { username: 'would-be-root', password: 'long enough password', roles: ['platform_admin'] };
    assert.equal((await gw.request('POST', usersPath(tenantA), { token: adminA, json })).status, 403);
    const escalate = await gw.request('PATCH', userPath(tenantA, memberAId), {
      token: adminA,
      json: { roles: ['admin', 'platform_admin'] },
    });
    assert.equal(escalate.status, 403);
    assert.deepEqual((await gw.request('GET', userPath(tenantA, memberAId), { token: adminA })).body.roles, ['member']);

    const root = await gw.request('POST', usersPath(tenantA), { token: platformAdmin, json });
    assert.equal(root.status, 201);
    assert.deepEqual(root.body.roles, ['platform_admin']);
    // A tenant admin cannot take over or demote a platform admin in their tenant.
    for (const patch of [{ password: 'taken over password' }, { roles: ['member'] }, { status: 'disabled' }]) {
      assert.equal(
        (await gw.request('PATCH', userPath(tenantA, root.body.id), { token: adminA, json: patch })).status,
        403,
        JSON.stringify(patch),
      );
    }
    assert.equal((await gw.request('GET', userPath(tenantA, root.body.id), { token: adminA })).body.status, 'active');

    assert.equal((await gw.request('GET', usersPath(tenantB), { token: platformAdmin })).status, 200);
    assert.equal((await gw.request('GET', usersPath('ten_00000000000000000000000000'), { token: platformAdmin })).status, 404);
    assert.equal(
      (await gw.request('POST', usersPath('nope'), { token: platformAdmin, json: { username: 'x-y', password: 'long enough password' } }))
        .status,
      404,
    );
  });

  it('applies role changes, disabling and password changes to the very next request', async () => {
    const listAsMember = () => gw.request('GET', usersPath(tenantA), { token: memberA });
    assert.equal((await listAsMember()).status, 403);
    const promoted = await gw.request('PATCH', userPath(tenantA, memberAId), { token: adminA, json: { roles: ['admin'] } });
    assert.equal(promoted.status, 200);
    assert.deepEqual(promoted.body.roles, ['admin']);
    assert.equal((await listAsMember()).status, 200);
    await gw.request('PATCH', userPath(tenantA, memberAId), { token: adminA, json: { roles: ['member'] } });
    assert.equal((await listAsMember()).status, 403);

    assert.equal((await workspacesAs(memberA)).status, 200); // account state cached
    const disabled = await gw.request('PATCH', userPath(tenantA, memberAId), { token: adminA, json: { status: 'disabled' } });
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.status, 'disabled');
    assert.equal((await workspacesAs(memberA)).status, 401);
    assert.equal((await workspacesAs(adminA)).status, 200, 'other users unaffected');
    await gw.request('PATCH', userPath(tenantA, memberAId), { token: adminA, json: { status: 'active' } });
    assert.equal((await workspacesAs(memberA)).status, 200);

    const emailed = await gw.request('PATCH', userPath(tenantA, memberAId), { token: adminA, json: { email: 'm@example.org' } });
    assert.equal(emailed.body.email, 'm@example.org');
    const cleared = await gw.request('PATCH', userPath(tenantA, memberAId), { token: adminA, json: { email: null } });
    assert.equal(cleared.body.email, null);

    const newPassword = 'a brand new passphrase';
    const changed = await gw.request('PATCH', userPath(tenantA, memberAId), { token: adminA, json: { password: newPassword } });
    assert.equal(changed.status, 200);
    assert.ok(!changed.text.includes(newPassword));
    const [row] = await gw.ctx.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [memberAId]);
    assert.ok(await verifyPassword(newPassword, row!.password_hash));
    assert.ok(!gw.logs().includes(newPassword));
  });

  it('ends every session of a user whose password an admin resets', async () => {
    const user = await seedUser(gw, tenantA);
    const login = await gw.request('POST', '/api/auth/login', { json: { username: user.username, password: user.password } });
    assert.equal(login.status, 200);
    const refresh = () => gw.request('POST', '/api/auth/refresh', { json: { refreshToken: login.body.refreshToken } });
    const reset = await gw.request('PATCH', userPath(tenantA, user.id), {
      token: adminA,
      json: { password: 'reset by the administrator' },
    });
    assert.equal(reset.status, 200);
    assert.equal((await refresh()).status, 401, 'the refresh token issued under the old password is dead');
    const fresh = await gw.request('POST', '/api/auth/login', {
      json: { username: user.username, password: 'reset by the administrator' },
    });
    assert.equal(fresh.status, 200);
  });

  it('keeps an admin from locking themselves out', async () => {
    const self = (json: unknown) => gw.request('PATCH', userPath(tenantA, adminAId), { token: adminA, json });
    assert.equal((await self({ status: 'disabled' })).status, 409);
    assert.equal((await self({ roles: ['member'] })).status, 409);
    assert.equal((await self({ email: 'me@example.net', roles: ['admin', 'member'] })).status, 200, 'keeping admin is fine');
    assert.equal((await workspacesAs(adminA)).status, 200);
    const me = (await gw.request('GET', userPath(tenantA, adminAId), { token: adminA })).body;
    assert.equal(me.status, 'active');
    assert.deepEqual(me.roles, ['admin', 'member']);
    assert.equal(me.email, 'me@example.net');

    // Another admin may disable an admin; that admin's token stops at once.
    assert.equal(
      (await gw.request('PATCH', userPath(tenantA, secondAdminAId), { token: adminA, json: { status: 'disabled' } })).status,
      200,
    );
    assert.equal((await workspacesAs(secondAdminA)).status, 401);
  });

  it('rejects malformed input with 400 naming the field, without coercing types', async () => {
    const password = 'long enough password';
    const createCases: [Record<string, unknown>, string][] = [
      [{ password }, 'username'],
      [{ username: 'x', password }, 'username'],
      [{ username: 'has@sign', password }, 'username'],
      [{ username: 42, password }, 'username'],
      [{ username: 'shorty' }, 'password'],
      [{ username: 'shorty', password: 'short' }, 'password'],
      [{ username: 'shorty', password: 123456789012345 }, 'password'],
      [{ username: 'shorty', password, email: 'not-an-email' }, 'email'],
      [{ username: 'shorty', password, roles: 'admin' }, 'roles'],
      [{ username: 'shorty', password, roles: [] }, 'roles'],
      [{ username: 'shorty', password, roles: ['root'] }, 'roles[0]'],
    ];
    for (const [json, field] of createCases) {
      const response = await gw.request('POST', usersPath(tenantA), { token: adminA, json });
      assert.equal(response.status, 400, JSON.stringify(json));
      assert.ok(
        response.body.errors.some((e: { field: string }) => e.field === field),
        `${JSON.stringify(json)} → ${response.text}`,
      );
    }
    const patchCases: [Record<string, unknown>, string][] = [
      [{ status: 'gone' }, 'status'],
      [{ status: false }, 'status'],
      [{ email: 5 }, 'email'],
      [{ email: 'nope' }, 'email'],
      [{ password: 'short' }, 'password'],
      [{ roles: ['admin', 'owner'] }, 'roles[1]'],
    ];
    for (const [json, field] of patchCases) {
      const response = await gw.request('PATCH', userPath(tenantA, memberAId), { token: adminA, json });
      assert.equal(response.status, 400, JSON.stringify(json));
      assert.ok(
        response.body.errors.some((e: { field: string }) => e.field === field),
        `${JSON.stringify(json)} → ${response.text}`,
      );
    }
    const list = (await gw.request('GET', usersPath(tenantA), { token: adminA })).body.data;
    assert.ok(!list.some((u: { username: string }) => u.username === 'shorty'), 'nothing was created');
  });
});
