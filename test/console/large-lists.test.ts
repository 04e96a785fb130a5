// Long lists in a real browser: with 1,000 API keys and 2,000 documents in one
// collection, the keys page and the collection page each fetch ONE page from the
// server (a `limit` in the request, never the whole list), show that page and the
// total, walk to the next page of different rows, and narrow the total by searching.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Page, Request } from 'playwright-core';
import { issueApiKey } from '../../src/areas/auth/api-keys/service.js';
import { newId } from '../../src/platform/ids.js';
import { keepScreenshot, openWalk } from './browser.js';
import { type ConsoleWorld, signIn, startConsoleWorld } from './console-gateway.js';

/** The world gives tenant A one key already: 999 more make 1,000. */
const SEEDED_KEYS = 999;
const DOCUMENTS = 2000;
const four = (n: number) => String(n).padStart(4, '0');

/** The GET requests the page makes to `path` (the list's API address), from now on. */
function listRequests(page: Page, path: string): URL[] {
  const seen: URL[] = [];
  page.on('request', (request: Request) => {
    const url = new URL(request.url());
    if (request.method() === 'GET' && url.pathname === path) seen.push(url);
  });
  return seen;
}

/** The row headers (first column) of the page's one data table. */
const rowNames = (page: Page) => page.locator('table tbody th[scope="row"]').allTextContents();

/** Waits for the table to have loaded a page whose first row is not `before`'s. */
async function nextRows(page: Page, before: string[]): Promise<string[]> {
  await page.waitForFunction((old) => {
    const table = document.querySelector('table');
    const firstRow = table?.querySelector('tbody th[scope="row"]')?.textContent;
    return table?.getAttribute('aria-busy') !== 'true' && firstRow !== undefined && firstRow !== old;
  }, before[0]);
  return rowNames(page);
}

