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

/** The cells of a table printed for people; fails unless every column starts where its header does, two spaces after the one before. */
function tableRows(stdout: string): string[][] {
  const lines = stdout.trimEnd().split('\n');
  const starts = [...lines[0]!.matchAll(/\S+(?: \S+)*/g)].map((m) => m.index);
  return lines.map((line) =>
    starts.map((start, i) => {
      assert.ok(line[start] !== ' ' && (start === 0 || line.slice(start - 2, start) === '  '), `column ${i} is not aligned in:\n${stdout}`);
      return line.slice(start, starts[i + 1]).trim();
    }),
  );
}

describe('gateway CLI (no server running)', () => {
  let data: DataDir;
  let env: Record<string, string>;
  let tenantId: string;
  const plaintextKeys: string[] = [];

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
    plaintextKeys.push(key.key, plaintext!);

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

  it('tenants, users and keys list answer {"data": [...]} as the API does, oldest first, and never show a secret', async () => {
    const tenants = await cliJson(['tenants', 'list'], env);
    assert.deepEqual(Object.keys(tenants), ['data']);
    assert.deepEqual(
      tenants.data.map((t: any) => t.name),
      ['Acme Research', 'Beta Labs'],
    );
    assert.equal(tenants.data[0].id, tenantId);
    assert.equal(tenants.data[0].status, 'active');

    const users = await cliJson(['users', 'list', '--tenant', tenantId], env);
    assert.deepEqual(
      users.data.map((u: any) => [u.username, u.roles, u.tenantId]),
      [
        ['alice', ['admin'], tenantId],
        ['bob', ['member'], tenantId],
        ['root-op', ['platform_admin', 'admin'], tenantId],
      ],
    );
    const keys = await cliJson(['keys', 'list', '--tenant', tenantId], env);
    assert.deepEqual(
      keys.data.map((k: any) => [k.name, k.status, k.scopes]),
      [
        ['ci', 'active', '["read","write"]'],
        ['laptop', 'active', '[]'],
      ],
    );
    for (const key of keys.data) {
      assert.match(key.id, /^key_/);
      assert.match(key.maskedKey, /^rdk_.{4}….{4}$/);
      assert.deepEqual(
        Object.keys(key).filter(
          (k) =>
            !['id', 'name', 'maskedKey', 'status', 'scopes', 'createdAt', 'expiresAt', 'customerId', 'lastUsedAt', 'limits'].includes(k),
        ),
        [],
      );
    }

    const ctx = await createContext(loadConfig(env));
    let hashes: string[];
    try {
      hashes = (
        await ctx.db.query<{ hash: string }>('SELECT password_hash AS hash FROM users UNION ALL SELECT key_hash FROM api_keys')
      ).map((r) => r.hash);
    } finally {
      await ctx.close();
    }
    assert.equal(hashes.length, 5);
    const human = await Promise.all(
      [
        ['users', 'list', '--tenant', tenantId],
        ['keys', 'list', '--tenant', tenantId],
      ].map((args) => runCli(args, env)),
    );
    const printed = [JSON.stringify(users), JSON.stringify(keys), ...human.map((r) => r.stdout + r.stderr)].join('\n');
    for (const secret of [...hashes, ...plaintextKeys, PASSWORD]) assert.equal(printed.includes(secret), false, 'a secret was printed');
  });

  it('lists print a table for people: a header and one aligned line per record', async () => {
    const [tenants, users, keys] = await Promise.all([
      runCli(['tenants', 'list'], env),
      runCli(['users', 'list', '--tenant', tenantId], env),
      runCli(['keys', 'list', '--tenant', tenantId], env),
    ]);
    for (const result of [tenants, users, keys]) assert.equal(result.code, 0, result.stderr);
    const date = (cell: string) => cell.replace(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/, 'DATE');
    const created = (rows: string[][]) => rows.slice(1).map((row) => date(row.at(-1)!));

    const tenantRows = tableRows(tenants.stdout);
    assert.deepEqual(tenantRows[0], ['ID', 'NAME', 'STATUS', 'CREATED']);
    assert.deepEqual(tenantRows[1]!.slice(0, 3), [tenantId, 'Acme Research', 'active']);
    assert.deepEqual(created(tenantRows), ['DATE', 'DATE']);

    const userRows = tableRows(users.stdout);
    assert.deepEqual(userRows[0], ['ID', 'USERNAME', 'EMAIL', 'ROLES', 'STATUS', '2FA', 'CREATED']);
    assert.deepEqual(
      userRows.slice(1).map((row) => row.slice(1, 6)),
      [
        ['alice', 'alice@example.com', 'admin', 'active', 'off'],
        ['bob', '-', 'member', 'active', 'off'],
        ['root-op', '-', 'platform_admin,admin', 'active', 'off'],
      ],
    );
    assert.ok(userRows.slice(1).every((row) => /^usr_[0-9A-Z]{26}$/.test(row[0]!)));
    assert.deepEqual(created(userRows), ['DATE', 'DATE', 'DATE']);

    const keyRows = tableRows(keys.stdout);
    assert.deepEqual(keyRows[0], ['ID', 'NAME', 'KEY', 'STATUS', 'EXPIRES', 'LAST USED', 'CREATED']);
    assert.deepEqual(
      keyRows.slice(1).map((row) => [row[1], row[3], row[4], date(row[5]!)]),
      [
        // Both were used when the test above resolved them.
        ['ci', 'active', '2031-01-01 00:00:00Z', 'DATE'],
        ['laptop', 'active', '-', 'DATE'],
      ],
    );
    assert.ok(keyRows.slice(1).every((row) => /^key_[0-9A-Z]{26}$/.test(row[0]!) && /^rdk_.{4}….{4}$/.test(row[2]!)));
    assert.deepEqual(created(keyRows), ['DATE', 'DATE']);
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
