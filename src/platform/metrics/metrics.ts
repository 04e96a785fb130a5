// What an operator scrapes from GET /metrics (Prometheus text format, prom-client):
// one Registry of our own per running gateway (never prom-client's global one, so
// two gateways in one process, as in the tests, do not mix their figures).
//
// Collection runs only when /metrics is served (GATEWAY_METRICS_PORT or
// GATEWAY_METRICS_TOKEN): otherwise nothing here is built and the request path pays
// nothing. When it runs, the request path stays cheap (the budget is ~10 µs per
// chat request, measured by `npm run bench:llm`): label children are resolved once
// per route, status, node, model or tenant and kept in maps, so a request does an
// increment and a bucket search, with no label strings built. Counters that other
// code keeps anyway (cache hits and misses) and the ingestion queue's depth are
// read at scrape time instead of being pushed per request.
//
// Names follow Prometheus conventions: `gateway_` prefix, base units (seconds),
// labels of low cardinality only (route pattern, not URL; node id, model and
// tenant id; never key or user ids).
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { FastCounter, FastHistogram, type CounterSeries, type HistogramSeries } from './series.js';
import { inCluster, joinCluster, scrapeCluster } from './cluster.js';

/** Request latency, engine latency, time to first token: 5 ms to 2 minutes. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** The gateway's own time per chat request: 50 µs to 250 ms. */
const OVERHEAD_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];
/** MCP tool calls: 5 ms to 5 minutes (a server's timeoutSeconds may be long). */
const MCP_CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/**
 * Distinct (tenant, server, tool) label sets the MCP call metrics keep per process. Tool
 * names come from upstream servers (pinned ones only, but a tenant may register many):
 * past this, a tenant's further tools are counted under server and tool `_other`.
 */
export const MCP_TOOL_SERIES_LIMIT = 1000;
/** Labels of a call that reached no listed tool (denied): its names may be the client's text. */
const MCP_UNNAMED = '_unknown';
const MCP_OVERFLOW = '_other';

/** Event-loop lag is sampled at this resolution, in ms (prom-client's default 10 ms doubles the timer wake-ups for little). */
const EVENT_LOOP_PRECISION_MS = 20;

/** Hits and misses a cache counts as it serves (read at scrape time). */
export interface CacheStats {
  hits: number;
  misses: number;
}

/** A compute node as the engine metrics label it. */
export interface EngineNodeLabels {
  id: string;
  engine: string;
}

/** A route as Fastify keeps its config: one object per route and method. */
export interface RouteConfig {
  url?: string;
}

interface RouteSeries {
  method: string;
  route: string;
  duration: HistogramSeries;
  /** By status code (a sparse array: no string key per request). */
  byStatus: CounterSeries[];
  /** The same route under another method (a route registered for several shares its config). */
  other: RouteSeries | undefined;
}

interface NodeSeries {
  duration: HistogramSeries;
  errors: Map<string, CounterSeries>;
}

interface McpToolSeries {
  duration: HistogramSeries;
  byStatus: Map<string, CounterSeries>;
}

interface TokenSeries {
  input: CounterSeries;
  output: CounterSeries;
}

export interface MetricsSources {
  /** Named caches whose hits and misses are exported. */
  caches: Record<string, CacheStats>;
  /** Documents waiting for ingestion and being processed now, read at scrape time. */
  ingestionQueue: () => Promise<{ queued: number; processing: number }>;
}

export class GatewayMetrics {
  readonly registry = new Registry();

