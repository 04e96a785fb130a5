// One load per key at a time: callers asking for a key whose load is in flight get
// that load's promise instead of starting their own (a cache miss of a busy key
// then costs one database read, not one per waiting request).

export class SingleFlight<K, V> {
  private readonly inFlight = new Map<K, Promise<V>>();

  run(key: K, load: () => Promise<V>): Promise<V> {
    const shared = this.inFlight.get(key);
    if (shared) return shared;
    const pending = load();
    this.inFlight.set(key, pending);
    const done = () => {
      if (this.inFlight.get(key) === pending) this.inFlight.delete(key);
    };
    pending.then(done, done);
    return pending;
  }

  /**
   * Renew-ahead for a cached `entry`: once it is `renewAfterMs` old, starts one
   * background `load` for its key (none while one is in flight) and returns at once;
   * the entry keeps serving meanwhile. A failed renewal is retried `retryMs` later.
   */
  renewIfDue(key: K, entry: { loadedAt: number }, renewAfterMs: number, retryMs: number, load: () => Promise<V>): void {
    if (Date.now() - entry.loadedAt < renewAfterMs || this.inFlight.has(key)) return;
    this.run(key, load).catch(() => {
      entry.loadedAt = Math.max(entry.loadedAt, Date.now() - renewAfterMs + retryMs);
    });
  }

  /** Later callers start fresh loads (those in flight may predate a change). */
  forgetAll(): void {
    this.inFlight.clear();
  }
}
