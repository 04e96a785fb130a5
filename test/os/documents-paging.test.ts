// Documents and chunks page with a total and a search (issue 28's console): ?q on the
// document name / chunk content, `total` counting every match, the cursors unchanged.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { replaceDocumentChunks } from '../../src/areas/os/chunks/store.js';

describe('os documents and chunks: totals and search', () => {
  let gw: TestGateway;
  let world: World;
  let collectionId: string;
  let handbookId: string;
  const names = ['Report 2024.pdf', 'report_final.md', 'reportXfinal.md', '50% off.txt', 'notes.txt'];

  before(async () => {
    gw = await startGateway();
    world = await seedWorld(gw, 'doc-paging');
    const ws = await gw.request('POST', '/api/os/workspaces', { apiKey: world.a.key.key, json: { name: 'paging' } });
    const col = await gw.request('POST', `/api/os/workspaces/${ws.body.id}/collections`, { apiKey: world.a.key.key, json: { name: 'c' } });
    collectionId = col.body.id;
    for (const name of names) {
      const doc = await gw.request('POST', `/api/os/collections/${collectionId}/documents`, {
        apiKey: world.a.key.key,
        json: { name, text: `text of ${name}` },
      });
      assert.equal(doc.status, 202, doc.text);
      if (name === 'notes.txt') handbookId = doc.body.id;
    }
    // Chunks of our own once ingestion has written its own, so nothing replaces them after.
    await eventually(
      'the documents to be ingested',
      async () => {
        const list = await gw.request('GET', `/api/os/collections/${collectionId}/documents`, { apiKey: world.a.key.key });
        return list.body.data.every((d: { status: string }) => d.status === 'ready' || d.status === 'failed');
      },
      60_000,
    );
    const ref = { tenantId: world.a.tenantId, collectionId, documentId: handbookId, language: 'english' };
    const chunk = (content: string) => ({ content, title: 'notes.txt', headingPath: [], page: null, tokenCount: 3 });
    await gw.ctx.db.tx((q) =>
      replaceDocumentChunks(q, ref, [
        chunk('Leave is twenty-five days.'),
        chunk('Travel is economy class.'),
        chunk('LEAVE carries over 100% of days.'),
        chunk('Expenses within a week.'),
        chunk('leave_policy applies'),
      ]),
    );
  });
  after(() => gw.close());

  const documents = (query: string, credential: { apiKey: string } | { token: string } = { apiKey: world.a.key.key }) =>
    gw.request('GET', `/api/os/collections/${collectionId}/documents?${query}`, credential);
  const chunks = (query: string, credential: { apiKey: string } | { token: string } = { apiKey: world.a.key.key }) =>
    gw.request('GET', `/api/os/documents/${handbookId}/chunks?${query}`, credential);

  it('answers a total with every page, and pages a search with its own total', async () => {
    const all = await documents('');
    assert.equal(all.status, 200);
    assert.equal(all.body.total, 5);
    assert.equal(all.body.data.length, 5, 'the default page (50) holds them all, as before');
    const first = await documents('limit=2');
    assert.equal(first.body.total, 5);
    assert.equal(first.body.next, first.body.data[1].id);
    const second = await documents(`limit=2&after=${first.body.next}`);
    assert.equal(second.body.total, 5);
    assert.deepEqual(
      [...first.body.data, ...second.body.data].map((d: { id: string }) => d.id),
      all.body.data.slice(0, 4).map((d: { id: string }) => d.id),
    );

    const search = async (q: string, extra = '') => {
      const response = await documents(`q=${encodeURIComponent(q)}${extra}`);
      assert.equal(response.status, 200, response.text);
      return { names: response.body.data.map((d: { name: string }) => d.name), total: response.body.total, next: response.body.next };
    };
    assert.deepEqual((await search('REPORT')).names, ['Report 2024.pdf', 'report_final.md', 'reportXfinal.md']);
    assert.deepEqual((await search('t_f')).names, ['report_final.md'], '_ is literal');
    assert.deepEqual((await search('50%')).names, ['50% off.txt'], '% is literal');
    assert.deepEqual((await search('\\')).names, []);
    const paged = await search('report', '&limit=2');
    assert.equal(paged.total, 3);
    assert.equal(paged.names.length, 2);
    const rest = await search('report', `&limit=2&after=${paged.next}`);
    assert.deepEqual(rest.names, ['reportXfinal.md']);
    assert.equal(rest.next, null);
    assert.equal(rest.total, 3);
  });

  it('searches a document’s chunks by content, case-insensitively, paging by chunk index', async () => {
    const all = await chunks('');
    assert.equal(all.body.total, 5);
    const leave = await chunks('q=leave&limit=2');
    assert.equal(leave.status, 200, leave.text);
    assert.equal(leave.body.total, 3);
    assert.deepEqual(
      leave.body.data.map((c: { chunkIndex: number }) => c.chunkIndex),
      [0, 2],
    );
    assert.equal(leave.body.next, '2');
    const more = await chunks(`q=leave&limit=2&after=${leave.body.next}`);
    assert.deepEqual(
      more.body.data.map((c: { content: string }) => c.content),
      ['leave_policy applies'],
    );
    assert.equal(more.body.next, null);
    assert.equal((await chunks('q=e_p')).body.total, 1, '_ is literal');
    assert.equal((await chunks('q=100%25')).body.total, 1);
    assert.equal((await chunks('q=%25%25')).body.total, 0);
  });

  it('refuses malformed paging with a 400, and keeps the lists to the tenant', async () => {
    for (const query of ['limit=0', 'limit=201', 'limit=x', `q=${'q'.repeat(201)}`, 'after=doc_nope']) {
      const response = await documents(query);
      assert.equal(response.status, 400, query);
    }
    for (const query of ['limit=0', 'after=x', `q=${'q'.repeat(201)}`]) assert.equal((await chunks(query)).status, 400, query);
    assert.equal((await documents('q=report')).status, 200);
    assert.equal((await gw.request('GET', `/api/os/collections/${collectionId}/documents?q=report`)).status, 401);
    assert.equal((await documents('q=report', { apiKey: world.b.key.key })).status, 404);
    assert.equal((await documents('q=report', { token: world.b.admin.token })).status, 404);
    assert.equal((await chunks('q=leave', { apiKey: world.b.key.key })).status, 404);
    assert.equal((await chunks('q=leave', { token: world.a.member.token })).body.total, 3, 'any credential of the tenant reads');
    await gw.request('POST', `/api/auth/tenants/${world.a.tenantId}/api-keys/${world.a.key.id}/revoke`, { token: world.a.admin.token });
    assert.equal((await documents('q=report')).status, 401, 'a revoked key');
  });
});
