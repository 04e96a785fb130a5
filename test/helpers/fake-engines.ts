// Small real engine servers on loopback for tests: one speaks the OpenAI-compatible
// protocol (vLLM, llama.cpp server, OpenAI), one Ollama's native API. They are real
// node:http servers, so adapters, the router and the routes are tested over real
// sockets, with real chunking, keep-alive, disconnects and backpressure.
//
// Knobs (FakeBehaviour) are read per request, so a test may change them between
// requests. `status`, `delayHeadersMs`, `hang`, `silentMs`, `tokenDelayMs` and
// `dieAfterTokens` shape chat answers only: model lists and health stay healthy
// (stop a node with close() to make it unreachable). A non-streaming chat answer
// takes silentMs + tokens × tokenDelayMs before its headers, like a real engine
// that generates before it answers. `tokenDelayMs` also paces Ollama pull frames,
// and `delayHeadersMs` delays an Ollama pull's answer too.
import http from 'node:http';
import type { Socket } from 'node:net';
import { EventEmitter } from 'node:events';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

export interface FakeBehaviour {
  models?: string[];
  reply?: string;
  status?: number;
  delayHeadersMs?: number;
  silentMs?: number;
  tokenDelayMs?: number;
  dieAfterTokens?: number;
  hang?: boolean;
  noUsage?: boolean;
  /** (openai) The `usage` every answer reports, as given: a misbehaving engine's counts. */
  usage?: unknown;
  repeat?: number;
  pullFrames?: object[];
}

export interface FakeRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export interface FakeEngine {
  url: string;
  kind: 'openai' | 'ollama';
  behaviour: FakeBehaviour;
  requests: FakeRequest[];
  chatRequests(): number;
  inFlight(): number;
  aborted(): number;
  waitForAbort(count?: number, timeoutMs?: number): Promise<void>;
  bytesWritten(): number;
  /** TCP connections accepted so far: keep-alive reuse shows as fewer connections than requests. */
  connections(): number;
  close(): Promise<void>;
}

const DEFAULT_MODELS = ['fake-small', 'fake-large'];
const EMBEDDING_DIMENSIONS = 16;

export function startFakeOpenAI(behaviour: FakeBehaviour = {}): Promise<FakeEngine> {
  return startFake('openai', behaviour, openaiRoutes);
}

export function startFakeOllama(behaviour: FakeBehaviour = {}): Promise<FakeEngine> {
  return startFake('ollama', behaviour, ollamaRoutes);
}

// ---------------------------------------------------------------- shared core

/** One request being answered: its response plus a signal that fires when the client goes away or the fake closes. */
interface Exchange {
  fake: FakeState;
  req: http.IncomingMessage;
  res: http.ServerResponse;
  body: any;
  signal: AbortSignal;
  /** Set when the fake itself kills the socket (dieAfterTokens): not a client abort. */
  selfKilled: boolean;
}

interface FakeState extends FakeEngine {
  countChat(x: Exchange): void;
  countStreamed(x: Exchange): void;
  addBytes(n: number): void;
}

type Routes = (x: Exchange) => Promise<void> | void;

async function startFake(kind: 'openai' | 'ollama', behaviour: FakeBehaviour, routes: Routes): Promise<FakeEngine> {
  const sockets = new Set<Socket>();
  const closing = new AbortController();
  const events = new EventEmitter();
  let chatCount = 0;
  let inFlight = 0;
  let aborted = 0;
  let bytes = 0;
  let connections = 0;

  const server = http.createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  const state: FakeState = {
    url: '',
    kind,
    behaviour,
    requests: [],
    chatRequests: () => chatCount,
    inFlight: () => inFlight,
    aborted: () => aborted,
    bytesWritten: () => bytes,
    connections: () => connections,
    waitForAbort(count = 1, timeoutMs = 2000) {
      if (aborted >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          if (aborted < count) return;
          clearTimeout(timer);
          events.off('aborted', onAbort);
          resolve();
        };
        const timer = setTimeout(() => {
          events.off('aborted', onAbort);
          reject(new Error(`fake ${kind}: expected ${count} aborted request(s) within ${timeoutMs} ms, saw ${aborted}`));
        }, timeoutMs);
        events.on('aborted', onAbort);
      });
    },
    async close() {
      closing.abort();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    countChat(x) {
      chatCount++;
      this.countStreamed(x);
    },
    // In flight and aborted are counted for chat and pull answers (the long-running ones).
    countStreamed(x) {
      inFlight++;
      x.res.once('close', () => {
        inFlight--;
        if (!x.res.writableFinished && !x.selfKilled) {
          aborted++;
          events.emit('aborted');
        }
      });
    },
    addBytes(n) {
      bytes += n;
    },
  };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: any = undefined;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    state.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: { ...req.headers }, body });
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const signal = AbortSignal.any([gone.signal, closing.signal]);
    await routes({ fake: state, req, res, body, signal, selfKilled: false });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fake engine: no TCP address');
  state.url = `http://127.0.0.1:${address.port}`;
  return state;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Waits `ms` unless the exchange ends first; returns false when it ended (stop answering). */
