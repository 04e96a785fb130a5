// API keys in a real browser: a tenant admin creates a key, sees its plaintext once
// (and it works against the API), then only its masked form, also after a reload;
// revoking it in the list makes the API refuse it from the next request on.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { KEY_PREFIX } from '../../src/areas/auth/api-keys/key-format.js';
import { keepScreenshot, openWalk } from './browser.js';
import { type ConsoleWorld, signIn, startConsoleWorld } from './console-gateway.js';

/** Everything the page holds as text: its markup, what it renders, and every field's value. */
const pageText = (page: Page) =>
  page.evaluate(
    () =>
      `${document.documentElement.outerHTML}\n${document.body.textContent}\n${[...document.querySelectorAll('input, textarea')]
        .map((field) => (field as HTMLInputElement).value)
        .join('\n')}`,
  );

describe('console API keys', () => {
  let cw: ConsoleWorld;
  before(async () => {
    cw = await startConsoleWorld();
  });
  after(() => cw?.close());

  it('shows a new key once, then only masked; the key works until it is revoked', async () => {
    const { gw, world, origin } = cw;
    const walk = await openWalk(cw.browser, origin);
    const page = await walk.newPage();
    await signIn(page, origin, world.a.admin, '/keys');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();

    const name = 'console deploy key';
    const opener = page.getByRole('button', { name: 'Create key' });
    await opener.click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill(name);
    await dialog.getByLabel('Scopes').fill('llm:read llm:write');
    await dialog.getByRole('button', { name: 'Create key' }).click();

    const shown = dialog.getByLabel('Your new API key');
    await shown.waitFor();
    const plaintext = await shown.inputValue();
    assert.ok(plaintext.startsWith(KEY_PREFIX), `the key starts with ${KEY_PREFIX}: ${plaintext.slice(0, 8)}…`);
    await keepScreenshot(page, 'keys-created-once');

    const works = await gw.request('GET', '/api/os/workspaces', { apiKey: plaintext });
    assert.equal(works.status, 200, `the new key is accepted: ${works.text}`);

    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name }) });
    const masked = `${plaintext.slice(0, KEY_PREFIX.length + 4)}…${plaintext.slice(-4)}`;
    await row.getByText(masked).waitFor();
    assert.ok(!(await pageText(page)).includes(plaintext), 'no plaintext anywhere once the dialog is closed');
    // The scopes were sent as typed.
    await row.getByText('llm:read llm:write').waitFor();

    await page.reload();
    await row.getByText(masked).waitFor();
    assert.ok(!(await pageText(page)).includes(plaintext), 'no plaintext anywhere after a reload');
    await keepScreenshot(page, 'keys-masked');

    await row.getByRole('button', { name: `Revoke ${name}` }).click();
    await row.getByText('revoked', { exact: true }).waitFor();
    await row.getByRole('button', { name: `Activate ${name}` }).waitFor();
    // docs/api.md: a revoke takes effect on the next request on the process that made
    // it (the test gateway is that one process), so the key is refused at once.
    const refused = await gw.request('GET', '/api/os/workspaces', { apiKey: plaintext });
    assert.equal(refused.status, 401, `the revoked key is refused: ${refused.text}`);
    // Another key of the tenant is untouched.
    assert.equal((await gw.request('GET', '/api/os/workspaces', { apiKey: world.a.key.key })).status, 200);

    assert.deepEqual(walk.foreign, []);
    assert.deepEqual(walk.faults, []);
    await walk.context.close();
  });
});
