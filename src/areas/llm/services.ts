// The llm area's long-lived parts, built once per process by the composition root:
// the node registry and its health loop, the router over it, the usage recorder.
import type { LlmObserver } from './observer.js';
import type { CacheStats } from '../../platform/ttl-cache.js';
import type { Config, LlmConfig } from '../../platform/config.js';
import type { LocalEngineOptions } from '../../engines/local/adapter.js';
import type { BlockList } from 'node:net';
import type { Database } from '../../platform/db/database.js';
import type { InvalidationBus } from '../../platform/coordination/invalidation-bus.js';
import type { Secrets } from '../../platform/secrets.js';
import { createEngine } from '../../engines/index.js';
import type { Engine, OutboundGuard } from '../../engines/types.js';
import { UsageRecorder } from './usage/recorder.js';
import { OpenCalls } from './calls/open-calls.js';
import { NodeRegistry, type LlmLog } from './router/registry.js';
import { Router } from './router/router.js';
import { TenantSettingsCache } from './router/tenant-settings.js';
import { loadLlmSettings } from './settings/service.js';
import type { NodeDefinition } from './router/node-runtime.js';
import type { ModelRouter } from './router/types.js';
import { computeNodeRepository } from './nodes/repository.js';
import { definitionFromRow, staticNodeDefinitions } from './nodes/definitions.js';
import { RunExecutor } from './runs/executor.js';
import { endAbandonedRuns, sweepAbandonedRuns } from './runs/recovery.js';
import { checkOutboundUrl, denyListFrom, guardedLookup, type UrlScope } from './outbound/url-guard.js';
import type { LimitStore } from '../../platform/rate-limits/store.js';
import type { Limits } from '../../platform/rate-limits/limits.js';
import { RateLimiter } from './rate-limits/limiter.js';
import { usageRepository } from './usage/repository.js';
import { McpCatalog } from './mcp/registry/catalog.js';
import { StdioServers } from './mcp/registry/stdio-servers.js';
import { RegistryToolSource } from './mcp/registry/tool-source.js';
import type { ToolSource } from './mcp/tool-source.js';
import { ToolCallLimiter } from './rate-limits/tool-calls.js';
import { DatabaseMcpCallAudit, type McpCallAudit } from './mcp/calls/audit.js';
import { ObservedMcpCallAudit } from './mcp/calls/observed.js';

export interface LlmServices {
  /** Models → nodes; what the chat and pull handlers call (see router/types.ts). */
  router: ModelRouter;
  /** Per-request usage, written in batches off the request path. */
  usage: UsageRecorder;
  /** Model calls in flight (chat, streams, pulls): stopped cleanly when the server shuts down. */
  calls: OpenCalls;
  /** The nodes and their health, for the nodes API; reloads itself on `computeNode` invalidations. */
  nodes: NodeRegistry;
  /** Generates runs (persisted chat turns, thread runs) and writes their outcomes; see runs/executor.ts. */
  runs: RunExecutor;
  /**
   * Ends runs left open by a process that died (embedded: every open run, at start) and,
   * on PostgreSQL, keeps doing so periodically. Call once before serving.
   */
  recoverRuns(): Promise<void>;
  /** Rate limits and token budgets of keys and tenants (rate-limits/), applied to every route that reaches a model. */
  limiter: RateLimiter;
  /** A tenant's limits from the cached tenant settings (null: none); no query once cached. */
  tenantLimits(tenantId: string): Limits | null | Promise<Limits | null>;
  /** Checks an outbound URL (node or model download) against the scheme rules and the deny list; throws UrlRefused. */
  /** `tenant`: a URL a tenant admin gave, also checked against the tenant deny list (private ranges). */
  checkUrl(url: string, scope?: UrlScope): Promise<URL>;
  /** The same rule as a guard for outbound requests: URL checks and connection-time lookups. */
  outboundGuard(scope: UrlScope): OutboundGuard;
  /** MCP servers' tools: listed, pinned, cached and called (mcp/registry/catalog.ts). */
  mcpCatalog: McpCatalog;
  /** The operator's stdio MCP servers (GATEWAY_MCP_STDIO_SERVERS), children of this process. */
  mcpStdio: StdioServers;
  /** Sends node health changes and background failures to `log` (buildApp points it at the server's logger; silent until then, e.g. in CLI commands). */
  setLog(log: LlmLog): void;
  /** Stops the health loop, closes every engine (and the local child), flushes usage. */
  close(): Promise<void>;
  /** Reports engine calls and usage to `observer` from now on (/metrics). */
  observe(observer: LlmObserver): void;
  /** Hits and misses of the tenants' llm settings cache. */
  settingsCacheStats: CacheStats;
  /**
   * The MCP tools each caller is granted, and their calls (mcp/tool-source.ts), as the
   * MCP endpoint reads them at every request. Replaceable: tests put a fake one here.
   */
  mcpTools: ToolSource;
  /**
   * MCP tool calls per minute of keys and tenants (rate-limits/tool-calls.ts): the endpoint
   * checks each tools/call with it; another path that runs tools wraps its ToolSource in
   * `limitToolCalls` (mcp/limited-tool-source.ts).
   */
  mcpCallLimits: ToolCallLimiter;
  /** Where every MCP tool call's record goes (mcp/calls/), also counted in /metrics and traced (mcp/calls/observed.ts). */
  mcpAudit: McpCallAudit;
}

