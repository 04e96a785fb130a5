// BENCH_WORKERS (bench/llm-proxy.ts): the gateway's chat throughput with 1, 2… worker
// processes (GATEWAY_WORKERS), each started as operators start it (`node bin/gateway.js
// start`, from the compiled build) on a throwaway PostgreSQL and Redis of its own
// (several workers run only there), against the instant upstream. Rounds interleave the
// worker counts, as the main benchmark interleaves its paths; throughput is the median
// over the rounds.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { gatewayRequestBody } from './fixtures.js';
import { saturate, type Target } from './load.js';
import { fmt } from './stats.js';
import { freePort, startThrowawayServices } from './throwaway-services.js';
import { preparedWordVectors } from './word-vectors.js';

const BIN = fileURLToPath(new URL('../../bin/gateway.js', import.meta.url));
const MODES = ['json', 'stream'] as const;
const ADMIN = { username: 'bench', password: randomBytes(12).toString('hex') };

export interface WorkersBenchOptions {
  counts: number[];
  upstreamUrl: string;
  rounds: number;
  connections: number;
  seconds: number;
  warmupSeconds: number;
  logLevel: string;
}

export interface WorkersRow {
  workers: number;
  mode: (typeof MODES)[number];
  rps: number[];
  medianRps: number;
  p99: number[];
  errors: number;
}

interface Started {
  workers: number;
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startGateway(workers: number, env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-workers-'));
  const child = spawn(process.execPath, [BIN, 'start'], {
    env: {
      ...env,
      ...(await preparedWordVectors()),
      PATH: process.env.PATH ?? '',
      GATEWAY_DATA_DIR: dataDir,
      PORT: String(port),
      GATEWAY_WORKERS: String(workers),
    },
    // The request log goes to /dev/null, as in the main benchmark; start-up lines are watched.
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const ready = workers > 1 ? new RegExp(`All ${workers} workers are serving`) : / is running at /;
  const deadline = Date.now() + 120_000;
  while (!ready.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      throw new Error(`gateway with ${workers} worker(s) did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    workers,
    url: `http://127.0.0.1:${port}`,
    child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function json(url: string, init: { method: string; headers?: Record<string, string>; body?: unknown }) {
  const answer = await request(url, {
    method: init.method as 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: JSON.stringify(init.body ?? {}),
  });
  const text = await answer.body.text();
  if (answer.statusCode >= 300) throw new Error(`${init.method} ${url}: ${answer.statusCode} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** An API key for the bench tenant, made over the API as an administrator would. */
async function createKey(gateway: Started): Promise<string> {
  const login = await json(`${gateway.url}/api/auth/login`, { method: 'POST', body: ADMIN });
  const created = await json(`${gateway.url}/api/auth/tenants/${login.user.tenantId}/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${login.token}` },
    body: { name: 'bench' },
  });
  return created.key;
}

async function waitForChat(target: Target, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const answer = await request(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: target.body,
    });
    last = `${answer.statusCode} ${(await answer.body.text()).slice(0, 300)}`;
    if (answer.statusCode === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`chat/completions never answered 200 (last: ${last})`);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export async function benchWorkers(options: WorkersBenchOptions): Promise<WorkersRow[]> {
  console.log(
    `chat throughput by GATEWAY_WORKERS (${options.counts.join(', ')}), on a throwaway PostgreSQL and Redis; ` +
      `${options.rounds} rounds, ${options.connections} connections, ${options.seconds} s per run`,
  );
  console.log(
    `  caveat: the load generator, the instant upstream, PostgreSQL and Redis share this machine's ${os.cpus().length} CPUs ` +
      'with the workers: a second worker competes with them for cores, so the ratio understates what 2 workers give on a host of their own.',
  );
  const services = await startThrowawayServices();
  const gateways: Started[] = [];
  try {
    const env = {
      DATABASE_URL: services.databaseUrl,
      REDIS_URL: services.redisUrl,
      GATEWAY_TLS: 'off',
      HOST: '127.0.0.1',
      GATEWAY_LOG_LEVEL: options.logLevel,
      GATEWAY_LOCAL_ENGINE: 'off',
      GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: options.upstreamUrl, name: 'instant-upstream' }]),
      GATEWAY_SECRET: randomBytes(32).toString('base64url'),
      GATEWAY_TENANT: 'bench',
      GATEWAY_ADMIN_USERNAME: ADMIN.username,
      GATEWAY_ADMIN_PASSWORD: ADMIN.password,
    };
    // One after the other: the first migrates the database and creates the tenant.
    for (const count of options.counts) gateways.push(await startGateway(count, env));
    // One database: one key serves every gateway.
    const key = await createKey(gateways[0]!);
    const target = (gateway: Started, mode: (typeof MODES)[number]): Target => ({
      name: `${gateway.workers} worker(s) ${mode}`,
      url: `${gateway.url}/api/llm/v1/chat/completions`,
      headers: { 'x-api-key': key },
      body: gatewayRequestBody(mode === 'stream'),
    });
    for (const gateway of gateways) await waitForChat(target(gateway, 'json'));

    const rows = new Map<string, WorkersRow>();
    for (let round = 0; round < options.rounds; round++) {
      if (options.rounds > 1) console.log(` round ${round + 1} of ${options.rounds}`);
      for (const mode of MODES)
        for (const gateway of gateways) {
          const t = target(gateway, mode);
          if (round === 0 && options.warmupSeconds > 0) await saturate(t, options.connections, options.warmupSeconds);
          await new Promise((resolve) => setTimeout(resolve, 500));
          const result = await saturate(t, options.connections, options.seconds);
          const row = rows.get(t.name) ?? { workers: gateway.workers, mode, rps: [], medianRps: 0, p99: [], errors: 0 };
          row.rps.push(result.rps);
          row.p99.push(result.p99);
          row.errors += result.errors + result.non2xx;
          rows.set(t.name, row);
          console.log(
            `  ${t.name}: ${fmt(result.rps, 0)} req/s, p99 ${result.p99} ms${result.non2xx || result.errors ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : ''}`,
          );
        }
    }
    const result = [...rows.values()].map((row) => ({ ...row, medianRps: median(row.rps) }));
    console.log(`\nGATEWAY_WORKERS   mode     req/s (median)   vs ${options.counts[0]}`);
    for (const row of result) {
      const one = result.find((r) => r.mode === row.mode && r.workers === options.counts[0]);
      const ratio = one ? row.medianRps / one.medianRps : Number.NaN;
      console.log(`  ${String(row.workers).padEnd(16)}${row.mode.padEnd(9)}${fmt(row.medianRps, 0).padStart(14)}   ${fmt(ratio, 2)}×`);
    }
    return result;
  } finally {
    for (const gateway of gateways) await gateway.stop().catch(() => undefined);
    services.stop();
  }
}
