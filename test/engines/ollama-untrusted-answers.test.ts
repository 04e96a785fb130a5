// The Ollama adapter reading answers it cannot trust: a scripted server sends tool
// calls, ids and logprobs in shapes a real Ollama never would.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { OllamaEngine } from '../../src/engines/ollama/adapter.js';
import type { ChatOptions, ChatRequest } from '../../src/engines/types.js';
import { chatRequest, chunksOf, rejectsWith } from './support.js';

function withOptions(options: ChatOptions, overrides: Partial<ChatRequest> = {}): ChatRequest {
  return chatRequest({ options, ...overrides });
}

describe('Ollama engine: answers in shapes Ollama never sends', () => {
  let server: http.Server;
  let scripted: OllamaEngine;
  let answer = '';
  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      const ndjson = answer.includes('\n');
      res.writeHead(200, { 'content-type': ndjson ? 'application/x-ndjson' : 'application/json' });
      res.end(answer);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    scripted = new OllamaEngine({ url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, timeoutMs: 2000 });
  });
  after(async () => {
    await scripted.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const frame = (message: object, extra: object = {}) =>
    JSON.stringify({ model: 'm', message: { role: 'assistant', ...message }, ...extra });

  it('refuses tool calls in a shape Ollama never sends', async () => {
    for (const calls of ['"x"', '[{"function":{"arguments":{}}}]', '[{"function":{"name":"f","arguments":[1]}}]', '[null]']) {
      answer = frame({ content: '', tool_calls: JSON.parse(calls) }, { done: true, done_reason: 'stop' });
      await rejectsWith(scripted.chat(chatRequest({ model: 'm' })), 'upstream_error', /tool calls in an unexpected shape/);
      answer = `${frame({ content: 'a' }, { done: false })}\n${frame({ content: '', tool_calls: JSON.parse(calls) }, { done: false })}\n`;
      const seen: string[] = [];
      await rejectsWith(
        (async () => {
          for await (const c of chunksOf(await scripted.chatStream(chatRequest({ model: 'm' }))))
            if (c.type === 'delta') seen.push(c.content);
        })(),
        'upstream_error',
        /streamed tool calls in an unexpected shape/,
      );
      assert.deepEqual(seen, ['a'], 'the text before still came');
    }
  });

  it("keeps Ollama's call ids when they are plain, replaces any other; a cut-off answer with calls stays length", async () => {
    const calls = [
      { id: 'call_k3j2h1g0', function: { name: 'f', arguments: { a: 1 } } },
      { id: '<script>', function: { name: 'g' } },
      { function: { name: 'h', arguments: {} } },
    ];
    answer = frame({ content: '', tool_calls: calls }, { done: true, done_reason: 'length' });
    const result = await scripted.chat(chatRequest({ model: 'm' }));
    assert.equal(result.finishReason, 'length');
    assert.equal(result.toolCalls![0]!.id, 'call_k3j2h1g0');
    assert.match(result.toolCalls![1]!.id, /^call_[0-9a-f]{24}$/);
    assert.match(result.toolCalls![2]!.id, /^call_[0-9a-f]{24}$/);
    assert.deepEqual(
      result.toolCalls!.map((c) => c.function.arguments),
      ['{"a":1}', '{}', '{}'],
    );
  });

  it('leaves out logprobs in a wrong shape, and logprobs nobody asked for', async () => {
    for (const logprobs of [
      [{ token: 1, logprob: -1 }],
      [{ token: 'a', logprob: 'x' }],
      [{ token: 'a', logprob: -1, bytes: [300] }],
      { a: 1 },
    ]) {
      answer = frame({ content: 'a' }, { done: true, done_reason: 'stop', logprobs });
      assert.equal((await scripted.chat(withOptions({ logprobs: true }, { model: 'm' }))).logprobs, undefined, JSON.stringify(logprobs));
    }
    answer = frame({ content: 'a' }, { done: true, done_reason: 'stop', logprobs: [{ token: 'a', logprob: -1 }] });
    assert.equal((await scripted.chat(chatRequest({ model: 'm' }))).logprobs, undefined);
    assert.deepEqual((await scripted.chat(withOptions({ logprobs: true }, { model: 'm' }))).logprobs, {
      content: [{ token: 'a', logprob: -1, bytes: null, top_logprobs: [] }],
      refusal: null,
    });
  });
});
