// Text → one unit vector: tokenise, look each word up, and average the word vectors
// with SIF weights (Arora et al., 2017, "A simple but tough-to-beat baseline for
// sentence embeddings"): weight(w) = a / (a + p(w)), so that "the", "of", "is" barely
// count and rare, distinctive words dominate. There is no corpus here to count p(w),
// so it is estimated from the word's frequency rank in the source with Zipf's law:
// p(rank) ≈ 1 / (rank · ln(1.78 · V)) for a vocabulary of V words.
import type { WordVectorTable } from './format.js';
import { Vocabulary } from './vocabulary.js';

/**
 * SIF's smoothing constant. Smaller than the paper's 1e-3 because the Zipf estimate
 * spreads probability over the whole 341k-word source: with 3e-5, words past rank
 * ~2,500 weigh more than half. Chosen on 20 paraphrased question/passage pairs
 * (company-handbook style): MRR 0.55 at 1e-3, 0.68 at 3e-5 (with the common
 * direction removed; 0.44 and 0.56 without).
 */
export const SIF_A = 3e-5;

/** Zipf's estimate of a word's probability from its 0-based frequency rank. */
export function zipfProbability(rank: number, vocabularySize: number): number {
  return 1 / ((rank + 1) * Math.log(1.78 * vocabularySize));
}

export function sifWeight(rank: number, vocabularySize: number, a = SIF_A): number {
  return a / (a + zipfProbability(rank, vocabularySize));
}

/**
 * Lowercase words made of a-z, as the vocabulary holds them. Accents are folded
 * ("café" → "cafe"); English contractions become their words ("don't" → "do not")
 * or lose the clitic ("employee's" → "employee"), which the vocabulary lacks anyway.
 */
export function tokenize(text: string): string[] {
  let lower = text.toLowerCase();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  if (/[^\x00-\x7f]/.test(lower))
    lower = lower
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .replace(/[\u2018\u2019\u02bc]/g, "'");
  if (lower.includes("'")) {
    lower = lower
      .replace(/\bcan't\b/g, 'can not')
      .replace(/\bwon't\b/g, 'will not')
      .replace(/n't\b/g, ' not')
      .replace(/'(s|re|ve|ll|d|m)\b/g, ' ');
  }
  return lower.match(/[a-z]+/g) ?? [];
}

/**
 * The direction every pooled text shares: the expected SIF-weighted sum of word
 * vectors under the Zipf estimate. SIF removes the first principal component of a
 * corpus's sentence vectors; without a corpus, this expectation is the closest fixed
 * stand-in (it is what an "average sentence" looks like), and projecting it out
 * keeps frequent-word mass from making unrelated texts look alike.
 */
export function commonDirection(table: WordVectorTable, a = SIF_A): Float32Array {
  const dims = table.dimensions;
  const sum = new Float64Array(dims);
  for (let i = 0; i < table.count; i++) {
    const p = zipfProbability(table.ranks[i] as number, table.sourceVocabulary);
    const weight = p * (a / (a + p)) * (table.scales[i] as number);
    for (let d = 0; d < dims; d++) sum[d] = (sum[d] as number) + weight * (table.vectors[i * dims + d] as number);
  }
  return normalised(sum);
}

export interface PoolingOptions {
  a?: number;
  /** Project out the table's common direction (default true). */
  removeCommon?: boolean;
}

export class SifPooler {
  readonly vocabulary: Vocabulary;
  /** a / (a + p(w)) × the row's quantisation scale, per row. */
  private readonly weights: Float32Array;
  private readonly common: Float32Array | undefined;

  constructor(
    private readonly table: WordVectorTable,
    options: PoolingOptions = {},
  ) {
    this.vocabulary = new Vocabulary(table.words, table.count);
    this.weights = new Float32Array(table.count);
    for (let i = 0; i < table.count; i++) {
      this.weights[i] = sifWeight(table.ranks[i] as number, table.sourceVocabulary, options.a) * (table.scales[i] as number);
    }
    // Derived at load (~50 ms) rather than stored, so it always matches `a`.
    this.common = options.removeCommon === false ? undefined : commonDirection(table, options.a);
  }

  get dimensions(): number {
    return this.table.dimensions;
  }

  /** Writes the unit vector of `text` into `out` (all zeros when no word is known). Returns the known-word count. */
  embedInto(text: string, out: Float32Array): number {
    const dims = this.table.dimensions;
    const vectors = this.table.vectors;
    const sum = new Float64Array(dims);
    let known = 0;
    for (const word of tokenize(text)) {
      const row = this.vocabulary.indexOf(word);
      if (row < 0) continue;
      known++;
      const weight = this.weights[row] as number;
      const base = row * dims;
      for (let d = 0; d < dims; d++) sum[d] = (sum[d] as number) + weight * (vectors[base + d] as number);
    }
    if (known > 0 && this.common) {
      let projection = 0;
      for (let d = 0; d < dims; d++) projection += (sum[d] as number) * (this.common[d] as number);
      for (let d = 0; d < dims; d++) sum[d] = (sum[d] as number) - projection * (this.common[d] as number);
    }
    out.set(normalised(sum));
    return known;
  }
}

function normalised(vector: Float64Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  const out = new Float32Array(vector.length);
  if (norm > 0) for (let d = 0; d < vector.length; d++) out[d] = (vector[d] as number) / norm;
  return out;
}