export type { LlmLog };

export interface LlmDeps {
  config: Config;
  db: Database;
  secrets: Secrets;
  bus: InvalidationBus;
  /** Where rate-limit state lives: in-process, or shared on Redis (platform/coordination). */
  limits: LimitStore;
}

/** The local engine as configured; the server adds its URL guards and log, the CLI uses it as is. */
export function localEngineOptions(llm: LlmConfig): LocalEngineOptions {
  return {
    modelsDir: llm.modelsDir,
    threads: llm.localThreads,
    contextSize: llm.localContextSize,
    timeoutMs: llm.upstreamTimeoutMs,
    pullMaxBytes: llm.pullMaxBytes,
  };
}

// A probe is a model list: it should answer in well under this on any live node.
const MAX_PROBE_TIMEOUT_MS = 5000;

export function createLlmServices({ config, db, secrets, bus, limits }: LlmDeps): LlmServices {
  const llm = config.llm;
  let sink: LlmLog = () => {};
  const log: LlmLog = (level, message) => sink(level, message);
  // One deny list per scope, for URL checks and for every connection's name resolution.
  const denyLists: Record<UrlScope, BlockList> = {
    platform: denyListFrom(llm.nodeDenyCidrs),
    tenant: denyListFrom([...llm.nodeDenyCidrs, ...llm.tenantNodeDenyCidrs]),
  };
  const checkUrl = (url: string, scope: UrlScope = 'platform') => checkOutboundUrl(url, denyLists[scope]);
  const guardOf = (scope: UrlScope): OutboundGuard => ({
    checkUrl: async (url) => void (await checkUrl(url.href, scope)),
    lookup: guardedLookup(denyLists[scope]),
  });
  const guards: Record<UrlScope, OutboundGuard> = { platform: guardOf('platform'), tenant: guardOf('tenant') };

  const engineFor = (node: NodeDefinition): Engine => {
    if (node.engine === 'local') {
      return createEngine({
        kind: 'local',
        options: {
          ...localEngineOptions(llm),
          // Model downloads (and each redirect hop) obey the same deny list as node URLs;
          // a pull a tenant admin asked for brings the tenant's own guard.
          ...guards.platform,
          onLog: (level, message) => log(level, `local engine: ${message}`),
        },
      });
    }
    // Every connection is held to the deny list of whoever gave the URL.
    return createEngine({
      kind: node.engine,
      options: {
        url: node.url!,
        ...(node.apiKey ? { apiKey: node.apiKey } : {}),
        timeoutMs: llm.upstreamTimeoutMs,
        lookup: guards[node.urlScope].lookup,
      },
    });
  };

  const nodes = new NodeRegistry({
    staticNodes: staticNodeDefinitions(llm, new Date()),
    loadApiNodes: async () =>
      (await computeNodeRepository.listAll(db)).map((row) => definitionFromRow(row, secrets, (message) => log('error', message))),
    createEngine: engineFor,
    // Before each probe, in case the name now resolves elsewhere: a clear reason in the node's health.
    checkUrl: async (node) => {
      await checkUrl(node.url!, node.urlScope);
    },
    bus,
    healthIntervalMs: llm.healthIntervalSeconds * 1000,
    probeTimeoutMs: Math.min(llm.upstreamTimeoutMs, MAX_PROBE_TIMEOUT_MS),
    failuresBeforeCooldown: llm.failuresBeforeCooldown,
    cooldownMs: llm.cooldownSeconds * 1000,
    log,
  });
  const tenants = new TenantSettingsCache((tenantId) => loadLlmSettings({ db }, tenantId), bus);
  const router = new Router(nodes, tenants, { maxAttempts: llm.maxAttempts, healthIntervalSeconds: llm.healthIntervalSeconds });
  const usage = new UsageRecorder(db, llm.usageFlushSeconds, (error) => log('error', error.message));
  const runs = new RunExecutor({ db, router, usage, bus, leaseMs: config.jobLeaseSeconds * 1000 });
  const limiter = new RateLimiter({
    store: limits,
    // A budget's first use in a period: what this process has queued is written first, so the sum includes it.
    usedTokens: async (tenantId, keyId, from, to) => {
      await usage.flush();
      return usageRepository.tokensUsed(db, tenantId, keyId, from, to);
    },
  });
  usage.onRecord = (entry) => limiter.recorded(entry.correlationId, entry.promptTokens + entry.completionTokens);
  const tenantLimits = (tenantId: string) => tenants.limits(tenantId);
  const mcpCatalog = new McpCatalog({
    db,
    secrets,
    outboundGuard: (scope) => guards[scope],
    listTtlMs: llm.mcpListTtlSeconds * 1000,
  });
  const mcpCallLimits = new ToolCallLimiter({ store: limits, tenantLimits });
  const mcpAudit = new ObservedMcpCallAudit(new DatabaseMcpCallAudit(db));
  const mcpStdio = new StdioServers(llm.mcpStdioServers, llm.mcpListTtlSeconds * 1000);
  let stopSweep = () => {};

  return {
    router,
    usage,
    calls: new OpenCalls(),
    nodes,
    runs,
    limiter,
    tenantLimits,
    async recoverRuns() {
      const ended = await endAbandonedRuns(db, db.kind === 'embedded');
      if (ended.length > 0) log('warn', `ended ${ended.length} run(s) left open by a previous process`);
      if (db.kind === 'postgres')
        // Every third of a lease: a run whose replica died ends within about 1⅓ leases of its last renewal.
        stopSweep = sweepAbandonedRuns(db, runs.leaseMs / 3, (error) => log('error', `run recovery: ${error.message}`));
    },
    checkUrl,
    outboundGuard: (scope) => guards[scope],
    mcpCatalog,
    mcpStdio,
    observe(observer) {
      router.observer = observer;
      usage.observer = observer;
      limiter.onRejected = (scope, limit) => observer.rateLimitRejected(scope, limit);
      mcpCallLimits.onRejected = (scope, limit) => observer.rateLimitRejected(scope, limit);
      mcpAudit.observer = observer;
    },
    settingsCacheStats: tenants.cacheStats,
    // The registry's: the tools of the servers each caller's tenant sees, as granted and pinned.
    mcpTools: new RegistryToolSource({
      db,
      catalog: mcpCatalog,
      memberAllow: async (tenantId) => (await tenants.get(tenantId)).mcp.memberAllow,
      stdio: mcpStdio,
    }),
    mcpCallLimits,
    mcpAudit,
    setLog(next) {
      sink = next;
    },
    async close() {
      stopSweep();
      // Runs call engines and record usage: they end before either goes.
      await runs.close(config.http.shutdownGraceMs);
      tenants.close();
      limiter.close();
      await nodes.close();
      await mcpCatalog.close();
      await mcpStdio.close();
      await usage.close();
    },
  };
}
