// Whether a user may act right now, and with which roles: read from the database,
// cached briefly, and dropped the moment the user or tenant changes, so disabling
// a user or tenant, or changing roles, takes effect on the next request.
import type { Database } from '../../../platform/db/database.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import type { Role } from '../../../platform/identity.js';
import { TtlCache } from '../../../platform/ttl-cache.js';
import { SingleFlight } from '../../../platform/single-flight.js';

export interface AccountState {
  userId: string;
  tenantId: string;
  roles: Role[];
  active: boolean; // user and tenant both active
}

const TTL_MS = 60_000;
/** Share of the TTL after which a used entry is renewed ahead of its end, as for API keys. */
const RENEW_AT = 0.8;
const RENEW_RETRY_MS = 5_000;

export class AccountStates {
  private readonly cache = new TtlCache<string, { state: AccountState | null; loadedAt: number }>(50_000);
  // As in the API-key validator: a read that overlapped an invalidation (say, a
  // disable committing meanwhile) is used once but not cached, or it would undo it.
  private generation = 0;
  /** Concurrent requests of one user whose entry is missing share one read. */
  private readonly loading = new SingleFlight<string, AccountState | null>();

  /** `ttlMs`: how long a state is trusted without a change event (tests shorten it). */
  constructor(private readonly db: Database, bus: InvalidationBus, private readonly ttlMs = TTL_MS) {
    bus.subscribe((event) => {
      if (event.kind === 'apiKey') return;
      this.generation++;
      this.loading.forgetAll();
      if (event.kind === 'user') this.cache.delete(event.id);
      if (event.kind === 'tenant') this.cache.deleteWhere((entry) => entry.state?.tenantId === event.id);
    });
  }

  async get(userId: string): Promise<AccountState | null> {
    const cached = this.cache.get(userId);
    if (cached === undefined) return this.loading.run(userId, () => this.read(userId));
    // A user who keeps working never waits for the re-read when the entry runs out: it is renewed in the background first.
    this.loading.renewIfDue(userId, cached, this.ttlMs * RENEW_AT, RENEW_RETRY_MS, () => this.read(userId));
    return cached.state;
  }

  private async read(userId: string): Promise<AccountState | null> {
    const generation = this.generation;
    const loadedAt = Date.now();
    const [row] = await this.db.query<{ tenant_id: string; roles: Role[]; status: string; tenant_status: string }>(
      `SELECT u.tenant_id, u.roles, u.status, t.status AS tenant_status
         FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE u.id = $1`,
      [userId],
    );
    const state = row ? { userId, tenantId: row.tenant_id, roles: row.roles, active: row.status === 'active' && row.tenant_status === 'active' } : null;
    if (generation === this.generation) this.cache.set(userId, { state, loadedAt }, this.ttlMs);
    return state;
  }
}
