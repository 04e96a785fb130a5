// Each server's tools: listed upstream, pinned, cached, and called. The pins and the
// status live in the database (every replica serves the same approved tools); the
// listing cache is per process, per (tenant, server), for GATEWAY_MCP_LIST_TTL_SECONDS.
// A failed or empty listing is never cached, and never changes what is pinned.
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { Database } from '../../../../platform/db/database.js';
import type { Secrets } from '../../../../platform/secrets.js';
import type { OutboundGuard } from '../../../../engines/types.js';
import type { UrlScope } from '../../outbound/url-guard.js';
import { ToolCallFailed, type CallOptions } from '../tool-source.js';
import { ClientCredentialsTokens } from './client-credentials.js';
import { decryptAuth } from './credentials.js';
import { guardedAgent, guardedFetch, type Fetch } from './guarded-fetch.js';
import { pinTool, sameTools, type PinnedTool } from './pinning.js';
import { mcpServerRepository, type McpServerRow, type McpServerStatus } from './repository.js';
import { UpstreamPool, type UpstreamTarget } from './upstream.js';

export interface CatalogDeps {
  db: Database;
  secrets: Pick<Secrets, 'decrypt'>;
  /** The node deny lists, per scope (LlmServices.outboundGuard). */
  outboundGuard(scope: UrlScope): OutboundGuard;
  listTtlMs: number;
}

// A listing is the server's own timeout at most, and never longer than this: a tools/list
// waits for it, and a server that needs longer to name its tools is not answering.
const LISTING_MAX_MS = 15_000;

export class McpCatalog {
  private readonly fetches: Record<UrlScope, Fetch>;
  private readonly agents: { close(): Promise<void> }[];
  private readonly tokens = new ClientCredentialsTokens();
  private readonly pool: UpstreamPool;
  /** `${tenantId}\0${serverId}` → until when its last good listing stands, and for which version of the server. */
  private readonly listed = new Map<string, { until: number; version: number }>();

  constructor(private readonly deps: CatalogDeps) {
    const platform = guardedAgent(deps.outboundGuard('platform'));
    const tenant = guardedAgent(deps.outboundGuard('tenant'));
    this.agents = [platform, tenant];
    this.fetches = {
      platform: guardedFetch(deps.outboundGuard('platform'), platform),
      tenant: guardedFetch(deps.outboundGuard('tenant'), tenant),
    };
    // An upstream's notifications/tools/list_changed: its next list goes upstream at once.
    this.pool = new UpstreamPool(this.tokens, (key) => this.listed.delete(key.split('\0').slice(0, 2).join('\0')));
  }

  /** The tools `row` serves to `tenantId`, listing upstream first unless a listing is still fresh. */
  async servedTools(tenantId: string, row: McpServerRow): Promise<PinnedTool[]> {
    const cached = this.listed.get(cacheKey(tenantId, row.id));
    if (cached && cached.until > Date.now() && cached.version === row.updated_at.getTime()) return row.pinned_tools ?? [];
    const refreshed = await this.refresh(tenantId, row);
    return refreshed?.pinned_tools ?? [];
  }

  /**
   * Lists `row`'s tools upstream now and records the outcome: the first good listing
   * is pinned; one that differs from the pins is kept as pending (status `changed`).
   * Returns the row as it now stands (undefined if it was deleted meanwhile).
   */
  async refresh(tenantId: string, row: McpServerRow, timeoutMs?: number): Promise<McpServerRow | undefined> {
    let listing: PinnedTool[] | undefined;
    let error: string | undefined;
    try {
      listing = (await this.listUpstream(tenantId, row, timeoutMs)).map(pinTool);
    } catch (failure) {
      error = describe(failure);
    }
    return this.deps.db.tx(async (q) => {
      const current = await mcpServerRepository.get(q, row.id, true);
      // Changed meanwhile: this listing was of the old settings, so it decides nothing.
      if (!current || current.updated_at.getTime() !== row.updated_at.getTime()) return current;
      const status = nextStatus(current, listing, error);
      if (status.state === 'ok' || status.state === 'changed')
        this.listed.set(cacheKey(tenantId, row.id), { until: Date.now() + this.deps.listTtlMs, version: row.updated_at.getTime() });
      return mcpServerRepository.setStatus(q, row.id, status);
    });
  }

  /** Pins `pending` (what the admin reviewed), or, with nothing pending, the upstream's listing now. */
  async approve(tenantId: string, row: McpServerRow): Promise<McpServerRow | undefined> {
    if (!row.pending_tools) {
      const refreshed = await this.refresh(tenantId, row);
      if (refreshed?.status_state !== 'changed') return refreshed;
      row = refreshed;
    }
    const pending = row.pending_tools!;
    return this.deps.db.tx(async (q) => {
      const current = await mcpServerRepository.get(q, row.id, true);
      if (!current || current.updated_at.getTime() !== row.updated_at.getTime()) return current;
      return mcpServerRepository.setStatus(q, row.id, { state: 'ok', error: null, pinned: pending, pending: null });
    });
  }

