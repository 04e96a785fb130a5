// The OpenAI-compatible adapter past plain text: options forwarded as they are, and
// answers read back whole (tool calls, choices, logprobs, finish reasons, fingerprint),
// from servers that write exact bytes, garbage included: an engine is untrusted, so a
// value of the wrong shape is left out, never a crash.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { OpenAIEngine } from '../../src/engines/openai/adapter.js';
import type { ChatChunk } from '../../src/engines/types.js';
import { chatRequest, chunksOf, collect } from './support.js';

const servers: { close(): Promise<void> }[] = [];
const engines: OpenAIEngine[] = [];

/** An engine whose server answers every chat with `answer` (an object: JSON; an array of frames: an event stream), recording request bodies. */
async function engineAnswering(answer: unknown) {
  const bodies: any[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      bodies.push(JSON.parse(raw));
      if (Array.isArray(answer)) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const frame of answer) res.write(`data: ${typeof frame === 'string' ? frame : JSON.stringify(frame)}\n\n`);
        res.end('data: [DONE]\n\n');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  const engine = new OpenAIEngine({ url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, timeoutMs: 5000 });
  engines.push(engine);
  return { engine, bodies };
}

describe('OpenAI-compatible adapter: fields and answers past plain text', () => {
  after(async () => {
    await Promise.all(engines.map((e) => e.close()));
    await Promise.all(servers.map((s) => s.close()));
  });

  it('forwards messages and options as they are, under their wire names', async () => {
    const { engine, bodies } = await engineAnswering({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] });
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
    const messages = [
      { role: 'developer' as const, content: 'be brief' },
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] },
    ];
    await engine.chat(chatRequest({ messages, options: { tools, tool_choice: 'auto', seed: 7, stop: ['x'], n: 1 } }));
    const body = bodies[0];
    assert.deepEqual(Object.keys(body), [
      'model',
      'messages',
      'max_tokens',
      'temperature',
      'stream',
      'tools',
      'tool_choice',
      'seed',
      'stop',
      'n',
    ]);
    assert.deepEqual(body.messages, messages);
    assert.deepEqual(body.tools, tools);
  });

  it('reads tool calls, choices in index order, logprobs and the fingerprint of a JSON answer; garbage is left out', async () => {
    const { engine } = await engineAnswering({
      system_fingerprint: 'fp_1',
      choices: [
        { index: 1, message: { content: 'second' }, finish_reason: 'eos', logprobs: 'not an object' },
        {
          index: 0,
          message: {
            content: null,
            tool_calls: [
              null,
              5,
              { function: { name: 7 } },
              { id: 3, function: { name: 'ok', arguments: { a: 1 } } },
              { id: 'call_x', function: { name: 'f', arguments: '{}' } },
            ],
          },
          finish_reason: 'tool_calls',
          logprobs: { content: [{ token: 'a', logprob: -1 }] },
        },
        { index: 2, message: { content: 'beyond n' } },
      ],
    });
    const result = await engine.chat(chatRequest({ options: { n: 2 } }));
    assert.equal(result.content, '');
    assert.equal(result.finishReason, 'tool_calls');
    assert.equal(result.systemFingerprint, 'fp_1');
    assert.deepEqual(result.logprobs, { content: [{ token: 'a', logprob: -1 }] });
    assert.equal(result.toolCalls?.length, 2);
    assert.match(result.toolCalls![0]!.id, /^call_[0-9a-f]{24}$/, 'an id made up for a call without one');
    assert.deepEqual(result.toolCalls![0]!.function, { name: 'ok', arguments: '{"a":1}' });
    assert.deepEqual(result.toolCalls![1], { id: 'call_x', type: 'function', function: { name: 'f', arguments: '{}' } });
    assert.deepEqual(
      result.moreChoices,
      [{ content: 'second', finishReason: 'stop' }],
      'an unknown reason is a stop; bad logprobs left out; no third choice',
    );

    const { engine: bad } = await engineAnswering({ choices: 'many', system_fingerprint: { x: 1 } });
    await assert.rejects(bad.chat(chatRequest()), (e: any) => e.failure === 'upstream_error');
  });

  it('streams tool-call pieces (first with id and name), other choices, logprobs and per-choice reasons; garbage is left out', async () => {
    const frame = (choices: unknown, extra: object = {}) => ({ object: 'chat.completion.chunk', choices, ...extra });
    const { engine } = await engineAnswering([
      frame([{ index: 0, delta: { role: 'assistant', content: null } }], { system_fingerprint: 'fp_s' }),
      'null',
      frame(5),
      frame([{ index: 'x', delta: { content: 'bad index' } }, { index: 7, delta: { content: 'beyond n' } }, null]),
      // A piece before its name is known, a bad call index: dropped.
      frame([
        {
          index: 0,
          delta: {
            tool_calls: [
              { index: 0, function: { arguments: '{' } },
              { index: -1, function: { name: 'g' } },
            ],
          },
        },
      ]),
      frame([{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] } }]),
      frame([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] } }]),
      frame([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] } }]),
      frame([{ index: 1, delta: { content: 'other' }, logprobs: { content: [{ token: 'other', logprob: -0.5 }] } }]),
      frame([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]),
      frame([{ index: 1, delta: {}, finish_reason: 'content_filter' }]),
    ]);
    const chunks: ChatChunk[] = await collect(chunksOf(await engine.chatStream(chatRequest({ options: { n: 2 } }))));
    assert.deepEqual(chunks, [
      { type: 'tool_call', index: 0, arguments: '', id: 'call_1', name: 'f' },
      { type: 'tool_call', index: 0, arguments: '{"a"' },
      { type: 'tool_call', index: 0, arguments: ':1}' },
      { type: 'delta', content: 'other', choice: 1, logprobs: { content: [{ token: 'other', logprob: -0.5 }] } },
      { type: 'end', finishReason: 'tool_calls', usage: {}, finishReasons: ['tool_calls', 'content_filter'], systemFingerprint: 'fp_s' },
    ]);
  });
});
