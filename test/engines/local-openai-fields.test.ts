// The `local` engine's OpenAI fields on a generated tiny model (random weights:
// its text is gibberish). What is checked is that each field reaches llama.cpp
// (its grammar, sampler, stop detection) and that the answer comes back shaped as
// the contract says; and that every field it cannot honour is refused, by name,
// before any model is loaded.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { LocalEngine } from '../../src/engines/local/adapter.js';
import type { ChatChunk, ChatMessage, ChatOptions, ChatRequest, ChatResult } from '../../src/engines/types.js';
import { TEST_TMP } from '../helpers/paths.js';
import { writeTinyGguf } from '../helpers/tiny-gguf.js';
import { chunksOf, collect, never, rejectsWith } from './support.js';

const root = path.join(TEST_TMP, `local-openai-${process.pid}`);
const modelsDir = path.join(root, 'models');
const logs: string[] = [];

const COLORS = ['red', 'green', 'blue'];
const SIZES = [1, 2, 3];
/** Only enums and a boolean: every value the grammar admits is one the test can check exactly. */
const enumSchema = {
  type: 'object',
  properties: { color: { enum: COLORS }, size: { enum: SIZES }, ok: { type: 'boolean' } },
  required: ['color', 'size', 'ok'],
  additionalProperties: false,
};
const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { enum: ['Paris', 'Rome'] }, unit: { enum: ['C', 'F'] } },
      required: ['city', 'unit'],
    },
  },
};
const timeTool = {
  type: 'function' as const,
  function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { enum: ['UTC', 'CET'] } }, required: ['zone'] } },
};

function request(options: ChatOptions = {}, overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: 'tiny',
    messages: [{ role: 'user', content: 'hello' }],
    maxTokens: 40,
    temperature: 0,
    options,
    signal: never,
    ...overrides,
  };
}

function assertMatchesEnumSchema(value: unknown): void {
  assert.deepEqual(Object.keys(value as object).sort(), ['color', 'ok', 'size']);
  const v = value as { color: unknown; size: unknown; ok: unknown };
  assert.ok(COLORS.includes(v.color as string), String(v.color));
  assert.ok(SIZES.includes(v.size as number), String(v.size));
  assert.equal(typeof v.ok, 'boolean');
}

function startedChildren(): number {
  return logs.filter((l) => /local engine process \d+ started/.test(l)).length;
}

