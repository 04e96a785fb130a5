// The `gateway` CLI with no server running creates records: it opens the
// database itself (a copy of the migrated template, or a cloned PostgreSQL database).
// Failures, help and migrate are in errors.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/platform/config.js';
import { createContext } from '../../src/context.js';
import { lockHolder } from '../../src/platform/db/embedded.js';
import { cliJson, freshDataDir, killChildren, runCli, type DataDir } from './helpers.js';

const PASSWORD = 'correct-horse-battery-1';

describe('gateway CLI (no server running)', () => {
  let data: DataDir;
  let env: Record<string, string>;
  let tenantId: string;

  before(async () => {
    data = await freshDataDir();
    env = data.env;
  });
  after(async () => {
    killChildren();
    await data.remove();
  });

  it('tenants create --json prints the record as one JSON object with its id', async () => {
    const tenant = await cliJson(['tenants', 'create', '--name', 'Acme Research'], env);
    assert.match(tenant.id, /^ten_[0-9A-Z]{26}$/);
    assert.equal(tenant.name, 'Acme Research');
    assert.equal(tenant.status, 'active');
    tenantId = tenant.id;
  });

  it('tenants create prints a readable summary by default', async () => {
    const result = await runCli(['tenants', 'create', '--name', 'Beta Labs'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Created tenant "Beta Labs"\./);
    assert.match(result.stdout, /\n {2}id: +ten_[0-9A-Z]{26}\n/);
    assert.doesNotMatch(result.stdout, /^\{/);
  });

  it('users create makes admins and members, and never prints the password', async () => {
    const admin = await cliJson(['users', 'create', '--tenant', tenantId, '--username', 'alice', '--password', PASSWORD, '--email', 'alice@example.com', '--admin'], env);
    assert.match(admin.id, /^usr_/);
    assert.equal(admin.tenantId, tenantId);
    assert.deepEqual(admin.roles, ['admin']);
    assert.equal(admin.email, 'alice@example.com');
    assert.equal(admin.twoFactorEnabled, false);
    assert.equal(JSON.stringify(admin).includes(PASSWORD), false);
    assert.equal('passwordHash' in admin || 'password_hash' in admin, false);

    // --password-stdin keeps the password out of the process list; one trailing newline is dropped.
    const member = await runCli(['users', 'create', '--tenant', tenantId, '--username', 'bob', '--password-stdin'], env, { input: `${PASSWORD}\n` });
    assert.equal(member.code, 0, member.stderr);
    assert.match(member.stdout, /Created user "bob"/);
    assert.match(member.stdout, /roles: +member/);
    assert.equal(member.stdout.includes(PASSWORD), false);

    const platform = await cliJson(['users', 'create', '--tenant', tenantId, '--username', 'root-op', '--platform-admin', '--password-stdin'], env, PASSWORD);
    assert.deepEqual(platform.roles, ['platform_admin', 'admin']);
  });

  it('keys create prints the plaintext key once, and the key resolves with the server secret', async () => {
    const key = await cliJson(['keys', 'create', '--tenant', tenantId, '--name', 'ci', '--scopes', 'read, write', '--expires-at', '2031-01-01T00:00:00Z'], env);
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

  it('two commands at once on a stopped server both succeed: the second waits for the first', async () => {
    const [a, b] = await Promise.all([cliJson(['tenants', 'create', '--name', 'Parallel A'], env), cliJson(['tenants', 'create', '--name', 'Parallel B'], env)]);
    assert.match(a.id, /^ten_/);
    assert.match(b.id, /^ten_/);
    assert.notEqual(a.id, b.id);
  });

  it('leaves the data dir unlocked when it is done', () => {
    assert.equal(lockHolder(data.dir), undefined);
  });
});
