// Cancellation without sessions: a client's `notifications/cancelled` arrives in a
// POST of its own, maybe at another replica than the call it names. Each running
// call is known by (the caller's credential, its JSON-RPC request id); a cancel is
// published on the invalidation bus (Redis across replicas) under a hash of that
// pair, and whichever process runs the call aborts it. The hash keeps credentials
// off the bus; the credential in it keeps one caller from cancelling another's call
// that happens to have the same id.
import { createHash } from 'node:crypto';
import type { InvalidationBus } from '../../../../platform/coordination/invalidation-bus.js';

export type McpCallBus = Pick<InvalidationBus, 'publish' | 'subscribe'>;

export class RunningCalls {
  private readonly calls = new Map<string, Set<AbortController>>();
  private readonly unsubscribe: () => void;

  constructor(private readonly bus: McpCallBus) {
    this.unsubscribe = bus.subscribe((event) => {
      if (event.kind === 'mcpCall') for (const call of this.calls.get(event.id) ?? []) call.abort(new Error('Cancelled by the client.'));
    });
  }

  /** Registers a call; its signal aborts on a matching cancel. Call `end` when it is over. */
  start(caller: string, requestId: string | number): { signal: AbortSignal; end(): void } {
    const id = callId(caller, requestId);
    const controller = new AbortController();
    const set = this.calls.get(id) ?? new Set();
    set.add(controller);
    this.calls.set(id, set);
    return {
      signal: controller.signal,
      end: () => {
        set.delete(controller);
        if (set.size === 0 && this.calls.get(id) === set) this.calls.delete(id);
      },
    };
  }

  /** Cancels the caller's call with this request id, wherever it runs. */
  async cancel(caller: string, requestId: string | number): Promise<void> {
    await this.bus.publish({ kind: 'mcpCall', id: callId(caller, requestId) });
  }

  /** How many calls run in this process now. */
  get size(): number {
    let total = 0;
    for (const set of this.calls.values()) total += set.size;
    return total;
  }

  close(): void {
    this.unsubscribe();
  }
}

// The id's type is part of it: request 1 and request "1" are different requests.
const callId = (caller: string, requestId: string | number) =>
  createHash('sha256')
    .update(`${caller}\0${typeof requestId}\0${requestId}`)
    .digest('hex');
