// POST /api/llm/v1/{engine}/models/pull/stream: who may pull, what a pull request
// must hold, Ollama's progress relayed as camelCase frames (success and error),
// the pull cancelled when the admin goes away, a local pull end to end (a tiny
// GGUF from a loopback server into the models dir, listed and served at once), and
// pulls that fail by the caller's fault never counting against the node.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TestGateway } from '../helpers/gateway.js';
import { seedWorld } from '../helpers/world.js';
import { startFakeOllama, type FakeEngine } from '../helpers/fake-engines/index.js';
import { eventually } from '../helpers/eventually.js';
import { tinyGgufBytes } from '../helpers/tiny-gguf.js';
import { gatewayOver, openStream, payloads } from './chat-support.js';

const pullPath = (engine: string) => `/api/llm/v1/${engine}/models/pull/stream`;
const FRAME_KEYS = new Set(['status', 'digest', 'total', 'completed']);

describe('llm model pull stream', () => {
  let gw: TestGateway;
  let ollama: FakeEngine;
  let files: http.Server;
  let filesUrl: string;
  const gguf = tinyGgufBytes({ seed: 7 });
  const otherGguf = tinyGgufBytes({ seed: 8 });
  let admin: string, member: string, key: string, platformAdmin: string, otherAdmin: string;

  const pull = (engine: string, json: unknown, credential: { token?: string; apiKey?: string } = { token: admin }) =>
    gw.request('POST', pullPath(engine), { ...credential, json });
  const stream = (engine: string, json: unknown) => openStream(gw, pullPath(engine), json, { authorization: `Bearer ${admin}` });

  before(async () => {
    ollama = await startFakeOllama({ models: ['present:latest'] });
    files = http.createServer((req, res) => {
      if (req.url === '/to-internal.gguf') {
        // A public-looking file whose server sends the download into a private range.
        res.writeHead(302, { location: 'http://10.20.30.40/tiny.gguf' }).end();
      } else if (req.url === '/other.gguf') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': otherGguf.length });
        res.end(otherGguf);
      } else if (req.url === '/tiny.gguf') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': gguf.length });
        res.end(gguf);
      } else if (req.url === '/server-error.gguf') {
        res.writeHead(500).end();
      } else if (req.url === '/cut.gguf') {
        // Half the file, then the connection drops: the download breaks after the pull's first frame.
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': gguf.length });
        res.write(gguf.subarray(0, gguf.length / 2), () => res.destroy());
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    // The local engine on (its default), next to one Ollama node.
    // The file server is on loopback, which tenant admins may not download from by
    // default; the tenant deny list here is a private range probed explicitly below.
    gw = await gatewayOver([ollama], {
      GATEWAY_LOCAL_ENGINE: 'on',
      GATEWAY_LOCAL_THREADS: '1',
      GATEWAY_TENANT_NODE_DENY_CIDRS: '10.0.0.0/8',
    });
    const world = await seedWorld(gw, 'pull');
    admin = world.a.admin.token;
    member = world.a.member.token;
    key = world.a.key.key;
    platformAdmin = world.platform.admin.token;
    otherAdmin = world.b.admin.token;
  });
  after(async () => {
    await gw?.close();
    await ollama?.close();
    await new Promise((resolve) => files?.close(resolve));
  });

  it('is for tenant admins only', async () => {
    const json = { model: 'llama3.2:1b' };
    assert.equal((await pull('ollama', json, {})).status, 401);
    const byKey = await pull('ollama', json, { apiKey: key });
    assert.equal(byKey.status, 403);
    assert.equal(byKey.body.code, 'FORBIDDEN');
    assert.equal((await pull('ollama', json, { token: member })).status, 403);
    assert.equal(ollama.requests.filter((r) => r.path === '/api/pull').length, 0, 'nothing reached the engine');
  });

  it('answers 404 for engines that cannot pull', async () => {
    for (const engine of ['openai', 'nope']) {
      const response = await pull(engine, { model: 'x' });
      assert.equal(response.status, 404, engine);
      assert.equal(response.body.code, 'NOT_FOUND');
    }
  });

  it('validates the request, naming the field', async () => {
    const cases: [string, unknown, string][] = [
      ['ollama', {}, 'model'],
      ['ollama', { model: '' }, 'model'],
      ['ollama', { model: 'has space' }, 'model'],
      ['ollama', { model: 'llama3', url: 'http://example.test/x.gguf' }, 'url'],
      ['ollama', { model: 'llama3', sha256: 'a'.repeat(64) }, 'sha256'],
      ['local', { model: 'tiny.gguf' }, 'url'],
      ['local', { model: 'tiny.gguf', url: 'ftp://example.test/tiny.gguf' }, 'url'],
      ['local', { model: 'tiny.gguf', url: 'not a url' }, 'url'],
      ['local', { model: '../escape.gguf', url: `${filesUrl}/tiny.gguf` }, 'model'],
      ['local', { model: '.hidden', url: `${filesUrl}/tiny.gguf` }, 'model'],
      ['local', { model: 'tiny.gguf', url: 'http://10.20.30.40/tiny.gguf' }, 'url'],
      ['local', { model: 'tiny.gguf', url: 'http://169.254.169.254/latest/meta-data' }, 'url'],
      ['local', { model: 'tiny.gguf', url: `${filesUrl}/tiny.gguf`, sha256: 'abc' }, 'sha256'],
    ];
    for (const [engine, json, field] of cases) {
      const response = await pull(engine, json);
      assert.equal(response.status, 400, `${engine} ${JSON.stringify(json)}: ${response.text}`);
      assert.ok(
        response.body.errors.some((e: { field: string }) => e.field === field),
        `${JSON.stringify(json)} names ${field}: ${response.text}`,
      );
    }
  });

  it("relays Ollama's pull progress as camelCase frames ending in success", async () => {
    const s = await stream('ollama', { model: 'llama3.2:1b' });
    assert.equal(s.status, 200);
    assert.equal(s.headers['content-type'], 'text/event-stream');
    assert.equal(s.headers['x-accel-buffering'], 'no');
    const frames = payloads(await s.end());
    assert.ok(frames.length >= 3, JSON.stringify(frames));
    for (const frame of frames) {
      assert.notEqual(frame, '[DONE]', 'the pull stream ends with its success frame');
      assert.ok(
        Object.keys(frame).every((k) => FRAME_KEYS.has(k)),
        JSON.stringify(frame),
      );
    }
    assert.deepEqual(frames.at(-1), { status: 'success' });
    assert.ok(frames.some((f) => typeof f.total === 'number' && typeof f.completed === 'number' && typeof f.digest === 'string'));
    const sent = ollama.requests.filter((r) => r.path === '/api/pull').at(-1)!;
    assert.equal(sent.body.model, 'llama3.2:1b');
    // The node's model list is re-read before `success`: the model is usable at once.
    const models = await gw.request('GET', '/api/llm/v1/models', { token: admin });
    assert.ok(
      models.body.data.some((m: { id: string }) => m.id === 'llama3.2:1b'),
      JSON.stringify(models.body.data),
    );
  });

  it('ends with an error frame when the engine fails the pull', async () => {
    ollama.behaviour.pullFrames = [{ status: 'pulling manifest' }, { error: 'pull model manifest: file does not exist' }];
    try {
      const s = await stream('ollama', { model: 'missing:latest' });
      assert.equal(s.status, 200);
      const frames = payloads(await s.end());
      assert.deepEqual(frames[0], { status: 'pulling manifest' });
      const last = frames.at(-1);
      assert.equal(last.status, 'error');
      assert.deepEqual(Object.keys(last.error).sort(), ['code', 'message']);
      assert.match(last.error.message, /file does not exist/);
      assert.equal(typeof last.error.code, 'string');
      assert.equal(frames.length, 2);
    } finally {
      delete ollama.behaviour.pullFrames;
    }
  });

  it('cancels the pull at the engine when the client goes away', async () => {
    ollama.behaviour.tokenDelayMs = 300;
    try {
      const s = await stream('ollama', { model: 'slow:latest' });
      await s.until((items) => items.length >= 1);
      const aborted = ollama.aborted();
      s.destroy();
      await ollama.waitForAbort(aborted + 1, 1000);
    } finally {
      delete ollama.behaviour.tokenDelayMs;
    }
  });

  it('cancels the pull at the engine when the client goes away before the first frame', async () => {
    ollama.behaviour.delayHeadersMs = 20_000;
    try {
      const inFlight = ollama.inFlight();
      const controller = new AbortController();
      const answer = fetch(gw.url + pullPath('ollama'), {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow:latest' }),
        signal: controller.signal,
      }).catch((error: unknown) => error);
      await eventually('the engine to receive the request', () => ollama.inFlight() !== inFlight);
      const aborted = ollama.aborted();
      controller.abort();
      assert.ok((await answer) instanceof Error);
      await ollama.waitForAbort(aborted + 1, 1000);
    } finally {
      delete ollama.behaviour.delayHeadersMs;
    }
  });

  it('pulls a GGUF from a URL into the local engine, verified, listed and served', async () => {
    const sha256 = createHash('sha256').update(gguf).digest('hex');
    const s = await stream('local', { model: 'pulled-tiny.gguf', url: `${filesUrl}/tiny.gguf`, sha256: sha256.toUpperCase() });
    assert.equal(s.status, 200);
    const frames = payloads(await s.end(60_000));
    assert.deepEqual(frames.at(-1), { status: 'success' }, JSON.stringify(frames));
    assert.ok(frames.some((f) => f.status === 'downloading' && f.total === gguf.length));
    assert.ok(frames.some((f) => f.digest === `sha256:${sha256}`));
    const modelsDir = path.join(gw.dataDir, 'models');
    assert.ok(existsSync(path.join(modelsDir, 'pulled-tiny.gguf')));
    assert.deepEqual(
      readdirSync(modelsDir).filter((f) => f.endsWith('.gguf')),
      ['pulled-tiny.gguf'],
      'no partial file where models are listed',
    );

    const models = await gw.request('GET', '/api/llm/v1/models', { apiKey: key });
    assert.ok(
      models.body.data.some((m: { id: string }) => m.id === 'pulled-tiny'),
      JSON.stringify(models.body.data),
    );
    const chat = await gw.request('POST', '/api/llm/v1/chat/completions', {
      apiKey: key,
      json: { model: 'pulled-tiny', max_tokens: 4, messages: [{ role: 'user', content: 'hello' }] },
    });
    assert.equal(chat.status, 200, chat.text);
    assert.equal(chat.body.model, 'pulled-tiny');
    assert.ok(chat.body.usage.completion_tokens >= 1);
  });

  it("holds every redirect hop of a tenant admin's download to the tenant deny list", async () => {
    // Refused by the deny list, which is checked before any connection is tried (a connection
    // to 10.20.30.40 would fail otherwise: unreachable or timed out, not this answer).
    const response = await pull('local', { model: 'redirected.gguf', url: `${filesUrl}/to-internal.gguf` });
    const text = response.status === 200 ? response.text : JSON.stringify(response.body);
    assert.match(text, /10\.20\.30\.40.*deny list|deny list.*10\.20\.30\.40/, text);
    assert.ok(!existsSync(path.join(gw.dataDir, 'models', 'redirected.gguf')));
  });

  it("lets a tenant admin add models to the shared local engine but not replace one (it may be another tenant's); a platform admin may", async () => {
    const stored = () => readFileSync(path.join(gw.dataDir, 'models', 'pulled-tiny.gguf'));
    assert.deepEqual(stored(), gguf, 'pulled by the test above');
    for (const token of [otherAdmin, admin]) {
      const refused = await gw.request('POST', pullPath('local'), {
        token,
        json: { model: 'pulled-tiny.gguf', url: `${filesUrl}/other.gguf` },
      });
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.code, 'CONFLICT');
      assert.match(refused.body.detail, /"pulled-tiny" is already on this engine.*platform admin/);
      assert.deepEqual(stored(), gguf, 'untouched');
    }
    const s = await openStream(
      gw,
      pullPath('local'),
      { model: 'pulled-tiny.gguf', url: `${filesUrl}/other.gguf` },
      { authorization: `Bearer ${platformAdmin}` },
    );
    assert.deepEqual(payloads(await s.end(60_000)).at(-1), { status: 'success' });
    assert.deepEqual(stored(), otherGguf, 'replaced by the platform admin');
  });

  it('two tenant admins racing for a new name on the shared engine: one model placed, the other pull refused', async () => {
    const race = [admin, otherAdmin].map(async (token) => {
      const s = await openStream(
        gw,
        pullPath('local'),
        { model: 'raced.gguf', url: `${filesUrl}/${token === admin ? 'tiny' : 'other'}.gguf` },
        { authorization: `Bearer ${token}` },
      );
      if (s.status !== 200) return { status: s.status, last: undefined };
      return { status: s.status, last: payloads(await s.end(60_000)).at(-1) };
    });
    const outcomes = await Promise.all(race);
    const won = outcomes.filter((o) => o.last?.status === 'success');
    const lost = outcomes.filter((o) => o.status === 409 || o.last?.error?.code === 'conflict');
    assert.equal(won.length, 1, JSON.stringify(outcomes));
    assert.equal(lost.length, 1, JSON.stringify(outcomes));
    const placed = readFileSync(path.join(gw.dataDir, 'models', 'raced.gguf'));
    assert.ok(placed.equals(gguf) || placed.equals(otherGguf));
    assert.deepEqual(readdirSync(path.join(gw.dataDir, 'models', '.partial')), [], 'no partial file left');
  });

  it('ends a local pull whose checksum does not match with an error frame, keeping nothing', async () => {
    const s = await stream('local', { model: 'bad-sum.gguf', url: `${filesUrl}/tiny.gguf`, sha256: '0'.repeat(64) });
    const frames = payloads(await s.end(30_000));
    const last = frames.at(-1);
    assert.equal(last.status, 'error', JSON.stringify(frames));
    assert.equal(last.error.code, 'rejected');
    assert.ok(!existsSync(path.join(gw.dataDir, 'models', 'bad-sum.gguf')));
  });

  it("issue 14: downloads that fail (refused, HTTP 404/500, cut off) are the caller's 400 or error frame, naming the reason; the shared local node stays healthy for every tenant", async () => {
    const localNode = async () => {
      const nodes = await gw.request('GET', '/api/llm/v1/nodes', { token: platformAdmin });
      return nodes.body.data.find((n: { engine: string }) => n.engine === 'local');
    };
    // More failures than GATEWAY_NODE_FAILURES_BEFORE_COOLDOWN (3): were they counted, the node would cool down.
    for (let n = 0; n < 4; n++) {
      // Nothing listens on port 1: the connection is refused. The reason is the one the CLI gives.
      const refused = await pull('local', { model: `refused-${n}.gguf`, url: 'http://127.0.0.1:1/x.gguf' });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.code, 'BAD_REQUEST');
      assert.equal(refused.body.detail, 'The download failed: connect ECONNREFUSED 127.0.0.1:1');
    }
    for (const [file, reason] of [
      ['missing.gguf', /answered HTTP 404/],
      ['server-error.gguf', /answered HTTP 500/],
    ] as const) {
      const answered = await pull('local', { model: 'answered.gguf', url: `${filesUrl}/${file}` });
      assert.equal(answered.status, 400, answered.text);
      assert.match(answered.body.detail, /^The download failed: /);
      assert.match(answered.body.detail, reason);
    }
    const cut = await stream('local', { model: 'cut.gguf', url: `${filesUrl}/cut.gguf` });
    assert.equal(cut.status, 200);
    const last = payloads(await cut.end(30_000)).at(-1);
    assert.equal(last.status, 'error', JSON.stringify(last));
    assert.equal(last.error.code, 'download_failed');
    assert.match(last.error.message, /^The download failed: /);

    const node = await localNode();
    assert.equal(node.health.status, 'healthy', JSON.stringify(node.health));
    assert.equal(node.health.lastError, undefined, JSON.stringify(node.health));
    const s = await openStream(
      gw,
      pullPath('local'),
      { model: 'after-bad-urls.gguf', url: `${filesUrl}/tiny.gguf` },
      { authorization: `Bearer ${otherAdmin}` },
    );
    assert.equal(s.status, 200, 'another tenant still reaches the node');
    assert.deepEqual(payloads(await s.end(60_000)).at(-1), { status: 'success' });
    assert.equal((await localNode()).health.status, 'healthy');
  });

  it("a pull Ollama's registry cannot serve (model not found) ends in an error frame and never counts against the node", async () => {
    ollama.behaviour.pullFrames = [{ status: 'pulling manifest' }, { error: 'pull model manifest: file does not exist' }];
    try {
      for (let n = 0; n < 4; n++) {
        const s = await stream('ollama', { model: 'missing:latest' });
        assert.equal(payloads(await s.end()).at(-1).status, 'error');
      }
    } finally {
      delete ollama.behaviour.pullFrames;
    }
    const nodes = await gw.request('GET', '/api/llm/v1/nodes', { token: platformAdmin });
    const node = nodes.body.data.find((n: { engine: string }) => n.engine === 'ollama');
    assert.equal(node.health.status, 'healthy', JSON.stringify(node.health));
    const s = await stream('ollama', { model: 'llama3.2:1b' });
    assert.deepEqual(payloads(await s.end()).at(-1), { status: 'success' });
  });

  it('answers a pull the node cannot start with a plain 503 and Retry-After', async () => {
    await ollama.close();
    const response = await pull('ollama', { model: 'llama3.2:1b' });
    assert.equal(response.status, 503, response.text);
    assert.match(response.headers.get('retry-after') ?? '', /^\d+$/);
    assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
  });
});
