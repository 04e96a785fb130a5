// The measurements of bench/llm-proxy.ts, one path at a time. Each returns what one
// round gives; the caller interleaves paths within a round and combines rounds
// (medians for throughput, pooled samples for latency).
import type { Child } from './children.js';
import type { GatewayChild } from './gateway.js';
import { gatewayRequestBody, upstreamRequestBody } from './fixtures.js';
import { firstByte, paced, saturate, type FirstByteSamples, type PacedSamples, type Target } from './load.js';
import { measureCpu } from './proc.js';
import { fmt, summarize } from './stats.js';
import type { FirstByteRow, Mode, PacedRow, PathName, SaturationRow } from './llm-report.js';

export interface Path {
  name: PathName;
  /** The proxy process whose CPU is the cost being measured (undefined: direct). */
  proxyPid: number | undefined;
  /** The gateway's database query counter (undefined for the others). */
  dbQueries?: () => Promise<number>;
  target(mode: Mode): Target;
}

export function directPath(upstream: Child<{ url: string }>): Path {
  return {
    name: 'direct',
    proxyPid: undefined,
    target: (mode) => ({
      name: `direct ${mode}`,
      url: `${upstream.info.url}/v1/chat/completions`,
      headers: {},
      body: upstreamRequestBody(mode === 'stream'),
    }),
  };
}

export function barePath(bare: Child<{ url: string }>): Path {
  return {
    name: 'bare proxy',
    proxyPid: bare.pid,
    target: (mode) => ({
      name: `bare proxy ${mode}`,
      url: `${bare.info.url}/v1/chat/completions`,
      headers: {},
      body: upstreamRequestBody(mode === 'stream'),
    }),
  };
}

export function gatewayPath(name: PathName, gateway: GatewayChild): Path {
  return {
    name,
    proxyPid: gateway.pid,
    dbQueries: async () => (await gateway.stats()).dbQueries!,
    target: (mode) => ({
      name: `${name} ${mode}`,
      url: gateway.chatUrl,
      headers: gateway.headers,
      body: gatewayRequestBody(mode === 'stream'),
    }),
  };
}

export const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

async function upstreamStats(upstream: Child<{ url: string }>): Promise<{ requests: number; connections: number }> {
  const stats = (await (await fetch(`${upstream.info.url}/bench/stats`)).json()) as { chat: number; stream: number; connections: number };
  return { requests: stats.chat + stats.stream, connections: stats.connections };
}

export interface SaturationOptions {
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

export async function measureSaturation(
  p: Path,
  mode: Mode,
  upstream: Child<{ url: string }>,
  round: number,
  options: SaturationOptions,
): Promise<SaturationRow> {
  const target = p.target(mode);
  if (options.warmupSeconds > 0 && round === 0) await saturate(target, options.connections, options.warmupSeconds);
  await settle();
  const pids: Record<string, number> = { upstream: upstream.pid, ...(p.proxyPid ? { proxy: p.proxyPid } : {}) };
  const before = await upstreamStats(upstream);
  const queriesBefore = await p.dbQueries?.();
  const { value, cpuMs, mainThreadCpuMs } = await measureCpu(pids, async () => {
    const result = await saturate(target, options.connections, options.seconds);
    // Requests still in flight when autocannon stopped finish inside the window.
    await settle();
    return result;
  });
  const after = await upstreamStats(upstream);
  const queries = queriesBefore === undefined ? undefined : (await p.dbQueries!()) - queriesBefore;
  const upstreamRequests = after.requests - before.requests;
  const upstreamConnections = after.connections - before.connections;
  // One upstream request per client request (a proxy that retried would show more),
  // over kept-alive connections (a proxy that closes them shows one per request).
  if (upstreamRequests > value.requests + options.connections)
    console.log(`  note: ${target.name}: the upstream served ${upstreamRequests} requests for ${value.requests} answered`);
  if (upstreamConnections > options.connections * 2)
    console.log(`  note: ${target.name}: the upstream accepted ${upstreamConnections} new connections for ${value.requests} requests`);
  const row: SaturationRow = {
    ...value,
    path: p.name,
    mode,
    proxyCpuMsPerRequest: cpuMs.proxy === undefined ? null : cpuMs.proxy / value.requests,
    proxyMainThreadCpuMsPerRequest: mainThreadCpuMs.proxy === undefined ? null : mainThreadCpuMs.proxy / value.requests,
    upstreamCpuMsPerRequest: cpuMs.upstream! / value.requests,
    upstreamRequests,
    upstreamConnections,
    dbQueriesPerRequest: queries === undefined ? null : queries / value.requests,
    round,
  };
  console.log(
    `  ${target.name}: ${fmt(row.rps, 0)} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, proxy CPU ${row.proxyCpuMsPerRequest === null ? '–' : fmt(row.proxyCpuMsPerRequest, 3)} ms/req`,
  );
  return row;
}

/** One row per path and mode: the median of each figure over the rounds (counts summed). */
export function medians(rows: SaturationRow[]): SaturationRow[] {
  const groups = new Map<string, SaturationRow[]>();
  for (const row of rows) groups.set(`${row.path}|${row.mode}`, [...(groups.get(`${row.path}|${row.mode}`) ?? []), row]);
  return [...groups.values()].map((group) => {
    const median = (pick: (row: SaturationRow) => number) => summarize(group.map(pick)).p50;
    const medianOrNull = (pick: (row: SaturationRow) => number | null) => (pick(group[0]!) === null ? null : median((r) => pick(r)!));
    const sum = (pick: (row: SaturationRow) => number) => group.reduce((total, row) => total + pick(row), 0);
    return {
      ...group[0]!,
      rps: median((r) => r.rps),
      p50: median((r) => r.p50),
      p99: median((r) => r.p99),
      mean: median((r) => r.mean),
      proxyCpuMsPerRequest: medianOrNull((r) => r.proxyCpuMsPerRequest),
      proxyMainThreadCpuMsPerRequest: medianOrNull((r) => r.proxyMainThreadCpuMsPerRequest),
      upstreamCpuMsPerRequest: median((r) => r.upstreamCpuMsPerRequest),
      dbQueriesPerRequest: medianOrNull((r) => r.dbQueriesPerRequest),
      requests: sum((r) => r.requests),
      non2xx: sum((r) => r.non2xx),
      errors: sum((r) => r.errors),
      upstreamRequests: sum((r) => r.upstreamRequests),
      upstreamConnections: sum((r) => r.upstreamConnections),
      round: -1,
    };
  });
}

/** Fixed-rate samples of one path and mode, pooled over the rounds. */
export class PacedPool {
  private samples: PacedSamples = { sent: 0, seconds: 0, latencies: [], non2xx: 0, errors: 0 };
  private proxyCpuMs = 0;

