// Turns an engine's streaming answer into an async iterable the caller pulls
// from. The undici body is consumed chunk by chunk only as the caller asks for
// more, so a slow client slows the engine's socket (backpressure) instead of
// buffering. Ending early (break, return(), or abort) destroys the body, which
// cancels the upstream request.
import type { ResponseBody } from './client.js';

/**
 * Wraps a generator over `body` so that `return()` destroys the body even
 * when the generator never started (a generator's finally does not run then).
 */
export function cancellable<T>(body: ResponseBody, generator: AsyncGenerator<T, void, undefined>): AsyncIterable<T> {
  const iterator: AsyncIterator<T> = {
    next: () => generator.next(),
    return: (value?: unknown) => {
      if (!body.destroyed) body.destroy();
      return generator.return(value as undefined) as Promise<IteratorResult<T>>;
    },
    throw: (err?: unknown) => generator.throw(err),
  };
  return { [Symbol.asyncIterator]: () => iterator };
}

/** Leaves the connection reusable when the answer is complete, and cancels it when not. */
export function release(body: ResponseBody): void {
  if (!body.destroyed && !body.readableEnded) body.destroy();
}
