// SQL for workspaces. Every statement filters by tenant: the tenant comes from
// the caller's credential, never from the request.
import type { Queryable } from '../../../platform/db/database.js';

export interface WorkspaceRow {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  created_at: Date;
  updated_at: Date;
}

export const workspaceRepository = {
  list(q: Queryable, tenantId: string) {
    return q.query<WorkspaceRow>('SELECT * FROM workspaces WHERE tenant_id = $1 ORDER BY id', [tenantId]);
  },

  async get(q: Queryable, tenantId: string, id: string) {
    const [row] = await q.query<WorkspaceRow>('SELECT * FROM workspaces WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    return row;
  },

  async insert(q: Queryable, row: Pick<WorkspaceRow, 'id' | 'tenant_id' | 'name' | 'description'>) {
    const [created] = await q.query<WorkspaceRow>(
      'INSERT INTO workspaces (id, tenant_id, name, description) VALUES ($1, $2, $3, $4) RETURNING *',
      [row.id, row.tenant_id, row.name, row.description],
    );
    return created!;
  },

  async update(q: Queryable, tenantId: string, id: string, patch: { name?: string; description?: string | null }) {
    const [row] = await q.query<WorkspaceRow>(
      `UPDATE workspaces SET
         name = COALESCE($3, name),
         description = CASE WHEN $4::boolean THEN $5 ELSE description END,
         updated_at = now()
       WHERE tenant_id = $1 AND id = $2 RETURNING *`,
      [tenantId, id, patch.name ?? null, patch.description !== undefined, patch.description ?? null],
    );
    return row;
  },

  async delete(q: Queryable, tenantId: string, id: string) {
    const rows = await q.query('DELETE FROM workspaces WHERE tenant_id = $1 AND id = $2 RETURNING id', [tenantId, id]);
    return rows.length > 0;
  },
};
