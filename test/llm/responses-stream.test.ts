// The Responses API streamed: the official SDK's `responses.create({stream: true})`
// and `responses.stream(...)` with finalResponse(), and the raw event stream with
// OpenAI's exact event order (an `event:` line and a `data:` line holding `type` and
// `sequence_number`), heartbeats while the engine is silent, and a function-call
// round trip streamed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { gatewayOver } from './chat-support.js';
import { postStream } from './thread-runs-support.js';

const TEXT_EVENTS = [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.content_part.added',
  'response.output_text.delta',
  'response.output_text.done',
  'response.content_part.done',
  'response.output_item.done',
  'response.completed',
];

/** The event names with consecutive duplicates (the deltas) joined. */
const shape = (names: string[]) => names.filter((name, i) => name !== names[i - 1]);

describe('responses API streamed', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['stream-model'] });
    gw = await gatewayOver([fake], { GATEWAY_STREAM_HEARTBEAT_SECONDS: '1' });
    world = await seedWorld(gw, 'rstream');
    client = new OpenAI({ apiKey: world.a.key.key, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  it("sends OpenAI's typed events in order, numbered from 0, and the stored response matches the last one", async () => {
    const stream = await postStream(
      gw,
      '/responses',
      { model: 'stream-model', input: 'Tell me things', stream: true },
      {
        'x-api-key': world.a.key.key,
      },
    );
    assert.equal(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /text\/event-stream/);
    const events = await stream.end();
    assert.deepEqual(shape(events.map((e) => e.event!)), TEXT_EVENTS);
    for (const [i, e] of events.entries()) {
      assert.equal(e.data.type, e.event);
      assert.equal(e.data.sequence_number, i);
    }
    assert.ok(!stream.raw().includes('[DONE]'));
    const deltas = events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta);
    assert.equal(deltas.join(''), 'Fake answer to: Tell me things');
    assert.equal(events[0]!.data.response.status, 'in_progress');
    const done = events.find((e) => e.event === 'response.output_text.done')!.data;
    assert.equal(done.text, 'Fake answer to: Tell me things');
    const completed = events.at(-1)!.data.response;
    assert.equal(completed.status, 'completed');
    assert.ok(completed.usage.output_tokens > 0);
    const stored = await gw.request('GET', `/api/llm/v1/responses/${completed.id}`, { apiKey: world.a.key.key });
    assert.deepEqual(stored.body, completed);
  });

  it('works with the SDK: create({stream: true}) and responses.stream(...).finalResponse()', async () => {
    const seen: string[] = [];
    let text = '';
    const events = await client.responses.create({ model: 'stream-model', input: 'Hello stream', stream: true });
    for await (const event of events) {
      seen.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    assert.equal(text, 'Fake answer to: Hello stream');
    assert.deepEqual(shape(seen), TEXT_EVENTS);

    const helper = client.responses.stream({ model: 'stream-model', input: 'Hello helper' });
    let snapshot = '';
    helper.on('response.output_text.delta', (event) => {
      snapshot = event.snapshot;
    });
    const final = await helper.finalResponse();
    assert.equal(final.status, 'completed');
    assert.equal(final.output_text, 'Fake answer to: Hello helper');
    assert.equal(snapshot, 'Fake answer to: Hello helper');

    // The stream continues a conversation as JSON does.
    const next = await client.responses.stream({ model: 'stream-model', input: 'Again', previous_response_id: final.id }).finalResponse();
    assert.equal(next.previous_response_id, final.id);
    const messages = fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body.messages;
    assert.deepEqual(
      messages.map((m: { content: string }) => m.content),
      ['Hello helper', 'Fake answer to: Hello helper', 'Again'],
    );
  });

  it('ends with response.incomplete at max_output_tokens, and heartbeats while the engine is silent', async () => {
    fake.behaviour.tokenDelayMs = 1300;
    try {
      const stream = await postStream(
        gw,
        '/responses',
        { model: 'stream-model', input: 'one two three', stream: true, max_output_tokens: 3 },
        { 'x-api-key': world.a.key.key },
      );
      const events = await stream.end(20_000);
      assert.equal(events.at(-1)!.event, 'response.incomplete');
      assert.deepEqual(events.at(-1)!.data.response.incomplete_details, { reason: 'max_output_tokens' });
      assert.equal(events.find((e) => e.event === 'response.output_item.done')!.data.item.status, 'incomplete');
      assert.ok(stream.comments.length >= 1, 'a heartbeat while tokens were slow');
    } finally {
      fake.behaviour.tokenDelayMs = 0;
    }
  });

  it('answers a failure before the engine accepts as a plain HTTP error, and one after as response.failed', async () => {
    fake.behaviour.status = 503;
    try {
      const res = await gw.request('POST', '/api/llm/v1/responses', {
        apiKey: world.a.key.key,
        json: { model: 'stream-model', input: 'x', stream: true },
      });
      assert.equal(res.status, 503);
    } finally {
      delete fake.behaviour.status;
    }
    fake.behaviour.dieAfterTokens = 2;
    try {
      const stream = await postStream(
        gw,
        '/responses',
        { model: 'stream-model', input: 'a b c d e', stream: true },
        {
          'x-api-key': world.a.key.key,
        },
      );
      const events = await stream.end();
      const last = events.at(-1)!;
      assert.equal(last.event, 'response.failed');
      assert.equal(last.data.response.status, 'failed');
      assert.equal(last.data.response.error.code, 'server_error');
      const stored = await gw.request('GET', `/api/llm/v1/responses/${last.data.response.id}`, { apiKey: world.a.key.key });
      assert.equal(stored.body.status, 'failed');
    } finally {
      delete fake.behaviour.dieAfterTokens;
    }
  });
});
