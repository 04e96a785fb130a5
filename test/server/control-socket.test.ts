// The CLI while a server runs on the embedded database: the server holds the
// data dir, so every command goes through its control socket and the server
// keeps serving HTTPS throughout. (Embedded only: on PostgreSQL the CLI connects directly.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { lockHolder } from '../../src/platform/db/embedded.js';
import { controlSocketPath } from '../../src/server/control-protocol.js';
import {
  ON_POSTGRES,
  cliJson,
  freshDataDir,
  killChildren,
  request,
  runCli,
  startInProcess,
  type DataDir,
  type InProcessServer,
} from '../cli/helpers.js';

const PASSWORD = 'server-side-password-9';

// Speaks to the control socket directly, as any local process of the same user could.
function rawControl(socketPath: string, body: string, method = 'POST', urlPath = '/v1/commands'): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method, path: urlPath, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('gateway CLI while the server runs (control socket)', {
  skip: ON_POSTGRES && 'the control socket serves the embedded database only',
}, () => {
  let data: DataDir;
  let gw: InProcessServer;
  let ca: string;
  let url: string;
  let tenantId: string;
  const plaintextKeys: string[] = [];

  before(async () => {
    data = await freshDataDir();
    gw = await startInProcess({ ...data.env, GATEWAY_TLS: 'on' });
    url = gw.server.url;
    ca = readFileSync(path.join(data.dir, 'tls', 'cert.pem'), 'utf8');
  });
  after(async () => {
    killChildren();
    await gw?.server.close();
    await data?.remove();
  });

  it('opens a control socket only its own user can reach', () => {
    const socket = controlSocketPath(data.dir);
    assert.equal(gw.server.controlSocket, socket);
    assert.ok(statSync(socket).isSocket());
    assert.equal(statSync(socket).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(socket)).mode & 0o777, 0o700);
    assert.equal(lockHolder(data.dir), process.pid);
    assert.ok(
      gw.printed.some((line) => line.includes(socket)),
      'the banner names the socket',
    );
    assert.ok(
      gw.printed.some((line) => /No tenant exists yet/.test(line)),
      'the banner says how to create a tenant',
    );
  });

  it('creates a tenant, an admin and a key through the running server, which keeps serving', async () => {
    const tenant = await cliJson(['tenants', 'create', '--name', 'Live Co'], data.env);
    assert.match(tenant.id, /^ten_/);
    tenantId = tenant.id;
    const admin = await cliJson(
      ['users', 'create', '--tenant', tenantId, '--username', 'live-admin', '--email', 'ops@live.example', '--admin', '--password-stdin'],
      data.env,
      PASSWORD,
    );
    assert.deepEqual(admin.roles, ['admin']);
    // The server still owns the data dir: the CLI never opened it.
    assert.equal(lockHolder(data.dir), process.pid);

    const health = await request(`${url}/health`, { ca });
    assert.equal(health.status, 200);
    assert.equal(health.body.database.status, 'up');

    const login = await request(`${url}/api/auth/login`, { method: 'POST', ca, json: { username: 'live-admin', password: PASSWORD } });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.user.id, admin.id);
    assert.equal(login.body.user.tenantId, tenantId);
  });

  it('a key created while the server runs works against it at once', async () => {
    const key = await cliJson(['keys', 'create', '--tenant', tenantId, '--name', 'live', '--scopes', 'chat'], data.env);
    assert.match(key.key, /^rdk_/);
    const workspaces = await request(`${url}/api/os/workspaces`, { ca, headers: { 'x-api-key': key.key } });
    assert.equal(workspaces.status, 200, workspaces.text);
    const created = await request(`${url}/api/os/workspaces`, {
      method: 'POST',
      ca,
      headers: { authorization: `Bearer ${key.key}` },
      json: { name: 'From the CLI key' },
    });
    assert.equal(created.status, 201, created.text);

    const human = await runCli(['keys', 'create', '--tenant', tenantId, '--name', 'second'], data.env);
    assert.equal(human.code, 0, human.stderr);
    const plaintext = human.stdout.match(/^ {2}(rdk_\S+)$/m)![1]!;
    assert.equal((await request(`${url}/api/os/workspaces`, { ca, headers: { 'x-api-key': plaintext } })).status, 200);
    plaintextKeys.push(key.key, plaintext);
  });

  it('lists tenants, users and keys through the running server, keys masked', async () => {
    const tenants = await cliJson(['tenants', 'list'], data.env);
    assert.deepEqual(
      tenants.data.map((t: any) => [t.id, t.name]),
      [[tenantId, 'Live Co']],
    );
    const users = await cliJson(['users', 'list', '--tenant', tenantId], data.env);
    assert.deepEqual(
      users.data.map((u: any) => [u.username, u.email, u.roles]),
      [['live-admin', 'ops@live.example', ['admin']]],
    );
    const keys = await cliJson(['keys', 'list', '--tenant', tenantId], data.env);
    assert.deepEqual(
      keys.data.map((k: any) => k.name),
      ['live', 'second'],
    );
    const human = await runCli(['keys', 'list', '--tenant', tenantId], data.env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^ID +NAME +KEY +STATUS/);
    assert.equal(human.stdout.trimEnd().split('\n').length, 3);
    const printed = JSON.stringify(keys) + human.stdout;
    for (const key of plaintextKeys) assert.equal(printed.includes(key), false, 'a plaintext key was listed');
    assert.equal(lockHolder(data.dir), process.pid, 'the server ran them; the CLI never opened the database');

    const unknown = await runCli(['users', 'list', '--tenant', 'ten_01ZZZZZZZZZZZZZZZZZZZZZZZZ'], data.env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^error: Tenant not found\.\n$/);
    assert.equal(unknown.stdout, '');
  });

  it('errors from the server come back as one line naming the field, exit 1', async () => {
    const cases: [string[], RegExp][] = [
      [['users', 'create', '--tenant', tenantId, '--username', 'live-admin', '--password', PASSWORD], /username is taken/],
      [
        ['users', 'create', '--tenant', 'ten_01ZZZZZZZZZZZZZZZZZZZZZZZZ', '--username', 'ghost', '--password', PASSWORD],
        /Tenant not found/,
      ],
      [['tenants', 'create', '--name', 'live co'], /already exists/],
      [
        ['keys', 'create', '--tenant', tenantId, '--name', 'old', '--expires-at', '2001-01-01T00:00:00Z'],
        /--expires-at: must be in the future/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, data.env);
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}`);
      assert.match(result.stderr, message);
      assert.match(result.stderr, /^error: [^\n]+\n$/);
    }
    assert.equal((await request(`${url}/health`, { ca })).status, 200);
  });

  it('migrate goes through the server, which already migrated at start', async () => {
    const result = await runCli(['migrate'], data.env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /schema is up to date/);
  });

  it('validates what arrives on the socket exactly like parsed arguments', async () => {
    const socket = controlSocketPath(data.dir);
    const extra = await rawControl(socket, JSON.stringify({ command: 'tenants create', args: { name: 'X', roles: ['platform_admin'] } }));
    assert.equal(extra.status, 400);
    assert.match(extra.body.error.message, /--roles: is not an option/);
    const wrongType = await rawControl(
      socket,
      JSON.stringify({ command: 'users create', args: { tenant: tenantId, username: 'typed', password: 12345678901234, admin: 'yes' } }),
    );
    assert.equal(wrongType.status, 400);
    const unknown = await rawControl(socket, JSON.stringify({ command: 'start', args: {} }));
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error.message, /unknown command/);
    assert.equal((await rawControl(socket, '{not json')).status, 400);
    assert.equal((await rawControl(socket, '', 'GET', '/')).status, 404);
  });

  it('never logs passwords or keys', () => {
    const logs = gw.logs();
    assert.match(logs, /control socket command done/);
    assert.equal(logs.includes(PASSWORD), false);
    assert.doesNotMatch(logs, /rdk_[A-Za-z0-9_-]{20,}/);
    assert.equal(gw.printed.join('\n').includes(PASSWORD), false);
  });

  it('on close removes the socket and frees the data dir, and the CLI then opens the database itself', async () => {
    await gw.server.close();
    assert.equal(existsSync(controlSocketPath(data.dir)), false);
    assert.equal(lockHolder(data.dir), undefined);
    // Same database as the server's: the tenant created through it is there.
    const duplicate = await runCli(['tenants', 'create', '--name', 'Live Co'], data.env);
    assert.equal(duplicate.code, 1);
    assert.match(duplicate.stderr, /already exists/);
  });
});
