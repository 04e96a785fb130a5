// What the engine adapter tests share: a request against the loopback fakes, reading
// a stream to its end, asserting which EngineError a call fails with, a stream
// whose reader has stopped, and a scripted server's wait for a full socket.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError, type ChatBatch, type ChatChunk, type ChatRequest, type Engine, type EngineFailure } from '../../src/engines/types.js';
import type { FakeEngine } from '../helpers/fake-engines/index.js';

/** A signal that never fires. */
export const never = new AbortController().signal;

/** A chat for the fakes' `fake-small` model (2 messages, 6 prompt words). */
export function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: 'fake-small',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'tell me about otters' },
    ],
    maxTokens: 100,
    temperature: 0.2,
    signal: never,
    ...overrides,
  };
}

export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

/** A chat stream's chunks one at a time, across its batches; ending early ends the stream, as breaking out of it does. */
export async function* chunksOf(stream: AsyncIterable<ChatBatch>): AsyncGenerator<ChatChunk, void, undefined> {
  for await (const batch of stream) yield* batch;
}

/** The text of the deltas. */
export function text(chunks: ChatChunk[]): string {
  return chunks.map((c) => (c.type === 'delta' ? c.content : '')).join('');
}

/** Asserts that `promise` rejects with EngineError(failure), its message matching `check` or passing it. */
export async function rejectsWith(
  promise: Promise<unknown>,
  failure: EngineFailure,
  check?: RegExp | ((err: EngineError) => void),
): Promise<EngineError> {
  const error = await promise.then(
    () => assert.fail(`expected EngineError(${failure})`),
    (err: unknown) => err,
  );
  assert.ok(error instanceof EngineError, `expected an EngineError, got ${String(error)}`);
  assert.equal(error.failure, failure, error.message);
  if (check instanceof RegExp) assert.match(error.message, check);
  else check?.(error);
  return error;
}

/**
 * Starts a ~134 MB streamed answer from `fake`, takes its first batch and stops reading.
 * Asserts that the fake stops writing after a quarter of it at most, and writes nothing
 * more while nobody reads: only socket and stream buffers fill up (loopback socket
 * buffers autotune to several MB, differently from machine to machine, so the answer is
 * far larger than they are). Returns the stream, still open, and the bytes written then.
 */
export async function stallUnreadStream(
  engine: Engine,
  fake: FakeEngine,
): Promise<{ iterator: AsyncIterator<ChatBatch>; stalled: number; written: () => number }> {
  const tokenChars = 16 * 1024;
  const tokens = 8192;
  fake.behaviour = { reply: 'x'.repeat(tokenChars), repeat: tokens };
  const bytesBefore = fake.bytesWritten();
  const written = () => fake.bytesWritten() - bytesBefore;
  const iterator = (await engine.chatStream(chatRequest({ maxTokens: 1_000_000 })))[Symbol.asyncIterator]();
  try {
    assert.equal((await iterator.next()).done, false);
    const stalled = (await fake.untilStalled()) - bytesBefore;
    assert.ok(stalled < (tokens * tokenChars) / 4, `only socket and stream buffers fill up (${stalled} of ${tokens * tokenChars} bytes)`);
    await sleep(300);
    const more = written() - stalled;
    assert.ok(more < 256 * 1024, `nothing more written while nobody reads (${more} bytes)`);
    return { iterator, stalled, written };
  } catch (error) {
    await iterator.return?.();
    fake.behaviour = {};
    throw error;
  }
}

/**
 * Resolves when a scripted server's full response drains or closes, and leaves no
 * listener behind: `res.once('drain', …).once('close', …)` kept its 'close' listener
 * after every drain, 11 of them on a long answer (MaxListenersExceededWarning).
 */
export function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
