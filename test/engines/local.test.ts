// The `local` engine end to end: real llama.cpp in a child process on tiny GGUF
// models generated here, and pulls from a loopback HTTP server.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import { LocalEngine } from '../../src/engines/local/adapter.js';
import type { ChildMessage } from '../../src/engines/local/protocol.js';
import { EngineError, type ChatChunk, type ChatRequest, type PullProgress } from '../../src/engines/types.js';
import { eventually } from '../helpers/eventually.js';
import { TEST_TMP } from '../helpers/paths.js';
import { tinyGgufBytes, writeTinyGguf } from '../helpers/tiny-gguf.js';
import { chunksOf, collect, never, rejectsWith } from './support.js';

const root = path.join(TEST_TMP, `local-engine-${process.pid}`);
const modelsDir = path.join(root, 'models');
const logs: string[] = [];

function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'tiny', messages: [{ role: 'user', content: 'hello' }], maxTokens: 300, temperature: 0, signal: never, ...overrides };
}

async function ids(engine: LocalEngine): Promise<string[]> {
  return (await engine.listModels(never)).map((m) => m.id);
}

function startedChildren(): number {
  return logs.filter((l) => /local engine process \d+ started/.test(l)).length;
}

/**
 * The generations the engine's child process reports from now on: each one's `started`
 * (with the maxTokens it was given) and `end` (with the tokens it made). Read from the
 * child's IPC channel, the child's own account, so that a test counts tokens rather
 * than timing them.
 */
function watchGenerations(engine: LocalEngine) {
  const child = (engine as unknown as { host: { child?: ChildProcess } }).host.child;
  assert.ok(child, 'the child process is running');
  const starts: Extract<ChildMessage, { type: 'started' }>[] = [];
  const ends: Extract<ChildMessage, { type: 'end' }>[] = [];
  const onMessage = (message: ChildMessage) => {
    if (message.type === 'started') starts.push(message);
    if (message.type === 'end') ends.push(message);
  };
  child.on('message', onMessage);
  return { starts, ends, stop: () => child.off('message', onMessage) };
}

