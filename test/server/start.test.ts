// `gateway start` as a user runs it: a real process, its banner, bad config at
// boot, a second start on the same data dir, the CLI beside it, and SIGTERM.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
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
  startCliServer,
  type DataDir,
  type StartedProcess,
} from '../cli/helpers.js';

describe('gateway start', () => {
  let data: DataDir;

  before(async () => {
    data = await freshDataDir();
  });
  after(async () => {
    killChildren();
    await data.remove();
  });

  it('a bad configuration value stops the start with a message naming the variable', async () => {
    // Side by side: all but the last fail before a database is opened, and the last is alone in opening one.
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'abc' }, /^error: Invalid configuration: PORT must be a whole number, got "abc"\n$/],
      [{ PORT: '70000' }, /PORT must be between 0 and 65535/],
      [{ GATEWAY_TLS_CERT: '/nonexistent/cert.pem' }, /GATEWAY_TLS_KEY must be set together/],
      [
        { GATEWAY_TLS_CERT: '/nonexistent/cert.pem', GATEWAY_TLS_KEY: '/nonexistent/key.pem' },
        /GATEWAY_TLS_CERT names a file that cannot be read/,
      ],
      [{ GATEWAY_TENANT: 'Acme' }, /GATEWAY_ADMIN_USERNAME is required to create the first tenant/],
    ];
    const results = await Promise.all(cases.map(([env]) => runCli(['start'], { ...data.env, ...env }, { timeoutMs: 120_000 })));
    cases.forEach(([env, message], i) => {
      const result = results[i]!;
      assert.equal(result.code, 1, `${JSON.stringify(env)}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, message);
      assert.doesNotMatch(result.stdout, /is running at/);
    });
    assert.equal(lockHolder(data.dir), undefined);
  });

  it('starts, serves HTTPS, takes CLI commands beside it, and stops cleanly on SIGTERM', {
    skip: ON_POSTGRES && 'embedded database only',
  }, async () => {
    const server: StartedProcess = startCliServer({ ...data.env, PORT: '0' });
    const [, url] = await server.waitFor(/is running at (https:\/\/127\.0\.0\.1:\d+)/);
    await server.waitFor(/No tenant exists yet/);
    const ca = readFileSync(path.join(data.dir, 'tls', 'cert.pem'), 'utf8');
    assert.equal((await request(`${url}/health`, { ca })).status, 200);
    assert.equal(lockHolder(data.dir), server.child.pid);

    // A second server on the same data dir is refused before it touches the database.
    const second = await runCli(['start'], { ...data.env, PORT: '0' }, { timeoutMs: 120_000 });
    assert.equal(second.code, 1);
    assert.match(second.stderr, new RegExp(`in use by process ${server.child.pid}`));

    const tenant = await cliJson(['tenants', 'create', '--name', 'Started Co'], data.env);
    const key = await cliJson(['keys', 'create', '--tenant', tenant.id, '--name', 'k'], data.env);
    assert.equal((await request(`${url}/api/os/workspaces`, { ca, headers: { 'x-api-key': key.key } })).status, 200);

    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.match(server.output(), /Stopped\./);
    assert.equal(existsSync(controlSocketPath(data.dir)), false);
    assert.equal(lockHolder(data.dir), undefined);
    assert.equal(server.output().includes(key.key), false, 'the key never reaches the server output');
  });

  // Issue 14: the banner was printed to stdout among the JSON log lines.
  it('writes only JSON log lines to stdout; the banner, the first tenant id and the certificate fingerprint go to stderr', {
    skip: ON_POSTGRES && 'embedded database only',
  }, async () => {
    const fresh = await freshDataDir();
    try {
      const password = 'banner-test-password-1';
      const server = startCliServer({
        ...fresh.env,
        PORT: '0',
        GATEWAY_LOG_LEVEL: 'info',
        GATEWAY_TENANT: 'Banner Co',
        GATEWAY_ADMIN_USERNAME: 'admin',
        GATEWAY_ADMIN_PASSWORD: password,
      });
      const [, tenantId] = await server.waitFor(/Created the first tenant "Banner Co" \((ten_[0-9A-Z]{26})\)/);
      const [, url] = await server.waitFor(/is running at (https:\/\/127\.0\.0\.1:\d+)/);
      const ca = readFileSync(path.join(fresh.dir, 'tls', 'cert.pem'), 'utf8');
      assert.equal((await request(`${url}/health`, { ca })).status, 200);
      // The id in the banner is the one the CLI lists.
      assert.deepEqual(
        (await cliJson(['tenants', 'list'], fresh.env)).data.map((t: any) => t.id),
        [tenantId],
      );
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);

      const stdout = server
        .stdout()
        .split('\n')
        .filter((line) => line !== '');
      for (const line of stdout) assert.doesNotThrow(() => JSON.parse(line), `a stdout line that is not JSON: ${line}`);
      assert.ok(
        stdout.some((line) => JSON.parse(line).msg === 'request completed' && JSON.parse(line).req?.url === '/health'),
        server.stdout(),
      );
      const stderr = server.stderr();
      assert.match(stderr, /is running at https:/);
      assert.ok(stderr.includes(tenantId!), stderr);
      assert.ok(stderr.includes(`SHA-256 ${new X509Certificate(ca).fingerprint256}`), stderr);
      assert.match(stderr, /Stopped\./);
      assert.equal(server.output().includes(password), false);
    } finally {
      await fresh.remove();
    }
  });

  it('writes the request log to stdout by a periodic flush, and what is still buffered when it stops', async () => {
    const server = startCliServer({ ...data.env, PORT: '0', GATEWAY_LOG_LEVEL: 'info' });
    const [, url] = await server.waitFor(/is running at (https:\/\/127\.0\.0\.1:\d+)/);
    const ca = readFileSync(path.join(data.dir, 'tls', 'cert.pem'), 'utf8');
    // One short line, far below the 4 KB the log buffers: the periodic flush writes it.
    assert.equal((await request(`${url}/health`, { ca })).status, 200);
    // Nothing else is sent and the process is not stopped until the line is out: only the
    // periodic flush can write it (without one it would wait in the buffer until the stop).
    await server.waitFor(/"url":"\/health".*"statusCode":200/, 60_000);
    // The next line is still in the buffer when SIGTERM comes: it is written before the process ends.
    assert.equal((await request(`${url}/api/llm/v1/models`, { ca })).status, 401);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.match(server.output(), /"url":"\/api\/llm\/v1\/models".*"statusCode":401/);
  });
});
