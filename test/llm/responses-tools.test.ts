// Function tools on the Responses API with the official SDK: the model's calls come
// back as function_call output items (JSON and streamed with OpenAI's
// function_call_arguments events), and the next request with previous_response_id and
// function_call_output items gives the engine the assistant's calls and the tool
// results; a client keeping its own history sends the calls back as input items.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld, type World } from '../helpers/world.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { gatewayOver } from './chat-support.js';
import { postStream } from './thread-runs-support.js';

const WEATHER: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

describe('responses API function tools', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let world: World;
  let client: OpenAI;
  const lastChat = () => fake.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!.body;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['tool-model'], toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    gw = await gatewayOver([fake]);
    world = await seedWorld(gw, 'rtools');
    client = new OpenAI({ apiKey: world.a.key.key, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('round trip as JSON: function_call output, then function_call_output continuing with previous_response_id', async () => {
    const first = await client.responses.create({
      model: 'tool-model',
      input: 'Weather in Paris?',
      tools: [WEATHER],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    assert.equal(first.status, 'completed');
    assert.equal(first.output_text, '');
    assert.equal(first.output.length, 1);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    assert.equal(call.type, 'function_call');
    assert.match(call.id!, /^fc_/);
    assert.match(call.call_id, /^call_fake_/);
    assert.equal(call.name, 'get_weather');
    assert.equal(call.arguments, '{"city":"Paris"}');
    assert.equal(call.status, 'completed');
    assert.deepEqual(first.tools, [WEATHER]);
    assert.equal(first.tool_choice, 'auto');
    assert.equal(first.parallel_tool_calls, false);
    const sent = lastChat();
    assert.deepEqual(sent.tools, [
      {
        type: 'function',
        function: { name: 'get_weather', description: WEATHER.description, parameters: WEATHER.parameters, strict: false },
      },
    ]);
    assert.equal(sent.tool_choice, 'auto');
    assert.equal(sent.parallel_tool_calls, false);

    const second = await client.responses.create({
      model: 'tool-model',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp":20}' }],
      tools: [WEATHER],
    });
    assert.equal(second.status, 'completed');
    assert.equal(second.output_text, 'Fake answer to tool result: {"temp":20}');
    assert.deepEqual(lastChat().messages, [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: call.call_id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', content: '{"temp":20}', tool_call_id: call.call_id },
    ]);
    const items = await client.responses.inputItems.list(second.id);
    assert.deepEqual(
      items.data.map((i) => [i.type, (i as { call_id?: string }).call_id, (i as { output?: string }).output]),
      [['function_call_output', call.call_id, '{"temp":20}']],
    );
    // The first response reads back the same.
    const again = await client.responses.retrieve(first.id);
    assert.deepEqual(again.output, first.output);
  });

  it('takes the calls back as input items from a client keeping its own history (store: false)', async () => {
    const answer = await client.responses.create({
      model: 'tool-model',
      store: false,
      tools: [WEATHER],
      input: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_a', output: 'sunny' },
        { type: 'function_call_output', call_id: 'call_b', output: 'rain' },
      ],
    });
    assert.equal(answer.output_text, 'Fake answer to tool result: rain');
    const messages = lastChat().messages;
    assert.deepEqual(
      messages.map((m: { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }) => [
        m.role,
        m.tool_calls?.map((c) => c.id) ?? m.tool_call_id ?? null,
      ]),
      [
        ['user', null],
        ['assistant', ['call_a', 'call_b']],
        ['tool', 'call_a'],
        ['tool', 'call_b'],
      ],
    );
  });

  it('round trip streamed: function_call_arguments events, then the tool result answered as text', async () => {
    const stream = await postStream(
      gw,
      '/responses',
      { model: 'tool-model', input: 'Weather?', tools: [WEATHER], stream: true },
      { 'x-api-key': world.a.key.key },
    );
    const events = await stream.end();
    const names = events.map((e) => e.event!).filter((name, i, all) => name !== all[i - 1]);
    assert.deepEqual(names, [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const added = events.find((e) => e.event === 'response.output_item.added')!.data;
    assert.equal(added.item.type, 'function_call');
    assert.equal(added.item.name, 'get_weather');
    const deltas = events.filter((e) => e.event === 'response.function_call_arguments.delta').map((e) => e.data.delta);
    assert.equal(deltas.join(''), '{"city":"Paris"}');
    assert.equal(events.find((e) => e.event === 'response.function_call_arguments.done')!.data.arguments, '{"city":"Paris"}');

    // The SDK's helper, then the result streamed back.
    const helper = client.responses.stream({ model: 'tool-model', input: 'Weather in Oslo?', tools: [WEATHER] });
    let argumentsSnapshot = '';
    helper.on('response.function_call_arguments.delta', (event) => {
      argumentsSnapshot = event.snapshot;
    });
    const final = await helper.finalResponse();
    const call = final.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    assert.equal(call.arguments, '{"city":"Paris"}');
    assert.equal(argumentsSnapshot, '{"city":"Paris"}');
    const answered = await client.responses
      .stream({
        model: 'tool-model',
        previous_response_id: final.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'cold' }],
        tools: [WEATHER],
      })
      .finalResponse();
    assert.equal(answered.output_text, 'Fake answer to tool result: cold');
  });

  it('refuses tools and image input in a persisted chat conversation, and tool_choice naming no tool', async () => {
    const refused = async (body: object, field: string) => {
      const res = await gw.request('POST', '/api/llm/v1/responses', {
        token: world.a.member.token,
        json: { model: 'tool-model', ...body },
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.errors[0].field, field);
    };
    await refused({ input: 'x', conversation: 'conv_00000000000000000000000000', tools: [WEATHER] }, 'conversation');
    await refused({ input: 'x', tool_choice: 'required' }, 'tool_choice');
    await refused({ input: 'x', tools: [WEATHER, WEATHER] }, 'tools[1].name');
  });
});
