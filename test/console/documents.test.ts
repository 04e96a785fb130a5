// Documents in a real browser: a tenant admin creates a workspace, uploads a PDF and a
// CSV into its default collection and watches both reach "ready" without reloading,
// reads a document's chunks, and finds the PDF's passage with the retrieval test.
// Tenant B's admin pasting tenant A's ids into the address bar sees "not found".
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { samplePdf } from '../helpers/documents.js';
import { keepScreenshot, openWalk } from './browser.js';
import { type ConsoleWorld, signIn, startConsoleWorld } from './console-gateway.js';

const SENTENCE = 'The lighthouse keeper counted seventeen herons on the quay at dawn.';
const PDF_NAME = 'harbour-notes.pdf';
const CSV_NAME = 'tide-table.csv';

/** The id at the end of the page's address (/workspaces/{id}, /collections/{id}…). */
const idInUrl = (page: Page, prefix: string): string => {
  const { pathname } = new URL(page.url());
  assert.ok(pathname.startsWith(`/${prefix}/`), `at /${prefix}/…: ${pathname}`);
  return decodeURIComponent(pathname.slice(prefix.length + 2));
};

describe('console documents', () => {
  let cw: ConsoleWorld;
  before(async () => {
    cw = await startConsoleWorld();
  });
  after(() => cw?.close());

  it('uploads a PDF and a CSV, sees them become ready live, reads chunks and searches them; tenant B sees not found', async () => {
    const { world, origin } = cw;
    const walk = await openWalk(cw.browser, origin);
    const page = await walk.newPage();
    await signIn(page, origin, world.a.admin, '/workspaces');
    await page.getByRole('heading', { name: 'Workspaces', exact: true }).waitFor();

    const workspace = 'Harbour archive';
    await page.getByRole('button', { name: 'New workspace' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Workspace name').fill(workspace);
    await dialog.getByRole('button', { name: 'Create workspace' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('link', { name: workspace }).click();
    await page.getByRole('heading', { name: `Workspace: ${workspace}` }).waitFor();
    const workspaceId = idInUrl(page, 'workspaces');

    await page.getByRole('link', { name: 'Default' }).click();
    await page.getByRole('heading', { name: 'Collection: Default' }).waitFor();
    const collectionId = idInUrl(page, 'collections');

    const pdf = await samplePdf([['# Harbour notes', SENTENCE, 'Nothing else of note happened that morning.']]);
    const csv = Buffer.from('tide,height_m,time\nhigh,4.2,06:10\nlow,0.8,12:25\nhigh,4.0,18:40\n');
    await page.getByLabel('Choose files to upload').setInputFiles([
      { name: PDF_NAME, mimeType: 'application/pdf', buffer: pdf },
      { name: CSV_NAME, mimeType: 'text/csv', buffer: csv },
    ]);
    // Both rows reach "ready" through the page's own polling: no reload here.
    const documents = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: 'Status' }) });
    const rowOf = (name: string) => documents.getByRole('row').filter({ has: page.getByRole('rowheader', { name }) });
    for (const name of [PDF_NAME, CSV_NAME]) await rowOf(name).getByText('ready', { exact: true }).waitFor({ timeout: 90_000 });
    await rowOf(PDF_NAME).getByText('PDF', { exact: true }).waitFor();
    await rowOf(CSV_NAME).getByText('CSV', { exact: true }).waitFor();
    await keepScreenshot(page, 'documents-ready');

    await rowOf(PDF_NAME).getByRole('link', { name: PDF_NAME }).click();
    await page.getByRole('heading', { name: `Document: ${PDF_NAME}` }).waitFor();
    const documentId = idInUrl(page, 'documents');
    await page.getByRole('table').getByText(SENTENCE).waitFor();
    await keepScreenshot(page, 'document-chunks');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Retrieval test' }).click();
    await page.getByRole('heading', { name: 'Retrieval test' }).waitFor();
    await page.getByLabel(`Workspace ${workspace}`).check();
    await page.getByLabel('Query').fill('lighthouse keeper herons');
    await page.getByRole('button', { name: 'Run search' }).click();
    const passages = page.getByRole('list', { name: 'Ranked passages' });
    const first = passages.getByRole('listitem').first();
    await first.waitFor();
    await first.getByRole('link', { name: PDF_NAME }).waitFor();
    await first.getByText(SENTENCE).waitFor();
    assert.match((await first.textContent()) ?? '', /score \d/);
    await keepScreenshot(page, 'retrieval-results');

    assert.deepEqual(walk.foreign, []);
    assert.deepEqual(walk.faults, []);
    await walk.context.close();

    // Tenant B's admin, in a browser profile of their own, pastes tenant A's ids.
    const other = await openWalk(cw.browser, origin);
    const intruder = await other.newPage();
    await signIn(intruder, origin, world.b.admin);
    for (const path of [`/workspaces/${workspaceId}`, `/collections/${collectionId}`, `/documents/${documentId}`]) {
      await intruder.goto(origin + path);
      await intruder.getByRole('heading', { name: 'Not found' }).waitFor();
      assert.equal(await intruder.getByText(workspace).count(), 0, `${path} shows nothing of tenant A's`);
      assert.equal(await intruder.getByText(PDF_NAME).count(), 0, `${path} shows nothing of tenant A's`);
    }
    assert.deepEqual(other.foreign, []);
    assert.deepEqual(other.faults, []);
    await other.context.close();
  });
});
