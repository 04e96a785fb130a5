// The seam between the MCP registry (registry/: the tenant's upstream servers, their
// pinned tools, the connections to them) and the MCP endpoint (endpoint/: what MCP
// clients connect to). The endpoint asks a ToolSource which tools a caller may see and
// has it run a call; it never reaches an upstream, a credential or a grant itself.
import type {
  CallToolResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
  Tool,
} from '@modelcontextprotocol/server';
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

/** One upstream prompt a caller is granted (`server/*`, or `server/{prompt}` as for a tool). Not pinned: prompts are listed live. */
export interface GrantedPrompt {
  serverId: string;
  server: string;
  /** The prompt's name on its upstream server. */
  name: string;
  definition: Prompt;
}

/** A resource or resource template of one server the caller is granted (only `server/*` grants them). URIs are the upstream's own. */
export interface GrantedResource<T = Resource> {
  serverId: string;
  server: string;
  definition: T;
}

/**
 * Prompts and resources, through the same grants as tools (../registry/tool-source.ts
 * says how). Optional on a ToolSource, so a source serving tools alone (a test's fake)
 * need not answer them: the endpoint then serves none.
 */
export interface ContentSource {
  /** Every prompt the caller is granted, of one server (by slug) or of all. */
  listPrompts(principal: Principal, server?: string): Promise<GrantedPrompt[]>;
  /** Gets one granted prompt from its upstream; an unknown or ungranted one is `ToolCallFailed('denied')`. */
  getPrompt(principal: Principal, prompt: GrantedPrompt, args: Record<string, string>, signal: AbortSignal): Promise<GetPromptResult>;
  listResources(principal: Principal, server?: string): Promise<GrantedResource[]>;
  listResourceTemplates(principal: Principal, server?: string): Promise<GrantedResource<ResourceTemplateType>[]>;
  /** Reads `uri` from the server named `server` (granted as a whole); its own not-found error passes through. */
  readResource(principal: Principal, server: string, uri: string, signal: AbortSignal): Promise<ReadResourceResult>;
}

export interface ToolSource extends Partial<ContentSource> {
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
