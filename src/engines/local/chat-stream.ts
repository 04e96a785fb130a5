// The gateway's side of one chat generation in the child: a bounded queue of
// chunks. The child may run at most WINDOW deltas ahead of the consumer; each
// batch the consumer takes is credited back, so a stalled reader pauses llama.cpp
// instead of growing memory here.
import { EngineError, type ChatBatch, type ChatChunk } from '../types.js';
import type { ChildHost, ChildListener, Outgoing } from './child-host.js';
import type { ChildMessage } from './protocol.js';

export const WINDOW = 16;

export class ChatStream implements ChildListener, AsyncIterable<ChatBatch> {
  private readonly queue: ChatChunk[] = [];
  private failure: EngineError | undefined;
  private wake: (() => void) | undefined;
  private id = 0;
  /** The child has answered for good (end, error or exit). */
  private settled = false;
  private consumedSinceCredit = 0;
  private started: { resolve: () => void; reject: (error: EngineError) => void } | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  private lastTakenAt = performance.now();

  constructor(
    private readonly host: ChildHost,
    private readonly signal: AbortSignal,
    /**
     * How long generation may stay paused on a full queue before it is cancelled:
     * the model serves one generation at a time, so a reader that never reads (or a
     * stream dropped without being closed) must not hold it forever.
     */
    private readonly stallMs: number,
    /** Runs once, when the child is done with the request (so the model is idle again). */
    private readonly onSettled: () => void,
  ) {}

  /**
   * Sends the request and resolves once generation has started. `startSignal`
   * bounds the wait (queue, load); `timedOut` says whether it was the deadline.
   */
  async open(message: Outgoing, startSignal: AbortSignal, timedOut: () => boolean): Promise<void> {
    const onAbort = () =>
      this.cancel(timedOut() ? new EngineError('timeout', 'The local engine did not start generating in time.') : aborted());
    startSignal.addEventListener('abort', onAbort, { once: true });
    try {
      await new Promise<void>((resolve, reject) => {
        this.started = { resolve, reject };
        if (startSignal.aborted) return onAbort();
        this.host.open(message, this, startSignal).then(
          (id) => {
            this.id = id;
            if (this.failure) this.host.post({ op: 'abort', id }); // cancelled while the child started
          },
          (error: unknown) => {
            this.settle();
            reject(error instanceof EngineError ? error : new EngineError('unreachable', String(error)));
          },
        );
      });
    } finally {
      startSignal.removeEventListener('abort', onAbort);
      this.started = undefined;
    }
    // From here on only the client's own signal cancels.
    if (this.signal.aborted) this.cancel(aborted());
    else if (!this.settled) this.signal.addEventListener('abort', this.onClientAbort, { once: true });
  }

  private readonly onClientAbort = () => this.cancel(aborted());

  message(message: ChildMessage): void {
    if (message.type === 'started') this.started?.resolve();
    else if (message.type === 'delta') {
      if (!this.failure) this.push({ type: 'delta', content: message.text }); // nothing more reaches a cancelled reader
    } else if (message.type === 'tool_call') {
      if (!this.failure) {
        const { index, callId, name } = message;
        this.push({
          type: 'tool_call',
          index,
          ...(callId === undefined ? {} : { id: callId }),
          ...(name === undefined ? {} : { name }),
          arguments: message.arguments,
        });
      }
    } else if (message.type === 'end') {
      if (!this.failure) {
        const usage = { promptTokens: message.promptTokens, completionTokens: message.completionTokens };
        this.push({ type: 'end', finishReason: message.finishReason, usage });
      }
      this.settle();
    } else if (message.type === 'error') {
      this.fail(new EngineError(message.failure, message.message));
      this.settle();
    }
  }

  exited(error: EngineError): void {
    if (this.settled) return;
    this.settled = true; // the host has already forgotten us
    this.signal.removeEventListener('abort', this.onClientAbort);
    this.fail(error);
    this.onSettled();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ChatBatch> {
    try {
      for (;;) {
        if (this.queue.length > 0) {
          // Everything queued goes in one batch: about WINDOW deltas or tool-call pieces at most (and the end).
          const batch = this.queue.splice(0);
          const ended = batch.at(-1)!.type === 'end';
          this.lastTakenAt = performance.now();
          this.credit(ended ? batch.length - 1 : batch.length);
          yield batch;
          if (ended) return;
          continue;
        }
        if (this.failure) throw this.failure;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      // The consumer stopped early (break, error): generation must stop too.
      if (!this.settled) this.cancel(aborted());
    }
  }

  private push(chunk: ChatChunk): void {
    this.queue.push(chunk);
    this.notify();
    this.watchReader(this.stallMs);
  }

  /** Cancels when chunks have waited `stallMs` with nothing taken (one timer per stall, not per chunk). */
  private watchReader(delay: number): void {
    if (this.stallTimer || this.settled) return; // once the child is done, a slow reader holds nothing
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      if (this.queue.length === 0) return;
      const idle = performance.now() - this.lastTakenAt;
      if (idle >= this.stallMs) this.cancel(new EngineError('timeout', `The stream's reader took nothing for ${this.stallMs} ms.`));
      else this.watchReader(this.stallMs - idle);
    }, delay);
    this.stallTimer.unref();
  }

  /** The reader took `deltas` more: the child may run that much further ahead (told in steps of half the window). */
  private credit(deltas: number): void {
    this.consumedSinceCredit += deltas;
    if (this.consumedSinceCredit < WINDOW / 2) return;
    this.host.post({ op: 'credit', id: this.id, n: this.consumedSinceCredit });
    this.consumedSinceCredit = 0;
  }

  /** Our side gives up: tell the child, drop what is queued, fail the reader at once. */
  private cancel(error: EngineError): void {
    if (this.settled || this.failure) return;
    if (this.id) this.host.post({ op: 'abort', id: this.id });
    this.queue.length = 0;
    clearTimeout(this.stallTimer);
    this.fail(error);
  }

  private fail(error: EngineError): void {
    this.failure ??= error;
    this.started?.reject(this.failure);
    this.notify();
  }

  private notify(): void {
    this.wake?.();
    this.wake = undefined;
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.signal.removeEventListener('abort', this.onClientAbort);
    clearTimeout(this.stallTimer);
    if (this.id) this.host.forget(this.id);
    this.onSettled();
  }
}

function aborted(): EngineError {
  return new EngineError('aborted', 'The request was aborted.');
}
