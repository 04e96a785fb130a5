// The Ollama adapter against the loopback fake (and a scripted server for exact bytes).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { OllamaEngine } from '../../src/engines/ollama/adapter.js';
import type { ChatChunk, ChatRequest, EngineError, EngineFailure, PullProgress } from '../../src/engines/types.js';
import { startFakeOllama, type FakeEngine } from '../helpers/fake-engines/index.js';
import { chatRequest, chunksOf, collect, never, rejectsWith, stallUnreadStream, text } from './support.js';

describe('Ollama engine adapter', () => {
  let fake: FakeEngine;
  let engine: OllamaEngine;

  before(async () => {
    fake = await startFakeOllama();
    engine = new OllamaEngine({ url: fake.url, timeoutMs: 5000 });
  });
  after(async () => {
    await engine.close();
    await fake.close();
  });

  it('lists models from /api/tags and checks health on /api/version', async () => {
    const models = await engine.listModels(never);
    assert.deepEqual(
      models.map((m) => m.id),
      ['fake-small', 'fake-large'],
    );
    assert.equal(models[0]!.created, Math.floor(Date.parse('2024-11-01T10:00:00Z') / 1000));
    await engine.health(never);
    assert.equal(fake.requests.at(-1)!.path, '/api/version');
    for (const url of [`${fake.url}/`, `${fake.url}/api`, `${fake.url}/api/`]) {
      const e = new OllamaEngine({ url, timeoutMs: 2000 });
      assert.equal((await e.listModels(never)).length, 2, url);
      await e.close();
    }
  });

  it('chats in one JSON answer with num_predict, temperature and real usage', async () => {
    const result = await engine.chat(chatRequest());
    assert.deepEqual(result, {
      content: 'Fake answer to: tell me about otters',
      finishReason: 'stop',
      usage: { promptTokens: 6, completionTokens: 7 },
    });
    const body = fake.requests.at(-1)!.body;
    assert.equal(fake.requests.at(-1)!.path, '/api/chat');
    assert.equal(body.stream, false);
    assert.deepEqual(body.options, { num_predict: 100, temperature: 0.2 });
    const cut = await engine.chat(chatRequest({ maxTokens: 2 }));
    assert.equal(cut.content, 'Fake answer');
    assert.equal(cut.finishReason, 'length');
  });

  it('streams NDJSON deltas in order, then one end with usage (or undefined counts)', async () => {
    fake.behaviour = { reply: 'one two three' };
    const chunks = await collect(chunksOf(await engine.chatStream(chatRequest())));
    assert.deepEqual(chunks, [
      { type: 'delta', content: 'one' },
      { type: 'delta', content: ' two' },
      { type: 'delta', content: ' three' },
      { type: 'end', finishReason: 'stop', usage: { promptTokens: 6, completionTokens: 3 } },
    ]);
    assert.equal(fake.requests.at(-1)!.body.stream, true);
    const cut = await collect(chunksOf(await engine.chatStream(chatRequest({ maxTokens: 1 }))));
    assert.deepEqual(cut.at(-1), { type: 'end', finishReason: 'length', usage: { promptTokens: 6, completionTokens: 1 } });
    fake.behaviour = { reply: 'one two', noUsage: true };
    const bare = await collect(chunksOf(await engine.chatStream(chatRequest())));
    assert.equal(text(bare), 'one two');
    assert.deepEqual(bare.at(-1), { type: 'end', finishReason: 'stop', usage: {} });
    assert.deepEqual((await engine.chat(chatRequest())).usage, {});
    fake.behaviour = {};
  });

  it('embeds', async () => {
    const vectors = await engine.embed({ model: 'fake-small', input: ['alpha', 'beta', 'alpha'], signal: never });
    assert.equal(vectors.length, 3);
    assert.deepEqual(vectors[0], vectors[2]);
    assert.notDeepEqual(vectors[0], vectors[1]);
    assert.equal(fake.requests.at(-1)!.path, '/api/embed');
  });

  it('reuses one keep-alive connection for completed streams, JSON answers and pulls', async () => {
    const fresh = new OllamaEngine({ url: fake.url, timeoutMs: 5000 });
    const before = fake.connections();
    for (let i = 0; i < 3; i++) {
      assert.equal((await collect(chunksOf(await fresh.chatStream(chatRequest())))).at(-1)?.type, 'end');
      await nextTurn(); // undici hands a socket back one event-loop turn after the answer ended
      assert.equal((await fresh.chat(chatRequest())).finishReason, 'stop');
      await nextTurn();
      assert.deepEqual((await collect(fresh.pull({ model: 'fake-small', signal: never }))).at(-1), { status: 'success' });
      await nextTurn();
    }
    assert.equal(fake.connections() - before, 1, 'nine completed answers, one connection');
    await fresh.close();
  });

  it('relays pull progress in camelCase and learns the model', async () => {
    const frames = await collect(engine.pull({ model: 'tinyllama', signal: never }));
    assert.deepEqual(frames[0], { status: 'pulling manifest' });
    const progress = frames.find((f) => f.completed !== undefined)!;
    assert.equal(typeof progress.digest, 'string');
    assert.equal(typeof progress.total, 'number');
    assert.deepEqual(frames.at(-1), { status: 'success' });
    assert.deepEqual(fake.requests.at(-1)!.body, { model: 'tinyllama', stream: true });
    assert.ok((await engine.listModels(never)).some((m) => m.id === 'tinyllama'));
    fake.behaviour = {};
  });

  it('throws on a pull error frame, after relaying what came before', async () => {
    fake.behaviour = { pullFrames: [{ status: 'pulling manifest' }, { error: 'pull model manifest: file does not exist' }] };
    const seen: PullProgress[] = [];
    await rejectsWith(
      (async () => {
        for await (const frame of engine.pull({ model: 'no-such-model', signal: never })) seen.push(frame);
      })(),
      'model_not_found',
      (err) => assert.match(err.message, /no-such-model.*file does not exist/),
    );
    assert.deepEqual(seen, [{ status: 'pulling manifest' }]);
    fake.behaviour = { pullFrames: [{ status: 'pulling manifest' }, { error: 'disk full' }] };
    await rejectsWith(collect(engine.pull({ model: 'big', signal: never })), 'upstream_error', (err) =>
      assert.match(err.message, /disk full/),
    );
    fake.behaviour = { pullFrames: [{ status: 'pulling manifest' }] };
    await rejectsWith(collect(engine.pull({ model: 'big', signal: never })), 'upstream_error', (err) =>
      assert.match(err.message, /without success/),
    );
    fake.behaviour = {};
  });

  it('cancels a pull at the upstream', async () => {
    fake.behaviour = { tokenDelayMs: 200 };
    const aborted = fake.aborted();
    const controller = new AbortController();
    await rejectsWith(
      (async () => {
        for await (const _ of engine.pull({ model: 'slow', signal: controller.signal })) controller.abort();
      })(),
      'aborted',
    );
    await fake.waitForAbort(aborted + 1, 1000);
    fake.behaviour = {};
  });

  describe('failures', () => {
    it("maps Ollama's 404 for a missing model to model_not_found naming the model", async () => {
      const check = (err: EngineError) => {
        assert.equal(err.retryable, false);
        assert.match(err.message, /model "llama9" is not available on ollama node http:\/\/127\.0\.0\.1:\d+/);
        assert.match(err.message, /try pulling it first/);
      };
      await rejectsWith(engine.chat(chatRequest({ model: 'llama9' })), 'model_not_found', check);
      await rejectsWith(engine.chatStream(chatRequest({ model: 'llama9' })), 'model_not_found', check);
      await rejectsWith(engine.embed({ model: 'llama9', input: ['x'], signal: never }), 'model_not_found', check);
    });

    for (const [status, failure] of [
      [500, 'upstream_error'],
      [503, 'overloaded'],
      [429, 'overloaded'],
      [400, 'rejected'],
    ] as [number, EngineFailure][]) {
      it(`maps HTTP ${status} to ${failure}`, async () => {
        fake.behaviour = { status };
        await rejectsWith(engine.chat(chatRequest()), failure, (err) =>
          assert.match(err.message, new RegExp(`fake upstream answered ${status}`)),
        );
        await rejectsWith(engine.chatStream(chatRequest()), failure);
        fake.behaviour = {};
      });
    }

    it('maps a refused connection to unreachable and late headers to timeout', async () => {
      const closed = await startFakeOllama();
      await closed.close();
      const dead = new OllamaEngine({ url: closed.url, timeoutMs: 1000 });
      await rejectsWith(dead.health(never), 'unreachable', (err) => assert.equal(err.retryable, true));
      await rejectsWith(dead.chatStream(chatRequest()), 'unreachable');
      await dead.close();

      // The fake never answers: a timeout is the adapter's own headersTimeout.
      const impatient = new OllamaEngine({ url: fake.url, timeoutMs: 150 });
      fake.behaviour = { hang: true };
      await rejectsWith(impatient.chatStream(chatRequest()), 'timeout', (err) => assert.equal(err.retryable, true));
      fake.behaviour = {};
      await impatient.close();
    });

    it('throws while iterating when the engine dies mid-stream or reports an error in-band', async () => {
      fake.behaviour = { reply: 'a b c d e f', dieAfterTokens: 2 };
      const seen: ChatChunk[] = [];
      await rejectsWith(
        (async () => {
          for await (const c of chunksOf(await engine.chatStream(chatRequest()))) seen.push(c);
        })(),
        'upstream_error',
        (err) => assert.equal(err.retryable, false),
      );
      assert.equal(text(seen), 'a b');
      fake.behaviour = {};

      // Ollama reports failures during generation as an {"error"} line in a 200 stream.
      const server = http.createServer(async (req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.write('{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}\r\n{"model":"m","mess');
        await sleep(5);
        res.write('age":{"role":"assistant","content":"lo"},"done":false}\n');
        await sleep(5);
        // Text and the error in one read: the text still comes first.
        res.end(
          '{"model":"m","message":{"role":"assistant","content":"!"},"done":false}\n{"error":"llama runner process has terminated"}\n',
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const scripted = new OllamaEngine({ url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, timeoutMs: 2000 });
      const partial: ChatChunk[] = [];
      await rejectsWith(
        (async () => {
          for await (const c of chunksOf(await scripted.chatStream(chatRequest({ model: 'm' })))) partial.push(c);
        })(),
        'upstream_error',
        (err) => assert.match(err.message, /llama runner process has terminated/),
      );
      assert.equal(text(partial), 'Hello!');
      await scripted.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
  });

  describe('cancellation and backpressure', () => {
    it('aborts a stream in progress, before headers, a JSON chat, and when the consumer breaks', async () => {
      fake.behaviour = { reply: 'a b c d e f g h', tokenDelayMs: 100 };
      let aborted = fake.aborted();
      const controller = new AbortController();
      await rejectsWith(
        (async () => {
          for await (const c of chunksOf(await engine.chatStream(chatRequest({ signal: controller.signal }))))
            if (c.type === 'delta') controller.abort();
        })(),
        'aborted',
      );
      await fake.waitForAbort(++aborted, 1000);

      for await (const c of chunksOf(await engine.chatStream(chatRequest()))) if (c.type === 'delta') break;
      await fake.waitForAbort(++aborted, 1000);

      for (const [behaviour, call] of [
        [{ delayHeadersMs: 5000 }, (r: ChatRequest) => engine.chatStream(r)],
        [{ hang: true }, (r: ChatRequest) => engine.chat(r)],
      ] as const) {
        fake.behaviour = { ...behaviour };
        const c = new AbortController();
        const pending = call(chatRequest({ signal: c.signal }));
        setTimeout(() => c.abort(), 50);
        await rejectsWith(pending, 'aborted');
        await fake.waitForAbort(++aborted, 1000);
      }
      fake.behaviour = {};
    });

    it('stops the upstream while the consumer stops pulling', async () => {
      const { iterator } = await stallUnreadStream(engine, fake);
      const aborted = fake.aborted();
      await iterator.return!();
      await fake.waitForAbort(aborted + 1, 1000);
      fake.behaviour = {};
    });
  });
});
