// A bounded map whose entries expire: Map keeps insertion order, so the oldest
// entry is evicted first when full. Enough for credential caches; no dependency.

/** Lookups a cache answered and could not answer, since it was made (exported by /metrics). */
export interface CacheStats {
  readonly hits: number;
  readonly misses: number;
}

export class TtlCache<K, V> implements CacheStats {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();
  hits = 0;
  misses = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) {
      this.misses++;
      return undefined;
    }
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      this.misses++;
      return undefined;
    }
    this.hits++;
    return entry.value;
  }

  set(key: K, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Removes every entry whose value matches; used for "this tenant changed" invalidations. */
  deleteWhere(match: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (match(entry.value)) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
