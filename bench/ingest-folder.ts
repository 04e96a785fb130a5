// `npm run bench:ingest`: a tenant uploading a folder (issue 27, section 6).
//
// The real gateway runs in-process on a fresh embedded database (PGlite + pgvector)
// with the built-in word-vector embedder; one compute node, the test suite's fake
// OpenAI engine in a child process (bench/retrieval/fake-node.ts), answers chat at once.
// A folder is BENCH_FILES generated files (bench/retrieval/folder.ts: Markdown, plain
// text, HTML and CSV in turn, 5–15 chunks each) uploaded BENCH_BATCH at a time through
// POST /api/os/workspaces/{id}/documents (multipart) into a new workspace's default
// collection, timed from the first upload sent to the last document ready.
//
// Each round (BENCH_ROUNDS) interleaves three measurements, so a change of the
// machine's load shows in all of them alike:
//   1. a folder ingested alone → chunks/s (target ≥ 200);
//   2. chat/completions under a closed-loop load (BENCH_CHAT_CONNECTIONS for
//      BENCH_CHAT_SECONDS), idle → p99;
//   3. the same load while another folder is ingested → p99 (target ≤ 2× idle).
// Then the BM25 statistics and vectors of every collection are checked against its
// chunks: a figure over wrong data means nothing.
// Environment: BENCH_FILES (200), BENCH_BATCH (20), BENCH_ROUNDS (2), BENCH_CHAT_SECONDS
// (8), BENCH_CHAT_CONNECTIONS (10), BENCH_SEED (27), BENCH_LOG_LEVEL (warn),
// BENCH_INGEST_TIMEOUT (s, 600), BENCH_SQL_PROFILE (1: the database time per statement
// of each folder ingested alone, bench/support/sql-profile.ts). Results: stdout, and bench/results/ingest-folder-<time>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { VERSION } from '../src/context.js';
import { bulkIngest, type IngestFigures } from './retrieval/bulk-ingest.js';
import { FAKE_CHAT_MODEL } from './retrieval/fake-node.js';
import { type FolderFile, folderFiles } from './retrieval/folder.js';
import { type BenchTenant, startInProcessGateway } from './retrieval/gateway.js';
import { ProseGenerator, seededRandom } from './retrieval/prose.js';
import { atLeast, atMost, type Check, info, printTable, TARGETS } from './retrieval/scale-report.js';
import { type ChatFigures, chatLoad, chatTarget, waitForChat } from './retrieval/scale-load.js';
import { checkStatistics } from './retrieval/statistics-check.js';
import { startChild } from './support/children.js';
import { boundedInt, fmt } from './support/stats.js';
import { installSqlProfile, printSqlProfile, resetSqlProfile } from './support/sql-profile.js';
import { preparedWordVectors } from './support/word-vectors.js';

process.setSourceMapsEnabled(false);

const FILES = boundedInt('BENCH_FILES', 200, 4, 100_000);
const BATCH = boundedInt('BENCH_BATCH', 20, 1, 1000);
const ROUNDS = boundedInt('BENCH_ROUNDS', 2, 1, 50);
const CHAT_SECONDS = boundedInt('BENCH_CHAT_SECONDS', 8, 1, 300);
const CHAT_CONNECTIONS = boundedInt('BENCH_CHAT_CONNECTIONS', 10, 1, 500);
const SEED = boundedInt('BENCH_SEED', 27, 0, 2 ** 31);
const INGEST_TIMEOUT_MS = boundedInt('BENCH_INGEST_TIMEOUT', 600, 10, 86_400) * 1000;
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'warn';
const SQL_PROFILE = process.env.BENCH_SQL_PROFILE === '1';
const CHAT_WARMUP_SECONDS = 3;
const BUILT_IN_MODEL = 'gateway-word-vectors-en';

interface Round {
  alone: IngestFigures;
  idle: ChatFigures;
  busy: ChatFigures;
  duringIngest: IngestFigures;
  /** Whether the ingest outlasted the chat load (otherwise part of the load ran on an idle gateway). */
  overlapped: boolean;
}

