// SQL for compute nodes added through the API. Tenant filtering happens in the
// service (a node may serve several tenants); these statements take ids as given.
import type { Queryable } from '../../../platform/db/database.js';
import type { UrlScope } from '../outbound/url-guard.js';

export interface ComputeNodeRow {
  id: string;
  name: string;
  engine: 'openai' | 'ollama';
  url: string;
  api_key_encrypted: string | null;
  tenant_ids: string[];
  /** Who gave the URL, so whose deny list holds it at connect time. */
  url_scope: UrlScope;
  enabled: boolean;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ComputeNodeChanges {
  name?: string;
  engine?: ComputeNodeRow['engine'];
  /** Always with `urlScope`: the scope of whoever gave this URL. */
  url?: { url: string; urlScope: UrlScope };
  /** null removes the key. */
  apiKeyEncrypted?: string | null;
  tenantIds?: string[];
  enabled?: boolean;
}

export const computeNodeRepository = {
  listAll(q: Queryable) {
    return q.query<ComputeNodeRow>('SELECT * FROM compute_nodes ORDER BY id');
  },

  /** Nodes that serve the tenant: shared with every tenant, or naming it. */
  listServing(q: Queryable, tenantId: string) {
    return q.query<ComputeNodeRow>(`SELECT * FROM compute_nodes WHERE tenant_ids = '{}' OR $1 = ANY (tenant_ids) ORDER BY id`, [tenantId]);
  },

  async get(q: Queryable, id: string) {
    const [row] = await q.query<ComputeNodeRow>('SELECT * FROM compute_nodes WHERE id = $1', [id]);
    return row;
  },

  async insert(q: Queryable, row: Omit<ComputeNodeRow, 'created_at' | 'updated_at'>) {
    const [created] = await q.query<ComputeNodeRow>(
      `INSERT INTO compute_nodes (id, name, engine, url, api_key_encrypted, tenant_ids, url_scope, enabled, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
      [row.id, row.name, row.engine, row.url, row.api_key_encrypted, row.tenant_ids, row.url_scope, row.enabled, row.created_by],
    );
    return created!;
  },

  async update(q: Queryable, id: string, changes: ComputeNodeChanges) {
    const [row] = await q.query<ComputeNodeRow>(
      `UPDATE compute_nodes SET
         name = COALESCE($2, name),
         engine = COALESCE($3, engine),
         url = COALESCE($4, url),
         api_key_encrypted = CASE WHEN $5::boolean THEN $6 ELSE api_key_encrypted END,
         tenant_ids = COALESCE($7::text[], tenant_ids),
         enabled = COALESCE($8, enabled),
         url_scope = COALESCE($9, url_scope),
         updated_at = now()
       WHERE id = $1 RETURNING *`,
      [
        id,
        changes.name ?? null,
        changes.engine ?? null,
        changes.url?.url ?? null,
        changes.apiKeyEncrypted !== undefined,
        changes.apiKeyEncrypted ?? null,
        changes.tenantIds ?? null,
        changes.enabled ?? null,
        changes.url?.urlScope ?? null,
      ],
    );
    return row;
  },

  async delete(q: Queryable, id: string) {
    const rows = await q.query('DELETE FROM compute_nodes WHERE id = $1 RETURNING id', [id]);
    return rows.length > 0;
  },

  /** The ids among `ids` that name existing tenants. */
  async existingTenants(q: Queryable, ids: string[]) {
    const rows = await q.query<{ id: string }>('SELECT id FROM tenants WHERE id = ANY ($1::text[])', [ids]);
    return new Set(rows.map((r) => r.id));
  },
};