async function pause(x: Exchange, ms: number | undefined): Promise<boolean> {
  if (ms !== undefined && ms > 0 && !x.signal.aborted) await sleep(ms, undefined, { signal: x.signal }).catch(() => undefined);
  return !x.signal.aborted;
}

/** Writes with backpressure: waits for 'drain' when the socket buffer is full, so a stalled reader stalls the fake. */
async function write(x: Exchange, text: string): Promise<boolean> {
  if (x.signal.aborted || x.res.destroyed) return false;
  x.fake.addBytes(Buffer.byteLength(text));
  if (x.res.write(text)) return true;
  await new Promise<void>((resolve) => {
    const done = () => {
      x.res.off('drain', done);
      x.signal.removeEventListener('abort', done);
      resolve();
    };
    x.res.on('drain', done);
    x.signal.addEventListener('abort', done);
  });
  return !x.signal.aborted;
}

function sendJson(x: Exchange, status: number, value: unknown): void {
  if (x.signal.aborted) return;
  const text = JSON.stringify(value);
  x.fake.addBytes(Buffer.byteLength(text));
  x.res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  x.res.end(text);
}

/**
 * Ends a streamed answer in a later socket write than its last frame, as engines
 * often do: the client then sees the protocol's end before the body's, and must
 * read on to the body's end to keep the connection reusable.
 */
async function endApart(x: Exchange): Promise<void> {
  if (await pause(x, 1)) x.res.end();
}

/** Kills the connection mid-answer once what was written has reached the socket. */
function die(x: Exchange): void {
  x.selfKilled = true;
  x.res.write('', () => x.res.socket?.destroy());
}

/** Waits before headers; returns false when the request should not be answered (hang, or client gone). */
async function beforeHeaders(x: Exchange): Promise<boolean> {
  const b = x.fake.behaviour;
  if (b.hang) {
    await new Promise((resolve) => x.signal.addEventListener('abort', resolve, { once: true }));
    return false;
  }
  return pause(x, b.delayHeadersMs);
}

function modelsOf(b: FakeBehaviour): string[] {
  return b.models ?? DEFAULT_MODELS;
}

function wordCount(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}

function promptTokens(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  return messages.reduce((sum: number, m: any) => sum + (typeof m?.content === 'string' ? wordCount(m.content) : 0), 0);
}

/** The answer as tokens: each word with its leading whitespace; `repeat` copies joined by a space. */
function replyTokens(b: FakeBehaviour, messages: unknown, limit: number | undefined): { tokens: string[]; finishReason: 'stop' | 'length' } {
  const lastUser = Array.isArray(messages) ? [...messages].reverse().find((m: any) => m?.role === 'user') : undefined;
  const reply = b.reply ?? `Fake answer to: ${typeof lastUser?.content === 'string' && lastUser.content.trim() ? lastUser.content.trim() : '(nothing)'}`;
  const once = reply.match(/\s*\S+/g) ?? [];
  const repeat = Math.max(1, b.repeat ?? 1);
  const total = once.length * repeat;
  const max = limit !== undefined && limit >= 0 && limit < total ? limit : total;
  const tokens: string[] = new Array(max);
  for (let i = 0; i < max; i++) {
    const token = once[i % once.length]!;
    tokens[i] = i >= once.length && i % once.length === 0 && !/^\s/.test(token) ? ` ${token}` : token;
  }
  return { tokens, finishReason: max < total ? 'length' : 'stop' };
}

/** Deterministic unit vector derived from the text. */
function embeddingOf(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  const v = Array.from({ length: EMBEDDING_DIMENSIONS }, (_, i) => digest.readUInt16BE(i * 2) / 65535 - 0.5);
  const norm = Math.hypot(...v) || 1;
  return v.map((n) => n / norm);
}

function inputsOf(input: unknown): string[] | undefined {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((s) => typeof s === 'string')) return input as string[];
  return undefined;
}

// ---------------------------------------------------------------- OpenAI-compatible

let openaiIds = 0;

function openaiError(x: Exchange, status: number, message: string, type: string, code: string | null = null): void {
  sendJson(x, status, { error: { message, type, param: null, code } });
}