const log = (line: string) => console.log(`  ${line}`);
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function main(): Promise<void> {
  console.log(
    `ingest-folder bench, gateway ${VERSION}: node ${process.version}, ${os.cpus().length} CPUs; ${FILES} files in batches of ${BATCH}, ` +
      `${ROUNDS} round(s), chat ${CHAT_CONNECTIONS} connections × ${CHAT_SECONDS} s, seed ${SEED}`,
  );
  const loadBefore = os.loadavg();
  const wordVectors = await preparedWordVectors();
  if (SQL_PROFILE) installSqlProfile();
  const node = await startChild<{ url: string }>('fake node', '../retrieval/fake-node.ts');
  const gateway = await startInProcessGateway({
    logLevel: LOG_LEVEL,
    env: {
      ...wordVectors,
      GATEWAY_LOCAL_ENGINE: 'off',
      GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: node.info.url, name: 'bench-fake-node' }]),
    },
  });
  const prose = new ProseGenerator(SEED);
  const sectionsRandom = seededRandom(SEED + 1);
  const folder = (files: number) => folderFiles(prose, files, () => 5 + Math.floor(sectionsRandom() * 11));
  const collections: string[] = [];
  const rounds: Round[] = [];
  const checks: Check[] = [];
  let statistics: Awaited<ReturnType<typeof checkStatistics>> | undefined;
  try {
    const tenant = await gateway.tenant('ingest-bench');
    const ingest = async (files: FolderFile[], what: string) => {
      const { collectionId, route } = await newWorkspace(tenant, what);
      collections.push(collectionId);
      return bulkIngest(tenant.call, collectionId, files, { filesPerUpload: BATCH, timeoutMs: INGEST_TIMEOUT_MS, uploadRoute: route });
    };

    console.log('warming up (the embedder, the extraction workers, the node)…');
    await (await ingest(folder(8), 'warm-up')).done;
    const chat = chatTarget(gateway.base, tenant, FAKE_CHAT_MODEL);
    await waitForChat(chat);
    await chatLoad(chat, CHAT_CONNECTIONS, CHAT_WARMUP_SECONDS);

    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}/${ROUNDS}:`);
      resetSqlProfile();
      const alone = await (await ingest(folder(FILES), `folder ${round}`)).done;
      log(`folder alone: ${figures(alone)}`);
      if (SQL_PROFILE) printSqlProfile(alone.chunks);
      const idle = await chatLoad(chat, CHAT_CONNECTIONS, CHAT_SECONDS);
      log(`chat idle: ${fmt(idle.rps, 0)} req/s, p50 ${idle.p50} ms, p99 ${idle.p99} ms`);
      const bulk = await ingest(folder(FILES), `folder ${round} under chat`);
      const busy = await chatLoad(chat, CHAT_CONNECTIONS, CHAT_SECONDS);
      const duringIngest = await bulk.done;
      const overlapped = duringIngest.seconds > CHAT_SECONDS;
      log(`chat during ingest: ${fmt(busy.rps, 0)} req/s, p50 ${busy.p50} ms, p99 ${busy.p99} ms; the folder: ${figures(duringIngest)}`);
      rounds.push({ alone, idle, busy, duringIngest, overlapped });
    }

    statistics = await checkStatistics(gateway.ctx.db, collections, BUILT_IN_MODEL);
    if (statistics.wrong.length) throw new Error(`the ingested statistics are wrong:\n${statistics.wrong.join('\n')}`);

    const speeds = rounds.map((r) => r.alone.chunksPerSecond);
    const ratios = rounds.map((r) => r.busy.p99 / Math.max(r.idle.p99, 1));
    const first = rounds[0]!.alone;
    checks.push(
      atLeast(
        'folder ingest, built-in embedder (chunks/s)',
        median(speeds),
        TARGETS.ingestChunksPerSecond,
        '',
        0,
        `median of ${rounds.length}: ${speeds.map((s) => fmt(s, 0)).join(', ')}; ${first.documents} files, ~${first.chunks} chunks, uploads took ${rounds.map((r) => fmt(r.alone.uploadSeconds, 1)).join(', ')} s`,
      ),
    );
    checks.push(
      info(
        'folder ingest under chat load (chunks/s)',
        fmt(median(rounds.map((r) => r.duringIngest.chunksPerSecond)), 0),
        rounds.map((r) => fmt(r.duringIngest.chunksPerSecond, 0)).join(', '),
      ),
    );
    checks.push(
      atMost(
        'chat p99 during ingest / idle',
        median(ratios),
        TARGETS.chatP99Ratio,
        '×',
        2,
        `median of ${rounds.length}: ${rounds.map((r) => `${r.busy.p99}/${r.idle.p99} ms`).join(', ')}; req/s ${rounds.map((r) => `${fmt(r.busy.rps, 0)} vs ${fmt(r.idle.rps, 0)}`).join(', ')}` +
          (rounds.every((r) => r.overlapped) ? '' : '; WARNING: an ingest ended before its chat load did, the figure flatters'),
      ),
    );
    checks.push(
      info('statistics checked', `${statistics.collections} collections`, `${statistics.chunks} chunks, ${statistics.terms} terms`),
    );
  } finally {
    await gateway.close();
    await node.stop();
  }

  const loadAfter = os.loadavg();
  console.log();
  printTable(checks);
  console.log(`\nload average (1 min) before ${fmt(loadBefore[0]!)}, after ${fmt(loadAfter[0]!)} on ${os.cpus().length} CPUs`);
  writeResults({ rounds, statistics, checks, loadAverage: { before: loadBefore, after: loadAfter } });
}

function figures(f: IngestFigures): string {
  return `${f.documents} files, ${f.chunks} chunks in ${fmt(f.seconds, 1)} s = ${fmt(f.chunksPerSecond, 0)} chunks/s (uploads ${fmt(f.uploadSeconds, 1)} s)`;
}

/** A new workspace; its uploads go to its default collection (the one the built-in embedder embeds). */
async function newWorkspace(tenant: BenchTenant, name: string): Promise<{ collectionId: string; route: string }> {
  const workspace = (await tenant.call('POST', '/api/os/workspaces', { name }, 201)) as { id: string };
  const page = (await tenant.call('GET', `/api/os/workspaces/${workspace.id}/collections`, undefined, 200)) as {
    data: { id: string; embedding: { model: string } | null }[];
  };
  const collection = page.data[0];
  if (page.data.length !== 1 || collection?.embedding?.model !== BUILT_IN_MODEL)
    throw new Error(`a new workspace's collections: ${JSON.stringify(page.data)}`);
  return { collectionId: collection.id, route: `/api/os/workspaces/${workspace.id}/documents` };
}

function writeResults(results: Record<string, unknown>): void {
  const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `ingest-folder-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  const settings = { FILES, BATCH, ROUNDS, CHAT_SECONDS, CHAT_CONNECTIONS, SEED };
  const environment = { version: VERSION, node: process.version, cpus: os.cpus().length };
  writeFileSync(file, JSON.stringify({ ...environment, settings, ...results }, null, 2));
  console.log(`results written to ${path.relative(process.cwd(), file)}`);
}

await main();
