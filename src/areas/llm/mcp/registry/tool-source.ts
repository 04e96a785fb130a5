// The registry's side of the seam (../tool-source.ts): which pinned tools a caller may
// see, and running one. Tenant admins (platform admins included) reach every tool of the
// servers their tenant sees; an API key what its grant names (`server/*`, `server/tool`,
// carried in its Principal); a member what the tenant's `mcp.memberAllow` names. A tool
// outside the grant is invisible, and a call to it reaches no upstream.
import type { CallToolResult, GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/server';
import type { Database } from '../../../../platform/db/database.js';
import { isTenantAdmin, type Principal } from '../../../../platform/identity.js';
import { serves } from '../../router/node-runtime.js';
import { grantsTool } from '../../../../platform/mcp-grants.js';
import {
  ToolCallFailed,
  type CallOptions,
  type GrantedPrompt,
  type GrantedTool,
  type ReachableServer,
  type ToolSource,
} from '../tool-source.js';
import type { McpCatalog } from './catalog.js';
import { getPrompt, listPrompts, listResources, listResourceTemplates, readResource } from './content-source.js';
import { mcpServerRepository, type McpServerRow } from './repository.js';
import type { StdioServers } from './stdio-servers.js';

export interface RegistryToolSourceDeps {
  db: Database;
  catalog: Pick<McpCatalog, 'servedTools' | 'call' | 'read'>;
  /** The tenant's grant for its members (cached tenant settings: no query per request). */
  memberAllow: (tenantId: string) => Promise<readonly string[]>;
  /** The operator's stdio servers (GATEWAY_MCP_STDIO_SERVERS), reached through the same grants. */
  stdio?: StdioServers;
}

/** Who may reach which tool: every tool, or the ones a grant names. */
export type Reach = 'every' | readonly string[];

export class RegistryToolSource implements ToolSource {
  constructor(private readonly deps: RegistryToolSourceDeps) {}

  async servers(principal: Principal): Promise<ReachableServer[]> {
    const reach = await this.reachOf(principal);
    const registered = (await this.reachableRows(principal, undefined, reach)).map((row) => ({
      name: row.name,
      ...(row.tenant_ids.length > 0 ? { url: row.url } : {}),
    }));
    // The operator's stdio servers have no URL to name them by, only their name.
    const stdio = (this.deps.stdio?.serving(principal.tenantId) ?? [])
      .filter((s) => reach === 'every' || reach.some((p) => p.startsWith(`${s.name}/`)))
      .map((s) => ({ name: s.name }));
    return [...registered, ...stdio];
  }

  async list(principal: Principal, server?: string): Promise<GrantedTool[]> {
    const reach = await this.reachOf(principal);
    const rows = await this.reachableRows(principal, server, reach);
    const perServer = await Promise.all(
      rows.map(async (row) =>
        (await this.deps.catalog.servedTools(principal.tenantId, row))
          .filter((tool) => reaches(reach, row.name, tool.name))
          .map((tool): GrantedTool => ({ serverId: row.id, server: row.name, name: tool.name, definition: tool.definition })),
      ),
    );
    return [...perServer.flat(), ...(await this.stdioTools(principal.tenantId, reach, server))];
  }

  /** The operator's stdio servers' tools (not pinned: stdio-servers.ts says why). */
  private async stdioTools(tenantId: string, reach: Reach, server: string | undefined): Promise<GrantedTool[]> {
    const stdio = this.deps.stdio;
    if (!stdio) return [];
    const servers = stdio
      .serving(tenantId)
      .filter((s) => (server === undefined || s.name === server) && (reach === 'every' || reach.some((p) => p.startsWith(`${s.name}/`))));
    const perServer = await Promise.all(
      servers.map(async (s) =>
        (await stdio.tools(s))
          .filter((tool) => reaches(reach, s.name, tool.name))
          .map((tool): GrantedTool => ({ serverId: s.id, server: s.name, name: tool.name, definition: tool })),
      ),
    );
    return perServer.flat();
  }

  /** The servers the caller's tenant sees of which the caller reaches a tool (by grant, not listed upstream). */
  private async reachableRows(principal: Principal, server?: string, known?: Reach): Promise<McpServerRow[]> {
    const reach = known ?? (await this.reachOf(principal));
    if (reach !== 'every' && reach.length === 0) return [];
    return (await mcpServerRepository.listServing(this.deps.db, principal.tenantId)).filter(
      // A server none of whose tools is granted is not even listed upstream.
      (row) => (server === undefined || row.name === server) && (reach === 'every' || reach.some((p) => p.startsWith(`${row.name}/`))),
    );
  }

  /**
   * Checked again here, not taken from `tool`: the server must still serve the caller's
   * tenant, the tool must still be pinned and granted. Anything else is the protocol's
   * unknown-tool error (-32602) and reaches no upstream.
   */
  async call(principal: Principal, tool: GrantedTool, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const stdio = this.deps.stdio?.byId(tool.serverId);
    if (stdio) {
      const allowed = serves(stdio.tenantIds, principal.tenantId) && reaches(await this.reachOf(principal), stdio.name, tool.name);
      if (!allowed || !(await this.deps.stdio!.tools(stdio)).some((t) => t.name === tool.name))
        throw new ToolCallFailed('denied', `Unknown tool: ${tool.server}/${tool.name}`, -32602);
      if (options.signal.aborted) throw new ToolCallFailed('cancelled', 'The call was cancelled.');
      return this.deps.stdio!.call(stdio, tool.name, args, options);
    }
    const row = await mcpServerRepository.get(this.deps.db, tool.serverId);
    const granted = row !== undefined && reaches(await this.reachOf(principal), row.name, tool.name);
    if (!row || !serves(row.tenant_ids, principal.tenantId) || !granted || !isPinned(row, tool.name))
      throw new ToolCallFailed('denied', `Unknown tool: ${tool.server}/${tool.name}`, -32602);
    if (options.signal.aborted) throw new ToolCallFailed('cancelled', 'The call was cancelled.');
    return this.deps.catalog.call(principal.tenantId, row, tool.name, args, options);
  }

  // Prompts and resources (content-source.ts), through the same reach.
  listPrompts = async (principal: Principal, server?: string) => listPrompts(this.deps, await this.reachOf(principal), principal, server);
  getPrompt = async (
    principal: Principal,
    prompt: GrantedPrompt,
    args: Record<string, string>,
    signal: AbortSignal,
  ): Promise<GetPromptResult> => getPrompt(this.deps, await this.reachOf(principal), principal, prompt, args, signal);
  listResources = async (principal: Principal, server?: string) =>
    listResources(this.deps, await this.reachOf(principal), principal, server);
  listResourceTemplates = async (principal: Principal, server?: string) =>
    listResourceTemplates(this.deps, await this.reachOf(principal), principal, server);
  readResource = async (principal: Principal, server: string, uri: string, signal: AbortSignal): Promise<ReadResourceResult> =>
    readResource(this.deps, await this.reachOf(principal), principal, server, uri, signal);

  /** The one place that says what a caller reaches; tools, prompts and resources all ask it. */
  private async reachOf(principal: Principal): Promise<Reach> {
    if (isTenantAdmin(principal)) return 'every';
    if (principal.kind === 'apiKey') return principal.mcpAllow ?? [];
    return this.deps.memberAllow(principal.tenantId);
  }
}

export function reaches(reach: Reach, server: string, tool: string): boolean {
  return reach === 'every' || grantsTool(reach, server, tool);
}

function isPinned(row: McpServerRow, name: string): boolean {
  return (row.pinned_tools ?? []).some((t) => t.name === name);
}
