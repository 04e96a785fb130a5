// The console's size budget, measured on the built files (npm test builds the console
// first): ≤ 150 KB of gzip-9 JavaScript to reach the sign-in page, ≤ 300 KB for the
// whole first load after sign-in, and never a byte from another origin.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { BUDGET_KB, javascriptKb, type LoadPlan, planPath } from '../../console/build/budget.js';
import { CONSOLE_DIR } from './browser.js';

describe('console build', () => {
  const plan = JSON.parse(readFileSync(planPath(CONSOLE_DIR), 'utf8')) as LoadPlan;

  it('keeps the sign-in page and the first load after sign-in within budget', () => {
    const signIn = javascriptKb(CONSOLE_DIR, plan.signIn);
    const after = javascriptKb(CONSOLE_DIR, plan.afterSignIn);
    assert.ok(signIn > 0 && after >= signIn, `sign-in ${signIn} KB, after ${after} KB`);
    assert.ok(signIn <= BUDGET_KB.signIn, `sign-in needs ${signIn.toFixed(1)} KB of JavaScript (budget ${BUDGET_KB.signIn})`);
    assert.ok(
      after <= BUDGET_KB.afterSignIn,
      `the first load after sign-in needs ${after.toFixed(1)} KB (budget ${BUDGET_KB.afterSignIn})`,
    );
  });

  it('ships hashed assets with precompressed siblings and no reference to another origin', () => {
    const assets = readdirSync(path.join(CONSOLE_DIR, 'assets'));
    const code = assets.filter((name) => /\.(js|css)$/.test(name));
    assert.ok(code.length >= 2);
    for (const name of code) {
      assert.match(name, /-[A-Za-z0-9_-]{8}\.(js|css)$/, `${name} has a content hash`);
      assert.ok(assets.includes(`${name}.gz`) && assets.includes(`${name}.br`), `${name} is precompressed`);
    }
    const html = readFileSync(path.join(CONSOLE_DIR, 'index.html'), 'utf8');
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//, 'no asset from another origin');
    for (const name of code)
      assert.doesNotMatch(readFileSync(path.join(CONSOLE_DIR, 'assets', name), 'utf8'), /https?:\/\/(cdn|unpkg|fonts\.)/);
  });
});
