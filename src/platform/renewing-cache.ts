// A cache of database reads for the request path: API keys, signed-in users' account
// states and tenants' llm settings all need the same three things from it.
// - Concurrent misses of one key share one read (SingleFlight).
// - An entry in use is renewed in the background past 80 % of its TTL, so a busy key
//   never reaches its end and no request waits on the database for it. Without this,
//   every request of a busy key queued a query of its own behind whatever the database
//   was doing (a batch of usage records) when the entry ran out.
// - Invalidation wins over reads in flight: a row read before a change committed can
//   arrive after the change's invalidation; caching it would undo the change for the
//   whole TTL, so such a read is answered to its callers but not cached.
// - While the invalidation bus is down (Redis unreachable) entries live a few seconds
//   at most, and the cache starts over when it goes down and when it comes back.
import { DEGRADED_CACHE_TTL_MS, type InvalidationBus } from './coordination/invalidation-bus.js';
import { SingleFlight } from './single-flight.js';
import { TtlCache, type CacheStats } from './ttl-cache.js';

export interface RenewingCacheOptions<V> {
  maxEntries: number;
  /** How long an entry lives (it may depend on the value: a "no such row" entry lives shorter). */
  ttlMs: (value: V) => number;
  /** Whether an entry in use is renewed ahead of its end (default: every entry); one that is not just runs out. */
  renews?: (value: V) => boolean;
  /** A failed renewal is tried again this much later (the entry keeps serving until its end). */
  retryMs: number;
  /** The bus whose messages keep this cache right: its health bounds the TTL (see above). */
  bus?: Pick<InvalidationBus, 'healthy' | 'onStatus'>;
}

/** Share of its TTL after which an entry in use is renewed in the background. */
const RENEW_AT = 0.8;

interface Entry<V> {
  value: V;
  loadedAt: number;
  /** Age at which it is renewed when used; undefined: never. */
  renewAfterMs: number | undefined;
}

export class RenewingCache<V> {
  private readonly entries: TtlCache<string, Entry<V>>;
  private readonly loading = new SingleFlight<string, V>();
  /** Bumped by every invalidation: a read that started before it is not cached. */
  private generation = 0;

  constructor(private readonly options: RenewingCacheOptions<V>) {
    this.entries = new TtlCache(options.maxEntries);
    options.bus?.onStatus(() => this.invalidateWhere(() => true));
  }

  /** Lookups answered from the cache and not (each get() or cached() is one). */
  get stats(): CacheStats {
    return this.entries;
  }

  /** The cached value, or the shared read of `load` on a miss. */
  get(key: string, load: () => Promise<V>): V | Promise<V> {
    const value = this.cached(key, load);
    return value !== undefined ? value : this.load(key, load);
  }

  /** The cached value (renewed in the background with `load` when due), or undefined on a miss. */
  cached(key: string, load: () => Promise<V>): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.renewAfterMs !== undefined)
      this.loading.renewIfDue(key, entry, entry.renewAfterMs, this.options.retryMs, () => this.read(key, load));
    return entry.value;
  }

  /** Reads with `load` and caches the result; callers of one key share one read. */
  load(key: string, load: () => Promise<V>): Promise<V> {
    return this.loading.run(key, () => this.read(key, load));
  }

  /** Drops the entry of `key`; reads in flight are no longer shared or cached. */
  invalidateKey(key: string): void {
    this.invalidated();
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches; reads in flight are no longer shared or cached. */
  invalidateWhere(match: (value: V) => boolean): void {
    this.invalidated();
    this.entries.deleteWhere((entry) => match(entry.value));
  }

  private invalidated(): void {
    this.generation++;
    this.loading.forgetAll();
  }

  private async read(key: string, load: () => Promise<V>): Promise<V> {
    const generation = this.generation;
    const loadedAt = Date.now();
    const value = await load();
    if (generation === this.generation) {
      const ttlMs =
        this.options.bus?.healthy() === false ? Math.min(this.options.ttlMs(value), DEGRADED_CACHE_TTL_MS) : this.options.ttlMs(value);
      const renewAfterMs = this.options.renews?.(value) === false ? undefined : ttlMs * RENEW_AT;
      this.entries.set(key, { value, loadedAt, renewAfterMs }, ttlMs);
    }
    return value;
  }
}
