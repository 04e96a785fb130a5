import type { Queryable } from '../../../platform/db/database.js';

export interface TenantRow {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  settings: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export const tenantRepository = {
  list(q: Queryable) {
    return q.query<TenantRow>('SELECT * FROM tenants ORDER BY id');
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
  async update(q: Queryable, id: string, patch: { name?: string; status?: TenantRow['status']; settings?: Record<string, unknown> }) {
    const [row] = await q.query<TenantRow>(
      `UPDATE tenants SET name = COALESCE($2, name), status = COALESCE($3, status),
         settings = settings || COALESCE($4::jsonb, '{}'::jsonb), updated_at = now()
       WHERE id = $1 RETURNING *`,
      [id, patch.name ?? null, patch.status ?? null, patch.settings ? JSON.stringify(patch.settings) : null],
    );
    return row;
  },

  async count(q: Queryable) {
    const [row] = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM tenants');
    return row!.n;
  },
};