async function openaiRoutes(x: Exchange): Promise<void> {
  const route = `${x.req.method} ${x.req.url?.split('?')[0]}`;
  const b = x.fake.behaviour;
  if (route === 'GET /v1/models') {
    return sendJson(x, 200, { object: 'list', data: modelsOf(b).map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' })) });
  }
  if (route === 'POST /v1/chat/completions') return openaiChat(x);
  if (route === 'POST /v1/embeddings') {
    const inputs = inputsOf(x.body?.input);
    if (!inputs) return openaiError(x, 400, "'input' must be a string or an array of strings", 'invalid_request_error');
    if (!modelsOf(b).includes(x.body?.model)) return openaiNoModel(x);
    return sendJson(x, 200, {
      object: 'list',
      data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: embeddingOf(text) })),
      model: x.body.model,
      usage: { prompt_tokens: inputs.reduce((n, s) => n + wordCount(s), 0), total_tokens: inputs.reduce((n, s) => n + wordCount(s), 0) },
    });
  }
  return openaiError(x, 404, `Not found: ${route}`, 'invalid_request_error');
}

function openaiNoModel(x: Exchange): void {
  openaiError(x, 404, `The model \`${x.body?.model}\` does not exist`, 'invalid_request_error', 'model_not_found');
}

async function openaiChat(x: Exchange): Promise<void> {
  x.fake.countChat(x);
  const b = x.fake.behaviour;
  if (!(await beforeHeaders(x))) return;
  if (b.status !== undefined) {
    const type = b.status >= 500 ? 'server_error' : 'invalid_request_error';
    return openaiError(x, b.status, `fake upstream answered ${b.status}`, type);
  }
  const body = x.body;
  if (typeof body !== 'object' || body === null || !Array.isArray(body.messages)) {
    return openaiError(x, 400, "'messages' is a required property", 'invalid_request_error');
  }
  if (!modelsOf(b).includes(body.model)) return openaiNoModel(x);
  const { tokens, finishReason } = replyTokens(b, body.messages, body.max_tokens ?? body.max_completion_tokens);
  const id = `chatcmpl-fake-${++openaiIds}`;
  const created = Math.floor(Date.now() / 1000);
  const usage =
    b.usage ??
    (b.noUsage ? undefined : { prompt_tokens: promptTokens(body.messages), completion_tokens: tokens.length, total_tokens: promptTokens(body.messages) + tokens.length });

  if (body.stream !== true) {
    if (!(await pause(x, (b.silentMs ?? 0) + tokens.length * (b.tokenDelayMs ?? 0)))) return;
    return sendJson(x, 200, {
      id,
      object: 'chat.completion',
      created,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: tokens.join('') }, logprobs: null, finish_reason: finishReason }],
      ...(usage ? { usage } : {}),
    });
  }

  const includeUsage = body.stream_options?.include_usage === true && usage !== undefined;
  // Like OpenAI: with include_usage every chunk carries `usage: null` until the usage-only chunk.
  const head = `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(body.model)},`;
  const tail = includeUsage ? ',"usage":null}' : '}';
  const frame = (delta: object, finish: string | null) =>
    `data: ${head}"choices":[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${finish === null ? 'null' : `"${finish}"`}}]${tail}\n\n`;

  x.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  x.res.flushHeaders();
  if (!(await pause(x, b.silentMs))) return;
  if (!(await write(x, frame({ role: 'assistant', content: '' }, null)))) return;
  for (let i = 0; i < tokens.length; i++) {
    if (i > 0 && !(await pause(x, b.tokenDelayMs))) return;
    if (!(await write(x, frame({ content: tokens[i] }, null)))) return;
    if (b.dieAfterTokens !== undefined && i + 1 >= b.dieAfterTokens) return die(x);
  }
  if (tokens.length === 0 && b.dieAfterTokens === 0) return die(x);
  if (!(await write(x, frame({}, finishReason)))) return;
  if (includeUsage && !(await write(x, `data: ${head}"choices":[],"usage":${JSON.stringify(usage)}}\n\n`))) return;
  if (!(await write(x, 'data: [DONE]\n\n'))) return;
  await endApart(x);
}

// ---------------------------------------------------------------- Ollama

const OLLAMA_DIGEST = 'sha256:6a0746a1ec1aef3e7ec53868f220ff6e389f6f8ef87a01d77c96807de94ca2aa';

function ollamaError(x: Exchange, status: number, message: string): void {
  sendJson(x, status, { error: message });
}

async function ollamaRoutes(x: Exchange): Promise<void> {
  const route = `${x.req.method} ${x.req.url?.split('?')[0]}`;
  const b = x.fake.behaviour;
  if (route === 'GET /api/tags') {
    return sendJson(x, 200, {
      models: modelsOf(b).map((name) => ({
        name,
        model: name,
        modified_at: '2024-11-01T10:00:00.000000000Z',
        size: 1_234_567,
        digest: OLLAMA_DIGEST.slice(7),
        details: { format: 'gguf', family: 'fake', parameter_size: '1M', quantization_level: 'Q8_0' },
      })),
    });
  }
  if (route === 'GET /api/version') return sendJson(x, 200, { version: '0.6.2' });
  if (route === 'POST /api/chat') return ollamaChat(x);
  if (route === 'POST /api/embed') {
    const inputs = inputsOf(x.body?.input);
    if (!inputs) return ollamaError(x, 400, 'invalid input type');
    if (!modelsOf(b).includes(x.body?.model)) return ollamaNoModel(x);
    return sendJson(x, 200, { model: x.body.model, embeddings: inputs.map(embeddingOf), total_duration: 1000, load_duration: 100, prompt_eval_count: inputs.length });
  }
  if (route === 'POST /api/pull') return ollamaPull(x);
  // Ollama's router answers unknown paths in plain text.
  x.res.writeHead(404, { 'content-type': 'text/plain' });
  x.res.end('404 page not found');
}

