// `npm run bench:retrieval-latency`: what grounding adds to a streamed answer's time
// to first token. The real gateway (embedded database, built-in embedder) in front of
// an instant fake engine, the quality benchmark's corpus ingested, then the same
// questions streamed with and without `workspaceIds`, interleaved one for one so that
// machine noise hits both alike. First token = the first delta frame after the
// metadata frame.
//
// Environment: BENCH_ROUNDS (default 5: each round asks every question both ways),
// BENCH_LOG_LEVEL (default warn). Results: stdout and bench/results/retrieval-latency-<time>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { VERSION } from '../src/context.js';
import { loadCorpus, loadQuestions } from './retrieval/dataset.js';
import { FAKE_CHAT_MODEL } from './retrieval/fake-node.js';
import { startInProcessGateway } from './retrieval/gateway.js';
import { uploadCorpus } from './retrieval/gateway-searcher.js';
import { startChild } from './support/children.js';
import { boundedInt, fmt, summarize } from './support/stats.js';

const ROUNDS = boundedInt('BENCH_ROUNDS', 5, 1, 100);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'warn';

/** Milliseconds from sending the request to the first delta frame, reading the stream to its end. */
async function timeToFirstToken(base: string, key: string, body: object): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${base}/api/llm/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ ...body, stream: true }),
  });
  if (response.status !== 200) throw new Error(`chat answered ${response.status}: ${await response.text()}`);
  const decoder = new TextDecoder();
  let seen = '';
  let first: number | undefined;
  for await (const chunk of response.body!) {
    seen += decoder.decode(chunk, { stream: true });
    if (first === undefined && seen.includes('"delta"')) first = performance.now() - started;
  }
  if (first === undefined) throw new Error('the stream carried no delta frame');
  return first;
}

async function main(): Promise<void> {
  const node = await startChild<{ url: string }>('fake node', '../retrieval/fake-node.ts');
  const gateway = await startInProcessGateway({
    logLevel: LOG_LEVEL,
    env: { GATEWAY_LOCAL_ENGINE: 'off', GATEWAY_NODES: JSON.stringify([{ engine: 'openai', url: node.info.url, name: 'fake' }]) },
  });
  try {
    const corpus = await loadCorpus();
    const { key, call } = await gateway.tenant('latency');
    const workspace = (await call('POST', '/api/os/workspaces', { name: 'Latency' }, 201)) as { id: string };
    const ingest = await uploadCorpus(call, workspace.id, corpus, 600_000);
    const questions = loadQuestions().filter((q) => q.kind !== 'unanswerable');
    console.log(
      `retrieval latency bench, gateway ${VERSION}, ${os.cpus().length} CPUs: ${ingest.chunks} chunks; ${questions.length} questions × ${ROUNDS} rounds, each streamed with and without grounding`,
    );
    const plain: number[] = [];
    const grounded: number[] = [];
    let active = 0;
    // Warm-up: the tokenizer, the embedder's first query, the routes.
    for (const q of questions.slice(0, 5)) {
      const messages = [{ role: 'user', content: q.question }];
      await timeToFirstToken(gateway.base, key, { model: FAKE_CHAT_MODEL, messages });
      await timeToFirstToken(gateway.base, key, { model: FAKE_CHAT_MODEL, messages, workspaceIds: [workspace.id] });
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, q] of questions.entries()) {
        const messages = [{ role: 'user', content: q.question }];
        const ask = {
          plain: () => timeToFirstToken(gateway.base, key, { model: FAKE_CHAT_MODEL, messages }).then((ms) => plain.push(ms)),
          grounded: () =>
            timeToFirstToken(gateway.base, key, { model: FAKE_CHAT_MODEL, messages, workspaceIds: [workspace.id] }).then((ms) =>
              grounded.push(ms),
            ),
        };
        // Alternate which goes first, so neither always follows the other.
        if ((round + i) % 2 === 0) {
          await ask.plain();
          await ask.grounded();
        } else {
          await ask.grounded();
          await ask.plain();
        }
      }
    }
    for (const q of questions) {
      const answer = (await call(
        'POST',
        '/api/llm/v1/chat/completions',
        {
          model: FAKE_CHAT_MODEL,
          messages: [{ role: 'user', content: q.question }],
          workspaceIds: [workspace.id],
        },
        200,
      )) as { rag_active: boolean };
      if (answer.rag_active) active++;
    }
    const p = summarize(plain);
    const g = summarize(grounded);
    console.log('\n| stream | n | p50 ms | p95 ms | p99 ms |\n|---|---:|---:|---:|---:|');
    console.log(`| ungrounded | ${p.count} | ${fmt(p.p50)} | ${fmt(p.p95)} | ${fmt(p.p99)} |`);
    console.log(`| grounded (workspaceIds) | ${g.count} | ${fmt(g.p50)} | ${fmt(g.p95)} | ${fmt(g.p99)} |`);
    console.log(
      `\nadded time to first token: p50 +${fmt(g.p50 - p.p50)} ms, p95 +${fmt(g.p95 - p.p95)} ms; grounded answers with passages: ${active}/${questions.length}`,
    );
    mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
    const file = new URL(`./results/retrieval-latency-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
    writeFileSync(
      file,
      JSON.stringify(
        { version: VERSION, node: process.version, cpus: os.cpus().length, chunks: ingest.chunks, plain: p, grounded: g, active },
        null,
        2,
      ),
    );
    console.log(`results written to ${file.pathname}`);
  } finally {
    await gateway.close();
    await node.stop();
  }
}

await main();
