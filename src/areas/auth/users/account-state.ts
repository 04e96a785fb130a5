// Whether a user may act right now, and with which roles: read from the database,
// cached briefly, and dropped the moment the user or tenant changes, so disabling
// a user or tenant, or changing roles, takes effect on the next request.
import type { Database } from '../../../platform/db/database.js';
import type { InvalidationBus } from '../../../platform/coordination/invalidation-bus.js';
import type { RoleName } from '../../../platform/identity.js';
import { RenewingCache } from '../../../platform/renewing-cache.js';
import type { CacheStats } from '../../../platform/ttl-cache.js';

export interface AccountState {
  userId: string;
  tenantId: string;
  roles: RoleName[];
  active: boolean; // user and tenant both active
  /** Access tokens of another epoch are refused (users.session_epoch, bumped when every credential ends). */
  sessionEpoch: number;
}

const TTL_MS = 60_000;
const RENEW_RETRY_MS = 5_000;

export class AccountStates {
  // A read that overlapped a disable's invalidation is used once, not cached.
  private readonly cache: RenewingCache<AccountState | null>;

  /** `ttlMs`: how long a state is trusted without a change event (tests shorten it). */
  constructor(
    private readonly db: Database,
    bus: InvalidationBus,
    ttlMs = TTL_MS,
  ) {
    this.cache = new RenewingCache<AccountState | null>({ maxEntries: 50_000, ttlMs: () => ttlMs, retryMs: RENEW_RETRY_MS, bus });
    bus.subscribe((event) => {
      if (event.kind === 'user') this.cache.invalidateKey(event.id);
      if (event.kind === 'tenant') this.cache.invalidateWhere((state) => state?.tenantId === event.id);
    });
  }

  /** A user who keeps working never waits for the re-read when the entry runs out: it is renewed in the background first. */
  /** Hits and misses of the account-state cache (for /metrics). */
  get cacheStats(): CacheStats {
    return this.cache.stats;
  }

  async get(userId: string): Promise<AccountState | null> {
    return this.cache.get(userId, () => this.read(userId));
  }

  private async read(userId: string): Promise<AccountState | null> {
    const [row] = await this.db.query<{
      tenant_id: string;
      roles: RoleName[];
      status: string;
      tenant_status: string;
      session_epoch: number;
    }>(
      `SELECT u.tenant_id, u.roles, u.status, u.session_epoch, t.status AS tenant_status
         FROM users u JOIN tenants t ON t.id = u.tenant_id WHERE u.id = $1`,
      [userId],
    );
    return row
      ? {
          userId,
          tenantId: row.tenant_id,
          roles: row.roles,
          active: row.status === 'active' && row.tenant_status === 'active',
          sessionEpoch: row.session_epoch,
        }
      : null;
  }
}
