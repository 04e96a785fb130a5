import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld } from '../helpers/world.js';

describe('os workspaces', () => {
  let gw: TestGateway;
  let adminA: string;
  let memberA: string;
  let adminB: string;

  before(async () => {
    gw = await startGateway();
    const world = await seedWorld(gw);
    adminA = world.a.admin.token;
    adminB = world.b.admin.token;
    memberA = world.a.member.token;
  });
  after(() => gw.close());

  it('creates, lists, gets, updates and deletes within the tenant', async () => {
    const created = await gw.request('POST', '/api/os/workspaces', { token: adminA, json: { name: 'Research', description: 'papers' } });
    assert.equal(created.status, 201);
    assert.match(created.body.id, /^ws_/);
    assert.equal(created.body.name, 'Research');

    const list = await gw.request('GET', '/api/os/workspaces', { token: adminA });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.data.map((w: { id: string }) => w.id),
      [created.body.id],
    );

    const patched = await gw.request('PATCH', `/api/os/workspaces/${created.body.id}`, { token: adminA, json: { description: null } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.description, null);
    assert.equal(patched.body.name, 'Research');

    assert.equal((await gw.request('GET', `/api/os/workspaces/${created.body.id}`, { token: memberA })).status, 200);
    assert.equal((await gw.request('DELETE', `/api/os/workspaces/${created.body.id}`, { token: adminA })).status, 204);
    assert.equal((await gw.request('GET', `/api/os/workspaces/${created.body.id}`, { token: adminA })).status, 404);
  });

  it("never shows or changes another tenant's workspace", async () => {
    const mine = await gw.request('POST', '/api/os/workspaces', { token: adminA, json: { name: 'Secret' } });
    const id = mine.body.id;
    for (const [method, json] of [['GET'], ['PATCH', { name: 'pwned' }], ['DELETE']] as const) {
      const response = await gw.request(method, `/api/os/workspaces/${id}`, { token: adminB, ...(json ? { json } : {}) });
      assert.equal(response.status, 404, `${method} by tenant B`);
    }
    const listB = await gw.request('GET', '/api/os/workspaces', { token: adminB });
    assert.deepEqual(listB.body.data, []);
    const still = await gw.request('GET', `/api/os/workspaces/${id}`, { token: adminA });
    assert.equal(still.body.name, 'Secret');
  });

  it('needs a credential, and the admin role or a key to change things', async () => {
    const none = await gw.request('GET', '/api/os/workspaces');
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    const memberCreate = await gw.request('POST', '/api/os/workspaces', { token: memberA, json: { name: 'x' } });
    assert.equal(memberCreate.status, 403);
  });

  it('rejects malformed input with 400 naming the field', async () => {
    const blank = await gw.request('POST', '/api/os/workspaces', { token: adminA, json: { name: '   ' } });
    assert.equal(blank.status, 400);
    assert.equal(blank.body.errors[0].field, 'name');
    const wrongType = await gw.request('POST', '/api/os/workspaces', { token: adminA, json: { name: 42 } });
    assert.equal(wrongType.status, 400);
    const notJson = await gw.request('POST', '/api/os/workspaces', {
      token: adminA,
      body: '{nope',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(notJson.status, 400);
    assert.equal(notJson.body.code, 'BAD_REQUEST');
    const badId = await gw.request('GET', '/api/os/workspaces/not-an-id', { token: adminA });
    assert.equal(badId.status, 404);
  });
});
