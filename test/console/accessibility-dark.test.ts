// Accessibility in the dark colour scheme (prefers-color-scheme: dark): axe-core finds
// no serious or critical violation (contrast included) on the sign-in page or any page
// of the console, as the platform admin. The light scheme: accessibility-light.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auditEveryPage, type Seeded, seedContent } from './accessibility-support.js';
import { type ConsoleWorld, startConsoleWorld } from './console-gateway.js';

describe('console accessibility, dark', () => {
  let cw: ConsoleWorld;
  let seeded: Seeded;
  before(async () => {
    cw = await startConsoleWorld();
    seeded = await seedContent(cw);
  });
  after(() => cw?.close());

  it('has no serious axe violations on any page in the dark scheme', async () => {
    const { walk, failures } = await auditEveryPage(cw, seeded, 'dark');
    assert.deepEqual(failures, [], `serious or critical axe violations:\n${failures.join('\n')}`);
    assert.deepEqual(walk.foreign, []);
    assert.deepEqual(walk.faults, []);
    await walk.context.close();
  });
});
