// Stdio MCP servers from the operator's configuration (GATEWAY_MCP_STDIO_SERVERS, a JSON
// file): started lazily with the SDK's StdioClientTransport, shown read-only in
// GET /mcp/servers, never creatable or changeable through the API, reached through the
// same grants, given only the environment their entry names (plus PATH), started again
// after they die, and killed when the gateway closes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { TEST_TMP } from '../helpers/paths.js';
import { createApiKey } from '../gateway/support.js';
import { connectClient, MCP } from './mcp-endpoint-support.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/mcp-stdio-server.mjs', import.meta.url));
// Stand-ins for the gateway's secrets in its own environment: the child must see none of them.
const PARENT_SECRETS = { GATEWAY_SECRET_KEY: 'parent-secret-key-0123456789abcdef', GATEWAY_DATABASE_URL: 'postgres://secret@db/gw' };

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('MCP stdio servers from the configuration', () => {
  let gw: TestGateway | undefined;
  let world: World;
  const saved: Record<string, string | undefined> = {};

  const whoami = async (headers: Record<string, string>, name = 'local_whoami') => {
    const client = await connectClient(gw!, MCP, headers, 'auto');
    try {
      const result = await client.callTool({ name, arguments: {} });
      return JSON.parse((result.content as { text: string }[])[0]!.text) as { pid: number; env: string[]; greeting: string };
    } finally {
      await client.close();
    }
  };
  const admin = () => ({ authorization: `Bearer ${world.a.admin.token}` });

  before(async () => {
    for (const [name, value] of Object.entries(PARENT_SECRETS)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    const dir = mkdtempSync(path.join(TEST_TMP, 'mcp-stdio-'));
    const file = path.join(dir, 'stdio-servers.json');
    writeFileSync(
      file,
      JSON.stringify([
        { name: 'local', command: process.execPath, args: [FIXTURE], env: { FIXTURE_GREETING: 'hello from the file' }, timeoutSeconds: 10 },
      ]),
    );
    gw = await startGateway({ GATEWAY_MCP_STDIO_SERVERS: file });
    world = await seedWorld(gw, 'mcp-stdio');
  });
  after(async () => {
    await gw?.close();
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });

  it('serves its tools to a tenant admin, the child seeing the env its entry names and none of the gateway secrets', async () => {
    const client = await connectClient(gw!, MCP, admin(), 'auto');
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ['local_die', 'local_whoami']);
    await client.close();
    const seen = await whoami(admin());
    assert.equal(seen.greeting, 'hello from the file');
    assert.ok(seen.env.includes('PATH'));
    for (const name of Object.keys(PARENT_SECRETS)) assert.ok(!seen.env.includes(name), `${name} reached the child`);
    assert.deepEqual(
      seen.env.filter((n) => n.startsWith('GATEWAY_') || n.includes('SECRET') || n.includes('DATABASE')),
      [],
    );
  });

  it('reaches a key only through its grant, and another tenant not at all', async () => {
    const key = await createApiKey(gw!, world.a.tenantId, 'stdio-key');
    const headers = { 'x-api-key': key.key };
    const none = await connectClient(gw!, MCP, headers, 'auto');
    assert.deepEqual((await none.listTools()).tools, []);
    await none.close();
    const set = await gw!.request('PATCH', `/api/auth/tenants/${world.a.tenantId}/api-keys/${key.id}`, {
      token: world.a.admin.token,
      json: { mcp: { allow: ['local/whoami'] } },
    });
    assert.equal(set.status, 200, set.text);
    assert.equal((await whoami(headers)).greeting, 'hello from the file');
    // Served to every tenant (no tenantIds), so B's admin reaches it too; a B key without a grant does not.
    const bKey = await connectClient(gw!, MCP, { 'x-api-key': world.b.key.key }, 'auto');
    assert.deepEqual((await bKey.listTools()).tools, []);
    await bKey.close();
  });

  it('is listed read-only and can be neither created, changed nor deleted through the API', async () => {
    const listed = await gw!.request('GET', '/api/llm/v1/mcp/servers', { token: world.a.admin.token });
    assert.equal(listed.status, 200);
    const local = listed.body.data.find((s: { name: string }) => s.name === 'local');
    assert.equal(local.source, 'config');
    assert.equal(local.editable, false);
    assert.equal(local.url, undefined);
    assert.ok(!JSON.stringify(listed.body).includes(FIXTURE), 'the command is not shown');
    const one = await gw!.request('GET', `/api/llm/v1/mcp/servers/${local.id}`, { token: world.platform.admin.token });
    assert.equal(one.status, 200);
    assert.equal(one.body.name, 'local');

    for (const token of [world.platform.admin.token, world.a.admin.token]) {
      const patch = await gw!.request('PATCH', `/api/llm/v1/mcp/servers/${local.id}`, { token, json: { timeoutSeconds: 5 } });
      assert.equal(patch.status, 409, patch.text);
      const del = await gw!.request('DELETE', `/api/llm/v1/mcp/servers/${local.id}`, { token });
      assert.equal(del.status, 409, del.text);
    }
    const taken = await gw!.request('POST', '/api/llm/v1/mcp/servers', {
      token: world.platform.admin.token,
      json: { name: 'local', url: 'https://mcp.example.com/mcp' },
    });
    assert.equal(taken.status, 409, taken.text);
  });

  it('refuses a server with command, args or transport stdio through the API (400), starting nothing', async () => {
    const marker = path.join(TEST_TMP, `never-${process.pid}`);
    for (const json of [
      { name: 'evil', command: 'touch', args: [marker] },
      { name: 'evil', url: 'https://mcp.example.com/mcp', command: 'touch', args: [marker] },
      { name: 'evil', url: 'https://mcp.example.com/mcp', transport: 'stdio' },
      { name: 'evil', url: 'https://mcp.example.com/mcp', env: { A: 'b' } },
    ]) {
      const created = await gw!.request('POST', '/api/llm/v1/mcp/servers', { token: world.platform.admin.token, json });
      assert.equal(created.status, 400, `${JSON.stringify(json)}: ${created.text}`);
    }
    const listed = await gw!.request('GET', '/api/llm/v1/mcp/servers', { token: world.platform.admin.token });
    const local = listed.body.data.find((s: { name: string }) => s.name === 'local');
    const patched = await gw!.request('PATCH', `/api/llm/v1/mcp/servers/${local.id}`, {
      token: world.platform.admin.token,
      json: { command: 'touch', args: [marker] },
    });
    assert.equal(patched.status, 400, patched.text);
  });

  it('starts the process again after it dies, and kills it when the gateway closes', async () => {
    const first = (await whoami(admin())).pid;
    const client = await connectClient(gw!, MCP, admin(), 'auto');
    await assert.rejects(client.callTool({ name: 'local_die', arguments: {} }));
    await client.close();
    await eventually('the child to exit', () => !alive(first));
    const second = (await whoami(admin())).pid;
    assert.notEqual(second, first);
    assert.ok(alive(second));
    await gw!.close();
    gw = undefined;
    await eventually('the child to be killed with the gateway', () => !alive(second));
  });
});
