// The registry's side of the seam (../tool-source.ts): which pinned tools a caller may
// see, and running one. Until per-key grants exist, tenant admins (platform admins
// included) reach every tool of the servers their tenant sees, and API keys and members
// reach none (a tool outside the grant is invisible, and a call to it reaches no upstream).
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Database } from '../../../../platform/db/database.js';
import { isTenantAdmin, type Principal } from '../../../../platform/identity.js';
import { serves } from '../../router/node-runtime.js';
import { ToolCallFailed, type CallOptions, type GrantedTool, type ToolSource } from '../tool-source.js';
import type { McpCatalog } from './catalog.js';
import { mcpServerRepository, type McpServerRow } from './repository.js';

export interface RegistryToolSourceDeps {
  db: Database;
  catalog: Pick<McpCatalog, 'servedTools' | 'call'>;
}

export class RegistryToolSource implements ToolSource {
  constructor(private readonly deps: RegistryToolSourceDeps) {}

  async list(principal: Principal, server?: string): Promise<GrantedTool[]> {
    if (!reachesEveryTool(principal)) return [];
    const rows = (await mcpServerRepository.listServing(this.deps.db, principal.tenantId)).filter(
      (row) => server === undefined || row.name === server,
    );
    const perServer = await Promise.all(
      rows.map(async (row) =>
        (await this.deps.catalog.servedTools(principal.tenantId, row)).map(
          (tool): GrantedTool => ({ serverId: row.id, server: row.name, name: tool.name, definition: tool.definition }),
        ),
      ),
    );
    return perServer.flat();
  }

  /**
   * Checked again here, not taken from `tool`: the server must still serve the caller's
   * tenant, the tool must still be pinned and granted. Anything else is the protocol's
   * unknown-tool error (-32602) and reaches no upstream.
   */
  async call(principal: Principal, tool: GrantedTool, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const row = await mcpServerRepository.get(this.deps.db, tool.serverId);
    if (!row || !serves(row.tenant_ids, principal.tenantId) || !reachesEveryTool(principal) || !isPinned(row, tool.name))
      throw new ToolCallFailed('error', `Unknown tool: ${tool.server}/${tool.name}`, -32602);
    if (options.signal.aborted) throw new ToolCallFailed('cancelled', 'The call was cancelled.');
    return this.deps.catalog.call(principal.tenantId, row, tool.name, args, options);
  }
}

function reachesEveryTool(principal: Principal): boolean {
  return isTenantAdmin(principal);
}

function isPinned(row: McpServerRow, name: string): boolean {
  return (row.pinned_tools ?? []).some((t) => t.name === name);
}
