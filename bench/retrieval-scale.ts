// `npm run bench:retrieval-scale`: retrieval at scale on the embedded default (issue 16).
//
// The real gateway runs in-process on a fresh embedded database (PGlite + pgvector);
// one compute node, the test suite's fake OpenAI engine in a child process, answers
// chat at once and serves /v1/embeddings deterministically (an "instant" embedding
// node). Generated company documents (bench/retrieval/prose.ts: markdown with
// headings, deterministic from BENCH_SEED, ~350-token sections) are used throughout.
//
// 1. Ingest throughput: a bulk multipart upload of BENCH_CHUNKS_SMALL chunks' worth of
//    documents, timed to the last document ready, into a collection embedded by the
//    node's model, then into one embedded by the built-in word vectors.
// 2. Search latency: POST /api/os/search (hybrid, topK 10, varied queries, one at a
//    time) over the built-in collection at BENCH_CHUNKS_SMALL chunks (ingested through
//    the API) and at BENCH_CHUNKS_LARGE (the rest written directly, see
//    bench/retrieval/direct-fill.ts: the output says so).
// 3. ANN recall@10: a small collection of another tenant (BENCH_TENANT_A_CHUNKS,
//    through the API) inside the large corpus; the gateway's HNSW vector query against
//    its exact one, BENCH_RECALL_QUERIES queries (bench/retrieval/ann-recall.ts).
// 4. Chat p99: JSON chat/completions under autocannon (BENCH_CHAT_CONNECTIONS for
//    BENCH_CHAT_SECONDS), idle and then during a bulk ingest into a third collection.
//
// The load, the client and the gateway share the machine's CPUs: compare within a run.
// Environment: BENCH_CHUNKS_SMALL (10000), BENCH_CHUNKS_LARGE (100000; at most SMALL
// skips the large level), BENCH_QUERIES (200), BENCH_RECALL_QUERIES (100),
// BENCH_TENANT_A_CHUNKS (200), BENCH_CHAT_SECONDS (10), BENCH_CHAT_CONNECTIONS (10),
// BENCH_SEED (16), BENCH_LOG_LEVEL (warn), BENCH_INGEST_TIMEOUT (s, 1800), BENCH_SEARCH_BUDGET (s per
// level for the timed searches, 180; half that again for the step profile).
// Results: stdout, and bench/results/retrieval-scale-<time>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WordVectorEmbedder } from '../src/areas/os/embedders/word-vectors/embedder.js';
import { VERSION } from '../src/context.js';
import { annRecall } from './retrieval/ann-recall.js';
import { bulkIngest, type IngestFigures } from './retrieval/bulk-ingest.js';
import { fillDirectly } from './retrieval/direct-fill.js';
import { profileSearch } from './retrieval/search-profile.js';
import { FAKE_CHAT_MODEL, FAKE_EMBEDDING_MODEL } from './retrieval/fake-node.js';
import { type BenchTenant, startInProcessGateway } from './retrieval/gateway.js';
import { type GeneratedDocument, ProseGenerator, seededRandom } from './retrieval/prose.js';
import { atLeast, atMost, type Check, info, printTable, TARGETS } from './retrieval/scale-report.js';
import { chatLoad, chatTarget, type SearchFigures, searchLatency, waitForChat } from './retrieval/scale-load.js';
import { startChild } from './support/children.js';
import { boundedInt, fmt, type Summary } from './support/stats.js';

process.setSourceMapsEnabled(false);

