// GET /api/llm/v1/mcp/calls: a tenant admin reads their tenant's audit records, newest
// first, filtered by time, server and tool. Only ever the caller's tenant.
import type { Queryable } from '../../../../platform/db/database.js';
import { validation } from '../../../../platform/errors.js';
import { isId } from '../../../../platform/ids.js';
import { requireTenantAdmin } from '../../../../platform/authorization.js';
import type { Principal } from '../../../../platform/identity.js';
import { pageLimit } from '../../../paging.js';
import type { McpCallQuery, McpCallRecord, McpCallStatus } from './schemas.js';

const PAGE = { fallback: 100, max: 500 };

interface McpCallRow {
  id: string;
  at: Date;
  server: string | null;
  tool: string;
  key_id: string | null;
  user_id: string | null;
  status: McpCallStatus;
  duration_ms: number;
  arguments_sha256: string;
  arguments_bytes: number;
  result_bytes: number | null;
}

export async function listMcpCalls(
  db: Queryable,
  principal: Principal,
  query: McpCallQuery,
): Promise<{ data: McpCallRecord[]; next: string | null }> {
  requireTenantAdmin(principal, principal.tenantId);
  const limit = pageLimit(query.limit, PAGE)!;
  const where = ['tenant_id = $1'];
  const values: unknown[] = [principal.tenantId];
  const add = (sql: string, value: unknown) => {
    values.push(value);
    where.push(sql.replace('?', `$${values.length}`));
  };
  if (query.from !== undefined) add('at >= ?', instant('from', query.from));
  if (query.to !== undefined) add('at < ?', instant('to', query.to));
  if (query.server !== undefined) add('server = ?', query.server);
  if (query.tool !== undefined) add('tool = ?', query.tool);
  if (query.after !== undefined) {
    if (!isId('mcpCall', query.after)) throw validation('after', 'must be the `next` of a previous page');
    add('id < ?', query.after);
  }
  values.push(limit + 1);
  const rows = await db.query<McpCallRow>(
    `SELECT * FROM mcp_calls WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${values.length}`,
    values,
  );
  const page = rows.slice(0, limit);
  return { data: page.map(toRecord), next: rows.length > limit ? page[page.length - 1]!.id : null };
}

function instant(field: string, value: string): Date {
  const date = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2}))?$/.test(value) ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw validation(field, 'must be an ISO 8601 timestamp with its offset, or a date');
  return date;
}

const toRecord = (row: McpCallRow): McpCallRecord => ({
  id: row.id,
  at: row.at.toISOString(),
  server: row.server,
  tool: row.tool,
  ...(row.key_id !== null ? { keyId: row.key_id } : {}),
  ...(row.user_id !== null ? { userId: row.user_id } : {}),
  status: row.status,
  durationMs: row.duration_ms,
  argumentsSha256: row.arguments_sha256,
  argumentsBytes: row.arguments_bytes,
  resultBytes: row.result_bytes,
});
