// Tells every cache that something it may hold changed. Delivery to this process
// is synchronous, so a revoke takes effect here before the revoke's response is
// sent; a Redis-backed bus (redis-bus.ts) carries the same messages to other replicas.

export type Invalidation =
  | { kind: 'apiKey'; id: string }
  | { kind: 'user'; id: string }
  | { kind: 'tenant'; id: string }
  /** A compute node was added, changed or removed: routers reload their node list. */
  | { kind: 'computeNode'; id: string }
  /** A run was cancelled (or its thread deleted): whichever process executes it stops it. */
  | { kind: 'run'; id: string }
  /** A client cancelled an MCP tool call (a hash of caller and request id): whichever process runs it aborts it. */
  | { kind: 'mcpCall'; id: string };

export type InvalidationHandler = (event: Invalidation) => void;

export interface InvalidationBus {
  publish(event: Invalidation): Promise<void>;
  subscribe(handler: InvalidationHandler): () => void;
  /** Whether other replicas' messages reach this process now (always true in-process). */
  healthy(): boolean;
  /**
   * Called on every change of `healthy()`. Caches drop everything on either change:
   * going down, messages may already have been lost; coming back, some were.
   */
  onStatus(listener: (healthy: boolean) => void): () => void;
}

/**
 * How long a cache that relies on the bus may keep an entry while the bus is down:
 * short enough that a change made on another replica is seen within seconds anyway.
 */
export const DEGRADED_CACHE_TTL_MS = 5_000;

export class LocalInvalidationBus implements InvalidationBus {
  private readonly handlers = new Set<InvalidationHandler>();

  async publish(event: Invalidation): Promise<void> {
    this.deliver(event);
  }

  subscribe(handler: InvalidationHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  healthy(): boolean {
    return true;
  }

  onStatus(_listener: (healthy: boolean) => void): () => void {
    return () => {};
  }

  protected deliver(event: Invalidation): void {
    for (const handler of this.handlers) handler(event);
  }
}
