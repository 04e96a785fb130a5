// `npm run bench:llm`: what the gateway costs on the chat/completions hot path.
//
// Everything runs on loopback in one run, each piece in its own process so its CPU
// is read separately (/proc/<pid>/stat):
//   direct     the instant upstream itself: an OpenAI-compatible server that answers
//              at once (JSON, or every SSE frame in one write);
//   bare proxy node:http + undici Pool, no auth, piping the answer back: the least
//              any proxy can cost;
//   gateway    the real gateway (startServer; request log at `info` to stdout, which
//              is /dev/null here), an API key, POST /api/llm/v1/chat/completions.
// For each path and each mode (JSON, stream) it measures: maximum throughput with
// autocannon, and the proxy's CPU per request in that run; latency at a fixed rate
// (1,000 req/s, open loop); and for streams, the time to the first byte and to the
// first token, one request at a time and a few at once. Then it prints the ratios
// and checks the targets of issue 3. The load generator shares the 2 cores with
// everything else, so absolute figures are low: compare within one run. With
// BENCH_ROUNDS > 1 the throughput runs are repeated, interleaved (direct, bare proxy,
// gateway, direct, …), and each figure is the median over the rounds, so a burst of
// unrelated load on the machine moves one round rather than one path.
//
// Environment: BENCH_DURATION (s per throughput run, default 10), BENCH_CONNECTIONS (20),
// BENCH_ROUNDS (1), BENCH_WARMUP (s, 3), BENCH_RATE (req/s for the latency runs, 1000), BENCH_RATE_DURATION
// (s, 10), BENCH_TTFB_REQUESTS (2000), BENCH_TTFB_CONCURRENCY (4), BENCH_LOG_LEVEL (info),
// BENCH_SILENT (on: also measure the gateway with logging `silent`), BENCH_GATEWAY (on;
// `off` measures direct and bare proxy only), BENCH_CPU_PROF (a directory: profile the
// gateway child with --cpu-prof; summarize with bench/support/cpuprofile-top.ts).
// Results: stdout, and bench/results/llm-proxy-<time>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { VERSION } from '../src/context.js';
import { startChild, type Child } from './support/children.js';
import { startGateway, type GatewayChild } from './support/gateway.js';
import { gatewayRequestBody, upstreamRequestBody } from './support/fixtures.js';
import { checkJson, checkStream } from './support/checks.js';
import { firstByte, paced, saturate, type Target } from './support/load.js';
import { measureCpu } from './support/proc.js';
import { boundedInt, fmt, summarize } from './support/stats.js';
import { printReport, verdicts, type FirstByteRow, type Mode, type PacedRow, type PathName, type SaturationRow } from './support/llm-report.js';

const DURATION = boundedInt('BENCH_DURATION', 10, 1, 120);
const CONNECTIONS = boundedInt('BENCH_CONNECTIONS', 20, 1, 500);
const WARMUP = boundedInt('BENCH_WARMUP', 3, 0, 30);
const ROUNDS = boundedInt('BENCH_ROUNDS', 1, 1, 20);
const RATE = boundedInt('BENCH_RATE', 1000, 1, 20_000);
const RATE_DURATION = boundedInt('BENCH_RATE_DURATION', 10, 1, 120);
const TTFB_REQUESTS = boundedInt('BENCH_TTFB_REQUESTS', 2000, 10, 100_000);
const TTFB_CONCURRENCY = boundedInt('BENCH_TTFB_CONCURRENCY', 4, 1, 64);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'info';
const SILENT = (process.env.BENCH_SILENT || 'on') === 'on' && LOG_LEVEL !== 'silent';
const WITH_GATEWAY = (process.env.BENCH_GATEWAY || 'on') === 'on';
const CPU_PROF = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : undefined;

interface Path {
  name: PathName;
  /** The proxy process whose CPU is the cost being measured (undefined: direct). */
  proxyPid: number | undefined;
  /** The gateway's database query counter (undefined for the others). */
  dbQueries?: () => Promise<number>;
  target(mode: Mode): Target;
}

function directPath(upstream: Child<{ url: string }>): Path {
  return {
    name: 'direct',
    proxyPid: undefined,
    target: (mode) => ({ name: `direct ${mode}`, url: `${upstream.info.url}/v1/chat/completions`, headers: {}, body: upstreamRequestBody(mode === 'stream') }),
  };
}

function barePath(bare: Child<{ url: string }>): Path {
  return {
    name: 'bare proxy',
    proxyPid: bare.pid,
    target: (mode) => ({ name: `bare proxy ${mode}`, url: `${bare.info.url}/v1/chat/completions`, headers: {}, body: upstreamRequestBody(mode === 'stream') }),
  };
}

