// Notices a client that goes away before its response has finished, so the work
// done on its behalf upstream (a model generating tokens, a download) stops at once
// instead of running to the end for nobody.
import type { ServerResponse } from 'node:http';

export interface ClientWatch {
  /** Aborted when the client disconnects before the response finished; pass it to the engine. */
  readonly signal: AbortSignal;
  /** Whether the client has gone away. */
  gone(): boolean;
  /** Stops watching (after the response has been sent or abandoned). */
  dispose(): void;
}

export class ClientClosedError extends Error {
  constructor() {
    super('The client closed the connection before the response finished.');
    this.name = 'ClientClosedError';
  }
}

/**
 * Watches the raw response: its `close` comes when the response is done or when the
 * connection dies, whichever is first, for JSON answers and event streams alike
 * (the request's own `close` fires as soon as its body has been read, so it cannot tell).
 */
export function watchClient(res: ServerResponse): ClientWatch {
  const controller = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) controller.abort(new ClientClosedError());
  };
  // Gone already (while the body was read or the credential checked): no `close` will come again.
  if (res.destroyed || res.socket?.destroyed || (!res.socket && !res.writableFinished)) onClose();
  else res.once('close', onClose);
  return {
    signal: controller.signal,
    gone: () => controller.signal.aborted,
    dispose: () => res.off('close', onClose),
  };
}

export const ABORTED: unique symbol = Symbol('aborted');

/**
 * The iterator's next value, or ABORTED as soon as `signal` aborts, even when the
 * engine ignores the signal and never settles: a vanished client must never leave
 * a handler (and its lease) waiting forever.
 */
export function nextOrAbort<T>(iterator: AsyncIterator<T>, signal: AbortSignal): Promise<IteratorResult<T> | typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    iterator.next().then(
      (result) => {
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Ends an iterator we stop reading early without waiting on it (an engine ignoring the abort cannot hold us). */
export function abandon(iterator: AsyncIterator<unknown>): void {
  try {
    void iterator.return?.()?.catch(() => undefined);
  } catch {
    // an iterator whose return throws synchronously has nothing left to release
  }
}
