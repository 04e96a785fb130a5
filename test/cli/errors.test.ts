// The `gateway` CLI's help, its failures (exit 1, one line on stderr naming the
// field or variable, nothing on stdout) and migrate, with no server running.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cliJson, freshDataDir, killChildren, runCli, type DataDir } from './helpers.js';

const PASSWORD = 'correct-horse-battery-2';

type Failure = [string[], RegExp];

async function expectFailures(env: Record<string, string>, failures: Failure[]) {
  const results = await Promise.all(failures.map(([args]) => runCli(args, env)));
  failures.forEach(([args, message], i) => {
    const result = results[i]!;
    const what = args.join(' ');
    assert.equal(result.code, 1, `${what}: ${result.stdout}${result.stderr}`);
    assert.match(result.stderr, message, what);
    assert.match(result.stderr, /^error: [^\n]+\n$/, `one line for ${what}`);
    assert.equal(result.stdout, '', what);
    assert.equal(result.stderr.includes(PASSWORD), false, what);
  });
}

describe('gateway CLI help, errors and migrate (no server running)', () => {
  let data: DataDir;
  let env: Record<string, string>;
  let tenantId: string;

  before(async () => {
    data = await freshDataDir();
    env = data.env;
    tenantId = (await cliJson(['tenants', 'create', '--name', 'Acme Research'], env)).id;
    await cliJson(['users', 'create', '--tenant', tenantId, '--username', 'alice', '--password-stdin'], env, PASSWORD);
  });
  after(async () => {
    killChildren();
    await data.remove();
  });

  it('prints help for people and exits 0', async () => {
    const general = await runCli(['--help'], env);
    assert.equal(general.code, 0);
    for (const command of [
      'start',
      'migrate',
      'tenants create',
      'tenants list',
      'users create',
      'users list',
      'keys create',
      'keys list',
    ]) {
      assert.match(general.stdout, new RegExp(`\\n  ${command} `));
    }
    const users = await runCli(['users', 'create', '--help'], env);
    assert.equal(users.code, 0);
    assert.match(users.stdout, /--tenant <tenantId>/);
    assert.match(users.stdout, /--password-stdin/);
    const keys = await runCli(['keys', 'list', '--help'], env);
    assert.equal(keys.code, 0);
    assert.match(keys.stdout, /^Usage: \S.* keys list --tenant <tenantId> \[options\]\n/);
    assert.match(keys.stdout, /--json/);
    assert.doesNotMatch(keys.stdout, /--password/);
  });

  // Checked before any database is opened, so these run side by side.
  it('bad input exits 1 with one line on stderr naming the field, and prints nothing on stdout', async () => {
    await expectFailures(env, [
      [['tenants', 'create'], /--name: is required/],
      [['tenants', 'create', '--name', '   '], /--name: is required/],
      [['tenants', 'create', '--name', 'x'.repeat(201)], /--name: must be at most 200/],
      [['tenants', 'create', '--name', 'Z', '--colour', 'red'], /Unknown option '--colour'/],
      [['users', 'create', '--tenant', tenantId, '--username', 'carol', '--password', 'short'], /--password: must be 12 to 256 characters/],
      [['users', 'create', '--tenant', tenantId, '--username', 'no spaces', '--password', PASSWORD], /--username/],
      [['users', 'create', '--tenant', tenantId, '--username', 'dave', '--password', PASSWORD, '--email', 'nope'], /--email/],
      [['users', 'create', '--tenant', tenantId, '--username', 'erin'], /--password: is required/],
      [['keys', 'create', '--tenant', tenantId, '--name', 'k', '--expires-at', 'tomorrow'], /--expires-at/],
      [['keys', 'create', '--tenant', tenantId, '--name', 'k', '--scopes', 'a b'], /--scopes/],
      [['users', 'list'], /--tenant: is required/],
      [['keys', 'list', '--tenant'], /--tenant/],
      [['tenants', 'list', '--tenant', tenantId], /Unknown option '--tenant'/],
      [['tenants', 'delete', '--name', 'x'], /unknown command "tenants delete"/],
      [['frobnicate'], /unknown command "frobnicate"/],
    ]);
  });

  it('input the database rejects exits 1 the same way', async () => {
    for (const failure of [
      [['tenants', 'create', '--name', 'acme research'], /already exists/],
      [['users', 'create', '--tenant', tenantId, '--username', 'ALICE', '--password', PASSWORD], /username is taken/],
      [['users', 'create', '--tenant', 'ten_missing', '--username', 'erin', '--password', PASSWORD], /Tenant not found/],
      [['users', 'list', '--tenant', 'ten_missing'], /Tenant not found/],
      [['keys', 'list', '--tenant', 'ten_01ZZZZZZZZZZZZZZZZZZZZZZZZ', '--json'], /Tenant not found/],
      [
        ['keys', 'create', '--tenant', tenantId, '--name', 'k', '--expires-at', '2001-01-01T00:00:00Z'],
        /--expires-at: must be in the future/,
      ],
    ] as Failure[]) {
      await expectFailures(env, [failure]);
    }
  });

  it('a bad configuration value stops the command with a message naming the variable', async () => {
    const port = await runCli(['tenants', 'create', '--name', 'Never'], { ...env, PORT: 'abc' });
    assert.equal(port.code, 1);
    assert.match(port.stderr, /PORT must be a whole number, got "abc"/);
    const tls = await runCli(['migrate'], { ...env, GATEWAY_TLS: 'maybe' });
    assert.equal(tls.code, 1);
    assert.match(tls.stderr, /GATEWAY_TLS must be one of on, off/);
  });

  it('migrate reports an up-to-date schema, for people and as JSON', async () => {
    const human = await runCli(['migrate'], env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /schema is up to date/);
    const json = await cliJson(['migrate'], env);
    assert.deepEqual(json.applied, []);
    assert.equal(typeof json.vector, 'boolean');
  });
});
