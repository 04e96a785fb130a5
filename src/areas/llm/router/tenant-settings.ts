// The tenants' llm settings, read once per tenant and cached until the bus says
// the tenant changed: the chat path never queries the database for them. Like the
// API-key cache, an entry in use is renewed in the background before its end, so
// requests never wait on that read.
import type { Database } from '../../../platform/db/database.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import { TtlCache } from '../../../platform/ttl-cache.js';
import { SingleFlight } from '../../../platform/single-flight.js';
import { tenantRepository } from '../../auth/tenants/repository.js';
import { llmSettingsFrom } from '../../auth/tenants/settings.js';
import type { TenantLlmSettings } from './types.js';

// A safety net only: every change publishes an invalidation.
const TTL_MS = 10 * 60_000;
const RENEW_AFTER_MS = 8 * 60_000;
const RENEW_RETRY_MS = 60_000;

export class TenantSettingsCache {
  private readonly cache = new TtlCache<string, { settings: TenantLlmSettings; loadedAt: number }>(50_000);
  private readonly loading = new SingleFlight<string, TenantLlmSettings>();
  // A read that overlapped an invalidation is used once but not cached, or it would undo the change.
  private generation = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly db: Database, bus: InvalidationBus) {
    this.unsubscribe = bus.subscribe((event) => {
      if (event.kind !== 'tenant') return;
      this.generation++;
      this.cache.delete(event.id);
      this.loading.forget(event.id);
    });
  }

  get(tenantId: string): TenantLlmSettings | Promise<TenantLlmSettings> {
    const cached = this.cache.get(tenantId);
    if (cached) {
      this.loading.renewIfDue(tenantId, cached, RENEW_AFTER_MS, RENEW_RETRY_MS, () => this.read(tenantId));
      return cached.settings;
    }
    return this.loading.run(tenantId, () => this.read(tenantId));
  }

  close(): void {
    this.unsubscribe();
  }

  /** Reads the tenant's settings (one at a time per tenant: callers go through `loading`); cached unless an invalidation overlapped the read. */
  private async read(tenantId: string): Promise<TenantLlmSettings> {
    const generation = this.generation;
    const loadedAt = Date.now();
    const settings = await this.load(tenantId);
    if (generation === this.generation) this.cache.set(tenantId, { settings, loadedAt }, TTL_MS);
    return settings;
  }

  private async load(tenantId: string): Promise<TenantLlmSettings> {
    return llmSettingsFrom(await tenantRepository.settings(this.db, tenantId));
  }
}
