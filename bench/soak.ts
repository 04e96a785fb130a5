// `npm run bench:soak`: does the gateway's memory level off under steady load?
//
// Starts the instant upstream and the gateway (children, as in bench/llm-proxy.ts:
// request log at `info`, usage recorded to the embedded database), then sends a
// steady open-loop load of authenticated chat completions, half JSON and half
// streaming, for the whole duration. Every 10 s it samples the gateway's resident
// memory (VmRSS from /proc, which includes the embedded database's worker thread),
// its V8 heap (over IPC), its CPU and the latency seen by the client; it prints a
// line every minute. At the end: RSS at start, end and maximum, and the growth over
// the second half (least-squares slope × its length). Verdict: memory levels off
// when the second half grows by less than 10 % or less than 20 MiB.
//
// Environment: BENCH_SOAK_SECONDS (default 600), BENCH_SOAK_RATE (req/s, default 400),
// BENCH_SOAK_SAMPLE_SECONDS (default 10), BENCH_LOG_LEVEL (default info).
// Results: stdout, and bench/results/soak-<time>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { VERSION } from '../src/context.js';
import { startChild } from './support/children.js';
import { startGateway, type GatewayChild } from './support/gateway.js';
import { gatewayRequestBody } from './support/fixtures.js';
import { cpuMs, mainThreadCpuMs, rssBytes } from './support/proc.js';
import { boundedInt, fmt, mib, slope, summarize } from './support/stats.js';

const SECONDS = boundedInt('BENCH_SOAK_SECONDS', 600, 10, 24 * 3600);
const RATE = boundedInt('BENCH_SOAK_RATE', 400, 1, 10_000);
const SAMPLE_SECONDS = boundedInt('BENCH_SOAK_SAMPLE_SECONDS', 10, 1, 600);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'info';
const MiB = 1024 * 1024;

interface Sample {
  /** Seconds since the load started. */
  t: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Gateway CPU over the interval, as a share of one core: all threads, and the main thread alone. */
  cpuShare: number;
  mainThreadCpuShare: number;
  ok: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
}

/** Open-loop load: `rate` requests per second, alternating JSON and streaming, until stopped. */
class SteadyLoad {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly bodies = [gatewayRequestBody(false), gatewayRequestBody(true)];
  private latencies: number[] = [];
  private counts = { ok: 0, non2xx: 0, errors: 0 };
  private sent = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly gateway: GatewayChild,
    private readonly rate: number,
  ) {
    const url = new URL(gateway.chatUrl);
    this.pool = new Pool(url.origin, { connections: 64, keepAliveTimeout: 60_000 });
    this.path = url.pathname;
  }

  start(): void {
    const start = performance.now();
    const tick = () => {
      const due = Math.floor(((performance.now() - start) * this.rate) / 1000) + 1;
      while (this.sent < due) {
        const request = this.one(this.bodies[this.sent++ % 2]!);
        this.inFlight.add(request);
        void request.finally(() => this.inFlight.delete(request));
      }
      this.timer = setTimeout(tick, 1);
    };
    tick();
  }

  private async one(body: string): Promise<void> {
    const t0 = performance.now();
    try {
      const answer = await this.pool.request({
        path: this.path,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...this.gateway.headers },
        body,
      });
      await answer.body.arrayBuffer();
      if (answer.statusCode === 200) {
        this.counts.ok++;
        this.latencies.push(performance.now() - t0);
      } else this.counts.non2xx++;
    } catch {
      this.counts.errors++;
    }
  }

  /** Counts and latencies since the last call. */
  take(): { ok: number; non2xx: number; errors: number; latencies: number[] } {
    const taken = { ...this.counts, latencies: this.latencies };
    this.counts = { ok: 0, non2xx: 0, errors: 0 };
    this.latencies = [];
    return taken;
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    await Promise.all(this.inFlight);
    await this.pool.close();
  }
}

function growthVerdict(samples: Sample[]): { secondHalfGrowth: number; midRss: number; slopeMiBPerMinute: number; levelsOff: boolean } {
  const last = samples[samples.length - 1]!;
  const secondHalf = samples.filter((s) => s.t >= last.t / 2);
  const perSecond = slope(secondHalf.map((s) => ({ x: s.t, y: s.rss })));
  const span = secondHalf[secondHalf.length - 1]!.t - secondHalf[0]!.t;
  const secondHalfGrowth = perSecond * span;
  const midRss = secondHalf[0]!.rss;
  return {
    secondHalfGrowth,
    midRss,
    slopeMiBPerMinute: (perSecond * 60) / MiB,
    levelsOff: secondHalfGrowth < 0.1 * midRss || secondHalfGrowth < 20 * MiB,
  };
}