describe('local engine (llama.cpp child process)', () => {
  let engine: LocalEngine;

  before(() => {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(modelsDir, { recursive: true });
    writeTinyGguf(path.join(modelsDir, 'tiny.gguf'), { seed: 1 });
    writeTinyGguf(path.join(modelsDir, 'short.gguf'), { seed: 3 }); // greedy output ends (</s>) after ~50 tokens
    // Generation never ends on its own, and a 4096-token context leaves room for seconds of it.
    writeTinyGguf(path.join(modelsDir, 'endless.gguf'), { seed: 1, endless: true, contextLength: 4096 });
    // Without this key llama.cpp aborts the process; the header check refuses it first.
    writeTinyGguf(path.join(modelsDir, 'no-ffn.gguf'), { omit: ['llama.feed_forward_length'] });
    writeFileSync(path.join(modelsDir, 'junk.gguf'), Buffer.alloc(4096, 7));
    writeFileSync(path.join(modelsDir, 'truncated.gguf'), tinyGgufBytes({ seed: 1 }).subarray(0, 2000));
    writeTinyGguf(path.join(modelsDir, '.hidden.gguf'));
    writeTinyGguf(path.join(modelsDir, 'not-a-model.bin'));
    engine = new LocalEngine({
      modelsDir,
      threads: 1,
      contextSize: 4096,
      timeoutMs: 60_000, // generous: a busy CI machine can leave a paused reader unread for seconds
      pullMaxBytes: 4 * 1024 * 1024,
      onLog: (level, message) => logs.push(`${level}: ${message}`),
    });
  });
  after(async () => {
    await engine.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('lists only files whose GGUF header validates, without starting llama.cpp', async () => {
    await engine.health(never);
    assert.deepEqual(await ids(engine), ['endless', 'short', 'tiny']);
    const [model] = await engine.listModels(never);
    assert.equal(model!.ownedBy, 'local');
    assert.equal(typeof model!.created, 'number');
    assert.equal(startedChildren(), 0, 'listing needs no child process');
  });

  it('health creates a missing models directory', async () => {
    const dir = path.join(root, 'fresh', 'models');
    const fresh = new LocalEngine({ modelsDir: dir, threads: 1, contextSize: 256, timeoutMs: 1000, pullMaxBytes: 1024 });
    await fresh.health(never);
    assert.ok(existsSync(dir));
    assert.deepEqual(await fresh.listModels(never), []);
    await fresh.close();
  });

  it('chat: applies the template, counts real tokens, is deterministic at temperature 0', async () => {
    const first = await engine.chat(chatRequest({ maxTokens: 20 }));
    assert.equal(startedChildren(), 1);
    // The configured thread count reaches llama.cpp (its default, one per core, collapses under load).
    assert.ok(
      logs.some((l) => /local model tiny loaded for chat .*\(context 256 tokens, 1 threads\)/.test(l)),
      logs.join('\n'),
    );
    assert.equal(first.finishReason, 'length');
    assert.equal(first.usage.completionTokens, 20);
    assert.ok(first.content.length > 0);
    const again = await engine.chat(chatRequest({ maxTokens: 20 }));
    assert.deepEqual(again, first);
    // The prompt count is the rendered template's: more text, more tokens; a system message adds its own.
    const longer = await engine.chat(chatRequest({ maxTokens: 1, messages: [{ role: 'user', content: 'hello hello hello hello' }] }));
    const withSystem = await engine.chat(
      chatRequest({
        maxTokens: 1,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello' },
        ],
      }),
    );
    assert.ok(first.usage.promptTokens! > 5);
    assert.ok(longer.usage.promptTokens! > first.usage.promptTokens!);
    assert.ok(withSystem.usage.promptTokens! > first.usage.promptTokens!);
  });

  it('chat: finish reason stop when the model ends on its own', async () => {
    const result = await engine.chat(chatRequest({ model: 'short', maxTokens: 200 }));
    assert.equal(result.finishReason, 'stop');
    assert.ok(result.usage.completionTokens! > 0 && result.usage.completionTokens! < 200, String(result.usage.completionTokens));
  });

  it('chatStream: deltas, then one end with usage matching the JSON answer', async () => {
    const chunks: ChatChunk[] = await collect(chunksOf(await engine.chatStream(chatRequest({ maxTokens: 40 }))));
    const end = chunks.at(-1)!;
    assert.equal(end.type, 'end');
    const deltas = chunks.slice(0, -1);
    assert.ok(deltas.length > 1 && deltas.every((c) => c.type === 'delta'));
    const json = await engine.chat(chatRequest({ maxTokens: 40 }));
    assert.equal(deltas.map((c) => (c.type === 'delta' ? c.content : '')).join(''), json.content);
    assert.deepEqual(end.type === 'end' && end.usage, json.usage);
    assert.equal(end.type === 'end' && end.finishReason, 'length');
    // Every delta carries at least one generated token.
    assert.ok(deltas.length <= json.usage.completionTokens!);
  });

  it('unknown and unusable models are model_not_found, before anything is streamed', async () => {
    await rejectsWith(engine.chatStream(chatRequest({ model: 'nope' })), 'model_not_found', /no model "nope"/);
    await rejectsWith(engine.chatStream(chatRequest({ model: 'no-ffn' })), 'model_not_found', /feed_forward_length is missing/);
    await rejectsWith(engine.chatStream(chatRequest({ model: '../models/tiny' })), 'model_not_found');
    await rejectsWith(engine.embed({ model: 'junk', input: ['x'], signal: never }), 'model_not_found', /bad magic/);
    await rejectsWith(engine.chatStream(chatRequest({ maxTokens: 0 })), 'rejected', /maxTokens/);
  });

  it('a file llama.cpp refuses to load (without crashing) is model_not_found and no longer listed', async () => {
    writeTinyGguf(path.join(modelsDir, 'bad-shape.gguf'), { override: { 'llama.attention.head_count_kv': 3 } });
    assert.ok((await ids(engine)).includes('bad-shape'), 'the header alone looks fine');
    await rejectsWith(engine.chat(chatRequest({ model: 'bad-shape' })), 'model_not_found', /could not load.*wrong shape/);
    assert.ok(!(await ids(engine)).includes('bad-shape'));
    rmSync(path.join(modelsDir, 'bad-shape.gguf'));
  });

  it('a prompt longer than the context is rejected', async () => {
    const content = 'hello '.repeat(300);
    await rejectsWith(engine.chat(chatRequest({ messages: [{ role: 'user', content }] })), 'rejected', /context holds 256/);
  });

  it('embed: one vector of n_embd numbers per input, deterministic', async () => {
    const vectors = await engine.embed({ model: 'tiny', input: ['hello world', 'the otter', 'hello world'], signal: never });
    assert.equal(vectors.length, 3);
    for (const v of vectors) {
      assert.equal(v.length, 64);
      assert.ok(v.every(Number.isFinite));
    }
    assert.deepEqual(vectors[0], vectors[2]);
    assert.notDeepEqual(vectors[0], vectors[1]);
  });

  it('abort mid-stream ends the stream at once and stops generation', async () => {
    const generations = watchGenerations(engine);
    const controller = new AbortController();
    const stream = await engine.chatStream(chatRequest({ model: 'endless', maxTokens: 4000, signal: controller.signal }));
    const iterator = stream[Symbol.asyncIterator]();
    for (let i = 0; i < 3; i++) assert.equal((await iterator.next()).value?.[0]?.type, 'delta');
    controller.abort();
    await rejectsWith(iterator.next(), 'aborted');
    // The model serves one generation at a time: the next request can only start once the aborted one stopped.
    const next = await engine.chat(chatRequest({ model: 'endless', maxTokens: 5 }));
    assert.equal(next.usage.completionTokens, 5);
    // The child's own account of the aborted generation: it stopped at the abort, a few
    // tokens in (the reader took three; generation pauses a window ahead), not at its 4000.
    const aborted = generations.ends[0]!;
    generations.stop();
    assert.ok(aborted.completionTokens < 100, `the aborted generation made ${aborted.completionTokens} tokens`);
  });

  it('abort before the first token (queued behind another generation) gives up its place at once', async () => {
    // The first stream holds the model: its reader takes one delta, then stalls (generation pauses).
    const holder = (await engine.chatStream(chatRequest({ model: 'endless', maxTokens: 200 })))[Symbol.asyncIterator]();
    await holder.next();
    const generations = watchGenerations(engine);
    const controller = new AbortController();
    const queued = engine.chatStream(chatRequest({ model: 'endless', maxTokens: 4000, signal: controller.signal }));
    await sleep(100);
    controller.abort();
    // Failed while the holder, unread, still holds the model: it did not wait for its turn.
    await rejectsWith(queued, 'aborted');
    for (let step = await holder.next(); !step.done; step = await holder.next());
    const next = await engine.chat(chatRequest({ model: 'endless', maxTokens: 3, signal: AbortSignal.timeout(60_000) }));
    assert.equal(next.usage.completionTokens, 3);
    // Had the aborted request kept its place, it would have generated before this one.
    generations.stop();
    assert.deepEqual(
      generations.starts.map((s) => s.maxTokens),
      [3],
      'only the next request generated',
    );
  });

  it('a stalled reader pauses generation (bounded buffering) and resumes it', async () => {
    const stream = await engine.chatStream(chatRequest({ model: 'endless', maxTokens: 400 }));
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    // 400 tokens take ~0.2-0.5 s unpaused; paused, the next request for the model cannot start.
    let secondStarted = false;
    const second = engine.chatStream(chatRequest({ model: 'endless', maxTokens: 3 })).then((s) => {
      secondStarted = true;
      return s;
    });
    await sleep(1500);
    assert.equal(secondStarted, false, 'the first generation ran on while its reader was stalled');
    const isDelta = (chunk: ChatChunk) => chunk.type === 'delta';
    let deltas = first.done ? 0 : first.value.filter(isDelta).length;
    for (let step = await iterator.next(); !step.done; step = await iterator.next()) deltas += step.value.filter(isDelta).length;
    assert.ok(deltas > 50, `only ${deltas} deltas`);
    const rest = await collect(chunksOf(await second));
    assert.equal(rest.at(-1)?.type, 'end');
  });

  it('timeouts: a request queued behind a slow reader times out; a reader that stops reading is cut off', async () => {
    const quick = new LocalEngine({ modelsDir, threads: 1, contextSize: 256, timeoutMs: 1500, pullMaxBytes: 1024 });
    try {
      // The child's cold start counts against the first request's deadline: retry until it is up.
      for (let attempt = 0; ; attempt++) {
        const outcome = await quick.chat(chatRequest({ maxTokens: 1 })).catch((error: unknown) => error);
        if (!(outcome instanceof Error)) break;
        if (attempt >= 10 || !(outcome instanceof EngineError && outcome.failure === 'timeout')) throw outcome;
      }
      // A reader taking a batch (at most a window of 16 tokens) every 500 ms holds the model (paused
      // generation) for seconds, without ever stalling for the 1.5 s that would cut it off.
      let reading = true;
      const slowStream = await quick.chatStream(chatRequest({ model: 'endless', maxTokens: 200 }));
      const slow = (async () => {
        for await (const _batch of slowStream) {
          await sleep(500);
          if (!reading) break;
        }
      })();
      const queued = await rejectsWith(quick.chat(chatRequest({ model: 'endless', maxTokens: 3 })), 'timeout');
      assert.equal(queued.retryable, true);
      reading = false;
      await slow;

      const stalled = (await quick.chatStream(chatRequest({ model: 'endless', maxTokens: 200 })))[Symbol.asyncIterator]();
      await stalled.next();
      await sleep(1700);
      await rejectsWith(
        (async () => {
          for (let step = await stalled.next(); !step.done; step = await stalled.next());
        })(),
        'timeout',
        /took nothing for 1500 ms/,
      );
      // The model is free again.
      assert.equal((await quick.chat(chatRequest({ model: 'endless', maxTokens: 3 }))).usage.completionTokens, 3);
    } finally {
      await quick.close();
    }
  });

  it('concurrent requests on one model are served in turn without mixing', async () => {
    const alone = await engine.chat(chatRequest({ maxTokens: 30 }));
    const other = await engine.chat(chatRequest({ maxTokens: 30, messages: [{ role: 'user', content: 'the world' }] }));
    const results = await Promise.all([
      engine.chat(chatRequest({ maxTokens: 30 })),
      engine.chat(chatRequest({ maxTokens: 30, messages: [{ role: 'user', content: 'the world' }] })),
      engine.chat(chatRequest({ maxTokens: 30 })),
    ]);
    assert.deepEqual(results, [alone, other, alone]);
  });

  it('a file that passes the header check but aborts llama.cpp only takes down the child', async () => {
    // expert_count without expert_used_count: llama.cpp hits GGML_ASSERT and abort()s.
    const crashFile = path.join(modelsDir, 'crash.gguf');
    writeTinyGguf(crashFile, { override: { 'llama.expert_count': 2 } });
    assert.ok((await ids(engine)).includes('crash'));
    const childrenBefore = startedChildren();

    // A stream in flight on a good model when the child dies fails too, in-band.
    const inFlight = await engine.chatStream(chatRequest({ model: 'endless', maxTokens: 4000 }));
    const iterator = inFlight[Symbol.asyncIterator]();
    await iterator.next();

    const crash = await rejectsWith(engine.chat(chatRequest({ model: 'crash' })), 'upstream_error', /exited \(SIGABRT\)/);
    assert.equal(crash.retryable, false);
    await assert.rejects(
      async () => {
        for (let step = await iterator.next(); !step.done; step = await iterator.next());
      },
      (error: unknown) => error instanceof EngineError && /exited/.test(error.message),
    );

    // Remembered as broken: not offered, not loaded again.
    assert.ok(!(await ids(engine)).includes('crash'));
    await rejectsWith(engine.chat(chatRequest({ model: 'crash' })), 'model_not_found', /crashed llama.cpp/);
    // The next request on a good model starts a fresh child and works.
    const result = await engine.chat(chatRequest({ maxTokens: 5 }));
    assert.equal(result.usage.completionTokens, 5);
    assert.equal(startedChildren(), childrenBefore + 1);

    // A changed file is a new candidate.
    writeTinyGguf(crashFile, { seed: 9 });
    utimesSync(crashFile, new Date(), new Date(Date.now() + 5000));
    assert.ok((await ids(engine)).includes('crash'));
    assert.equal((await engine.chat(chatRequest({ model: 'crash', maxTokens: 3 }))).usage.completionTokens, 3);
  });

  describe('pull', () => {
    const good = tinyGgufBytes({ seed: 5 });
    const goodSha = createHash('sha256').update(good).digest('hex');
    const crashing = tinyGgufBytes({ seed: 5, override: { 'llama.expert_count': 2 } });
    let server: http.Server;
    let base: string;
    let release: () => void = () => {};
    const checked: string[] = [];

    before(async () => {
      server = http.createServer((req, res) => {
        const send = (body: Buffer) => res.writeHead(200, { 'content-length': body.length }).end(body);
        if (req.url === '/tiny.gguf') send(good);
        else if (req.url === '/crash.gguf') send(crashing);
        else if (req.url === '/junk.gguf') send(Buffer.alloc(100_000, 1));
        else if (req.url === '/hop1') res.writeHead(302, { location: '/hop2' }).end();
        else if (req.url === '/hop2') res.writeHead(307, { location: `${base}/tiny.gguf` }).end();
        else if (req.url === '/loop') res.writeHead(302, { location: '/loop' }).end();
        else if (req.url === '/big.gguf') send(Buffer.alloc(5 * 1024 * 1024));
        else if (req.url === '/server-error.gguf') res.writeHead(500).end();
        else if (req.url === '/cut.gguf') {
          res.writeHead(200, { 'content-length': good.length });
          res.write(good.subarray(0, good.length / 2), () => res.destroy());
        } else if (req.url === '/stall.gguf') {
          // Half the file, then nothing until the test lets go.
          res.writeHead(200, { 'content-length': good.length });
          res.write(good.subarray(0, good.length / 2));
          release = () => res.destroy();
        } else res.writeHead(404).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async () => {
      release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    function partials(): string[] {
      const dir = path.join(modelsDir, '.partial');
      return existsSync(dir) ? readdirSync(dir) : [];
    }

    it('downloads with progress, verifies sha256, validates, then offers the model', async () => {
      const frames: PullProgress[] = await collect(
        engine.pull({ model: 'pulled', url: `${base}/tiny.gguf`, sha256: goodSha, signal: never }),
      );
      const statuses = frames.map((f) => f.status);
      assert.equal(statuses[0], 'downloading');
      assert.deepEqual(frames[0], { status: 'downloading', total: good.length, completed: 0 });
      const downloads = frames.filter((f) => f.status === 'downloading');
      assert.deepEqual(downloads.at(-1), { status: 'downloading', total: good.length, completed: good.length });
      assert.ok(downloads.every((f, i) => i === 0 || f.completed! >= downloads[i - 1]!.completed!));
      assert.deepEqual(statuses.slice(downloads.length), ['verifying sha256 digest', 'validating', 'success']);
      assert.equal(frames.find((f) => f.status === 'verifying sha256 digest')!.digest, `sha256:${goodSha}`);
      assert.deepEqual(readFileSync(path.join(modelsDir, 'pulled.gguf')), good);
      assert.ok((await ids(engine)).includes('pulled'));
      assert.equal((await engine.chat(chatRequest({ model: 'pulled', maxTokens: 4 }))).usage.completionTokens, 4);
      assert.deepEqual(partials(), []);
    });

    it('follows redirects, checking every hop', async () => {
      checked.length = 0;
      const redirected = new LocalEngine({
        modelsDir,
        threads: 1,
        contextSize: 256,
        timeoutMs: 10_000,
        pullMaxBytes: 4 * 1024 * 1024,
        checkUrl: async (url) => void checked.push(url.pathname),
      });
      try {
        const frames = await collect(redirected.pull({ model: 'redirected.gguf', url: `${base}/hop1`, signal: never }));
        assert.equal(frames.at(-1)?.status, 'success');
        assert.ok(!frames.some((f) => f.status === 'verifying sha256 digest'));
        assert.deepEqual(checked, ['/hop1', '/hop2', '/tiny.gguf']);
        assert.ok((await ids(engine)).includes('redirected'));
        await rejectsWith(
          collect(redirected.pull({ model: 'x', url: `${base}/loop`, signal: never })),
          'download_failed',
          /more than 5 redirects/,
        );
      } finally {
        await redirected.close();
      }
    });

    it('a refusal by checkUrl stops the pull before any request', async () => {
      const guarded = new LocalEngine({
        modelsDir,
        threads: 1,
        contextSize: 256,
        timeoutMs: 10_000,
        pullMaxBytes: 1024,
        checkUrl: async () => {
          throw new Error('the address 127.0.0.1 is not allowed');
        },
      });
      await rejectsWith(collect(guarded.pull({ model: 'guarded', url: `${base}/tiny.gguf`, signal: never })), 'rejected', /not allowed/);
      await guarded.close();
    });

    it('a sha256 mismatch keeps nothing', async () => {
      const wrong = 'a'.repeat(64);
      await rejectsWith(
        collect(engine.pull({ model: 'mismatch', url: `${base}/tiny.gguf`, sha256: wrong, signal: never })),
        'rejected',
        /SHA-256 mismatch/,
      );
      assert.ok(!existsSync(path.join(modelsDir, 'mismatch.gguf')));
      assert.deepEqual(partials(), []);
    });

    it('files that are not GGUF, or crash llama.cpp, are refused and never listed', async () => {
      await rejectsWith(
        collect(engine.pull({ model: 'junk-pull', url: `${base}/junk.gguf`, signal: never })),
        'rejected',
        /not a usable GGUF model: not a GGUF file/,
      );
      // This one passes the header check; the trial load refuses it, in a child of its own: the serving
      // child and the generation in flight on it live on.
      const inFlight = (await engine.chatStream(chatRequest({ model: 'endless', maxTokens: 200 })))[Symbol.asyncIterator]();
      const children = startedChildren();
      await rejectsWith(
        collect(engine.pull({ model: 'crash-pull', url: `${base}/crash.gguf`, signal: never })),
        'rejected',
        /refused: loading it crashed llama.cpp.*SIGABRT/,
      );
      assert.equal(startedChildren(), children + 1);
      let tokens = 0;
      for (let step = await inFlight.next(); !step.done; step = await inFlight.next()) {
        const last = step.value.at(-1)!;
        if (last.type === 'end') tokens = last.usage.completionTokens!;
      }
      assert.equal(tokens, 200);
      const listed = await ids(engine);
      assert.ok(!listed.includes('junk-pull') && !listed.includes('crash-pull'));
      assert.ok(!existsSync(path.join(modelsDir, 'crash-pull.gguf')));
      assert.deepEqual(partials(), []);
      assert.equal((await engine.chat(chatRequest({ maxTokens: 2 }))).usage.completionTokens, 2);
    });

    it('an existing model is replaced only by a file that validated', async () => {
      const before = readFileSync(path.join(modelsDir, 'pulled.gguf'));
      await rejectsWith(collect(engine.pull({ model: 'pulled', url: `${base}/junk.gguf`, signal: never })), 'rejected');
      assert.deepEqual(readFileSync(path.join(modelsDir, 'pulled.gguf')), before);
      assert.ok((await ids(engine)).includes('pulled'));
    });

    it('the size cap, bad names, bad URLs and HTTP errors fail with clear errors', async () => {
      await rejectsWith(collect(engine.pull({ model: 'big', url: `${base}/big.gguf`, signal: never })), 'rejected', /pull limit/);
      for (const model of ['../evil', 'a/b', '.hidden', '', 'x'.repeat(300)]) {
        await rejectsWith(collect(engine.pull({ model, url: `${base}/tiny.gguf`, signal: never })), 'rejected', /not a usable model name/);
      }
      await rejectsWith(collect(engine.pull({ model: 'y', url: 'file:///etc/passwd', signal: never })), 'rejected', /http or https/);
      await rejectsWith(collect(engine.pull({ model: 'y', signal: never })), 'rejected', /needs the URL/);
      await rejectsWith(
        collect(engine.pull({ model: 'y', url: `${base}/tiny.gguf`, sha256: 'abc', signal: never })),
        'rejected',
        /64 hexadecimal/,
      );
      await rejectsWith(collect(engine.pull({ model: 'y', url: `${base}/missing.gguf`, signal: never })), 'download_failed', /HTTP 404/);
      assert.deepEqual(partials(), []);
    });

    it("a download that fails (refused, HTTP 500, cut off, stalled) is download_failed, never retryable: the URL is the caller's, not this node's", async () => {
      const failures = [
        await rejectsWith(
          collect(engine.pull({ model: 'y', url: 'http://127.0.0.1:1/x.gguf', signal: never })),
          'download_failed',
          /^The download failed: connect ECONNREFUSED 127\.0\.0\.1:1$/,
        ),
        await rejectsWith(
          collect(engine.pull({ model: 'y', url: `${base}/server-error.gguf`, signal: never })),
          'download_failed',
          /HTTP 500/,
        ),
        await rejectsWith(
          collect(engine.pull({ model: 'y', url: `${base}/cut.gguf`, signal: never })),
          'download_failed',
          /^The download failed: /,
        ),
      ];
      const quick = new LocalEngine({ modelsDir, threads: 1, contextSize: 256, timeoutMs: 300, pullMaxBytes: 4 * 1024 * 1024 });
      try {
        failures.push(
          await rejectsWith(collect(quick.pull({ model: 'y', url: `${base}/stall.gguf`, signal: never })), 'download_failed', /stalled/),
        );
      } finally {
        release();
        await quick.close();
      }
      for (const failure of failures) assert.equal(failure.retryable, false, failure.message);
      assert.deepEqual(partials(), []);
    });

    it('abort mid-download removes the partial file', async () => {
      const controller = new AbortController();
      const pulling = engine.pull({ model: 'stalled', url: `${base}/stall.gguf`, signal: controller.signal })[Symbol.asyncIterator]();
      assert.equal((await pulling.next()).value?.status, 'downloading');
      const rest = (async () => {
        for (let step = await pulling.next(); !step.done; step = await pulling.next());
      })();
      // Wait until the first half is on disk (the server then stalls).
      await eventually('the partial file', () => partials().length > 0);
      assert.equal(partials().length, 1);
      controller.abort();
      await rejectsWith(rest, 'aborted');
      release();
      assert.deepEqual(partials(), []);
      assert.ok(!(await ids(engine)).includes('stalled'));
    });
  });
});
