// The rules of the runs API: whose runs a caller reaches (the owner's only: another
// tenant's or another person's ids are 404 on every run route, no credential is 401),
// what input is refused (400 naming the field, nothing stored), and what a run is
// made of (instructions, additional instructions and messages, limits, metadata, the
// poll hint, the stored events).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver } from './chat-support.js';
import { assistantMessages, BASE, deltaText, names, postStream, runReaches, textOf } from './thread-runs-support.js';

const MODEL = 'rules-model';

describe('thread run rules', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let client: OpenAI;
  let assistantId: string;
  /** A thread of tenant A's keys with one completed run. */
  let threadId: string;
  let runId: string;
  let stepId: string;

  const sdk = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gw.url}${BASE}`, maxRetries: 0 });
  const call = (method: string, path: string, auth: { apiKey?: string; token?: string }, json?: unknown) =>
    gw.request(method, BASE + path, { ...auth, ...(json !== undefined ? { json } : {}) });
  const lastPrompt = () => fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body;

  before(async () => {
    fake = await startFakeOpenAI({ models: [MODEL] });
    // A small context, so that a long thread has to be trimmed.
    gw = await gatewayOver([fake], { GATEWAY_RAG_CONTEXT_TOKENS: '600' });
    world = await seedWorld(gw, 'run-rules');
    client = sdk(world.a.key.key);
    assistantId = (await client.beta.assistants.create({ model: MODEL, instructions: 'Be kind.', temperature: 0.2 })).id;
    threadId = (await client.beta.threads.create({ messages: [{ role: 'user', content: 'first' }] })).id;
    const run = await client.beta.threads.runs.createAndPoll(threadId, { assistant_id: assistantId });
    runId = run.id;
    stepId = (await client.beta.threads.runs.steps.list(runId, { thread_id: threadId })).data[0]!.id;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  /** Every run route, pointed at tenant A's thread, run and step. */
  const routes = () =>
    [
      ['POST', `/threads/${threadId}/runs`, { assistant_id: assistantId }],
      ['POST', `/threads/${threadId}/runs/stream`, { assistant_id: assistantId }],
      ['GET', `/threads/${threadId}/runs`],
      ['GET', `/threads/${threadId}/runs/${runId}`],
      ['POST', `/threads/${threadId}/runs/${runId}`, { metadata: { x: 'y' } }],
      ['POST', `/threads/${threadId}/runs/${runId}/cancel`],
      ['GET', `/threads/${threadId}/runs/${runId}/steps`],
      ['GET', `/threads/${threadId}/runs/${runId}/steps/${stepId}`],
    ] as [string, string, unknown?][];

  it('another tenant’s key, and another owner in the same tenant (member, admin), get 404 on every run route', async () => {
    const others = {
      'tenant B key': { apiKey: world.b.key.key },
      'A member': { token: world.a.member.token },
      'A admin': { token: world.a.admin.token },
    };
    for (const [who, auth] of Object.entries(others)) {
      for (const [method, path, json] of routes()) {
        const response = await call(method, path, auth, json);
        assert.equal(response.status, 404, `${who}: ${method} ${path} → ${response.status} ${response.text}`);
      }
    }
    // Nothing changed for the owner.
    const run = await client.beta.threads.runs.retrieve(runId, { thread_id: threadId });
    assert.deepEqual(run.metadata, {});
    assert.equal((await client.beta.threads.runs.list(threadId)).data.length, 1);
  });

  it('another tenant’s or owner’s assistant_id is a 404 on both creates, and nothing is created', async () => {
    const bClient = sdk(world.b.key.key);
    const bThread = (await bClient.beta.threads.create({ messages: [{ role: 'user', content: 'b' }] })).id;
    const refused = await call('POST', `/threads/${bThread}/runs`, { apiKey: world.b.key.key }, { assistant_id: assistantId });
    assert.equal(refused.status, 404, refused.text);
    assert.equal(refused.body.detail, `No assistant found with id '${assistantId}'.`);
    assert.equal((await bClient.beta.threads.runs.list(bThread)).data.length, 0);
    const threadCount = async () => (await call('GET', '/threads?limit=100', { apiKey: world.b.key.key })).body.data.length;
    const threadsBefore = await threadCount();
    const createAndRun = await call('POST', '/threads/runs', { apiKey: world.b.key.key }, { assistant_id: assistantId, thread: {} });
    assert.equal(createAndRun.status, 404);
    assert.equal(await threadCount(), threadsBefore, 'no thread was created');
    // A's member (a person: another owner) cannot use the keys' assistant either.
    const member = await call('POST', '/threads/runs', { token: world.a.member.token }, { assistant_id: assistantId });
    assert.equal(member.status, 404);
    // An id of another kind, or of a run of another thread, is a 404 too.
    const otherThread = (await client.beta.threads.create()).id;
    assert.equal((await call('GET', `/threads/${otherThread}/runs/${runId}`, { apiKey: world.a.key.key })).status, 404);
    assert.equal((await call('GET', `/threads/${threadId}/runs/${threadId}`, { apiKey: world.a.key.key })).status, 404);
    assert.equal((await call('GET', `/threads/${threadId}/runs/${runId}/steps/step_nope`, { apiKey: world.a.key.key })).status, 404);
  });

  it('answers 401 on every run route without a credential', async () => {
    for (const [method, path, json] of [
      ...routes(),
      ['POST', '/threads/runs', { assistant_id: assistantId }] as [string, string, unknown],
    ]) {
      const response = await call(method, path, {}, json);
      assert.equal(response.status, 401, `${method} ${path}`);
    }
  });

  it('refuses malformed input and unsupported fields with a 400 naming the field; nothing is stored', async () => {
    const cases: [unknown, string][] = [
      [{}, 'assistant_id'],
      [{ assistant_id: assistantId, max_tokens: 0 }, 'max_tokens'],
      [{ assistant_id: assistantId, max_completion_tokens: 9000 }, 'max_completion_tokens'],
      [{ assistant_id: assistantId, max_tokens: 10, max_completion_tokens: 20 }, 'max_tokens'],
      [{ assistant_id: assistantId, temperature: 2.5 }, 'temperature'],
      [{ assistant_id: assistantId, tools: [{ type: 'file_search' }] }, 'tools'],
      [{ assistant_id: assistantId, tool_choice: 'required' }, 'tool_choice'],
      [{ assistant_id: assistantId, response_format: { type: 'json_object' } }, 'response_format'],
      [{ assistant_id: assistantId, top_p: 0.5 }, 'top_p'],
      [{ assistant_id: assistantId, truncation_strategy: { type: 'last_messages', last_messages: 2 } }, 'truncation_strategy'],
      [{ assistant_id: assistantId, metadata: { k: 5 } }, 'metadata'],
      [
        { assistant_id: assistantId, additional_messages: [{ role: 'user', content: [{ type: 'image_url' }] }] },
        'additional_messages[0].content[0].type',
      ],
      [{ assistant_id: assistantId, workspace_ids: 'ws_1' }, 'workspace_ids'],
    ];
    for (const [json, field] of cases) {
      const response = await call('POST', `/threads/${threadId}/runs`, { apiKey: world.a.key.key }, json);
      assert.equal(response.status, 400, `${JSON.stringify(json)} → ${response.status} ${response.text}`);
      assert.ok(response.text.includes(field), `${JSON.stringify(json)} names ${field}: ${response.text}`);
    }
    const unknownModel = await call(
      'POST',
      `/threads/${threadId}/runs`,
      { apiKey: world.a.key.key },
      { assistant_id: assistantId, model: 'nope' },
    );
    assert.equal(unknownModel.status, 400);
    const notJson = await gw.request('POST', `${BASE}/threads/${threadId}/runs`, {
      apiKey: world.a.key.key,
      headers: { 'content-type': 'application/json' },
      body: '{"assistant_id":',
    });
    assert.equal(notJson.status, 400);
    assert.equal((await call('GET', `/threads/${threadId}/runs?limit=0`, { apiKey: world.a.key.key })).status, 400);
    assert.equal((await client.beta.threads.runs.list(threadId)).data.length, 1, 'no run was stored');
    assert.equal((await client.beta.threads.messages.list(threadId)).data.length, 2, 'no message was stored');
  });

  it('instructions replace the assistant’s, additional instructions and messages are added, max_completion_tokens limits', async () => {
    const thread = (await client.beta.threads.create({ messages: [{ role: 'user', content: 'one' }] })).id;
    const run = await client.beta.threads.runs.createAndPoll(thread, {
      assistant_id: assistantId,
      instructions: 'Be terse.',
      additional_instructions: 'Use French.',
      additional_messages: [{ role: 'user', content: [{ type: 'text', text: 'two' }] }],
      max_completion_tokens: 2,
      metadata: { job: '7' },
    });
    assert.equal(run.status, 'incomplete');
    assert.deepEqual(run.incomplete_details, { reason: 'max_completion_tokens' });
    assert.equal(run.instructions, 'Be terse.');
    assert.equal(run.max_completion_tokens, 2);
    assert.equal(run.temperature, 0.2, 'the assistant’s temperature');
    assert.deepEqual(run.metadata, { job: '7' });
    const body = lastPrompt();
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'Be terse.\n\nUse French.' },
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
    ]);
    assert.equal(body.max_tokens ?? body.max_completion_tokens, 2);
    assert.equal(body.temperature, 0.2);
    const [message] = await assistantMessages(client, thread);
    assert.equal(textOf(message!), 'Fake answer');
    assert.equal(message!.status, 'incomplete');
    assert.deepEqual(message!.incomplete_details, { reason: 'max_tokens' });
    // The step was made, its message cut short.
    assert.equal((await client.beta.threads.runs.steps.list(run.id, { thread_id: thread })).data[0]!.status, 'completed');
  });

  it('modifies a run’s metadata; pages runs and steps as OpenAI lists do', async () => {
    const updated = await client.beta.threads.runs.update(runId, { thread_id: threadId, metadata: { stage: 'done' } });
    assert.deepEqual(updated.metadata, { stage: 'done' });
    assert.deepEqual((await client.beta.threads.runs.retrieve(runId, { thread_id: threadId })).metadata, { stage: 'done' });

    const second = await client.beta.threads.runs.createAndPoll(threadId, { assistant_id: assistantId });
    const page = await call('GET', `/threads/${threadId}/runs?limit=1`, { apiKey: world.a.key.key });
    assert.deepEqual(
      { ids: page.body.data.map((r: any) => r.id), first: page.body.first_id, more: page.body.has_more },
      { ids: [second.id], first: second.id, more: true },
    );
    const rest = await call('GET', `/threads/${threadId}/runs?limit=1&after=${second.id}`, { apiKey: world.a.key.key });
    assert.deepEqual(
      rest.body.data.map((r: any) => r.id),
      [runId],
    );
    assert.equal(rest.body.has_more, false);
    const steps = await call('GET', `/threads/${threadId}/runs/${runId}/steps?after=${stepId}`, { apiKey: world.a.key.key });
    assert.deepEqual(steps.body, { object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('an open run carries openai-poll-after-ms (the SDK’s poll interval); an ended one does not', async () => {
    fake.behaviour = { models: [MODEL], tokenDelayMs: 50, repeat: 10 };
    try {
      const thread = (await client.beta.threads.create({ messages: [{ role: 'user', content: 'poll' }] })).id;
      const run = await client.beta.threads.runs.create(thread, { assistant_id: assistantId });
      const open = await call('GET', `/threads/${thread}/runs/${run.id}`, { apiKey: world.a.key.key });
      assert.ok(['queued', 'in_progress'].includes(open.body.status));
      assert.equal(open.headers.get('openai-poll-after-ms'), '500');
      await runReaches(client, thread, run.id, ['completed']);
      const ended = await call('GET', `/threads/${thread}/runs/${run.id}`, { apiKey: world.a.key.key });
      assert.equal(ended.headers.get('openai-poll-after-ms'), null);
    } finally {
      fake.behaviour = { models: [MODEL] };
    }
  });

  it('stores the run’s events with the text pieces joined, in the order they were streamed', async () => {
    const thread = (await client.beta.threads.create({ messages: [{ role: 'user', content: 'store the events' }] })).id;
    const s = await postStream(
      gw,
      `/threads/${thread}/runs`,
      { assistant_id: assistantId, stream: true },
      { 'x-api-key': world.a.key.key },
    );
    const live = await s.end();
    const run = live[0]!.data;
    await eventually('the closing events stored', async () => {
      const rows = await gw.ctx.db.query<{ event: string }>('SELECT event FROM run_events WHERE run_id = $1', [run.id]);
      return rows.some((r) => r.event === 'thread.run.completed');
    });
    const stored = await gw.ctx.db.query<{ event: string; data: any }>(
      'SELECT event, data FROM run_events WHERE run_id = $1 ORDER BY seq',
      [run.id],
    );
    const liveDeltas = live.filter((e) => e.event === 'thread.message.delta').length;
    const storedDeltas = stored.filter((e) => e.event === 'thread.message.delta').length;
    assert.ok(storedDeltas >= 1 && storedDeltas < liveDeltas, `${storedDeltas} stored delta rows for ${liveDeltas} pieces`);
    const collapse = (list: string[]) => list.filter((n, i) => !(n === 'thread.message.delta' && list[i - 1] === n));
    assert.deepEqual(collapse(stored.map((e) => e.event)), collapse(names(live).filter((n) => n !== 'done')));
    assert.equal(deltaText(stored), 'Fake answer to: store the events');
  });

  it('trims a long thread to the context: oldest messages left out first, the instructions and the newest kept', async () => {
    const turns = Array.from({ length: 40 }, (_, i) => ({
      role: (i % 2 === 0 ? 'user' : 'assistant') as 'user' | 'assistant',
      content: `Turn ${i}: ${'several words of filler text here '.repeat(5)}`,
    }));
    turns.push({ role: 'user', content: 'the newest question' });
    const thread = (await client.beta.threads.create({ messages: turns })).id;
    const run = await client.beta.threads.runs.createAndPoll(thread, { assistant_id: assistantId, max_completion_tokens: 100 });
    assert.equal(run.status, 'completed');
    const prompt: { role: string; content: string }[] = lastPrompt().messages;
    assert.deepEqual(prompt[0], { role: 'system', content: 'Be kind.' });
    const kept = prompt.slice(1);
    assert.ok(kept.length > 1 && kept.length < turns.length, `${kept.length} of ${turns.length} messages kept`);
    assert.deepEqual(kept, turns.slice(-kept.length), 'the newest messages, in order');
    assert.ok(prompt.map((m) => m.content).join(' ').length / 4 < 600, 'within the context');
  });
});
