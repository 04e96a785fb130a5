// Prompts and resources through the MCP endpoint, from SDK-built upstreams, under the
// same grants as tools: prompts named `{server}_{prompt}` on /mcp and by their own names
// on /mcp/{server}; resource URIs unchanged, a read on /mcp finding its server from the
// caller's listings (resources, then templates). A key granted `server/prompt` gets that
// prompt and no resource; `server/*` everything of the server; another tenant nothing.
// Whatever is not granted is an error and reaches no upstream.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError, type Client } from '@modelcontextprotocol/client';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { createApiKey } from '../gateway/support.js';
import { connectClient, ERAS, MCP, type Era } from './mcp-endpoint-support.js';
import { startContentUpstream, type ContentUpstream } from './mcp-content-support.js';

describe('MCP prompts and resources', () => {
  let gw: TestGateway;
  let world: World;
  let docs: ContentUpstream;
  let wiki: ContentUpstream;

  const reached = () => docs.gets.length + docs.reads.length + wiki.gets.length + wiki.reads.length;
  const withClient = async <T>(path: string, headers: Record<string, string>, work: (client: Client) => Promise<T>, era: Era = 'auto') => {
    const client = await connectClient(gw, path, headers, era);
    try {
      return await work(client);
    } finally {
      await client.close();
    }
  };
  const admin = () => ({ authorization: `Bearer ${world.a.admin.token}` });
  const keyGranted = async (allow: string[]) => {
    const key = await createApiKey(gw, world.a.tenantId, allow.join(','));
    const set = await gw.request('PATCH', `/api/auth/tenants/${world.a.tenantId}/api-keys/${key.id}`, {
      token: world.a.admin.token,
      json: { mcp: { allow } },
    });
    assert.equal(set.status, 200, set.text);
    return { 'x-api-key': key.key };
  };
  const refused = async (work: Promise<unknown>, code = -32602) =>
    assert.rejects(work, (error: unknown) => {
      assert.ok(error instanceof ProtocolError, String(error));
      assert.equal(error.code, code);
      return true;
    });

  before(async () => {
    docs = await startContentUpstream('docs', {
      prompts: ['greet', 'summarize'],
      resources: ['docs://readme'],
      template: 'docs://pages/{id}',
    });
    wiki = await startContentUpstream('wiki', { prompts: ['greet'], resources: ['wiki://home'] });
    gw = await startGateway();
    world = await seedWorld(gw, 'mcp-content');
    for (const [name, upstream] of [
      ['docs', docs],
      ['wiki', wiki],
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
    await docs?.close();
    await wiki?.close();
  });

  for (const era of ERAS) {
    it(`serves every prompt and resource to a tenant admin on /mcp (${era})`, async () => {
      await withClient(
        MCP,
        admin(),
        async (client) => {
          const capabilities = client.getServerCapabilities();
          assert.ok(capabilities?.prompts && capabilities.resources, 'both capabilities declared');
          const prompts = (await client.listPrompts()).prompts;
          assert.deepEqual(prompts.map((p) => p.name).sort(), ['docs_greet', 'docs_summarize', 'wiki_greet']);
          assert.equal(prompts.find((p) => p.name === 'docs_greet')?.description, 'docs greet');
          const got = await client.getPrompt({ name: 'wiki_greet', arguments: { who: 'ada' } });
          assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'wiki/greet for ada' } }]);

          assert.deepEqual((await client.listResources()).resources.map((r) => r.uri).sort(), ['docs://readme', 'wiki://home']);
          assert.deepEqual(
            (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
            ['docs://pages/{id}'],
          );
          const home = await client.readResource({ uri: 'wiki://home' });
          assert.deepEqual(home.contents, [{ uri: 'wiki://home', mimeType: 'text/plain', text: 'wiki says wiki://home' }]);
          const page = await client.readResource({ uri: 'docs://pages/7' });
          assert.equal((page.contents[0] as { text: string }).text, 'docs says docs://pages/7', 'found through the template');
        },
        era,
      );
    });
  }

  it('answers an unknown prompt and an unknown URI with -32602, reaching no upstream on /mcp', async () => {
    const before = reached();
    await withClient(MCP, admin(), async (client) => {
      await refused(client.getPrompt({ name: 'docs_nope' }));
      await refused(client.getPrompt({ name: 'greet' }), -32602); // unprefixed on the all-servers route
      await refused(client.readResource({ uri: 'other://nothing' }));
    });
    assert.equal(reached(), before);
  });

  it('serves one server under its own names on /mcp/{server}; the upstream decides what a URI is', async () => {
    await withClient(`${MCP}/docs`, admin(), async (client) => {
      assert.deepEqual((await client.listPrompts()).prompts.map((p) => p.name).sort(), ['greet', 'summarize']);
      const got = await client.getPrompt({ name: 'greet', arguments: { who: 'bo' } });
      assert.equal((got.messages[0]!.content as { text: string }).text, 'docs/greet for bo');
      assert.deepEqual(
        (await client.listResources()).resources.map((r) => r.uri),
        ['docs://readme'],
      );
      const readme = await client.readResource({ uri: 'docs://readme' });
      assert.equal((readme.contents[0] as { text: string }).text, 'docs says docs://readme');
      await refused(client.readResource({ uri: 'docs://missing' }));
      assert.equal(docs.reads.at(-1), 'docs://missing', "the upstream's own not-found answer passed through");
    });
  });

  it('a key granted one prompt gets that prompt and no resource; server/* gets all of that server only', async () => {
    const one = await keyGranted(['docs/greet']);
    let before = reached();
    await withClient(MCP, one, async (client) => {
      assert.deepEqual(
        (await client.listPrompts()).prompts.map((p) => p.name),
        ['docs_greet'],
      );
      assert.deepEqual((await client.listResources()).resources, []);
      assert.deepEqual((await client.listResourceTemplates()).resourceTemplates, []);
      await refused(client.getPrompt({ name: 'docs_summarize' }));
      await refused(client.getPrompt({ name: 'wiki_greet' }));
      await refused(client.readResource({ uri: 'docs://readme' }));
    });
    await withClient(`${MCP}/docs`, one, async (client) => {
      await refused(client.readResource({ uri: 'docs://readme' }));
    });
    assert.equal(reached(), before, 'nothing ungranted reached an upstream');
    await withClient(MCP, one, (client) => client.getPrompt({ name: 'docs_greet' }));
    assert.equal(docs.gets.at(-1), 'greet');

    const wikiOnly = await keyGranted(['wiki/*']);
    before = reached();
    await withClient(MCP, wikiOnly, async (client) => {
      assert.deepEqual(
        (await client.listPrompts()).prompts.map((p) => p.name),
        ['wiki_greet'],
      );
      assert.deepEqual(
        (await client.listResources()).resources.map((r) => r.uri),
        ['wiki://home'],
      );
      await refused(client.readResource({ uri: 'docs://readme' }));
      await refused(client.readResource({ uri: 'docs://pages/1' }));
      assert.equal(((await client.readResource({ uri: 'wiki://home' })).contents[0] as { text: string }).text, 'wiki says wiki://home');
    });
    assert.deepEqual(wiki.reads.slice(-1), ['wiki://home']);
    assert.equal(reached(), before + 1, 'only the granted read reached an upstream');
  });

  it("shows another tenant none of A's prompts or resources, and reaches no upstream for it", async () => {
    const before = reached();
    for (const headers of [{ authorization: `Bearer ${world.b.admin.token}` }, { 'x-api-key': world.b.key.key }] as Record<
      string,
      string
    >[]) {
      await withClient(MCP, headers, async (client) => {
        assert.deepEqual((await client.listPrompts()).prompts, []);
        assert.deepEqual((await client.listResources()).resources, []);
        await refused(client.getPrompt({ name: 'docs_greet' }));
        await refused(client.readResource({ uri: 'docs://readme' }));
      });
      // A's server by name is not found for B at all.
      await assert.rejects(
        withClient(`${MCP}/docs`, headers, async () => {}),
        /404|Not found/,
      );
    }
    assert.equal(reached(), before);
  });
});
