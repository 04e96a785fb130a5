// toolCallsPerMinute: a key's and a tenant's MCP tool calls per minute, set with the
// other limits and shown on their records. Through the real endpoint (SDK client, the
// registry, an SDK-built upstream that records what reaches it): a tools/call over the
// limit is HTTP 429 with Retry-After and reaches no upstream, lists are not counted,
// model requests are not limited by it. The Responses API's wrapper (limitToolCalls)
// refuses the same way before its source is reached. Across replicas: test/replicas/mcp.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SdkHttpError } from '@modelcontextprotocol/client';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { createApiKey } from '../gateway/support.js';
import { connectClient, FakeToolSource, MCP, post } from './mcp-endpoint-support.js';
import { startMockUpstream, tool, type MockUpstream } from './mcp-registry-support.js';
import { LocalLimitStore } from '../../src/platform/rate-limits/store.js';
import { ToolCallLimiter } from '../../src/areas/llm/rate-limits/tool-calls.js';
import { limitToolCalls, ToolCallLimited } from '../../src/areas/llm/mcp/limited-tool-source.js';
import type { Principal } from '../../src/platform/identity.js';

const callBody = (id: number, name = 'tools_echo') =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { text: 'hi' } } });

describe('toolCallsPerMinute through the MCP endpoint', () => {
  let gw: TestGateway;
  let world: World;
  let upstream: MockUpstream;

  const keyPath = (keyId: string, tenantId = world.a.tenantId) => `/api/auth/tenants/${tenantId}/api-keys/${keyId}`;
  /** A key of tenant A granted the server's tools, with `limits`. */
  const limitedKey = async (limits: Record<string, unknown>) => {
    const key = await createApiKey(gw, world.a.tenantId, 'mcp-limited');
    const patched = await gw.request('PATCH', keyPath(key.id), {
      token: world.a.admin.token,
      json: { limits, mcp: { allow: ['tools/*'] } },
    });
    assert.equal(patched.status, 200, patched.text);
    return key;
  };
  const setTenantLimits = async (limits: Record<string, unknown> | null) => {
    const patched = await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}`, {
      token: world.platform.admin.token,
      json: { limits },
    });
    assert.equal(patched.status, 200, patched.text);
    return patched;
  };
  const auditCount = async () =>
    (await gw.request('GET', '/api/llm/v1/mcp/calls?limit=500', { token: world.a.admin.token })).body.data.length;

  before(async () => {
    upstream = await startMockUpstream([tool('echo')]);
    gw = await startGateway();
    world = await seedWorld(gw, 'mcp-limits');
    const created = await gw.request('POST', '/api/llm/v1/mcp/servers', {
      token: world.platform.admin.token,
      json: { name: 'tools', url: upstream.url, tenantIds: [world.a.tenantId] },
    });
    assert.equal(created.status, 201, created.text);
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it('is set, shown and validated like the other limits, on keys and tenants', async () => {
    const key = await limitedKey({ toolCallsPerMinute: 5, requestsPerMinute: 7 });
    const record = await gw.request('GET', keyPath(key.id), { token: world.a.admin.token });
    assert.deepEqual(record.body.limits, { toolCallsPerMinute: 5, requestsPerMinute: 7 });
    for (const bad of [0, -1, 1.5, 1_000_001, '3']) {
      const refused = await gw.request('PATCH', keyPath(key.id), {
        token: world.a.admin.token,
        json: { limits: { toolCallsPerMinute: bad } },
      });
      assert.equal(refused.status, 400, `${bad}: ${refused.text}`);
      assert.match(refused.text, /toolCallsPerMinute/);
    }
    const tenant = await setTenantLimits({ toolCallsPerMinute: 1_000_000 });
    assert.deepEqual(tenant.body.limits, { toolCallsPerMinute: 1_000_000 });
    // A tenant's own admin may not set the tenant's limits, this one included.
    const own = await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}`, {
      token: world.a.admin.token,
      json: { limits: { toolCallsPerMinute: 10 } },
    });
    assert.equal(own.status, 403, own.text);
    await setTenantLimits(null);
    // Unchanged by a PATCH that names only the grant.
    await gw.request('PATCH', keyPath(key.id), { token: world.a.admin.token, json: { mcp: { allow: [] } } });
    assert.deepEqual((await gw.request('GET', keyPath(key.id), { token: world.a.admin.token })).body.limits, {
      toolCallsPerMinute: 5,
      requestsPerMinute: 7,
    });
  });

  it("refuses a key's call over its limit with HTTP 429 and Retry-After, before any upstream call; lists are not counted", async () => {
    const { key } = await limitedKey({ toolCallsPerMinute: 3 });
    const headers = { 'x-api-key': key };
    const client = await connectClient(gw, MCP, headers, 'auto');
    const reached = upstream.calls.length;
    const audited = await auditCount();
    for (let i = 0; i < 5; i++) assert.equal((await client.listTools()).tools.length, 1);
    for (let i = 0; i < 3; i++) await client.callTool({ name: 'tools_echo', arguments: { text: `call ${i}` } });
    // What an SDK client sees: the call rejects with an SdkHttpError carrying the status and the body.
    await assert.rejects(client.callTool({ name: 'tools_echo', arguments: { text: 'one too many' } }), (error: unknown) => {
      assert.ok(error instanceof SdkHttpError, String(error));
      assert.equal((error.data as { status: number }).status, 429);
      assert.match(error.message, /key\.toolCallsPerMinute \(3 tool calls per minute\)/);
      return true;
    });
    await client.close();
    // On the wire, both eras: 429, Retry-After, the JSON-RPC error for the request's id.
    for (const version of ['2025-11-25', '2026-07-28']) {
      const refused = await post(gw, MCP, callBody(41), {
        ...headers,
        'mcp-protocol-version': version,
        'mcp-method': 'tools/call',
        'mcp-name': 'tools_echo',
      });
      assert.equal(refused.status, 429, refused.text);
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.equal(refused.headers.get('x-ratelimit-limit'), '3');
      assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
      assert.equal(refused.json.id, 41);
      assert.equal(refused.json.error.code, -32000);
      assert.match(refused.json.error.message, /Retry after \d+ s/);
    }
    assert.equal(upstream.calls.length - reached, 3, 'the refused calls reached no upstream');
    // Refused at the HTTP level, like a 401 or a 413: no audit record (a flood over the limit writes nothing).
    assert.equal((await auditCount()) - audited, 3);
    // An unknown tool counts too: the limit is on calls made, checked before the name is looked up.
    const unknown = await post(gw, MCP, callBody(42, 'tools_nothing'), headers);
    assert.equal(unknown.status, 429);
  });

  it('counts the calls of every key and user of a tenant against the tenant limit', async () => {
    await setTenantLimits({ toolCallsPerMinute: 2 });
    try {
      const one = await limitedKey({});
      const admin = { authorization: `Bearer ${world.a.admin.token}` };
      assert.equal((await post(gw, MCP, callBody(1), { 'x-api-key': one.key })).status, 200);
      assert.equal((await post(gw, MCP, callBody(2), admin)).status, 200);
      const refused = await post(gw, MCP, callBody(3), admin);
      assert.equal(refused.status, 429, refused.text);
      assert.match(refused.json.error.message, /tenant\.toolCallsPerMinute \(2 tool calls per minute\)/);
      // Tenant B is not tenant A.
      const other = await connectClient(gw, MCP, { authorization: `Bearer ${world.b.admin.token}` }, 'auto');
      assert.deepEqual((await other.listTools()).tools, []);
      await other.close();
    } finally {
      await setTenantLimits(null);
    }
    // Raised or cleared: at once (a changed limit starts a fresh bucket).
    assert.equal((await post(gw, MCP, callBody(4), { authorization: `Bearer ${world.a.admin.token}` })).status, 200);
  });

  it('admitted calls carry the X-RateLimit-* headers of the tool-call limit', async () => {
    const { key } = await limitedKey({ toolCallsPerMinute: 10 });
    const answer = await post(gw, MCP, callBody(5), { 'x-api-key': key });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers.get('x-ratelimit-limit'), '10');
    assert.equal(answer.headers.get('x-ratelimit-remaining'), '9');
  });
});

