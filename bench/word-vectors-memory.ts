// The built-in word-vector embedder's cost to the server process: resident memory
// (RSS, which counts the worker thread too) before and after ready() and after 1000
// embeds of ~300-token chunks, the one-time conversion's duration, embed throughput,
// and the calling thread's event-loop delay meanwhile (it should stay near idle).
//
//   node --expose-gc --import tsx bench/word-vectors-memory.ts
//   npm run build && BENCH_FROM_DIST=1 node --expose-gc --import tsx bench/word-vectors-memory.ts
//
// The second form runs the compiled embedder, as `gateway start` does: from source the
// worker thread also loads the TypeScript loader, which costs memory production never pays.
// Environment: BENCH_DATA_DIR (reuse a converted file; default: a fresh temp dir, so the
// conversion is timed), BENCH_TEXTS (default 1000). Results: stdout, and bench/results/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { boundedInt } from './support/stats.js';

type EmbedderModule = typeof import('../src/areas/os/embedders/word-vectors/embedder.js');

const TEXTS = boundedInt('BENCH_TEXTS', 1000, 10, 100_000);
const fromDist = process.env.BENCH_FROM_DIST === '1';
const MB = 1024 ** 2;

const { WordVectorEmbedder } = (await import(
  fromDist ? '../dist/areas/os/embedders/word-vectors/embedder.js' : '../src/areas/os/embedders/word-vectors/embedder.js'
)) as EmbedderModule;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) console.warn('Run with --expose-gc for steadier figures.');

async function settledRss(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return process.memoryUsage().rss;
}

/** ~300-token chunks of varied English, so lookups hit many different rows. */
function chunks(count: number): string[] {
  const words = `employees receive annual leave paid holidays the company policy requires managers to approve requests
    in advance travel expenses are reimbursed within thirty days when receipts are submitted through the finance portal
    security passwords must contain at least fourteen characters and change every quarter the office building opens at
    eight and closes at seven on weekdays visitors sign in at reception customers may return products within fourteen
    days for a full refund provided they are unused the warranty covers manufacturing defects for two years parental
    leave allows parents sixteen weeks of paid time after birth or adoption overtime is paid at one and a half times
    the hourly rate the board approves the budget every quarter fire drills are held twice a year`.split(/\s+/);
  let seed = 42;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % words.length;
  };
  return Array.from({ length: count }, () => Array.from({ length: 300 }, () => words[next()]).join(' '));
}

const ownDir = !process.env.BENCH_DATA_DIR;
const dataDir = process.env.BENCH_DATA_DIR || mkdtempSync(path.join(os.tmpdir(), 'gateway-word-vectors-'));
const texts = chunks(TEXTS);
const delay = monitorEventLoopDelay({ resolution: 5 });

const rssBefore = await settledRss();
const embedder = new WordVectorEmbedder({ dataDir });
delay.enable();
const readyStarted = performance.now();
await embedder.ready();
const readyMs = performance.now() - readyStarted;
delay.disable();
const readyDelayMaxMs = delay.max / 1e6;
const rssReady = await settledRss();

// Throughput: one batch of all the texts, then batches of 32 as ingestion would send them.
delay.reset();
delay.enable();
let started = performance.now();
await embedder.embed(texts);
const oneBatchMs = performance.now() - started;
started = performance.now();
for (let i = 0; i < texts.length; i += 32) await embedder.embed(texts.slice(i, i + 32));
const batchesMs = performance.now() - started;
delay.disable();
const embedDelayMaxMs = delay.max / 1e6;
const rssAfterEmbeds = await settledRss();
await embedder.close();
const rssClosed = await settledRss();

const result = {
  from: fromDist ? 'dist (compiled)' : 'src (tsx loader in the worker)',
  node: process.version,
  cpus: os.cpus().length,
  words: embedder.preparation?.words,
  converted: embedder.preparation?.converted,
  conversionMs: embedder.preparation?.conversionMs,
  loadMs: embedder.preparation?.loadMs,
  readyMs: Math.round(readyMs),
  rssMb: {
    before: +(rssBefore / MB).toFixed(1),
    ready: +(rssReady / MB).toFixed(1),
    afterEmbeds: +(rssAfterEmbeds / MB).toFixed(1),
    closed: +(rssClosed / MB).toFixed(1),
    addedByReady: +((rssReady - rssBefore) / MB).toFixed(1),
    addedAfterEmbeds: +((rssAfterEmbeds - rssBefore) / MB).toFixed(1),
  },
  throughput: {
    tokensPerText: 300,
    oneBatchTextsPerS: Math.round(texts.length / (oneBatchMs / 1000)),
    batchesOf32TextsPerS: Math.round(texts.length / (batchesMs / 1000)),
  },
  callingThreadMaxDelayMs: { duringReady: +readyDelayMaxMs.toFixed(1), duringEmbeds: +embedDelayMaxMs.toFixed(1) },
};
console.log(JSON.stringify(result, null, 2));
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  path.join('bench/results', `word-vectors-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
  `${JSON.stringify(result, null, 2)}\n`,
);
if (ownDir) rmSync(dataDir, { recursive: true, force: true });
