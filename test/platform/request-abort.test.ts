// The per-request AbortController: the AbortSignal behaviour our engines and undici
// rely on, and the reason it exists (its signals die young, unlike Node 20's).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { request } from 'undici';
import { RequestAbortController } from '../../src/platform/request-abort.js';

describe('RequestAbortController', () => {
  it('aborts once: listeners and onabort run once, in the order they were set, with the first reason', () => {
    const controller = new RequestAbortController();
    const { signal } = controller;
    const seen: unknown[] = [];
    signal.addEventListener('abort', () => seen.push(['listener', signal.reason]));
    signal.onabort = () => seen.push(['replaced onabort']);
    signal.onabort = (event) => seen.push(['onabort', event.type]);
    signal.addEventListener('abort', () => seen.push(['later listener']));
    assert.equal(signal.aborted, false);
    assert.doesNotThrow(() => signal.throwIfAborted());
    const first = new Error('first');
    controller.abort(first);
    controller.abort(new Error('second'));
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, first);
    assert.deepEqual(seen, [['listener', first], ['onabort', 'abort'], ['later listener']]);
    assert.throws(() => signal.throwIfAborted(), first);
  });

  it('gives an AbortError DOMException when no reason is given, like AbortController', () => {
    const controller = new RequestAbortController();
    controller.abort();
    assert.ok(controller.signal.reason instanceof DOMException);
    assert.equal((controller.signal.reason as DOMException).name, 'AbortError');
  });

  it('a removed listener is not called', () => {
    const controller = new RequestAbortController();
    let called = false;
    const listener = () => (called = true);
    controller.signal.addEventListener('abort', listener);
    controller.signal.removeEventListener('abort', listener);
    controller.abort();
    assert.equal(called, false);
  });

  it('cancels an undici request in flight, which closes its connection', async () => {
    let closed!: () => void;
    let arrived!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    // Answers nothing: only the abort can end the request.
    const server = http.createServer((req) => {
      req.socket.once('close', () => closed());
      arrived();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const controller = new RequestAbortController();
      const { port } = server.address() as AddressInfo;
      const pending = request(`http://127.0.0.1:${port}/`, { signal: controller.signal });
      // Aborted once the server holds the request (on a busy machine a fixed delay could abort
      // before the connection exists, and then no connection would ever close).
      void requestArrived.then(() => controller.abort(new Error('client left')));
      await assert.rejects(pending, /client left/);
      await connectionClosed;
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('its signals, listeners and all they reach die in a young-generation collection', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
    const heapAfterMinorGc = () => {
      gc({ type: 'minor' });
      gc({ type: 'minor' });
      return process.memoryUsage().heapUsed;
    };
    const before = heapAfterMinorGc();
    let live: RequestAbortController[] = [];
    for (let i = 0; i < 100_000; i++) {
      const controller = new RequestAbortController();
      // What a request's listener keeps reachable: ~1 KB each.
      const state = new Array(128).fill(i);
      controller.signal.addEventListener('abort', () => state.push(i), { once: true });
      live.push(controller);
      if (live.length > 20) live = [];
    }
    live = [];
    const grown = heapAfterMinorGc() - before;
    // Node 20's AbortController kept 24.5 MB here: every signal, and its listener's state, promoted.
    assert.ok(grown < 8 * 1024 * 1024, `the heap kept ${(grown / 1048576).toFixed(1)} MB after young-generation collections`);
  });
});
