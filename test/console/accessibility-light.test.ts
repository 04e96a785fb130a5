// Accessibility in the light colour scheme: axe-core finds no serious or critical
// violation on the sign-in page or any page of the console (as the platform admin, who
// may open them all); a dialog takes focus, keeps it, gives it back on Escape; and at
// 390 px wide no page scrolls sideways. (The dark scheme: accessibility-dark.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { auditEveryPage, describeViolations, everyPage, type Seeded, seedContent, settle } from './accessibility-support.js';
import { keepScreenshot, seriousViolations } from './browser.js';
import { type ConsoleWorld, startConsoleWorld } from './console-gateway.js';

/** Where focus is: inside the open dialog, elsewhere in the page (named), or nowhere. */
const focusPlace = (page: Page) =>
  page.evaluate(() => {
    const active = document.activeElement;
    if (!active || active === document.body) return 'nowhere';
    if (active.closest('dialog[open]')) return 'dialog';
    return `outside: <${active.tagName.toLowerCase()}> ${active.textContent?.trim().slice(0, 40)}`;
  });

describe('console accessibility, light', () => {
  let cw: ConsoleWorld;
  let seeded: Seeded;
  before(async () => {
    cw = await startConsoleWorld();
    seeded = await seedContent(cw);
  });
  after(() => cw?.close());

  it('has no serious axe violations on any page, dialogs hold and return focus, and nothing scrolls sideways at 390 px', async () => {
    const { origin } = cw;
    const { walk, page, failures } = await auditEveryPage(cw, seeded, 'light');
    assert.deepEqual(failures, [], `serious or critical axe violations:\n${failures.join('\n')}`);

    // A dialog: opened from the keyboard, focus moves into it and stays there while
    // tabbing (the page behind is inert), Escape closes it, focus returns to its opener.
    await page.goto(`${origin}/keys`);
    await settle(page, 'API keys');
    const opener = page.getByRole('button', { name: 'Create key' });
    await opener.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.waitFor();
    assert.equal(await focusPlace(page), 'dialog', 'focus moves into the dialog');
    const inDialog = await seriousViolations(page);
    assert.deepEqual(inDialog, [], `the open dialog:\n${describeViolations(inDialog)}`);
    await keepScreenshot(page, 'keys-create-dialog-light');
    const stops = await dialog.evaluate((d) => d.querySelectorAll('input, button, select, textarea, a[href]').length);
    const places: string[] = [];
    for (let press = 0; press < stops + 2; press++) {
      await page.keyboard.press('Tab');
      places.push(await focusPlace(page));
    }
    assert.deepEqual(
      places.filter((place) => place !== 'dialog'),
      [],
      'tabbing never leaves the dialog',
    );
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focusPlace(page), 'dialog', 'nor does tabbing backwards');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.ok(await opener.evaluate((button) => button === document.activeElement), 'focus is back on "Create key"');

    // The audit does see a violation when there is one (an unlabelled field added to the page).
    await page.evaluate(() => document.querySelector('main')?.append(document.createElement('input')));
    assert.ok(
      (await seriousViolations(page)).some((v) => v.id === 'label'),
      'axe reports an unlabelled field',
    );

    // A phone's width: the document itself never scrolls sideways (wide tables scroll inside their frame).
    await page.setViewportSize({ width: 390, height: 844 });
    const narrow = everyPage(seeded).filter((p) =>
      ['playground', 'workspaces', 'collection', 'document', 'retrieval', 'keys', 'users', 'usage', 'sso', 'account'].includes(p.name),
    );
    const sideways: string[] = [];
    const headingsBelowTheFold: string[] = [];
    for (const target of narrow) {
      await page.goto(origin + target.path);
      await settle(page, target.heading);
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: innerWidth }));
      if (widths.scroll > widths.inner) sideways.push(`${target.path}: ${widths.scroll} px wide in ${widths.inner}`);
      // The page's heading starts within the first screen (the navigation strip stays short).
      const top = await page.evaluate(() => document.querySelector('main h1')?.getBoundingClientRect().top ?? Number.POSITIVE_INFINITY);
      if (top > 844 / 3) headingsBelowTheFold.push(`${target.path}: heading at ${Math.round(top)} px`);
      await keepScreenshot(page, `${target.name}-390`);
    }
    assert.deepEqual(sideways, [], 'pages that scroll sideways at 390 px');
    assert.deepEqual(headingsBelowTheFold, [], 'pages whose heading is pushed down at 390 px');

    assert.deepEqual(walk.foreign, []);
    assert.deepEqual(walk.faults, []);
    await walk.context.close();
  });
});
