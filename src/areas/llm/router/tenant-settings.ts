// The tenants' llm settings, read once per tenant and cached until the bus says
// the tenant changed: the chat path never queries the database for them. Like the
// API-key cache, an entry in use is renewed in the background before its end, so
// requests never wait on that read.
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import { RenewingCache } from '../../../platform/renewing-cache.js';
import type { CacheStats } from '../../../platform/ttl-cache.js';
import type { Limits } from '../../../platform/rate-limits/limits.js';
import type { TenantLlmSettings } from './types.js';

/** What is cached per tenant: its llm settings, and the rate limits a platform admin set on it (null: none). */
export interface CachedTenantSettings {
  settings: TenantLlmSettings;
  limits: Limits | null;
}

// A safety net only: every change publishes an invalidation. Renewed from 8 minutes on.
const TTL_MS = 10 * 60_000;
const RENEW_RETRY_MS = 60_000;

export class TenantSettingsCache {
  // A read that overlapped an invalidation is used once but not cached, or it would undo the change.
  private readonly cache: RenewingCache<CachedTenantSettings>;
  private readonly unsubscribe: () => void;

  /** `loadSettings`: one tenant's settings from storage (llm/settings' loadLlmSettings, handed in by createLlmServices). */
  constructor(
    private readonly loadSettings: (tenantId: string) => Promise<CachedTenantSettings>,
    bus: InvalidationBus,
  ) {
    this.cache = new RenewingCache<CachedTenantSettings>({ maxEntries: 50_000, ttlMs: () => TTL_MS, retryMs: RENEW_RETRY_MS, bus });
    this.unsubscribe = bus.subscribe((event) => {
      if (event.kind === 'tenant') this.cache.invalidateKey(event.id);
    });
  }

  /** Hits and misses of the settings cache (for /metrics). */
  get cacheStats(): CacheStats {
    return this.cache.stats;
  }

  get(tenantId: string): TenantLlmSettings | Promise<TenantLlmSettings> {
    const entry = this.entry(tenantId);
    return entry instanceof Promise ? entry.then((e) => e.settings) : entry.settings;
  }

  /** The tenant's rate limits, from the same cached entry (the rate limiter's read). */
  limits(tenantId: string): Limits | null | Promise<Limits | null> {
    const entry = this.entry(tenantId);
    return entry instanceof Promise ? entry.then((e) => e.limits) : entry.limits;
  }

  private entry(tenantId: string): CachedTenantSettings | Promise<CachedTenantSettings> {
    return this.cache.get(tenantId, () => this.loadSettings(tenantId));
  }

  close(): void {
    this.unsubscribe();
  }
}
