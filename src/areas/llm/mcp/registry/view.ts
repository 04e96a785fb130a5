// An MCP server row as the API shows it. The full view (its managers, and platform
// admins) masks every secret; the read-only view (a tenant admin looking at a shared
// server) also leaves out where it is, how it signs in, whom it serves, its last error
// (which may name internal addresses) and the changes awaiting a platform admin.
import type { Secrets } from '../../../../platform/secrets.js';
import { maskAuth } from './credentials.js';
import { diffTools, type PinnedTool } from './pinning.js';
import type { McpServerRow } from './repository.js';
import type { McpServer } from './schemas.js';

export function serverView(secrets: Pick<Secrets, 'decrypt'>, row: McpServerRow, full: boolean): McpServer {
  const pinned = row.pinned_tools ?? [];
  return {
    id: row.id,
    name: row.name,
    source: 'api',
    ...(full ? { url: row.url, auth: maskAuth(secrets, row.auth), tenantIds: row.tenant_ids } : {}),
    timeoutSeconds: row.timeout_seconds,
    editable: full,
    status: {
      state: row.status_state,
      tools: pinned.map((t) => t.name),
      checkedAt: row.checked_at ? row.checked_at.toISOString() : null,
      ...(full ? { error: row.status_error } : {}),
    },
    pinnedTools: pinned.map(toolView),
    ...(full ? { pendingChanges: row.pending_tools ? changesView(pinned, row.pending_tools) : null } : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function changesView(pinned: PinnedTool[], pending: PinnedTool[]) {
  const { added, changed, removed } = diffTools(pinned, pending);
  return { added: added.map(toolView), changed: changed.map(toolView), removed };
}

const toolView = (tool: PinnedTool) => ({ name: tool.name, sha256: tool.sha256, definition: { ...tool.definition } });
