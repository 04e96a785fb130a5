// `npm run bench:api-docs`: the first request for the API document after a start.
//
// Starts the real gateway (the compiled build, as `gateway start` runs it; plain HTTP,
// no engine) once per document and round, then sends the first GET /openapi.json (or
// GET /docs/yaml) together with a GET /health, and prints how long each took. Before
// issue 26 the first /docs/yaml built the document on the event loop (0.73 s), and the
// /health beside it waited as long. Also prints
// the first /health after a start, alone, as the baseline: what any first request costs
// (connection, first run of the hooks) on this machine at this moment.
//
// Environment: BENCH_ROUNDS (starts per document, default 3).
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { startChild } from './support/children.js';
import { productionNodeFlags } from './support/gateway.js';
import type { GatewayInfo } from './support/gateway-process.js';
import { boundedInt } from './support/stats.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

const ROUNDS = boundedInt('BENCH_ROUNDS', 3, 1, 20);
// /health alone: the baseline.
const DOCUMENTS = ['/openapi.json', '/docs/yaml', '/health'] as const;
const TARGET_MS = 50;

interface Timing {
  status: number;
  bytes: number;
  ms: number;
}

async function timed(url: string): Promise<Timing> {
  const started = performance.now();
  const answer = await request(url);
  const bytes = (await answer.body.arrayBuffer()).byteLength;
  return { status: answer.statusCode, bytes, ms: performance.now() - started };
}

async function firstRequest(document: string): Promise<{ startMs: number; document: Timing; health: Timing }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
  const started = performance.now();
  const gateway = await startChild<GatewayInfo>('gateway', './gateway-process.ts', {
    nodeArgs: productionNodeFlags(),
    // A loaded machine (other work on the 2 cores) can take a minute and more to migrate and start.
    readyTimeoutMs: 240_000,
    env: {
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_TLS: 'off',
      HOST: '127.0.0.1',
      PORT: '0',
      GATEWAY_LOG_LEVEL: 'info',
      GATEWAY_LOCAL_ENGINE: 'off',
      GATEWAY_SECRET: randomBytes(32).toString('base64url'),
    },
  });
  const startMs = performance.now() - started;
  try {
    // The document first, /health a moment later, on its own connection: does it wait for the document?
    const documentAnswer = timed(`${gateway.info.url}${document}`);
    if (document === '/health') {
      const alone = await documentAnswer;
      return { startMs, document: alone, health: alone };
    }
    await new Promise((resolve) => setImmediate(resolve));
    const [documentTiming, health] = await Promise.all([documentAnswer, timed(`${gateway.info.url}/health`)]);
    return { startMs, document: documentTiming, health };
  } finally {
    await gateway.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  console.log(`bench:api-docs: ${ROUNDS} start(s) per document; first request for it, with GET /health in flight beside it`);
  const summary: string[] = [];
  const starts: number[] = [];
  for (const document of DOCUMENTS) {
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const result = await firstRequest(document);
      if (result.document.status !== 200 || result.health.status !== 200)
        throw new Error(`${document}: ${result.document.status}, /health: ${result.health.status}`);
      starts.push(result.startMs);
      rounds.push(result);
      console.log(
        `  ${document.padEnd(14)} round ${round + 1}: ${result.document.ms.toFixed(1)} ms (${(result.document.bytes / 1024).toFixed(0)} KB); ` +
          `/health beside it ${result.health.ms.toFixed(1)} ms; start ${result.startMs.toFixed(0)} ms`,
      );
    }
    const worst = Math.max(...rounds.map((r) => r.document.ms));
    if (document === '/health') {
      summary.push(
        `/health alone (the baseline): first request median ${median(rounds.map((r) => r.document.ms)).toFixed(1)} ms, worst ${worst.toFixed(1)} ms`,
      );
      continue;
    }
    summary.push(
      `${document}: first request median ${median(rounds.map((r) => r.document.ms)).toFixed(1)} ms, worst ${worst.toFixed(1)} ms ` +
        `(target < ${TARGET_MS} ms: ${worst < TARGET_MS ? 'met' : 'MISSED'}); /health beside it median ${median(rounds.map((r) => r.health.ms)).toFixed(1)} ms`,
    );
  }
  console.log('\nsummary');
  for (const line of summary) console.log(`  ${line}`);
  console.log(`  start to ready (process spawn, migrations, tenant and key, document built): median ${median(starts).toFixed(0)} ms`);
  console.log(`  load average while it ran: ${os.loadavg()[0]!.toFixed(1)} on ${os.availableParallelism()} cores`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
