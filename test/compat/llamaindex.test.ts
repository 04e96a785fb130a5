// LlamaIndex TS (@llamaindex/openai 0.4) pointed at the gateway: chat, streaming,
// a tool-calling round trip, embeddings.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OpenAI, OpenAIEmbedding } from '@llamaindex/openai';
import { ANSWER, compatWorld, FORECAST_SCHEMA, lastChatBody, MODEL, WEATHER_CALL, WEATHER_TOOL, type CompatWorld } from './support.js';

describe('LlamaIndex TS (@llamaindex/openai) against the gateway', () => {
  let world: CompatWorld;
  let llm: OpenAI;

  before(async () => {
    world = await compatWorld('llamaindex');
    llm = new OpenAI({ model: MODEL, apiKey: world.key, baseURL: world.baseURL, maxRetries: 0 });
  });
  after(() => world?.close());

  it('chats and streams', async () => {
    const answer = await llm.chat({ messages: [{ role: 'user', content: 'hello there' }] });
    assert.equal(answer.message.content, ANSWER);
    let text = '';
    for await (const chunk of await llm.chat({ messages: [{ role: 'user', content: 'hello there' }], stream: true })) text += chunk.delta;
    assert.equal(text, ANSWER);
  });

  it('calls a tool and answers from its result', async () => {
    world.fake.behaviour.toolCalls = [WEATHER_CALL];
    try {
      const tools = [
        {
          metadata: { name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.parameters as any },
          call: async ({ city }: { city: string }) => `sunny in ${city}`,
        },
      ];
      const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
      const called = await llm.chat({ messages: [question], tools });
      const toolCall = (called.message.options as any)?.toolCall?.[0];
      assert.equal(toolCall?.name, 'get_weather');
      assert.deepEqual(typeof toolCall.input === 'string' ? JSON.parse(toolCall.input) : toolCall.input, { city: 'Paris' });

      const answer = await llm.chat({
        messages: [
          question,
          called.message,
          {
            role: 'user',
            content: 'sunny in Paris',
            options: { toolResult: { id: toolCall.id, result: 'sunny in Paris', isError: false } },
          },
        ],
        tools,
      });
      assert.equal(answer.message.content, 'Fake answer to tool result: sunny in Paris');
      assert.equal(lastChatBody(world.fake).messages.at(-1).role, 'tool');
    } finally {
      delete world.fake.behaviour.toolCalls;
    }
  });

  it('streams a tool call', async () => {
    world.fake.behaviour.toolCalls = [WEATHER_CALL];
    try {
      const tools = [
        {
          metadata: { name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.parameters as any },
          call: async ({ city }: { city: string }) => `sunny in ${city}`,
        },
      ];
      const calls: any[] = [];
      const stream = await llm.chat({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }], tools, stream: true });
      for await (const chunk of stream) calls.push(...((chunk.options as any)?.toolCall ?? []));
      const last = calls.at(-1);
      assert.equal(last?.name, 'get_weather');
      assert.deepEqual(typeof last.input === 'string' ? JSON.parse(last.input) : last.input, { city: 'Paris' });
    } finally {
      delete world.fake.behaviour.toolCalls;
    }
  });

  it('returns JSON for a json_schema response_format', async () => {
    // additionalChatOptions is typed without response_format: passed loosely.
    const additionalChatOptions = {
      response_format: { type: 'json_schema', json_schema: { name: 'forecast', schema: FORECAST_SCHEMA } },
    } as any;
    const answer = await llm.chat({ messages: [{ role: 'user', content: 'Will it be clear?' }], additionalChatOptions });
    assert.deepEqual(JSON.parse(String(answer.message.content)), { sky: 'clear' });
  });

  it('reports the gateway’s error detail', async () => {
    const stranger = new OpenAI({ model: 'no-such-model', apiKey: world.key, baseURL: world.baseURL, maxRetries: 0 });
    await assert.rejects(stranger.chat({ messages: [{ role: 'user', content: 'hello' }] }), /no-such-model/);
  });

  it('embeds', async () => {
    const embedder = new OpenAIEmbedding({ model: MODEL, apiKey: world.key, baseURL: world.baseURL, maxRetries: 0 });
    const vector = await embedder.getTextEmbedding('hello there');
    assert.equal(vector.length, 16);
  });
});
