// /threads and /threads/{id}/messages over plain HTTP: OpenAI's thread and message
// objects on the history store, input refused by name, paging, the one-active-run rule
// (400 with OpenAI's wording), deleting while a run writes, and the grounding scope.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver } from './chat-support.js';
import { newId } from '../../src/platform/ids.js';
import type { Principal } from '../../src/platform/identity.js';
import { conversationRepository, itemRepository } from '../../src/areas/llm/history/repository.js';
import { runRepository } from '../../src/areas/llm/runs/repository.js';
import { windowOf } from '../../src/areas/llm/history/trim.js';

const BASE = '/api/llm/v1';
const OWNER = 'keys'; // what the tenant's API keys make belongs to all of its keys (llm/history/owner.ts)

describe('threads and messages', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let key: { apiKey: string };
  let workspaceId: string;
  let otherWorkspaceId: string;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['thread-model'] });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'threads');
    key = { apiKey: world.a.key.key };
    const workspace = async (apiKey: string) => (await gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'w' } })).body.id;
    workspaceId = await workspace(world.a.key.key);
    otherWorkspaceId = await workspace(world.b.key.key);
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  const createThread = async (json: unknown = {}) => {
    const response = await gw.request('POST', `${BASE}/threads`, { ...key, json });
    assert.equal(response.status, 200, response.text);
    return response.body as { id: string; created_at: number; metadata: Record<string, string> };
  };
  const addMessage = (threadId: string, json: unknown) => gw.request('POST', `${BASE}/threads/${threadId}/messages`, { ...key, json });
  const messagesOf = async (threadId: string, query = 'order=asc') => {
    const response = await gw.request('GET', `${BASE}/threads/${threadId}/messages?${query}`, key);
    assert.equal(response.status, 200, response.text);
    return response.body;
  };

  /** A run of the thread that holds its active-run slot, as the runs routes start one. */
  async function activeRun(threadId: string) {
    const run = await runRepository.insert(gw.ctx.db, {
      id: newId('run'),
      tenant_id: world.a.tenantId,
      conversation_id: threadId,
      owner: OWNER,
      model: 'thread-model',
    });
    assert.ok(await conversationRepository.claimActiveRun(gw.ctx.db, threadId, run.id));
    return run;
  }

  it('creates a thread with its first messages, in order, in OpenAI shape', async () => {
    const thread = await createThread({
      metadata: { user: 'u1' },
      messages: [
        { role: 'user', content: 'first', metadata: { n: '1' } },
        { role: 'assistant', content: [{ type: 'text', text: 'second' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'third a' },
            { type: 'text', text: 'third b' },
          ],
          attachments: [],
        },
      ],
    });
    assert.match(thread.id, /^thread_[0-9A-Z]{26}$/);
    assert.deepEqual(thread, {
      id: thread.id,
      object: 'thread',
      created_at: thread.created_at,
      metadata: { user: 'u1' },
      tool_resources: {},
      workspace_ids: [],
      collection_ids: [],
    });
    const list = await messagesOf(thread.id);
    assert.deepEqual(
      list.data.map((m: any) => [m.role, m.content[0].text.value, m.metadata]),
      [
        ['user', 'first', { n: '1' }],
        ['assistant', 'second', {}],
        ['user', 'third a\n\nthird b', {}],
      ],
    );
    const message = list.data[0];
    assert.match(message.id, /^msg_[0-9A-Z]{26}$/);
    assert.deepEqual(message, {
      id: message.id,
      object: 'thread.message',
      created_at: message.created_at,
      thread_id: thread.id,
      status: 'completed',
      incomplete_details: null,
      completed_at: message.created_at,
      incomplete_at: null,
      role: 'user',
      content: [{ type: 'text', text: { value: 'first', annotations: [] } }],
      assistant_id: null,
      run_id: null,
      attachments: [],
      metadata: { n: '1' },
    });
    const read = await gw.request('GET', `${BASE}/threads/${thread.id}`, key);
    assert.deepEqual(read.body, thread);
  });

  it('creates nothing when one of the messages is refused', async () => {
    const before = await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM conversations');
    const response = await gw.request('POST', `${BASE}/threads`, {
      ...key,
      json: {
        messages: [
          { role: 'user', content: 'fine' },
          { role: 'user', content: '   ' },
        ],
      },
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.errors[0].field, 'messages[1].content');
    const after = await gw.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM conversations');
    assert.equal(after[0]!.n, before[0]!.n);
  });

  it('refuses bad messages with 400 naming the field', async () => {
    const thread = await createThread();
    const cases: [unknown, string, RegExp?][] = [
      [{ role: 'system', content: 'x' }, 'role'],
      [{ role: 'tool', content: 'x' }, 'role'],
      [{ content: 'x' }, 'role'],
      [{ role: 'user' }, 'content'],
      [{ role: 'user', content: '' }, 'content', /must not be empty/],
      [{ role: 'user', content: ' \n ' }, 'content', /must not be empty/],
      [{ role: 'user', content: [] }, 'content', /must not be empty/],
      [{ role: 'user', content: 42 }, 'content'],
      [{ role: 'user', content: [{ type: 'image_file', image_file: { file_id: 'file_1' } }] }, 'content[0].type', /not supported yet/],
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'image_url', image_url: { url: 'https://x' } },
          ],
        },
        'content[1].type',
      ],
      [{ role: 'user', content: [{ type: 'text' }] }, 'content[0].text'],
      [{ role: 'user', content: 'x', attachments: [{ file_id: 'file_1', tools: [] }] }, 'attachments', /not supported yet/],
      [{ role: 'user', content: 'x', metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
      [{ role: 'user', content: 'x', metadata: { k: 'v'.repeat(513) } }, 'metadata.k'],
      [{ role: 'user', content: 'x', metadata: { k: true } }, 'metadata.k'],
      [{ role: 'user', content: 'x\u0000y' }, 'content'],
    ];
    for (const [json, field, detail] of cases) {
      const response = await addMessage(thread.id, json);
      assert.equal(response.status, 400, `${JSON.stringify(json)}: ${response.text}`);
      assert.equal(response.body.errors?.[0]?.field, field, `${JSON.stringify(json)}: ${response.text}`);
      if (detail) assert.match(response.body.detail, detail);
    }
    assert.deepEqual((await messagesOf(thread.id)).data, [], 'nothing was added');
  });

  it('refuses bad thread input with 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
      [{ metadata: 'x' }, 'metadata'],
      [{ messages: 'hello' }, 'messages'],
      [{ messages: [{ role: 'bot', content: 'x' }] }, 'messages[0].role'],
      [{ tool_resources: { code_interpreter: { file_ids: ['f'] } } }, 'tool_resources'],
      [{ workspace_ids: [1] }, 'workspace_ids[0]'],
    ];
    for (const [json, field] of cases) {
      const response = await gw.request('POST', `${BASE}/threads`, { ...key, json });
      assert.equal(response.status, 400, `${JSON.stringify(json)}: ${response.text}`);
      assert.equal(response.body.errors?.[0]?.field, field, `${JSON.stringify(json)}: ${response.text}`);
    }
  });

  it("keeps the grounding scope, checked to be the tenant's on create and modify", async () => {
    const thread = await createThread({ workspace_ids: [workspaceId] });
    assert.deepEqual(thread, { ...thread, workspace_ids: [workspaceId], collection_ids: [] });
    for (const json of [{ workspace_ids: [otherWorkspaceId] }, { collection_ids: ['col_01M8000000000000000000000A'] }]) {
      assert.equal((await gw.request('POST', `${BASE}/threads`, { ...key, json })).status, 404);
      assert.equal((await gw.request('POST', `${BASE}/threads/${thread.id}`, { ...key, json })).status, 404);
    }
    const unchanged = await gw.request('GET', `${BASE}/threads/${thread.id}`, key);
    assert.deepEqual(unchanged.body.workspace_ids, [workspaceId]);
    const cleared = await gw.request('POST', `${BASE}/threads/${thread.id}`, { ...key, json: { workspace_ids: [] } });
    assert.deepEqual(cleared.body.workspace_ids, []);
  });

  it('modifies metadata (replaced, null clears) and leaves the rest', async () => {
    const thread = await createThread({ metadata: { a: '1' }, workspace_ids: [workspaceId] });
    const path = `${BASE}/threads/${thread.id}`;
    const modified = await gw.request('POST', path, { ...key, json: { metadata: { b: '2' } } });
    assert.equal(modified.status, 200, modified.text);
    assert.deepEqual(modified.body, { ...thread, metadata: { b: '2' } });
    const same = await gw.request('POST', path, { ...key, json: {} });
    assert.deepEqual(same.body, modified.body);
    const cleared = await gw.request('POST', path, { ...key, json: { metadata: null } });
    assert.deepEqual(cleared.body.metadata, {});
    const refused = await gw.request('POST', path, { ...key, json: { metadata: { k: 'v'.repeat(600) } } });
    assert.equal(refused.status, 400);
  });

  it('retrieves, modifies (metadata only) and deletes a message', async () => {
    const thread = await createThread();
    const created = await addMessage(thread.id, { role: 'user', content: 'hello', metadata: { a: '1' } });
    assert.equal(created.status, 200, created.text);
    const path = `${BASE}/threads/${thread.id}/messages/${created.body.id}`;
    assert.deepEqual((await gw.request('GET', path, key)).body, created.body);
    const modified = await gw.request('POST', path, { ...key, json: { metadata: { b: '2' }, content: 'ignored' } });
    assert.equal(modified.status, 200, modified.text);
    assert.deepEqual(modified.body, { ...created.body, metadata: { b: '2' } });
    const deleted = await gw.request('DELETE', path, key);
    assert.deepEqual(deleted.body, { id: created.body.id, object: 'thread.message.deleted', deleted: true });
    for (const method of ['GET', 'DELETE'] as const) {
      const gone = await gw.request(method, path, key);
      assert.equal(gone.status, 404);
      assert.equal(gone.body.detail, `No message found with id '${created.body.id}'.`);
    }
    // A message of another thread is not found through this one.
    const other = await createThread({ messages: [{ role: 'user', content: 'elsewhere' }] });
    const elsewhere = (await messagesOf(other.id)).data[0].id;
    assert.equal((await gw.request('GET', `${BASE}/threads/${thread.id}/messages/${elsewhere}`, key)).status, 404);
  });

  it('pages messages as OpenAI does: newest first by default, limit, after, before, order', async () => {
    const thread = await createThread();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await addMessage(thread.id, { role: 'user', content: `m${i}` })).body.id);
    const idsOf = (list: any) => list.data.map((m: { id: string }) => m.id);

    const newest = await messagesOf(thread.id, 'limit=3');
    assert.deepEqual(idsOf(newest), [ids[6], ids[5], ids[4]]);
    assert.equal(newest.has_more, true);
    assert.equal(newest.first_id, ids[6]);
    assert.equal(newest.last_id, ids[4]);
    assert.deepEqual(idsOf(await messagesOf(thread.id, `limit=3&after=${ids[4]}`)), [ids[3], ids[2], ids[1]]);
    const last = await messagesOf(thread.id, `limit=3&after=${ids[1]}`);
    assert.deepEqual(idsOf(last), [ids[0]]);
    assert.equal(last.has_more, false);
    assert.deepEqual(idsOf(await messagesOf(thread.id, `limit=2&order=asc&after=${ids[2]}`)), [ids[3], ids[4]]);
    assert.deepEqual(idsOf(await messagesOf(thread.id, `limit=2&order=asc&before=${ids[5]}`)), [ids[3], ids[4]]);
    assert.deepEqual(idsOf(await messagesOf(thread.id, `order=asc&after=${ids[1]}&before=${ids[4]}`)), [ids[2], ids[3]]);
    const empty = await messagesOf(thread.id, `after=${ids[0]}`);
    assert.deepEqual(empty, { object: 'list', data: [], first_id: null, last_id: null, has_more: false });

    for (const query of [
      'limit=0',
      'limit=101',
      'limit=-1',
      'limit=1.5',
      'order=newest',
      'after=nope',
      `before=${thread.id}`,
      'run_id=nope',
    ]) {
      const response = await gw.request('GET', `${BASE}/threads/${thread.id}/messages?${query}`, key);
      assert.equal(response.status, 400, `${query}: ${response.text}`);
      assert.equal(response.body.errors[0].field, query.split('=')[0]);
    }
  });

  it('lists only the messages of one run with run_id', async () => {
    const thread = await createThread({ messages: [{ role: 'user', content: 'question' }] });
    const run = await activeRun(thread.id);
    const answer = await itemRepository.append(gw.ctx.db, {
      id: newId('message'),
      conversation_id: thread.id,
      tenant_id: world.a.tenantId,
      role: 'assistant',
      content: 'answer',
      status: 'completed',
      run_id: run.id,
    });
    const list = await messagesOf(thread.id, `run_id=${run.id}`);
    assert.deepEqual(
      list.data.map((m: { id: string }) => m.id),
      [answer.id],
    );
    assert.equal(list.data[0].run_id, run.id);
    assert.deepEqual((await messagesOf(thread.id, `run_id=${newId('run')}`)).data, []);
  });

  it("refuses a message while a run is active: 400 with OpenAI's wording, and takes it once the run is over", async () => {
    const thread = await createThread({ messages: [{ role: 'user', content: 'question' }] });
    const run = await activeRun(thread.id);
    const refused = await addMessage(thread.id, { role: 'user', content: 'too soon' });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.detail, `Can't add messages to ${thread.id} while a run ${run.id} is active.`);
    assert.equal((await messagesOf(thread.id)).data.length, 1, 'nothing was added');

    await conversationRepository.releaseActiveRun(gw.ctx.db, thread.id, run.id);
    const accepted = await addMessage(thread.id, { role: 'user', content: 'now' });
    assert.equal(accepted.status, 200, accepted.text);
  });

  it('refuses to delete a message a run is still writing (400), and deletes it once finished', async () => {
    const thread = await createThread({ messages: [{ role: 'user', content: 'question' }] });
    const run = await activeRun(thread.id);
    const writing = await itemRepository.append(gw.ctx.db, {
      id: newId('message'),
      conversation_id: thread.id,
      tenant_id: world.a.tenantId,
      role: 'assistant',
      content: 'partial',
      status: 'in_progress',
      run_id: run.id,
    });
    const path = `${BASE}/threads/${thread.id}/messages/${writing.id}`;
    const refused = await gw.request('DELETE', path, key);
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.body.detail, new RegExp(`while run ${run.id} is writing it`));
    const read = await gw.request('GET', path, key);
    assert.equal(read.body.status, 'in_progress');

    await itemRepository.finish(gw.ctx.db, writing.id, { content: 'partial', status: 'incomplete', incompleteReason: 'run_cancelled' });
    const deleted = await gw.request('DELETE', path, key);
    assert.equal(deleted.status, 200, deleted.text);
  });

  it('deletes a thread with its messages and runs', async () => {
    const thread = await createThread({ messages: [{ role: 'user', content: 'question' }] });
    const run = await activeRun(thread.id);
    await conversationRepository.releaseActiveRun(gw.ctx.db, thread.id, run.id);
    const deleted = await gw.request('DELETE', `${BASE}/threads/${thread.id}`, key);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { id: thread.id, object: 'thread.deleted', deleted: true });
    for (const [method, path] of [
      ['GET', `/threads/${thread.id}`],
      ['DELETE', `/threads/${thread.id}`],
      ['GET', `/threads/${thread.id}/messages`],
    ] as const) {
      const response = await gw.request(method, BASE + path, key);
      assert.equal(response.status, 404);
      assert.equal(response.body.detail, `No thread found with id '${thread.id}'.`);
    }
    const left = await gw.ctx.db.query(
      'SELECT id FROM conversation_items WHERE conversation_id = $1 UNION ALL SELECT id FROM runs WHERE id = $2',
      [thread.id, run.id],
    );
    assert.deepEqual(left, []);
  });

  it('stops the run generating in a thread before deleting it', async () => {
    const thread = await createThread({ messages: [{ role: 'user', content: 'question' }] });
    const run = await activeRun(thread.id);
    const item = await itemRepository.append(gw.ctx.db, {
      id: newId('message'),
      conversation_id: thread.id,
      tenant_id: world.a.tenantId,
      role: 'assistant',
      content: '',
      status: 'in_progress',
      run_id: run.id,
    });
    await runRepository.setMessage(gw.ctx.db, run.id, item.id);
    const principal: Principal = { tenantId: world.a.tenantId, kind: 'apiKey', subject: world.a.key.id, roles: [], scopes: [] };
    fake.behaviour.hang = true;
    try {
      const abortedBefore = fake.aborted();
      const execution = gw.ctx.llm.runs.execute({
        runId: run.id,
        messageId: item.id,
        conversationId: thread.id,
        principal,
        correlationId: 'test',
        endpoint: 'threads',
        stream: true,
        model: 'thread-model',
        messages: await windowOf(gw.ctx.db, world.a.tenantId, thread.id, { budgetTokens: 1000 }),
        maxTokens: 100,
        temperature: 0.7,
      });
      await eventually('the engine to be asked', () => fake.inFlight() === 1);
      const deleted = await gw.request('DELETE', `${BASE}/threads/${thread.id}`, key);
      assert.equal(deleted.status, 200, deleted.text);
      let timer: NodeJS.Timeout | undefined;
      const stuck = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the run was not stopped')), 10_000);
      });
      const outcome = await Promise.race([execution, stuck]).finally(() => clearTimeout(timer));
      assert.equal(outcome.stopped, 'cancelled');
      await fake.waitForAbort(abortedBefore + 1, 5000);
      assert.equal(gw.ctx.llm.runs.size, 0);
    } finally {
      fake.behaviour.hang = false;
    }
    assert.equal((await gw.request('GET', `${BASE}/threads/${thread.id}`, key)).status, 404);
  });

  it("lists the caller's threads (an extension) in OpenAI's list shape", async () => {
    const member = { token: world.a.member.token };
    const mine: string[] = [];
    for (let i = 0; i < 3; i++) mine.push((await gw.request('POST', `${BASE}/threads`, { ...member, json: {} })).body.id);
    const list = await gw.request('GET', `${BASE}/threads?limit=2`, member);
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, {
      object: 'list',
      data: [mine[2], mine[1]].map((id) => list.body.data.find((t: { id: string }) => t.id === id)),
      first_id: mine[2],
      last_id: mine[1],
      has_more: true,
    });
    const rest = await gw.request('GET', `${BASE}/threads?limit=2&after=${mine[1]}`, member);
    assert.deepEqual(
      rest.body.data.map((t: { id: string }) => t.id),
      [mine[0]],
    );
    assert.equal(rest.body.has_more, false, "the API key's threads and the admin's are not the member's");
    assert.equal((await gw.request('GET', `${BASE}/threads?order=sideways`, member)).status, 400);
  });

  it('answers 404 for ids not shaped like thread or message ids, without a query', async () => {
    const thread = await createThread();
    for (const path of [
      '/threads/nope',
      `/threads/${newId('assistant')}`,
      '/threads/nope/messages',
      `/threads/${thread.id}/messages/nope`,
      `/threads/${thread.id}/messages/${newId('run')}`,
    ]) {
      const before = gw.ctx.db.stats.queries;
      const response = await gw.request('GET', BASE + path, key);
      assert.equal(response.status, 404, path);
      assert.match(response.body.detail, /^No (thread|message) found with id '[^']+'\.$/);
      if (!path.includes(thread.id)) assert.equal(gw.ctx.db.stats.queries - before, 0, `${path}: no query`);
    }
  });
});