  constructor(
    readonly path: Path,
    readonly mode: Mode,
    private readonly rate: number,
  ) {}

  async round(index: number, seconds: number): Promise<void> {
    const target = this.path.target(this.mode);
    if (index === 0) await paced(target, this.rate, 2);
    await settle();
    const pids: Record<string, number> = this.path.proxyPid ? { proxy: this.path.proxyPid } : {};
    const { value, cpuMs } = await measureCpu(pids, () => paced(target, this.rate, seconds));
    this.proxyCpuMs += cpuMs.proxy ?? 0;
    this.samples = {
      sent: this.samples.sent + value.sent,
      seconds: this.samples.seconds + value.seconds,
      latencies: this.samples.latencies.concat(value.latencies),
      non2xx: this.samples.non2xx + value.non2xx,
      errors: this.samples.errors + value.errors,
    };
    const latency = summarize(value.latencies);
    console.log(`  ${target.name} at ${this.rate} req/s: p50 ${fmt(latency.p50, 3)} ms, p99 ${fmt(latency.p99, 3)} ms`);
  }

  row(): PacedRow {
    const { sent, seconds, latencies, non2xx, errors } = this.samples;
    return {
      path: this.path.name,
      mode: this.mode,
      rate: this.rate,
      sent,
      achievedRps: sent / seconds,
      latency: summarize(latencies),
      non2xx,
      errors,
      proxyCpuMsPerRequest: this.path.proxyPid ? this.proxyCpuMs / latencies.length : null,
    };
  }
}

/** Streaming first-byte samples of one path at one concurrency, pooled over the rounds. */
export class FirstBytePool {
  private samples: FirstByteSamples = { firstBytes: [], firstTokens: [], completes: [], failures: 0 };

  constructor(
    readonly path: Path,
    readonly concurrency: number,
  ) {}

  async round(index: number, requests: number): Promise<void> {
    const target = this.path.target('stream');
    if (index === 0) await firstByte(target, Math.min(500, requests), this.concurrency);
    await settle();
    const value = await firstByte(target, requests, this.concurrency);
    this.samples = {
      firstBytes: this.samples.firstBytes.concat(value.firstBytes),
      firstTokens: this.samples.firstTokens.concat(value.firstTokens),
      completes: this.samples.completes.concat(value.completes),
      failures: this.samples.failures + value.failures,
    };
    console.log(
      `  ${target.name} ×${this.concurrency}: first byte p50 ${fmt(summarize(value.firstBytes).p50, 3)} ms, first token p50 ${fmt(summarize(value.firstTokens).p50, 3)} ms`,
    );
  }

  row(): FirstByteRow {
    const { firstBytes, firstTokens, completes, failures } = this.samples;
    return {
      path: this.path.name,
      concurrency: this.concurrency,
      firstByte: summarize(firstBytes),
      firstToken: summarize(firstTokens),
      complete: summarize(completes),
      failures,
    };
  }
}
