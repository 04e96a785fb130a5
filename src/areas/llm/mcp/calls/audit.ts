// The audit of MCP tool calls: one record per tools/call the endpoint answers, written
// by the endpoint (endpoint/tool-server.ts) once the call has ended. It keeps who
// called which tool, how it ended and how long it took, and of the arguments and the
// result only a hash and sizes: their content is never stored or logged.
import { createHash } from 'node:crypto';
import type { Queryable } from '../../../../platform/db/database.js';
import { newId } from '../../../../platform/ids.js';
import type { Principal } from '../../../../platform/identity.js';
import { ToolCallFailed } from '../tool-source.js';
import type { McpCallStatus } from './schemas.js';

export interface McpCallEntry {
  principal: Principal;
  /** null: the name called matched no tool. */
  server: string | null;
  tool: string;
  status: McpCallStatus;
  startedAt: Date;
  durationMs: number;
  arguments: unknown;
  /** undefined: the call produced no result. */
  result?: unknown;
}

export interface McpCallAudit {
  record(entry: McpCallEntry): Promise<void>;
}

export class DatabaseMcpCallAudit implements McpCallAudit {
  constructor(private readonly db: Queryable) {}

  async record(entry: McpCallEntry): Promise<void> {
    const args = JSON.stringify(entry.arguments ?? {});
    const byKey = entry.principal.kind === 'apiKey';
    await this.db.query(
      `INSERT INTO mcp_calls (id, tenant_id, at, server, tool, key_id, user_id, status, duration_ms, arguments_sha256, arguments_bytes, result_bytes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        newId('mcpCall', entry.startedAt.getTime()),
        entry.principal.tenantId,
        entry.startedAt,
        entry.server,
        entry.tool,
        byKey ? entry.principal.subject : null,
        byKey ? null : entry.principal.subject,
        entry.status,
        Math.max(0, Math.round(entry.durationMs)),
        createHash('sha256').update(args).digest('hex'),
        Buffer.byteLength(args),
        entry.result === undefined ? null : Buffer.byteLength(JSON.stringify(entry.result)),
      ],
    );
  }
}

/**
 * Writes one record for a caller that must answer whatever happens: a failed write
 * changes nothing of the call's answer, and only its kind is logged (the database's
 * message could quote the row). The endpoint and the Responses API both write through it.
 */
export async function recordCall(audit: McpCallAudit, entry: McpCallEntry, logError?: (error: Error) => void): Promise<void> {
  await audit.record(entry).catch((error: Error) => logError?.(new Error(`mcp call audit not written: ${error.name}`)));
}

/** How a call that threw ended, for its audit record (the endpoint's and the Responses API's calls alike). */
export function failedCallStatus(error: unknown): McpCallStatus {
  if (!(error instanceof ToolCallFailed)) return 'error';
  // `denied`: the registry's own re-check refused it (no longer granted, pinned or the tenant's); no upstream reached.
  if (error.reason === 'timeout' || error.reason === 'cancelled' || error.reason === 'denied') return error.reason;
  return 'error';
}