function ollamaNoModel(x: Exchange): void {
  ollamaError(x, 404, `model "${x.body?.model}" not found, try pulling it first`);
}

async function ollamaChat(x: Exchange): Promise<void> {
  x.fake.countChat(x);
  const b = x.fake.behaviour;
  if (!(await beforeHeaders(x))) return;
  if (b.status !== undefined) return ollamaError(x, b.status, `fake upstream answered ${b.status}`);
  const body = x.body;
  if (typeof body !== 'object' || body === null || !Array.isArray(body.messages)) return ollamaError(x, 400, 'messages is required');
  if (!modelsOf(b).includes(body.model)) return ollamaNoModel(x);
  const { tokens, finishReason } = replyTokens(b, body.messages, body.options?.num_predict);
  const counts = b.noUsage ? {} : { prompt_eval_count: promptTokens(body.messages), prompt_eval_duration: 1000, eval_count: tokens.length, eval_duration: 5000 };
  const model = JSON.stringify(body.model);
  const final = (content: string) =>
    JSON.stringify({
      model: body.model,
      created_at: new Date().toISOString(),
      message: { role: 'assistant', content },
      done_reason: finishReason,
      done: true,
      total_duration: 10_000,
      load_duration: 100,
      ...counts,
    });

  if (body.stream === false) {
    if (!(await pause(x, (b.silentMs ?? 0) + tokens.length * (b.tokenDelayMs ?? 0)))) return;
    const text = final(tokens.join(''));
    x.fake.addBytes(Buffer.byteLength(text));
    x.res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    x.res.end(text);
    return;
  }

  x.res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  x.res.flushHeaders();
  if (!(await pause(x, b.silentMs))) return;
  for (let i = 0; i < tokens.length; i++) {
    if (i > 0 && !(await pause(x, b.tokenDelayMs))) return;
    const line = `{"model":${model},"created_at":"${new Date().toISOString()}","message":{"role":"assistant","content":${JSON.stringify(tokens[i])}},"done":false}\n`;
    if (!(await write(x, line))) return;
    if (b.dieAfterTokens !== undefined && i + 1 >= b.dieAfterTokens) return die(x);
  }
  if (tokens.length === 0 && b.dieAfterTokens === 0) return die(x);
  if (!(await write(x, `${final('')}\n`))) return;
  await endApart(x);
}

function defaultPullFrames(): object[] {
  const total = 2_000_000;
  const layer = OLLAMA_DIGEST.slice(7, 19);
  return [
    { status: 'pulling manifest' },
    { status: `pulling ${layer}`, digest: OLLAMA_DIGEST, total },
    { status: `pulling ${layer}`, digest: OLLAMA_DIGEST, total, completed: total / 2 },
    { status: `pulling ${layer}`, digest: OLLAMA_DIGEST, total, completed: total },
    { status: 'verifying sha256 digest' },
    { status: 'writing manifest' },
    { status: 'removing any unused layers' },
    { status: 'success' },
  ];
}

async function ollamaPull(x: Exchange): Promise<void> {
  const b = x.fake.behaviour;
  const name: unknown = x.body?.model ?? x.body?.name;
  if (typeof name !== 'string' || name === '') return ollamaError(x, 400, 'model is required');
  x.fake.countStreamed(x);
  if (!(await pause(x, b.delayHeadersMs))) return;
  const frames = b.pullFrames ?? defaultPullFrames();
  const succeeded = (frames[frames.length - 1] as { status?: unknown } | undefined)?.status === 'success';
  // A successful pull makes the model servable, as on a real Ollama.
  const learn = () => {
    if (succeeded && !modelsOf(b).includes(name)) b.models = [...modelsOf(b), name];
  };
  if (x.body?.stream === false) {
    learn();
    return sendJson(x, 200, frames[frames.length - 1] ?? { status: 'success' });
  }
  x.res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  x.res.flushHeaders();
  for (let i = 0; i < frames.length; i++) {
    if (i > 0 && !(await pause(x, b.tokenDelayMs))) return;
    if (!(await write(x, `${JSON.stringify(frames[i])}\n`))) return;
  }
  learn();
  x.res.end();
}