describe('limitToolCalls (the ToolSource other paths, such as the Responses API, run tools through)', () => {
  const principal = (subject: string, toolCallsPerMinute?: number): Principal => ({
    kind: 'apiKey',
    tenantId: 'ten_limits',
    subject,
    roles: [],
    scopes: [],
    ...(toolCallsPerMinute ? { limits: { toolCallsPerMinute } } : {}),
  });

  it("refuses a call over the key's or the tenant's limit before the source is reached, and lists freely", async () => {
    const store = new LocalLimitStore();
    let tenant: { toolCallsPerMinute: number } | null = null;
    const limiter = new ToolCallLimiter({ store, tenantLimits: () => tenant });
    const fake = new FakeToolSource().add('ten_limits', 'tools', { name: 'echo' });
    const source = limitToolCalls(fake, limiter);
    const signal = new AbortController().signal;
    const [echo] = await source.list(principal('key_1', 2));
    for (let i = 0; i < 2; i++) await source.call(principal('key_1', 2), echo!, {}, { signal });
    await assert.rejects(source.call(principal('key_1', 2), echo!, {}, { signal }), (error: unknown) => {
      assert.ok(error instanceof ToolCallLimited);
      assert.equal(error.reason, 'denied');
      assert.ok(error.retryAfterSeconds >= 1);
      assert.match(error.message, /key\.toolCallsPerMinute/);
      return true;
    });
    assert.equal(fake.calls.length, 2);
    // Another key of the tenant has its own bucket, until the tenant's limit applies to both.
    await source.call(principal('key_2', 2), echo!, {}, { signal });
    tenant = { toolCallsPerMinute: 1 };
    await source.call(principal('key_3'), echo!, {}, { signal });
    await assert.rejects(source.call(principal('key_4'), echo!, {}, { signal }), /tenant\.toolCallsPerMinute/);
    assert.equal(fake.calls.length, 4);
    assert.equal((await source.list(principal('key_1', 2))).length, 1);
    store.close();
  });
});
