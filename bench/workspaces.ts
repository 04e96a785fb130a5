// `npm run bench`: authenticated GET /api/os/workspaces with an API key under load.
//
// Starts the real gateway (embedded PGlite, plain HTTP, request logging at the shipped
// default level `info`, written asynchronously to /dev/null) on loopback,
// seeds a tenant, a few workspaces and an API key, warms up, then drives it with
// autocannon (in a worker thread, so the load generator does not share the gateway's
// event loop). For scale it measures, in the same run, the same credential path on a
// route that needs no database, the gateway's GET /health, and a bare node:http server
// answering the same JSON; it counts database queries per request to show that the
// key path is served from the cache.
//
// Environment: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 20),
// BENCH_WARMUP (s, default 3), BENCH_LOG_LEVEL (default info; `silent` to leave logging out). Results: stdout, and bench/results/<time>.json.
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import autocannon, { type Result } from 'autocannon';
import { pino } from 'pino';
import { loadConfig } from '../src/platform/config.js';
import { createContext, VERSION } from '../src/context.js';
import { buildApp } from '../src/gateway/app.js';
import { createTenant } from '../src/areas/auth/tenants/service.js';
import { issueApiKey } from '../src/areas/auth/api-keys/service.js';
import { createWorkspace } from '../src/areas/os/workspaces/service.js';
import { boundedInt } from './support/stats.js';
import { preparedWordVectors } from './support/word-vectors.js';

const DURATION = boundedInt('BENCH_DURATION', 10, 1, 120);
const CONNECTIONS = boundedInt('BENCH_CONNECTIONS', 20, 1, 200);
const WARMUP = boundedInt('BENCH_WARMUP', 3, 0, 30);
const WORKSPACES = 5;
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'info';

interface Row {
  name: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function load(url: string, headers: Record<string, string>, duration: number): Promise<Result> {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration, workers: 1, timeout: 10 });
  // Let the requests still in flight when the run stopped finish, so counters belong to one run.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return result;
}

function row(name: string, result: Result): Row {
  const requests = Object.values(result.statusCodeStats ?? {}).reduce((sum, s) => sum + Number(s.count), 0) || result.requests.total;
  return {
    name,
    requests,
    rps: requests / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
  const config = loadConfig({
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_TLS: 'off',
    GATEWAY_LOG_LEVEL: LOG_LEVEL,
    GATEWAY_SECRET: randomBytes(32).toString('base64url'),
    ...(await preparedWordVectors()),
  });
  console.log(
    `gateway ${VERSION} bench: embedded database in ${dataDir}; ${CONNECTIONS} connections, ${DURATION} s per run, ${WARMUP} s warm-up, log level ${LOG_LEVEL}`,
  );
  const ctx = await createContext(config);
  // The gateway's own asynchronous destination, pointed at /dev/null so log lines cost what they cost without filling the terminal.
  const app = await buildApp(ctx, { logStream: pino.destination({ dest: '/dev/null', sync: false }) });
  let bare: http.Server | undefined;
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;
    const base = `http://127.0.0.1:${port}`;

    const tenant = await createTenant(ctx, `bench-${randomBytes(3).toString('hex')}`);
    const { key } = await issueApiKey(ctx, tenant.id, { name: 'bench' }, null);
    const principal = { tenantId: tenant.id, kind: 'apiKey' as const, subject: 'bench', roles: [], scopes: [] };
    for (let i = 0; i < WORKSPACES; i++)
      await createWorkspace(ctx, principal, { name: `Workspace ${i}`, description: 'seeded by the benchmark' });

    // Sanity: the request we measure answers 200 with the seeded data.
    const check = await fetch(`${base}/api/os/workspaces`, { headers: { 'x-api-key': key } });
    const listed = (await check.json()) as { data: unknown[] };
    if (check.status !== 200 || listed.data.length !== WORKSPACES) throw new Error(`GET /api/os/workspaces answered ${check.status}`);
    const body = JSON.stringify(listed);

    // Baseline: a bare node:http server answering the same JSON, nothing else.
    bare = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    await new Promise<void>((resolve) => bare!.listen(0, '127.0.0.1', resolve));
    const bareUrl = `http://127.0.0.1:${(bare.address() as { port: number }).port}/`;

    if (WARMUP > 0) {
      process.stdout.write('warming up… ');
      await load(`${base}/api/os/workspaces`, { 'x-api-key': key }, WARMUP);
      await load(bareUrl, {}, Math.min(WARMUP, 2));
      console.log('done');
    }

    // Count queries, and separately those that look an API key up, during the measured run only.
    let keyLookups = 0;
    const query = ctx.db.query.bind(ctx.db);
    (ctx.db as { query: typeof ctx.db.query }).query = (sql, params) => {
      if (/\bapi_keys\b/.test(sql) && /key_hash/.test(sql)) keyLookups++;
      return query(sql, params);
    };
    const queriesBefore = ctx.db.stats.queries;
    const workspaces = row('GET /api/os/workspaces (X-API-Key)', await load(`${base}/api/os/workspaces`, { 'x-api-key': key }, DURATION));
    const queries = ctx.db.stats.queries - queriesBefore;
    const lookups = keyLookups;

    // The edge alone: the same credential path (cached key, internal token, guard) on a
    // route that answers without touching the database (a malformed id is a 404 by shape).
    const edgeMark = ctx.db.stats.queries;
    const edgeOnly = row(
      'edge only: authenticated 404, no DB',
      await load(`${base}/api/os/workspaces/not-an-id`, { 'x-api-key': key }, DURATION),
    );
    const edgeQueries = ctx.db.stats.queries - edgeMark;
    const health = row('GET /health (gateway, no auth)', await load(`${base}/health`, {}, DURATION));
    const baseline = row('bare node:http, same JSON', await load(bareUrl, {}, DURATION));

    const rows = [workspaces, edgeOnly, health, baseline];
    console.log();
    console.log('| run | requests | req/s | p50 ms | p99 ms | non-2xx | errors |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const r of rows)
      console.log(`| ${r.name} | ${r.requests} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} |`);
    console.log();
    const ratio = workspaces.rps / baseline.rps;
    console.log(`authenticated list / bare node:http: ${(ratio * 100).toFixed(1)} % of the baseline's requests/s`);
    console.log(`authenticated list / gateway /health: ${((workspaces.rps / health.rps) * 100).toFixed(1)} %`);
    console.log(
      `database queries per request during the list run: ${(queries / workspaces.requests).toFixed(3)} ` +
        `(${queries} queries for ${workspaces.requests} requests; API-key lookups: ${lookups}; the one query per request is the list itself)`,
    );
    console.log(
      `authenticated edge path without the database / bare node:http: ${((edgeOnly.rps / baseline.rps) * 100).toFixed(1)} % (${edgeQueries} queries in that run)`,
    );
    if (workspaces.non2xx > 0 || workspaces.errors > 0)
      console.log('WARNING: the measured run had non-2xx answers or errors; the figures are not valid.');

    const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');
    mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `workspaces-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          version: VERSION,
          node: process.version,
          cpus: os.cpus().length,
          connections: CONNECTIONS,
          durationSeconds: DURATION,
          rows,
          ratio,
          queries,
          keyLookups: lookups,
          edgeOnlyQueries: edgeQueries,
        },
        null,
        2,
      ),
    );
    console.log(`results written to ${path.relative(process.cwd(), file)}`);
  } finally {
    if (bare) await new Promise((resolve) => bare!.close(resolve));
    await app.close();
    await ctx.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
