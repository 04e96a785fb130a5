// The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli 0.17.0: the newest CLI that
// works on Node 20 from any directory; @modelcontextprotocol/inspector needs Node 22,
// and inspector-cli 0.17.1–1.0.3 look for their package.json relative to the working
// directory and fail unless ../package.json happens to exist) run from
// node_modules exactly as the README shows, against the real gateway: tools/list and
// tools/call with an API key in --header, and a wrong key refused before any upstream call.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startMockUpstream, type MockUpstream } from './mcp-registry-support.js';

const inspectorCli = path.resolve('node_modules/@modelcontextprotocol/inspector-cli/build/cli.js');

/** `mcp-inspector-cli --cli <args>`: its exit status, stdout and stderr. */
function inspector(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [inspectorCli, '--cli', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // A hung CLI fails the test instead of holding the run.
    const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(deadline);
      resolve({ status, stdout, stderr });
    });
  });
}

describe('MCP Inspector CLI against the gateway', () => {
  let gw: TestGateway;
  let world: World;
  let upstream: MockUpstream;
  let endpoint: string;

  before(async () => {
    upstream = await startMockUpstream();
    gw = await startGateway();
    world = await seedWorld(gw, 'mcp-inspector');
    endpoint = `${gw.url}/api/llm/v1/mcp`;
    const created = await gw.request('POST', '/api/llm/v1/mcp/servers', {
      token: world.platform.admin.token,
      json: { name: 'docs', url: upstream.url, auth: { type: 'none' }, tenantIds: [world.a.tenantId] },
    });
    assert.equal(created.status, 201, created.text);
    const granted = await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}/api-keys/${world.a.key.id}`, {
      token: world.a.admin.token,
      json: { mcp: { allow: ['docs/echo'] } },
    });
    assert.equal(granted.status, 200, granted.text);
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it('lists the tools the key is granted (--method tools/list --header "X-API-Key: …")', async () => {
    const run = await inspector([endpoint, '--transport', 'http', '--method', 'tools/list', '--header', `X-API-Key: ${world.a.key.key}`]);
    assert.equal(run.status, 0, run.stderr);
    const listed = JSON.parse(run.stdout);
    assert.deepEqual(
      listed.tools.map((t: { name: string }) => t.name),
      ['docs_echo'],
      'only the granted tool, under its {server}_{tool} name',
    );
    assert.equal(listed.tools[0].description, 'echo tool');
  });

  it('calls a tool with --tool-name and --tool-arg, per server too', async () => {
    const key = `X-API-Key: ${world.a.key.key}`;
    const run = await inspector([
      endpoint,
      '--transport',
      'http',
      '--method',
      'tools/call',
      '--tool-name',
      'docs_echo',
      '--tool-arg',
      'text=hello',
      '--header',
      key,
    ]);
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout).content, [{ type: 'text', text: 'echo:{"text":"hello"}' }]);
    assert.deepEqual(upstream.calls.at(-1), { name: 'echo', args: { text: 'hello' } });

    const perServer = await inspector([
      `${endpoint}/docs`,
      '--transport',
      'http',
      '--method',
      'tools/call',
      '--tool-name',
      'echo',
      '--tool-arg',
      'text=again',
      '--header',
      key,
    ]);
    assert.equal(perServer.status, 0, perServer.stderr);
    assert.deepEqual(JSON.parse(perServer.stdout).content, [{ type: 'text', text: 'echo:{"text":"again"}' }]);
  });

  it('fails, reaching no upstream, with a wrong key or none', async () => {
    const calls = upstream.calls.length;
    const wrongKey = await inspector([
      endpoint,
      '--transport',
      'http',
      '--method',
      'tools/call',
      '--tool-name',
      'docs_echo',
      '--header',
      'X-API-Key: gw_wrong',
    ]);
    assert.notEqual(wrongKey.status, 0);
    assert.match(wrongKey.stderr, /401|Unauthorized/i);
    const noKey = await inspector([endpoint, '--transport', 'http', '--method', 'tools/list']);
    assert.notEqual(noKey.status, 0);
    assert.equal(upstream.calls.length, calls);
  });
});
