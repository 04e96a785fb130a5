import type { Queryable } from '../../../platform/db/database.js';

export interface TenantRow {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  settings: Record<string, unknown>;
  /** Rate limits and budgets for every request of the tenant (platform/rate-limits/limits.ts); null: none. */
  limits: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

export const tenantRepository = {
  list(q: Queryable) {
    return q.query<TenantRow>('SELECT * FROM tenants ORDER BY id');
  },

  /** Tenants in id order (oldest first) after the cursor, `pattern` (ILIKE, escaped by paging.ts) matching the name. */
  page(q: Queryable, page: { limit: number | null; after: string | null; pattern: string | null }) {
    return q.query<TenantRow>(
      `SELECT * FROM tenants WHERE ($1::text IS NULL OR id > $1) AND ($2::text IS NULL OR name ILIKE $2 ESCAPE '\\')
       ORDER BY id LIMIT $3::int`,
      [page.after, page.pattern, page.limit],
    );
  },

  async countMatching(q: Queryable, pattern: string | null) {
    const [row] = await q.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tenants WHERE ($1::text IS NULL OR name ILIKE $1 ESCAPE '\\')`,
      [pattern],
    );
    return row!.n;
  },

  async get(q: Queryable, id: string) {
    const [row] = await q.query<TenantRow>('SELECT * FROM tenants WHERE id = $1', [id]);
    return row;
  },

  async insert(q: Queryable, id: string, name: string) {
    const [row] = await q.query<TenantRow>('INSERT INTO tenants (id, name) VALUES ($1, $2) RETURNING *', [id, name]);
    return row!;
  },

  /** `settings` is merged into the stored object key by key (other areas keep their own keys there). */
  /** `limits`: undefined keeps them, null clears them. */
  async update(
    q: Queryable,
    id: string,
    patch: { name?: string; status?: TenantRow['status']; settings?: Record<string, unknown>; limits?: object | null },
  ) {
    const [row] = await q.query<TenantRow>(
      `UPDATE tenants SET name = COALESCE($2, name), status = COALESCE($3, status),
         settings = settings || COALESCE($4::jsonb, '{}'::jsonb),
         limits = CASE WHEN $5 THEN $6::jsonb ELSE limits END, updated_at = now()
       WHERE id = $1 RETURNING *`,
      [
        id,
        patch.name ?? null,
        patch.status ?? null,
        patch.settings ? JSON.stringify(patch.settings) : null,
        patch.limits !== undefined,
        patch.limits ? JSON.stringify(patch.limits) : null,
      ],
    );
    return row;
  },

  async count(q: Queryable) {
    const [row] = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM tenants');
    return row!.n;
  },
};
