// The auth area's lists page on the server with a total and a search (issue 28's
// console): GET …/api-keys, …/users and /tenants take ?limit&after&q and answer
// {data, next, total}; without ?limit they answer every row, as before they paged.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedUser, startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { issueApiKey } from '../../src/areas/auth/api-keys/service.js';
import { createTenant } from '../../src/areas/auth/tenants/service.js';

/** Every page of a list, following `next`, with the totals each page reported. */
async function walk(gw: TestGateway, path: string, token: string, limit: number) {
  const ids: string[] = [];
  const totals = new Set<number>();
  let after: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const sep = path.includes('?') ? '&' : '?';
    const response = await gw.request('GET', `${path}${sep}limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`, { token });
    assert.equal(response.status, 200, response.text);
    assert.ok(response.body.data.length <= limit);
    ids.push(...response.body.data.map((r: { id: string }) => r.id));
    totals.add(response.body.total);
    after = response.body.next;
    if (after === null) return { ids, totals: [...totals] };
    assert.equal(after, response.body.data.at(-1).id, 'next is the last id of the page');
  }
  throw new Error('more than 50 pages');
}

describe('auth lists: paging, totals and search', () => {
  let gw: TestGateway;
  let world: World;
  const keysPath = (tenantId: string) => `/api/auth/tenants/${tenantId}/api-keys`;
  const usersPath = (tenantId: string) => `/api/auth/tenants/${tenantId}/users`;

  before(async () => {
    gw = await startGateway();
    world = await seedWorld(gw, 'paging');
    // Tenant A: the world's key plus 11, some with LIKE wildcards and a backslash in their names.
    const names = ['alpha', 'Alpha two', 'beta', '100% done', '100 percent', 'under_score', 'underXscore', 'back\\slash', 'backslash'];
    for (const name of names) await issueApiKey(gw.ctx, world.a.tenantId, { name }, world.a.admin.id);
    await issueApiKey(gw.ctx, world.a.tenantId, { name: 'billing', customerId: 'cus_ALPHA_1' }, world.a.admin.id);
    await issueApiKey(gw.ctx, world.b.tenantId, { name: 'alpha in b' }, world.b.admin.id);
    await seedUser(gw, world.a.tenantId, ['member'], 'Zed.Person@example.com');
    await seedUser(gw, world.a.tenantId, ['member'], 'z_d@example.com');
  });
  after(() => gw.close());

  it('pages the keys in id order with next and the total, and without limit answers every key as before', async () => {
    const all = await gw.request('GET', keysPath(world.a.tenantId), { token: world.a.admin.token });
    assert.equal(all.status, 200);
    assert.equal(all.body.data.length, 11);
    assert.equal(all.body.next, null);
    assert.equal(all.body.total, 11);
    const ids = all.body.data.map((k: { id: string }) => k.id);
    assert.deepEqual(ids, [...ids].sort(), 'oldest first (ids are time-sortable)');

    const walked = await walk(gw, keysPath(world.a.tenantId), world.a.admin.token, 4);
    assert.deepEqual(walked.ids, ids, 'the pages together are the list, each key once');
    assert.deepEqual(walked.totals, [11], 'every page counts every key, not just itself');

    const last = await gw.request('GET', `${keysPath(world.a.tenantId)}?limit=100`, { token: world.a.admin.token });
    assert.equal(last.body.next, null);
    assert.ok(
      last.body.data.every((k: object) => !('key' in k)),
      'never the plaintext',
    );
  });

  it('searches keys by name, masked key and customer id, case-insensitively, with % _ and \\ taken literally', async () => {
    const search = async (q: string) => {
      const response = await gw.request('GET', `${keysPath(world.a.tenantId)}?q=${encodeURIComponent(q)}`, { token: world.a.admin.token });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.total, response.body.data.length);
      return response.body.data.map((k: { name: string }) => k.name).sort();
    };
    // The customer id cus_ALPHA_1 matches too; tenant B's "alpha in b" never does.
    assert.deepEqual(await search('ALPHA'), ['Alpha two', 'alpha', 'billing']);
    assert.deepEqual(await search('100%'), ['100% done']);
    assert.deepEqual(await search('%'), ['100% done']);
    assert.deepEqual(await search('under_'), ['under_score']);
    assert.deepEqual(await search('r_s'), ['under_score'], 'not underXscore');
    assert.deepEqual(await search('A_1'), ['billing'], 'the customer id cus_ALPHA_1');
    assert.deepEqual(await search('back\\'), ['back\\slash']);
    assert.deepEqual(await search('nothing like it'), []);
    assert.equal((await search('')).length, 11, 'an empty q is no filter');

    const masked = (await gw.request('GET', keysPath(world.a.tenantId), { token: world.a.admin.token })).body.data[0].maskedKey as string;
    const byMask = await gw.request('GET', `${keysPath(world.a.tenantId)}?q=${encodeURIComponent(masked.slice(-4))}`, {
      token: world.a.admin.token,
    });
    assert.ok(byMask.body.data.some((k: { maskedKey: string }) => k.maskedKey === masked));

    // A search pages too, and its total counts the matches only.
    const page = await gw.request('GET', `${keysPath(world.a.tenantId)}?q=a&limit=2`, { token: world.a.admin.token });
    assert.equal(page.body.data.length, 2);
    assert.ok(page.body.total > 2);
    assert.equal(page.body.next, page.body.data[1].id);
    const walked = await walk(gw, `${keysPath(world.a.tenantId)}?q=a`, world.a.admin.token, 2);
    assert.equal(walked.ids.length, page.body.total);
  });

  it('pages and searches users by username and e-mail address', async () => {
    const all = await gw.request('GET', usersPath(world.a.tenantId), { token: world.a.admin.token });
    assert.equal(all.status, 200);
    assert.equal(all.body.total, 4);
    assert.equal(all.body.next, null);
    const walked = await walk(gw, usersPath(world.a.tenantId), world.a.admin.token, 3);
    assert.deepEqual(
      walked.ids,
      all.body.data.map((u: { id: string }) => u.id),
    );
    assert.deepEqual(walked.totals, [4]);

    const byEmail = await gw.request('GET', `${usersPath(world.a.tenantId)}?q=zed.PERSON`, { token: world.a.admin.token });
    assert.deepEqual(
      byEmail.body.data.map((u: { email: string }) => u.email),
      ['Zed.Person@example.com'],
    );
    assert.equal(byEmail.body.total, 1);
    // `_` is a character, not "any character": z_d matches, Zed does not.
    const underscore = await gw.request('GET', `${usersPath(world.a.tenantId)}?q=z_d`, { token: world.a.admin.token });
    assert.deepEqual(
      underscore.body.data.map((u: { email: string }) => u.email),
      ['z_d@example.com'],
    );
    const byUsername = await gw.request('GET', `${usersPath(world.a.tenantId)}?q=${world.a.admin.username.toUpperCase()}`, {
      token: world.a.admin.token,
    });
    assert.deepEqual(
      byUsername.body.data.map((u: { id: string }) => u.id),
      [world.a.admin.id],
    );
  });

  it('pages and searches tenants for the platform admin', async () => {
    await createTenant(gw.ctx, 'Paging 50% Corp');
    await createTenant(gw.ctx, 'Paging 50 Corp');
    const all = await gw.request('GET', '/api/auth/tenants', { token: world.platform.admin.token });
    assert.equal(all.status, 200);
    assert.equal(all.body.total, all.body.data.length);
    assert.equal(all.body.next, null);
    const walked = await walk(gw, '/api/auth/tenants', world.platform.admin.token, 2);
    assert.deepEqual(
      walked.ids,
      all.body.data.map((t: { id: string }) => t.id),
    );
    const search = await gw.request('GET', '/api/auth/tenants?q=paging%2050%25', { token: world.platform.admin.token });
    assert.deepEqual(
      search.body.data.map((t: { name: string }) => t.name),
      ['Paging 50% Corp'],
    );
    assert.equal(search.body.total, 1);
  });

  it('refuses a malformed limit, cursor or search with a 400 naming it', async () => {
    const lists = [keysPath(world.a.tenantId), usersPath(world.a.tenantId), '/api/auth/tenants'];
    const bad = [
      'limit=0',
      'limit=101',
      'limit=abc',
      'limit=-1',
      'limit=1.5',
      'after=nope',
      `after=${world.b.tenantId}x`,
      `q=${'x'.repeat(201)}`,
    ];
    for (const path of lists) {
      const token = path === '/api/auth/tenants' ? world.platform.admin.token : world.a.admin.token;
      for (const query of bad) {
        const response = await gw.request('GET', `${path}?${query}`, { token });
        assert.equal(response.status, 400, `${path}?${query}: ${response.text}`);
        assert.equal(response.body.errors?.[0]?.field.replace(/^\/?(querystring\/)?/, ''), query.split('=')[0], `${path}?${query}`);
      }
    }
  });

  it('keeps the lists to their callers: no credential 401, a member or an API key 403, another tenant 404, a revoked key 401', async () => {
    for (const path of [keysPath(world.a.tenantId), usersPath(world.a.tenantId)]) {
      assert.equal((await gw.request('GET', `${path}?limit=2`)).status, 401);
      assert.equal((await gw.request('GET', `${path}?limit=2`, { token: world.a.member.token })).status, 403);
      assert.equal((await gw.request('GET', `${path}?limit=2`, { apiKey: world.a.key.key })).status, 403);
      assert.equal((await gw.request('GET', `${path}?limit=2&q=a`, { token: world.b.admin.token })).status, 404);
    }
    assert.equal((await gw.request('GET', '/api/auth/tenants?limit=2', { token: world.a.admin.token })).status, 403);
    // Another tenant's key id as a cursor only says where to start: it reads nothing of tenant B.
    const crossCursor = await gw.request('GET', `${keysPath(world.a.tenantId)}?after=${world.b.key.id}`, { token: world.a.admin.token });
    assert.equal(crossCursor.status, 200);
    assert.ok(crossCursor.body.data.every((k: { name: string }) => k.name !== 'alpha in b'));

    const revoked = await issueApiKey(gw.ctx, world.a.tenantId, { name: 'to revoke' }, world.a.admin.id);
    assert.equal(
      (await gw.request('POST', `${keysPath(world.a.tenantId)}/${revoked.id}/revoke`, { token: world.a.admin.token })).status,
      200,
    );
    assert.equal((await gw.request('GET', `${keysPath(world.a.tenantId)}?limit=2`, { apiKey: revoked.key })).status, 401);
  });
});
