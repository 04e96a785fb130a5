// MCP servers the operator's configuration runs as child processes (GATEWAY_MCP_STDIO_SERVERS,
// platform/mcp-stdio-config.ts), through the SDK's StdioClientTransport. Never from the
// API: a command is the operator's to name. Each starts when first used, is started again
// on the next use after it died, and is killed when the gateway closes. The child gets the
// environment its entry names, plus PATH and the SDK's few harmless defaults (HOME, USER,
// LOGNAME, SHELL, TERM): none of the gateway's own variables, so none of its secrets. Its
// stderr is discarded (it would interleave with the gateway's JSON log lines).
// Shown read-only in GET /mcp/servers like GATEWAY_NODES entries; their tools are not
// pinned (the operator chose the program; there is no admin review to hold them for),
// and are listed again after GATEWAY_MCP_LIST_TTL_SECONDS. Tools only: prompts and
// resources of stdio servers are not served yet.
import { createHash } from 'node:crypto';
import { Client, ProtocolError, SdkError, SdkErrorCode, type CallToolResult, type Tool } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { StdioServerConfig } from '../../../../platform/mcp-stdio-config.js';
import { serves } from '../../router/node-runtime.js';
import { ToolCallFailed, type CallOptions } from '../tool-source.js';
import { connectClient } from './connect-client.js';
import { pinTool } from './pinning.js';
import type { McpServer } from './schemas.js';

const CLIENT_INFO = { name: 'gateway-mcp', version: '1.0.0' };
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export interface StdioServer extends StdioServerConfig {
  /** A stable `mcps_…` id derived from the name: the same on every replica and restart. */
  id: string;
}

interface Listing {
  at: Date;
  tools: Tool[] | undefined;
  error: string | null;
}

export class StdioServers {
  readonly servers: StdioServer[];
  private readonly clients = new Map<string, Promise<Client>>();
  private readonly listings = new Map<string, Listing & { until: number }>();
  private readonly startedAt = new Date();
  private closed = false;

  constructor(
    configs: StdioServerConfig[],
    private readonly listTtlMs: number,
  ) {
    this.servers = configs.map((config) => ({ ...config, id: stableId(config.name) }));
  }

  serving(tenantId: string): StdioServer[] {
    return this.servers.filter((s) => serves(s.tenantIds, tenantId));
  }

  byId(id: string): StdioServer | undefined {
    return this.servers.find((s) => s.id === id);
  }

  /** The server's tools, listed again once the last good listing is older than the TTL; none when it cannot be listed. */
  async tools(server: StdioServer): Promise<Tool[]> {
    const cached = this.listings.get(server.name);
    if (cached?.tools && cached.until > Date.now()) return cached.tools;
    const at = new Date();
    try {
      const client = await this.client(server);
      const { tools } = await client.listTools(undefined, { timeout: Math.min(server.timeoutSeconds * 1000, 15_000), cacheMode: 'bypass' });
      // An empty listing is never taken for the truth.
      this.listings.set(server.name, { at, tools: tools.length > 0 ? tools : undefined, error: null, until: Date.now() + this.listTtlMs });
      return tools;
    } catch (error) {
      this.listings.set(server.name, {
        at,
        tools: undefined,
        error: error instanceof Error ? error.message.slice(0, 500) : 'failed',
        until: 0,
      });
      return [];
    }
  }

  /** Runs one tool; never replayed. The process having died is `unavailable` (the next use starts it again). */
  async call(server: StdioServer, name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const timedOut = () =>
      new ToolCallFailed('timeout', `The MCP server "${server.name}" did not answer within ${server.timeoutSeconds} s.`);
    try {
      const client = await this.client(server);
      return (await client.callTool(
        { name, arguments: args },
        {
          timeout: server.timeoutSeconds * 1000,
          signal: options.signal,
          ...(options.onProgress ? { onprogress: options.onProgress } : {}),
        },
      )) as CallToolResult;
    } catch (failure) {
      if (failure instanceof ProtocolError) throw new ToolCallFailed('error', failure.message, failure.code);
      if (options.signal.aborted) throw new ToolCallFailed('cancelled', 'The call was cancelled.');
      if (failure instanceof SdkError && failure.code === SdkErrorCode.RequestTimeout) throw timedOut();
      throw new ToolCallFailed('unavailable', `The MCP server "${server.name}" could not be reached.`);
    }
  }

  /** As GET /mcp/servers shows it: read-only to everyone; where it runs is not shown (the command may carry secrets in its args). */
  view(server: StdioServer, platformAdmin: boolean): McpServer {
    const listing = this.listings.get(server.name);
    const tools = (listing?.tools ?? []).map(pinTool);
    const state = !listing ? 'unknown' : listing.tools ? 'ok' : listing.error ? 'error' : 'empty';
    return {
      id: server.id,
      name: server.name,
      source: 'config',
      ...(platformAdmin ? { tenantIds: server.tenantIds } : {}),
      timeoutSeconds: server.timeoutSeconds,
      editable: false,
      status: {
        state,
        tools: tools.map((t) => t.name),
        checkedAt: listing ? listing.at.toISOString() : null,
        ...(platformAdmin ? { error: listing?.error ?? null } : {}),
      },
      pinnedTools: tools.map((t) => ({ name: t.name, sha256: t.sha256, definition: { ...t.definition } })),
      createdAt: this.startedAt.toISOString(),
      updatedAt: this.startedAt.toISOString(),
    };
  }

  /** Kills every child. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(all.map(async (c) => (await c.catch(() => undefined))?.close().catch(() => {})));
  }

  /** The running child's client, starting it (again) when there is none. */
  private client(server: StdioServer): Promise<Client> {
    if (this.closed) return Promise.reject(new Error('the gateway is closing'));
    const running = this.clients.get(server.name);
    if (running) return running;
    const entry: Promise<Client> = this.start(server, () => {
      // The child exited: forgotten, so the next use starts it again.
      if (this.clients.get(server.name) === entry) this.clients.delete(server.name);
    });
    this.clients.set(server.name, entry);
    entry.catch(() => {
      if (this.clients.get(server.name) === entry) this.clients.delete(server.name);
    });
    return entry;
  }

  private async start(server: StdioServer, onExit: () => void): Promise<Client> {
    const transport = new StdioClientTransport({ command: server.command, args: server.args, env: { ...server.env }, stderr: 'ignore' });
    const client = new Client(CLIENT_INFO);
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      this.listings.delete(server.name);
    });
    return connectClient(client, transport, server.timeoutSeconds * 1000, onExit);
  }
}

/** `mcps_` and 26 Crockford base32 characters of a hash of the name: a well-formed id that no stored server can have by chance. */
function stableId(name: string): string {
  const digest = createHash('sha256').update(`stdio\0${name}`).digest();
  let id = '';
  for (let i = 0; i < 26; i++) id += CROCKFORD[digest[i]! & 31];
  return `mcps_${id}`;
}