const SMALL = boundedInt('BENCH_CHUNKS_SMALL', 10_000, 50, 1_000_000);
const LARGE = boundedInt('BENCH_CHUNKS_LARGE', 100_000, 0, 5_000_000);
const QUERIES = boundedInt('BENCH_QUERIES', 200, 10, 100_000);
const RECALL_QUERIES = boundedInt('BENCH_RECALL_QUERIES', 100, 1, 10_000);
const TENANT_A_CHUNKS = boundedInt('BENCH_TENANT_A_CHUNKS', 200, 10, 100_000);
const CHAT_SECONDS = boundedInt('BENCH_CHAT_SECONDS', 10, 1, 300);
const CHAT_CONNECTIONS = boundedInt('BENCH_CHAT_CONNECTIONS', 10, 1, 500);
const SEED = boundedInt('BENCH_SEED', 16, 0, 2 ** 31);
const INGEST_TIMEOUT_MS = boundedInt('BENCH_INGEST_TIMEOUT', 1800, 10, 86_400) * 1000;
const SEARCH_BUDGET_MS = boundedInt('BENCH_SEARCH_BUDGET', 180, 5, 86_400) * 1000;
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'warn';
const WARMUP_QUERIES = 20;
const CHAT_WARMUP_SECONDS = 3;
const PROFILE_QUERIES = 50;
const BUILT_IN = { model: 'gateway-word-vectors-en', dimensions: 100 };

interface CollectionRecord {
  id: string;
  workspaceId: string;
  language: string;
  embedding: { model: string; dimensions: number | null } | null;
  chunkCount: number;
  documentCount: number;
}

const log = (line: string) => console.log(`  ${line}`);

