// The `gateway` CLI with no server running creates tenants and users: it opens the
// database itself (a copy of the migrated template, or a cloned PostgreSQL database).
// Keys are in keys-create.test.ts, listing in lists.test.ts and list-edge-cases.test.ts,
// failures, help and migrate in errors.test.ts.
// (One file per command family: each CLI process starts tsx and opens the database, so a
// file of all of them ran for minutes on a busy machine.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lockHolder } from '../../src/platform/db/embedded.js';
import { cliJson, freshDataDir, killChildren, runCli, type DataDir } from './helpers.js';

const PASSWORD = 'correct-horse-battery-1';

describe('gateway CLI creates (no server running)', () => {
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
    const admin = await cliJson(
      ['users', 'create', '--tenant', tenantId, '--username', 'alice', '--password', PASSWORD, '--email', 'alice@example.com', '--admin'],
      env,
    );
    assert.match(admin.id, /^usr_/);
    assert.equal(admin.tenantId, tenantId);
    assert.deepEqual(admin.roles, ['admin']);
    assert.equal(admin.email, 'alice@example.com');
    assert.equal(admin.twoFactorEnabled, false);
    assert.equal(JSON.stringify(admin).includes(PASSWORD), false);
    assert.equal('passwordHash' in admin || 'password_hash' in admin, false);

    // --password-stdin keeps the password out of the process list; one trailing newline is dropped.
    const member = await runCli(['users', 'create', '--tenant', tenantId, '--username', 'bob', '--password-stdin'], env, {
      input: `${PASSWORD}\n`,
    });
    assert.equal(member.code, 0, member.stderr);
    assert.match(member.stdout, /Created user "bob"/);
    assert.match(member.stdout, /roles: +member/);
    assert.equal(member.stdout.includes(PASSWORD), false);

    const platform = await cliJson(
      ['users', 'create', '--tenant', tenantId, '--username', 'root-op', '--platform-admin', '--password-stdin'],
      env,
      PASSWORD,
    );
    assert.deepEqual(platform.roles, ['platform_admin', 'admin']);
  });

  it('two commands at once on a stopped server both succeed: the second waits for the first', async () => {
    const [a, b] = await Promise.all([
      cliJson(['tenants', 'create', '--name', 'Parallel A'], env),
      cliJson(['tenants', 'create', '--name', 'Parallel B'], env),
    ]);
    assert.match(a.id, /^ten_/);
    assert.match(b.id, /^ten_/);
    assert.notEqual(a.id, b.id);
  });

  it('leaves the data dir unlocked when it is done', () => {
    assert.equal(lockHolder(data.dir), undefined);
  });
});
