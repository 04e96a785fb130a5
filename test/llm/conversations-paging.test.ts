// The conversations list pages with a total and a title search (issue 28's console):
// newest activity first as before, `total` counting every match, the person's own only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { newId } from '../../src/platform/ids.js';
import { conversationRepository } from '../../src/areas/llm/history/repository.js';
import { CONVERSATIONS } from './conversations-support.js';

describe('persisted chat: the conversations list pages and searches', () => {
  let gw: TestGateway;
  let world: World;
  const titles = ['Trip to Rome', 'rome_notes', 'romeXnotes', '100% sure', 'Groceries', 'Rome again'];
  const ids: string[] = [];

  before(async () => {
    gw = await startGateway({ GATEWAY_LOCAL_ENGINE: 'off' });
    world = await seedWorld(gw, 'conv-paging');
    for (const title of titles) {
      const row = await conversationRepository.insert(gw.ctx.db, {
        id: newId('conversation'),
        tenant_id: world.a.tenantId,
        owner: world.a.member.id,
        surface: 'chat',
        title,
      });
      ids.push(row.id);
    }
    // Someone else's, in the same tenant and titled alike: never listed or counted.
    await conversationRepository.insert(gw.ctx.db, {
      id: newId('conversation'),
      tenant_id: world.a.tenantId,
      owner: world.a.admin.id,
      surface: 'chat',
      title: 'Rome (admin)',
    });
  });
  after(() => gw.close());

  const list = (query: string, token = world.a.member.token) => gw.request('GET', `${CONVERSATIONS}?${query}`, { token });

  it('answers the total with every page, newest activity first', async () => {
    const all = await list('');
    assert.equal(all.status, 200, all.text);
    assert.equal(all.body.total, 6);
    assert.deepEqual(
      all.body.data.map((c: { id: string }) => c.id),
      [...ids].reverse(),
    );
    const first = await list('limit=4');
    assert.equal(first.body.total, 6);
    assert.equal(first.body.next, first.body.data[3].id);
    const second = await list(`limit=4&after=${first.body.next}`);
    assert.equal(second.body.total, 6);
    assert.equal(second.body.next, null);
    assert.deepEqual(
      [...first.body.data, ...second.body.data].map((c: { id: string }) => c.id),
      [...ids].reverse(),
    );
  });

  it('pages through conversations active within one millisecond without skipping any (the cursor is compared in microseconds)', async () => {
    // Regression: the cursor's timestamp went through a JS Date (milliseconds), so a row a few
    // microseconds older than the cursor, in the same millisecond, fell between two pages.
    const at = '2026-06-01 12:00:00.123';
    for (const [i, id] of ids.entries())
      await gw.ctx.db.query(`UPDATE conversations SET updated_at = $2::timestamptz + make_interval(secs => $3) WHERE id = $1`, [
        id,
        `${at}+00`,
        (i + 1) * 0.0001,
      ]);
    const seen: string[] = [];
    let next: string | null = null;
    do {
      const page = await list(`limit=2${next ? `&after=${next}` : ''}`);
      assert.equal(page.status, 200, page.text);
      seen.push(...page.body.data.map((c: { id: string }) => c.id));
      next = page.body.next;
    } while (next);
    assert.deepEqual(seen, [...ids].reverse());
  });

  it('searches titles case-insensitively with % and _ literal, paging the matches', async () => {
    const titlesOf = async (query: string) => {
      const response = await list(query);
      assert.equal(response.status, 200, response.text);
      return { titles: response.body.data.map((c: { title: string }) => c.title), total: response.body.total, next: response.body.next };
    };
    assert.deepEqual((await titlesOf('q=ROME')).titles, ['Rome again', 'romeXnotes', 'rome_notes', 'Trip to Rome']);
    assert.deepEqual((await titlesOf('q=e_n')).titles, ['rome_notes']);
    assert.deepEqual((await titlesOf('q=100%25')).titles, ['100% sure']);
    assert.deepEqual((await titlesOf('q=%25%25')).titles, []);
    const page = await titlesOf('q=rome&limit=3');
    assert.equal(page.total, 4);
    assert.equal(page.titles.length, 3);
    const rest = await titlesOf(`q=rome&limit=3&after=${page.next}`);
    assert.deepEqual(rest.titles, ['Trip to Rome']);
    assert.equal(rest.total, 4);
    assert.equal(rest.next, null);
  });

  it('keeps the list to its person, and refuses malformed paging with a 400', async () => {
    const admin = await list('q=rome', world.a.admin.token);
    assert.deepEqual(
      admin.body.data.map((c: { title: string }) => c.title),
      ['Rome (admin)'],
    );
    assert.equal(admin.body.total, 1);
    assert.equal((await list('q=rome', world.b.admin.token)).body.total, 0);
    // Another person's conversation is no cursor of yours.
    assert.equal((await list(`after=${ids[0]}`, world.a.admin.token)).status, 400);
    assert.equal((await gw.request('GET', `${CONVERSATIONS}?q=rome`)).status, 401);
    assert.equal((await gw.request('GET', `${CONVERSATIONS}?q=rome`, { apiKey: world.a.key.key })).status, 403);
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'after=nope', `q=${'q'.repeat(201)}`]) {
      assert.equal((await list(query)).status, 400, query);
    }
  });
});
