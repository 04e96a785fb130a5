// `npm run bench:retrieval`: retrieval quality on a labelled question set (issue 27).
//
// The corpus (bench/retrieval/corpus/: one invented company's documents in every
// supported format, the PDF and DOCX rendered from text here) is uploaded to a real
// gateway started in-process on an embedded database with no compute node, so the
// built-in word-vector embedder is the only one. Every question of
// bench/retrieval/questions/*.json is then searched in each mode (lexical, vector,
// hybrid) with POST /api/os/search, topK 10, and with a plain BM25 over the very
// chunks the gateway made (read back through the API): the reference, same run.
// Reported per split (dev for tuning, test for the verdicts), method and kind:
// recall@1/5/10 and MRR (the answer's document), contains@5 (its passage), false
// grounding (any snippet for an unanswerable question), then PASS/FAIL.
//
// Before anything runs, the data set is linted (bench/retrieval/dataset.ts). A lint
// error stops the run.
//
// Flags: --offline    the BM25 reference over the corpus's paragraphs only (no gateway),
//                     to check the harness and the data;
//        --lint       only lint the data set;
//        --split dev  only the dev questions;
//        --tune       after the run, the dev split's grid of fusion weights and
//                     answerability rules (bench/retrieval/tune.ts).
// Environment: BENCH_LOG_LEVEL (warn), BENCH_INGEST_TIMEOUT (s, 900).
// Results: stdout, and bench/results/retrieval-quality-<time>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { VERSION } from '../src/context.js';
import { Bm25Index, paragraphChunks } from './retrieval/bm25.js';
import { KINDS, lint, loadCorpus, loadQuestions, type Question, SPLITS, type Split } from './retrieval/dataset.js';
import { startGatewaySearcher } from './retrieval/gateway-searcher.js';
import { fmt, type Judged, judge, type Method, printTable, summarize, verdicts } from './retrieval/metrics.js';
import type { SearchOutcome } from './retrieval/types.js';
import { type Probed, tune } from './retrieval/tune.js';
import { boundedInt } from './support/stats.js';

const TOP_K = 10;
const OFFLINE = process.argv.includes('--offline');
const LINT_ONLY = process.argv.includes('--lint');
const TUNE = process.argv.includes('--tune');
const ONLY_SPLIT = process.argv.includes('--split') ? (process.argv[process.argv.indexOf('--split') + 1] as Split) : null;
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'warn';
const INGEST_TIMEOUT_S = boundedInt('BENCH_INGEST_TIMEOUT', 900, 10, 7200);

type Search = (query: string) => Promise<SearchOutcome>;

function referenceSearch(index: Bm25Index): Search {
  return async (query) => {
    const started = performance.now();
    const snippets = index.search(query, TOP_K);
    return { snippets, ms: performance.now() - started, status: snippets.length ? 'active' : 'no_matches' };
  };
}

async function run(questions: Question[], method: Method, search: Search, judged: Judged[], served: Set<string>): Promise<void> {
  for (const q of questions) {
    const outcome = await search(q.question);
    if (outcome.retrieval?.mode)
      served.add(`${outcome.retrieval.mode}${outcome.retrieval.embedder ? ` / ${JSON.stringify(outcome.retrieval.embedder)}` : ''}`);
    const { rank, passageRank } = q.kind === 'unanswerable' ? { rank: null, passageRank: null } : judge(q, outcome.snippets);
    judged.push({
      id: q.id,
      kind: q.kind,
      split: q.split,
      method,
      rank,
      passageRank,
      returned: outcome.snippets.length,
      ...(outcome.status ? { status: outcome.status } : {}),
      ms: outcome.ms,
      top: outcome.snippets.slice(0, 3).map((s) => ({ documentName: s.documentName, chunkIndex: s.chunkIndex, score: s.score })),
    });
  }
}

