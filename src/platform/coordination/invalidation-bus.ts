// Tells every cache that something it may hold changed. Delivery to this process
// is synchronous, so a revoke takes effect here before the revoke's response is
// sent; a Redis-backed bus carries the same messages to other replicas.

export type Invalidation =
  | { kind: 'apiKey'; id: string }
  | { kind: 'user'; id: string }
  | { kind: 'tenant'; id: string }
  /** A compute node was added, changed or removed: routers reload their node list. */
  | { kind: 'computeNode'; id: string }
  /** A run was cancelled (or its thread deleted): whichever process executes it stops it. */
  | { kind: 'run'; id: string };

export type InvalidationHandler = (event: Invalidation) => void;

export interface InvalidationBus {
  publish(event: Invalidation): Promise<void>;
  subscribe(handler: InvalidationHandler): () => void;
}

export class LocalInvalidationBus implements InvalidationBus {
  private readonly handlers = new Set<InvalidationHandler>();

  async publish(event: Invalidation): Promise<void> {
    for (const handler of this.handlers) handler(event);
  }

  subscribe(handler: InvalidationHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
}
