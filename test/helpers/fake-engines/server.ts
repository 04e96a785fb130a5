// The shared core of both fakes: the node:http server and its counters (startFake),
// one request being answered (Exchange) and the ways to answer it — pauses, writes
// with backpressure, JSON answers, late ends and killed connections.
import http from 'node:http';
import type { Socket } from 'node:net';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FakeBehaviour, FakeEngine } from './types.js';

/** One request being answered: its response plus a signal that fires when the client goes away or the fake closes. */
export interface Exchange {
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

export async function startFake(kind: 'openai' | 'ollama', behaviour: FakeBehaviour, routes: Routes): Promise<FakeEngine> {
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
    workRequests: () => state.requests.filter((r) => r.method !== 'GET').length,
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
    async untilStalled(quietMs = 300, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      let last = bytes;
      for (;;) {
        await sleep(quietMs);
        if (bytes === last) return bytes;
        if (Date.now() > deadline) throw new Error(`fake ${kind}: still writing after ${timeoutMs} ms (${bytes} bytes so far)`);
        last = bytes;
      }
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
    let body: any;
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
export async function pause(x: Exchange, ms: number | undefined): Promise<boolean> {
  if (ms !== undefined && ms > 0 && !x.signal.aborted) await sleep(ms, undefined, { signal: x.signal }).catch(() => undefined);
  return !x.signal.aborted;
}

/** Writes with backpressure: waits for 'drain' when the socket buffer is full, so a stalled reader stalls the fake. */
export async function write(x: Exchange, text: string): Promise<boolean> {
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

export function sendJson(x: Exchange, status: number, value: unknown): void {
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
export async function endApart(x: Exchange): Promise<void> {
  if (await pause(x, 1)) x.res.end();
}

/** Kills the connection mid-answer once what was written has reached the socket. */
export function die(x: Exchange): void {
  x.selfKilled = true;
  x.res.write('', () => x.res.socket?.destroy());
}

/** Waits before headers; returns false when the request should not be answered (hang, or client gone). */
export async function beforeHeaders(x: Exchange): Promise<boolean> {
  const b = x.fake.behaviour;
  if (b.hang) {
    await new Promise((resolve) => x.signal.addEventListener('abort', resolve, { once: true }));
    return false;
  }
  if (b.holdHeaders && !x.signal.aborted) {
    const gone = new Promise((resolve) => x.signal.addEventListener('abort', resolve, { once: true }));
    await Promise.race([b.holdHeaders.catch(() => undefined), gone]);
  }
  return pause(x, b.delayHeadersMs);
}