describe('console long lists', () => {
  let cw: ConsoleWorld;
  let collectionId: string;
  before(async () => {
    cw = await startConsoleWorld();
    const { gw, world } = cw;
    // Keys through the service the API uses (a hash and a row each): about 5 s for 999 here,
    // fast enough that direct SQL is not worth bypassing it.
    for (let n = 1; n <= SEEDED_KEYS; n++) await issueApiKey(gw.ctx, world.a.tenantId, { name: `bulk-key-${four(n)}` }, world.a.admin.id);

    const workspace = await gw.request('POST', '/api/os/workspaces', { token: world.a.admin.token, json: { name: 'Big archive' } });
    assert.equal(workspace.status, 201, workspace.text);
    const collections = await gw.request('GET', `/api/os/workspaces/${workspace.body.id}/collections`, { token: world.a.admin.token });
    collectionId = collections.body.data[0].id;
    // Documents as rows, in one statement: 2,000 uploads would each be a request and an
    // ingestion; a list only needs the records (ready, without chunks).
    const ids = Array.from({ length: DOCUMENTS }, () => newId('document'));
    const names = ids.map((_, i) => `bulk-doc-${four(i + 1)}.txt`);
    const hashes = names.map((name) => createHash('sha256').update(name).digest('hex'));
    await gw.ctx.db.query(
      `INSERT INTO documents (id, tenant_id, collection_id, workspace_id, name, media_type, bytes, sha256, status)
       SELECT id, $1, $2, $3, name, 'text/plain', 100, sha256, 'ready' FROM unnest($4::text[], $5::text[], $6::text[]) AS d(id, name, sha256)`,
      [world.a.tenantId, collectionId, workspace.body.id, ids, names, hashes],
    );
    await gw.ctx.db.query('UPDATE collections SET document_count = document_count + $2 WHERE id = $1', [collectionId, DOCUMENTS]);
  });
  after(() => cw?.close());

  it('shows one page of 1,000 keys with the total, pages on, and searches on the server', async () => {
    const { world, origin } = cw;
    const walk = await openWalk(cw.browser, origin);
    const page = await walk.newPage();
    const requests = listRequests(page, `/api/auth/tenants/${world.a.tenantId}/api-keys`);
    await signIn(page, origin, world.a.admin, '/keys');
    await page.getByText(/^1,?000 in all$/).waitFor();
    await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
    await keepScreenshot(page, 'keys-1000');

    assert.equal(requests.length, 1, `one list request: ${requests.join(', ')}`);
    const limit = Number(requests[0]!.searchParams.get('limit'));
    assert.ok(limit >= 1 && limit <= 100, `the request asks for one page: ${requests[0]}`);
    const first = await rowNames(page);
    assert.equal(first.length, limit, 'the table shows that one page');

    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText(new RegExp(`^Showing ${limit + 1}–${2 * limit} of 1,?000$`)).waitFor();
    const second = await nextRows(page, first);
    assert.equal(second.length, limit);
    assert.deepEqual(
      second.filter((name) => first.includes(name)),
      [],
      'the next page holds other keys',
    );
    assert.equal(requests.length, 2);
    assert.ok(requests[1]!.searchParams.get('after'), `the next page is asked for after a cursor: ${requests[1]}`);

    await page.getByLabel('Search API keys').fill('bulk-key-05');
    await page.getByText(/^100 in all$/).waitFor();
    const found = await nextRows(page, second);
    assert.ok(found.length > 0 && found.every((name) => name.startsWith('bulk-key-05')), `only matching keys: ${found.join(', ')}`);
    assert.equal(requests.at(-1)!.searchParams.get('q'), 'bulk-key-05', 'the search is asked of the server');
    assert.equal(requests.at(-1)!.searchParams.get('after'), null, 'a search starts from the first page');

    assert.deepEqual(walk.foreign, []);
    assert.deepEqual(walk.faults, []);
    await walk.context.close();
  });

  it('shows one page of 2,000 documents with the total, pages on, and searches on the server', async () => {
    const { world, origin } = cw;
    const walk = await openWalk(cw.browser, origin);
    const page = await walk.newPage();
    const requests = listRequests(page, `/api/os/collections/${collectionId}/documents`);
    await signIn(page, origin, world.a.admin, `/collections/${collectionId}`);
    await page.getByRole('heading', { name: 'Collection: Default' }).waitFor();
    await page.getByText(/^2,?000 in all$/).waitFor();
    await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
    await keepScreenshot(page, 'documents-2000');

    assert.equal(requests.length, 1, `one list request: ${requests.join(', ')}`);
    const limit = Number(requests[0]!.searchParams.get('limit'));
    assert.ok(limit >= 1 && limit <= 100, `the request asks for one page: ${requests[0]}`);
    const first = await rowNames(page);
    assert.equal(first.length, limit, 'the table shows that one page');
    await page.getByRole('row').filter({ hasText: first[0]! }).getByText('ready', { exact: true }).waitFor();

    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText(new RegExp(`^Showing ${limit + 1}–${2 * limit} of 2,?000$`)).waitFor();
    const second = await nextRows(page, first);
    assert.equal(second.length, limit);
    assert.deepEqual(
      second.filter((name) => first.includes(name)),
      [],
      'the next page holds other documents',
    );
    assert.equal(requests.length, 2);
    assert.ok(requests[1]!.searchParams.get('after'), `the next page is asked for after a cursor: ${requests[1]}`);

    await page.getByLabel('Search documents').fill('bulk-doc-01');
    await page.getByText(/^100 in all$/).waitFor();
    const found = await nextRows(page, second);
    assert.ok(found.length > 0 && found.every((name) => name.startsWith('bulk-doc-01')), `only matching documents: ${found.join(', ')}`);
    assert.equal(requests.at(-1)!.searchParams.get('q'), 'bulk-doc-01', 'the search is asked of the server');

    assert.deepEqual(walk.foreign, []);
    assert.deepEqual(walk.faults, []);
    await walk.context.close();
  });
});
