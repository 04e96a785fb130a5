// The event-stream writer's backpressure: while the socket is full, writes wait for
// its 'drain', all of them on one shared wait (a batch of frames adds no listener per
// frame), and a connection that closes instead releases them too.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { SseWriter } from '../../src/areas/llm/sse/writer.js';

/** A response whose socket is full until told otherwise. */
function fullResponse() {
  const res = Object.assign(new EventEmitter(), {
    writableNeedDrain: true,
    writable: true,
    destroyed: false,
    written: [] as string[],
    write(text: string) {
      res.written.push(text);
      return false;
    },
  });
  return res;
}

describe('event-stream writer', () => {
  it('makes every write while the socket is full wait on one shared drain', async () => {
    const res = fullResponse();
    const sse = new SseWriter(res as unknown as ServerResponse, 60_000);
    const closeListeners = res.listenerCount('close'); // the writer's own, one per response
    const waits = [sse.sendJson('{"n":1}'), sse.sendJson('{"n":2}'), sse.sendJson('{"n":3}')];
    assert.equal(res.listenerCount('drain'), 1);
    assert.equal(new Set(waits).size, 1, 'one wait for the batch');
    let released = false;
    void Promise.all(waits).then(() => (released = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(released, false, 'nothing resolves before the drain');
    assert.deepEqual(res.written, ['data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\n'], 'the batch went out in one write');
    res.writableNeedDrain = false;
    res.emit('drain');
    await Promise.all(waits);
    assert.equal(res.listenerCount('drain'), 0);
    // Nor its 'close' (which also ends a wait): one left per full socket would pile up on a long answer.
    assert.equal(res.listenerCount('close'), closeListeners);

    // Full again: a new wait, which a closed connection releases as well.
    res.writableNeedDrain = true;
    const next = sse.sendJson('{"n":4}');
    assert.notEqual(next, waits[0]);
    res.emit('close');
    await next;
    assert.equal(res.listenerCount('drain'), 0);
  });
});
