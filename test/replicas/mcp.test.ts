// The MCP endpoint on two replica processes sharing one PostgreSQL and one Redis, with
// no balancer but the client's own: an SDK client whose fetch sends each request to the
// other replica lists and calls tools in both protocol eras without a session error; a
// notifications/cancelled sent to the replica that is not running the call cancels it
// (the cancel rides Redis); toolCallsPerMinute is one limit for both replicas.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { seedTenant, tokenFor } from '../helpers/gateway.js';
import { createApiKey } from '../gateway/support.js';
import { eventually } from '../helpers/eventually.js';
import { startReplicaSet, type GatewayProcess, type ReplicaSet } from '../helpers/replica-process.js';
import { startMockUpstream, tool, type MockUpstream } from '../llm/mcp-registry-support.js';

const skip =
  !process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL
    ? 'replicas need TEST_DATABASE_URL (PostgreSQL) and TEST_REDIS_URL (.ci/run sets both)'
    : false;

const MCP = '/api/llm/v1/mcp';
const ACCEPT = { accept: 'application/json, text/event-stream' };
const callBody = (id: number, name: string) =>
  ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { text: `call ${id}` } } }) as const;

describe('the MCP endpoint on two replica processes', { skip }, () => {
  let set: ReplicaSet;
  let a: GatewayProcess;
  let b: GatewayProcess;
  let upstream: MockUpstream;
  let tenantId: string;
  let admin: string;

  /** A key of the tenant granted the server's tools, with `limits`. */
  const grantedKey = async (name: string, limits: Record<string, number> = {}) => {
    const { id, key } = await createApiKey(set, tenantId, name);
    const patched = await a.request('PATCH', `/api/auth/tenants/${tenantId}/api-keys/${id}`, {
      token: admin,
      json: { limits, mcp: { allow: ['tools/*'] } },
    });
    assert.equal(patched.status, 200, patched.text);
    return key;
  };

  before(async () => {
    upstream = await startMockUpstream([tool('echo'), tool('hang')]);
    set = await startReplicaSet({ REDIS_URL: process.env.TEST_REDIS_URL!, GATEWAY_LOCAL_ENGINE: 'off' });
    [a, b] = await Promise.all([set.start(), set.start()]);
    const seeded = await seedTenant(set, 'mcp-replicas');
    tenantId = seeded.tenantId;
    admin = await tokenFor(set, seeded.admin.id, tenantId);
    const platform = await seedTenant(set, 'mcp-replicas-platform', ['admin', 'platform_admin']);
    const platformAdmin = await tokenFor(set, platform.admin.id, platform.tenantId);
    await eventually('both coordinated', async () => {
      const [ha, hb] = await Promise.all([a.request('GET', '/health'), b.request('GET', '/health')]);
      return ha.body.coordination.status === 'ok' && hb.body.coordination.status === 'ok';
    });
    const created = await a.request('POST', '/api/llm/v1/mcp/servers', {
      token: platformAdmin,
      json: { name: 'tools', url: upstream.url, timeoutSeconds: 120, tenantIds: [tenantId] },
    });
    assert.equal(created.status, 201, created.text);
  });
  after(async () => {
    await set?.close();
    await upstream?.close();
  });

  for (const era of ['legacy', 'pinned', 'auto'] as const) {
    it(`serves an SDK client whose requests alternate between the replicas (${era} era) with no session error`, async () => {
      const key = await grantedKey(`alternating-${era}`);
      /** The methods each replica was sent. */
      const served: Record<'a' | 'b', string[]> = { a: [], b: [] };
      let turn = 0;
      // The client's own round-robin balancer: each request (handshake included) goes to the other replica.
      const alternate = (url: string | URL, init?: RequestInit) => {
        const replica = turn++ % 2 === 0 ? a : b;
        served[replica === a ? 'a' : 'b'].push(JSON.parse(String(init?.body ?? '{}')).method);
        const target = new URL(url);
        return fetch(replica.url + target.pathname + target.search, init);
      };
      const mode = era === 'pinned' ? { pin: '2026-07-28' as const } : era;
      const client = new Client({ name: 'replicas-test', version: '1.0.0' }, { versionNegotiation: { mode } });
      const errors: unknown[] = [];
      client.onerror = (error) => errors.push(error);
      await client.connect(
        new StreamableHTTPClientTransport(new URL(a.url + MCP), { fetch: alternate, requestInit: { headers: { 'x-api-key': key } } }),
      );
      const calls = upstream.calls.length;
      for (let i = 0; i < 3; i++) {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['tools_echo', 'tools_hang']);
        // Two calls a round: whatever the era's number of other requests, calls land on both replicas.
        for (const text of [`${era} ${i}`, `${era} ${i} again`]) {
          const result = await client.callTool({ name: 'tools_echo', arguments: { text } });
          assert.deepEqual(result.content, [{ type: 'text', text: `echo:${JSON.stringify({ text })}` }]);
        }
      }
      await client.close();
      assert.equal(upstream.calls.length - calls, 6);
      // (A 2026-07-28 client reuses its tool list for ttlMs: fewer requests, still alternating.)
      assert.ok(served.a.includes('tools/call') && served.b.includes('tools/call'), JSON.stringify(served));
      assert.deepEqual(errors, []);
    });
  }

  it('cancels a call running on one replica when its notifications/cancelled reaches the other', async () => {
    const key = await grantedKey('cancelling');
    const headers = { 'x-api-key': key, ...ACCEPT };
    const hangs = upstream.calls.filter((c) => c.name === 'hang').length;
    const cancelled = upstream.cancelled.length;
    const running = a.request('POST', MCP, { headers, json: callBody(77, 'tools_hang') });
    await eventually('the call reached the upstream', async () => upstream.calls.filter((c) => c.name === 'hang').length > hangs);
    // Another credential's cancel with the same id cancels nothing.
    const stranger = await grantedKey('stranger');
    const ignored = await b.request('POST', MCP, {
      headers: { 'x-api-key': stranger, ...ACCEPT },
      json: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77 } },
    });
    assert.equal(ignored.status, 202);
    const cancel = await b.request('POST', MCP, {
      headers,
      json: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77, reason: 'user stopped it' } },
    });
    assert.equal(cancel.status, 202, cancel.text);
    // Replica A answers the call (cancelled: an error, not a result) long before its 120 s timeout.
    const answered = await running;
    assert.equal(answered.status, 200, answered.text);
    assert.match(answered.text, /"error"/);
    await eventually('the upstream saw the cancel', async () => upstream.cancelled.length > cancelled);
    assert.equal(upstream.cancelled.length - cancelled, 1, 'only the cancel of the right credential took effect');
  });

  it('holds toolCallsPerMinute across both replicas: of 2N concurrent calls split over A and B, exactly N run', async () => {
    const N = 4;
    const key = await grantedKey('limited', { toolCallsPerMinute: N });
    const echoes = () => upstream.calls.filter((c) => c.name === 'echo').length;
    const before = echoes();
    const answers = await Promise.all(
      Array.from({ length: 2 * N }, (_, i) =>
        (i % 2 ? b : a).request('POST', MCP, { headers: { 'x-api-key': key, ...ACCEPT }, json: callBody(i + 1, 'tools_echo') }),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [...Array(N).fill(200), ...Array(N).fill(429)], answers.map((r) => `${r.status} ${r.text}`).join('\n'));
    for (const refused of answers.filter((r) => r.status === 429)) {
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.match(refused.text, /key\.toolCallsPerMinute/);
    }
    assert.equal(echoes() - before, N, 'refused calls reached no upstream');
  });
});
