// The Vercel AI SDK 6 (`ai` + `@ai-sdk/openai-compatible` 2, the last majors for
// Node 20) pointed at the gateway: generateText, streamText, a multi-step tool
// loop (call → tool result → answer), generateObject with a JSON schema,
// embeddings, and errors a user can read.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, embed, embedMany, generateObject, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { ANSWER, compatWorld, FORECAST_SCHEMA, lastChatBody, MODEL, WEATHER_CALL, WEATHER_TOOL, type CompatWorld } from './support.js';

describe('the AI SDK (ai + @ai-sdk/openai-compatible) against the gateway', () => {
  let world: CompatWorld;
  let provider: ReturnType<typeof createOpenAICompatible>;

  before(async () => {
    world = await compatWorld('aisdk');
    provider = createOpenAICompatible({
      name: 'gateway',
      baseURL: world.baseURL,
      apiKey: world.key,
      includeUsage: true,
      supportsStructuredOutputs: true,
    });
  });
  after(() => world?.close());

  const weather = () =>
    tool({
      description: WEATHER_TOOL.description,
      inputSchema: jsonSchema<{ city: string }>(WEATHER_TOOL.parameters as any),
      execute: async ({ city }) => `sunny in ${city}`,
    });

  it('generates and streams text', async () => {
    const result = await generateText({ model: provider.chatModel(MODEL), prompt: 'hello there', maxRetries: 0 });
    assert.equal(result.text, ANSWER);
    assert.equal(result.finishReason, 'stop');
    assert.equal(result.usage.totalTokens, 7);

    const errors: unknown[] = [];
    const stream = streamText({
      model: provider.chatModel(MODEL),
      prompt: 'hello there',
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error),
    });
    let text = '';
    for await (const delta of stream.textStream) text += delta;
    assert.equal(text, ANSWER);
    assert.deepEqual(errors, []);
    assert.equal((await stream.usage).totalTokens, 7);
    assert.equal(await stream.finishReason, 'stop');
  });

  it('runs a tool loop: the model calls the tool, the SDK runs it, the model answers (JSON)', async () => {
    world.fake.behaviour.toolCalls = [WEATHER_CALL];
    try {
      const result = await generateText({
        model: provider.chatModel(MODEL),
        prompt: 'What is the weather in Paris?',
        tools: { get_weather: weather() },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
      });
      assert.equal(result.steps.length, 2);
      assert.equal(result.steps[0]!.finishReason, 'tool-calls');
      assert.deepEqual(
        result.steps[0]!.toolCalls.map((c) => [c.toolName, c.input]),
        [['get_weather', { city: 'Paris' }]],
      );
      assert.match(result.text, /^Fake answer to tool result: .*sunny in Paris/);
      assert.equal(lastChatBody(world.fake).messages.at(-1).role, 'tool');
    } finally {
      delete world.fake.behaviour.toolCalls;
    }
  });

  it('runs the same tool loop streamed', async () => {
    world.fake.behaviour.toolCalls = [WEATHER_CALL];
    try {
      const errors: unknown[] = [];
      const stream = streamText({
        model: provider.chatModel(MODEL),
        prompt: 'What is the weather in Paris?',
        tools: { get_weather: weather() },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
        onError: ({ error }) => void errors.push(error),
      });
      const calls: unknown[] = [];
      for await (const part of stream.fullStream) if (part.type === 'tool-call') calls.push([part.toolName, part.input]);
      assert.deepEqual(errors, []);
      assert.deepEqual(calls, [['get_weather', { city: 'Paris' }]]);
      assert.match(await stream.text, /^Fake answer to tool result: .*sunny in Paris/);
    } finally {
      delete world.fake.behaviour.toolCalls;
    }
  });

  it('generates an object with a JSON schema (response_format json_schema)', async () => {
    const { object } = await generateObject({
      model: provider.chatModel(MODEL),
      schema: jsonSchema<{ sky: string }>(FORECAST_SCHEMA as any),
      schemaName: 'forecast',
      prompt: 'Will it be clear?',
      maxRetries: 0,
    });
    assert.deepEqual(object, { sky: 'clear' });
    assert.equal(lastChatBody(world.fake).response_format.type, 'json_schema');
  });

  it('embeds', async () => {
    const { embedding } = await embed({ model: provider.textEmbeddingModel(MODEL), value: 'hello there', maxRetries: 0 });
    assert.equal(embedding.length, 16);
    const { embeddings } = await embedMany({ model: provider.textEmbeddingModel(MODEL), values: ['one', 'two'], maxRetries: 0 });
    assert.equal(embeddings.length, 2);
  });

  it('reports the gateway’s error detail', async () => {
    await assert.rejects(generateText({ model: provider.chatModel('no-such-model'), prompt: 'hello', maxRetries: 0 }), (error: unknown) => {
      assert.ok(APICallError.isInstance(error), String(error));
      assert.equal(error.statusCode, 400);
      assert.match(error.message, /no-such-model/);
      return true;
    });
    const unauthorised = createOpenAICompatible({ name: 'gateway', baseURL: world.baseURL, apiKey: 'rdk_not-a-real-key' });
    await assert.rejects(generateText({ model: unauthorised.chatModel(MODEL), prompt: 'hello', maxRetries: 0 }), (error: unknown) => {
      assert.ok(APICallError.isInstance(error));
      assert.equal(error.statusCode, 401);
      assert.match(error.message, /API key|access token/);
      return true;
    });
  });
});