function gatewayPath(name: PathName, gateway: GatewayChild): Path {
  return {
    name,
    proxyPid: gateway.pid,
    dbQueries: async () => (await gateway.stats()).dbQueries!,
    target: (mode) => ({ name: `${name} ${mode}`, url: gateway.chatUrl, headers: gateway.headers, body: gatewayRequestBody(mode === 'stream') }),
  };
}

async function upstreamStats(upstream: Child<{ url: string }>): Promise<{ requests: number; connections: number }> {
  const stats = (await (await fetch(`${upstream.info.url}/bench/stats`)).json()) as { chat: number; stream: number; connections: number };
  return { requests: stats.chat + stats.stream, connections: stats.connections };
}

async function measureSaturation(p: Path, mode: Mode, upstream: Child<{ url: string }>, round: number): Promise<SaturationRow> {
  const target = p.target(mode);
  if (WARMUP > 0 && round === 0) await saturate(target, CONNECTIONS, WARMUP);
  await settle();
  const pids: Record<string, number> = { upstream: upstream.pid, ...(p.proxyPid ? { proxy: p.proxyPid } : {}) };
  const before = await upstreamStats(upstream);
  const queriesBefore = await p.dbQueries?.();
  const { value, cpuMs, mainThreadCpuMs } = await measureCpu(pids, async () => {
    const result = await saturate(target, CONNECTIONS, DURATION);
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
  if (upstreamRequests > value.requests + CONNECTIONS) console.log(`  note: ${target.name}: the upstream served ${upstreamRequests} requests for ${value.requests} answered`);
  if (upstreamConnections > CONNECTIONS * 2) console.log(`  note: ${target.name}: the upstream accepted ${upstreamConnections} new connections for ${value.requests} requests`);
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
  console.log(`  ${target.name}: ${fmt(row.rps, 0)} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, proxy CPU ${row.proxyCpuMsPerRequest === null ? '–' : fmt(row.proxyCpuMsPerRequest, 3)} ms/req`);
  return row;
}

async function measurePaced(p: Path, mode: Mode): Promise<PacedRow> {
  const target = p.target(mode);
  await paced(target, RATE, Math.min(2, RATE_DURATION));
  await settle();
  const pids: Record<string, number> = p.proxyPid ? { proxy: p.proxyPid } : {};
  const { value, cpuMs } = await measureCpu(pids, () => paced(target, RATE, RATE_DURATION));
  const row: PacedRow = { ...value, path: p.name, mode, proxyCpuMsPerRequest: cpuMs.proxy === undefined ? null : cpuMs.proxy / value.latency.count };
  console.log(`  ${target.name} at ${RATE} req/s: p50 ${fmt(row.latency.p50, 3)} ms, p99 ${fmt(row.latency.p99, 3)} ms`);
  return row;
}

async function measureFirstByte(p: Path): Promise<FirstByteRow[]> {
  const target = p.target('stream');
  await firstByte(target, Math.min(500, TTFB_REQUESTS), 1);
  const rows: FirstByteRow[] = [];
  for (const concurrency of [1, TTFB_CONCURRENCY]) {
    await settle();
    const row = { ...(await firstByte(target, TTFB_REQUESTS, concurrency)), path: p.name };
    console.log(`  ${target.name} ×${concurrency}: first byte p50 ${fmt(row.firstByte.p50, 3)} ms, first token p50 ${fmt(row.firstToken.p50, 3)} ms`);
    rows.push(row);
  }
  return rows;
}

/** One row per path and mode: the median of each figure over the rounds (counts summed). */
function medians(rows: SaturationRow[]): SaturationRow[] {
  const groups = new Map<string, SaturationRow[]>();
  for (const row of rows) groups.set(`${row.path}|${row.mode}`, [...(groups.get(`${row.path}|${row.mode}`) ?? []), row]);
  return [...groups.values()].map((group) => {
    const median = (pick: (row: SaturationRow) => number) => summarize(group.map(pick)).p50;
    const sum = (pick: (row: SaturationRow) => number) => group.reduce((total, row) => total + pick(row), 0);
    return {
      ...group[0]!,
      rps: median((r) => r.rps),
      p50: median((r) => r.p50),
      p99: median((r) => r.p99),
      mean: median((r) => r.mean),
      proxyCpuMsPerRequest: group[0]!.proxyCpuMsPerRequest === null ? null : median((r) => r.proxyCpuMsPerRequest!),
      proxyMainThreadCpuMsPerRequest: group[0]!.proxyMainThreadCpuMsPerRequest === null ? null : median((r) => r.proxyMainThreadCpuMsPerRequest!),
      upstreamCpuMsPerRequest: median((r) => r.upstreamCpuMsPerRequest),
      requests: sum((r) => r.requests),
      non2xx: sum((r) => r.non2xx),
      errors: sum((r) => r.errors),
      upstreamRequests: sum((r) => r.upstreamRequests),
      upstreamConnections: sum((r) => r.upstreamConnections),
      dbQueriesPerRequest: group[0]!.dbQueriesPerRequest === null ? null : median((r) => r.dbQueriesPerRequest!),
      round: -1,
    };
  });
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

async function main(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('the benchmark reads CPU time from /proc: Linux only');
  console.log(
    `gateway ${VERSION} LLM proxy bench: node ${process.version}, ${os.cpus().length} CPUs; ${CONNECTIONS} connections, ${DURATION} s per run × ${ROUNDS}, ` +
      `${WARMUP} s warm-up; ${RATE} req/s for ${RATE_DURATION} s; ${TTFB_REQUESTS} streams for first byte; gateway log level ${LOG_LEVEL}`,
  );
  const loadBefore = os.loadavg();
  const upstream = await startChild<{ url: string }>('instant upstream', './instant-upstream.ts');
  const bare = await startChild<{ url: string }>('bare proxy', './bare-proxy.ts', { env: { UPSTREAM_URL: upstream.info.url } });
  let gateway: GatewayChild | undefined;
  try {
    const paths = [directPath(upstream), barePath(bare)];
    if (WITH_GATEWAY) {
      const nodeArgs = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
      gateway = await startGateway({ upstreamUrl: upstream.info.url, logLevel: LOG_LEVEL, nodeArgs });
      paths.push(gatewayPath('gateway', gateway));
    }
    for (const p of paths) {
      await checkJson(p.target('json'));
      await checkStream(p.target('stream'));
    }

    console.log('maximum throughput (autocannon):');
    const rounds: SaturationRow[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (ROUNDS > 1) console.log(` round ${round + 1} of ${ROUNDS}`);
      for (const mode of ['json', 'stream'] as const) for (const p of paths) rounds.push(await measureSaturation(p, mode, upstream, round));
    }
    console.log(`fixed rate, ${RATE} req/s (open loop):`);
    const pacedRows: PacedRow[] = [];
    for (const mode of ['json', 'stream'] as const) for (const p of paths) pacedRows.push(await measurePaced(p, mode));
    console.log('streaming, time to first byte:');
    const firstBytes: FirstByteRow[] = [];
    for (const p of paths) firstBytes.push(...(await measureFirstByte(p)));

    if (gateway && SILENT) {
      await gateway.close();
      gateway = undefined;
      console.log('gateway with request logging off (GATEWAY_LOG_LEVEL=silent):');
      gateway = await startGateway({ upstreamUrl: upstream.info.url, logLevel: 'silent', name: 'gateway (silent)' });
      const quiet = gatewayPath('gateway (log silent)', gateway);
      for (let round = 0; round < ROUNDS; round++) for (const mode of ['json', 'stream'] as const) rounds.push(await measureSaturation(quiet, mode, upstream, round));
    }
    const saturation = medians(rounds);
    const loadAfter = os.loadavg();

    const checks = verdicts(saturation, pacedRows, firstBytes, RATE);
    printReport(saturation, pacedRows, firstBytes, checks, RATE);
    const busiest = Math.max(loadBefore[0]!, loadAfter[0]!);
    console.log(`\nload average (1 min) before ${fmt(loadBefore[0]!, 2)}, after ${fmt(loadAfter[0]!, 2)} on ${os.cpus().length} CPUs (this bench alone keeps about 2 busy)`);
    if (busiest > os.cpus().length + 1) console.log('WARNING: other work was competing for the CPUs: latency figures especially are unreliable; run again on a quiet machine.');

    const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');
    mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `llm-proxy-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    const settings = { connections: CONNECTIONS, durationSeconds: DURATION, rounds: ROUNDS, warmupSeconds: WARMUP, rate: RATE, rateDurationSeconds: RATE_DURATION, ttfbRequests: TTFB_REQUESTS, ttfbConcurrency: TTFB_CONCURRENCY, logLevel: LOG_LEVEL };
    writeFileSync(
      file,
      JSON.stringify({ version: VERSION, node: process.version, cpus: os.cpus().length, loadAverage: { before: loadBefore, after: loadAfter }, settings, saturation, rounds, paced: pacedRows, firstByte: firstBytes, checks }, null, 2),
    );
    console.log(`results written to ${path.relative(process.cwd(), file)}`);
    if (CPU_PROF) console.log(`gateway CPU profile: ${CPU_PROF} (written when the gateway stops)`);
  } finally {
    await gateway?.close();
    await bare.stop();
    await upstream.stop();
  }
}

await main();
