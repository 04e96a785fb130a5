// The audit of MCP tool calls: each tools/call through the real endpoint (SDK client,
// registry, SDK-built upstream) is one record with its status (ok, error, denied,
// timeout, cancelled), and GET /api/llm/v1/mcp/calls shows a tenant admin their
// tenant's records only, filtered and paged. No argument or result content is kept.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { connectClient, MCP, post } from './mcp-endpoint-support.js';
import { startMockUpstream, tool, type MockUpstream } from './mcp-registry-support.js';

const SECRET_ARGUMENT = 'argument-content-3c59dc048e8850243be8079a5c74d079';

interface CallRecord {
  id: string;
  at: string;
  server: string | null;
  tool: string;
  keyId?: string;
  userId?: string;
  status: string;
  durationMs: number;
  argumentsSha256: string;
  argumentsBytes: number;
  resultBytes: number | null;
}

describe('MCP call audit', () => {
  let gw: TestGateway;
  let world: World;
  let upstream: MockUpstream;
  let serverId: string;
  const texts: string[] = [];

  const calls = async (query = '', token = world.a.admin.token) => {
    const answer = await gw.request('GET', `/api/llm/v1/mcp/calls${query}`, { token });
    texts.push(answer.text);
    return answer;
  };
  const newest = async (): Promise<CallRecord> => (await calls('?limit=1')).body.data[0];
  const admin = () => ({ authorization: `Bearer ${world.a.admin.token}` });

  before(async () => {
    upstream = await startMockUpstream([tool('echo'), tool('fails'), tool('hang')]);
    gw = await startGateway();
    world = await seedWorld(gw, 'mcp-calls');
    const created = await gw.request('POST', '/api/llm/v1/mcp/servers', {
      token: world.platform.admin.token,
      json: { name: 'tools', url: upstream.url, timeoutSeconds: 1, tenantIds: [world.a.tenantId] },
    });
    assert.equal(created.status, 201, created.text);
    serverId = created.body.id;
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it('records a call that answered: ok, who, the arguments hash and sizes, no content', async () => {
    const client = await connectClient(gw, MCP, admin(), 'auto');
    const args = { text: SECRET_ARGUMENT };
    const result = await client.callTool({ name: 'tools_echo', arguments: args });
    await client.close();
    const record = await newest();
    assert.equal(record.status, 'ok');
    assert.equal(record.server, 'tools');
    assert.equal(record.tool, 'echo');
    assert.equal(record.userId, world.a.admin.id);
    assert.equal(record.keyId, undefined);
    assert.equal(record.argumentsSha256, createHash('sha256').update(JSON.stringify(args)).digest('hex'));
    assert.equal(record.argumentsBytes, Buffer.byteLength(JSON.stringify(args)));
    assert.ok(record.resultBytes! > 0);
    assert.ok(record.durationMs >= 0);
    assert.match(record.id, /^mcpc_/);
    assert.ok(!Number.isNaN(Date.parse(record.at)));
    assert.deepEqual(result.content, [{ type: 'text', text: `echo:${JSON.stringify(args)}` }]);
  });

  it("records a tool's own failure as error, and an unknown or ungranted tool as denied with a key's id", async () => {
    const client = await connectClient(gw, MCP, admin(), 'auto');
    const failed = await client.callTool({ name: 'tools_fails', arguments: {} });
    assert.equal(failed.isError, true);
    assert.equal((await newest()).status, 'error');
    await assert.rejects(client.callTool({ name: 'tools_nope', arguments: {} }), { code: -32602 });
    await client.close();
    const unknown = await newest();
    assert.deepEqual([unknown.status, unknown.server, unknown.tool, unknown.resultBytes], ['denied', null, 'tools_nope', null]);

    const before = upstream.calls.length;
    const keyClient = await connectClient(gw, MCP, { 'x-api-key': world.a.key.key }, 'auto');
    await assert.rejects(keyClient.callTool({ name: 'tools_echo', arguments: {} }), { code: -32602 });
    await keyClient.close();
    assert.equal(upstream.calls.length, before, 'a denied call reaches no upstream');
    const denied = await newest();
    assert.deepEqual([denied.status, denied.keyId, denied.userId], ['denied', world.a.key.id, undefined]);
  });

  it('records a call that outlived timeoutSeconds as timeout, and a cancelled one as cancelled', async () => {
    const client = await connectClient(gw, MCP, admin(), 'auto');
    await assert.rejects(client.callTool({ name: 'tools_hang', arguments: {} }));
    const timedOut = await newest();
    assert.deepEqual([timedOut.status, timedOut.tool], ['timeout', 'hang']);

    // A cancel well inside the server's time, however slow this machine is.
    const longer = await gw.request('PATCH', `/api/llm/v1/mcp/servers/${serverId}`, {
      token: world.platform.admin.token,
      json: { timeoutSeconds: 600 },
    });
    assert.equal(longer.status, 200, longer.text);
    const hangs = upstream.calls.filter((c) => c.name === 'hang').length;
    const abort = new AbortController();
    const pending = client.callTool({ name: 'tools_hang', arguments: {} }, { signal: abort.signal });
    await eventually('the call reached the upstream', () => upstream.calls.filter((c) => c.name === 'hang').length > hangs);
    abort.abort();
    await assert.rejects(pending);
    await eventually('the cancelled call is recorded', async () => (await newest()).id !== timedOut.id);
    const cancelled = await newest();
    assert.deepEqual([cancelled.status, cancelled.tool], ['cancelled', 'hang']);
    await client.close();
  });

  it('records arguments the endpoint refuses itself (over 1 MiB) as denied, without reaching an upstream', async () => {
    const before = upstream.calls.length;
    const args = { text: `${SECRET_ARGUMENT}${'x'.repeat(1024 * 1024)}` };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: args } });
    const answer = await post(gw, `${MCP}/tools`, body, { ...admin(), 'mcp-protocol-version': '2025-11-25' });
    assert.equal(answer.json?.error?.code, -32602, answer.text.slice(0, 300));
    assert.equal(upstream.calls.length, before);
    const record = await newest();
    assert.deepEqual([record.status, record.server, record.tool, record.resultBytes], ['denied', 'tools', 'echo', null]);
    assert.equal(record.argumentsBytes, Buffer.byteLength(JSON.stringify(args)));
    assert.equal(record.argumentsSha256, createHash('sha256').update(JSON.stringify(args)).digest('hex'));
  });

  it('filters by server, tool and time, and pages with limit and after', async () => {
    const all = (await calls()).body.data as CallRecord[];
    assert.ok(all.length >= 7, `${all.length} records`);
    const ids = all.map((r) => r.id);
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
    const hang = (await calls('?tool=hang')).body.data as CallRecord[];
    assert.deepEqual(
      hang.map((r) => r.status),
      ['cancelled', 'timeout'],
    );
    assert.ok(((await calls('?server=tools')).body.data as CallRecord[]).every((r) => r.server === 'tools'));
    assert.deepEqual((await calls('?server=other')).body.data, []);
    assert.deepEqual((await calls(`?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body.data, []);
    assert.equal((await calls(`?to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body.data.length, all.length);

    const first = await calls('?limit=2');
    assert.deepEqual(
      first.body.data.map((r: CallRecord) => r.id),
      ids.slice(0, 2),
    );
    const second = await calls(`?limit=2&after=${first.body.next}`);
    assert.deepEqual(
      second.body.data.map((r: CallRecord) => r.id),
      ids.slice(2, 4),
    );
    assert.equal((await calls(`?limit=${all.length}`)).body.next, null);

    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=x', 'limit'],
      ['?from=yesterday', 'from'],
      ['?to=2026-13-45T99:00:00Z', 'to'],
      ['?after=key_nope', 'after'],
    ]) {
      const answer = await calls(query);
      assert.equal(answer.status, 400, `${query}: ${answer.text}`);
      assert.equal(answer.body.errors[0].field, field);
    }
  });

  it("is for tenant admins only, and shows no other tenant's calls", async () => {
    assert.equal((await gw.request('GET', '/api/llm/v1/mcp/calls')).status, 401);
    assert.equal((await calls('', world.a.member.token)).status, 403);
    assert.equal((await gw.request('GET', '/api/llm/v1/mcp/calls', { apiKey: world.a.key.key })).status, 403);
    const ofB = await calls('', world.b.admin.token);
    assert.equal(ofB.status, 200);
    assert.deepEqual(ofB.body, { data: [], next: null });
  });

  it('never answered argument or result content', () => {
    for (const text of texts) assert.ok(!text.includes(SECRET_ARGUMENT));
  });
});
