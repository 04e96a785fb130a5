// `npm run bench:retrieval`: retrieval quality on a labelled question set (issue 16).
//
// The corpus (bench/retrieval/corpus/, public-domain texts, see its README) is
// uploaded to a real gateway started in-process on an embedded database with no
// compute node, so the built-in word-vector embedder is the only one. Every
// question of bench/retrieval/questions.json is then searched in each mode
// (lexical, vector, hybrid) with POST /api/os/search, topK 10. A question is found
// at rank r when the r-th snippet comes from an answer's document and holds that
// answer's `contains` text (whitespace normalised). Reported per mode and kind:
// recall@1/5/10 and MRR for answerable questions, and the false-grounding rate
// (any snippet at all) for unanswerable ones; then PASS/FAIL for the targets.
//
// Before anything runs, the data set is linted (bench/retrieval/dataset.ts): every
// `contains` must occur exactly once in its document, and paraphrase questions must
// share no content word with their answer's sentence. A lint error stops the run.
//
// Flags: --offline  rank with a small in-process BM25 over paragraphs instead of the
//                   gateway (lexical only), to check the harness and the data;
//        --lint     only lint the data set.
// Environment: BENCH_LOG_LEVEL (warn), BENCH_INGEST_TIMEOUT (s, 900).
// Results: stdout, and bench/results/retrieval-quality-<time>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { VERSION } from '../src/context.js';
import { Bm25Index } from './retrieval/bm25.js';
import { KINDS, lint, loadCorpus, loadQuestions } from './retrieval/dataset.js';
import { startGatewaySearcher } from './retrieval/gateway-searcher.js';
import { firstHit, fmt, type Judged, printTable, summarize, verdicts } from './retrieval/metrics.js';
import type { Searcher } from './retrieval/types.js';
import { boundedInt } from './support/stats.js';

const TOP_K = 10;
const OFFLINE = process.argv.includes('--offline');
const LINT_ONLY = process.argv.includes('--lint');
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'warn';
const INGEST_TIMEOUT_S = boundedInt('BENCH_INGEST_TIMEOUT', 900, 10, 7200);

function offlineSearcher(index: Bm25Index): Searcher {
  return {
    name: 'offline BM25 (paragraphs, in-process)',
    modes: ['lexical'],
    async search(query, _mode, topK) {
      const started = performance.now();
      const snippets = index.search(query, topK);
      return { snippets, ms: performance.now() - started, retrieval: { mode: 'lexical', embedder: null } };
    },
    async close() {},
  };
}

async function main(): Promise<void> {
  const corpus = loadCorpus();
  const questions = loadQuestions();
  const report = lint(questions, corpus);
  const kib = corpus.reduce((sum, f) => sum + f.bytes.length, 0) / 1024;
  console.log(
    `retrieval quality bench, gateway ${VERSION}: ${corpus.length} documents (${kib.toFixed(0)} KiB), ${questions.length} questions ` +
      `(${KINDS.map((k) => `${report.counts[k]} ${k}`).join(', ')})`,
  );
  if (report.errors.length) {
    for (const error of report.errors) console.error(`data set: ${error}`);
    throw new Error(`the data set has ${report.errors.length} lint error(s); fix bench/retrieval/questions.json`);
  }
  console.log('data set lint: clean');
  if (LINT_ONLY) return;

  let ingest: unknown = null;
  let searcher: Searcher;
  if (OFFLINE) {
    const index = new Bm25Index(corpus);
    console.log(`offline: ${index.size} paragraph chunks`);
    searcher = offlineSearcher(index);
  } else {
    console.log('starting the gateway (embedded database, no compute node) and uploading the corpus…');
    const gateway = await startGatewaySearcher(corpus, { logLevel: LOG_LEVEL, ingestTimeoutMs: INGEST_TIMEOUT_S * 1000 });
    ingest = gateway.ingest;
    console.log(
      `ingested ${gateway.ingest.documents.length} documents, ${gateway.ingest.chunks} chunks in ${fmt(gateway.ingest.seconds, 1)} s`,
    );
    searcher = gateway;
  }

  const judged: Judged[] = [];
  const servedModes = new Map<string, Set<string>>();
  try {
    for (const mode of searcher.modes) {
      for (const q of questions) {
        const outcome = await searcher.search(q.question, mode, TOP_K);
        const served = outcome.retrieval?.mode ? String(outcome.retrieval.mode) : '?';
        if (!servedModes.has(mode)) servedModes.set(mode, new Set());
        servedModes.get(mode)!.add(`${served}${outcome.retrieval?.embedder ? ` / ${JSON.stringify(outcome.retrieval.embedder)}` : ''}`);
        judged.push({
          id: q.id,
          kind: q.kind,
          mode,
          rank: q.kind === 'unanswerable' ? null : firstHit(q, outcome.snippets),
          returned: outcome.snippets.length,
          ms: outcome.ms,
          top: outcome.snippets.slice(0, 3).map((s) => ({ documentName: s.documentName, chunkIndex: s.chunkIndex, score: s.score })),
        });
      }
    }
  } finally {
    await searcher.close();
  }

  for (const [mode, served] of servedModes) console.log(`mode ${mode}: the server reported ${[...served].join(', ')}`);
  const rows = summarize(judged, searcher.modes, KINDS);
  console.log();
  printTable(rows);
  console.log();
  const checks = OFFLINE ? [] : verdicts(rows);
  if (OFFLINE) console.log('targets: not judged offline (the baseline is lexical only)');
  for (const check of checks) console.log(`${check.pass ? 'PASS' : 'FAIL'}  ${check.target}: ${check.measured}`);

  const missed = judged.filter((j) => j.kind !== 'unanswerable' && (j.rank === null || j.rank > 5));
  console.log(
    `\nanswerable questions not in the top 5, by mode: ${searcher.modes.map((m) => `${m} ${missed.filter((j) => j.mode === m).length}`).join(', ')}`,
  );

  const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(
    resultsDir,
    `retrieval-quality-${OFFLINE ? 'offline-' : ''}${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  );
  writeFileSync(
    file,
    JSON.stringify(
      {
        version: VERSION,
        node: process.version,
        cpus: os.cpus().length,
        searcher: searcher.name,
        topK: TOP_K,
        corpus: corpus.map((f) => ({ name: f.name, bytes: f.bytes.length })),
        counts: report.counts,
        ingest,
        servedModes: Object.fromEntries([...servedModes].map(([mode, served]) => [mode, [...served]])),
        rows,
        checks,
        questions: judged,
      },
      null,
      2,
    ),
  );
  console.log(`results written to ${path.relative(process.cwd(), file)}`);
}

await main();
