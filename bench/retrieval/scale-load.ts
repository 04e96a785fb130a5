// The two latencies the scale benchmark reads from outside, as a client sees them:
// POST /api/os/search one query at a time, and chat/completions under a closed-loop
// load (autocannon, in a worker thread of its own: bench/support/load.ts).
import { saturate, type SaturationResult, type Target } from '../support/load.js';
import { summarize, type Summary } from '../support/stats.js';
import type { BenchTenant } from './gateway.js';

export interface SearchFigures {
  latency: Summary;
  /** How the server said it ran the searches (mode / embedder → count): a fallback to lexical must show. */
  served: Record<string, number>;
  /** Searches that returned no snippet. */
  empty: number;
  /** Queries left unasked because the time budget ran out. */
  skipped: number;
}

/**
 * Each query once, one at a time, after `warmup` unmeasured ones (caches, JIT, the
 * query embedder). A slow search stops after `budgetMs` (with at least 10 measured),
 * so a regression shows as a figure rather than an endless run.
 */
export async function searchLatency(
  tenant: BenchTenant,
  collectionIds: string[],
  queries: string[],
  warmup: number,
  budgetMs: number,
  topK = 10,
): Promise<SearchFigures> {
  const served: Record<string, number> = {};
  const ms: number[] = [];
  let empty = 0;
  const started = performance.now();
  for (const [i, query] of queries.entries()) {
    // Slow searches warm up in a quarter of the budget.
    if (i < warmup && performance.now() - started > budgetMs / 4) continue;
    if (ms.length >= 10 && performance.now() - started > budgetMs)
      return { latency: summarize(ms), served, empty, skipped: queries.length - i };
    const sent = performance.now();
    const answer = (await tenant.call('POST', '/api/os/search', { query, collectionIds, topK, mode: 'hybrid' }, 200)) as {
      data: unknown[];
      retrieval: { mode: string; embedder: string | null };
    };
    const elapsed = performance.now() - sent;
    if (i < warmup) continue;
    ms.push(elapsed);
    const how = `${answer.retrieval.mode} / ${answer.retrieval.embedder ?? 'no embedder'}`;
    served[how] = (served[how] ?? 0) + 1;
    if (answer.data.length === 0) empty++;
  }
  return { latency: summarize(ms), served, empty, skipped: 0 };
}

export function chatTarget(base: string, tenant: BenchTenant, model: string): Target {
  return {
    name: 'chat/completions (JSON)',
    url: `${base}/api/llm/v1/chat/completions`,
    headers: { 'x-api-key': tenant.key },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  };
}

/** Waits until a chat completion goes through: the router learns the node's models from its first listing. */
export async function waitForChat(target: Target, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const answer = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: target.body,
    });
    last = `${answer.status} ${(await answer.text()).slice(0, 300)}`;
    if (answer.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`chat/completions never answered 200 (last: ${last})`);
}

export interface ChatFigures extends SaturationResult {
  seconds: number;
  connections: number;
}

export async function chatLoad(target: Target, connections: number, seconds: number): Promise<ChatFigures> {
  const result = await saturate(target, connections, seconds);
  if (result.errors > 0 || result.non2xx > 0)
    throw new Error(`chat load: ${result.non2xx} non-2xx answers and ${result.errors} errors in ${result.requests} requests`);
  return { ...result, seconds, connections };
}
