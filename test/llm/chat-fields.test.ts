// chat/completions passes OpenAI's request fields through to an OpenAI-compatible
// engine as sent, and carries everything the engine answers back: structured output,
// sampling fields, max_completion_tokens, n choices, logprobs, finish reasons as
// reported, system_fingerprint, the developer role, content parts. Fields it does not
// know are never forwarded (a client cannot choose where a request goes).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { seedTenant, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver, openStream, payloads } from './chat-support.js';

const CHAT = '/api/llm/v1/chat/completions';
const hello = [{ role: 'user' as const, content: 'hello there' }];
const ANSWER = 'Fake answer to: hello there';

describe('llm chat/completions: OpenAI fields', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let filtered: FakeEngine;
  let odd: FakeEngine;
  let key: string;
  let client: OpenAI;

  const lastChat = (f: FakeEngine) => [...f.requests].reverse().find((r) => r.path === '/v1/chat/completions')!.body;
  const chat = (json: object) => gw.request('POST', CHAT, { apiKey: key, json: { model: 'fields-model', messages: hello, ...json } });
  const stream = async (json: object) => {
    const s = await openStream(gw, CHAT, { model: 'fields-model', messages: hello, stream: true, ...json }, { 'x-api-key': key });
    assert.equal(s.status, 200);
    return payloads(await s.end());
  };

  before(async () => {
    fake = await startFakeOpenAI({ models: ['fields-model'] });
    filtered = await startFakeOpenAI({ models: ['filtered-model'], finishReason: 'content_filter' });
    // A finish reason OpenAI does not define: reported as a stop.
    odd = await startFakeOpenAI({ models: ['odd-model'], finishReason: 'eos_token' });
    gw = await gatewayOver([fake, filtered, odd]);
    const t = await seedTenant(gw, 'fields');
    key = (await createApiKey(gw, t.tenantId, 'fields')).key;
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([fake, filtered, odd].map((f) => f?.close()));
  });

  it('response_format json_schema reaches the engine as sent; the answer is the JSON it shaped', async () => {
    const response_format = {
      type: 'json_schema' as const,
      json_schema: {
        name: 'weather',
        strict: true,
        schema: {
          type: 'object',
          properties: { city: { type: 'string' }, unit: { enum: ['celsius', 'fahrenheit'] }, degrees: { type: 'number' } },
          required: ['city', 'unit', 'degrees'],
          additionalProperties: false,
        },
      },
    };
    const completion = await client.chat.completions.create({ model: 'fields-model', messages: hello, response_format });
    assert.deepEqual(JSON.parse(completion.choices[0]!.message.content!), { city: 'fake', unit: 'celsius', degrees: 1 });
    assert.deepEqual(lastChat(fake).response_format, response_format);
    const object = await client.chat.completions.create({
      model: 'fields-model',
      messages: hello,
      response_format: { type: 'json_object' },
    });
    assert.deepEqual(JSON.parse(object.choices[0]!.message.content!), { answer: ANSWER });
  });

  it('passes every sampling field to the engine exactly as sent (one stop string goes as a list)', async () => {
    const fields = {
      top_p: 0.9,
      seed: 42,
      stop: ['END', '\n\n'],
      user: 'user-123',
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      logit_bias: { '50256': -100, '1234': 5 },
      metadata: { project: 'alpha', run: '7' },
      parallel_tool_calls: true,
      temperature: 0.2,
    };
    const response = await chat(fields);
    assert.equal(response.status, 200, response.text);
    const sent = lastChat(fake);
    for (const [name, value] of Object.entries(fields)) assert.deepEqual(sent[name], value, name);
    assert.equal((await chat({ stop: 'END' })).status, 200);
    assert.deepEqual(lastChat(fake).stop, ['END']);
    // Nothing the client did not send: a plain request's body is the one it always was.
    await chat({});
    assert.deepEqual(Object.keys(lastChat(fake)).sort(), ['max_tokens', 'messages', 'model', 'stream', 'temperature']);
  });

  it('honours max_completion_tokens as max_tokens (both given must agree)', async () => {
    const response = await chat({ max_completion_tokens: 2 });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.choices[0].message.content, 'Fake answer');
    assert.equal(response.body.choices[0].finish_reason, 'length');
    assert.equal(lastChat(fake).max_tokens, 2);
    const same = await chat({ max_completion_tokens: 3, max_tokens: 3 });
    assert.equal(same.status, 200, same.text);
    assert.equal(lastChat(fake).max_tokens, 3);
  });

  it('n = 3: three choices, JSON (index order) and streamed (per-choice frames and final frames)', async () => {
    const json = await chat({ n: 3 });
    assert.equal(json.status, 200, json.text);
    assert.deepEqual(
      json.body.choices.map((c: any) => [c.index, c.message.content, c.finish_reason]),
      [
        [0, ANSWER, 'stop'],
        [1, `${ANSWER} (1)`, 'stop'],
        [2, `${ANSWER} (2)`, 'stop'],
      ],
    );
    assert.equal(lastChat(fake).n, 3);

    const frames = await stream({ n: 3 });
    assert.equal(frames.pop(), '[DONE]');
    const texts = ['', '', ''];
    const roles = [0, 0, 0];
    const finals: [number, string][] = [];
    for (const f of frames.slice(1)) {
      assert.equal(f.choices.length, 1);
      const c = f.choices[0];
      if (c.finish_reason) finals.push([c.index, c.finish_reason]);
      else {
        texts[c.index] += c.delta.content;
        if (c.delta.role === 'assistant') roles[c.index]!++;
      }
    }
    assert.deepEqual(texts, [ANSWER, `${ANSWER} (1)`, `${ANSWER} (2)`]);
    assert.deepEqual(roles, [1, 1, 1], 'each choice names its role once');
    assert.deepEqual(finals, [
      [0, 'stop'],
      [1, 'stop'],
      [2, 'stop'],
    ]);

    // The SDK reassembles the choices from the stream.
    const sdk = await client.chat.completions
      .stream({ model: 'fields-model', messages: hello, n: 3, stream_options: { metadata_choices: true } as any })
      .finalChatCompletion();
    assert.deepEqual(
      sdk.choices.map((c) => c.message.content),
      [ANSWER, `${ANSWER} (1)`, `${ANSWER} (2)`],
    );
  });

  it('logprobs: the engine gets logprobs and top_logprobs; JSON and stream carry its logprobs back', async () => {
    const json = await chat({ logprobs: true, top_logprobs: 2 });
    assert.equal(json.status, 200, json.text);
    const sent = lastChat(fake);
    assert.equal(sent.logprobs, true);
    assert.equal(sent.top_logprobs, 2);
    const content = json.body.choices[0].logprobs.content;
    assert.deepEqual(
      content.map((t: any) => t.token),
      ['Fake', ' answer', ' to:', ' hello', ' there'],
    );
    assert.equal(content[0].top_logprobs.length, 2);
    assert.deepEqual(Object.keys(content[0]).sort(), ['bytes', 'logprob', 'token', 'top_logprobs']);
    // Not asked: no logprobs member at all (the plain answer's shape).
    assert.equal('logprobs' in (await chat({})).body.choices[0], false);

    const frames = await stream({ logprobs: true, top_logprobs: 1 });
    const deltas = frames.slice(1, -2);
    assert.ok(deltas.length >= 5);
    for (const f of deltas) {
      assert.equal(f.choices[0].logprobs.content.length, 1);
      assert.equal(f.choices[0].logprobs.content[0].token, f.choices[0].delta.content);
      assert.equal(f.choices[0].logprobs.content[0].top_logprobs.length, 1);
    }
  });

  it("reports finish_reason as the engine did: length, content_filter; a value OpenAI does not define is 'stop'", async () => {
    assert.equal((await chat({ max_tokens: 1 })).body.choices[0].finish_reason, 'length');
    assert.equal((await chat({ model: 'filtered-model' })).body.choices[0].finish_reason, 'content_filter');
    assert.equal((await chat({ model: 'odd-model' })).body.choices[0].finish_reason, 'stop');
    assert.equal((await stream({ model: 'filtered-model' })).at(-2).choices[0].finish_reason, 'content_filter');
    assert.equal((await stream({ model: 'odd-model' })).at(-2).choices[0].finish_reason, 'stop');
    assert.equal((await stream({ max_tokens: 1 })).at(-2).choices[0].finish_reason, 'length');
  });

  it('carries system_fingerprint back when the engine gives one, JSON and on the final stream frame', async () => {
    const completion = await client.chat.completions.create({ model: 'fields-model', messages: hello });
    assert.equal(completion.system_fingerprint, 'fp_fake');
    assert.equal((await stream({})).at(-2).system_fingerprint, 'fp_fake');
  });

  it('accepts the developer role, message names and content-part arrays with text and image_url parts', async () => {
    const messages = [
      { role: 'developer', content: 'Answer briefly.' },
      { role: 'system', content: [{ type: 'text', text: 'You are helpful.' }], name: 'policy' },
      {
        role: 'user',
        name: 'alice',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
        ],
      },
    ];
    const completion = await client.chat.completions.create({ model: 'fields-model', messages: messages as any });
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(lastChat(fake).messages, messages, 'forwarded as sent');
  });

  it('never forwards fields it does not know: a client cannot choose where a request goes', async () => {
    const response = await chat({
      api_base: 'http://169.254.169.254/v1',
      base_url: 'http://attacker.example/v1',
      api_key: 'sk-other',
      extra_body: { x: 1 },
      messages: [{ role: 'user', content: 'hi', api_base: 'http://x', extra: 1 }],
    });
    assert.equal(response.status, 200, response.text);
    const sent = lastChat(fake);
    for (const field of ['api_base', 'base_url', 'api_key', 'extra_body']) assert.equal(sent[field], undefined, field);
    assert.deepEqual(sent.messages, [{ role: 'user', content: 'hi' }]);
    const raw = JSON.stringify(fake.requests.at(-1)!.body);
    assert.ok(!raw.includes('169.254') && !raw.includes('attacker'), raw);
  });
});
