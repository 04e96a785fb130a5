// SQL for API key management. Every statement filters by tenant; the validator
// (validator.ts) has its own lookup by hash for the request path.
import type { Queryable } from '../../../platform/db/database.js';

export interface ApiKeyRow {
  id: string;
  tenant_id: string;
  customer_id: string | null;
  name: string;
  key_hash: string;
  masked_key: string;
  scopes: string[];
  status: 'active' | 'revoked';
  created_by: string | null;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  /** Rate limits and budgets (platform/rate-limits/limits.ts); null: none. */
  limits: Record<string, unknown> | null;
  /** The MCP grant, {allow: [...]} (platform/mcp-grants.ts); null: none. */
  mcp: { allow?: unknown } | null;
}

// The search of a page and of its count: parameter $n is the ILIKE pattern (paging.ts escapes it), or null for none.
const matches = (n: number) =>
  `($${n}::text IS NULL OR name ILIKE $${n} ESCAPE '\\' OR masked_key ILIKE $${n} ESCAPE '\\' OR customer_id ILIKE $${n} ESCAPE '\\')`;

export const apiKeyRepository = {
  async insert(
    q: Queryable,
    row: Pick<ApiKeyRow, 'id' | 'tenant_id' | 'customer_id' | 'name' | 'key_hash' | 'masked_key' | 'scopes' | 'created_by' | 'expires_at'>,
  ) {
    const [created] = await q.query<ApiKeyRow>(
      `INSERT INTO api_keys (id, tenant_id, customer_id, name, key_hash, masked_key, scopes, created_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9) RETURNING *`,
      [
        row.id,
        row.tenant_id,
        row.customer_id,
        row.name,
        row.key_hash,
        row.masked_key,
        JSON.stringify(row.scopes),
        row.created_by,
        row.expires_at,
      ],
    );
    return created!;
  },

  list(q: Queryable, tenantId: string) {
    return q.query<ApiKeyRow>('SELECT * FROM api_keys WHERE tenant_id = $1 ORDER BY id', [tenantId]);
  },

  /** Keys in id order (oldest first) after the cursor, `pattern` (ILIKE) matching the name, masked key or customer id. */
  page(q: Queryable, tenantId: string, page: { limit: number | null; after: string | null; pattern: string | null }) {
    return q.query<ApiKeyRow>(
      `SELECT * FROM api_keys WHERE tenant_id = $1 AND ($2::text IS NULL OR id > $2) AND ${matches(3)}
       ORDER BY id LIMIT $4::int`,
      [tenantId, page.after, page.pattern, page.limit],
    );
  },

  async count(q: Queryable, tenantId: string, pattern: string | null) {
    const [row] = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = $1 AND ${matches(2)}`, [
      tenantId,
      pattern,
    ]);
    return row!.n;
  },

  /** Names and masked keys of the tenant's keys among `ids` (a deleted key is simply absent): for the usage report. */
  labels(q: Queryable, tenantId: string, ids: string[]) {
    return q.query<Pick<ApiKeyRow, 'id' | 'name' | 'masked_key'>>(
      'SELECT id, name, masked_key FROM api_keys WHERE tenant_id = $1 AND id = ANY($2::text[])',
      [tenantId, ids],
    );
  },

  async get(q: Queryable, tenantId: string, id: string) {
    const [row] = await q.query<ApiKeyRow>('SELECT * FROM api_keys WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    return row;
  },

  /** Revoking keeps the first revocation time; activating clears it. */
  async setStatus(q: Queryable, tenantId: string, id: string, status: ApiKeyRow['status']) {
    const [row] = await q.query<ApiKeyRow>(
      `UPDATE api_keys SET
         status = $3,
         revoked_at = CASE WHEN $3 = 'revoked' THEN COALESCE(revoked_at, now()) ELSE NULL END
       WHERE tenant_id = $1 AND id = $2 RETURNING *`,
      [tenantId, id, status],
    );
    return row;
  },

  /** Sets what `changes` names (null clears it); the row as it is now, or undefined when there is no such key. */
  async update(q: Queryable, tenantId: string, id: string, changes: { limits?: object | null; mcp?: object | null }) {
    const sets: string[] = [];
    const values: unknown[] = [tenantId, id];
    for (const column of ['limits', 'mcp'] as const) {
      const value = changes[column];
      if (value === undefined) continue;
      values.push(value === null ? null : JSON.stringify(value));
      sets.push(`${column} = $${values.length}::jsonb`);
    }
    const sql = sets.length
      ? `UPDATE api_keys SET ${sets.join(', ')} WHERE tenant_id = $1 AND id = $2 RETURNING *`
      : 'SELECT * FROM api_keys WHERE tenant_id = $1 AND id = $2';
    const [row] = await q.query<ApiKeyRow>(sql, values);
    return row;
  },

  /** Revokes every active key `userId` created (their account ended: SCIM deactivation); the ids revoked. */
  async revokeCreatedBy(q: Queryable, tenantId: string, userId: string) {
    const rows = await q.query<{ id: string }>(
      `UPDATE api_keys SET status = 'revoked', revoked_at = COALESCE(revoked_at, now())
        WHERE tenant_id = $1 AND created_by = $2 AND status = 'active' RETURNING id`,
      [tenantId, userId],
    );
    return rows.map((r) => r.id);
  },

  async delete(q: Queryable, tenantId: string, id: string) {
    const rows = await q.query('DELETE FROM api_keys WHERE tenant_id = $1 AND id = $2 RETURNING id', [tenantId, id]);
    return rows.length > 0;
  },
};
