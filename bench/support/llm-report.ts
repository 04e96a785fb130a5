// The LLM proxy benchmark's rows, its checks against the targets of issue 3, and
// the tables it prints (Markdown, ready for the README).
import type { SaturationResult } from './load.js';
import { fmt, type Summary } from './stats.js';

export type Mode = 'json' | 'stream';
export type PathName = 'direct' | 'bare proxy' | 'gateway' | 'gateway (log silent)' | 'gateway (metrics)';

export interface SaturationRow extends SaturationResult {
  path: PathName;
  mode: Mode;
  /** CPU of the proxy process (none for direct) per completed request, ms. */
  proxyCpuMsPerRequest: number | null;
  /** The part of it on the proxy's main thread (event loop); the rest is GC, DB worker, libuv. */
  proxyMainThreadCpuMsPerRequest: number | null;
  upstreamCpuMsPerRequest: number;
  /** Requests the upstream served and connections it accepted during the measured run. */
  upstreamRequests: number;
  upstreamConnections: number;
  /** Gateway only: database queries per request (the usage log is written in batches). */
  dbQueriesPerRequest: number | null;
  /** Which round (0-based); -1 for the median over the rounds. */
  round: number;
}

export interface PacedRow {
  path: PathName;
  mode: Mode;
  rate: number;
  sent: number;
  achievedRps: number;
  latency: Summary;
  non2xx: number;
  errors: number;
  proxyCpuMsPerRequest: number | null;
}

export interface FirstByteRow {
  path: PathName;
  concurrency: number;
  firstByte: Summary;
  firstToken: Summary;
  complete: Summary;
  failures: number;
}

export interface Check {
  name: string;
  value: number;
  limit: string;
  pass: boolean;
}

export const TARGETS = {
  /** Gateway requests/s as a share of the bare proxy's, at least. */
  throughputShare: 0.4,
  /** Gateway CPU per authenticated request, ms, at most. */
  cpuMsPerRequest: 0.15,
  /** Added latency over direct at the fixed rate, ms, at most. */
  addedP50Ms: 0.5,
  addedP99Ms: 2,
  /** First streamed byte later than direct, ms, at most. */
  firstByteDelayMs: 1,
};

const find = <T extends { path: PathName }>(rows: T[], path: PathName, extra: (row: T) => boolean = () => true) =>
  rows.find((row) => row.path === path && extra(row));

export function verdicts(saturation: SaturationRow[], paced: PacedRow[], firstBytes: FirstByteRow[], rate: number): Check[] {
  const checks: Check[] = [];
  for (const mode of ['json', 'stream'] as const) {
    const gateway = find(saturation, 'gateway', (r) => r.mode === mode);
    const bare = find(saturation, 'bare proxy', (r) => r.mode === mode);
    if (!gateway || !bare) continue;
    checks.push({
      name: `${mode}: gateway req/s ÷ bare proxy req/s`,
      value: gateway.rps / bare.rps,
      limit: `≥ ${TARGETS.throughputShare}`,
      pass: gateway.rps / bare.rps >= TARGETS.throughputShare,
    });
    const cpu = gateway.proxyCpuMsPerRequest!;
    checks.push({
      name: `${mode}: gateway CPU ms per request (max throughput)`,
      value: cpu,
      limit: `≤ ${TARGETS.cpuMsPerRequest}`,
      pass: cpu <= TARGETS.cpuMsPerRequest,
    });
  }
  for (const mode of ['json', 'stream'] as const) {
    const gateway = find(paced, 'gateway', (r) => r.mode === mode);
    const direct = find(paced, 'direct', (r) => r.mode === mode);
    if (!gateway || !direct) continue;
    const addedP50 = gateway.latency.p50 - direct.latency.p50;
    const addedP99 = gateway.latency.p99 - direct.latency.p99;
    checks.push({
      name: `${mode}: added p50 ms at ${rate} req/s`,
      value: addedP50,
      limit: `≤ ${TARGETS.addedP50Ms}`,
      pass: addedP50 <= TARGETS.addedP50Ms,
    });
    checks.push({
      name: `${mode}: added p99 ms at ${rate} req/s`,
      value: addedP99,
      limit: `≤ ${TARGETS.addedP99Ms}`,
      pass: addedP99 <= TARGETS.addedP99Ms,
    });
  }
  for (const gateway of firstBytes.filter((r) => r.path === 'gateway')) {
    const direct = find(firstBytes, 'direct', (r) => r.concurrency === gateway.concurrency);
    if (!direct) continue;
    const delay = gateway.firstByte.p50 - direct.firstByte.p50;
    checks.push({
      name: `stream ×${gateway.concurrency}: first byte p50, ms later than direct`,
      value: delay,
      limit: `≤ ${TARGETS.firstByteDelayMs}`,
      pass: delay <= TARGETS.firstByteDelayMs,
    });
  }
  return checks;
}

