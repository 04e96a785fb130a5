// Readers of a run's event stream and the run they read: heartbeats while the model
// is silent, a cancel told in the stream, a reader that stops reading (the run does
// not wait for it, and the reader catches up), and a thread deleted under its run.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { seedWorld, type World } from '../helpers/world.js';
import { BASE, deltaText, names, postStream, runReaches } from './thread-runs-support.js';
import { gatewayOver } from './chat-support.js';

const MODEL = 'reader-model';

describe('thread run readers', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let client: OpenAI;
  let assistantId: string;
  const key = () => ({ 'x-api-key': world.a.key.key });
  const threadWith = async (content: string) => (await client.beta.threads.create({ messages: [{ role: 'user', content }] })).id;

  before(async () => {
    fake = await startFakeOpenAI({ models: [MODEL] });
    gw = await gatewayOver([fake], { GATEWAY_STREAM_HEARTBEAT_SECONDS: '1' });
    world = await seedWorld(gw, 'readers');
    client = new OpenAI({ apiKey: world.a.key.key, baseURL: `${gw.url}${BASE}`, maxRetries: 0 });
    assistantId = (await client.beta.assistants.create({ model: MODEL })).id;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('sends `:` heartbeats while the model is silent, and tells a cancel: cancelling, then the cancelled ends, then done', async () => {
    fake.behaviour = { models: [MODEL], tokenDelayMs: 1500, repeat: 10 };
    try {
      const threadId = await threadWith('take your time');
      const s = await postStream(gw, `/threads/${threadId}/runs`, { assistant_id: assistantId, stream: true }, key());
      await s.until(() => s.comments.includes('keep-alive'), 10_000);
      const runId = s.events[0]!.data.id;
      await client.beta.threads.runs.cancel(runId, { thread_id: threadId });
      const events = await s.end();
      assert.deepEqual(names(events).slice(-5), [
        'thread.run.cancelling',
        'thread.message.incomplete',
        'thread.run.step.cancelled',
        'thread.run.cancelled',
        'done',
      ]);
      assert.equal(events.at(-4)!.data.incomplete_details.reason, 'run_cancelled');
      assert.ok(events.at(-2)!.data.cancelled_at);
    } finally {
      fake.behaviour = { models: [MODEL] };
    }
  });

  it('a reader that stops reading does not hold the run up; it catches up from where it was', async () => {
    // 8192 deltas of event-stream text: more than the socket buffers between us hold.
    fake.behaviour = { models: [MODEL], repeat: 3000 };
    try {
      const threadId = await threadWith('a very long answer');
      const s = await postStream(gw, `/threads/${threadId}/runs`, { assistant_id: assistantId, stream: true, max_tokens: 8192 }, key());
      await s.until((events) => events.length > 0);
      const runId = s.events[0]!.data.id;
      s.pause();
      const readBefore = s.raw().length;
      // The run ends while its reader reads nothing.
      const run = await runReaches(client, threadId, runId, ['incomplete', 'completed'], 20_000);
      assert.equal(run.status, 'incomplete', 'stopped at max_tokens');
      assert.equal(s.raw().length, readBefore, 'nothing was read meanwhile');
      s.resume();
      const events = await s.end(30_000);
      assert.ok(s.raw().length > 1_000_000, `${s.raw().length} bytes of events`);
      assert.equal(events.filter((e) => e.event === 'thread.message.delta').length, 8192);
      assert.deepEqual(names(events).slice(-4), [
        'thread.message.incomplete',
        'thread.run.step.completed',
        'thread.run.incomplete',
        'done',
      ]);
      assert.equal(deltaText(events), events.at(-4)!.data.content[0].text.value);
    } finally {
      fake.behaviour = { models: [MODEL] };
    }
  });

  it('a thread deleted under its run stops the run; the stream ends with an error event', async () => {
    fake.behaviour = { models: [MODEL], tokenDelayMs: 100, repeat: 50 };
    try {
      const threadId = await threadWith('soon gone');
      const s = await postStream(gw, `/threads/${threadId}/runs`, { assistant_id: assistantId, stream: true }, key());
      await s.until((events) => events.some((e) => e.event === 'thread.message.delta'));
      const aborted = fake.aborted();
      assert.equal((await client.beta.threads.delete(threadId)).deleted, true);
      await fake.waitForAbort(aborted + 1, 2000);
      const events = await s.end();
      const last = events.filter((e) => e.event !== 'done').at(-1)!;
      assert.equal(last.event, 'error');
      assert.match(last.data.error.message, /deleted/);
      assert.equal(gw.logs().includes('could not store the stream events'), false, 'no error logged for a deleted thread');
    } finally {
      fake.behaviour = { models: [MODEL] };
    }
  });
});
