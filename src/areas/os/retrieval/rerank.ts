// Reranking, where a collection (or a ragScope, or a search) names a reranker: the best
// fused candidates are scored against the query by a cross-encoder on a compute node
// (the llm area's POST /rerank path, handed to os by the composition root) and reordered
// by that score before the top-k is taken. A cross-encoder reads query and passage
// together, so its score is the better judge of both order and answerability: a reranked
// search is answerable when its best score reaches RERANK_ANSWERABLE.
// A reranker that cannot answer (node down, model unknown to the tenant, an error of any
// kind) never fails the search: the fused order stands and the answer says so.

/**
 * Scores of `documents` against `query` by `model` for the tenant, one per document, in
 * order, as the engine gives them (0..1 for sigmoid rerankers). Throws when it cannot.
 */
export type Reranker = (tenantId: string, model: string, query: string, documents: string[]) => Promise<number[]>;

export interface RerankingDeps {
  /** Absent: no reranker wired (every reranked search degrades to the fused order). */
  rerank?: Reranker | undefined;
}

/** Fused candidates a reranker scores: enough to lift an answer from deep in the ranking, few enough for one call. */
export const RERANK_CANDIDATES = 40;
/**
 * The reranker's score at which a query counts as answerable. Rerankers served through
 * vLLM, llama.cpp, TEI and node-llama-cpp answer a sigmoid of the relevance logit, so 0.5
 * is "more likely relevant than not".
 */
export const RERANK_ANSWERABLE = 0.5;

export interface RerankCandidate {
  chunkId: string;
  content: string;
}

export type Reranked<T> = T & { rerankScore: number };

export type RerankOutcome<T> = { reranker: 'applied'; candidates: Reranked<T>[] } | { reranker: 'unavailable'; candidates: T[] };

/**
 * The candidates (best first, as fusion ranked them) reordered by the reranker's score,
 * each with that score; ties keep the fused order. When the reranker cannot answer, or
 * answers anything but one finite score per candidate: the candidates unchanged.
 */
export async function rerankCandidates<T extends RerankCandidate>(
  rerank: Reranker | undefined,
  tenantId: string,
  model: string,
  query: string,
  candidates: T[],
): Promise<RerankOutcome<T>> {
  if (candidates.length === 0) return { reranker: 'applied', candidates: [] };
  if (!rerank) return { reranker: 'unavailable', candidates };
  let scores: number[];
  try {
    scores = await rerank(
      tenantId,
      model,
      query,
      candidates.map((c) => c.content),
    );
  } catch {
    return { reranker: 'unavailable', candidates };
  }
  if (!Array.isArray(scores) || scores.length !== candidates.length || !scores.every(Number.isFinite))
    return { reranker: 'unavailable', candidates };
  const reranked = candidates.map((c, i) => ({ ...c, rerankScore: scores[i]! }));
  // Array.prototype.sort is stable: equal scores keep the fused order.
  return { reranker: 'applied', candidates: reranked.sort((a, b) => b.rerankScore - a.rerankScore) };
}

/** Whether a reranked query is answerable: its best candidate's score reaches the threshold. */
export function answerableByReranker(candidates: readonly { rerankScore: number }[], threshold = RERANK_ANSWERABLE): boolean {
  return (candidates[0]?.rerankScore ?? 0) >= threshold;
}

/** A ranked hit as search.ts has it: its id and its evidence score (0..1). */
export interface FusedCandidate {
  chunkId: string;
  score: number;
}

export type RerankedHits<T> = { reranker: 'applied'; hits: Reranked<T>[]; answerable: boolean } | { reranker: 'unavailable'; hits: T[] };

/**
 * For search.ts: the head of a ranking (best first, at most RERANK_CANDIDATES), reranked
 * on the text `contentOf` gives (the rows search has already read). Applied: the hits in
 * the reranker's order, `score` the reranker's (clamped to 0..1, what the snippet shows),
 * `answerable` by RERANK_ANSWERABLE. Unavailable: the head as it was.
 */
export async function rerankFused<T extends FusedCandidate>(
  rerank: Reranker | undefined,
  tenantId: string,
  query: string,
  model: string,
  head: T[],
  contentOf: (chunkId: string) => string | undefined,
): Promise<RerankedHits<T>> {
  // A chunk deleted since ranking is left out, as toSnippets leaves it out.
  const candidates = head.flatMap((hit) => {
    const content = contentOf(hit.chunkId);
    return content === undefined ? [] : [{ ...hit, content }];
  });
  const outcome = await rerankCandidates(rerank, tenantId, model, query, candidates);
  if (outcome.reranker === 'unavailable') return { reranker: 'unavailable', hits: head };
  const hits = outcome.candidates.map(({ content: _content, ...hit }) => ({
    ...(hit as unknown as T),
    rerankScore: hit.rerankScore,
    score: Math.min(1, Math.max(0, hit.rerankScore)),
  }));
  return { reranker: 'applied', hits, answerable: answerableByReranker(hits) };
}
