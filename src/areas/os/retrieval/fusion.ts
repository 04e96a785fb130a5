// Rank first, abstain second. The two legs are fused by weighted reciprocal rank into
// one ranking, kept whole; whether the query is answerable at all is then one
// decision per query, taken on the best evidence either leg found (answerability.ts).
// No passage is filtered on its own score: a filter of that kind keeps only
// near-verbatim matches, and a question asked in other words loses its answer.
import type { LexicalHit } from './lexical.js';
import type { VectorHit } from './vector.js';

export interface FusionWeights {
  /** RRF's constant: larger damps the difference between the first few ranks. */
  k: number;
  lexical: number;
  vector: number;
}

/**
 * Chosen on the dev split of bench/retrieval (docs/retrieval.md, "Fusion"): equal
 * weights, and a k of 5 rather than the usual 60. A small k lets a leg's first few
 * ranks lead; with 60 a passage ranked 20th by both legs overtook the one ranked 1st
 * by one leg alone (recall@5 0.79 against 0.90 on dev).
 */
export const FUSION: FusionWeights = { k: 5, lexical: 1, vector: 1 };

export interface FusedHit {
  chunkId: string;
  /** The fused value; after a scope's ranking is final, its position's reciprocal rank (what merges scopes). */
  fused: number;
  /** 0..1, the best evidence (see Snippet.score). */
  score: number;
}

/** Every candidate of either leg, best first. */
export function fuse(lexical: LexicalHit[], vector: VectorHit[], weights: FusionWeights = FUSION): FusedHit[] {
  const byId = new Map<string, { fused: number; score: number }>();
  const add = (chunkId: string, rank: number, weight: number, score: number) => {
    const entry = byId.get(chunkId) ?? { fused: 0, score: 0 };
    entry.fused += weight / (weights.k + rank + 1);
    entry.score = Math.max(entry.score, score);
    byId.set(chunkId, entry);
  };
  for (const [rank, hit] of lexical.entries()) add(hit.chunkId, rank, weights.lexical, hit.relevance);
  for (const [rank, hit] of vector.entries()) add(hit.chunkId, rank, weights.vector, Math.min(1, Math.max(0, hit.similarity)));
  return [...byId.entries()]
    .map(([chunkId, e]) => ({ chunkId, fused: e.fused, score: e.score }))
    .sort((a, b) => b.fused - a.fused || b.score - a.score || (a.chunkId < b.chunkId ? -1 : 1));
}
