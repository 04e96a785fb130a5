// The `gateway` CLI's lists with no server running: JSON as the API answers, tables for
// people, never a secret. The records are made in-process (create.test.ts tests the
// commands that make them), so that this file starts only the CLI processes it tests.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { issueApiKey } from '../../src/areas/auth/api-keys/service.js';
import { createTenant } from '../../src/areas/auth/tenants/service.js';
import { createUser } from '../../src/areas/auth/users/service.js';
import { createContext } from '../../src/context.js';
import { loadConfig } from '../../src/platform/config.js';
import type { RoleName } from '../../src/platform/identity.js';
import { cliJson, freshDataDir, killChildren, runCli, type DataDir } from './helpers.js';

const PASSWORD = 'correct-horse-battery-1';

interface Seeded {
  tenantId: string;
  plaintextKeys: string[];
}

/**
 * The records the lists show, made through the services the CLI's create commands call
 * (create.test.ts tests those): two tenants, three users and two used keys in the first.
 */
async function seed(env: Record<string, string>): Promise<Seeded> {
  const ctx = await createContext(loadConfig(env));
  try {
    const acme = await createTenant(ctx, 'Acme Research');
    await createTenant(ctx, 'Beta Labs');
    const user = (username: string, roles: RoleName[], email?: string) =>
      createUser(ctx, { tenantId: acme.id, username, password: PASSWORD, roles, ...(email ? { email } : {}) });
    await user('alice', ['admin'], 'alice@example.com');
    await user('bob', ['member']);
    await user('root-op', ['platform_admin', 'admin']);
    const ci = await issueApiKey(ctx, acme.id, { name: 'ci', scopes: ['read', 'write'], expiresAt: '2031-01-01T00:00:00Z' }, null);
    const laptop = await issueApiKey(ctx, acme.id, { name: 'laptop', scopes: [] }, null);
    // Used once each, so that LAST USED shows a date.
    for (const key of [ci.key, laptop.key]) assert.equal((await ctx.auth.apiKeys.resolve(key))?.tenantId, acme.id);
    return { tenantId: acme.id, plaintextKeys: [ci.key, laptop.key] };
  } finally {
    await ctx.close();
  }
}

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

describe('gateway CLI lists (no server running)', () => {
  let data: DataDir;
  let env: Record<string, string>;
  let tenantId: string;
  let plaintextKeys: string[];

  before(async () => {
    data = await freshDataDir();
    env = data.env;
    ({ tenantId, plaintextKeys } = await seed(env));
  });
  after(async () => {
    killChildren();
    await data.remove();
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
            ![
              'id',
              'name',
              'maskedKey',
              'status',
              'scopes',
              'createdAt',
              'expiresAt',
              'customerId',
              'lastUsedAt',
              'limits',
              'mcp',
            ].includes(k),
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
        // Both were used when seed() resolved them.
        ['ci', 'active', '2031-01-01 00:00:00Z', 'DATE'],
        ['laptop', 'active', '-', 'DATE'],
      ],
    );
    assert.ok(keyRows.slice(1).every((row) => /^key_[0-9A-Z]{26}$/.test(row[0]!) && /^rdk_.{4}….{4}$/.test(row[2]!)));
    assert.deepEqual(created(keyRows), ['DATE', 'DATE']);
  });
});
