// Runs of the threads API (OpenAI Assistants v2) with the official openai SDK's beta
// clients, unchanged, against <base>/api/llm/v1, and over plain HTTP for the exact
// stream framing: runs execute in the background and survive their client, stream
// OpenAI's events in order, can be cancelled (the engine call is aborted), refuse a
// second active run with OpenAI's wording, and honour Idempotency-Key.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { seedWorld, type World } from '../helpers/world.js';
import { eventually } from '../helpers/eventually.js';
import { gatewayOver } from './chat-support.js';
import { assistantMessages, BASE, deltaText, names, postStream, runReaches, textOf } from './thread-runs-support.js';

const MODEL = 'run-model';

/** The events of a streamed run on an existing thread, in OpenAI's order. */
const RUN_EVENTS = [
  'thread.run.created',
  'thread.run.queued',
  'thread.run.in_progress',
  'thread.run.step.created',
  'thread.run.step.in_progress',
  'thread.message.created',
  'thread.message.in_progress',
];
const CLOSING_EVENTS = ['thread.message.completed', 'thread.run.step.completed', 'thread.run.completed', 'done'];

describe('thread runs', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let client: OpenAI;
  let assistantId: string;
  const key = () => ({ 'x-api-key': world.a.key.key });

  before(async () => {
    fake = await startFakeOpenAI({ models: [MODEL] });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'runs');
    client = new OpenAI({ apiKey: world.a.key.key, baseURL: `${gw.url}${BASE}`, maxRetries: 0 });
    assistantId = (await client.beta.assistants.create({ model: MODEL, instructions: 'Answer briefly.' })).id;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  const threadWith = async (content: string) => (await client.beta.threads.create({ messages: [{ role: 'user', content }] })).id;
  const slow = (behaviour: FakeEngine['behaviour']) => {
    fake.behaviour = { models: [MODEL], ...behaviour };
  };
  const normal = () => {
    fake.behaviour = { models: [MODEL] };
  };

  it('createAndPoll completes a run; the thread then holds the answer, and the run its usage and one step', async () => {
    const threadId = await threadWith('hello there');
    const run = await client.beta.threads.runs.createAndPoll(threadId, { assistant_id: assistantId });
    assert.equal(run.status, 'completed');
    assert.equal(run.object, 'thread.run');
    assert.equal(run.thread_id, threadId);
    assert.equal(run.assistant_id, assistantId);
    assert.equal(run.model, MODEL);
    assert.equal(run.instructions, 'Answer briefly.');
    assert.ok(run.started_at && run.completed_at && run.completed_at >= run.started_at);
    assert.equal(run.expires_at, null, 'an ended run has no expiry');
    assert.equal(run.last_error, null);
    assert.ok(
      run.usage && run.usage.completion_tokens > 0 && run.usage.total_tokens === run.usage.prompt_tokens + run.usage.completion_tokens,
    );

    const [answer] = await assistantMessages(client, threadId);
    assert.equal(textOf(answer!), 'Fake answer to: hello there');
    assert.equal(answer!.status, 'completed');
    assert.equal(answer!.run_id, run.id);
    assert.equal(answer!.assistant_id, assistantId);
    // What the engine was given: the assistant's instructions, then the thread.
    const prompt = fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body.messages;
    assert.deepEqual(prompt, [
      { role: 'system', content: 'Answer briefly.' },
      { role: 'user', content: 'hello there' },
    ]);

    const steps = await client.beta.threads.runs.steps.list(run.id, { thread_id: threadId });
    assert.equal(steps.data.length, 1);
    const [step] = steps.data;
    assert.equal(step!.type, 'message_creation');
    assert.equal(step!.status, 'completed');
    assert.equal(step!.step_details.type === 'message_creation' && step!.step_details.message_creation.message_id, answer!.id);
    const one = await client.beta.threads.runs.steps.retrieve(step!.id, { thread_id: threadId, run_id: run.id });
    assert.equal(one.id, step!.id);

    const runs = await client.beta.threads.runs.list(threadId);
    assert.deepEqual(
      runs.data.map((r) => r.id),
      [run.id],
    );
  });

  it('streams OpenAI’s events in order, every one with its event line, ending with done', async () => {
    const threadId = await threadWith('stream me');
    const s = await postStream(gw, `/threads/${threadId}/runs`, { assistant_id: assistantId, stream: true }, key());
    assert.equal(s.status, 200);
    assert.match(String(s.headers['content-type']), /^text\/event-stream/);
    assert.equal(s.headers['x-accel-buffering'], 'no');
    const events = await s.end();
    assert.ok(
      events.every((e) => e.event !== null),
      'every event has its event line',
    );
    const order = names(events).filter((n) => n !== 'thread.message.delta');
    assert.deepEqual(order, [...RUN_EVENTS, ...CLOSING_EVENTS]);
    const firstDelta = names(events).indexOf('thread.message.delta');
    assert.equal(firstDelta, RUN_EVENTS.length, 'the deltas come after the message is in progress');
    assert.equal(events.at(-1)!.data, '[DONE]');
    assert.match(s.raw(), /event: done\ndata: \[DONE\]\n\n$/);
    assert.equal(deltaText(events), 'Fake answer to: stream me');
    const deltas = events.filter((e) => e.event === 'thread.message.delta');
    assert.ok(deltas.length > 1, 'one delta per engine piece');
    assert.deepEqual(deltas[0]!.data.delta.content[0].index, 0);
    const completed = events.find((e) => e.event === 'thread.message.completed')!.data;
    assert.equal(completed.content[0].text.value, 'Fake answer to: stream me');
    assert.equal(events.find((e) => e.event === 'thread.run.completed')!.data.status, 'completed');
  });

  it('runs.stream(): the SDK reads the deltas (textDelta), the finished message (messageDone) and finalMessages()', async () => {
    const threadId = await threadWith('stream helper');
    const deltas: string[] = [];
    const done: OpenAI.Beta.Threads.Message[] = [];
    const stream = client.beta.threads.runs
      .stream(threadId, { assistant_id: assistantId })
      .on('textDelta', (delta) => deltas.push(delta.value ?? ''))
      .on('messageDone', (message) => done.push(message));
    const messages = await stream.finalMessages();
    const run = await stream.finalRun();
    assert.equal(run.status, 'completed');
    assert.equal(deltas.join(''), 'Fake answer to: stream helper');
    assert.equal(messages.length, 1);
    assert.equal(textOf(messages[0]!), 'Fake answer to: stream helper');
    assert.equal(done.length, 1);
    assert.equal(done[0]!.status, 'completed');
    assert.equal(textOf(done[0]!), 'Fake answer to: stream helper');
  });

  it('runs.create({stream: true}) yields the events; POST …/runs/stream is the same stream', async () => {
    const threadId = await threadWith('iterate');
    const seen: string[] = [];
    const stream = await client.beta.threads.runs.create(threadId, { assistant_id: assistantId, stream: true });
    for await (const event of stream) seen.push(event.event);
    assert.deepEqual(
      seen.filter((n) => n !== 'thread.message.delta'),
      [...RUN_EVENTS, ...CLOSING_EVENTS.slice(0, -1)],
    );

    const spec = await postStream(gw, `/threads/${threadId}/runs/stream`, { assistant_id: assistantId }, key());
    const events = await spec.end();
    assert.deepEqual(
      names(events).filter((n) => n !== 'thread.message.delta'),
      [...RUN_EVENTS, ...CLOSING_EVENTS],
    );
    assert.equal(deltaText(events), 'Fake answer to: iterate');
  });

  it('createAndRun and createAndRunPoll create the thread and run it; the stream starts with thread.created', async () => {
    const polled = await client.beta.threads.createAndRunPoll({
      assistant_id: assistantId,
      thread: { messages: [{ role: 'user', content: 'new thread' }], metadata: { topic: 'poll' } },
    });
    assert.equal(polled.status, 'completed');
    const thread = await client.beta.threads.retrieve(polled.thread_id);
    assert.deepEqual(thread.metadata, { topic: 'poll' });
    assert.equal(textOf((await assistantMessages(client, polled.thread_id))[0]!), 'Fake answer to: new thread');

    const queued = await client.beta.threads.createAndRun({
      assistant_id: assistantId,
      thread: { messages: [{ role: 'user', content: 'bg' }] },
    });
    assert.equal(queued.status, 'queued');
    await runReaches(client, queued.thread_id, queued.id, ['completed']);

    const s = await postStream(
      gw,
      '/threads/runs',
      { assistant_id: assistantId, stream: true, thread: { messages: [{ role: 'user', content: 'streamed thread' }] } },
      key(),
    );
    const events = await s.end();
    assert.deepEqual(
      names(events).filter((n) => n !== 'thread.message.delta'),
      ['thread.created', ...RUN_EVENTS, ...CLOSING_EVENTS],
    );
    const created = events[0]!.data;
    assert.equal(created.object, 'thread');
    assert.equal(events[1]!.data.thread_id, created.id);
  });

  it('cancel aborts the engine call within a second; the run ends cancelled, its message incomplete', async () => {
    slow({ tokenDelayMs: 100, repeat: 200 });
    try {
      const threadId = await threadWith('a long answer please');
      const aborted = fake.aborted();
      const run = await client.beta.threads.runs.create(threadId, { assistant_id: assistantId });
      await eventually('the engine generating', () => fake.inFlight() === 1);
      const asked = await client.beta.threads.runs.cancel(run.id, { thread_id: threadId });
      assert.ok(['cancelling', 'cancelled'].includes(asked.status), asked.status);
      await fake.waitForAbort(aborted + 1, 1000);
      const ended = await runReaches(client, threadId, run.id, ['cancelled']);
      assert.ok(ended.cancelled_at);
      const [message] = await assistantMessages(client, threadId);
      assert.equal(message!.status, 'incomplete');
      assert.deepEqual(message!.incomplete_details, { reason: 'run_cancelled' });

      await assert.rejects(client.beta.threads.runs.cancel(run.id, { thread_id: threadId }), { status: 400 });
      // (The SDK reads OpenAI's `error` member, not the problem body: the wording over plain HTTP.)
      const again = await gw.request('POST', `${BASE}/threads/${threadId}/runs/${run.id}/cancel`, { apiKey: world.a.key.key });
      assert.equal(again.status, 400);
      assert.equal(again.body.detail, "Cannot cancel run with status 'cancelled'.");
      const steps = await client.beta.threads.runs.steps.list(run.id, { thread_id: threadId });
      assert.equal(steps.data[0]!.status, 'cancelled');
    } finally {
      normal();
    }
  });

  it('a streamed run finishes after its client disconnects; its answer is then readable', async () => {
    slow({ tokenDelayMs: 40, repeat: 5 });
    try {
      const threadId = await threadWith('keep going');
      const s = await postStream(gw, `/threads/${threadId}/runs`, { assistant_id: assistantId, stream: true }, key());
      await s.until((events) => events.some((e) => e.event === 'thread.message.delta'));
      const runId = s.events[0]!.data.id;
      const aborted = fake.aborted();
      s.destroy();
      const run = await runReaches(client, threadId, runId, ['completed', 'failed', 'cancelled', 'incomplete'], 20_000);
      assert.equal(run.status, 'completed');
      assert.equal(fake.aborted(), aborted, 'the engine call was not cut');
      const [message] = await assistantMessages(client, threadId);
      assert.equal(message!.status, 'completed');
      assert.equal(textOf(message!).split('Fake answer to: keep going').length - 1, 5);
    } finally {
      normal();
    }
  });

  it('a second run while one is active is a 400 with OpenAI’s wording, and nothing is stored', async () => {
    slow({ tokenDelayMs: 50, repeat: 20 });
    try {
      const threadId = await threadWith('one at a time');
      const first = await client.beta.threads.runs.create(threadId, { assistant_id: assistantId });
      const second = await gw.request('POST', `${BASE}/threads/${threadId}/runs`, {
        apiKey: world.a.key.key,
        json: { assistant_id: assistantId, additional_messages: [{ role: 'user', content: 'me too' }] },
      });
      assert.equal(second.status, 400, second.text);
      assert.equal(second.body.detail, `Thread ${threadId} already has an active run ${first.id}.`);
      const runs = await client.beta.threads.runs.list(threadId);
      assert.deepEqual(
        runs.data.map((r) => r.id),
        [first.id],
      );
      const messages = await client.beta.threads.messages.list(threadId);
      assert.equal(messages.data.length, 2, 'the refused run added no message');
      await client.beta.threads.runs.cancel(first.id, { thread_id: threadId });
      await runReaches(client, threadId, first.id, ['cancelled']);
      // The thread takes runs again.
      normal();
      const next = await client.beta.threads.runs.createAndPoll(threadId, { assistant_id: assistantId });
      assert.equal(next.status, 'completed');

      // Two at the same moment: exactly one gets the thread.
      const both = await Promise.all(
        [1, 2].map(() =>
          gw.request('POST', `${BASE}/threads/${threadId}/runs`, { apiKey: world.a.key.key, json: { assistant_id: assistantId } }),
        ),
      );
      assert.deepEqual(both.map((r) => r.status).sort(), [200, 400]);
      const winner = both.find((r) => r.status === 200)!.body;
      assert.equal(both.find((r) => r.status === 400)!.body.detail, `Thread ${threadId} already has an active run ${winner.id}.`);
      await runReaches(client, threadId, winner.id, ['completed']);
    } finally {
      normal();
    }
  });

  it('an engine failure ends the stream with thread.run.failed and last_error; the SDK sees the run failed', async () => {
    slow({ dieAfterTokens: 2 });
    try {
      const threadId = await threadWith('fail midway');
      const s = await postStream(gw, `/threads/${threadId}/runs`, { assistant_id: assistantId, stream: true }, key());
      const events = await s.end();
      assert.deepEqual(names(events).slice(-4), ['thread.message.incomplete', 'thread.run.step.failed', 'thread.run.failed', 'done']);
      const failed = events.at(-2)!.data;
      assert.equal(failed.status, 'failed');
      assert.equal(failed.last_error.code, 'server_error');
      assert.ok(failed.failed_at);

      const polled = await client.beta.threads.runs.createAndPoll(threadId, { assistant_id: assistantId });
      assert.equal(polled.status, 'failed');
      assert.equal(polled.last_error?.code, 'server_error');
      assert.match(polled.last_error!.message, /failed while generating/);
    } finally {
      normal();
    }
  });

  it('Idempotency-Key: the same create again is the same run, as JSON and as its stream replayed from the first event', async () => {
    const threadId = await threadWith('once only');
    const headers = { 'Idempotency-Key': `run-${threadId}` };
    const first = await client.beta.threads.runs.create(threadId, { assistant_id: assistantId }, { headers });
    const again = await client.beta.threads.runs.create(threadId, { assistant_id: assistantId }, { headers });
    assert.equal(again.id, first.id);
    await runReaches(client, threadId, first.id, ['completed']);
    assert.equal((await client.beta.threads.runs.list(threadId)).data.length, 1);

    const streamed = { assistant_id: assistantId, stream: true };
    const s1 = await postStream(gw, `/threads/${threadId}/runs`, streamed, { ...key(), 'idempotency-key': `stream-${threadId}` });
    const live = await s1.end();
    const s2 = await postStream(gw, `/threads/${threadId}/runs`, streamed, { ...key(), 'idempotency-key': `stream-${threadId}` });
    const replayed = await s2.end();
    assert.equal(replayed[0]!.data.id, live[0]!.data.id, 'the same run');
    assert.deepEqual(
      names(replayed).filter((n) => n !== 'thread.message.delta'),
      names(live).filter((n) => n !== 'thread.message.delta'),
    );
    assert.equal(deltaText(replayed), deltaText(live));
    assert.equal((await client.beta.threads.runs.list(threadId)).data.length, 2);
  });
});
