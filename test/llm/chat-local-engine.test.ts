// chat/completions end to end on the built-in `local` engine (llama.cpp) with the
// suite's tiny random-weight model, driven by the official openai SDK: a
// json_schema response_format reaches llama.cpp's grammar and the answer is
// exactly a JSON value of the schema; a forced tool call comes back as OpenAI's
// tool_calls; a field llama.cpp cannot honour is a 400 naming it, with the SDK's
// error reading it. The model's text is gibberish: shape, not quality, is checked.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { TEST_TMP } from '../helpers/paths.js';
import { writeTinyGguf } from '../helpers/tiny-gguf.js';
import { eventually } from '../helpers/eventually.js';
import { seedWorld } from '../helpers/world.js';

const schema = {
  type: 'object',
  properties: { sky: { enum: ['clear', 'cloudy'] }, windy: { type: 'boolean' } },
  required: ['sky', 'windy'],
  additionalProperties: false,
};
const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { enum: ['Paris', 'Rome'] } }, required: ['city'], additionalProperties: false },
  },
};

describe('chat/completions on the local engine (tiny GGUF)', () => {
  let gw: TestGateway;
  let modelsDir: string;
  let client: OpenAI;

  before(async () => {
    modelsDir = mkdtempSync(path.join(TEST_TMP, 'models-'));
    // Tool documentation takes prompt room: a context larger than the tiny model's default.
    writeTinyGguf(path.join(modelsDir, 'tiny-chat.gguf'), { seed: 1, contextLength: 4096 });
    gw = await startGateway({ GATEWAY_LOCAL_ENGINE: 'on', GATEWAY_LOCAL_THREADS: '1', GATEWAY_MODELS_DIR: modelsDir });
    const world = await seedWorld(gw, 'local-chat');
    client = new OpenAI({ apiKey: world.a.key.key, baseURL: `${gw.url}/api/llm/v1`, maxRetries: 0 });
    await eventually(
      'the local engine lists the model',
      async () => {
        const ids: string[] = [];
        for await (const model of client.models.list()) ids.push(model.id);
        return ids.includes('tiny-chat');
      },
      30_000,
    );
  });
  after(async () => {
    await gw?.close();
    rmSync(modelsDir, { recursive: true, force: true });
  });

  it('response_format json_schema: the answer is a JSON value of the schema', async () => {
    const completion = await client.chat.completions.create({
      model: 'tiny-chat',
      messages: [{ role: 'user', content: 'Weather?' }],
      max_tokens: 60,
      temperature: 0,
      response_format: { type: 'json_schema', json_schema: { name: 'forecast', schema, strict: true } },
    });
    const answer = JSON.parse(completion.choices[0]!.message.content ?? '');
    assert.deepEqual(Object.keys(answer).sort(), ['sky', 'windy']);
    assert.ok(['clear', 'cloudy'].includes(answer.sky));
    assert.equal(typeof answer.windy, 'boolean');
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
  });

  it('a forced tool call comes back as tool_calls, JSON and streamed', async () => {
    const request = {
      model: 'tiny-chat',
      messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
      max_tokens: 40,
      temperature: 0,
      tools: [weatherTool],
      tool_choice: { type: 'function' as const, function: { name: 'get_weather' } },
    };
    const completion = await client.chat.completions.create(request);
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    const call = choice.message.tool_calls?.[0];
    assert.ok(call && call.type === 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.ok(['Paris', 'Rome'].includes(JSON.parse(call.function.arguments).city));
    assert.ok(completion.usage!.completion_tokens > 0);

    const stream = client.chat.completions.stream({ ...request, stream_options: { metadata_frame: 'chunk' } as any });
    const final = await stream.finalChatCompletion();
    const streamed = final.choices[0]!.message.tool_calls?.[0];
    assert.ok(streamed && streamed.type === 'function');
    assert.equal(streamed.function.name, 'get_weather');
    assert.ok(['Paris', 'Rome'].includes(JSON.parse(streamed.function.arguments).city));
  });

  it('a field llama.cpp cannot honour is a 400 naming it', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'tiny-chat', messages: [{ role: 'user', content: 'hi' }], n: 2 }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.match(error.message, /\bn\b/);
        return true;
      },
    );
  });
});
