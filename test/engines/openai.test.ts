// The OpenAI-compatible adapter against real loopback servers: the shared fake
// engine (which this file also self-tests) and, for wire-format corner cases,
// small scripted servers that write exact bytes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { LineSplitter, LineTooLongError, MAX_LINE_CHARS } from '../../src/engines/http/lines.js';
import { OpenAIEngine } from '../../src/engines/openai/adapter.js';
import type { ChatChunk, ChatRequest, EngineError, EngineFailure } from '../../src/engines/types.js';
import { startFakeOpenAI, type FakeEngine } from '../helpers/fake-engines/index.js';
import { chatRequest, chunksOf, collect, drainedOrClosed, never, rejectsWith, stallUnreadStream, text } from './support.js';

/** A loopback server that answers every request with exactly what `script` writes, counting connections. */
async function scripted(script: (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>) {
  let connections = 0;
  const server = http.createServer((req, res) => void script(req, res));
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers a streaming chat with `parts` written one by one (each its own socket write). */
function sse(parts: (string | Buffer)[]) {
  return async (_req: http.IncomingMessage, res: http.ServerResponse) => {
    _req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const part of parts) {
      res.write(part);
      await sleep(1);
    }
    res.end();
  };
}

describe('OpenAI-compatible engine adapter', () => {
  let fake: FakeEngine;
  let engine: OpenAIEngine;

  before(async () => {
    fake = await startFakeOpenAI();
    engine = new OpenAIEngine({ url: fake.url, timeoutMs: 5000 });
  });
  after(async () => {
    await engine.close();
    await fake.close();
  });

  it('fake self-test: records requests and counts chat requests, in-flight and bytes', async () => {
    const before = fake.requests.length;
    const chatsBefore = fake.chatRequests();
    fake.behaviour = { tokenDelayMs: 30 };
    const stream = await engine.chatStream(chatRequest());
    await sleep(20);
    assert.equal(fake.inFlight(), 1);
    const chunks = await collect(chunksOf(stream));
    assert.equal(text(chunks), 'Fake answer to: tell me about otters');
    assert.equal(fake.inFlight(), 0);
    assert.equal(fake.chatRequests(), chatsBefore + 1);
    assert.equal(fake.aborted(), 0);
    assert.ok(fake.bytesWritten() > 0);
    const recorded = fake.requests.at(-1)!;
    assert.equal(fake.requests.length, before + 1);
    assert.equal(recorded.method, 'POST');
    assert.equal(recorded.path, '/v1/chat/completions');
    assert.deepEqual(recorded.body.stream_options, { include_usage: true });
    fake.behaviour = {};
  });

  it('lists models and reports health', async () => {
    const models = await engine.listModels(never);
    assert.deepEqual(
      models.map((m) => m.id),
      ['fake-small', 'fake-large'],
    );
    assert.equal(models[0]!.ownedBy, 'fake');
    assert.equal(typeof models[0]!.created, 'number');
    await engine.health(never);
    fake.behaviour = { models: ['other'] };
    assert.deepEqual(
      (await engine.listModels(never)).map((m) => m.id),
      ['other'],
    );
    fake.behaviour = {};
  });

  it('chats in one JSON answer with the request fields and real usage', async () => {
    const result = await engine.chat(chatRequest());
    assert.equal(result.content, 'Fake answer to: tell me about otters');
    assert.equal(result.finishReason, 'stop');
    assert.deepEqual(result.usage, { promptTokens: 6, completionTokens: 7 });
    const body = fake.requests.at(-1)!.body;
    assert.equal(body.model, 'fake-small');
    assert.equal(body.max_tokens, 100);
    assert.equal(body.temperature, 0.2);
    assert.equal(body.stream, false);
    assert.equal(body.messages.length, 2);
  });

  it('reports a length cut-off, JSON and streamed', async () => {
    const result = await engine.chat(chatRequest({ maxTokens: 2 }));
    assert.equal(result.content, 'Fake answer');
    assert.equal(result.finishReason, 'length');
    const chunks = await collect(chunksOf(await engine.chatStream(chatRequest({ maxTokens: 3 }))));
    assert.equal(text(chunks), 'Fake answer to:');
    assert.deepEqual(chunks.at(-1), {
      type: 'end',
      finishReason: 'length',
      usage: { promptTokens: 6, completionTokens: 3 },
      systemFingerprint: 'fp_fake',
    });
  });

  it('streams deltas in order, then one end with usage; without usage the counts are undefined', async () => {
    fake.behaviour = { reply: 'one two three four' };
    const chunks = await collect(chunksOf(await engine.chatStream(chatRequest())));
    assert.deepEqual(chunks, [
      { type: 'delta', content: 'one' },
      { type: 'delta', content: ' two' },
      { type: 'delta', content: ' three' },
      { type: 'delta', content: ' four' },
      { type: 'end', finishReason: 'stop', usage: { promptTokens: 6, completionTokens: 4 }, systemFingerprint: 'fp_fake' },
    ]);
    fake.behaviour = { reply: 'one two', noUsage: true };
    const bare = await collect(chunksOf(await engine.chatStream(chatRequest())));
    assert.deepEqual(bare.at(-1), { type: 'end', finishReason: 'stop', usage: {}, systemFingerprint: 'fp_fake' });
    assert.equal(text(bare), 'one two');
    const json = await engine.chat(chatRequest());
    assert.deepEqual(json.usage, {});
    fake.behaviour = {};
  });

  it('embeds deterministically', async () => {
    const vectors = await engine.embed({ model: 'fake-small', input: ['alpha', 'beta', 'alpha'], signal: never });
    assert.equal(vectors.length, 3);
    assert.equal(vectors[0]!.length, 16);
    assert.deepEqual(vectors[0], vectors[2]);
    assert.notDeepEqual(vectors[0], vectors[1]);
    assert.equal(fake.requests.at(-1)!.body.encoding_format, 'float');
    await rejectsWith(engine.embed({ model: 'missing', input: ['x'], signal: never }), 'model_not_found');
  });

  it('reuses one keep-alive connection for completed streams and JSON answers', async () => {
    const fresh = new OpenAIEngine({ url: fake.url, timeoutMs: 5000 });
    const before = fake.connections();
    for (let i = 0; i < 5; i++) {
      assert.equal((await collect(chunksOf(await fresh.chatStream(chatRequest())))).at(-1)?.type, 'end');
      // undici hands a socket back one event-loop turn after the answer ended (pipelining 1);
      // requests from different clients are at least that far apart.
      await nextTurn();
    }
    for (let i = 0; i < 5; i++) {
      assert.equal((await fresh.chat(chatRequest())).finishReason, 'stop');
      await nextTurn();
    }
    assert.equal(fake.connections() - before, 1, 'ten completed answers, one connection');
    await fresh.close();
  });

  it('cannot pull', async () => {
    await rejectsWith(
      (async () => {
        for await (const _ of engine.pull({ model: 'x', signal: never })) assert.fail('no frames expected');
      })(),
      'rejected',
    );
  });

  describe('failures before the answer', () => {
    const cases: [number, EngineFailure, boolean][] = [
      [500, 'upstream_error', true],
      [502, 'upstream_error', true],
      [503, 'overloaded', true],
      [429, 'overloaded', true],
      [400, 'rejected', false],
      [401, 'rejected', false],
    ];
    for (const [status, failure, retryable] of cases) {
      it(`maps HTTP ${status} to ${failure} (JSON and stream)`, async () => {
        fake.behaviour = { status };
        const check = (err: EngineError) => {
          assert.equal(err.retryable, retryable);
          assert.equal(err.options.status, status);
          assert.match(err.message, new RegExp(`answered ${status}: fake upstream answered ${status}`));
        };
        await rejectsWith(engine.chat(chatRequest()), failure, check);
        await rejectsWith(engine.chatStream(chatRequest()), failure, check);
        fake.behaviour = {};
      });
    }

    it('maps a 404 for a model to model_not_found naming the model', async () => {
      const check = (err: EngineError) => {
        assert.equal(err.retryable, false);
        assert.match(err.message, /model "nope"/);
      };
      await rejectsWith(engine.chat(chatRequest({ model: 'nope' })), 'model_not_found', check);
      await rejectsWith(engine.chatStream(chatRequest({ model: 'nope' })), 'model_not_found', check);
    });

    // Issue 26: a server without /v1/embeddings answered 404, and the router dropped the model for every tenant.
    it('maps a bare 404 (a server without the endpoint) to endpoint_missing naming the path, not to model_not_found', async () => {
      fake.behaviour = { lacks: ['/v1/embeddings', '/v1/chat/completions'] };
      try {
        const check = (path: string) => (err: EngineError) => {
          assert.equal(err.options.endpoint, path);
          assert.equal(err.retryable, false);
          assert.match(err.message, new RegExp(`has no ${path} endpoint`));
        };
        await rejectsWith(engine.embed({ model: 'fake-small', input: ['x'], signal: never }), 'endpoint_missing', check('/v1/embeddings'));
        await rejectsWith(engine.chat(chatRequest()), 'endpoint_missing', check('/v1/chat/completions'));
        await rejectsWith(engine.chatStream(chatRequest()), 'endpoint_missing', check('/v1/chat/completions'));
      } finally {
        fake.behaviour = {};
      }
    });

    it('maps a refused connection to unreachable', async () => {
      const closed = await startFakeOpenAI();
      await closed.close();
      const dead = new OpenAIEngine({ url: closed.url, apiKey: 'sk-secret-refused', timeoutMs: 1000 });
      const check = (err: EngineError) => {
        assert.equal(err.retryable, true);
        assert.ok(!err.message.includes('sk-secret-refused'));
      };
      await rejectsWith(dead.listModels(never), 'unreachable', check);
      await rejectsWith(dead.health(never), 'unreachable', check);
      await rejectsWith(dead.chatStream(chatRequest()), 'unreachable', check);
      await dead.close();
    });

    it('maps headers that come too late to timeout', async () => {
      // The fake never answers: a timeout is the adapter's own headersTimeout.
      const impatient = new OpenAIEngine({ url: fake.url, timeoutMs: 150 });
      fake.behaviour = { hang: true };
      for (const call of [() => impatient.chat(chatRequest()), () => impatient.chatStream(chatRequest())]) {
        await rejectsWith(call(), 'timeout', (err) => assert.equal(err.retryable, true));
      }
      fake.behaviour = {};
      await impatient.close();
    });
  });

  describe('failures mid-stream', () => {
    it('throws while iterating when the engine dies after some tokens', async () => {
      fake.behaviour = { reply: 'a b c d e f g h', dieAfterTokens: 3 };
      const stream = await engine.chatStream(chatRequest());
      const seen: ChatChunk[] = [];
      await rejectsWith(
        (async () => {
          for await (const chunk of chunksOf(stream)) seen.push(chunk);
        })(),
        'upstream_error',
        (err) => assert.equal(err.retryable, false),
      );
      assert.equal(text(seen), 'a b c');
      assert.ok(seen.every((c) => c.type === 'delta'));
      fake.behaviour = {};
    });

    it('throws on an in-band error frame and on a stream that ends without [DONE]', async () => {
      const frame = (content: string) => `data: {"choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}\n\n`;
      const inBand = await scripted(
        sse([frame('hi'), 'data: {"error":{"message":"CUDA out of memory","code":500}}\n\n', 'data: [DONE]\n\n']),
      );
      const broken = new OpenAIEngine({ url: inBand.url, timeoutMs: 2000 });
      const seen: ChatChunk[] = [];
      await rejectsWith(
        (async () => {
          for await (const c of chunksOf(await broken.chatStream(chatRequest()))) seen.push(c);
        })(),
        'upstream_error',
        (err) => {
          assert.match(err.message, /CUDA out of memory/);
          assert.equal(err.retryable, false);
        },
      );
      assert.equal(text(seen), 'hi');
      await broken.close();
      await inBand.close();

      // Text and a bad frame in one read: the text is still handed over, in a batch before the failure.
      const oneRead = await scripted(sse([`${frame('so')}${frame(' far')}data: {not json}\n\n${frame('lost')}data: [DONE]\n\n`]));
      const garbled = new OpenAIEngine({ url: oneRead.url, timeoutMs: 2000 });
      const batches: ChatChunk[][] = [];
      await rejectsWith(
        (async () => {
          for await (const batch of await garbled.chatStream(chatRequest())) batches.push(batch);
        })(),
        'upstream_error',
        (err) => assert.match(err.message, /not JSON/),
      );
      assert.deepEqual(batches, [
        [
          { type: 'delta', content: 'so' },
          { type: 'delta', content: ' far' },
        ],
      ]);
      await garbled.close();
      await oneRead.close();

      const truncated = await scripted(sse([frame('hi'), frame(' there')]));
      const cut = new OpenAIEngine({ url: truncated.url, timeoutMs: 2000 });
      await rejectsWith(collect(chunksOf(await cut.chatStream(chatRequest()))), 'upstream_error', (err) =>
        assert.match(err.message, /without \[DONE\]/),
      );
      await cut.close();
      await truncated.close();
    });

    it('reads at most 64 KiB of an error answer: a node sending an endless error body gets its 500 mapped at once', async () => {
      // 16 MiB of error text in 64 KiB writes: the adapter keeps what fits in 64 KiB for the
      // message and cuts the connection, instead of reading (and holding) all of it.
      const piece = 'e'.repeat(64 * 1024);
      let written = 0;
      let closed!: (finished: boolean) => void;
      const responseClosed = new Promise<boolean>((resolve) => (closed = resolve));
      const noisy = await scripted(async (req, res) => {
        req.resume();
        res.once('close', () => closed(res.writableFinished));
        res.writeHead(500, { 'content-type': 'text/plain' });
        for (let i = 0; i < 256 && !res.destroyed; i++) {
          written += piece.length;
          if (!res.write(piece)) await drainedOrClosed(res);
        }
        res.end();
      });
      const remote = new OpenAIEngine({ url: noisy.url, timeoutMs: 5000 });
      await rejectsWith(remote.chat(chatRequest()), 'upstream_error', (err) => {
        assert.match(err.message, /answered 500: e+/);
        assert.ok(err.message.length < 64 * 1024 + 200, `message of ${err.message.length} characters`);
      });
      // The adapter cut the connection: the server's response closes unfinished, long before 16 MiB.
      assert.equal(await responseClosed, false, 'the response was cut before the whole body was sent');
      assert.ok(written < 16 * 1024 * 1024, `the server wrote ${written} bytes`);
      await remote.close();
      await noisy.close();
    });

    it('gives up on a line longer than the frame limit, in time linear in its length', async () => {
      // 16 MiB without a newline, in 64 KiB writes: the adapter must stop at 8 MiB (bounded memory)
      // without re-scanning what it holds on every chunk (that took seconds of event-loop time).
      const piece = 'x'.repeat(64 * 1024);
      const endless = await scripted(async (req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: ');
        for (let i = 0; i < 256 && !res.destroyed; i++) {
          if (!res.write(piece)) await drainedOrClosed(res);
        }
        res.end();
      });
      const remote = new OpenAIEngine({ url: endless.url, timeoutMs: 5000 });
      await rejectsWith(collect(chunksOf(await remote.chatStream(chatRequest()))), 'upstream_error', (err) => {
        assert.match(err.message, /line longer than 8388608 characters/);
        assert.equal(err.retryable, false);
      });
      await remote.close();
      await endless.close();
    });

    it('scans each character of a long line once, not the whole carried line on every chunk', () => {
      // The cause of the seconds of event-loop time above, counted rather than timed: the
      // characters searched for a newline, over a line fed in 64 KiB pieces up to the limit.
      const piece = Buffer.from('x'.repeat(64 * 1024));
      const splitter = new LineSplitter();
      const out: string[] = [];
      const indexOf = String.prototype.indexOf;
      let searched = 0;
      String.prototype.indexOf = function (this: string, ...args: Parameters<string['indexOf']>) {
        searched += this.length - (args[1] ?? 0);
        return indexOf.apply(this, args);
      };
      let fed = 0;
      try {
        assert.throws(() => {
          for (;;) {
            splitter.push(piece, out);
            fed += piece.length;
          }
        }, LineTooLongError);
      } finally {
        String.prototype.indexOf = indexOf;
      }
      assert.equal(out.length, 0);
      assert.ok(fed >= MAX_LINE_CHARS);
      assert.ok(searched <= 2 * (fed + piece.length), `searched ${searched} characters for ${fed + piece.length} fed`);
    });
  });

  describe('wire format', () => {
    it('parses frames split anywhere (even inside a UTF-8 character), CRLF, comments, multi-line data and keeps the connection', async () => {
      const wire =
        ': keep-alive comment\r\n\r\n' +
        'event: message\r\ndata: {"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\r\n\r\n' +
        'data: {"choices":[{"index":0,"delta":{"content":"Grüße"},"finish_reason":null}]}\n\n' +
        'data: {"choices":[{"index":0,\ndata: "delta":{"content":" 🦦"},"finish_reason":null}]}\n\n' +
        ':\n' +
        'data:{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
        'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\n' +
        'data: [DONE]\n\n';
      const bytes = Buffer.from(wire);
      const parts: Buffer[] = [];
      // Split every 7 bytes: cuts lines, CRLF pairs and multi-byte characters.
      for (let i = 0; i < bytes.length; i += 7) parts.push(bytes.subarray(i, i + 7));
      const server = await scripted(sse(parts));
      const remote = new OpenAIEngine({ url: server.url, timeoutMs: 2000 });
      for (let round = 0; round < 5; round++) {
        const chunks = await collect(chunksOf(await remote.chatStream(chatRequest())));
        assert.deepEqual(chunks, [
          { type: 'delta', content: 'Grüße' },
          { type: 'delta', content: ' 🦦' },
          { type: 'end', finishReason: 'stop', usage: { promptTokens: 3, completionTokens: 2 } },
        ]);
      }
      // undici may open a second connection for a request sent the moment the previous body ended.
      assert.ok(
        server.connections() <= 2,
        `completed streams leave keep-alive connections reusable (${server.connections()} for 5 streams)`,
      );
      await remote.close();
      await server.close();
    });

    it('accepts the base URL with or without /v1 and a trailing slash', async () => {
      for (const url of [fake.url, `${fake.url}/`, `${fake.url}/v1`, `${fake.url}/v1/`]) {
        const e = new OpenAIEngine({ url, timeoutMs: 2000 });
        assert.equal((await e.listModels(never)).length, 2, url);
        assert.equal((await e.chat(chatRequest())).finishReason, 'stop', url);
        assert.equal(fake.requests.at(-1)!.path, '/v1/chat/completions', url);
        await e.close();
      }
    });

    it('sends the API key as a Bearer token and never repeats it in errors', async () => {
      const keyed = new OpenAIEngine({ url: fake.url, apiKey: 'sk-test-1234567890', timeoutMs: 2000 });
      await keyed.listModels(never);
      assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer sk-test-1234567890');
      await keyed.chat(chatRequest());
      assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer sk-test-1234567890');
      await keyed.close();
      const anonymous = new OpenAIEngine({ url: fake.url, timeoutMs: 2000 });
      await anonymous.listModels(never);
      assert.equal(fake.requests.at(-1)!.headers.authorization, undefined);
      await anonymous.close();

      // A server that quotes the key back, as some do on 401.
      const echo = await scripted((req, res) => {
        req.resume();
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${String(req.headers.authorization).slice(7)}` } }));
      });
      const leaky = new OpenAIEngine({ url: echo.url, apiKey: 'sk-test-1234567890', timeoutMs: 2000 });
      await rejectsWith(leaky.chat(chatRequest()), 'rejected', (err) => {
        assert.ok(!err.message.includes('sk-test-1234567890'), err.message);
        assert.match(err.message, /Incorrect API key provided: \[redacted\]/);
      });
      await leaky.close();
      await echo.close();
    });
  });

  describe('cancellation', () => {
    it('aborts a stream in progress at the upstream', async () => {
      fake.behaviour = { reply: 'a b c d e f g h i j', tokenDelayMs: 100 };
      const aborted = fake.aborted();
      const controller = new AbortController();
      const stream = await engine.chatStream(chatRequest({ signal: controller.signal }));
      await rejectsWith(
        (async () => {
          for await (const chunk of chunksOf(stream)) if (chunk.type === 'delta') controller.abort();
        })(),
        'aborted',
      );
      // The fake counts an answer as aborted only when its connection closed before the
      // answer was finished: the upstream saw the abort (the deadline only guards against a hang).
      await fake.waitForAbort(aborted + 1, 30_000);
      fake.behaviour = {};
    });

    it('aborts before the headers (stream and JSON) and a hanging JSON chat', async () => {
      for (const [behaviour, call] of [
        [{ delayHeadersMs: 5000 }, (r: ChatRequest) => engine.chatStream(r)],
        [{ delayHeadersMs: 5000 }, (r: ChatRequest) => engine.chat(r)],
        [{ hang: true }, (r: ChatRequest) => engine.chat(r)],
        [{ silentMs: 5000 }, (r: ChatRequest) => engine.chat(r)],
      ] as const) {
        fake.behaviour = { ...behaviour };
        const aborted = fake.aborted();
        const controller = new AbortController();
        const pending = call(chatRequest({ signal: controller.signal }));
        setTimeout(() => controller.abort(), 50);
        await rejectsWith(pending, 'aborted');
        await fake.waitForAbort(aborted + 1, 1000);
      }
      fake.behaviour = {};
    });

    it('cancels the upstream when the consumer stops iterating early', async () => {
      fake.behaviour = { reply: 'a b c d e f g h i j', tokenDelayMs: 50 };
      const aborted = fake.aborted();
      for await (const chunk of chunksOf(await engine.chatStream(chatRequest()))) if (chunk.type === 'delta') break;
      await fake.waitForAbort(aborted + 1, 1000);
      // A stream that is never iterated can still be given back.
      const unused = await engine.chatStream(chatRequest());
      await unused[Symbol.asyncIterator]().return!();
      await fake.waitForAbort(aborted + 2, 1000);
      fake.behaviour = {};
    });
  });

  it('stops the upstream while the consumer stops pulling (backpressure)', async () => {
    const { iterator, stalled, written } = await stallUnreadStream(engine, fake);
    try {
      // Reading resumes the flow.
      const deadline = Date.now() + 5000;
      while (written() <= stalled && Date.now() < deadline) assert.equal((await iterator.next()).done, false);
      assert.ok(written() > stalled);
    } finally {
      await iterator.return!();
      fake.behaviour = {};
    }
  });
});