async function main(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('the soak reads memory from /proc: Linux only');
  console.log(
    `gateway ${VERSION} soak: ${SECONDS} s at ${RATE} req/s (half JSON, half streaming), sampled every ${SAMPLE_SECONDS} s; log level ${LOG_LEVEL}; node ${process.version}, ${os.cpus().length} CPUs`,
  );
  const upstream = await startChild<{ url: string }>('instant upstream', './instant-upstream.ts');
  let gateway: GatewayChild | undefined;
  try {
    gateway = await startGateway({ upstreamUrl: upstream.info.url, logLevel: LOG_LEVEL });
    const pid = gateway.pid;
    const load = new SteadyLoad(gateway, RATE);
    const samples: Sample[] = [];
    const started = performance.now();
    let cpuBefore = cpuMs(pid);
    let mainBefore = mainThreadCpuMs(pid);
    let lastSampleAt = started;
    const first = await gateway.memory();
    console.log(`before the load: RSS ${mib(rssBytes(pid))}, heap used ${mib(first.heapUsed)}`);
    load.start();
    console.log(
      '| minute | RSS | heap used | heap total | external | req/s | p50 ms | p99 ms | CPU | of which main thread | non-2xx | errors |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    let printedAt = 0;
    let minute = { ok: 0, non2xx: 0, errors: 0, latencies: [] as number[] };
    for (let elapsed = SAMPLE_SECONDS; elapsed <= SECONDS; elapsed += SAMPLE_SECONDS) {
      await new Promise((resolve) => setTimeout(resolve, started + elapsed * 1000 - performance.now()));
      const now = performance.now();
      const taken = load.take();
      const memory = await gateway.memory();
      const cpuNow = cpuMs(pid);
      const mainNow = mainThreadCpuMs(pid);
      const latency = summarize(taken.latencies);
      samples.push({
        t: elapsed,
        rss: rssBytes(pid),
        heapUsed: memory.heapUsed,
        heapTotal: memory.heapTotal,
        external: memory.external,
        arrayBuffers: memory.arrayBuffers,
        cpuShare: (cpuNow - cpuBefore) / (now - lastSampleAt),
        mainThreadCpuShare: (mainNow - mainBefore) / (now - lastSampleAt),
        ok: taken.ok,
        non2xx: taken.non2xx,
        errors: taken.errors,
        p50: latency.p50,
        p99: latency.p99,
      });
      cpuBefore = cpuNow;
      mainBefore = mainNow;
      lastSampleAt = now;
      minute = {
        ok: minute.ok + taken.ok,
        non2xx: minute.non2xx + taken.non2xx,
        errors: minute.errors + taken.errors,
        latencies: minute.latencies.concat(taken.latencies),
      };
      if (elapsed % 60 === 0 || elapsed + SAMPLE_SECONDS > SECONDS) {
        const s = samples[samples.length - 1]!;
        const window = elapsed - printedAt;
        const since = samples.filter((x) => x.t > printedAt);
        const cpu = since.reduce((sum, x) => sum + x.cpuShare, 0) / since.length;
        const main = since.reduce((sum, x) => sum + x.mainThreadCpuShare, 0) / since.length;
        const m = summarize(minute.latencies);
        console.log(
          `| ${fmt(elapsed / 60, 1)} | ${mib(s.rss)} | ${mib(s.heapUsed)} | ${mib(s.heapTotal)} | ${mib(s.external)} | ${fmt(minute.ok / window, 0)} | ${fmt(m.p50, 2)} | ${fmt(m.p99, 2)} | ${fmt(cpu * 100, 0)} % | ${fmt(main * 100, 0)} % | ${minute.non2xx} | ${minute.errors} |`,
        );
        minute = { ok: 0, non2xx: 0, errors: 0, latencies: [] };
        printedAt = elapsed;
      }
    }
    await load.stop();

    const rss = samples.map((s) => s.rss);
    const verdict = growthVerdict(samples);
    const heapSlope = (slope(samples.filter((s) => s.t >= SECONDS / 2).map((s) => ({ x: s.t, y: s.heapUsed }))) * 60) / MiB;
    const totals = samples.reduce((sum, s) => ({ ok: sum.ok + s.ok, non2xx: sum.non2xx + s.non2xx, errors: sum.errors + s.errors }), {
      ok: 0,
      non2xx: 0,
      errors: 0,
    });
    console.log();
    console.log(`requests: ${totals.ok} answered 200, ${totals.non2xx} non-2xx, ${totals.errors} errors`);
    console.log(`RSS: first sample ${mib(rss[0]!)}, end ${mib(rss[rss.length - 1]!)}, max ${mib(Math.max(...rss))}`);
    console.log(
      `second half: RSS ${verdict.secondHalfGrowth >= 0 ? '+' : ''}${mib(verdict.secondHalfGrowth)} (${fmt((verdict.secondHalfGrowth / verdict.midRss) * 100, 1)} %; slope ${fmt(verdict.slopeMiBPerMinute, 3)} MiB/min); ` +
        `heap used slope ${fmt(heapSlope, 3)} MiB/min`,
    );
    console.log(
      `verdict: ${verdict.levelsOff ? 'PASS: memory levels off' : 'FAIL: memory keeps growing'} (second-half growth < 10 % or < 20 MiB)`,
    );

    const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');
    mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          version: VERSION,
          node: process.version,
          cpus: os.cpus().length,
          seconds: SECONDS,
          rate: RATE,
          logLevel: LOG_LEVEL,
          totals,
          verdict,
          heapUsedSlopeMiBPerMinute: heapSlope,
          samples,
        },
        null,
        2,
      ),
    );
    console.log(`results written to ${path.relative(process.cwd(), file)}`);
  } finally {
    await gateway?.close();
    await upstream.stop();
  }
}

await main();
