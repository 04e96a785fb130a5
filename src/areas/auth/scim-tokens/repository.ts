// SQL for SCIM tokens. Management statements filter by tenant; the validator's lookup
// by hash (findByHash) is the request path of the SCIM routes.
import type { Queryable } from '../../../platform/db/database.js';

export interface ScimTokenRow {
  id: string;
  tenant_id: string;
  name: string;
  token_hash: string;
  masked_token: string;
  created_by: string | null;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
}

/** A token with its tenant's status, as the SCIM routes need it. */
export interface ScimTokenWithTenant extends ScimTokenRow {
  tenant_status: string;
}

// A token's use is recorded at most once a minute: a provisioning run of thousands of
// requests writes a handful of times, not thousands.
const USE_RECORDED_EVERY_SECONDS = 60;

export const scimTokenRepository = {
  async insert(
    q: Queryable,
    row: Pick<ScimTokenRow, 'id' | 'tenant_id' | 'name' | 'token_hash' | 'masked_token' | 'created_by' | 'expires_at'>,
  ) {
    const [created] = await q.query<ScimTokenRow>(
      `INSERT INTO scim_tokens (id, tenant_id, name, token_hash, masked_token, created_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [row.id, row.tenant_id, row.name, row.token_hash, row.masked_token, row.created_by, row.expires_at],
    );
    return created!;
  },

  list(q: Queryable, tenantId: string) {
    return q.query<ScimTokenRow>('SELECT * FROM scim_tokens WHERE tenant_id = $1 ORDER BY id', [tenantId]);
  },

  async delete(q: Queryable, tenantId: string, id: string) {
    const rows = await q.query('DELETE FROM scim_tokens WHERE tenant_id = $1 AND id = $2 RETURNING id', [tenantId, id]);
    return rows.length > 0;
  },

  async findByHash(q: Queryable, tokenHash: string) {
    const [row] = await q.query<ScimTokenWithTenant>(
      `SELECT s.*, t.status AS tenant_status FROM scim_tokens s JOIN tenants t ON t.id = s.tenant_id WHERE s.token_hash = $1`,
      [tokenHash],
    );
    return row;
  },

  async recordUse(q: Queryable, id: string) {
    await q.query(
      `UPDATE scim_tokens SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
      [id, USE_RECORDED_EVERY_SECONDS],
    );
  },
};
