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
 */
export const LEXICAL_MIN_RELEVANCE = 0.45;
/**
 * A passage is vector evidence when its cosine similarity to the query reaches this.
 * Embedders differ in how similar unrelated texts look; VECTOR_MIN_SIMILARITY_BY_EMBEDDER
 * holds what is known of particular ones.
 */
export const VECTOR_MIN_SIMILARITY = 0.5;
export const VECTOR_MIN_SIMILARITY_BY_EMBEDDER: Record<string, number> = {};

export const vectorFloorFor = (embedder: string): number => VECTOR_MIN_SIMILARITY_BY_EMBEDDER[embedder] ?? VECTOR_MIN_SIMILARITY;

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
