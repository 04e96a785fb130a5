// Word alignment: how well a passage covers each word of a query, in meaning. Every
// query word is matched with its closest word of the passage (cosine of their word
// vectors; the same word scores 1), and the matches are averaged with SIF weights, so
// the question's distinctive words count and "what", "is", "the" barely do. A passage
// about the right topic that lacks the one specific asked about ("the rack's weight
// limit" against a passage on the rack's fitting) loses that word's match; a passage
// that says it in other words ("holiday" for "vacation") keeps most of it. Averaged
// sentence vectors blur exactly this difference.
import type { WordVectorTable } from './format.js';
import { sifWeight, tokenize } from './pooling.js';
import type { Vocabulary } from './vocabulary.js';

/** A passage word closer than this to a query word counts as its match at all; below it, the word is unmatched (0). */
export const MIN_WORD_SIMILARITY = 0.3;

export class WordAligner {
  /** Euclidean norm of each int8 row (the quantisation scale cancels out of a cosine). */
  private readonly norms: Float32Array;

  constructor(
    private readonly table: WordVectorTable,
    private readonly vocabulary: Vocabulary,
  ) {
    const dims = table.dimensions;
    this.norms = new Float32Array(table.count);
    for (let row = 0; row < table.count; row++) {
      let sum = 0;
      for (let d = 0; d < dims; d++) sum += (table.vectors[row * dims + d] as number) ** 2;
      this.norms[row] = Math.sqrt(sum);
    }
  }

  /** 0..1 per text: the SIF-weighted mean, over the query's known words, of each one's best match in the text. */
  align(query: string, texts: string[]): number[] {
    const words = this.rowsOf(query);
    const weights = words.map((row) => sifWeight(this.table.ranks[row] as number, this.table.sourceVocabulary));
    const total = weights.reduce((sum, w) => sum + w, 0);
    if (total === 0) return texts.map(() => 0);
    return texts.map((text) => {
      const passage = this.rowsOf(text);
      let covered = 0;
      for (const [i, row] of words.entries()) covered += (weights[i] as number) * this.bestMatch(row, passage);
      return covered / total;
    });
  }

  private rowsOf(text: string): number[] {
    const rows = new Set<number>();
    for (const word of tokenize(text)) {
      const row = this.vocabulary.indexOf(word);
      if (row >= 0) rows.add(row);
    }
    return [...rows];
  }

  private bestMatch(row: number, passage: number[]): number {
    const dims = this.table.dimensions;
    const vectors = this.table.vectors;
    const norm = this.norms[row] as number;
    if (norm === 0) return 0;
    let best = 0;
    for (const other of passage) {
      if (other === row) return 1;
      const otherNorm = this.norms[other] as number;
      if (otherNorm === 0) continue;
      let dot = 0;
      for (let d = 0, a = row * dims, b = other * dims; d < dims; d++) dot += (vectors[a + d] as number) * (vectors[b + d] as number);
      best = Math.max(best, dot / (norm * otherNorm));
    }
    return best >= MIN_WORD_SIMILARITY ? best : 0;
  }
}
