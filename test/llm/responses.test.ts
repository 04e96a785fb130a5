// The Responses API with the official `openai` SDK (6.49), unchanged, against
// <base>/api/llm/v1 over a fake OpenAI engine: create (text and item input,
// instructions, bounds), previous_response_id continuing a conversation (the engine
// sees the earlier turns; a second answer to one response branches), store: false,
// retrieve, delete and input_items paging.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { gatewayOver } from './chat-support.js';
import { newId } from '../../src/platform/ids.js';
import { conversationRepository } from '../../src/areas/llm/history/repository.js';
import { runRepository } from '../../src/areas/llm/runs/repository.js';
import { endAbandonedRuns } from '../../src/areas/llm/runs/recovery.js';

const lastChat = (fake: FakeEngine) => fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body;

describe('responses API with the official openai SDK', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['resp-model'] });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'resp');
    client = new OpenAI({ apiKey: world.a.key.key, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
  });
  after(async () => {
    if (process.env.SHOW_LOGS)
      console.log(
        gw
          .logs()
          .split('\n')
          .filter((l) => l.includes('"level":50'))
          .join('\n'),
      );
    await gw?.close();
    await fake?.close();
  });

  it('creates a response from a string, with instructions, as OpenAI shapes it', async () => {
    const response = await client.responses.create({
      model: 'resp-model',
      input: 'Hello there',
      instructions: 'Be brief.',
      max_output_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
      metadata: { source: 'sdk' },
    });
    assert.match(response.id, /^resp_/);
    assert.equal(response.object, 'response');
    assert.equal(response.status, 'completed');
    assert.equal(response.model, 'resp-model');
    assert.equal(response.output_text, 'Fake answer to: Hello there');
    assert.equal(response.output.length, 1);
    const [message] = response.output;
    assert.equal(message!.type, 'message');
    assert.match(message!.id, /^msg_/);
    assert.deepEqual((message as OpenAI.Responses.ResponseOutputMessage).content, [
      { type: 'output_text', text: 'Fake answer to: Hello there', annotations: [], logprobs: [] },
    ]);
    assert.equal(response.instructions, 'Be brief.');
    assert.deepEqual(response.metadata, { source: 'sdk' });
    assert.equal(response.max_output_tokens, 50);
    assert.equal(response.temperature, 0.2);
    assert.equal(response.top_p, 0.9);
    assert.equal(response.previous_response_id, null);
    assert.equal(response.error, null);
    assert.equal(response.incomplete_details, null);
    assert.ok(response.usage!.input_tokens > 0 && response.usage!.output_tokens === 5);
    assert.equal(response.usage!.total_tokens, response.usage!.input_tokens + response.usage!.output_tokens);
    const sent = lastChat(fake);
    assert.deepEqual(sent.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello there' },
    ]);
    assert.equal(sent.max_tokens, 50);
    assert.equal(sent.temperature, 0.2);
    assert.equal(sent.top_p, 0.9);
  });

  it('takes input items: roles, text and image parts; refuses what it cannot take with a 400 naming the field', async () => {
    const response = await client.responses.create({
      model: 'resp-model',
      input: [
        { role: 'developer', content: 'Answer in English.' },
        { role: 'user', content: 'earlier question' },
        { role: 'assistant', content: 'earlier answer' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is in this image?' },
            { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' },
          ],
        },
      ],
    });
    assert.equal(response.status, 'completed');
    assert.deepEqual(lastChat(fake).messages, [
      { role: 'developer', content: 'Answer in English.' },
      { role: 'user', content: 'earlier question' },
      { role: 'assistant', content: 'earlier answer' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this image?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
        ],
      },
    ]);
    const items = await client.responses.inputItems.list(response.id, { order: 'asc' });
    assert.deepEqual(
      items.data.map((i) => (i.type === 'message' ? [i.role, i.content.map((c) => c.type)] : i.type)),
      [
        ['developer', ['input_text']],
        ['user', ['input_text']],
        ['assistant', ['output_text']],
        ['user', ['input_text', 'input_image']],
      ],
    );

    const refused = async (body: object, field: string) => {
      const res = await gw.request('POST', '/api/llm/v1/responses', { apiKey: world.a.key.key, json: { model: 'resp-model', ...body } });
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.ok(
        res.body.errors?.some((e: { field: string }) => e.field.includes(field)) || res.body.detail.includes(field),
        `${field} in ${res.text}`,
      );
    };
    await refused({}, 'input');
    await refused({ input: [] }, 'input');
    await refused({ input: 42 }, 'input');
    await refused({ input: [{ role: 'robot', content: 'x' }] }, 'input[0].role');
    await refused({ input: [{ role: 'user', content: 7 }] }, 'input[0].content');
    await refused({ input: [{ role: 'user', content: 'a\u0000b' }] }, 'input[0].content');
    await refused({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }, 'input[0].content[0].type');
    await refused({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'ftp://x' }] }] }, 'input[0].content[0].image_url');
    await refused({ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].type');
    await refused({ input: [{ type: 'function_call_output', output: 'x' }] }, 'input[0].call_id');
    await refused({ input: ['text'] }, 'input[0]');
    await refused({ input: 'hi', max_output_tokens: 8193 }, 'max_output_tokens');
    await refused({ input: 'hi', temperature: 3 }, 'temperature');
    await refused({ input: 'hi', top_p: 'high' }, 'top_p');
    await refused({ input: 'hi', store: 'no' }, 'store');
    await refused({ input: 'hi', metadata: { k: 5 } }, 'metadata');
    await refused({ input: 'hi', background: true }, 'background');
    await refused({ input: 'hi', text: { format: { type: 'xml' } } }, 'text.format.type');
    await refused({ input: 'hi', tools: [{ type: 'web_search' }] }, 'tools[0].type');
    await refused({ input: 'hi', tools: [{ type: 'function', name: 'bad name' }] }, 'tools[0].name');
    await refused({ input: 'hi', tool_choice: { type: 'function', name: 'nope' } }, 'tool_choice');
    await refused({ input: 'hi', tools: Array.from({ length: 1000 }, (_, i) => ({ type: 'function', name: `f${i}` })) }, 'tools');
    let deep: object = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { x: deep } };
    await refused({ input: 'hi', tools: [{ type: 'function', name: 'deep', parameters: deep }] }, 'tools[0].parameters');
    await refused(
      { input: 'hi', tools: [{ type: 'function', name: 'big', parameters: { description: 'x'.repeat(70_000) } }] },
      'tools[0].parameters',
    );
    await refused({ input: 'hi', previous_response_id: 'resp_x', conversation: 'conv_x' }, 'conversation');
    await refused({ input: 'hi', model: 'no-such-model' }, 'model');
  });

  it('continues a conversation with previous_response_id: the engine sees the earlier turns, not their instructions', async () => {
    const first = await client.responses.create({ model: 'resp-model', input: 'My name is Ada.', instructions: 'First rules.' });
    const second = await client.responses.create({ model: 'resp-model', input: 'What is my name?', previous_response_id: first.id });
    assert.equal(second.previous_response_id, first.id);
    assert.deepEqual(lastChat(fake).messages, [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Fake answer to: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    // A second answer to the first response is a branch: it does not see the other one.
    await client.responses.create({ model: 'resp-model', input: 'Another question', previous_response_id: first.id });
    assert.deepEqual(
      lastChat(fake).messages.map((m: { content: string }) => m.content),
      ['My name is Ada.', 'Fake answer to: My name is Ada.', 'Another question'],
    );
    // The chain goes on after the branch point as well.
    await client.responses.create({ model: 'resp-model', input: 'And then?', previous_response_id: second.id });
    assert.deepEqual(
      lastChat(fake).messages.map((m: { content: string }) => m.content),
      ['My name is Ada.', 'Fake answer to: My name is Ada.', 'What is my name?', 'Fake answer to: What is my name?', 'And then?'],
    );
    // Unknown, malformed: OpenAI's 404 wording.
    await assert.rejects(
      client.responses.create({ model: 'resp-model', input: 'x', previous_response_id: 'resp_nothing' }),
      OpenAI.NotFoundError,
    );
    const raw = await gw.request('POST', '/api/llm/v1/responses', {
      apiKey: world.a.key.key,
      json: { model: 'resp-model', input: 'x', previous_response_id: 'resp_nothing' },
    });
    assert.equal(raw.body.detail, "Previous response with id 'resp_nothing' not found.");
  });

  it('store: false answers, keeps nothing retrievable, and can still continue a stored response', async () => {
    const stored = await client.responses.create({ model: 'resp-model', input: 'Remember 42.' });
    const ephemeral = await client.responses.create({
      model: 'resp-model',
      input: 'What number?',
      store: false,
      previous_response_id: stored.id,
    });
    assert.equal(ephemeral.status, 'completed');
    assert.equal((ephemeral as unknown as { store: boolean }).store, false);
    assert.deepEqual(
      lastChat(fake).messages.map((m: { content: string }) => m.content),
      ['Remember 42.', 'Fake answer to: Remember 42.', 'What number?'],
    );
    await assert.rejects(client.responses.retrieve(ephemeral.id), OpenAI.NotFoundError);
    await assert.rejects(client.responses.inputItems.list(ephemeral.id), OpenAI.NotFoundError);
    await assert.rejects(
      client.responses.create({ model: 'resp-model', input: 'x', previous_response_id: ephemeral.id }),
      OpenAI.NotFoundError,
    );
    const rows = await gw.ctx.db.query('SELECT id FROM runs WHERE id = $1', [ephemeral.id]);
    assert.equal(rows.length, 0);
    // The stored response's conversation did not take the ephemeral turn.
    await client.responses.create({ model: 'resp-model', input: 'Next', previous_response_id: stored.id });
    assert.deepEqual(
      lastChat(fake).messages.map((m: { content: string }) => m.content),
      ['Remember 42.', 'Fake answer to: Remember 42.', 'Next'],
    );
  });

  it('store: false leaves nothing even when the process generating it died (recovery deletes it)', async () => {
    const db = gw.ctx.db;
    const conversation = await conversationRepository.insert(db, {
      id: newId('conversation'),
      tenant_id: world.a.tenantId,
      owner: 'keys',
      surface: 'response',
    });
    const run = await runRepository.insert(db, {
      id: newId('response'),
      tenant_id: world.a.tenantId,
      conversation_id: conversation.id,
      owner: 'keys',
      model: 'resp-model',
      params: { store: false } as never,
    });
    await runRepository.start(db, run.id, 'proc_dead', 1);
    await endAbandonedRuns(db, true);
    assert.equal((await db.query('SELECT 1 FROM conversations WHERE id = $1', [conversation.id])).length, 0);
    assert.equal((await db.query('SELECT 1 FROM runs WHERE id = $1', [run.id])).length, 0);
  });

  it('retrieves, lists input items page by page, and deletes', async () => {
    const input = Array.from({ length: 5 }, (_, i) => ({ role: 'user' as const, content: `part ${i}` }));
    const created = await client.responses.create({ model: 'resp-model', input });
    const retrieved = await client.responses.retrieve(created.id);
    assert.deepEqual({ ...retrieved, output_text: created.output_text }, created);
    assert.equal(retrieved.output_text, created.output_text);

    const seen: string[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' }))
      seen.push(
        (item as OpenAI.Responses.ResponseInputMessageItem).content[0]!.type === 'input_text'
          ? ((item as any).content[0].text as string)
          : '',
      );
    assert.deepEqual(seen, ['part 0', 'part 1', 'part 2', 'part 3', 'part 4']);
    const newestFirst = await client.responses.inputItems.list(created.id, { limit: 2 });
    assert.deepEqual(
      newestFirst.data.map((i: any) => i.content[0].text),
      ['part 4', 'part 3'],
    );
    assert.equal(newestFirst.has_more, true);
    const before = await gw.request(
      'GET',
      `/api/llm/v1/responses/${created.id}/input_items?limit=2&order=asc&before=${newestFirst.data[1]!.id}`,
      {
        apiKey: world.a.key.key,
      },
    );
    assert.deepEqual(
      before.body.data.map((i: any) => i.content[0].text),
      ['part 1', 'part 2'],
    );
    const badLimit = await gw.request('GET', `/api/llm/v1/responses/${created.id}/input_items?limit=0`, { apiKey: world.a.key.key });
    assert.equal(badLimit.status, 400);
    const badCursor = await gw.request('GET', `/api/llm/v1/responses/${created.id}/input_items?after=zzz`, { apiKey: world.a.key.key });
    assert.equal(badCursor.status, 400);

    await client.responses.delete(created.id);
    const deletedAgain = await client.responses.create({ model: 'resp-model', input: 'to delete' });
    const raw = await gw.request('DELETE', `/api/llm/v1/responses/${deletedAgain.id}`, { apiKey: world.a.key.key });
    assert.deepEqual(raw.body, { id: deletedAgain.id, object: 'response', deleted: true });
    const again = await gw.request('DELETE', `/api/llm/v1/responses/${created.id}`, { apiKey: world.a.key.key });
    assert.equal(again.status, 404);
    assert.equal(again.body.detail, `Response with id '${created.id}' not found.`);
    await assert.rejects(client.responses.retrieve(created.id), OpenAI.NotFoundError);
  });
});
