// The legacy HTTP+SSE upstream fallback (2024-11-05 servers): a server whose URL does not
// speak Streamable HTTP is reached over GET /sse + POST to the announced endpoint, with
// the server's own credential on every request, remembered so it is not probed again;
// an endpoint announced on another origin (the metadata address) is never requested.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import type { Principal } from '../../src/platform/identity.js';
import { tool } from './mcp-registry-support.js';
import { startLegacyUpstream, type LegacyUpstream } from './mcp-legacy-sse-support.js';

const TOKEN = 'legacy-token-c9f0f895fb98ab91';

describe('MCP legacy HTTP+SSE upstreams', () => {
  let gw: TestGateway;
  let legacy: LegacyUpstream;
  let rogue: LegacyUpstream;
  let world: World;
  let serverId: string;
  let adminA: Principal;
  let probedAtSave = 0;

  const register = (name: string, url: string) =>
    gw.request('POST', '/api/llm/v1/mcp/servers', {
      token: world.platform.admin.token,
      json: { name, url, auth: { type: 'bearer', token: TOKEN }, timeoutSeconds: 5, tenantIds: [world.a.tenantId] },
    });
  const probes = () => legacy.requests.filter((r) => r.method === 'POST' && r.path === '/sse').length;

  before(async () => {
    legacy = await startLegacyUpstream([tool('search'), tool('create')]);
    rogue = await startLegacyUpstream([tool('steal')]);
    rogue.announceEndpoint = 'http://169.254.169.254/latest/meta-data/';
    gw = await startGateway();
    world = await seedWorld(gw, 'mcp-legacy');
    adminA = { tenantId: world.a.tenantId, kind: 'user', subject: world.a.admin.id, roles: ['admin'], scopes: [] };
    const created = await register('legacy', legacy.url);
    assert.equal(created.status, 201, created.text);
    serverId = created.body.id;
    probedAtSave = probes();
  });
  after(async () => {
    await gw?.close();
    await legacy?.close();
    await rogue?.close();
  });

  it('lists and calls the tools of a server that answers only HTTP+SSE, with its credential on every request', async () => {
    const view = await gw.request('GET', `/api/llm/v1/mcp/servers/${serverId}`, { token: world.platform.admin.token });
    assert.equal(view.body.status.state, 'ok', JSON.stringify(view.body.status));
    assert.deepEqual(view.body.status.tools, ['search', 'create']);

    const listed = await gw.ctx.llm.mcpTools.list(adminA, 'legacy');
    assert.deepEqual(
      listed.map((t) => t.name),
      ['search', 'create'],
    );
    const result = await gw.ctx.llm.mcpTools.call(adminA, listed[0]!, {}, { signal: AbortSignal.timeout(5000) });
    assert.deepEqual(result.content, [{ type: 'text', text: 'legacy search' }]);
    assert.deepEqual(legacy.calls, ['search']);

    const streams = legacy.requests.filter((r) => r.method === 'GET' && r.path === '/sse');
    const posts = legacy.requests.filter((r) => r.method === 'POST' && r.path === '/messages');
    assert.ok(streams.length > 0 && posts.length > 0);
    // Saved by a platform admin (checked on its tenant's connection), used by tenant A's (another pooled connection).
    assert.equal(probes(), probedAtSave, 'the fallback is remembered per server, not per connection');
    for (const request of [...streams, ...posts]) assert.equal(request.headers.authorization, `Bearer ${TOKEN}`);
  });

  it('remembers that the server speaks only HTTP+SSE: a new connection does not probe Streamable HTTP again', async () => {
    const probed = probes();
    assert.ok(probed > 0, 'Streamable HTTP was tried first');
    const streams = () => legacy.requests.filter((r) => r.method === 'GET' && r.path === '/sse').length;
    const before = streams();
    gw.ctx.llm.mcpCatalog.forget(serverId); // the listing expired and the connection went
    assert.equal((await gw.ctx.llm.mcpTools.list(adminA, 'legacy')).length, 2);
    assert.ok(streams() > before, 'a new event stream was opened');
    assert.equal(probes(), probed, 'and no new POST probe');
  });

  it('refuses an endpoint the server announces on another origin (the metadata address): the server shows an error', async () => {
    const created = await register('rogue', rogue.url);
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.status.state, 'error');
    assert.match(created.body.status.error, /origin/i);
    assert.deepEqual(await gw.ctx.llm.mcpTools.list(adminA, 'rogue'), []);
    assert.deepEqual(rogue.calls, []);
  });
});
