// Fusion of the two legs, then the relevance threshold. Reciprocal-rank fusion orders
// by rank alone, so it cannot tell a good answer from the best of nothing: after
// fusion a passage stays only if one leg has absolute evidence for it, which makes a
// question the documents cannot answer return nothing rather than noise.
import type { LexicalHit } from './lexical.js';
import type { VectorHit } from './vector.js';

/** RRF's constant: the usual 60 damps the difference between the first few ranks. */
export const RRF_K = 60;
/**
 * A passage is lexical evidence when it covers at least this share of the query's
 * idf mass (LexicalHit.relevance): most of what is distinctive in the question.
 * Tuned on bench/retrieval (docs/retrieval.md): at 0.45, 72 % of the unanswerable
 * questions found some passage sharing half their words; at 0.55, 32 %, while
 * lexical questions keep their recall.
 */
export const LEXICAL_MIN_RELEVANCE = 0.55;
/**
 * A passage is vector evidence when its cosine similarity to the query reaches this.
 * Embedders differ in how similar unrelated texts look; VECTOR_MIN_SIMILARITY_BY_EMBEDDER
 * holds what is known of particular ones.
 */
export const VECTOR_MIN_SIMILARITY = 0.5;
export const VECTOR_MIN_SIMILARITY_BY_EMBEDDER: Record<string, number> = {};
/**
 * Cosine similarity alone cannot tell an answer from the best of nothing (averaged word
 * vectors make any two English texts look ~0.6 alike), but an answer stands out from
 * the query's neighbourhood: a vector hit is evidence only when it lies at least this
 * far above the mean similarity of the query's VECTOR_NEIGHBOURHOOD nearest chunks.
 * A question the documents cannot answer meets a flat neighbourhood.
 */
export const VECTOR_MIN_MARGIN = 0.1;
export const VECTOR_NEIGHBOURHOOD = 10;

export const vectorFloorFor = (embedder: string): number => VECTOR_MIN_SIMILARITY_BY_EMBEDDER[embedder] ?? VECTOR_MIN_SIMILARITY;

/**
 * The similarity a hit among `nearest` (sorted, most similar first) must reach to count
 * as evidence: the embedder's floor, and the margin above the neighbourhood when there
 * is one (a collection of a few chunks has none; the floor alone applies there).
 */
export function vectorEvidenceFloor(embedder: string, nearest: readonly { similarity: number }[]): number {
  const floor = vectorFloorFor(embedder);
  if (nearest.length < VECTOR_NEIGHBOURHOOD) return floor;
  const mean = nearest.slice(0, VECTOR_NEIGHBOURHOOD).reduce((sum, hit) => sum + hit.similarity, 0) / VECTOR_NEIGHBOURHOOD;
  return Math.max(floor, mean + VECTOR_MIN_MARGIN);
}

/** A vector hit with the floor of the embedder that found it. */
export interface ScoredVectorHit extends VectorHit {
  floor: number;
}

export interface FusedHit {
  chunkId: string;
  /** The reciprocal-rank fusion value: what the snippets are ordered by. */
  fused: number;
  /** 0..1, the best evidence (see Snippet.score). */
  score: number;
}

export interface FusionOptions {
  topK: number;
  minScore: number;
}

export function fuse(lexical: LexicalHit[], vector: ScoredVectorHit[], options: FusionOptions): FusedHit[] {
  const byId = new Map<string, { fused: number; score: number; evidence: boolean }>();
  const entry = (chunkId: string) => {
    const found = byId.get(chunkId) ?? { fused: 0, score: 0, evidence: false };
    byId.set(chunkId, found);
    return found;
  };
  lexical.forEach((hit, rank) => {
    const e = entry(hit.chunkId);
    e.fused += 1 / (RRF_K + rank + 1);
    e.score = Math.max(e.score, hit.relevance);
    e.evidence ||= hit.relevance >= LEXICAL_MIN_RELEVANCE;
  });
  vector.forEach((hit, rank) => {
    const e = entry(hit.chunkId);
    e.fused += 1 / (RRF_K + rank + 1);
    e.score = Math.max(e.score, Math.min(1, Math.max(0, hit.similarity)));
    e.evidence ||= hit.similarity >= hit.floor;
  });
  return [...byId.entries()]
    .filter(([, e]) => e.evidence && e.score >= options.minScore)
    .map(([chunkId, e]) => ({ chunkId, fused: e.fused, score: e.score }))
    .sort((a, b) => b.fused - a.fused || b.score - a.score || (a.chunkId < b.chunkId ? -1 : 1))
    .slice(0, options.topK);
}
