// The llm area's read of its settings: the `settings` column (jsonb) of the
// tenants table, where they sit next to whatever other areas keep there. Writes go
// through the tenant record's PATCH (the tenants feature), in the same statement
// as the rest of the tenant.
import type { Queryable } from '../../../platform/db/database.js';

export const llmSettingsRepository = {
  /** The tenant's stored settings object and its rate limits (tenants.limits), for the router's cache; undefined for an unknown tenant. */
  async storedWithLimits(q: Queryable, tenantId: string) {
    const [row] = await q.query<{ settings: Record<string, unknown>; limits: unknown }>(
      'SELECT settings, limits FROM tenants WHERE id = $1',
      [tenantId],
    );
    return row;
  },
};