async function main(): Promise<void> {
  const corpus = await loadCorpus();
  const all = loadQuestions();
  const report = lint(all, corpus);
  const kib = corpus.reduce((sum, f) => sum + f.bytes.length, 0) / 1024;
  const types = [...new Set(corpus.map((f) => f.name.split('.').pop()))].sort();
  console.log(
    `retrieval quality bench, gateway ${VERSION}: ${corpus.length} documents (${types.join(', ')}; ${kib.toFixed(0)} KiB), ` +
      `${all.length} questions (${KINDS.map((k) => `${report.counts[k].dev}+${report.counts[k].test} ${k}`).join(', ')}; dev+test)`,
  );
  if (report.errors.length) {
    for (const error of report.errors) console.error(`data set: ${error}`);
    throw new Error(`the data set has ${report.errors.length} lint error(s); fix bench/retrieval/questions/`);
  }
  console.log('data set lint: clean');
  if (LINT_ONLY) return;
  const questions = ONLY_SPLIT ? all.filter((q) => q.split === ONLY_SPLIT) : all;
  const splits = ONLY_SPLIT ? [ONLY_SPLIT] : SPLITS;

  const judged: Judged[] = [];
  const servedModes: Record<string, string[]> = {};
  let ingest: unknown = null;
  let methods: Method[];
  if (OFFLINE) {
    methods = ['bm25'];
    const index = new Bm25Index(paragraphChunks(corpus));
    console.log(`offline: the BM25 reference over ${index.size} paragraphs`);
    await run(questions, 'bm25', referenceSearch(index), judged, new Set());
  } else {
    methods = ['bm25', 'lexical', 'vector', 'hybrid'];
    console.log('starting the gateway (embedded database, no compute node) and uploading the corpus…');
    const gateway = await startGatewaySearcher(corpus, { logLevel: LOG_LEVEL, ingestTimeoutMs: INGEST_TIMEOUT_S * 1000 });
    try {
      ingest = gateway.ingest;
      console.log(
        `ingested ${gateway.ingest.documents.length} documents, ${gateway.ingest.chunks} chunks in ${fmt(gateway.ingest.seconds, 1)} s`,
      );
      const chunks = await gateway.chunks();
      const index = new Bm25Index(chunks);
      await run(questions, 'bm25', referenceSearch(index), judged, new Set());
      for (const mode of gateway.modes) {
        const served = new Set<string>();
        await run(questions, mode, (query) => gateway.search(query, mode, TOP_K), judged, served);
        servedModes[mode] = [...served];
        console.log(`mode ${mode}: the server reported ${[...served].join(', ')}`);
      }
      if (TUNE) {
        const probed: Probed[] = [];
        const byId = new Map(chunks.map((c) => [c.id!, c]));
        for (const question of questions) {
          const legs = await gateway.legs(question.question);
          const ids = [...new Set([...legs.lexical, ...legs.vector].map((h) => h.chunkId))];
          const scores =
            (await gateway.align(
              question.question,
              ids.map((id) => `${byId.get(id)!.context}\n${byId.get(id)!.content}`),
            )) ?? [];
          probed.push({ question, legs, alignment: new Map(ids.map((id, i) => [id, scores[i] ?? 0])) });
        }
        tune(probed, new Map(chunks.map((c) => [c.id!, c])));
      }
    } finally {
      await gateway.close();
    }
  }

  const rows = summarize(judged, methods, KINDS, splits);
  console.log();
  printTable(rows);
  console.log();
  const checks = OFFLINE || ONLY_SPLIT === 'dev' ? [] : verdicts(rows, KINDS);
  if (!checks.length) console.log('targets: judged on the test split of a full gateway run only');
  for (const check of checks) console.log(`${check.pass ? 'PASS' : 'FAIL'}  ${check.target}: ${check.measured}`);

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
        topK: TOP_K,
        corpus: corpus.map((f) => ({ name: f.name, bytes: f.bytes.length })),
        counts: report.counts,
        ingest,
        servedModes,
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
