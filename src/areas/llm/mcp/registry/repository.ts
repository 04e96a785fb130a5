// SQL for MCP servers. Tenant filtering happens in the service (a server may serve
// several tenants, like a compute node); these statements take ids as given.
import type { Queryable } from '../../../../platform/db/database.js';
import type { UrlScope } from '../../outbound/url-guard.js';
import type { StoredAuth } from './credentials.js';
import type { PinnedTool } from './pinning.js';
import type { StatusState } from './schemas.js';

export interface McpServerRow {
  id: string;
  name: string;
  url: string;
  /** Who gave the URLs, so whose deny list holds them at connect time. */
  url_scope: UrlScope;
  auth: StoredAuth;
  timeout_seconds: number;
  tenant_ids: string[];
  status_state: StatusState;
  status_error: string | null;
  checked_at: Date | null;
  pinned_tools: PinnedTool[] | null;
  pending_tools: PinnedTool[] | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export type NewMcpServerRow = Pick<
  McpServerRow,
  'id' | 'name' | 'url' | 'url_scope' | 'auth' | 'timeout_seconds' | 'tenant_ids' | 'created_by'
>;

export interface McpServerChanges {
  name?: string;
  /** Always with `urlScope`: the scope of whoever gave the URLs (the server's and the token endpoint's). */
  url?: string;
  auth?: StoredAuth;
  urlScope?: UrlScope;
  timeoutSeconds?: number;
  tenantIds?: string[];
}

/** A listing's outcome, written by the tool catalog (catalog.ts). */
export interface McpServerStatus {
  state: StatusState;
  error: string | null;
  pinned: PinnedTool[] | null;
  pending: PinnedTool[] | null;
}

export const mcpServerRepository = {
  listAll(q: Queryable) {
    return q.query<McpServerRow>('SELECT * FROM mcp_servers ORDER BY id');
  },

  /** Servers the tenant sees: shared with every tenant, or naming it. */
  listServing(q: Queryable, tenantId: string) {
    return q.query<McpServerRow>(`SELECT * FROM mcp_servers WHERE tenant_ids = '{}' OR $1 = ANY (tenant_ids) ORDER BY id`, [tenantId]);
  },

  async get(q: Queryable, id: string, lock = false) {
    const [row] = await q.query<McpServerRow>(`SELECT * FROM mcp_servers WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
    return row;
  },

  /**
   * Holds every name check and write until the transaction ends: uniqueness is
   * "no overlap of tenants", which no unique index can say.
   */
  async lockNames(q: Queryable) {
    await q.query('LOCK TABLE mcp_servers IN SHARE ROW EXCLUSIVE MODE');
  },

  /**
   * The other servers named `name` that a tenant of `tenantIds` would also see
   * (empty `tenantIds`: shared, so every server of that name collides).
   */
  async nameTaken(q: Queryable, name: string, tenantIds: string[], exceptId: string | null) {
    const rows = await q.query<{ id: string }>(
      `SELECT id FROM mcp_servers
        WHERE name = $1 AND id IS DISTINCT FROM $3
          AND ($2::text[] = '{}' OR tenant_ids = '{}' OR tenant_ids && $2::text[])
        LIMIT 1`,
      [name, tenantIds, exceptId],
    );
    return rows.length > 0;
  },

  async insert(q: Queryable, row: NewMcpServerRow) {
    const [created] = await q.query<McpServerRow>(
      `INSERT INTO mcp_servers (id, name, url, url_scope, auth, timeout_seconds, tenant_ids, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [row.id, row.name, row.url, row.url_scope, JSON.stringify(row.auth), row.timeout_seconds, row.tenant_ids, row.created_by],
    );
    return created!;
  },

  /**
   * A change of url or auth forgets the last status and pending listing (the next listing is of
   * another server, or with another credential) but keeps the pins: nothing new is served unapproved.
   */
  async update(q: Queryable, id: string, changes: McpServerChanges) {
    const reconnect = changes.url !== undefined || changes.auth !== undefined;
    const [row] = await q.query<McpServerRow>(
      `UPDATE mcp_servers SET
         name = COALESCE($2, name),
         url = COALESCE($3, url),
         auth = COALESCE($4::jsonb, auth),
         url_scope = COALESCE($5, url_scope),
         timeout_seconds = COALESCE($6, timeout_seconds),
         tenant_ids = COALESCE($7::text[], tenant_ids),
         status_state = CASE WHEN $8::boolean THEN 'unknown' ELSE status_state END,
         status_error = CASE WHEN $8::boolean THEN NULL ELSE status_error END,
         pending_tools = CASE WHEN $8::boolean THEN NULL ELSE pending_tools END,
         updated_at = now()
       WHERE id = $1 RETURNING *`,
      [
        id,
        changes.name ?? null,
        changes.url ?? null,
        changes.auth ? JSON.stringify(changes.auth) : null,
        changes.urlScope ?? null,
        changes.timeoutSeconds ?? null,
        changes.tenantIds ?? null,
        reconnect,
      ],
    );
    return row;
  },

  async setStatus(q: Queryable, id: string, status: McpServerStatus) {
    const [row] = await q.query<McpServerRow>(
      `UPDATE mcp_servers SET status_state = $2, status_error = $3, pinned_tools = $4::jsonb, pending_tools = $5::jsonb, checked_at = now()
        WHERE id = $1 RETURNING *`,
      [
        id,
        status.state,
        status.error,
        status.pinned ? JSON.stringify(status.pinned) : null,
        status.pending ? JSON.stringify(status.pending) : null,
      ],
    );
    return row;
  },

  async delete(q: Queryable, id: string) {
    const rows = await q.query('DELETE FROM mcp_servers WHERE id = $1 RETURNING id', [id]);
    return rows.length > 0;
  },

  /** The ids among `ids` that name existing tenants. */
  async existingTenants(q: Queryable, ids: string[]) {
    const rows = await q.query<{ id: string }>('SELECT id FROM tenants WHERE id = ANY ($1::text[])', [ids]);
    return new Set(rows.map((r) => r.id));
  },
};