  /** Runs one tool on `row`'s upstream with its timeoutSeconds; never replayed (a call may have taken effect). */
  async call(
    tenantId: string,
    row: McpServerRow,
    name: string,
    args: Record<string, unknown>,
    options: CallOptions,
  ): Promise<CallToolResult> {
    const timeoutMs = row.timeout_seconds * 1000;
    const unreachable = () => new ToolCallFailed('unavailable', `The MCP server "${row.name}" could not be reached.`);
    let target: UpstreamTarget;
    let client: Awaited<ReturnType<UpstreamPool['client']>>;
    try {
      target = this.target(tenantId, row, timeoutMs);
      client = await this.pool.client(target);
    } catch (failure) {
      if (options.signal.aborted) throw new ToolCallFailed('cancelled', 'The call was cancelled.');
      throw isTimeout(failure) ? new ToolCallFailed('timeout', timedOut(row)) : unreachable();
    }
    try {
      return (await client.callTool(
        { name, arguments: args },
        {
          timeout: timeoutMs,
          signal: options.signal,
          ...(options.onProgress ? { onprogress: options.onProgress } : {}),
        },
      )) as CallToolResult;
    } catch (failure) {
      if (failure instanceof ProtocolError) throw new ToolCallFailed('error', failure.message, failure.code);
      // The connection may hold the abandoned request's stream open: start the next call afresh.
      this.pool.drop(target.key);
      if (options.signal.aborted) throw new ToolCallFailed('cancelled', 'The call was cancelled.');
      if (isTimeout(failure)) throw new ToolCallFailed('timeout', timedOut(row));
      throw unreachable();
    }
  }

  /**
   * One request that changes nothing upstream (a prompts or resources listing, a prompt,
   * a resource read) on `row`'s pooled connection: safe to repeat, so a dead connection
   * is re-established once. The upstream's JSON-RPC error passes as `error` with its code.
   */
  async read<T>(
    tenantId: string,
    row: McpServerRow,
    signal: AbortSignal,
    work: (client: Client, options: { timeout: number; signal: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    const timeoutMs = Math.min(row.timeout_seconds * 1000, LISTING_MAX_MS);
    const target = this.target(tenantId, row, timeoutMs);
    for (let attempt = 0; ; attempt++) {
      try {
        return await work(await this.pool.client(target), { timeout: timeoutMs, signal });
      } catch (failure) {
        if (failure instanceof ProtocolError) throw new ToolCallFailed('error', failure.message, failure.code);
        this.pool.drop(target.key);
        if (signal.aborted) throw new ToolCallFailed('cancelled', 'The request was cancelled.');
        if (isTimeout(failure)) throw new ToolCallFailed('timeout', timedOut(row));
        if (attempt > 0) throw new ToolCallFailed('unavailable', `The MCP server "${row.name}" could not be reached.`);
      }
    }
  }

  /** Forgets a server's listings and connections: it changed or went. */
  forget(serverId: string): void {
    for (const key of [...this.listed.keys()]) if (key.endsWith(`\0${serverId}`)) this.listed.delete(key);
    this.pool.dropMatching((key) => key.split('\0')[1] === serverId);
  }

  async close(): Promise<void> {
    await this.pool.close();
    await Promise.all(this.agents.map((agent) => agent.close().catch(() => {})));
  }

  /** Every page of the upstream's tools; a dead connection is re-established once (a listing is safe to repeat). */
  private async listUpstream(tenantId: string, row: McpServerRow, timeoutMs = Math.min(row.timeout_seconds * 1000, LISTING_MAX_MS)) {
    const target = this.target(tenantId, row, timeoutMs);
    for (let attempt = 0; ; attempt++) {
      try {
        const client = await this.pool.client(target);
        const { tools } = await client.listTools(undefined, { timeout: timeoutMs, cacheMode: 'bypass' });
        return tools;
      } catch (failure) {
        this.pool.drop(target.key);
        if (attempt > 0 || isTimeout(failure) || failure instanceof ProtocolError) throw failure;
      }
    }
  }

  private target(tenantId: string, row: McpServerRow, timeoutMs: number): UpstreamTarget {
    return {
      key: `${tenantId}\0${row.id}\0${row.updated_at.getTime()}`,
      server: `${row.id}\0${row.updated_at.getTime()}`,
      url: row.url,
      auth: decryptAuth(this.deps.secrets, row.auth),
      fetch: this.fetches[row.url_scope],
      timeoutMs,
    };
  }
}

function nextStatus(current: McpServerRow, listing: PinnedTool[] | undefined, error: string | undefined): McpServerStatus {
  const keep = { pinned: current.pinned_tools, pending: current.pending_tools };
  if (!listing) return { state: 'error', error: error ?? 'the listing failed', ...keep };
  // Servers list nothing while they warm up: never taken for the truth, never pinned.
  if (listing.length === 0) return { state: 'empty', error: null, ...keep };
  if (!current.pinned_tools) return { state: 'ok', error: null, pinned: listing, pending: null };
  if (sameTools(current.pinned_tools, listing)) return { state: 'ok', error: null, pinned: current.pinned_tools, pending: null };
  return { state: 'changed', error: null, pinned: current.pinned_tools, pending: listing };
}

const cacheKey = (tenantId: string, serverId: string) => `${tenantId}\0${serverId}`;

const timedOut = (row: McpServerRow) => `The MCP server "${row.name}" did not answer within ${row.timeout_seconds} s.`;

function isTimeout(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;
}

/** The failure as an admin reads it in the server's status (tenant admins of their own servers, platform admins). */
function describe(error: unknown): string {
  if (isTimeout(error)) return 'the server did not answer in time';
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${message}${cause}`.slice(0, 500);
}