describe('local engine: OpenAI fields', () => {
  let engine: LocalEngine;

  before(() => {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(modelsDir, { recursive: true });
    // Tool documentation alone is ~900 tokens of prompt: a context larger than the default 256.
    writeTinyGguf(path.join(modelsDir, 'tiny.gguf'), { seed: 1, contextLength: 4096 });
    engine = new LocalEngine({
      modelsDir,
      threads: 1,
      contextSize: 4096,
      timeoutMs: 60_000,
      pullMaxBytes: 1024,
      onLog: (level, message) => logs.push(`${level}: ${message}`),
    });
  });
  after(async () => {
    await engine.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('response_format json_schema: exactly a JSON value matching the schema, JSON and streamed alike', async () => {
    const options: ChatOptions = {
      response_format: { type: 'json_schema', json_schema: { name: 'pick', schema: enumSchema, strict: true } },
    };
    const result = await engine.chat(request(options, { maxTokens: 60 }));
    assert.equal(result.finishReason, 'stop', result.content);
    assertMatchesEnumSchema(JSON.parse(result.content));
    const chunks = await collect(chunksOf(await engine.chatStream(request(options, { maxTokens: 60 }))));
    const text = chunks.map((c) => (c.type === 'delta' ? c.content : '')).join('');
    assert.equal(text, result.content);
    assert.deepEqual(chunks.at(-1), { type: 'end', finishReason: 'stop', usage: result.usage });
    // Nullable objects (a type array) and anyOf translate to the grammar's alternatives.
    const nullable = {
      type: 'object',
      properties: {
        pick: { type: ['object', 'null'], properties: { color: { enum: COLORS } } },
        n: { anyOf: [{ enum: SIZES }, { type: 'null' }] },
      },
    };
    const other = await engine.chat(
      request({ response_format: { type: 'json_schema', json_schema: { name: 'n', schema: nullable } } }, { maxTokens: 60 }),
    );
    const value = JSON.parse(other.content) as { pick: { color: string } | null; n: number | null };
    assert.ok(value.pick === null || COLORS.includes(value.pick.color), other.content);
    assert.ok(value.n === null || SIZES.includes(value.n), other.content);
  });

  it('response_format json_object: the answer starts a JSON value', async () => {
    const result = await engine.chat(request({ response_format: { type: 'json_object' } }, { maxTokens: 20 }));
    assert.match(result.content, /^\s*[[{"\-0-9tfn]/, result.content);
    const plain = await engine.chat(request({}, { maxTokens: 20 }));
    assert.notEqual(result.content, plain.content, 'the grammar changed what was decoded');
  });

  it('tool_choice naming a function: a call whose arguments parse and match its schema (JSON and streamed)', async () => {
    const options: ChatOptions = { tools: [weatherTool, timeTool], tool_choice: { type: 'function', function: { name: 'get_weather' } } };
    const result = await engine.chat(request(options, { maxTokens: 60 }));
    assert.equal(result.finishReason, 'tool_calls');
    assert.equal(result.content, '');
    assert.equal(result.toolCalls?.length, 1);
    const [call] = result.toolCalls!;
    assert.match(call!.id, /^call_[\w-]{16}$/);
    assert.equal(call!.type, 'function');
    assert.equal(call!.function.name, 'get_weather');
    const args = JSON.parse(call!.function.arguments) as { city: string; unit: string };
    assert.deepEqual(Object.keys(args).sort(), ['city', 'unit']);
    assert.ok(['Paris', 'Rome'].includes(args.city) && ['C', 'F'].includes(args.unit), call!.function.arguments);
    assert.ok(result.usage.completionTokens! > 0 && result.usage.promptTokens! > 0);

    const chunks: ChatChunk[] = await collect(chunksOf(await engine.chatStream(request(options, { maxTokens: 60 }))));
    const pieces = chunks.filter((c) => c.type === 'tool_call');
    assert.ok(pieces.length >= 1 && chunks.every((c) => c.type !== 'delta'));
    assert.match(String(pieces[0]!.id), /^call_/);
    assert.equal(pieces[0]!.name, 'get_weather');
    assert.ok(pieces.slice(1).every((p) => p.index === 0 && p.id === undefined && p.name === undefined));
    assert.equal(pieces.map((p) => p.arguments).join(''), call!.function.arguments);
    assert.deepEqual(chunks.at(-1), { type: 'end', finishReason: 'tool_calls', usage: result.usage });
  });

  it('tool_choice "required": a call to one of the tools, its arguments matching that tool', async () => {
    const options: ChatOptions = { tools: [weatherTool, timeTool], tool_choice: 'required' };
    const result = await engine.chat(request(options, { maxTokens: 80 }));
    assert.equal(result.finishReason, 'tool_calls', JSON.stringify(result));
    const [call] = result.toolCalls!;
    const args = JSON.parse(call!.function.arguments) as Record<string, string>;
    if (call!.function.name === 'get_time') assert.deepEqual(Object.keys(args), ['zone']);
    else {
      assert.equal(call!.function.name, 'get_weather');
      assert.ok(['Paris', 'Rome'].includes(args.city!), call!.function.arguments);
    }
    const streamed = await collect(chunksOf(await engine.chatStream(request(options, { maxTokens: 80 }))));
    assert.deepEqual(
      streamed.map((c) => (c.type === 'tool_call' ? { ...c, id: 'x' } : c)),
      [
        { type: 'tool_call', index: 0, id: 'x', name: call!.function.name, arguments: call!.function.arguments },
        { type: 'end', finishReason: 'tool_calls', usage: result.usage },
      ],
    );
  });

  it('tool_choice "auto" offers the tools to the model (documented in the prompt); "none" does not', async () => {
    const plain = await engine.chat(request({}, { maxTokens: 5 }));
    const auto = await engine.chat(request({ tools: [weatherTool], tool_choice: 'auto', parallel_tool_calls: false }, { maxTokens: 5 }));
    const none = await engine.chat(request({ tools: [weatherTool], tool_choice: 'none' }, { maxTokens: 5 }));
    assert.ok(auto.usage.promptTokens! > plain.usage.promptTokens! + 50, `${auto.usage.promptTokens} vs ${plain.usage.promptTokens}`);
    assert.equal(none.usage.promptTokens, plain.usage.promptTokens);
    assert.ok(['stop', 'length', 'tool_calls'].includes(auto.finishReason));
  });

  it('a tool-call round trip: assistant tool_calls and tool results reach the prompt', async () => {
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"C"}' } };
    const messages: ChatMessage[] = [
      { role: 'developer', content: 'be brief' },
      { role: 'user', content: 'weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temperature": 21}' },
    ];
    const withResult = await engine.chat(request({ tools: [weatherTool] }, { messages, maxTokens: 5 }));
    const shorter = await engine.chat(request({ tools: [weatherTool] }, { messages: messages.slice(0, 2), maxTokens: 5 }));
    assert.ok(withResult.usage.promptTokens! > shorter.usage.promptTokens!);
    // developer is system.
    const asSystem = await engine.chat(
      request({ tools: [weatherTool] }, { messages: [{ ...messages[0]!, role: 'system' }, messages[1]!], maxTokens: 5 }),
    );
    assert.equal(asSystem.usage.promptTokens, shorter.usage.promptTokens);

    await rejectsWith(
      engine.chat(request({}, { messages: [...messages.slice(0, 3), { role: 'tool', tool_call_id: 'call_2', content: 'x' }] })),
      'unsupported',
      /^messages\[3\]\.tool_call_id: /,
    );
    await rejectsWith(
      engine.chat(request({}, { messages: messages.slice(0, 3) })),
      'unsupported',
      /^messages\[2\]\.tool_calls\[0\]: no tool message answers call "call_1"/,
    );
  });

  it('seed: the same seed samples the same answer; another seed another one', async () => {
    const sampled = (seed: number) => engine.chat(request({ seed, top_p: 1 }, { temperature: 1, maxTokens: 16 }));
    const first = await sampled(7);
    assert.deepEqual(await sampled(7), first);
    const others = [await sampled(8), await sampled(9)];
    assert.ok(
      others.some((o) => o.content !== first.content),
      'different seeds, different samples',
    );
    assert.deepEqual(
      await engine.chat(request({ seed: -7 }, { temperature: 1, maxTokens: 16 })),
      await engine.chat(request({ seed: -7 }, { temperature: 1, maxTokens: 16 })),
    );
  });

  it('stop: the answer ends before the first stop string, finish reason stop', async () => {
    const full = (await engine.chat(request({}, { maxTokens: 40 }))).content;
    const at = full.search(/[a-z]{2}/i);
    assert.ok(at > 0, `an ASCII pair to stop at in ${JSON.stringify(full)}`);
    const stop = full.slice(at, at + 2);
    const result = await engine.chat(request({ stop: ['never-there', stop] }, { maxTokens: 40 }));
    assert.equal(result.content, full.slice(0, full.indexOf(stop)));
    assert.equal(result.finishReason, 'stop');
    const streamed = await collect(chunksOf(await engine.chatStream(request({ stop: [stop] }, { maxTokens: 40 }))));
    assert.equal(streamed.map((c) => (c.type === 'delta' ? c.content : '')).join(''), result.content);
  });

  it('presence and frequency penalties and logit_bias reach the sampler', async () => {
    // Token 267 is the piece "a" of the tiny vocabulary: +100 makes greedy decoding pick it every time.
    const biased = await engine.chat(request({ logit_bias: { '267': 100 } }, { maxTokens: 8 }));
    assert.equal(biased.content, 'aaaaaaaa');
    // +8 makes "a" the usual pick; penalties on repeating it change the greedy answer.
    const leaning = (options: ChatOptions = {}) => engine.chat(request({ logit_bias: { '267': 8 }, ...options }, { maxTokens: 12 }));
    const base = (await leaning()).content;
    assert.ok(base.split('a').length > 5, base);
    for (const penalty of [{ presence_penalty: 2 }, { frequency_penalty: 0.5 }]) {
      const penalised = (await leaning(penalty)).content;
      assert.ok(penalised.split('a').length < base.split('a').length, `${JSON.stringify(penalty)}: ${penalised} vs ${base}`);
    }
    await rejectsWith(
      engine.chatStream(request({ logit_bias: { '99999': 5 } })),
      'unsupported',
      /^logit_bias: token 99999 is not in the model's vocabulary \(273 tokens\)/,
    );
    await rejectsWith(engine.chat(request({ logit_bias: { '2': -100 } })), 'unsupported', /^logit_bias: token 2 ends generation/);
    await rejectsWith(engine.chat(request({ logit_bias: { abc: 1 } })), 'unsupported', /^logit_bias: "abc" is not a token id/);
  });

  it('user, metadata, n = 1, logprobs false and message names are accepted', async () => {
    const plain = await engine.chat(request({}, { maxTokens: 5 }));
    const same = await engine.chat(
      request(
        { user: 'u-1', metadata: { a: 'b' }, n: 1, logprobs: false, response_format: { type: 'text' } },
        { maxTokens: 5, messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }], name: 'ann' }] },
      ),
    );
    assert.deepEqual(same, plain);
  });

  it('fields llama.cpp cannot honour are refused by name, before any model is looked up', async () => {
    const started = startedChildren();
    // An unknown model: the refusal comes first, so nothing was resolved or loaded.
    const refused = (options: ChatOptions, field: RegExp, overrides: Partial<ChatRequest> = {}) =>
      rejectsWith(engine.chatStream(request(options, { model: 'no-such-model', ...overrides })), 'unsupported', field);
    await refused({ n: 2 }, /^n: /);
    await refused({ logprobs: true }, /^logprobs: /);
    await refused({ top_logprobs: 3 }, /^top_logprobs: /);
    await refused({}, /^messages\[0\]\.content\[1\]: .*image/, {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } },
          ],
        },
      ],
    });
    const schema = (s: Record<string, unknown>): ChatOptions => ({
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: s } },
    });
    await refused(
      schema({ type: 'object', properties: { age: { type: 'integer', minimum: 0 } } }),
      /^response_format\.json_schema\.schema: .*"minimum" \(at \/properties\/age\/minimum\)/,
    );
    await refused(schema({ type: 'string', format: 'email' }), /^response_format\.json_schema\.schema: .*date-time, time and date/);
    await refused(schema({ $ref: '#/definitions/x' }), /^response_format\.json_schema\.schema: .*"#\/\$defs\/<name>"/);
    await refused(schema({ type: 'object', allOf: [] }), /^response_format\.json_schema\.schema: .*"allOf"/);
    await refused(schema({ type: 'frob' }), /^response_format\.json_schema\.schema: type must be/);
    await refused(schema({ properties: {} }), /needs a "type"/);
    await refused(schema({ type: 'object', required: ['a'] }), /"a" is required but not among the properties/);
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'array', items: deep };
    await refused(schema(deep), /nested up to 32 levels/);
    const badTool = {
      type: 'function' as const,
      function: { name: 'f', parameters: { type: 'object', properties: { s: { type: 'string', pattern: '^a' } } } },
    };
    await refused({ tools: [weatherTool, badTool] }, /^tools\[1\]\.function\.parameters: .*"pattern"/);
    await refused({ tools: [badTool], tool_choice: 'required' }, /^tools\[0\]\.function\.parameters: /);
    await refused({ tools: [weatherTool, weatherTool] }, /^tools\[1\]\.function\.name: /);
    await refused(
      { tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'nope' } } },
      /^tool_choice\.function\.name: /,
    );
    await refused({ tools: [weatherTool], response_format: { type: 'json_object' } }, /^response_format: .*tool_choice/);
    assert.equal(startedChildren(), started, 'refusals start nothing');
  });

  it("a schema llama.cpp's grammar parser refuses is an 'unsupported' answer; the child serving every model lives on", async () => {
    const started = startedChildren();
    const leftRecursive = { $defs: { a: { anyOf: [{ $ref: '#/$defs/a' }, { type: 'null' }] } }, $ref: '#/$defs/a' };
    // Refused before the stream opens (the gateway can still answer 400), not mid-stream.
    await rejectsWith(
      engine.chatStream(request({ response_format: { type: 'json_schema', json_schema: { name: 'r', schema: leftRecursive } } })),
      'unsupported',
      /^response_format\.json_schema\.schema: llama\.cpp cannot decode under this schema's grammar/,
    );
    const after: ChatResult = await engine.chat(request({}, { maxTokens: 3 }));
    assert.equal(after.usage.completionTokens, 3);
    assert.equal(startedChildren(), started, 'the same child answered');
    // A recursive schema that the grammar can express works.
    const tree = {
      $defs: { n: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/n' }, maxItems: 1 } } } },
      $ref: '#/$defs/n',
    };
    const result = await engine.chat(
      request({ response_format: { type: 'json_schema', json_schema: { name: 't', schema: tree } } }, { maxTokens: 40 }),
    );
    if (result.finishReason === 'stop') assert.ok(Array.isArray((JSON.parse(result.content) as { kids: unknown }).kids));
  });
});
