// The MCP endpoint with the official SDK client in both protocol eras, against the
// real gateway and a fake ToolSource in place of the registry: tool names, results
// and tool failures passed through, unknown and ungranted tools, tenant isolation.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError } from '@modelcontextprotocol/client';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { connectClient, ERAS, FakeToolSource, MCP, post } from './mcp-endpoint-support.js';

describe('MCP endpoint: tools', () => {
  let gw: TestGateway;
  let world: World;
  const source = new FakeToolSource();
  const longTool = 'a_tool_whose_name_is_far_longer_than_any_model_provider_accepts_for_a_function';
  const image = { type: 'image' as const, data: Buffer.from('not really a png').toString('base64'), mimeType: 'image/png' };

  before(async () => {
    gw = await startGateway();
    world = await seedWorld(gw, 'mcp-endpoint');
    const a = world.a.tenantId;
    source
      .add(a, 'github', {
        name: 'search_issues',
        description: 'Search issues',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      })
      .add(a, 'github', { name: 'get.file' })
      .add(a, 'jira', { name: longTool })
      .add(a, 'jira', { name: 'picture' }, async () => ({
        content: [{ type: 'text', text: 'a picture' }, image],
        structuredContent: { width: 3, height: 2 },
      }))
      .add(a, 'jira', { name: 'fails' }, async () => ({ content: [{ type: 'text', text: 'no such project' }], isError: true }))
      .add(a, 'jira', { name: 'admin_only' }, undefined, [world.a.admin.id])
      .add(world.b.tenantId, 'github', { name: 'b_secret' });
    gw.ctx.llm.mcpTools = source;
  });
  after(() => gw.close());

  const keyA = () => ({ 'x-api-key': world.a.key.key });

  for (const era of ERAS) {
    describe(`era: ${era}`, () => {
      it('lists every granted tool of every server as {server}_{tool}, held to 64 characters of [A-Za-z0-9_-]', async () => {
        const client = await connectClient(gw, MCP, keyA(), era);
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        assert.equal(names.length, 5, names.join(', '));
        assert.ok(names.includes('github_search_issues'));
        assert.ok(names.includes('jira_picture'));
        assert.ok(!names.includes('jira_admin_only'), 'a tool granted to another caller is not listed');
        for (const name of names) assert.match(name, /^[A-Za-z0-9_-]{1,64}$/);
        // Changed characters and long names end in a stable hash of server and tool.
        const dotted = names.find((n) => n.startsWith('github_get_file'))!;
        assert.match(dotted, /^github_get_file_[0-9a-f]{8}$/);
        const long = names.find((n) => n.startsWith('jira_a_tool'))!;
        assert.equal(long.length, 64);
        assert.match(long, /_[0-9a-f]{8}$/);
        // The definition passes through under its new name.
        const search = tools.find((t) => t.name === 'github_search_issues')!;
        assert.equal(search.description, 'Search issues');
        assert.deepEqual(search.inputSchema, { type: 'object', properties: { q: { type: 'string' } } });
        // The same names on the next listing (another fresh server instance).
        assert.deepEqual(
          (await client.listTools()).tools.map((t) => t.name),
          names,
        );
        await client.close();
      });

      it("lists one server's tools under their own names on /mcp/{serverName}", async () => {
        const client = await connectClient(gw, `${MCP}/github`, keyA(), era);
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['get.file', 'search_issues']);
        const result = await client.callTool({ name: 'get.file', arguments: { path: 'README.md' } });
        assert.deepEqual(result.content, [{ type: 'text', text: '{"path":"README.md"}' }]);
        await client.close();
      });

      it('passes results through intact: text, image and structuredContent', async () => {
        const client = await connectClient(gw, MCP, keyA(), era);
        const result = await client.callTool({ name: 'jira_picture', arguments: {} });
        assert.deepEqual(result.content, [{ type: 'text', text: 'a picture' }, image]);
        assert.deepEqual(result.structuredContent, { width: 3, height: 2 });
        assert.equal(result.isError, undefined);
        // Arguments reach the source as the client sent them, on the tool's own name.
        const before = source.calls.length;
        const long = (await client.listTools()).tools.find((t) => t.name.startsWith('jira_a_tool'))!;
        const args = { nested: { list: [1, 'two', null, { three: true }] }, unicode: 'é ✓' };
        const echoed = await client.callTool({ name: long.name, arguments: args });
        assert.deepEqual(JSON.parse((echoed.content as { text: string }[])[0]!.text), args);
        assert.equal(source.calls.length, before + 1);
        assert.equal(source.calls.at(-1)!.tool.name, longTool);
        assert.equal(source.calls.at(-1)!.principal.subject, world.a.key.id);
        await client.close();
      });

      it("passes a tool's own failure through as isError: true", async () => {
        const client = await connectClient(gw, MCP, keyA(), era);
        const result = await client.callTool({ name: 'jira_fails', arguments: {} });
        assert.equal(result.isError, true);
        assert.deepEqual(result.content, [{ type: 'text', text: 'no such project' }]);
        await client.close();
      });

      it('answers an unknown or ungranted tool with JSON-RPC -32602, and no call reaches the source', async () => {
        const client = await connectClient(gw, MCP, keyA(), era);
        const before = source.calls.length;
        for (const name of ['github_nope', 'jira_admin_only', 'github_b_secret', 'search_issues']) {
          await assert.rejects(client.callTool({ name, arguments: {} }), (error: unknown) => {
            assert.ok(error instanceof ProtocolError, `${name}: ${String(error)}`);
            assert.equal(error.code, -32602);
            return true;
          });
        }
        assert.equal(source.calls.length, before);
        await client.close();
      });

      it("shows another tenant none of A's tools, and lets it call none", async () => {
        for (const headers of [{ 'x-api-key': world.b.key.key }, { authorization: `Bearer ${world.b.admin.token}` }] as Record<
          string,
          string
        >[]) {
          const client = await connectClient(gw, MCP, headers, era);
          assert.deepEqual(
            (await client.listTools()).tools.map((t) => t.name),
            ['github_b_secret'],
          );
          await assert.rejects(client.callTool({ name: 'github_search_issues', arguments: {} }), { code: -32602 });
          await client.close();
          // A's server by name is not found for B, as a server that does not exist.
          // (A pinned 2026-07-28 client reports the 404 of its discovery as a failed negotiation.)
          await assert.rejects(connectClient(gw, `${MCP}/jira`, headers, era));
          const raw = await post(gw, `${MCP}/jira`, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', headers);
          assert.equal(raw.status, 404);
        }
        assert.ok(source.calls.every((c) => c.principal.tenantId === world.a.tenantId));
      });
    });
  }

  it("gives a user's token the tools granted to that user", async () => {
    const client = await connectClient(gw, MCP, { authorization: `Bearer ${world.a.admin.token}` }, 'auto');
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('jira_admin_only'));
    const result = await client.callTool({ name: 'jira_admin_only', arguments: { x: 1 } });
    assert.deepEqual(result.content, [{ type: 'text', text: '{"x":1}' }]);
    await client.close();
  });

  it('negotiates the era the client asks for: 2026-07-28 by discovery, 2025-11-25 by initialize', async () => {
    for (const [era, expected] of [
      ['auto', 'modern'],
      ['pinned', 'modern'],
      ['legacy', 'legacy'],
    ] as const) {
      const client = await connectClient(gw, MCP, keyA(), era);
      assert.equal(client.getProtocolEra(), expected, era);
      await client.close();
    }
  });
});
