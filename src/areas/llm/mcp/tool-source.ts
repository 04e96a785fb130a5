// The seam between the MCP registry (registry/: the tenant's upstream servers, their
// pinned tools, the connections to them) and the MCP endpoint (endpoint/: what MCP
// clients connect to). The endpoint asks a ToolSource which tools a caller may see and
// has it run a call; it never reaches an upstream, a credential or a grant itself.
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { Principal } from '../../../platform/identity.js';

/** One upstream tool a caller is granted, as pinned when the server was last approved. */
export interface GrantedTool {
  serverId: string;
  /** The server's slug ([a-z0-9-]{1,32}), unique per tenant: the prefix of its tools. */
  server: string;
  /** The tool's name on its upstream server. */
  name: string;
  /** The pinned definition (name, description, inputSchema, outputSchema, annotations), as approved. */
  definition: Tool;
}

export interface CallOptions {
  signal: AbortSignal;
  /** Progress from upstream, passed to the client as it comes. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/** A server a caller reaches at least one tool of (its grant names it), without listing it upstream. */
export interface ReachableServer {
  /** Its slug: what a Responses API `server_label` names. */
  name: string;
  /** Its URL, only for a server registered for named tenants: a shared server's URL is the platform's, never shown to a tenant. */
  url?: string;
}

export interface ToolSource {
  /** The servers the caller reaches at least one tool of (the Responses API resolves `server_label`/`server_url` with it). */
  servers(principal: Principal): Promise<ReachableServer[]>;
  /** Every tool the caller is granted, of one server (by slug) or of all. Never another tenant's. */
  list(principal: Principal, server?: string): Promise<GrantedTool[]>;
  /** Runs one granted tool on its upstream with the server's own credential; throws on timeout or transport failure. */
  call(principal: Principal, tool: GrantedTool, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult>;
}

/**
 * What `ToolSource.call` throws when a call reached no result (a tool's own failure is a
 * result with `isError: true` instead). `timeout`: the server's timeoutSeconds passed;
 * `cancelled`: the caller's signal aborted it; `unavailable`: the upstream could not be
 * reached or refused the gateway (connection, deny list, credential); `error`: the
 * upstream answered the call with a JSON-RPC error (`code` is its code); `denied`: the
 * registry refused it before any upstream (unknown, ungranted or unpinned tool; code
 * -32602). The message is
 * safe to show the caller: it names no internal address or credential.
 */
export class ToolCallFailed extends Error {
  constructor(
    readonly reason: 'timeout' | 'cancelled' | 'unavailable' | 'error' | 'denied',
    message: string,
    readonly code?: number,
  ) {
    super(message);
    this.name = 'ToolCallFailed';
  }
}
