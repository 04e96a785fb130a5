// The Ollama adapter's translation of OpenAI's chat fields to /api/chat and back,
// against the loopback fake, which records the exact native body. Answers the fake
// would never give are in ollama-untrusted-answers.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OllamaEngine } from '../../src/engines/ollama/adapter.js';
import type { ChatMessage, ChatOptions, ChatRequest } from '../../src/engines/types.js';
import { startFakeOllama, type FakeEngine } from '../helpers/fake-engines/index.js';
import { chatRequest, chunksOf, collect, rejectsWith, text } from './support.js';

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

function withOptions(options: ChatOptions, overrides: Partial<ChatRequest> = {}): ChatRequest {
  return chatRequest({ options, ...overrides });
}

/** A conversation after one tool call: the call (content null) and its result. */
const afterCall: ChatMessage[] = [
  { role: 'user', content: 'weather in Paris?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21 C' },
];

describe('Ollama engine: OpenAI chat fields', () => {
  let fake: FakeEngine;
  let engine: OllamaEngine;
  const lastBody = () => fake.requests.at(-1)!.body;

  before(async () => {
    fake = await startFakeOllama();
    engine = new OllamaEngine({ url: fake.url, timeoutMs: 5000 });
  });
  after(async () => {
    await engine.close();
    await fake.close();
  });

  describe('the native request', () => {
    it('sends a plain chat as before: its messages as they came, only num_predict and temperature', async () => {
      const request = chatRequest();
      await engine.chat(request);
      const body = lastBody();
      assert.deepEqual(body, {
        model: 'fake-small',
        messages: request.messages,
        stream: false,
        options: { num_predict: 100, temperature: 0.2 },
      });
      await engine.chat(withOptions({}));
      assert.deepEqual(Object.keys(lastBody()).sort(), ['messages', 'model', 'options', 'stream']);
    });

    it('maps every sampling field into options, tools and format beside them, and leaves user and metadata out', async () => {
      const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
      await engine.chat(
        withOptions({
          tools: [WEATHER_TOOL],
          tool_choice: 'auto',
          parallel_tool_calls: true,
          response_format: { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } },
          stop: ['\n\n', 'END'],
          top_p: 0.9,
          seed: 42,
          n: 1,
          user: 'user-1234',
          presence_penalty: 0.5,
          frequency_penalty: -0.5,
          logit_bias: {},
          logprobs: true,
          top_logprobs: 2,
          metadata: { trace: 'abc' },
        }),
      );
      assert.deepEqual(lastBody(), {
        model: 'fake-small',
        messages: chatRequest().messages,
        stream: false,
        tools: [WEATHER_TOOL],
        format: schema,
        options: {
          num_predict: 100,
          temperature: 0.2,
          stop: ['\n\n', 'END'],
          top_p: 0.9,
          seed: 42,
          presence_penalty: 0.5,
          frequency_penalty: -0.5,
        },
        logprobs: true,
        top_logprobs: 2,
      });
    });

    it('maps response_format: json_object to "json", a schema-less json_schema to "json", text to nothing', async () => {
      for (const [format, expected] of [
        [{ type: 'json_object' }, 'json'],
        [{ type: 'json_schema', json_schema: { name: 'any' } }, 'json'],
        [{ type: 'text' }, undefined],
      ] as const) {
        await engine.chat(withOptions({ response_format: format }));
        assert.equal(lastBody().format, expected, format.type);
      }
    });

    it('sends tools with tool_choice auto or absent, none with tool_choice none (the history still goes)', async () => {
      await engine.chat(withOptions({ tools: [WEATHER_TOOL] }));
      assert.deepEqual(lastBody().tools, [WEATHER_TOOL]);
      await engine.chat(withOptions({ tools: [WEATHER_TOOL], tool_choice: 'none' }, { messages: afterCall }));
      assert.equal(lastBody().tools, undefined);
      assert.equal(lastBody().messages[1].tool_calls.length, 1);
      await engine.chat(withOptions({ tools: [] }));
      assert.equal(lastBody().tools, undefined);
    });

    it('translates roles, tool calls (arguments as objects) and tool results (with tool_name and tool_call_id)', async () => {
      const messages: ChatMessage[] = [
        { role: 'developer', content: 'answer in French' },
        ...afterCall,
        {
          role: 'assistant',
          content: 'Checking two more.',
          tool_calls: [
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } },
            { id: 'call_3', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon","days":[1,2]}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_3', content: [{ type: 'text', text: 'rain' }] },
        { role: 'tool', tool_call_id: 'call_2', name: 'clock', content: '12:00' },
        { role: 'tool', tool_call_id: 'call_unknown', content: 'orphan' },
      ];
      await engine.chat(chatRequest({ messages }));
      assert.deepEqual(lastBody().messages, [
        { role: 'system', content: 'answer in French' },
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
        { role: 'tool', content: 'sunny, 21 C', tool_name: 'get_weather', tool_call_id: 'call_1' },
        {
          role: 'assistant',
          content: 'Checking two more.',
          tool_calls: [
            { id: 'call_2', function: { name: 'get_time', arguments: {} } },
            { id: 'call_3', function: { name: 'get_weather', arguments: { city: 'Lyon', days: [1, 2] } } },
          ],
        },
        { role: 'tool', content: 'rain', tool_name: 'get_weather', tool_call_id: 'call_3' },
        { role: 'tool', content: '12:00', tool_name: 'clock', tool_call_id: 'call_2' },
        { role: 'tool', content: 'orphan', tool_call_id: 'call_unknown' },
      ]);
    });

    it('sends images from data URLs as bare base64 beside the joined text', async () => {
      const messages: ChatMessage[] = [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is in' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'high' } },
            { type: 'text', text: 'this picture?' },
            { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${PNG}` } },
          ],
        },
      ];
      const result = await engine.chat(chatRequest({ messages }));
      assert.deepEqual(lastBody().messages, [{ role: 'user', content: 'what is in\nthis picture?', images: [PNG, PNG] }]);
      assert.equal(result.content, 'Fake answer to: what is in\nthis picture?');
    });
  });

  describe('answers', () => {
    it('reads tool calls from a JSON answer: ids, arguments as JSON text, finish_reason tool_calls, usage', async () => {
      fake.behaviour = {
        toolCalls: [
          { name: 'get_weather', arguments: '{"city":"Paris"}' },
          { name: 'get_time', arguments: '{}' },
        ],
      };
      const result = await engine.chat(withOptions({ tools: [WEATHER_TOOL] }));
      assert.equal(result.content, '');
      assert.equal(result.finishReason, 'tool_calls');
      assert.equal(result.toolCalls?.length, 2);
      const [first, second] = result.toolCalls!;
      assert.match(first!.id, /^call_[a-z0-9]{8}$/);
      assert.notEqual(first!.id, second!.id);
      assert.deepEqual(
        { ...first, id: '' },
        { id: '', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      );
      assert.deepEqual(second!.function, { name: 'get_time', arguments: '{}' });
      assert.deepEqual(result.usage, { promptTokens: 6, completionTokens: 2 });

      // The round trip: the calls and their results go back, and the model answers in text.
      const messages: ChatMessage[] = [
        { role: 'user', content: 'weather and time?' },
        { role: 'assistant', content: null, tool_calls: result.toolCalls! },
        { role: 'tool', tool_call_id: first!.id, content: 'sunny' },
        { role: 'tool', tool_call_id: second!.id, content: 'noon' },
      ];
      const answer = await engine.chat(withOptions({ tools: [WEATHER_TOOL] }, { messages }));
      assert.equal(answer.finishReason, 'stop');
      assert.equal(answer.toolCalls, undefined);
      assert.match(answer.content, /^Fake answer to: weather and time\?/);
      assert.deepEqual(lastBody().messages.slice(2), [
        { role: 'tool', content: 'sunny', tool_name: 'get_weather', tool_call_id: first!.id },
        { role: 'tool', content: 'noon', tool_name: 'get_time', tool_call_id: second!.id },
      ]);
      // Without tools offered, the fake answers in text, as a model would.
      assert.equal((await engine.chat(chatRequest())).toolCalls, undefined);
      fake.behaviour = {};
    });

    it('streams each tool call whole as one tool_call chunk, numbered, then the end with tool_calls', async () => {
      fake.behaviour = {
        toolCalls: [
          { name: 'get_weather', arguments: '{"city":"Paris"}' },
          { name: 'get_weather', arguments: '{"city":"Oslo"}' },
        ],
      };
      const chunks = await collect(chunksOf(await engine.chatStream(withOptions({ tools: [WEATHER_TOOL] }))));
      assert.equal(chunks.length, 3);
      const ids = chunks.map((c) => (c.type === 'tool_call' ? c.id : undefined));
      assert.match(ids[0]!, /^call_/);
      assert.notEqual(ids[0], ids[1]);
      assert.deepEqual(chunks, [
        { type: 'tool_call', index: 0, id: ids[0], name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool_call', index: 1, id: ids[1], name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'end', finishReason: 'tool_calls', usage: { promptTokens: 6, completionTokens: 2 } },
      ]);
      assert.equal(lastBody().stream, true);
      assert.deepEqual(lastBody().tools, [WEATHER_TOOL]);
      fake.behaviour = {};
    });

    it('answers response_format with the JSON the engine generated, in one answer and streamed', async () => {
      const schema = {
        type: 'object',
        properties: {
          name: { type: 'string' },
          mood: { enum: ['happy', 'sad'] },
          age: { type: 'integer' },
          ok: { type: 'boolean' },
          nick: { type: 'string' },
        },
        required: ['name', 'mood', 'age', 'ok'],
      };
      const shaped = await engine.chat(withOptions({ response_format: { type: 'json_schema', json_schema: { name: 'p', schema } } }));
      assert.deepEqual(JSON.parse(shaped.content), { name: 'fake', mood: 'happy', age: 1, ok: true });
      const json = await engine.chat(withOptions({ response_format: { type: 'json_object' } }));
      assert.deepEqual(JSON.parse(json.content), { answer: 'Fake answer to: tell me about otters' });
      const streamed = await collect(chunksOf(await engine.chatStream(withOptions({ response_format: { type: 'json_object' } }))));
      assert.ok(streamed.filter((c) => c.type === 'delta').length > 1);
      assert.deepEqual(JSON.parse(text(streamed)), { answer: 'Fake answer to: tell me about otters' });
    });

    it("carries Ollama's logprobs back in OpenAI's shape, in one answer and streamed", async () => {
      fake.behaviour = { reply: 'hi there' };
      const result = await engine.chat(withOptions({ logprobs: true, top_logprobs: 1 }));
      const bytes = (s: string) => [...Buffer.from(s)];
      assert.deepEqual(result.logprobs, {
        content: [
          { token: 'hi', logprob: -0.25, bytes: bytes('hi'), top_logprobs: [{ token: 'hi', logprob: -0.25, bytes: bytes('hi') }] },
          {
            token: ' there',
            logprob: -0.25,
            bytes: bytes(' there'),
            top_logprobs: [{ token: ' there', logprob: -0.25, bytes: bytes(' there') }],
          },
        ],
        refusal: null,
      });
      const chunks = await collect(chunksOf(await engine.chatStream(withOptions({ logprobs: true }))));
      assert.deepEqual(chunks.slice(0, 2), [
        {
          type: 'delta',
          content: 'hi',
          logprobs: { content: [{ token: 'hi', logprob: -0.25, bytes: bytes('hi'), top_logprobs: [] }], refusal: null },
        },
        {
          type: 'delta',
          content: ' there',
          logprobs: { content: [{ token: ' there', logprob: -0.25, bytes: bytes(' there'), top_logprobs: [] }], refusal: null },
        },
      ]);
      assert.equal(lastBody().logprobs, true);
      assert.equal(lastBody().top_logprobs, undefined);
      // Not asked for: none sent, none read.
      assert.equal((await engine.chat(withOptions({ logprobs: false }))).logprobs, undefined);
      assert.equal(lastBody().logprobs, undefined);
      fake.behaviour = {};
    });
  });

  describe('fields Ollama cannot honour: unsupported, naming the field, and no engine request', () => {
    const image = (url: string): ChatMessage[] => [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ];
    const cases: [string, ChatRequest, RegExp][] = [
      [
        'tool_choice required',
        withOptions({ tools: [WEATHER_TOOL], tool_choice: 'required' }),
        /^tool_choice "required".*cannot force a tool call/,
      ],
      [
        'tool_choice naming a function',
        withOptions({ tools: [WEATHER_TOOL], tool_choice: { type: 'function', function: { name: 'get_weather' } } }),
        /^tool_choice naming a function/,
      ],
      ['parallel_tool_calls false', withOptions({ tools: [WEATHER_TOOL], parallel_tool_calls: false }), /^parallel_tool_calls: false/],
      ['n > 1', withOptions({ n: 3 }), /^n greater than 1/],
      ['logit_bias', withOptions({ logit_bias: { '50256': -100 } }), /^logit_bias is not supported/],
      [
        'an http image URL',
        chatRequest({ messages: image('https://example.com/cat.png') }),
        /^messages\[0\]\.content\[1\]\.image_url\.url is a web address: images are not fetched/,
      ],
      [
        'a data URL that is not an image',
        chatRequest({ messages: image('data:text/plain;base64,aGVsbG8=') }),
        /^messages\[0\]\.content\[1\]\.image_url\.url must be a data URL of an image/,
      ],
      [
        'a file URL',
        chatRequest({ messages: image('file:///etc/passwd') }),
        /^messages\[0\]\.content\[1\]\.image_url\.url must be a data URL/,
      ],
      [
        'image data that is not base64',
        chatRequest({ messages: image('data:image/png;base64,not base64!') }),
        /^messages\[0\]\.content\[1\]\.image_url\.url does not hold valid base64/,
      ],
      ['empty image data', chatRequest({ messages: image('data:image/png;base64,') }), /does not hold valid base64/],
      [
        'tool call arguments that are not JSON',
        chatRequest({
          messages: [
            { role: 'user', content: 'hi' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"city":' } }],
            },
          ],
        }),
        /^messages\[1\]\.tool_calls\[0\]\.function\.arguments must be the text of a JSON object/,
      ],
      [
        'tool call arguments that are not an object',
        chatRequest({
          messages: [
            { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }] },
          ],
        }),
        /^messages\[0\]\.tool_calls\[0\]\.function\.arguments/,
      ],
      [
        'a participant name',
        chatRequest({
          messages: [
            { role: 'system', content: 'hi' },
            { role: 'user', name: 'alice', content: 'hi' },
          ],
        }),
        /^messages\[1\]\.name is not supported/,
      ],
    ];
    for (const [what, request, message] of cases) {
      it(what, async () => {
        const before = fake.requests.length;
        for (const call of [() => engine.chat(request), () => engine.chatStream(request)]) {
          await rejectsWith(call(), 'unsupported', (err) => {
            assert.match(err.message, message);
            assert.equal(err.retryable, false);
            assert.doesNotMatch(err.message, /127\.0\.0\.1|ollama node/);
          });
        }
        assert.equal(fake.requests.length, before, 'no engine request');
      });
    }
  });
});
