// The official `openai` SDK as a client, pointed at <base>/api/llm/v1 with an rdk_
// API key: what works for it works for our users. Also pins the documented
// incompatibility of the spec's metadata frame (no `choices`) and the opt-in fix.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { seedTenant, tokenFor, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver } from './chat-support.js';

const messages = [{ role: 'user' as const, content: 'hello there' }];
const ANSWER = 'Fake answer to: hello there';

describe('llm with the official openai SDK', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let dying: FakeEngine;
  let client: OpenAI;
  let optedInTenant: OpenAI;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['sdk-model'] });
    dying = await startFakeOpenAI({ models: ['sdk-dying'], dieAfterTokens: 2 });
    gw = await gatewayOver([fake, dying]);
    const t = await seedTenant(gw, 'sdk');
    const { key } = await createApiKey(gw, t.tenantId, 'sdk');
    assert.match(key, /^rdk_/);
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });

    // A tenant that turned the compatibility setting on.
    const other = await seedTenant(gw, 'sdk-optin');
    const admin = await tokenFor(gw, other.admin.id, other.tenantId);
    const patched = await gw.request('PATCH', `/api/auth/tenants/${other.tenantId}`, {
      token: admin,
      json: { streamMetadataChoices: true },
    });
    assert.equal(patched.status, 200, patched.text);
    optedInTenant = new OpenAI({
      apiKey: (await createApiKey(gw, other.tenantId, 'sdk')).key,
      baseURL: `${gw.url}/api/llm/v1`,
      maxRetries: 0,
    });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([fake?.close(), dying?.close()]);
  });

  it('lists models, `auto` included', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.deepEqual(ids, ['auto', 'sdk-dying', 'sdk-model', ...(gw.ctx.vector ? ['gateway-word-vectors-en'] : [])]);
  });

  it('creates a chat completion', async () => {
    const completion = await client.chat.completions.create({ model: 'sdk-model', messages });
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.model, 'sdk-model');
    assert.equal(completion.choices[0]?.message.content, ANSWER);
    assert.equal(completion.choices[0]?.finish_reason, 'stop');
    assert.deepEqual(completion.usage, { prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 });
    const auto = await client.chat.completions.create({ model: 'auto', messages, max_tokens: 2 });
    assert.equal(auto.choices[0]?.message.content, 'Fake answer');
    assert.equal(auto.choices[0]?.finish_reason, 'length');
  });

  it('streams; with the spec metadata frame the README loop and the stream() helper throw on the first frame (documented)', async () => {
    const stream = await client.chat.completions.create({ model: 'sdk-model', messages, stream: true });
    const frames: unknown[] = [];
    await assert.rejects(async () => {
      for await (const chunk of stream) {
        frames.push(chunk);
        // The loop from the SDK's README: the metadata frame has no `choices`.
        (chunk.choices[0]?.delta?.content ?? '').toString();
      }
    }, TypeError);
    assert.deepEqual(frames, [{ object: 'rag_metadata', active: false, status: 'inactive', snippet_count: 0, rag_snippets: null }]);
    // So does the stream() helper (it iterates `chunk.choices`).
    await assert.rejects(client.chat.completions.stream({ model: 'sdk-model', messages }).finalChatCompletion(), /choices is not iterable/);

    // A loop that skips frames without choices (as the spec tells parsers to) reads the whole answer.
    let text = '';
    for await (const chunk of await client.chat.completions.create({ model: 'sdk-model', messages, stream: true })) {
      if (!Array.isArray(chunk.choices)) continue;
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.equal(text, ANSWER);
  });

  it('streams with the README loop and the stream() helper once `choices: []` is opted in, per request or per tenant', async () => {
    const optIn = { include_usage: true, metadata_choices: true } as OpenAI.Chat.Completions.ChatCompletionStreamOptions;
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of await client.chat.completions.create({ model: 'sdk-model', messages, stream: true, stream_options: optIn })) {
      text += chunk.choices[0]?.delta?.content ?? '';
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, ANSWER);
    assert.deepEqual(usage, { prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 });

    const helper = client.chat.completions.stream({ model: 'sdk-model', messages, stream_options: optIn });
    let streamed = '';
    helper.on('content', (delta) => (streamed += delta));
    const final = await helper.finalChatCompletion();
    assert.equal(streamed, ANSWER);
    assert.equal(final.choices[0]?.message.content, ANSWER);
    assert.equal(final.choices[0]?.finish_reason, 'stop');
    assert.equal(final.usage?.total_tokens, 7);

    // The tenant setting alone: no stream_options needed.
    assert.equal(await optedInTenant.chat.completions.stream({ model: 'sdk-model', messages }).finalContent(), ANSWER);
    let tenantText = '';
    for await (const chunk of await optedInTenant.chat.completions.create({ model: 'sdk-model', messages, stream: true })) {
      tenantText += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.equal(tenantText, ANSWER);
  });

  for (const mode of ['empty_choices', 'chunk'] as const) {
    it(`streams with the README loop and the stream() helper in stream_options.metadata_frame "${mode}"`, async () => {
      const options = { include_usage: true, metadata_frame: mode } as OpenAI.Chat.Completions.ChatCompletionStreamOptions;
      let text = '';
      let usage: OpenAI.CompletionUsage | null | undefined;
      const first: unknown[] = [];
      for await (const chunk of await client.chat.completions.create({
        model: 'sdk-model',
        messages,
        stream: true,
        stream_options: options,
      })) {
        if (first.length === 0) first.push(chunk);
        text += chunk.choices[0]?.delta?.content ?? '';
        usage = chunk.usage ?? usage;
      }
      assert.equal(text, ANSWER);
      assert.deepEqual(usage, { prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 });
      const metadata = first[0] as Record<string, unknown>;
      if (mode === 'chunk') {
        // Python's standard loop, `chunk.choices[0].delta.content`, needs a choice on every frame.
        assert.equal(metadata.object, 'chat.completion.chunk');
        assert.deepEqual(metadata.choices, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
        assert.equal(metadata.rag_status, 'inactive');
      } else {
        assert.deepEqual(metadata.choices, []);
      }

      const helper = client.chat.completions.stream({ model: 'sdk-model', messages, stream_options: options });
      let streamed = '';
      helper.on('content', (delta) => (streamed += delta));
      const final = await helper.finalChatCompletion();
      assert.equal(streamed, ANSWER);
      assert.equal(final.choices.length, 1);
      assert.equal(final.choices[0]?.message.role, 'assistant');
      assert.equal(final.choices[0]?.message.content, ANSWER);
      assert.equal(final.choices[0]?.finish_reason, 'stop');
      assert.equal(final.usage?.total_tokens, 7);
    });
  }

  it('raises the in-band error frame of a mid-stream engine failure as an APIError', async () => {
    const stream = await optedInTenant.chat.completions.create({ model: 'sdk-dying', messages, stream: true });
    let text = '';
    await assert.rejects(
      async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      },
      (error: unknown) => error instanceof OpenAI.APIError && /incomplete/.test(error.message),
    );
    assert.equal(text, 'Fake answer');
  });

  it('surfaces HTTP errors as the SDK error classes', async () => {
    await assert.rejects(client.chat.completions.create({ model: 'no-such-model', messages }), OpenAI.BadRequestError);
    await assert.rejects(client.chat.completions.create({ model: 'sdk-model', messages, max_tokens: 9000 }), OpenAI.BadRequestError);
    const stranger = new OpenAI({ apiKey: 'rdk_not-a-real-key', baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
    await assert.rejects(stranger.models.list(), OpenAI.AuthenticationError);
  });
});
