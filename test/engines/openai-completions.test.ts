// The OpenAI-compatible adapter's legacy completions (Engine.complete and
// completeStream) and its embeddings options, against the fake and small scripted
// servers for the wire's corner cases: choices out of order, the wrong count, a 404
// (no legacy endpoint: a refusal, never "model missing"), in-band errors, no [DONE].
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { OpenAIEngine } from '../../src/engines/openai/adapter.js';
import type { CompletionRequest, EngineError } from '../../src/engines/types.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { chunksOf, collect, never, rejectsWith } from './support.js';

async function scripted(answer: (res: http.ServerResponse) => void) {
  const server = http.createServer((req, res) => {
    req.resume();
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    engine: new OpenAIEngine({ url: `http://127.0.0.1:${port}`, timeoutMs: 2000 }),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const request = (overrides: Partial<CompletionRequest> = {}): CompletionRequest => ({
  model: 'fake-small',
  prompt: ['once upon'],
  maxTokens: 50,
  temperature: 0.2,
  signal: never,
  ...overrides,
});

describe('OpenAI-compatible adapter: legacy completions and embedding options', () => {
  let fake: FakeEngine;
  let engine: OpenAIEngine;

  before(async () => {
    fake = await startFakeOpenAI();
    engine = new OpenAIEngine({ url: fake.url, timeoutMs: 2000 });
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  it('completes on /v1/completions: one prompt as a string, options under their wire names, choices by index', async () => {
    const result = await engine.complete(request({ options: { n: 2, stop: ['\n'], seed: 3 } }));
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.path, '/v1/completions');
    assert.deepEqual(sent.body, {
      n: 2,
      stop: ['\n'],
      seed: 3,
      model: 'fake-small',
      prompt: 'once upon',
      max_tokens: 50,
      temperature: 0.2,
      stream: false,
    });
    assert.deepEqual(
      result.choices.map((c) => [c.text, c.finishReason]),
      [
        ['Fake completion of: once upon', 'stop'],
        ['Fake completion of: once upon', 'stop'],
      ],
    );
    assert.deepEqual(result.usage, { promptTokens: 2, completionTokens: 10 });
  });

  it('streams deltas with their choice index and ends with every choice’s reason', async () => {
    const batches = await engine.completeStream(request({ prompt: ['a', 'b'], maxTokens: 2 }));
    const chunks = await collect(chunksOf(batches));
    const end = chunks.at(-1)!;
    assert.equal(end.type, 'end');
    assert.deepEqual(end.type === 'end' && end.finishReasons, ['length', 'length']);
    const text = (choice: number) =>
      chunks
        .filter((c) => c.type === 'delta' && (c.choice ?? 0) === choice)
        .map((c) => (c.type === 'delta' ? c.content : ''))
        .join('');
    assert.equal(text(0), 'Fake completion');
    assert.equal(text(1), 'Fake completion');
    assert.equal(fake.requests.at(-1)!.body.stream_options.include_usage, true);
  });

  it('forwards dimensions and token-id inputs on /v1/embeddings', async () => {
    const vectors = await engine.embed({ model: 'fake-small', input: [], tokens: [[1, 2]], dimensions: 4, signal: never });
    assert.equal(vectors.length, 1);
    assert.equal(vectors[0]!.length, 4);
    assert.deepEqual(fake.requests.at(-1)!.body, { model: 'fake-small', input: [[1, 2]], encoding_format: 'float', dimensions: 4 });
  });

  // Issue 26: a 404 for the endpoint was taken for a missing model (or reported as a context-window problem).
  it('reads a 404 without the endpoint, or for a chat-only model, as endpoint_missing naming the path, never as a missing model', async () => {
    for (const body of [
      JSON.stringify({ error: { message: 'This is a chat model and not supported in the v1/completions endpoint.' } }),
      JSON.stringify({ detail: 'Not Found' }),
      '404 page not found',
    ]) {
      const server = await scripted((res) => {
        res.writeHead(404, { 'content-type': body.startsWith('{') ? 'application/json' : 'text/plain' });
        res.end(body);
      });
      try {
        const check = (err: EngineError) => {
          assert.equal(err.options.endpoint, '/v1/completions', body);
          assert.equal(err.retryable, false);
        };
        await rejectsWith(server.engine.complete(request()), 'endpoint_missing', check);
        await rejectsWith(server.engine.completeStream(request()), 'endpoint_missing', check);
      } finally {
        await server.engine.close();
        await server.close();
      }
    }
  });

  it("reads OpenAI's model_not_found 404 as a missing model", async () => {
    const server = await scripted((res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { message: 'The model `x` does not exist', type: 'invalid_request_error', code: 'model_not_found' } }),
      );
    });
    try {
      await rejectsWith(server.engine.complete(request()), 'model_not_found');
    } finally {
      await server.engine.close();
      await server.close();
    }
  });

  it('fails on a wrong choice count, an in-band error and a stream without [DONE]', async () => {
    const cases: [string, string, RegExp][] = [
      ['{"choices":[]}', 'upstream_error', /unexpected shape/],
      ['{"choices":[{"index":5,"text":"x"}]}', 'upstream_error', /unexpected shape/],
      ['{"error":{"message":"boom"}}', 'upstream_error', /boom/],
    ];
    for (const [body, failure, message] of cases) {
      const server = await scripted((res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      });
      try {
        await rejectsWith(server.engine.complete(request()), failure as 'upstream_error', message);
      } finally {
        await server.engine.close();
        await server.close();
      }
    }
    const cut = await scripted((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"choices":[{"index":0,"text":"half"}]}\n\n');
    });
    try {
      const batches = await cut.engine.completeStream(request());
      await rejectsWith(collect(chunksOf(batches)), 'upstream_error', /without \[DONE\]/);
    } finally {
      await cut.engine.close();
      await cut.close();
    }
  });
});
