// Signing in and out in a real browser: two-factor by keyboard alone, a reload keeps the
// session, two tabs reloaded at once both stay signed in (refreshes are serialised, so
// rotation's reuse detection never fires), signing out ends it in every tab, and a member
// typing an admin page's address is told it is not allowed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { keepScreenshot, openWalk } from './browser.js';
import { type ConsoleWorld, enrolTwoFactor, signIn, startConsoleWorld } from './console-gateway.js';

const focusedName = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute('name') ?? document.activeElement?.tagName);

describe('console sign-in', () => {
  let cw: ConsoleWorld;
  before(async () => {
    cw = await startConsoleWorld();
  });
  after(() => cw?.close());

  it('signs in with two-factor by keyboard only, survives reloads in two tabs at once, and signs out everywhere', async () => {
    const { gw, world, origin } = cw;
    const authenticator = await enrolTwoFactor(gw, world.a.admin);
    const walk = await openWalk(cw.browser, origin);
    const page = await walk.newPage();
    await page.goto(`${origin}/`);
    await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await keepScreenshot(page, 'sign-in');

    await page.keyboard.press('Tab');
    assert.equal(await focusedName(page), 'username');
    await page.keyboard.type(world.a.admin.username);
    await page.keyboard.press('Tab');
    assert.equal(await focusedName(page), 'password');
    await page.keyboard.type('not the password');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: /./ }).first().waitFor();
    assert.equal(await focusedName(page), 'password', 'focus stays in the password field after a failure');
    await page.keyboard.press('Control+A');
    await page.keyboard.type(world.a.admin.password);
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: 'Two-factor code' }).waitFor();
    assert.equal(await focusedName(page), 'code', 'the code field has focus');
    await keepScreenshot(page, 'sign-in-two-factor');
    await page.keyboard.type(authenticator.next());
    await page.keyboard.press('Enter');
    await page.getByText(`Signed in as ${world.a.admin.username}`).waitFor();
    // The shell renames `/` to the home page's address in an effect, after it first paints.
    await page.waitForURL((url) => url.pathname === '/playground');

    // No token outside memory: nothing in the page's storage.
    assert.equal(await page.evaluate(() => localStorage.length + sessionStorage.length), 0);

    await page.reload();
    await page.getByText(`Signed in as ${world.a.admin.username}`).waitFor();

    const second = await walk.newPage();
    await second.goto(`${origin}/keys`);
    await second.getByText(`Signed in as ${world.a.admin.username}`).waitFor();
    for (let round = 0; round < 3; round++) {
      await Promise.all([page.reload(), second.reload()]);
      await Promise.all([
        page.getByText(`Signed in as ${world.a.admin.username}`).waitFor(),
        second.getByText(`Signed in as ${world.a.admin.username}`).waitFor(),
      ]);
    }

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await second.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await second.reload();
    await second.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();

    assert.deepEqual(walk.foreign, []);
    assert.deepEqual(walk.faults, []);
    await walk.context.close();
  });

  it('tells a member that admin pages are not allowed, and shows no admin links', async () => {
    const { world, origin } = cw;
    const walk = await openWalk(cw.browser, origin);
    const page = await walk.newPage();
    await signIn(page, origin, world.a.member, '/keys');
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    assert.equal(await nav.getByRole('link', { name: 'API keys' }).count(), 0);
    assert.equal(await nav.getByRole('link', { name: 'Users' }).count(), 0);
    for (const path of ['/users', '/tenants', '/compute', '/usage']) {
      await page.goto(origin + path);
      await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    }
    assert.deepEqual(walk.faults, []);
    await walk.context.close();
  });
});
