// The persisted chat as a signed-in person uses it (spec 2.7): a turn as JSON, the
// conversation kept and continued with its history, its title, the list newest first
// with paging, its messages paged, rename and delete, and grounding on this surface.
// Streaming, failures and the owner rule have files of their own (conversations-*.test.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver, usageRows } from './chat-support.js';
import { CHAT, CONVERSATIONS, enginePrompts, storedItems, storedRun, storeRows } from './conversations-support.js';

const HANDBOOK = `# Employee Handbook

## Annual leave

Every employee receives twenty-five days of paid annual leave per calendar year.
Unused leave may be carried over until the end of March of the following year.
`;

describe('persisted chat: conversations', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let token: string;

  const chat = (json: Record<string, unknown>, as = token) =>
    gw.request('POST', CHAT, { token: as, json: { model: 'conv-model', ...json } });
  const get = (path: string, as = token) => gw.request('GET', path, { token: as });

  before(async () => {
    fake = await startFakeOpenAI({ models: ['conv-model', 'other-model'] });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'conv');
    token = world.a.member.token;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('starts a conversation: the answer in its shape, both messages stored, a title made from the first message', async () => {
    const message =
      '  \n  What is the capital of France? I need it for a quiz that my whole family plays every Sunday evening after dinner.\nSecond line.';
    const response = await chat({ message });
    assert.equal(response.status, 200, response.text);
    const body = response.body;
    assert.match(body.conversationId, /^conv_[0-9A-Z]{26}$/);
    assert.match(body.messageId, /^msg_[0-9A-Z]{26}$/);
    assert.deepEqual(body.message, { role: 'assistant', content: `Fake answer to: ${message.trim()}` });
    assert.equal(body.model, 'conv-model');
    assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
    assert.ok(body.usage.completion_tokens > 0);
    assert.equal(body.rag_snippets, null);
    assert.equal(body.rag_active, false);
    assert.equal(body.rag_status, 'inactive');
    assert.equal(body.finish_reason, 'stop');
    assert.ok(Math.abs(Date.parse(body.createdAt) - Date.now()) < 60_000);

    // The engine got the defaults of chat/completions and the one message.
    const last = fake.requests.at(-1)!.body;
    assert.equal(last.max_tokens, 1024);
    assert.equal(last.temperature, 0.7);
    assert.deepEqual(last.messages, [{ role: 'user', content: message }]);

    const read = await get(`${CONVERSATIONS}/${body.conversationId}`);
    assert.equal(read.status, 200, read.text);
    // First non-blank line, trimmed, cut at a word with an ellipsis: at most 80 characters.
    assert.equal(read.body.title, 'What is the capital of France? I need it for a quiz that my whole family plays…');
    assert.ok([...read.body.title].length <= 80);
    assert.equal(read.body.messageCount, 2);
    const [user, assistant] = read.body.messages.data;
    assert.match(user.id, /^msg_/);
    assert.deepEqual([user.role, user.content, user.status], ['user', message, 'completed']);
    assert.equal(assistant.id, body.messageId);
    assert.equal(assistant.role, 'assistant');
    assert.equal(assistant.content, body.message.content);
    assert.equal(assistant.status, 'completed');
    assert.equal(assistant.model, 'conv-model');
    assert.deepEqual(assistant.usage, body.usage);
    assert.equal(assistant.createdAt, body.createdAt);
    assert.ok(assistant.completedAt);
    assert.equal(assistant.incompleteReason, undefined);
    assert.equal(assistant.rag_status, undefined, 'an ungrounded turn carries no rag fields');
    assert.equal(read.body.messages.next, null);

    // The turn is one completed run, and its usage is recorded under `chat`.
    const [runId] = (await storedItems(gw, body.conversationId)).filter((i) => i.role === 'assistant').map((i) => i.run_id);
    const run = await storedRun(gw, runId);
    assert.equal(run.status, 'completed');
    assert.equal(run.message_id, body.messageId);
    assert.equal(run.owner, world.a.member.id);
    await eventually('the usage record', async () =>
      (await usageRows(gw, world.a.tenantId)).some(
        (r) => r.endpoint === 'chat' && r.status === 'ok' && r.principal_id === world.a.member.id,
      ),
    );
  });

  it('continues a conversation: the engine sees the whole history, oldest first, then the new turn', async () => {
    const first = await chat({ message: 'My name is Ada.' });
    const conversationId = first.body.conversationId;
    const second = await chat({ message: 'What is my name?', conversationId, model: 'other-model', max_tokens: 50, temperature: 0 });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.conversationId, conversationId);
    assert.equal(second.body.model, 'other-model');
    const third = await chat({ message: 'Thanks!', conversationId });
    assert.equal(third.status, 200, third.text);

    const prompts = enginePrompts(fake);
    assert.deepEqual(prompts.at(-2), [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Fake answer to: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    assert.deepEqual(prompts.at(-1), [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Fake answer to: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
      { role: 'assistant', content: 'Fake answer to: What is my name?' },
      { role: 'user', content: 'Thanks!' },
    ]);
    const secondRequest = fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-2)!.body;
    assert.deepEqual([secondRequest.model, secondRequest.max_tokens, secondRequest.temperature], ['other-model', 50, 0]);

    const read = await get(`${CONVERSATIONS}/${conversationId}`);
    assert.equal(read.body.title, 'My name is Ada.', 'the title stays the first turn’s');
    assert.deepEqual(
      read.body.messages.data.map((m: any) => [m.role, m.content, m.model ?? null]),
      [
        ['user', 'My name is Ada.', null],
        ['assistant', 'Fake answer to: My name is Ada.', 'conv-model'],
        ['user', 'What is my name?', null],
        ['assistant', 'Fake answer to: What is my name?', 'other-model'],
        ['user', 'Thanks!', null],
        ['assistant', 'Fake answer to: Thanks!', 'conv-model'],
      ],
    );
  });

  it('stores an answer cut at max_tokens as incomplete, and says so with finish_reason length', async () => {
    const response = await chat({ message: 'one two three four five', max_tokens: 2 });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.finish_reason, 'length');
    assert.equal(response.body.message.content, 'Fake answer');
    const [, assistant] = (await get(`${CONVERSATIONS}/${response.body.conversationId}`)).body.messages.data;
    assert.deepEqual([assistant.status, assistant.incompleteReason, assistant.content], ['incomplete', 'max_tokens', 'Fake answer']);
  });

  it("lists the caller's own conversations, most recently active first, paged with a cursor", async () => {
    const as = world.a.admin.token;
    const ids: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) ids.push((await chat({ message: `list ${n}` }, as)).body.conversationId);
    // Activity, not creation, orders the list: continuing the oldest brings it to the top.
    assert.equal((await chat({ message: 'again', conversationId: ids[0] }, as)).status, 200);
    const expected = [ids[0], ids[4], ids[3], ids[2], ids[1]];

    const seen: string[] = [];
    let next: string | null = null;
    let pages = 0;
    do {
      const page: any = await get(`${CONVERSATIONS}?limit=2${next ? `&after=${next}` : ''}`, as);
      assert.equal(page.status, 200, page.text);
      assert.ok(page.body.data.length <= 2);
      seen.push(...page.body.data.map((c: any) => c.id));
      next = page.body.next;
      pages++;
    } while (next);
    assert.deepEqual(seen, expected);
    assert.equal(pages, 3);
    const all = await get(CONVERSATIONS, as);
    assert.deepEqual(
      all.body.data.map((c: any) => c.id),
      expected,
    );
    assert.equal(all.body.next, null);
    const [top] = all.body.data;
    assert.deepEqual(Object.keys(top).sort(), ['createdAt', 'id', 'messageCount', 'title', 'updatedAt']);
    assert.equal(top.title, 'list 1');
    assert.equal(top.messageCount, 4);
    assert.ok(top.updatedAt >= top.createdAt);
    // Another person's list does not hold them.
    const others = await get(`${CONVERSATIONS}?limit=100`);
    assert.ok(!others.body.data.some((c: any) => ids.includes(c.id)));
  });

  it("pages a conversation's messages oldest first", async () => {
    const conversationId = (await chat({ message: 'page 1' })).body.conversationId;
    await chat({ message: 'page 2', conversationId });
    await chat({ message: 'page 3', conversationId });
    const contents: string[] = [];
    let next: string | null = null;
    do {
      const read: any = await get(`${CONVERSATIONS}/${conversationId}?limit=4${next ? `&after=${next}` : ''}`);
      assert.equal(read.status, 200, read.text);
      assert.equal(read.body.id, conversationId);
      contents.push(...read.body.messages.data.map((m: any) => m.content));
      next = read.body.messages.next;
    } while (next);
    assert.deepEqual(contents, [
      'page 1',
      'Fake answer to: page 1',
      'page 2',
      'Fake answer to: page 2',
      'page 3',
      'Fake answer to: page 3',
    ]);
  });

  it('renames a conversation with PATCH, and deletes it with its messages and runs', async () => {
    const conversationId = (await chat({ message: 'to be renamed' })).body.conversationId;
    const renamed = await gw.request('PATCH', `${CONVERSATIONS}/${conversationId}`, { token, json: { title: 'Trip planning' } });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.id, conversationId);
    assert.equal(renamed.body.title, 'Trip planning');
    assert.equal((await get(`${CONVERSATIONS}/${conversationId}`)).body.title, 'Trip planning');

    const rows = await storeRows(gw);
    const deleted = await gw.request('DELETE', `${CONVERSATIONS}/${conversationId}`, { token });
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal(deleted.text, '');
    assert.deepEqual(await storeRows(gw), { conversations: rows.conversations - 1, items: rows.items - 2, runs: rows.runs - 1 });
    for (const [method, json] of [
      ['GET', undefined],
      ['PATCH', { title: 'again' }],
      ['DELETE', undefined],
    ] as const) {
      const response = await gw.request(method, `${CONVERSATIONS}/${conversationId}`, { token, ...(json ? { json } : {}) });
      assert.equal(response.status, 404, `${method}: ${response.text}`);
    }
    const continued = await chat({ message: 'still there?', conversationId });
    assert.equal(continued.status, 404, continued.text);
    assert.ok(!(await get(`${CONVERSATIONS}?limit=100`)).body.data.some((c: any) => c.id === conversationId));
  });

  describe('grounded', () => {
    let workspaceId: string;

    before(async () => {
      const apiKey = world.a.key.key;
      workspaceId = (await gw.request('POST', '/api/os/workspaces', { apiKey, json: { name: 'Company' } })).body.id;
      const upload = await gw.request('POST', `/api/os/workspaces/${workspaceId}/documents`, {
        apiKey,
        json: { name: 'handbook.md', text: HANDBOOK },
      });
      assert.equal(upload.status, 202, upload.text);
      await eventually(
        'the handbook ready',
        async () => (await gw.request('GET', `/api/os/documents/${upload.body.id}`, { apiKey })).body.status === 'ready',
        60_000,
      );
    });

    it('grounds a turn in the workspace: rag fields in the answer, the sources in the prompt, both stored with the message', async () => {
      const response = await chat({
        message: 'What annual leave days does every employee receive?',
        workspaceIds: [workspaceId],
        max_tokens: 64,
      });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.rag_active, true);
      assert.equal(response.body.rag_status, 'active');
      assert.ok(response.body.rag_snippets.length >= 1);
      assert.match(response.body.rag_snippets[0].content, /twenty-five days/);
      const prompt = enginePrompts(fake).at(-1)!;
      assert.equal(prompt[0]!.role, 'system');
      assert.match(prompt[0]!.content, /twenty-five days/);
      assert.deepEqual(prompt.at(-1), { role: 'user', content: 'What annual leave days does every employee receive?' });

      const read = await get(`${CONVERSATIONS}/${response.body.conversationId}`);
      const [user, assistant] = read.body.messages.data;
      assert.equal(user.rag_status, undefined);
      assert.equal(assistant.rag_active, true);
      assert.equal(assistant.rag_status, 'active');
      assert.deepEqual(assistant.rag_snippets, response.body.rag_snippets);
      // The sources are not part of the history: the next turn retrieves again, or not at all.
      const next = await chat({ message: 'Thanks', conversationId: response.body.conversationId });
      assert.equal(next.status, 200, next.text);
      assert.equal(next.body.rag_status, 'inactive');
      assert.ok(
        !enginePrompts(fake)
          .at(-1)!
          .some((m) => m.role === 'system'),
      );
    });

    it("answers 404 for another tenant's workspace before anything is stored or any engine is asked", async () => {
      const other = (await gw.request('POST', '/api/os/workspaces', { apiKey: world.b.key.key, json: { name: 'Theirs' } })).body.id;
      const rows = await storeRows(gw);
      const calls = fake.chatRequests();
      const response = await chat({ message: 'What is in their documents?', workspaceIds: [other] });
      assert.equal(response.status, 404, response.text);
      assert.deepEqual(await storeRows(gw), rows);
      assert.equal(fake.chatRequests(), calls);
    });
  });
});
