// Tool calling through chat/completions: the round trip (the model calls a function,
// the client sends its result, the model answers) with the official openai SDK, JSON
// and streamed; the stream's tool-call frames exactly as OpenAI frames them; a
// tool_choice naming a function; usage counted for answers that only call tools.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { seedTenant, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver, openStream, payloads } from './chat-support.js';

const CHAT = '/api/llm/v1/chat/completions';
const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
const tools = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      strict: true,
    },
  },
];
const ARGS = '{"city":"Paris"}';

describe('llm chat/completions: tool calling', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let parallel: FakeEngine;
  let plain: FakeEngine;
  let quiet: FakeEngine;
  let key: string;
  let client: OpenAI;

  const lastChat = (f: FakeEngine) => [...f.requests].reverse().find((r) => r.path === '/v1/chat/completions')!.body;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['tool-model'], toolCalls: [{ name: 'get_weather', arguments: ARGS }] });
    parallel = await startFakeOpenAI({
      models: ['parallel-model'],
      toolCalls: [
        { name: 'get_weather', arguments: ARGS },
        { name: 'get_time', arguments: '{"zone":"Europe/Paris"}' },
      ],
    });
    // No knob: calls only what a tool_choice names.
    plain = await startFakeOpenAI({ models: ['plain-model'] });
    // Reports no usage: the gateway counts the calls.
    quiet = await startFakeOpenAI({ models: ['quiet-model'], noUsage: true, toolCalls: [{ name: 'get_weather', arguments: ARGS }] });
    gw = await gatewayOver([fake, parallel, plain, quiet]);
    const t = await seedTenant(gw, 'tools');
    key = (await createApiKey(gw, t.tenantId, 'tools')).key;
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([fake, parallel, plain, quiet].map((f) => f?.close()));
  });

  it('round trip, JSON: the call (content null, finish_reason tool_calls), then the answer to its result', async () => {
    const first = await client.chat.completions.create({
      model: 'tool-model',
      messages: [question],
      tools,
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    const choice = first.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    assert.equal(choice.message.tool_calls?.length, 1);
    const call = choice.message.tool_calls![0]!;
    assert.match(call.id, /^call_fake_\d+$/);
    assert.equal(call.type, 'function');
    assert.deepEqual(call.type === 'function' && call.function, { name: 'get_weather', arguments: ARGS });
    assert.ok(first.usage!.completion_tokens > 0);
    // The engine got the tools and the choice as sent.
    const sent = lastChat(fake);
    assert.deepEqual(sent.tools, tools);
    assert.equal(sent.tool_choice, 'auto');
    assert.equal(sent.parallel_tool_calls, false);

    const second = await client.chat.completions.create({
      model: 'tool-model',
      messages: [question, choice.message, { role: 'tool', tool_call_id: call.id, content: '{"temperature":21}' }],
      tools,
    });
    assert.equal(second.choices[0]!.message.content, 'Fake answer to tool result: {"temperature":21}');
    assert.equal(second.choices[0]!.finish_reason, 'stop');
    assert.equal(second.choices[0]!.message.tool_calls, undefined);
    // The assistant turn (content null, its calls) and the tool result reached the engine as OpenAI's shapes.
    const followUp = lastChat(fake).messages;
    assert.deepEqual(followUp[1], {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: ARGS } }],
    });
    assert.deepEqual(followUp[2], { role: 'tool', content: '{"temperature":21}', tool_call_id: call.id });
  });

  it('round trip, streamed with the SDK stream() helper: finalChatCompletion() shows the calls', async () => {
    const stream = client.chat.completions.stream({
      model: 'tool-model',
      messages: [question],
      tools,
      // The spec's metadata frame has no `choices`, which the helper needs (test/llm/openai-sdk.test.ts).
      stream_options: { metadata_choices: true } as any,
    });
    const completion = await stream.finalChatCompletion();
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    const call = choice.message.tool_calls![0]!;
    assert.match(call.id, /^call_fake_\d+$/);
    assert.ok(call.type === 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.equal(call.function.arguments, ARGS);
    // The helper parses the arguments of a strict tool: they arrived whole.
    assert.deepEqual((call.function as { parsed_arguments?: unknown }).parsed_arguments, { city: 'Paris' });

    const answer = await client.chat.completions
      .stream({
        model: 'tool-model',
        messages: [
          question,
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: call.id, content: 'sunny' },
        ],
        tools,
        stream_options: { metadata_choices: true } as any,
      })
      .finalChatCompletion();
    assert.equal(answer.choices[0]!.message.content, 'Fake answer to tool result: sunny');
    assert.equal(answer.choices[0]!.finish_reason, 'stop');
  });

  it('streams tool calls framed exactly as OpenAI frames them: id, type and name first, then argument pieces', async () => {
    const s = await openStream(gw, CHAT, { model: 'parallel-model', stream: true, messages: [question], tools }, { 'x-api-key': key });
    assert.equal(s.status, 200);
    const frames = payloads(await s.end());
    assert.equal(frames.pop(), '[DONE]');
    const final = frames.pop();
    assert.deepEqual(final.choices, [{ index: 0, delta: { content: '' }, finish_reason: 'tool_calls' }]);
    assert.equal(final.system_fingerprint, 'fp_fake');
    const deltas = frames.slice(1).map((f) => {
      assert.equal(f.object, 'chat.completion.chunk');
      assert.equal(f.choices.length, 1);
      assert.equal(f.choices[0].index, 0);
      assert.equal(f.choices[0].finish_reason, null);
      return f.choices[0].delta;
    });
    const [firstId, secondId] = deltas.filter((d) => d.tool_calls[0].id).map((d) => d.tool_calls[0].id);
    assert.match(firstId, /^call_fake_\d+$/);
    assert.deepEqual(deltas, [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: firstId, type: 'function', function: { name: 'get_weather', arguments: '' } }],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      { tool_calls: [{ index: 1, id: secondId, type: 'function', function: { name: 'get_time', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{"zone":"Eur' } }] },
      { tool_calls: [{ index: 1, function: { arguments: 'ope/Paris"}' } }] },
    ]);
  });

  it('a tool_choice naming a function: the engine gets it, the model calls that function', async () => {
    const both = [...tools, { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }];
    const completion = await client.chat.completions.create({
      model: 'plain-model',
      messages: [question],
      tools: both,
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    const call = completion.choices[0]!.message.tool_calls![0]!;
    assert.deepEqual(call.type === 'function' && call.function, { name: 'get_time', arguments: '{}' });
    assert.deepEqual(lastChat(plain).tool_choice, { type: 'function', function: { name: 'get_time' } });
    // tool_choice 'none': the model answers in text.
    const none = await client.chat.completions.create({ model: 'tool-model', messages: [question], tools, tool_choice: 'none' });
    assert.equal(none.choices[0]!.message.content, 'Fake answer to: What is the weather in Paris?');
    assert.equal(none.choices[0]!.finish_reason, 'stop');
  });

  it('counts usage for answers that only call tools when the engine reports none, JSON and streamed', async () => {
    const json = await gw.request('POST', CHAT, { apiKey: key, json: { model: 'quiet-model', messages: [question], tools } });
    assert.equal(json.status, 200, json.text);
    assert.equal(json.body.choices[0].message.content, null);
    assert.ok(json.body.usage.completion_tokens >= 5, JSON.stringify(json.body.usage));
    assert.ok(json.body.usage.prompt_tokens > 0);

    const s = await openStream(
      gw,
      CHAT,
      { model: 'quiet-model', stream: true, stream_options: { include_usage: true }, messages: [question], tools },
      { 'x-api-key': key },
    );
    const frames = payloads(await s.end());
    const usage = frames.at(-2).usage;
    assert.equal(usage.completion_tokens, json.body.usage.completion_tokens, 'the same calls count the same, JSON or streamed');
  });
});
