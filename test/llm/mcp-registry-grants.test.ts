// Grants: an API key reaches the MCP tools its grant names (PATCH …/api-keys/{keyId}
// `mcp.allow`: `server/*`, `server/tool`), a member what the tenant's `mcp.memberAllow`
// names, an admin every tool. Through the real endpoint with the SDK client, against
// two SDK-built upstreams that record what reaches them: a tool outside the grant is
// not listed, and a call to it is -32602 and reaches no upstream.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError } from '@modelcontextprotocol/client';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { createApiKey } from '../gateway/support.js';
import { connectClient, MCP } from './mcp-endpoint-support.js';
import { startMockUpstream, tool, type MockUpstream } from './mcp-registry-support.js';

describe('MCP grants', () => {
  let gw: TestGateway;
  let world: World;
  let upA: MockUpstream;
  let upB: MockUpstream;

  const keyPath = (tenantId: string, keyId: string) => `/api/auth/tenants/${tenantId}/api-keys/${keyId}`;
  const patchKey = (keyId: string, json: unknown, token = world.a.admin.token, tenantId = world.a.tenantId) =>
    gw.request('PATCH', keyPath(tenantId, keyId), { token, json });
  const patchTenant = (json: unknown, token = world.a.admin.token, tenantId = world.a.tenantId) =>
    gw.request('PATCH', `/api/auth/tenants/${tenantId}`, { token, json });
  const toolNames = async (headers: Record<string, string>) => {
    const client = await connectClient(gw, MCP, headers, 'auto');
    try {
      return (await client.listTools()).tools.map((t) => t.name).sort();
    } finally {
      await client.close();
    }
  };
  /** Calls a tool the caller is not granted: -32602, and the number of calls that reached either upstream. */
  const refusedCall = async (headers: Record<string, string>, name: string) => {
    const before = upA.calls.length + upB.calls.length;
    const client = await connectClient(gw, MCP, headers, 'auto');
    try {
      await assert.rejects(client.callTool({ name, arguments: { text: 'x' } }), (error: unknown) => {
        assert.ok(error instanceof ProtocolError, `${name}: ${String(error)}`);
        assert.equal(error.code, -32602);
        return true;
      });
    } finally {
      await client.close();
    }
    return upA.calls.length + upB.calls.length - before;
  };

  before(async () => {
    upA = await startMockUpstream([tool('x'), tool('y'), tool('z')]);
    upB = await startMockUpstream([tool('echo')]);
    gw = await startGateway();
    world = await seedWorld(gw, 'mcp-grants');
    for (const [name, upstream] of [
      ['a', upA],
      ['b', upB],
    ] as const) {
      const created = await gw.request('POST', '/api/llm/v1/mcp/servers', {
        token: world.platform.admin.token,
        json: { name, url: upstream.url, tenantIds: [world.a.tenantId] },
      });
      assert.equal(created.status, 201, created.text);
    }
  });
  after(async () => {
    await gw?.close();
    await upA?.close();
    await upB?.close();
  });

  it('a new key has no grant and reaches no tool; an admin reaches every tool', async () => {
    const key = await createApiKey(gw, world.a.tenantId, 'fresh');
    const record = await gw.request('GET', keyPath(world.a.tenantId, key.id), { token: world.a.admin.token });
    assert.deepEqual(record.body.mcp, { allow: [] });
    assert.deepEqual(await toolNames({ 'x-api-key': key.key }), []);
    assert.equal(await refusedCall({ 'x-api-key': key.key }, 'a_x'), 0);
    assert.deepEqual(await toolNames({ authorization: `Bearer ${world.a.admin.token}` }), ['a_x', 'a_y', 'a_z', 'b_echo']);
  });

  it('a key granted a/* sees and calls the tools of a only', async () => {
    const key = await createApiKey(gw, world.a.tenantId, 'server-wide');
    const set = await patchKey(key.id, { mcp: { allow: ['a/*'] } });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body.mcp, { allow: ['a/*'] });
    assert.deepEqual((await gw.request('GET', keyPath(world.a.tenantId, key.id), { token: world.a.admin.token })).body.mcp, {
      allow: ['a/*'],
    });
    const headers = { 'x-api-key': key.key };
    assert.deepEqual(await toolNames(headers), ['a_x', 'a_y', 'a_z']);
    assert.equal(await refusedCall(headers, 'b_echo'), 0, 'an ungranted call reaches no upstream');

    const client = await connectClient(gw, MCP, headers, 'auto');
    const result = await client.callTool({ name: 'a_y', arguments: { text: 'hi' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'y:{"text":"hi"}' }]);
    await client.close();
    assert.equal(upA.calls.at(-1)?.name, 'y');
    // One server's own path shows the same grant: b, none of whose tools it has, is not found.
    await assert.rejects(connectClient(gw, `${MCP}/b`, headers, 'auto'), /404|Not found/);
  });

  it('a key granted a/x sees and calls that one tool; the others are -32602 and reach no upstream', async () => {
    const key = await createApiKey(gw, world.a.tenantId, 'one-tool');
    assert.equal((await patchKey(key.id, { mcp: { allow: ['a/x'] } })).status, 200);
    const headers = { 'x-api-key': key.key };
    assert.deepEqual(await toolNames(headers), ['a_x']);
    for (const name of ['a_y', 'a_z', 'b_echo', 'a_nope']) assert.equal(await refusedCall(headers, name), 0, name);
    assert.equal(await refusedCall({ authorization: `Bearer ${key.key}` }, 'a_y'), 0, 'the key as a bearer token too');

    // The grant changes at once (the key's cached validation drops on PATCH).
    assert.equal((await patchKey(key.id, { mcp: { allow: ['a/x', 'b/*'] } })).status, 200);
    assert.deepEqual(await toolNames(headers), ['a_x', 'b_echo']);
    assert.equal((await patchKey(key.id, { mcp: null })).status, 200);
    assert.deepEqual(await toolNames(headers), []);
  });

  it('a PATCH changes only what it names: limits and the grant independently', async () => {
    const key = await createApiKey(gw, world.a.tenantId, 'both');
    const limits = await patchKey(key.id, { limits: { requestsPerMinute: 1000 } });
    assert.deepEqual(limits.body.mcp, { allow: [] });
    const grant = await patchKey(key.id, { mcp: { allow: ['b/echo'] } });
    assert.deepEqual(grant.body.limits, { requestsPerMinute: 1000 }, 'the limits stay');
    assert.deepEqual(grant.body.mcp, { allow: ['b/echo'] });
    const limitsAgain = await patchKey(key.id, { limits: null });
    assert.deepEqual(limitsAgain.body.limits, {});
    assert.deepEqual(limitsAgain.body.mcp, { allow: ['b/echo'] }, 'the grant stays');
    const cleared = await patchKey(key.id, { mcp: { allow: [] } });
    assert.deepEqual(cleared.body.mcp, { allow: [] });
  });

  it('refuses malformed grants with 400 naming the field, and keeps the security cases', async () => {
    const key = await createApiKey(gw, world.a.tenantId, 'malformed');
    for (const mcp of [
      { allow: ['A/*'] },
      { allow: ['a'] },
      { allow: ['a/'] },
      { allow: ['a/x y'] },
      { allow: ['*/*'] },
      { allow: 'a/*' },
      { allow: ['a/*', 'a/*'] },
      {},
      { allow: [], extra: true },
    ]) {
      const answer = await patchKey(key.id, { mcp });
      assert.equal(answer.status, 400, `${JSON.stringify(mcp)}: ${answer.text}`);
      assert.ok(
        answer.body.errors.some((e: { field: string }) => e.field.startsWith('mcp')),
        `${JSON.stringify(mcp)} → ${answer.text}`,
      );
    }
    const json = { mcp: { allow: ['a/*'] } };
    assert.equal((await gw.request('PATCH', keyPath(world.a.tenantId, key.id), { json })).status, 401);
    assert.equal((await patchKey(key.id, json, world.a.member.token)).status, 403);
    assert.equal((await gw.request('PATCH', keyPath(world.a.tenantId, key.id), { apiKey: key.key, json })).status, 403);
    assert.equal((await patchKey(key.id, json, world.b.admin.token)).status, 404);
    assert.equal((await patchKey(key.id, json, world.b.admin.token, world.b.tenantId)).status, 404);
    assert.deepEqual(
      (await gw.request('GET', keyPath(world.a.tenantId, key.id), { token: world.a.admin.token })).body.mcp,
      { allow: [] },
      'nothing changed',
    );
    const granted = await createApiKey(gw, world.a.tenantId, 'granted');
    await patchKey(granted.id, json);
    assert.deepEqual(await toolNames({ 'x-api-key': world.b.key.key }), [], "another tenant's key sees none of A's");
  });

  it("a member reaches nothing without the tenant's memberAllow, and what it names with it", async () => {
    const member = { authorization: `Bearer ${world.a.member.token}` };
    assert.deepEqual(await toolNames(member), []);
    assert.equal(await refusedCall(member, 'a_x'), 0);

    const set = await patchTenant({ mcp: { memberAllow: ['b/echo', 'a/z'] } });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body.settings.mcp, { memberAllow: ['b/echo', 'a/z'] });
    assert.deepEqual(await toolNames(member), ['a_z', 'b_echo']);
    assert.equal(await refusedCall(member, 'a_x'), 0);
    const client = await connectClient(gw, MCP, member, 'auto');
    const result = await client.callTool({ name: 'b_echo', arguments: { text: 'member' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'echo:{"text":"member"}' }]);
    await client.close();
    assert.equal(upB.calls.at(-1)?.name, 'echo');
    assert.deepEqual(await toolNames({ authorization: `Bearer ${world.a.admin.token}` }), ['a_x', 'a_y', 'a_z', 'b_echo']);
    assert.deepEqual(await toolNames({ 'x-api-key': world.a.key.key }), [], "memberAllow is not a key's grant");

    // Another tenant's admin, a member, a key: none may set it; malformed is 400.
    assert.equal((await patchTenant({ mcp: { memberAllow: ['a/*'] } }, world.b.admin.token)).status, 404);
    assert.equal((await patchTenant({ mcp: { memberAllow: ['a/*'] } }, world.a.member.token)).status, 403);
    const bad = await patchTenant({ mcp: { memberAllow: ['a'] } });
    assert.equal(bad.status, 400, bad.text);
    assert.ok(
      bad.body.errors.some((e: { field: string }) => e.field.startsWith('mcp')),
      bad.text,
    );

    assert.equal((await patchTenant({ mcp: { memberAllow: [] } })).status, 200);
    assert.deepEqual(await toolNames(member), []);
  });
});
