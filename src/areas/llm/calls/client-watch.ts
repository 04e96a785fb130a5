// Notices a client that goes away before its response has finished, so the work
// done on its behalf upstream (a model generating tokens, a download) stops at once
// instead of running to the end for nobody.
import type { ServerResponse } from 'node:http';
import { RequestAbortController } from '../../../platform/request-abort.js';

export interface ClientWatch {
  /** Aborted when the client disconnects before the response finished, or when the server stops the call; pass it to the engine. */
  readonly signal: AbortSignal;
  /** Whether the client has gone away. */
  gone(): boolean;
  /** Whether the server stopped the call (shutting down) while the client is still there. */
  interrupted(): boolean;
  /** Stops the call for the server's own reason: its engine work is cancelled, the client gets told why. */
  interrupt(): void;
  /** Stops watching (after the response has been sent or abandoned). */
  dispose(): void;
}

export class ClientClosedError extends Error {
  constructor() {
    super('The client closed the connection before the response finished.');
    this.name = 'ClientClosedError';
  }
}

/** Emitted on a response whose call the server stops (shutting down): see OpenCalls. */
export const INTERRUPT = Symbol('interrupt');

export class ServerStoppingError extends Error {
  constructor() {
    super('The server is shutting down.');
    this.name = 'ServerStoppingError';
  }
}

/**
 * Watches the raw response: its `close` comes when the response is done or when the
 * connection dies, whichever is first, for JSON answers and event streams alike
 * (the request's own `close` fires as soon as its body has been read, so it cannot tell).
 */
export function watchClient(res: ServerResponse, onDispose?: () => void): ClientWatch {
  const controller = new RequestAbortController();
  const onClose = () => {
    if (!res.writableFinished) controller.abort(new ClientClosedError());
  };
  const interrupt = () => controller.abort(new ServerStoppingError());
  // Gone already (while the body was read or the credential checked): no `close` will come again.
  if (res.destroyed || res.socket?.destroyed || (!res.socket && !res.writableFinished)) onClose();
  else res.once('close', onClose);
  // On the response itself, not in a registry: a per-request entry in a long-lived
  // collection measured ~15 µs more CPU per request (young-generation GC work).
  res.once(INTERRUPT, interrupt);
  return {
    signal: controller.signal,
    gone: () => controller.signal.reason instanceof ClientClosedError,
    interrupted: () => controller.signal.reason instanceof ServerStoppingError,
    interrupt,
    dispose: () => {
      res.off('close', onClose);
      res.off(INTERRUPT, interrupt);
      onDispose?.();
    },
  };
}

export const ABORTED: unique symbol = Symbol('aborted');

/**
 * Reads an engine's iterator item by item, giving up the moment `signal` aborts,
 * even when the engine ignores the signal and never settles: a vanished client
 * must never leave a handler (and its lease) waiting forever. One abort listener
 * for the whole stream, not one per item: this runs once per token.
 */
export class AbortableReader<T> {
  private wake: ((value: typeof ABORTED) => void) | undefined;

  constructor(
    private readonly iterator: AsyncIterator<T>,
    private readonly signal: AbortSignal,
  ) {
    signal.addEventListener('abort', () => this.wake?.(ABORTED), { once: true });
  }

  next(): Promise<IteratorResult<T> | typeof ABORTED> {
    if (this.signal.aborted) return Promise.resolve(ABORTED);
    return new Promise((resolve, reject) => {
      this.wake = resolve;
      this.iterator.next().then(resolve, reject);
    });
  }

  /** Stops reading early: the engine's request is cancelled (without waiting on an engine that ignores it). */
  abandon(): void {
    try {
      void this.iterator.return?.()?.catch(() => undefined);
    } catch {
      // an iterator whose return throws synchronously has nothing left to release
    }
  }

  /**
   * After the engine's last item: lets the iterator run to its natural end in the
   * background, so the engine's connection is read to its end and reused rather than
   * cut; an engine that does not end its answer within `graceMs` is cut off.
   */
  finish(graceMs = 5000): void {
    const timer = setTimeout(() => this.abandon(), graceMs);
    timer.unref();
    const step = (result: IteratorResult<T>): Promise<void> | void => {
      if (result.done) clearTimeout(timer);
      else return this.iterator.next().then(step);
    };
    this.iterator
      .next()
      .then(step)
      .catch(() => clearTimeout(timer));
  }
}