export function printReport(
  saturation: SaturationRow[],
  paced: PacedRow[],
  firstBytes: FirstByteRow[],
  checks: Check[],
  rate: number,
): void {
  const line = (cells: (string | number)[]) => console.log(`| ${cells.join(' | ')} |`);
  const cpu = (value: number | null) => (value === null ? '–' : fmt(value, 3));

  console.log('\nMaximum throughput (autocannon; latency in whole ms)\n');
  line([
    'path',
    'mode',
    'req/s',
    'p50 ms',
    'p99 ms',
    'proxy CPU ms/req',
    'of which main thread',
    'upstream CPU ms/req',
    'upstream conns opened',
    'non-2xx',
    'errors',
  ]);
  line(['---', '---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']);
  for (const r of saturation) {
    line([
      r.path,
      r.mode,
      fmt(r.rps, 0),
      r.p50,
      r.p99,
      cpu(r.proxyCpuMsPerRequest),
      cpu(r.proxyMainThreadCpuMsPerRequest),
      fmt(r.upstreamCpuMsPerRequest, 3),
      r.upstreamConnections,
      r.non2xx,
      r.errors,
    ]);
  }

  for (const r of saturation.filter((row) => row.dbQueriesPerRequest !== null)) {
    console.log(`  ${r.path} ${r.mode}: ${fmt(r.dbQueriesPerRequest!, 4)} database queries per request (usage records go out in batches)`);
  }

  console.log(`\nFixed rate: ${rate} req/s, open loop (ms)\n`);
  line(['path', 'mode', 'achieved req/s', 'p50', 'p90', 'p99', 'max', 'added p50', 'added p99', 'proxy CPU ms/req', 'non-2xx', 'errors']);
  line(['---', '---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']);
  for (const r of paced) {
    const direct = find(paced, 'direct', (d) => d.mode === r.mode)!;
    const added = (a: number, b: number) => (r.path === 'direct' ? '–' : `+${fmt(a - b, 3)}`);
    line([
      r.path,
      r.mode,
      fmt(r.achievedRps, 0),
      fmt(r.latency.p50, 3),
      fmt(r.latency.p90, 3),
      fmt(r.latency.p99, 3),
      fmt(r.latency.max, 1),
      added(r.latency.p50, direct.latency.p50),
      added(r.latency.p99, direct.latency.p99),
      cpu(r.proxyCpuMsPerRequest),
      r.non2xx,
      r.errors,
    ]);
  }

  console.log('\nStreaming: time to first byte and to first token (ms)\n');
  line([
    'path',
    'concurrent',
    'first byte p50',
    'first byte p99',
    'first token p50',
    'first token p99',
    'complete p50',
    'complete p99',
    'failures',
  ]);
  line(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']);
  for (const r of firstBytes)
    line([
      r.path,
      r.concurrency,
      fmt(r.firstByte.p50, 3),
      fmt(r.firstByte.p99, 3),
      fmt(r.firstToken.p50, 3),
      fmt(r.firstToken.p99, 3),
      fmt(r.complete.p50, 3),
      fmt(r.complete.p99, 3),
      r.failures,
    ]);
  for (const gateway of firstBytes.filter((r) => r.path === 'gateway')) {
    const direct = find(firstBytes, 'direct', (d) => d.concurrency === gateway.concurrency);
    if (!direct) continue;
    console.log(
      `  ×${gateway.concurrency}: gateway − direct: first byte p50 ${fmt(gateway.firstByte.p50 - direct.firstByte.p50, 3)}, p99 ${fmt(gateway.firstByte.p99 - direct.firstByte.p99, 3)}; ` +
        `first token p50 ${fmt(gateway.firstToken.p50 - direct.firstToken.p50, 3)}, p99 ${fmt(gateway.firstToken.p99 - direct.firstToken.p99, 3)}`,
    );
  }

  const quiet = saturation.filter((r) => r.path === 'gateway (log silent)');
  for (const q of quiet) {
    const loud = find(saturation, 'gateway', (r) => r.mode === q.mode);
    if (loud)
      console.log(
        `  ${q.mode}: logging at info costs ${fmt((loud.proxyCpuMsPerRequest! - q.proxyCpuMsPerRequest!) * 1000, 0)} µs CPU per request (${fmt(loud.rps, 0)} vs ${fmt(q.rps, 0)} req/s silent)`,
      );
  }
  for (const m of saturation.filter((r) => r.path === 'gateway (metrics)')) {
    const plain = find(saturation, 'gateway', (r) => r.mode === m.mode);
    if (plain)
      console.log(
        `  ${m.mode}: metrics cost ${fmt(metricsCostUs(m, plain), 1)} µs CPU per request (${fmt(m.rps, 0)} vs ${fmt(plain.rps, 0)} req/s without; target ≤ 10 µs)`,
      );
  }
  const bare = (mode: Mode) => find(saturation, 'bare proxy', (r) => r.mode === mode);
  for (const mode of ['json', 'stream'] as const) {
    const b = bare(mode);
    const direct = find(saturation, 'direct', (r) => r.mode === mode);
    if (b && direct) console.log(`  ${mode}: bare proxy ÷ direct: ${fmt((b.rps / direct.rps) * 100, 1)} % of direct req/s`);
  }

  if (checks.length > 0) {
    console.log('\nTargets (issue 3)\n');
    line(['check', 'measured', 'target', 'verdict']);
    line(['---', '---:', '---', '---']);
    for (const c of checks) line([c.name, fmt(c.value, 3), c.limit, c.pass ? 'PASS' : 'FAIL']);
  }
  const invalid = [...saturation, ...paced].filter((r) => r.non2xx > 0 || r.errors > 0);
  if (invalid.length > 0)
    console.log(
      `\nWARNING: runs with non-2xx answers or errors (figures not valid): ${invalid.map((r) => `${r.path} ${r.mode}`).join(', ')}`,
    );
}

/** CPU per request of the gateway with /metrics on (GATEWAY_METRICS_TOKEN) minus the same gateway without, in µs. */
export function metricsCostUs(withMetrics: SaturationRow, without: SaturationRow): number {
  return (withMetrics.proxyCpuMsPerRequest! - without.proxyCpuMsPerRequest!) * 1000;
}
