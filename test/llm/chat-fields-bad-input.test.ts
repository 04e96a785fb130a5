// Bad input to chat/completions' OpenAI fields: every case is a 400 naming the field
// (never a 500, never silently clamped), and no engine is called for any of them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { seedTenant, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { createApiKey } from '../gateway/support.js';
import { gatewayOver } from './chat-support.js';

const CHAT = '/api/llm/v1/chat/completions';
const hello = [{ role: 'user', content: 'hello there' }];
const tool = (name: string, parameters: unknown = { type: 'object', properties: {} }) => ({
  type: 'function',
  function: { name, parameters },
});
const tools = [tool('get_weather')];
/** A schema of `levels` objects nested in one another (JSON nesting, as the bound counts it). */
const nested = (levels: number): Record<string, unknown> => {
  let value: Record<string, unknown> = { type: 'string' };
  for (let i = 1; i < levels; i++) value = { type: 'array', items: value };
  return value;
};
const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } };

describe('llm chat/completions: bad input to the OpenAI fields', () => {
  let gw: TestGateway;
  let fake: FakeEngine;
  let key: string;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['bad-model'] });
    gw = await gatewayOver([fake]);
    const t = await seedTenant(gw, 'bad-fields');
    key = (await createApiKey(gw, t.tenantId, 'bad-fields')).key;
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  const expect400 = async (json: Record<string, unknown>, field: string) => {
    const response = await gw.request('POST', CHAT, { apiKey: key, json: { messages: hello, ...json } });
    const label = `${JSON.stringify(json).slice(0, 200)}`;
    assert.equal(response.status, 400, `${label}: ${response.text.slice(0, 500)}`);
    assert.equal(response.body.code, 'VALIDATION_FAILED', label);
    assert.ok(
      response.body.errors.some((e: { field: string }) => e.field === field),
      `${label} should name ${field}: ${JSON.stringify(response.body.errors)}`,
    );
    assert.ok(response.body.detail.includes(field), response.body.detail);
  };

  it('refuses malformed tools, tool_choice and response_format, naming the field', async () => {
    const before = fake.chatRequests();
    const cases: [Record<string, unknown>, string][] = [
      [{ tools: 'get_weather' }, 'tools'],
      [{ tools: [{ type: 'retrieval', function: { name: 'f' } }] }, 'tools[0].type'],
      [{ tools: [{ type: 'function' }] }, 'tools[0].function'],
      [{ tools: [tool('bad name!')] }, 'tools[0].function.name'],
      [{ tools: [tool('x'.repeat(65))] }, 'tools[0].function.name'],
      [{ tools: [tool('get_weather', 'an object')] }, 'tools[0].function.parameters'],
      [{ tools: [tool('get_weather', [])] }, 'tools[0].function.parameters'],
      [{ tools: [{ ...tool('f'), function: { name: 'f', strict: 'yes' } }] }, 'tools[0].function.strict'],
      [{ tools: [tool('f'), tool('f')] }, 'tools[1].function.name'],
      [{ tools, tool_choice: 'sometimes' }, 'tool_choice'],
      [{ tools, tool_choice: { type: 'function', function: { name: 'missing' } } }, 'tool_choice.function.name'],
      [{ tool_choice: { type: 'function', function: { name: 'get_weather' } } }, 'tool_choice.function.name'],
      [{ tool_choice: 'required' }, 'tool_choice'],
      [{ tools, parallel_tool_calls: 'yes' }, 'parallel_tool_calls'],
      [{ response_format: 'json' }, 'response_format'],
      [{ response_format: { type: 'xml' } }, 'response_format.type'],
      [{ response_format: { type: 'json_schema' } }, 'response_format.json_schema'],
      [{ response_format: { type: 'json_schema', json_schema: { name: 'a b', schema: {} } } }, 'response_format.json_schema.name'],
      [{ response_format: { type: 'json_schema', json_schema: { name: 'a', schema: 'x' } } }, 'response_format.json_schema.schema'],
    ];
    for (const [json, field] of cases) await expect400(json, field);
    assert.equal(fake.chatRequests(), before, 'no invalid request reached an engine');
  });

  it('refuses 1,000 tools, an oversize tool schema and deeply nested schemas (never a 500)', async () => {
    const before = fake.chatRequests();
    await expect400({ tools: Array.from({ length: 1000 }, (_, i) => tool(`f${i}`)) }, 'tools');
    await expect400({ tools: Array.from({ length: 129 }, (_, i) => tool(`f${i}`)) }, 'tools');
    // The bound itself is accepted (128 tools): checked at the end, where the engine is called.
    const huge = { type: 'object', description: 'x'.repeat(70 * 1024) };
    await expect400({ tools: [tool('a'), tool('b'), tool('c'), tool('d', huge)] }, 'tools[3].function.parameters');
    await expect400({ tools: [tool('a', nested(33))] }, 'tools[0].function.parameters');
    await expect400(
      { response_format: { type: 'json_schema', json_schema: { name: 's', schema: nested(40) } } },
      'response_format.json_schema.schema',
    );
    // Far deeper than any recursion could walk (written by hand: JSON.stringify itself cannot):
    // refused at the bound, without walking further.
    const deep = `{"messages":${JSON.stringify(hello)},"tools":[{"type":"function","function":{"name":"a","parameters":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}}]}`;
    const response = await gw.request('POST', CHAT, { apiKey: key, body: deep, headers: { 'content-type': 'application/json' } });
    assert.equal(response.status, 400, response.text.slice(0, 500));
    assert.match(response.body.detail, /tools\[0\]\.function\.parameters: nests deeper than 32 levels/);
    assert.equal(fake.chatRequests(), before);

    // At the bounds: 128 tools, 32 levels.
    const ok = await gw.request('POST', CHAT, {
      apiKey: key,
      json: { messages: hello, tools: [...Array.from({ length: 127 }, (_, i) => tool(`f${i}`)), tool('deep', nested(32))] },
    });
    assert.equal(ok.status, 200, ok.text.slice(0, 500));
  });

  it('refuses out-of-bounds and mistyped sampling fields, naming each', async () => {
    const before = fake.chatRequests();
    const cases: [Record<string, unknown>, string][] = [
      [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      [{ stop: 7 }, 'stop'],
      [{ stop: '' }, 'stop'],
      [{ top_p: 1.5 }, 'top_p'],
      [{ top_p: -0.1 }, 'top_p'],
      [{ top_p: '0.5' }, 'top_p'],
      [{ seed: 1.5 }, 'seed'],
      [{ seed: 'random' }, 'seed'],
      [{ n: 0 }, 'n'],
      [{ n: 9 }, 'n'],
      [{ n: 1_000_000 }, 'n'],
      [{ n: 'two' }, 'n'],
      [{ user: 'u'.repeat(257) }, 'user'],
      [{ user: 5 }, 'user'],
      [{ presence_penalty: 2.5 }, 'presence_penalty'],
      [{ frequency_penalty: -3 }, 'frequency_penalty'],
      [{ logit_bias: { abc: 1 } }, 'logit_bias'],
      [{ logit_bias: { '50256': 101 } }, 'logit_bias[50256]'],
      [{ logit_bias: Object.fromEntries(Array.from({ length: 301 }, (_, i) => [String(i), 1])) }, 'logit_bias'],
      [{ logprobs: 'yes' }, 'logprobs'],
      [{ logprobs: true, top_logprobs: 21 }, 'top_logprobs'],
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ logprobs: false, top_logprobs: 2 }, 'top_logprobs'],
      [{ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
      [{ metadata: { k: 'v'.repeat(513) } }, 'metadata.k'],
      [{ metadata: { k: 5 } }, 'metadata.k'],
      [{ metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata'],
      [{ max_completion_tokens: 0 }, 'max_completion_tokens'],
      [{ max_completion_tokens: 8193 }, 'max_completion_tokens'],
      [{ max_completion_tokens: 100, max_tokens: 50 }, 'max_completion_tokens'],
    ];
    for (const [json, field] of cases) await expect400(json, field);
    assert.equal(fake.chatRequests(), before, 'no invalid request reached an engine');
  });

  it('refuses messages whose fields do not fit their role, and malformed content parts', async () => {
    const before = fake.chatRequests();
    const cases: [unknown[], string][] = [
      [[{ role: 'tool', content: 'sunny' }], 'messages[0].tool_call_id'],
      [[{ role: 'user', content: 'x', tool_call_id: 'call_1' }], 'messages[0].tool_call_id'],
      [[{ role: 'user', content: 'x', tool_calls: [call] }], 'messages[0].tool_calls'],
      [[{ role: 'user', content: null }], 'messages[0].content'],
      [[...hello, { role: 'assistant', content: null }], 'messages[1].content'],
      [[...hello, { role: 'assistant' }], 'messages[1].content'],
      [[...hello, { role: 'assistant', content: null, tool_calls: [{ ...call, type: 'code' }] }], 'messages[1].tool_calls[0].type'],
      [[...hello, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function' }] }], 'messages[1].tool_calls[0].function'],
      [[{ role: 'tool', tool_call_id: 'c', content: null }], 'messages[0].content'],
      [[{ role: 'user', content: [] }], 'messages[0].content'],
      [[{ role: 'user', content: [{ type: 'audio', audio: {} }] }], 'messages[0].content[0].type'],
      [[{ role: 'user', content: [{ type: 'text' }] }], 'messages[0].content[0].text'],
      [[{ role: 'user', content: [{ type: 'text', text: 5 }] }], 'messages[0].content[0].text'],
      [[{ role: 'user', content: [{ type: 'image_url' }] }], 'messages[0].content[0].image_url'],
      [[{ role: 'user', content: [{ type: 'image_url', image_url: { url: 5 } }] }], 'messages[0].content[0].image_url.url'],
      [
        [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'max' } }] }],
        'messages[0].content[0].image_url.detail',
      ],
      [
        [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }, ...hello],
        'messages[0].content[0].type',
      ],
      [[{ role: 'user', content: 'x', name: 'n'.repeat(65) }], 'messages[0].name'],
      [[{ role: 'user', content: Array.from({ length: 257 }, () => ({ type: 'text', text: 'x' })) }], 'messages[0].content'],
    ];
    for (const [messages, field] of cases) await expect400({ messages }, field);
    assert.equal(fake.chatRequests(), before, 'no invalid request reached an engine');
  });
});
