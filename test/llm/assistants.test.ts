// POST/GET /assistants, GET/POST/DELETE /assistants/{id} over plain HTTP: OpenAI's
// assistant object with the tenant's extensions, the model and grounding-scope checks,
// input refused by name (tools, bounds, metadata), paging, and whose an assistant is.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { gatewayOver } from './chat-support.js';

const BASE = '/api/llm/v1';

describe('assistants', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let down: FakeEngine;
  let world: World;
  let key: { apiKey: string };
  let workspaceId: string;
  let collectionId: string;
  let otherWorkspaceId: string;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['asst-model'] });
    down = await startFakeOpenAI({ models: ['down-model'] });
    gw = await gatewayOver([fake, down]);
    world = await seedWorld(gw, 'asst');
    key = { apiKey: world.a.key.key };
    const created = async (path: string, apiKey: string, name: string) => {
      const response = await gw.request('POST', path, { apiKey, json: { name } });
      assert.equal(response.status, 201, response.text);
      return response.body.id as string;
    };
    workspaceId = await created('/api/os/workspaces', world.a.key.key, 'docs');
    collectionId = await created(`/api/os/workspaces/${workspaceId}/collections`, world.a.key.key, 'manuals');
    otherWorkspaceId = await created('/api/os/workspaces', world.b.key.key, 'theirs');
  });
  after(async () => {
    await gw?.close();
    await Promise.all([fake?.close(), down?.close()]);
  });

  const create = (json: unknown, credential: { apiKey?: string; token?: string } = key) =>
    gw.request('POST', `${BASE}/assistants`, { ...credential, json });

  it('creates an assistant in OpenAI shape, with the grounding scope and max_tokens as extensions', async () => {
    const response = await create({
      model: 'asst-model',
      name: 'Helper',
      description: 'Answers from the manuals',
      instructions: 'Be brief.',
      temperature: 0.2,
      max_tokens: 300,
      metadata: { team: 'support' },
      workspace_ids: [workspaceId, workspaceId],
      collection_ids: [collectionId],
      tools: [],
      unknown_field: 'ignored',
    });
    assert.equal(response.status, 200, response.text);
    const assistant = response.body;
    assert.match(assistant.id, /^asst_[0-9A-Z]{26}$/);
    assert.ok(Math.abs(assistant.created_at - Date.now() / 1000) < 60, 'created_at is unix seconds');
    assert.deepEqual(
      { ...assistant, id: undefined, created_at: undefined },
      {
        id: undefined,
        created_at: undefined,
        object: 'assistant',
        name: 'Helper',
        description: 'Answers from the manuals',
        model: 'asst-model',
        instructions: 'Be brief.',
        tools: [],
        tool_resources: {},
        metadata: { team: 'support' },
        temperature: 0.2,
        top_p: null,
        response_format: 'auto',
        workspace_ids: [workspaceId],
        collection_ids: [collectionId],
        max_tokens: 300,
      },
    );
    const read = await gw.request('GET', `${BASE}/assistants/${assistant.id}`, key);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, assistant);
  });

  it('keeps `auto` and the defaults as given', async () => {
    const response = await create({ model: 'auto' });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.model, 'auto');
    assert.equal(response.body.name, null);
    assert.equal(response.body.instructions, null);
    assert.equal(response.body.temperature, null);
    assert.equal(response.body.max_tokens, null);
    assert.deepEqual(response.body.metadata, {});
    assert.deepEqual(response.body.workspace_ids, []);
  });

  it('takes a known model whose node is down (an outage), and refuses an unknown one naming `model`', async () => {
    await down.close();
    await gw.ctx.llm.router.refresh();
    await assert.rejects(
      gw.ctx.llm.router.resolveModel(world.a.tenantId, 'down-model'),
      (error: { status?: number }) => error.status === 503,
    );
    const outage = await create({ model: 'down-model' });
    assert.equal(outage.status, 200, outage.text);
    const unknown = await create({ model: 'no-such-model' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errors[0].field, 'model');
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{}, 'model'],
      [{ model: '' }, 'model'],
      [{ model: 'asst-model', temperature: 2.5 }, 'temperature'],
      [{ model: 'asst-model', temperature: -0.1 }, 'temperature'],
      [{ model: 'asst-model', temperature: '0.5' }, 'temperature'],
      [{ model: 'asst-model', max_tokens: 0 }, 'max_tokens'],
      [{ model: 'asst-model', max_tokens: 8193 }, 'max_tokens'],
      [{ model: 'asst-model', max_tokens: 1.5 }, 'max_tokens'],
      [{ model: 'asst-model', name: 'x'.repeat(257) }, 'name'],
      [{ model: 'asst-model', tools: [{ type: 'code_interpreter' }] }, 'tools'],
      [{ model: 'asst-model', tool_resources: { file_search: { vector_store_ids: ['vs_1'] } } }, 'tool_resources'],
      [{ model: 'asst-model', metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
      [{ model: 'asst-model', metadata: { k: 'v'.repeat(513) } }, 'metadata.k'],
      [{ model: 'asst-model', metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata'],
      [{ model: 'asst-model', metadata: { k: 1 } }, 'metadata.k'],
      [{ model: 'asst-model', workspace_ids: 'ws' }, 'workspace_ids'],
    ];
    for (const [json, field] of cases) {
      const response = await create(json);
      assert.equal(response.status, 400, `${JSON.stringify(json).slice(0, 80)}: ${response.text}`);
      assert.equal(response.body.errors?.[0]?.field, field, `${JSON.stringify(json).slice(0, 80)}: ${response.text}`);
    }
    const tools = await create({ model: 'asst-model', tools: [{ type: 'file_search' }] });
    assert.match(tools.body.detail, /tools are not supported yet/);
  });

  it('takes the bounds themselves: 16 metadata pairs, 64-character keys, 512-character values, temperature 0 and 2', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`${i}`.padEnd(64, 'k'), 'v'.repeat(512)]));
    for (const temperature of [0, 2]) {
      const response = await create({ model: 'asst-model', metadata, temperature, max_tokens: 8192 });
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(response.body.metadata, metadata);
    }
  });

  it("refuses a workspace or collection that is not the tenant's (404), as retrieval does", async () => {
    for (const json of [
      { model: 'asst-model', workspace_ids: [otherWorkspaceId] },
      { model: 'asst-model', workspace_ids: ['ws_01M8000000000000000000000'] },
      { model: 'asst-model', collection_ids: ['col_nope'] },
    ]) {
      const response = await create(json);
      assert.equal(response.status, 404, response.text);
    }
    const rows = await gw.ctx.db.query('SELECT id FROM assistants WHERE grounding::text LIKE $1', [`%${otherWorkspaceId}%`]);
    assert.equal(rows.length, 0);
  });

  it('modifies the fields given, clears with null, keeps the rest, and checks model and scope again', async () => {
    const created = (
      await create({
        model: 'asst-model',
        name: 'Before',
        instructions: 'Old',
        temperature: 1,
        metadata: { a: '1' },
        workspace_ids: [workspaceId],
      })
    ).body;
    const path = `${BASE}/assistants/${created.id}`;
    const modified = await gw.request('POST', path, {
      ...key,
      json: { name: 'After', instructions: null, metadata: { b: '2' }, collection_ids: [collectionId] },
    });
    assert.equal(modified.status, 200, modified.text);
    assert.equal(modified.body.name, 'After');
    assert.equal(modified.body.instructions, null);
    assert.equal(modified.body.temperature, 1);
    assert.equal(modified.body.model, 'asst-model');
    assert.deepEqual(modified.body.metadata, { b: '2' }, 'metadata is replaced, as OpenAI does');
    assert.deepEqual(modified.body.workspace_ids, [workspaceId], 'a scope field left out is kept');
    assert.deepEqual(modified.body.collection_ids, [collectionId]);
    assert.equal(modified.body.created_at, created.created_at);

    const cleared = await gw.request('POST', path, {
      ...key,
      json: { workspace_ids: [], metadata: null, temperature: null, model: 'auto' },
    });
    assert.equal(cleared.status, 200, cleared.text);
    assert.deepEqual(cleared.body.workspace_ids, []);
    assert.deepEqual(cleared.body.metadata, {});
    assert.equal(cleared.body.temperature, null);
    assert.equal(cleared.body.model, 'auto');

    assert.equal((await gw.request('POST', path, { ...key, json: { model: 'no-such-model' } })).status, 400);
    assert.equal((await gw.request('POST', path, { ...key, json: { workspace_ids: [otherWorkspaceId] } })).status, 404);
    assert.equal((await gw.request('POST', path, { ...key, json: { tools: [{ type: 'function' }] } })).status, 400);
    assert.equal((await gw.request('POST', path, { ...key, json: { max_tokens: 9000 } })).status, 400);
    const unchanged = await gw.request('GET', path, key);
    assert.deepEqual(unchanged.body, cleared.body, 'refused changes change nothing');
  });

  it('deletes an assistant: OpenAI answer, then 404 on every route', async () => {
    const { id } = (await create({ model: 'asst-model' })).body;
    const deleted = await gw.request('DELETE', `${BASE}/assistants/${id}`, key);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { id, object: 'assistant.deleted', deleted: true });
    for (const [method, json] of [['GET'], ['POST', { name: 'x' }], ['DELETE']] as const) {
      const response = await gw.request(method, `${BASE}/assistants/${id}`, { ...key, ...(json ? { json } : {}) });
      assert.equal(response.status, 404);
      assert.equal(response.body.detail, `No assistant found with id '${id}'.`);
    }
  });

  it('answers 404 for ids not shaped like an assistant id, without a query', async () => {
    for (const id of ['nope', 'thread_01M8000000000000000000000A', 'asst_lowercase0000000000000000000']) {
      const before = gw.ctx.db.stats.queries;
      const response = await gw.request('GET', `${BASE}/assistants/${id}`, key);
      assert.equal(response.status, 404);
      assert.equal(response.body.detail, `No assistant found with id '${id}'.`);
      assert.equal(gw.ctx.db.stats.queries - before, 0, "no query (the key's validation is cached)");
    }
  });

  it("lists the owner's assistants only, newest first, with OpenAI's paging", async () => {
    const member = { token: world.a.member.token };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create({ model: 'asst-model', name: `p${i}` }, member)).body.id);
    await create({ model: 'asst-model', name: 'the admin' }, { token: world.a.admin.token });

    const all = await gw.request('GET', `${BASE}/assistants`, member);
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.body.data.map((a: { id: string }) => a.id),
      [...ids].reverse(),
    );
    assert.equal(all.body.object, 'list');
    assert.equal(all.body.first_id, ids[4]);
    assert.equal(all.body.last_id, ids[0]);
    assert.equal(all.body.has_more, false);

    const first = await gw.request('GET', `${BASE}/assistants?limit=2&order=asc`, member);
    assert.deepEqual(
      first.body.data.map((a: { id: string }) => a.id),
      ids.slice(0, 2),
    );
    assert.equal(first.body.has_more, true);
    const second = await gw.request('GET', `${BASE}/assistants?limit=2&order=asc&after=${first.body.last_id}`, member);
    assert.deepEqual(
      second.body.data.map((a: { id: string }) => a.id),
      ids.slice(2, 4),
    );
    // `before`: the previous page, the objects just before the cursor, in the asked order.
    const back = await gw.request('GET', `${BASE}/assistants?limit=2&order=asc&before=${ids[4]}`, member);
    assert.deepEqual(
      back.body.data.map((a: { id: string }) => a.id),
      ids.slice(2, 4),
    );
    assert.equal(back.body.has_more, true, 'more before it');
    assert.equal(back.body.first_id, ids[2]);
    const backDesc = await gw.request('GET', `${BASE}/assistants?limit=2&before=${ids[0]}`, member);
    assert.deepEqual(
      backDesc.body.data.map((a: { id: string }) => a.id),
      [ids[2], ids[1]],
      'newest first: the two just newer than the cursor',
    );
    const start = await gw.request('GET', `${BASE}/assistants?limit=3&order=asc&before=${ids[2]}`, member);
    assert.deepEqual(
      start.body.data.map((a: { id: string }) => a.id),
      ids.slice(0, 2),
    );
    assert.equal(start.body.has_more, false);

    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'order=up', 'after=thread_x', 'before=nope']) {
      const response = await gw.request('GET', `${BASE}/assistants?${query}`, member);
      assert.equal(response.status, 400, query);
      assert.equal(response.body.errors[0].field, query.split('=')[0]);
    }
  });
});