async function main(): Promise<void> {
  console.log(
    `retrieval scale bench, gateway ${VERSION}: node ${process.version}, ${os.cpus().length} CPUs; ${SMALL} and ${LARGE} chunks, ` +
      `${QUERIES} queries, recall over ${RECALL_QUERIES} queries in ${TENANT_A_CHUNKS} chunks, chat ${CHAT_CONNECTIONS} connections × ${CHAT_SECONDS} s, seed ${SEED}`,
  );
  const loadBefore = os.loadavg();
  const node = await startChild<{ url: string }>('fake node', '../retrieval/fake-node.ts');
  const gateway = await startInProcessGateway({
    logLevel: LOG_LEVEL,
    env: {
      GATEWAY_LOCAL_ENGINE: 'off',
      GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: node.info.url, name: 'bench-fake-node' }]),
    },
  });
  const prose = new ProseGenerator(SEED);
  // 5 to 40 sections: memos to long handbooks, ~22 chunks a document on average.
  const sectionsRandom = seededRandom(SEED + 1);
  const sections = () => 5 + Math.floor(sectionsRandom() * 36);
  const documentsOf = (chunks: number) => {
    const docs: GeneratedDocument[] = [];
    for (let n = 0; n < chunks; ) {
      const doc = prose.document(Math.min(sections(), Math.max(1, chunks - n)));
      docs.push(doc);
      n += doc.sections.length;
    }
    return docs;
  };
  const filesPerUpload = gateway.ctx.config.documents.uploadMaxFiles;
  const ingest = async (tenant: BenchTenant, collection: CollectionRecord, chunks: number, what: string) => {
    const docs = documentsOf(chunks);
    log(`${what}: uploading ${docs.length} documents (~${chunks} chunks)…`);
    const figures = await bulkIngest(tenant.call, collection.id, docs, { filesPerUpload, timeoutMs: INGEST_TIMEOUT_MS, progress: log })
      .done;
    log(
      `${what}: ${figures.chunks} chunks, ${figures.documents} documents in ${fmt(figures.seconds, 1)} s = ${fmt(figures.chunksPerSecond, 0)} chunks/s`,
    );
    return figures;
  };
  const checks: Check[] = [];
  const results: Record<string, unknown> = {};
  let wordVectors: WordVectorEmbedder | undefined;
  try {
    const b = await gateway.tenant('scale-bench-b');
    const workspace = (await b.call('POST', '/api/os/workspaces', { name: 'Scale benchmark' }, 201)) as { id: string };
    const collection = (body: object) => createCollection(b, workspace.id, body);
    const queries = Array.from({ length: QUERIES + WARMUP_QUERIES }, () => prose.query());
    const instant = await collection({ name: 'Instant node', embeddingModel: FAKE_EMBEDDING_MODEL });
    const builtIn = await collection({ name: 'Built-in embedder' });
    const during = await collection({ name: 'Ingested during chat load' });
    if (builtIn.embedding?.model !== BUILT_IN.model) throw new Error(`a new collection embeds with ${JSON.stringify(builtIn.embedding)}`);

    console.log('warming up (the built-in word vectors are converted once per data dir; the node is reached once)…');
    await ingest(b, during, 3, 'warm-up, built-in');
    await ingest(b, instant, 3, 'warm-up, instant node');

    // The built-in embedder outside the gateway, on the file the warm-up converted: the direct fill's vectors and the profile's query vectors.
    wordVectors = new WordVectorEmbedder({ dataDir: gateway.dataDir });
    await wordVectors.ready();
    const embed = wordVectors.embed.bind(wordVectors);
    const profile = async (tenant: BenchTenant, collectionId: string, chunks: number) => {
      const steps = await profileSearch(
        gateway.ctx.db,
        tenant.id,
        collectionId,
        queries.slice(0, PROFILE_QUERIES),
        embed,
        SEARCH_BUDGET_MS / 2,
      );
      const p = (s: Summary) => `${fmt(s.p50, 1)}/${fmt(s.p95, 1)}`;
      checks.push(
        info(
          `search steps at ${chunks} chunks, p50/p95 ms`,
          `lexical ${p(steps.lexicalMs)}, vector ${p(steps.vectorMs)}`,
          `scope ${p(steps.scopeMs)}, query embedding ${p(steps.embedMs)}; the lexical query matched ${fmt(steps.matchedChunks.p50, 0)} chunks (p50), ${fmt(steps.matchedChunks.p95, 0)} (p95)`,
        ),
      );
      return steps;
    };

    console.log(`1. ingest throughput (${SMALL} chunks each, through the API):`);
    const ingestInstant = await ingest(b, instant, SMALL, 'instant embedding node');
    const ingestBuiltIn = await ingest(b, builtIn, SMALL, 'built-in embedder');
    results.ingest = { instant: ingestInstant, builtIn: ingestBuiltIn };
    const ingestNote = (f: IngestFigures) =>
      `${fmt(f.documentsPerSecond, 1)} documents/s (${f.documents} documents, ${f.chunks} chunks, ${fmt(f.seconds, 1)} s)`;
    checks.push(
      atLeast(
        'ingest, instant node (chunks/s)',
        ingestInstant.chunksPerSecond,
        TARGETS.ingestChunksPerSecond,
        '',
        0,
        ingestNote(ingestInstant),
      ),
    );
    checks.push(
      atLeast(
        'ingest, built-in (chunks/s)',
        ingestBuiltIn.chunksPerSecond,
        TARGETS.ingestChunksPerSecond,
        '',
        0,
        ingestNote(ingestBuiltIn),
      ),
    );

    const smallChunks = (await getCollection(b, builtIn.id)).chunkCount;
    console.log(`2. search latency at ${smallChunks} chunks…`);
    const searchSmall = await searchLatency(b, [builtIn.id], queries, WARMUP_QUERIES, SEARCH_BUDGET_MS);
    results.searchSmall = { chunks: smallChunks, ...searchSmall };
    checks.push(searchCheck(smallChunks, searchSmall, false, null));
    results.searchStepsSmall = await profile(b, builtIn.id, smallChunks);

    console.log(`4. chat/completions p99, idle and during a bulk ingest (${CHAT_CONNECTIONS} connections, ${CHAT_SECONDS} s):`);
    const chat = chatTarget(gateway.base, b, FAKE_CHAT_MODEL);
    await waitForChat(chat);
    await chatLoad(chat, CHAT_CONNECTIONS, CHAT_WARMUP_SECONDS); // JIT and connections, unmeasured
    const idle = await chatLoad(chat, CHAT_CONNECTIONS, CHAT_SECONDS);
    log(`idle: ${fmt(idle.rps, 0)} req/s, p50 ${idle.p50} ms, p99 ${idle.p99} ms`);
    // Enough documents to keep ingestion busy past the end of the load, at the pace just measured.
    const duringChunks = Math.max(500, Math.round(ingestBuiltIn.chunksPerSecond * (CHAT_SECONDS + 15)));
    const bulk = bulkIngest(b.call, during.id, documentsOf(duringChunks), { filesPerUpload, timeoutMs: INGEST_TIMEOUT_MS });
    const busy = await chatLoad(chat, CHAT_CONNECTIONS, CHAT_SECONDS);
    const loadEnded = performance.now();
    const duringIngest = await bulk.done;
    const overlapped = duringIngest.seconds * 1000 > CHAT_SECONDS * 1000;
    log(
      `during ingest: ${fmt(busy.rps, 0)} req/s, p50 ${busy.p50} ms, p99 ${busy.p99} ms; the ingest (${duringIngest.chunks} chunks) took ${fmt(duringIngest.seconds, 1)} s`,
    );
    results.chat = { idle, duringIngest: busy, ingest: duringIngest, ingestOutlastedLoad: overlapped, loadEndedAtMs: loadEnded };
    checks.push(
      atMost(
        'chat p99 during ingest / idle',
        busy.p99 / Math.max(idle.p99, 1),
        TARGETS.chatP99Ratio,
        '×',
        2,
        `p99 ${busy.p99} ms during vs ${idle.p99} ms idle; ${fmt(busy.rps, 0)} vs ${fmt(idle.rps, 0)} req/s` +
          (overlapped ? '' : '; WARNING: the ingest ended before the load did, the figure flatters'),
      ),
    );

    if (LARGE > smallChunks) {
      const add = LARGE - smallChunks;
      console.log(
        `3. filling the built-in collection to ${LARGE} chunks: ${add} chunks written DIRECTLY (replaceDocumentChunks), not through the API…`,
      );
      const fill = await fillDirectly(
        gateway.ctx.db,
        {
          tenantId: b.id,
          workspaceId: workspace.id,
          collectionId: builtIn.id,
          language: builtIn.language,
          embedder: BUILT_IN.model,
          dimensions: BUILT_IN.dimensions,
        },
        prose,
        add,
        { sectionsPerDocument: sections, chunksPerTransaction: 2000, embed, progress: log },
      );
      log(
        `direct fill: ${fill.chunks} chunks in ${fmt(fill.writeSeconds, 0)} s (${fmt(fill.chunks / fill.writeSeconds, 0)} chunks/s) + HNSW rebuild ${fmt(fill.indexSeconds, 0)} s`,
      );
      results.directFill = fill;
      const largeChunks = (await getCollection(b, builtIn.id)).chunkCount;
      console.log(`2. search latency at ${largeChunks} chunks…`);
      const searchLarge = await searchLatency(b, [builtIn.id], queries, WARMUP_QUERIES, SEARCH_BUDGET_MS);
      results.searchLarge = { chunks: largeChunks, ...searchLarge };
      checks.push(searchCheck(largeChunks, searchLarge, true, `${fill.chunks} of them written directly, not through the API`));
      results.searchStepsLarge = await profile(b, builtIn.id, largeChunks);

      console.log(`3. ANN recall@10 for a small tenant inside the large corpus…`);
      const a = await gateway.tenant('scale-bench-a');
      const aWorkspace = (await a.call('POST', '/api/os/workspaces', { name: 'Small tenant' }, 201)) as { id: string };
      const aCollection = await createCollection(a, aWorkspace.id, { name: 'Small collection' });
      await ingest(a, aCollection, TENANT_A_CHUNKS, 'tenant A');
      const aChunks = (await getCollection(a, aCollection.id)).chunkCount;
      const queryVectors = await embed(queries.slice(0, RECALL_QUERIES));
      const scope = (tenantId: string, collectionId: string, chunkCount: number) => ({
        tenantId,
        collectionIds: [collectionId],
        chunkCount,
        embedder: BUILT_IN.model,
        dimensions: BUILT_IN.dimensions,
      });
      const recallA = await annRecall(gateway.ctx.db, scope(a.id, aCollection.id, aChunks), queryVectors);
      const recallB = await annRecall(gateway.ctx.db, scope(b.id, builtIn.id, largeChunks), queryVectors);
      results.recall = { smallTenant: { chunks: aChunks, ...recallA }, largeCollection: { chunks: largeChunks, ...recallB } };
      checks.push(
        atLeast(
          `ANN recall@10, ${aChunks} chunks of tenant A`,
          recallA.recall,
          TARGETS.recallAt10,
          '',
          3,
          `${recallA.queries} queries, ${recallA.short} came back short; HNSW p50 ${fmt(recallA.indexMs.p50)} ms, exact p50 ${fmt(recallA.exactMs.p50)} ms; corpus ${largeChunks + smallChunks} chunks of tenant B`,
        ),
      );
      checks.push(
        info(
          `ANN recall@10, ${largeChunks} chunks of tenant B`,
          fmt(recallB.recall, 3),
          `HNSW p50 ${fmt(recallB.indexMs.p50)} ms, exact p50 ${fmt(recallB.exactMs.p50)} ms`,
        ),
      );
    } else console.log(`BENCH_CHUNKS_LARGE (${LARGE}) is not above the small level: no large level, no recall figure`);
  } finally {
    await wordVectors?.close();
    await gateway.close();
    await node.stop();
  }

  const loadAfter = os.loadavg();
  console.log();
  printTable(checks);
  console.log(`\nload average (1 min) before ${fmt(loadBefore[0]!)}, after ${fmt(loadAfter[0]!)} on ${os.cpus().length} CPUs`);
  const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `retrieval-scale-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  const settings = { SMALL, LARGE, QUERIES, RECALL_QUERIES, TENANT_A_CHUNKS, CHAT_SECONDS, CHAT_CONNECTIONS, SEED, WARMUP_QUERIES };
  const environment = {
    version: VERSION,
    node: process.version,
    cpus: os.cpus().length,
    loadAverage: { before: loadBefore, after: loadAfter },
  };
  writeFileSync(file, JSON.stringify({ ...environment, settings, ...results, checks }, null, 2));
  console.log(`results written to ${path.relative(process.cwd(), file)}`);
}

/** The target is set at 100k chunks: judged at the large level, whatever BENCH_CHUNKS_LARGE makes it. */
function searchCheck(chunks: number, figures: SearchFigures, judged: boolean, note: string | null): Check {
  const served = Object.entries(figures.served)
    .map(([how, n]) => `${how} ×${n}`)
    .join(', ');
  const cut = figures.skipped ? `; time budget ran out, ${figures.skipped} queries not asked` : '';
  const detail = `${figures.latency.count} queries, p50 ${fmt(figures.latency.p50)} ms, p99 ${fmt(figures.latency.p99)} ms; served ${served}; ${figures.empty} empty${cut}${note ? `; ${note}` : ''}`;
  const figure = `search p95 at ${chunks} chunks (ms)`;
  return judged
    ? atMost(figure, figures.latency.p95, TARGETS.searchP95Ms, '', 1, detail)
    : info(figure, fmt(figures.latency.p95, 1), detail);
}

async function createCollection(tenant: BenchTenant, workspaceId: string, body: object): Promise<CollectionRecord> {
  // A node's model is known once the router has listed the node's models, a moment after start.
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return (await tenant.call('POST', `/api/os/workspaces/${workspaceId}/collections`, body, 201)) as CollectionRecord;
    } catch (error) {
      if (Date.now() > deadline || !/answered 400/.test((error as Error).message)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

const getCollection = (tenant: BenchTenant, id: string) =>
  tenant.call('GET', `/api/os/collections/${id}`, undefined, 200) as Promise<CollectionRecord>;

await main();
