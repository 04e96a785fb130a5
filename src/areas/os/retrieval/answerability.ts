// Does the best evidence for a query hold up? One decision per query, taken after
// ranking: an answerable query returns its whole top-k, an unanswerable one nothing
// (status `no_matches`). The evidence is what the legs saw at their top:
// - coverage: the share of the query's information (its idf mass) the best lexical
//   passage holds;
// - margin: how far the best vector hit stands above the query's neighbourhood (the
//   mean similarity of its nearest chunks). Averaged word vectors make any two English
//   texts look alike, so an absolute cosine says little; an answer stands out, and a
//   question the documents cannot answer meets a flat neighbourhood;
// - agreement: the legs' best passages coincide, which noise rarely does;
// - alignment: how well the best of the first passages covers the question word by
//   word (alignment-rank.ts), where the built-in word vectors are loaded. It decides
//   where it is known; the other three where it is not.
import type { LexicalHit } from './lexical.js';
import type { VectorHit } from './vector.js';

export interface Evidence {
  coverage: number;
  /** Null when the vector leg did not run or found too few chunks for a neighbourhood. */
  margin: number | null;
  /** The best vector similarity, for a search of a few chunks (no neighbourhood). */
  similarity: number | null;
  agreement: boolean;
  /** Null where no alignment was computed (word vectors not loaded, a language other than English). */
  alignment: number | null;
}

export interface AnswerabilityRule {
  /** Coverage that answers on its own. */
  coverage: number;
  /** Vector margin that answers on its own. */
  margin: number;
  /** Coverage enough when the two legs agree. */
  agreedCoverage: number;
  /** Similarity the best vector hit needs besides its margin (alone, where there is no neighbourhood). */
  similarity: number;
  /** Alignment that answers (where known; coverage ≥ `coverage` answers too). */
  alignment: number;
  /**
   * Coverage that answers where text is all there is (no vectors, no alignment: a
   * PostgreSQL server without pgvector, an embedder still being prepared). Lower than
   * `coverage`: there a paraphrased question has nothing else to pass on.
   */
  textOnlyCoverage: number;
}

/** The neighbourhood a margin is measured against: the query's nearest chunks. */
export const NEIGHBOURHOOD = 10;
/** Agreement: the lexical leg's best passage is among the vector leg's first few, or the reverse. */
export const AGREEMENT_DEPTH = 3;

/** Calibrated on the dev split of bench/retrieval (docs/retrieval.md, "Answerability"). */
export const ANSWERABILITY: AnswerabilityRule = {
  coverage: 0.55,
  margin: 0.1,
  agreedCoverage: 0.3,
  similarity: 0.5,
  alignment: 0.55,
  textOnlyCoverage: 0.3,
};

export function evidenceOf(lexical: LexicalHit[], vector: VectorHit[], alignment: number | null = null): Evidence {
  const coverage = lexical.reduce((best, hit) => Math.max(best, hit.relevance), 0);
  const top = vector[0];
  const margin =
    vector.length >= NEIGHBOURHOOD && top
      ? top.similarity - vector.slice(0, NEIGHBOURHOOD).reduce((sum, hit) => sum + hit.similarity, 0) / NEIGHBOURHOOD
      : null;
  const lexicalTop = new Set(lexical.slice(0, AGREEMENT_DEPTH).map((h) => h.chunkId));
  const vectorTop = new Set(vector.slice(0, AGREEMENT_DEPTH).map((h) => h.chunkId));
  const agreement = (lexical[0] !== undefined && vectorTop.has(lexical[0].chunkId)) || (top !== undefined && lexicalTop.has(top.chunkId));
  return { coverage, margin, similarity: top ? top.similarity : null, agreement, alignment };
}

export function isAnswerable(evidence: Evidence, rule: AnswerabilityRule = ANSWERABILITY): boolean {
  if (evidence.coverage >= rule.coverage) return true;
  if (evidence.alignment !== null) return evidence.alignment >= rule.alignment;
  if (evidence.similarity === null) return evidence.coverage >= rule.textOnlyCoverage;
  if (evidence.agreement && evidence.coverage >= rule.agreedCoverage) return true;
  if (evidence.similarity < rule.similarity) return false;
  return evidence.margin === null || evidence.margin >= rule.margin;
}
