// `gateway keys create` with no server running: the key is printed once, and it is
// hashed with the data dir's own secret, so a server on that data dir accepts it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTenant } from '../../src/areas/auth/tenants/service.js';
import { createContext } from '../../src/context.js';
import { loadConfig } from '../../src/platform/config.js';
import { cliJson, freshDataDir, killChildren, runCli, type DataDir } from './helpers.js';

describe('gateway CLI creates keys (no server running)', () => {
  let data: DataDir;
  let env: Record<string, string>;
  let tenantId: string;

  before(async () => {
    data = await freshDataDir();
    env = data.env;
    const ctx = await createContext(loadConfig(env));
    try {
      tenantId = (await createTenant(ctx, 'Acme Research')).id;
    } finally {
      await ctx.close();
    }
  });
  after(async () => {
    killChildren();
    await data.remove();
  });

  it('keys create prints the plaintext key once, and the key resolves with the server secret', async () => {
    const key = await cliJson(
      ['keys', 'create', '--tenant', tenantId, '--name', 'ci', '--scopes', 'read, write', '--expires-at', '2031-01-01T00:00:00Z'],
      env,
    );
    assert.match(key.id, /^key_/);
    assert.match(key.key, /^rdk_[A-Za-z0-9_-]+$/);
    assert.equal(key.status, 'active');
    assert.equal(key.scopes, '["read","write"]');
    assert.equal(key.expiresAt, '2031-01-01T00:00:00.000Z');
    assert.ok(key.maskedKey.startsWith(key.key.slice(0, 8)) && key.maskedKey.endsWith(key.key.slice(-4)));

    const human = await runCli(['keys', 'create', '--tenant', tenantId, '--name', 'laptop'], env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /shown only this once/);
    const plaintext = human.stdout.match(/^ {2}(rdk_\S+)$/m)?.[1];
    assert.ok(plaintext, human.stdout);

    // The CLI hashed both keys with the data dir's own secret: a server on it accepts them.
    const ctx = await createContext(loadConfig(env));
    try {
      const principal = await ctx.auth.apiKeys.resolve(key.key);
      assert.equal(principal?.tenantId, tenantId);
      assert.deepEqual(principal?.scopes, ['read', 'write']);
      assert.equal((await ctx.auth.apiKeys.resolve(plaintext!))?.tenantId, tenantId);
      const [stored] = await ctx.db.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE id = $1', [key.id]);
      assert.notEqual(stored!.key_hash, key.key);
    } finally {
      await ctx.close();
    }
  });
});
