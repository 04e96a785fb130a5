// `npm run bench:llm`: what the gateway costs on the chat/completions hot path.
//
// Everything runs on loopback in one run, each piece in its own process so its CPU
// is read separately (/proc/<pid>/stat):
//   direct     the instant upstream itself: an OpenAI-compatible server that answers
//              at once (JSON, or every SSE frame in one write);
//   bare proxy node:http + undici Pool, no auth, passing the answer back: the least
//              any proxy can cost;
//   gateway    the real gateway (startServer; request log at `info` to stdout, which
//              is /dev/null here), an API key, POST /api/llm/v1/chat/completions;
//              and a second one with GATEWAY_LOG_LEVEL=silent, to price the log;
//              and a third with /metrics on (GATEWAY_METRICS_TOKEN), to price the
//              metrics: its CPU per request minus the first's is "metrics cost".
// For each path and each mode (JSON, stream) it measures: maximum throughput with
// autocannon, and the proxy's CPU per request in that run; latency at a fixed rate
// (1,000 req/s, open loop); and for streams, the time to the first byte and to the
// first token, one request at a time and a few at once. Then it prints the ratios
// and checks the targets of issue 3.
//
// The load generator shares the 2 cores with everything else, so absolute figures
// are low: compare within one run. Every measurement is split into rounds that
// interleave the paths (direct, bare proxy, gateway, direct, …), so a burst of
// unrelated load on the machine lands on all paths rather than on one: throughput
// figures are the median over the rounds, latency samples are pooled.
//
// Environment: BENCH_ROUNDS (3), BENCH_DURATION (s per throughput run and round, 5),
// BENCH_CONNECTIONS (20), BENCH_WARMUP (s, 3), BENCH_RATE (req/s, 1000),
// BENCH_RATE_DURATION (s at that rate per path and mode, over all rounds, 15),
// BENCH_TTFB_REQUESTS (streams per path and concurrency, over all rounds, 3000),
// BENCH_TTFB_CONCURRENCY (4), BENCH_LOG_LEVEL (info), BENCH_SILENT (on: also the
// gateway with logging `silent`), BENCH_METRICS (on: also the gateway with /metrics
// on, throughput only), BENCH_GATEWAY (on; `off` measures direct and bare
// proxy only), BENCH_CPU_PROF (a directory: profile the gateway child with
// --cpu-prof; summarize with bench/support/cpuprofile-top.ts).
// Results: stdout, and bench/results/llm-proxy-<time>.json.
//
// BENCH_WORKERS (a list of worker counts, e.g. `1,2`) runs another measurement instead:
// the gateway's chat throughput (JSON and stream) with that many worker processes
// (GATEWAY_WORKERS), started with `node bin/gateway.js start` on a throwaway PostgreSQL
// and redis-server the bench starts on loopback (several workers run only there),
// rounds interleaving the counts (BENCH_ROUNDS, BENCH_DURATION, BENCH_WARMUP,
// BENCH_CONNECTIONS, BENCH_LOG_LEVEL apply); it prints req/s for each and the ratio.
// Results: bench/results/llm-workers-<time>.json (bench/support/workers-bench.ts).
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { VERSION } from '../src/context.js';
import { startChild } from './support/children.js';
import { startGateway, type GatewayChild } from './support/gateway.js';
import { checkJson, checkStream } from './support/checks.js';
import {
  barePath,
  directPath,
  FirstBytePool,
  gatewayPath,
  measureSaturation,
  medians,
  PacedPool,
  type Path,
} from './support/llm-measure.js';
import { boundedInt, fmt } from './support/stats.js';
import { benchWorkers } from './support/workers-bench.js';
import { metricsCostUs, printReport, verdicts, type SaturationRow } from './support/llm-report.js';

const ROUNDS = boundedInt('BENCH_ROUNDS', 3, 1, 20);
const DURATION = boundedInt('BENCH_DURATION', 5, 1, 120);
const CONNECTIONS = boundedInt('BENCH_CONNECTIONS', 20, 1, 500);
const WARMUP = boundedInt('BENCH_WARMUP', 3, 0, 30);
const RATE = boundedInt('BENCH_RATE', 1000, 1, 20_000);
const RATE_DURATION = boundedInt('BENCH_RATE_DURATION', 15, 1, 600);
const TTFB_REQUESTS = boundedInt('BENCH_TTFB_REQUESTS', 3000, 10, 100_000);
const TTFB_CONCURRENCY = boundedInt('BENCH_TTFB_CONCURRENCY', 4, 1, 64);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'info';
const SILENT = (process.env.BENCH_SILENT || 'on') === 'on' && LOG_LEVEL !== 'silent';
const WITH_GATEWAY = (process.env.BENCH_GATEWAY || 'on') === 'on';
const METRICS = (process.env.BENCH_METRICS || 'on') === 'on';
const METRICS_TOKEN = randomBytes(24).toString('base64url');
const CPU_PROF = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : undefined;
const MODES = ['json', 'stream'] as const;
const WORKER_COUNTS = parseWorkerCounts(process.env.BENCH_WORKERS);

