// The `gateway` CLI's lists at their edges, with no server running: an empty list says
// how to fill it, and a name with control characters cannot forge table lines.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTenant } from '../../src/areas/auth/tenants/service.js';
import { createContext } from '../../src/context.js';
import { loadConfig } from '../../src/platform/config.js';
import { cliJson, freshDataDir, killChildren, runCli, type DataDir } from './helpers.js';

describe('gateway CLI lists, edge cases (no server running)', () => {
  let data: DataDir;
  let env: Record<string, string>;

  before(async () => {
    data = await freshDataDir();
    env = data.env;
    const ctx = await createContext(loadConfig(env));
    try {
      await createTenant(ctx, 'Beta Labs');
    } finally {
      await ctx.close();
    }
  });
  after(async () => {
    killChildren();
    await data.remove();
  });

  it('an empty list says how to fill it, and is {"data": []} as JSON', async () => {
    const beta = (await cliJson(['tenants', 'list'], env)).data.find((t: any) => t.name === 'Beta Labs').id;
    assert.deepEqual(await cliJson(['users', 'list', '--tenant', beta], env), { data: [] });
    const keys = await runCli(['keys', 'list', '--tenant', beta], env);
    assert.equal(keys.code, 0, keys.stderr);
    assert.match(
      keys.stdout,
      /^The tenant has no API keys yet\. Create one with: gateway keys create --tenant <tenantId> --name <name>\n$/,
    );
  });

  it('a name with control characters stays on its own line, escaped, in the table', async () => {
    const hostile = 'Evil\n\u001b[2Jcorp';
    await cliJson(['tenants', 'create', '--name', hostile], env);
    const listed = await runCli(['tenants', 'list'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout.includes('\u001b'), false);
    const lines = listed.stdout.trimEnd().split('\n');
    assert.ok(
      lines.slice(1).every((line) => /^ten_/.test(line)),
      listed.stdout,
    );
    assert.ok(
      lines.some((line) => line.includes('Evil\\n\\u001b[2Jcorp')),
      listed.stdout,
    );
    // JSON carries the name as it is stored.
    assert.ok((await cliJson(['tenants', 'list'], env)).data.some((t: any) => t.name === hostile));
  });
});