  private readonly requests = new FastCounter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'],
    registry: this.registry,
  });
  private readonly requestDuration = new FastHistogram(
    {
      name: 'gateway_http_request_duration_seconds',
      help: 'Time from a request being routed to its response finishing, by method and route pattern.',
      labelNames: ['method', 'route'],
      registry: this.registry,
    },
    LATENCY_BUCKETS,
  );
  private readonly engineDuration = new FastHistogram(
    {
      name: 'gateway_engine_request_duration_seconds',
      help: 'Time a compute node took to accept a model call (a whole JSON answer, or a stream head), by node and engine kind.',
      labelNames: ['node', 'engine'],
      registry: this.registry,
    },
    LATENCY_BUCKETS,
  );
  private readonly engineErrors = new FastCounter({
    name: 'gateway_engine_errors_total',
    help: 'Failed model calls by node, engine kind and failure (unreachable, timeout, overloaded, mid_stream…).',
    labelNames: ['node', 'engine', 'failure'],
    registry: this.registry,
  });
  private readonly timeToFirstToken = new FastHistogram(
    {
      name: 'gateway_time_to_first_token_seconds',
      help: 'Chat streams: time from the request being routed to the engine’s first output, by model.',
      labelNames: ['model'],
      registry: this.registry,
    },
    LATENCY_BUCKETS,
  );
  private readonly inputTokens = new FastCounter({
    name: 'gateway_input_tokens_total',
    help: 'Prompt tokens sent to models, by model and tenant.',
    labelNames: ['model', 'tenant'],
    registry: this.registry,
  });
  private readonly outputTokens = new FastCounter({
    name: 'gateway_output_tokens_total',
    help: 'Completion tokens generated by models, by model and tenant.',
    labelNames: ['model', 'tenant'],
    registry: this.registry,
  });
  private readonly overhead = new FastHistogram(
    {
      name: 'gateway_overhead_seconds',
      help: 'Chat requests: the gateway’s own time apart from the engine’s (the Server-Timing `gateway` entry), by mode (json, stream).',
      labelNames: ['mode'],
      registry: this.registry,
    },
    OVERHEAD_BUCKETS,
  );
  private readonly rateLimitRejections = new FastCounter({
    name: 'gateway_rate_limit_rejections_total',
    help: 'Requests refused (429) by a rate limit or quota, by scope (key, tenant) and limit (requestsPerMinute, tokensPerMinute, tokensPerDay, tokensPerMonth, toolCallsPerMinute).',
    labelNames: ['scope', 'limit'],
    registry: this.registry,
  });
  private readonly mcpCalls = new FastCounter({
    name: 'gateway_mcp_calls_total',
    help: 'MCP tool calls that ended, by tenant, server, tool and status (ok, error, denied, timeout, cancelled): errors are status != ok.',
    labelNames: ['tenant', 'server', 'tool', 'status'],
    registry: this.registry,
  });
  private readonly mcpCallDuration = new FastHistogram(
    {
      name: 'gateway_mcp_call_duration_seconds',
      help: 'MCP tool calls: from the call reaching the gateway to its end, by tenant, server and tool.',
      labelNames: ['tenant', 'server', 'tool'],
      registry: this.registry,
    },
    MCP_CALL_BUCKETS,
  );
  private streams = 0;

  private readonly routes = new WeakMap<RouteConfig, RouteSeries>();
  private readonly unmatched = new Map<string, RouteSeries>();
  private readonly nodes = new Map<string, NodeSeries>();
  /** model → tenant → series. */
  private readonly tokens = new Map<string, Map<string, TokenSeries>>();
  private readonly firstToken = new Map<string, HistogramSeries>();
  private readonly overheadJson = this.overhead.labelled({ mode: 'json' });
  private readonly overheadStream = this.overhead.labelled({ mode: 'stream' });
  private readonly rejections = new Map<string, CounterSeries>();
  /** tenant NUL server NUL tool → series; at most MCP_TOOL_SERIES_LIMIT named ones. */
  private readonly mcpTools = new Map<string, McpToolSeries>();
  private mcpNamedTools = 0;

  constructor(sources: MetricsSources) {
    const caches = Object.entries(sources.caches);
    new Counter({
      name: 'gateway_cache_hits_total',
      help: 'Lookups answered from an in-process cache (api_keys, accounts, tenant_settings), by cache.',
      labelNames: ['cache'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [cache, stats] of caches) this.inc({ cache }, stats.hits);
      },
    });
    new Counter({
      name: 'gateway_cache_misses_total',
      help: 'Lookups a cache could not answer (a database read), by cache. Hit ratio: hits / (hits + misses).',
      labelNames: ['cache'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [cache, stats] of caches) this.inc({ cache }, stats.misses);
      },
    });
    const streams = () => this.streams;
    new Gauge({
      name: 'gateway_active_streams',
      help: 'Chat event streams being relayed now.',
      registers: [this.registry],
      collect() {
        this.set(streams());
      },
    });
    new Gauge({
      name: 'gateway_ingestion_queue_depth',
      help: 'Documents waiting for ingestion (queued) and being ingested now (processing), across every replica.',
      labelNames: ['state'],
      registers: [this.registry],
      // Every worker of a machine reads the same shared table: across workers, one figure, not their sum.
      aggregator: 'max',
      async collect() {
        const depth = await sources.ingestionQueue();
        this.set({ state: 'queued' }, depth.queued);
        this.set({ state: 'processing' }, depth.processing);
      },
    });
    // Event-loop lag, GC, heap, CPU, handles: prom-client's default set, on our registry.
    collectDefaultMetrics({ register: this.registry, prefix: 'gateway_', eventLoopMonitoringPrecision: EVENT_LOOP_PRECISION_MS });
    if (inCluster()) joinCluster(this.registry);
  }

  /**
   * One finished HTTP request. `routeConfig` is the route's own config object (one per
   * route and method, so it keys the series without building a string); undefined or
   * without a url: no route matched.
   */
  request(routeConfig: RouteConfig | undefined, method: string, status: number, ms: number): void {
    const matched = routeConfig !== undefined && routeConfig.url !== undefined;
    let route = matched ? this.routes.get(routeConfig) : this.unmatched.get(method);
    while (route !== undefined && route.method !== method) route = route.other;
    route ??= this.routeSeries(matched ? routeConfig : undefined, method);
    let requests = route.byStatus[status];
    if (requests === undefined) {
      requests = this.requests.labelled({ method, route: route.route, status: String(status) });
      route.byStatus[status] = requests;
    }
    requests.inc();
    route.duration.observe(ms / 1000);
  }

  /** A model call a node accepted, after `ms`. */
  engineAccepted(node: EngineNodeLabels, ms: number): void {
    this.nodeSeries(node).duration.observe(ms / 1000);
  }

  /** A model call that failed (before its answer, or mid-stream: `mid_stream`). */
  engineFailed(node: EngineNodeLabels, failure: string): void {
    const { errors } = this.nodeSeries(node);
    let series = errors.get(failure);
    if (series === undefined) {
      series = this.engineErrors.labelled({ node: node.id, engine: node.engine, failure });
      errors.set(failure, series);
    }
    series.inc();
  }

  /** Tokens of one model call (every endpoint: what its usage record holds). */
  usage(model: string, tenantId: string, promptTokens: number, completionTokens: number): void {
    let byTenant = this.tokens.get(model);
    if (byTenant === undefined) {
      byTenant = new Map();
      this.tokens.set(model, byTenant);
    }
    let series = byTenant.get(tenantId);
    if (series === undefined) {
      const labels = { model, tenant: tenantId };
      series = { input: this.inputTokens.labelled(labels), output: this.outputTokens.labelled(labels) };
      byTenant.set(tenantId, series);
    }
    series.input.inc(promptTokens);
    series.output.inc(completionTokens);
  }

  firstTokenAfter(model: string, ms: number): void {
    let series = this.firstToken.get(model);
    if (series === undefined) {
      series = this.timeToFirstToken.labelled({ model });
      this.firstToken.set(model, series);
    }
    series.observe(ms / 1000);
  }

  /** The gateway's own time on one chat request (what its Server-Timing `gateway` entry says). */
  gatewayOverhead(stream: boolean, ms: number): void {
    (stream ? this.overheadStream : this.overheadJson).observe(ms / 1000);
  }

  streamOpened(): void {
    this.streams++;
  }

  streamClosed(): void {
    this.streams--;
  }

  /** A request refused by a rate limit or quota: the limiter calls this with its 429. */
  rateLimitRejected(scope: string, limit: string): void {
    const key = `${scope} ${limit}`;
    let series = this.rejections.get(key);
    if (series === undefined) {
      series = this.rateLimitRejections.labelled({ scope, limit });
      this.rejections.set(key, series);
    }
    series.inc();
  }

  /** One MCP tool call that ended; `server` null: a denied call, labelled `_unknown` whatever it named. */
  mcpCall(tenantId: string, server: string | null, tool: string, status: string, ms: number): void {
    const series = this.mcpToolSeries(tenantId, server, tool);
    let calls = series.byStatus.get(status);
    if (calls === undefined) {
      calls = this.mcpCalls.labelled({ ...series.duration.labels, status });
      series.byStatus.set(status, calls);
    }
    calls.inc();
    series.duration.observe(ms / 1000);
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    // A worker of several (GATEWAY_WORKERS) answers with every worker's figures.
    const body = inCluster() ? await scrapeCluster() : await this.registry.metrics();
    return { contentType: this.registry.contentType, body };
  }

  private routeSeries(routeConfig: RouteConfig | undefined, method: string): RouteSeries {
    // Unmatched paths are one series per method, never the URL (a scanner would make one per probe).
    const route = routeConfig?.url ?? 'unmatched';
    const series: RouteSeries = {
      method,
      route,
      duration: this.requestDuration.labelled({ method, route }),
      byStatus: [],
      other: undefined,
    };
    if (routeConfig === undefined) this.unmatched.set(method, series);
    else {
      const first = this.routes.get(routeConfig);
      if (first === undefined) this.routes.set(routeConfig, series);
      else {
        let last = first;
        while (last.other !== undefined) last = last.other;
        last.other = series;
      }
    }
    return series;
  }

  private mcpToolSeries(tenantId: string, server: string | null, tool: string): McpToolSeries {
    const named = server !== null;
    let key = named ? `${tenantId}\0${server}\0${tool}` : `${tenantId}\0`;
    let series = this.mcpTools.get(key);
    if (series !== undefined) return series;
    let labels = { tenant: tenantId, server: MCP_UNNAMED, tool: MCP_UNNAMED };
    if (named && this.mcpNamedTools < MCP_TOOL_SERIES_LIMIT) {
      this.mcpNamedTools++;
      labels = { tenant: tenantId, server, tool };
    } else if (named) {
      // Over the bound: this tenant's overflow series (one per tenant, found again under its own key).
      key = `${tenantId}\0\0overflow`;
      labels = { tenant: tenantId, server: MCP_OVERFLOW, tool: MCP_OVERFLOW };
      series = this.mcpTools.get(key);
      if (series !== undefined) return series;
    }
    series = { duration: this.mcpCallDuration.labelled(labels), byStatus: new Map() };
    this.mcpTools.set(key, series);
    return series;
  }

  private nodeSeries(node: EngineNodeLabels): NodeSeries {
    let series = this.nodes.get(node.id);
    if (series === undefined) {
      series = { duration: this.engineDuration.labelled({ node: node.id, engine: node.engine }), errors: new Map() };
      this.nodes.set(node.id, series);
    }
    return series;
  }
}