function parseWorkerCounts(raw: string | undefined): number[] | undefined {
  if (!raw) return undefined;
  const counts = raw.split(',').map((s) => Number(s.trim()));
  if (counts.some((n) => !Number.isInteger(n) || n < 1 || n > 64))
    throw new Error(`BENCH_WORKERS must list worker counts like 1,2, got "${raw}"`);
  return counts;
}

async function mainWorkers(counts: number[]): Promise<void> {
  console.log(`gateway ${VERSION} LLM proxy bench, by worker count: node ${process.version}, ${os.cpus().length} CPUs`);
  const upstream = await startChild<{ url: string }>('instant upstream', './instant-upstream.ts');
  try {
    const rows = await benchWorkers({
      counts,
      upstreamUrl: upstream.info.url,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      seconds: DURATION,
      warmupSeconds: WARMUP,
      logLevel: LOG_LEVEL,
    });
    const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');
    mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `llm-workers-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    const settings = { rounds: ROUNDS, connections: CONNECTIONS, durationSeconds: DURATION, warmupSeconds: WARMUP, logLevel: LOG_LEVEL };
    writeFileSync(file, JSON.stringify({ version: VERSION, node: process.version, cpus: os.cpus().length, settings, rows }, null, 2));
    console.log(`results written to ${path.relative(process.cwd(), file)}`);
  } finally {
    await upstream.stop();
  }
}

async function main(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('the benchmark reads CPU time from /proc: Linux only');
  console.log(
    `gateway ${VERSION} LLM proxy bench: node ${process.version}, ${os.cpus().length} CPUs; ${ROUNDS} rounds; ${CONNECTIONS} connections, ` +
      `${DURATION} s per throughput run, ${WARMUP} s warm-up; ${RATE} req/s for ${RATE_DURATION} s; ${TTFB_REQUESTS} streams for first byte; gateway log level ${LOG_LEVEL}`,
  );
  const loadBefore = os.loadavg();
  const upstream = await startChild<{ url: string }>('instant upstream', './instant-upstream.ts');
  const bare = await startChild<{ url: string }>('bare proxy', './bare-proxy.ts', { env: { UPSTREAM_URL: upstream.info.url } });
  const gateways: GatewayChild[] = [];
  try {
    const paths: Path[] = [directPath(upstream), barePath(bare)];
    if (WITH_GATEWAY) {
      const nodeArgs = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
      gateways.push(await startGateway({ upstreamUrl: upstream.info.url, logLevel: LOG_LEVEL, nodeArgs }));
      paths.push(gatewayPath('gateway', gateways[0]!));
    }
    // Throughput only: latency is measured with the log level production ships.
    const throughputPaths = [...paths];
    if (WITH_GATEWAY && SILENT) {
      gateways.push(await startGateway({ upstreamUrl: upstream.info.url, logLevel: 'silent', name: 'gateway (silent)' }));
      throughputPaths.push(gatewayPath('gateway (log silent)', gateways[1]!));
    }
    // The same gateway as the first, with /metrics served and so every figure collected.
    let metricsGateway: GatewayChild | undefined;
    if (WITH_GATEWAY && METRICS) {
      metricsGateway = await startGateway({
        upstreamUrl: upstream.info.url,
        logLevel: LOG_LEVEL,
        name: 'gateway (metrics)',
        env: { GATEWAY_METRICS_TOKEN: METRICS_TOKEN },
      });
      gateways.push(metricsGateway);
      throughputPaths.push(gatewayPath('gateway (metrics)', metricsGateway));
    }
    for (const p of throughputPaths) {
      await checkJson(p.target('json'));
      await checkStream(p.target('stream'));
    }

    console.log('maximum throughput (autocannon):');
    const rounds: SaturationRow[] = [];
    const saturationOptions = { connections: CONNECTIONS, seconds: DURATION, warmupSeconds: WARMUP };
    for (let round = 0; round < ROUNDS; round++) {
      if (ROUNDS > 1) console.log(` round ${round + 1} of ${ROUNDS}`);
      for (const mode of MODES)
        for (const p of throughputPaths) rounds.push(await measureSaturation(p, mode, upstream, round, saturationOptions));
    }

    if (metricsGateway) await checkMetrics(metricsGateway);

    console.log(`fixed rate, ${RATE} req/s (open loop):`);
    const pacedPools = MODES.flatMap((mode) => paths.map((p) => new PacedPool(p, mode, RATE)));
    await gateways[0]?.stats(); // the pause counters start here
    for (let round = 0; round < ROUNDS; round++) for (const pool of pacedPools) await pool.round(round, RATE_DURATION / ROUNDS);
    const pauses = gateways[0] ? await gateways[0].stats() : undefined;
    if (pauses) {
      console.log(
        `  gateway event loop over these runs: stalls p99 ${fmt(pauses.loopDelayP99Ms!, 1)} ms, longest ${fmt(pauses.loopDelayMaxMs!, 1)} ms; ` +
          `${pauses.gcPauses} GC pauses, ${fmt(pauses.gcPauseMs!, 0)} ms in all, longest ${fmt(pauses.gcLongestPauseMs!, 1)} ms`,
      );
    }

    console.log('streaming, time to first byte:');
    const firstBytePools = [1, TTFB_CONCURRENCY].flatMap((concurrency) => paths.map((p) => new FirstBytePool(p, concurrency)));
    for (let round = 0; round < ROUNDS; round++)
      for (const pool of firstBytePools) await pool.round(round, Math.ceil(TTFB_REQUESTS / ROUNDS));

    const saturation = medians(rounds);
    const pacedRows = pacedPools.map((pool) => pool.row());
    const firstBytes = firstBytePools.map((pool) => pool.row());
    const loadAfter = os.loadavg();

    const checks = verdicts(saturation, pacedRows, firstBytes, RATE);
    printReport(saturation, pacedRows, firstBytes, checks, RATE);
    const busiest = Math.max(loadBefore[0]!, loadAfter[0]!);
    console.log(
      `\nload average (1 min) before ${fmt(loadBefore[0]!, 2)}, after ${fmt(loadAfter[0]!, 2)} on ${os.cpus().length} CPUs (this bench alone keeps about 2 busy)`,
    );
    if (busiest > os.cpus().length + 1)
      console.log(
        'WARNING: other work was competing for the CPUs: latency figures especially are unreliable; run again on a quiet machine.',
      );

    const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');
    mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `llm-proxy-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    const settings = {
      rounds: ROUNDS,
      connections: CONNECTIONS,
      durationSeconds: DURATION,
      warmupSeconds: WARMUP,
      rate: RATE,
      rateDurationSeconds: RATE_DURATION,
      ttfbRequests: TTFB_REQUESTS,
      ttfbConcurrency: TTFB_CONCURRENCY,
      logLevel: LOG_LEVEL,
    };
    writeFileSync(
      file,
      JSON.stringify(
        {
          version: VERSION,
          node: process.version,
          cpus: os.cpus().length,
          loadAverage: { before: loadBefore, after: loadAfter },
          settings,
          saturation,
          rounds,
          paced: pacedRows,
          gatewayPausesAtFixedRate: pauses ?? null,
          firstByte: firstBytes,
          metricsCostUsPerRequest: Object.fromEntries(
            MODES.flatMap((mode) => {
              const on = saturation.find((r) => r.path === 'gateway (metrics)' && r.mode === mode);
              const off = saturation.find((r) => r.path === 'gateway' && r.mode === mode);
              return on && off ? [[mode, metricsCostUs(on, off)]] : [];
            }),
          ),
          checks,
        },
        null,
        2,
      ),
    );
    console.log(`results written to ${path.relative(process.cwd(), file)}`);
    if (CPU_PROF) console.log(`gateway CPU profile: ${CPU_PROF} (written when the gateway stops)`);
  } finally {
    for (const gateway of gateways) await gateway.close();
    await bare.stop();
    await upstream.stop();
  }
}

/** The metrics gateway really collected: its scrape counts the chat requests it served and their overhead. */
async function checkMetrics(gateway: GatewayChild): Promise<void> {
  const res = await fetch(`${gateway.info.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  const count = /^gateway_overhead_seconds_count\{mode="json"\} (\d+)$/m.exec(text)?.[1];
  const sum = /^gateway_overhead_seconds_sum\{mode="json"\} (\S+)$/m.exec(text)?.[1];
  if (res.status !== 200 || count === undefined || sum === undefined)
    throw new Error(`gateway (metrics): /metrics answered ${res.status} without the overhead histogram`);
  console.log(
    `  gateway (metrics): /metrics saw ${count} JSON chat requests, gateway overhead ${fmt((Number(sum) / Number(count)) * 1e6, 0)} µs on average (Server-Timing's gateway entry)`,
  );
}

await (WORKER_COUNTS ? mainWorkers(WORKER_COUNTS) : main());
