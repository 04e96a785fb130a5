// LangChain JS (@langchain/openai 1.5, the last major for Node 20) pointed at the
// gateway as at OpenAI: chat, streaming, a tool-calling round trip (JSON and
// streamed), structured output through response_format json_schema, embeddings,
// and an error a user can read.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { type AIMessageChunk, HumanMessage, ToolMessage, type AIMessage } from '@langchain/core/messages';
import { ANSWER, compatWorld, FORECAST_SCHEMA, lastChatBody, MODEL, WEATHER_CALL, WEATHER_TOOL, type CompatWorld } from './support.js';

describe('LangChain (@langchain/openai) against the gateway', () => {
  let world: CompatWorld;
  let chat: ChatOpenAI;

  before(async () => {
    world = await compatWorld('langchain');
    chat = new ChatOpenAI({ model: MODEL, apiKey: world.key, configuration: { baseURL: world.baseURL }, maxRetries: 0 });
  });
  after(() => world?.close());

  it('invokes and streams', async () => {
    const answer = await chat.invoke('hello there');
    assert.equal(answer.content, ANSWER);
    assert.equal(answer.usage_metadata?.total_tokens, 7);

    let text = '';
    let usage: AIMessageChunk['usage_metadata'];
    for await (const chunk of await chat.stream('hello there')) {
      text += chunk.content;
      usage = chunk.usage_metadata ?? usage;
    }
    assert.equal(text, ANSWER);
    assert.equal(usage?.total_tokens, 7);
  });

  it('calls a tool and answers from its result (JSON)', async () => {
    world.fake.behaviour.toolCalls = [WEATHER_CALL];
    try {
      const withTools = chat.bindTools([{ type: 'function', function: WEATHER_TOOL }]);
      const question = new HumanMessage('What is the weather in Paris?');
      const call = (await withTools.invoke([question])) as AIMessage;
      assert.equal(call.tool_calls?.length, 1);
      assert.equal(call.tool_calls![0]!.name, 'get_weather');
      assert.deepEqual(call.tool_calls![0]!.args, { city: 'Paris' });
      assert.deepEqual(lastChatBody(world.fake).tools, [{ type: 'function', function: WEATHER_TOOL }]);

      const result = new ToolMessage({ content: 'sunny, 21 °C', tool_call_id: call.tool_calls![0]!.id! });
      const answer = await withTools.invoke([question, call, result]);
      assert.equal(answer.content, 'Fake answer to tool result: sunny, 21 °C');
      const sent = lastChatBody(world.fake).messages;
      assert.equal(sent[1].tool_calls[0].function.name, 'get_weather');
      assert.equal(sent[2].role, 'tool');
      assert.equal(sent[2].tool_call_id, call.tool_calls![0]!.id);
    } finally {
      delete world.fake.behaviour.toolCalls;
    }
  });

  it('streams a tool call in pieces that concatenate to the call', async () => {
    world.fake.behaviour.toolCalls = [WEATHER_CALL];
    try {
      const withTools = chat.bindTools([{ type: 'function', function: WEATHER_TOOL }]);
      let whole: AIMessageChunk | undefined;
      for await (const chunk of await withTools.stream('What is the weather in Paris?')) whole = whole ? whole.concat(chunk) : chunk;
      assert.equal(whole?.tool_calls?.length, 1);
      assert.equal(whole!.tool_calls![0]!.name, 'get_weather');
      assert.deepEqual(whole!.tool_calls![0]!.args, { city: 'Paris' });
      assert.match(whole!.tool_calls![0]!.id ?? '', /\S/);
    } finally {
      delete world.fake.behaviour.toolCalls;
    }
  });

  it('returns structured output through response_format json_schema', async () => {
    const structured = chat.withStructuredOutput(FORECAST_SCHEMA, { name: 'forecast', method: 'jsonSchema' });
    const forecast = await structured.invoke('Will it be clear?');
    assert.deepEqual(forecast, { sky: 'clear' });
    const format = lastChatBody(world.fake).response_format;
    assert.equal(format.type, 'json_schema');
    assert.equal(format.json_schema.name, 'forecast');
  });

  it('embeds', async () => {
    const embeddings = new OpenAIEmbeddings({ model: MODEL, apiKey: world.key, configuration: { baseURL: world.baseURL }, maxRetries: 0 });
    const vector = await embeddings.embedQuery('hello there');
    assert.equal(vector.length, 16);
    const many = await embeddings.embedDocuments(['one', 'two']);
    assert.equal(many.length, 2);
    assert.notDeepEqual(many[0], many[1]);
  });

  it('reports the gateway’s error detail', async () => {
    const stranger = new ChatOpenAI({
      model: 'no-such-model',
      apiKey: world.key,
      configuration: { baseURL: world.baseURL },
      maxRetries: 0,
    });
    await assert.rejects(stranger.invoke('hello'), (error: Error & { status?: number }) => {
      assert.equal(error.status, 400);
      assert.match(error.message, /no-such-model/);
      return true;
    });
  });
});
