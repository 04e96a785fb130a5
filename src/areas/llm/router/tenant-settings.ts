// The tenants' llm settings, read once per tenant and cached until the bus says
// the tenant changed: the chat path never queries the database for them.
import type { Database } from '../../../platform/db/database.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import { TtlCache } from '../../../platform/ttl-cache.js';
import { tenantRepository } from '../../auth/tenants/repository.js';
import { llmSettingsFrom } from '../../auth/tenants/settings.js';
import type { TenantLlmSettings } from './types.js';

// A safety net only: every change publishes an invalidation.
const TTL_MS = 10 * 60_000;

export class TenantSettingsCache {
  private readonly cache = new TtlCache<string, TenantLlmSettings>(50_000);
  private readonly loading = new Map<string, Promise<TenantLlmSettings>>();
  // A read that overlapped an invalidation is used once but not cached, or it would undo the change.
  private generation = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly db: Database, bus: InvalidationBus) {
    this.unsubscribe = bus.subscribe((event) => {
      if (event.kind !== 'tenant') return;
      this.generation++;
      this.cache.delete(event.id);
      this.loading.delete(event.id);
    });
  }

  get(tenantId: string): TenantLlmSettings | Promise<TenantLlmSettings> {
    const cached = this.cache.get(tenantId);
    if (cached) return cached;
    const loading = this.loading.get(tenantId);
    if (loading) return loading;
    const generation = this.generation;
    const pending = this.load(tenantId).then((settings) => {
      if (generation === this.generation) this.cache.set(tenantId, settings, TTL_MS);
      return settings;
    });
    this.loading.set(tenantId, pending);
    const done = () => {
      if (this.loading.get(tenantId) === pending) this.loading.delete(tenantId);
    };
    pending.then(done, done);
    return pending;
  }

  close(): void {
    this.unsubscribe();
  }

  private async load(tenantId: string): Promise<TenantLlmSettings> {
    return llmSettingsFrom(await tenantRepository.settings(this.db, tenantId));
  }
}
