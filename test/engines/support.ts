// What the engine adapter tests share: a request against the loopback fakes, reading
// a stream to its end, and asserting which EngineError a call fails with.
import assert from 'node:assert/strict';
import { EngineError, type ChatBatch, type ChatChunk, type ChatRequest, type EngineFailure } from '../../src/engines/types.js';

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
export async function rejectsWith(promise: Promise<unknown>, failure: EngineFailure, check?: RegExp | ((err: EngineError) => void)): Promise<EngineError> {
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
