// The MCP endpoint at the HTTP level, as a client that cannot be trusted reaches it:
// bodies that are not JSON, batches, oversized and over-deep arguments (refused before
// any call reaches the tool source), missing credentials, foreign origins, the 2025
// session operations (405), and no session id ever.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { FakeToolSource, MCP, post } from './mcp-endpoint-support.js';
import { MAX_ARGUMENT_BYTES } from '../../src/areas/llm/mcp/endpoint/message-limits.js';

const MODERN = '2026-07-28';
const modernMeta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
const modernHeaders = (method: string, name?: string) => ({
  'mcp-protocol-version': MODERN,
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
});
const call = (id: number, name: string, args: unknown, meta?: object) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } });

/** `{"a":{"a":…1…}}`, `levels` objects deep. */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('MCP endpoint: bad input and refusals', () => {
  let gw: TestGateway;
  let world: World;
  const source = new FakeToolSource();
  let key: Record<string, string>;

  before(async () => {
    gw = await startGateway({ GATEWAY_CORS_ORIGINS: 'https://console.example' });
    world = await seedWorld(gw, 'mcp-input');
    source.add(world.a.tenantId, 'github', { name: 'search' });
    gw.ctx.llm.mcpTools = source;
    key = { 'x-api-key': world.a.key.key };
  });
  after(() => gw.close());

  it('answers a body that is not JSON with JSON-RPC -32700 and HTTP 400, not problem+json', async () => {
    for (const body of ['{"jsonrpc":"2.0",', 'not json at all', '']) {
      const response = await post(gw, MCP, body, key);
      assert.equal(response.status, 400, body);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(response.json.jsonrpc, '2.0');
      assert.equal(response.json.id, null);
      assert.equal(response.json.error.code, -32700);
    }
  });

  it('refuses a JSON-RPC batch (an array), and runs none of it', async () => {
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'github_search', arguments: {} } },
    ]);
    const response = await post(gw, MCP, batch, key);
    assert.equal(response.status, 400);
    assert.equal(response.json.error.code, -32600);
    assert.match(response.json.error.message, /[Bb]atch/);
    assert.equal(source.calls.length, 0);
  });

  it('refuses arguments over 1 MiB or nested deeper than 32 levels, in both eras, before any call reaches the source', async () => {
    const oversized = { text: 'x'.repeat(MAX_ARGUMENT_BYTES) };
    for (const [label, args] of [
      ['over 1 MiB', oversized],
      ['33 levels', nested(33)],
    ] as const) {
      const legacy = await post(gw, MCP, call(7, 'github_search', args), key);
      assert.equal(legacy.status, 200, label);
      assert.deepEqual([legacy.json.id, legacy.json.error.code], [7, -32602], label);
      const modern = await post(gw, MCP, call(8, 'github_search', args, modernMeta), {
        ...key,
        ...modernHeaders('tools/call', 'github_search'),
      });
      assert.deepEqual([modern.json.id, modern.json.error.code], [8, -32602], label);
    }
    // A thousand levels anywhere in the message: refused without being walked by the SDK.
    const deep = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: { cursor: nested(1000) } });
    const refused = await post(gw, MCP, deep, key);
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error.code, -32600);
    assert.equal(source.calls.length, 0, 'no call reached the tool source');
    // 32 levels are accepted and reach it.
    const ok = await post(gw, MCP, call(10, 'github_search', nested(32)), key);
    assert.equal(ok.status, 200);
    assert.match(ok.text, /"result"/);
    assert.equal(source.calls.length, 1);
  });

  it('answers a body over the size limit with 413, as JSON-RPC', async () => {
    const response = await post(gw, MCP, call(1, 'github_search', { text: 'x'.repeat(3 * MAX_ARGUMENT_BYTES) }), key);
    assert.equal(response.status, 413);
    assert.equal(response.json.error.code, -32600);
  });

  it('answers 415 to a body that is not sent as application/json', async () => {
    const response = await post(gw, MCP, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { ...key, 'content-type': 'text/plain' });
    assert.equal(response.status, 415);
    assert.equal(response.json.jsonrpc, '2.0');
  });

  it('answers 401 with WWW-Authenticate: Bearer to a missing or bad credential, on every method', async () => {
    for (const headers of [{}, { 'x-api-key': 'rdk_not-a-real-key' }, { authorization: 'Bearer garbage' }] as Record<string, string>[]) {
      for (const method of ['POST', 'GET', 'DELETE']) {
        for (const path of [MCP, `${MCP}/github`]) {
          const response = await fetch(gw.url + path, {
            method,
            headers: { 'content-type': 'application/json', ...headers },
            ...(method === 'POST' ? { body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' } : {}),
          });
          assert.equal(response.status, 401, `${method} ${path}`);
          assert.equal(response.headers.get('www-authenticate'), 'Bearer', `${method} ${path}`);
        }
      }
    }
  });

  it('answers GET and DELETE with 405 (no session stream, no session to end)', async () => {
    for (const method of ['GET', 'DELETE']) {
      for (const path of [MCP, `${MCP}/github`]) {
        const response = await fetch(gw.url + path, { method, headers: { ...key, accept: 'text/event-stream' } });
        assert.equal(response.status, 405, `${method} ${path}`);
        assert.equal(response.headers.get('allow'), 'POST');
        assert.equal((await response.json()).jsonrpc, '2.0');
      }
    }
  });

  it('mints no Mcp-Session-Id, in either era, and answers a request that carries one as any other', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const legacy = await post(gw, MCP, initialize, key);
    assert.equal(legacy.status, 200);
    assert.equal(legacy.headers.get('mcp-session-id'), null);
    const discover = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: modernMeta } });
    const modern = await post(gw, MCP, discover, { ...key, ...modernHeaders('server/discover') });
    assert.equal(modern.status, 200);
    assert.equal(modern.headers.get('mcp-session-id'), null);
    assert.ok(modern.json.result.supportedVersions.includes(MODERN));
    const list = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    const stale = await post(gw, MCP, list, { ...key, 'mcp-session-id': 'from-another-replica', 'mcp-protocol-version': '2025-11-25' });
    assert.equal(stale.status, 200);
    assert.match(stale.text, /github_search/);
  });

  it('acknowledges a notification with 202 and no body', async () => {
    const response = await post(gw, MCP, '{"jsonrpc":"2.0","method":"notifications/initialized"}', key);
    assert.equal(response.status, 202);
    assert.equal(response.text, '');
  });

  it('marks 2026-07-28 lists private with a ttlMs, and checks Mcp-Method/Mcp-Name against the body', async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: modernMeta } });
    const listed = await post(gw, MCP, list, { ...key, ...modernHeaders('tools/list') });
    assert.equal(listed.json.result.cacheScope, 'private');
    assert.equal(typeof listed.json.result.ttlMs, 'number');
    const mismatch = await post(gw, MCP, call(2, 'github_search', {}, modernMeta), {
      ...key,
      ...modernHeaders('tools/call', 'github_other'),
    });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.json.error.code, -32020);
    const wrongMethod = await post(gw, MCP, list, { ...key, ...modernHeaders('tools/call', 'github_search') });
    assert.equal(wrongMethod.status, 400);
    assert.equal(wrongMethod.json.error.code, -32020);
  });

  it('answers an unknown method with -32601', async () => {
    const legacy = await post(gw, MCP, '{"jsonrpc":"2.0","id":1,"method":"tools/explode"}', key);
    assert.match(legacy.text, /-32601/);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/explode', params: { _meta: modernMeta } });
    const modern = await post(gw, MCP, body, { ...key, ...modernHeaders('tools/explode') });
    assert.equal(modern.json.error.code, -32601);
  });

  it('refuses a browser origin CORS does not allow with 403, and serves an allowed one', async () => {
    const list = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
    const foreign = await post(gw, MCP, list, { ...key, origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);
    const allowed = await post(gw, MCP, list, { ...key, origin: 'https://console.example' });
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://console.example');
  });

  it("refuses a server name that is no slug with 400, and answers an unknown server and another tenant's alike: 404", async () => {
    const list = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
    const bad = await post(gw, `${MCP}/Not_A_Slug`, list, key);
    assert.equal(bad.status, 400);
    const foreign = await post(gw, `${MCP}/github`, list, { 'x-api-key': world.b.key.key });
    const unknown = await post(gw, `${MCP}/no-such-server`, list, { 'x-api-key': world.b.key.key });
    for (const answer of [foreign, unknown]) {
      assert.equal(answer.status, 404, answer.text);
      assert.equal(answer.json?.id, 1);
      assert.doesNotMatch(answer.text, /search/);
    }
    assert.equal(foreign.json?.error?.code, unknown.json?.error?.code);
    assert.equal((await post(gw, `${MCP}/github`, list, key)).status, 200);
  });
});
