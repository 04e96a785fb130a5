// Token counting for chunk budgets. cl100k_base is a stand-in for whatever model
// embeds or reads the chunks (they all count within ~10% of it on prose); it loads
// in about half the time of o200k, and every extraction worker loads it afresh.
import { countTokens as count } from 'gpt-tokenizer/encoding/cl100k_base';

// Documents may contain "<|endoftext|>" and friends; they are text here, never control tokens.
const PLAIN = { disallowedSpecial: new Set<string>() };

export const countTokens = (text: string): number => count(text, PLAIN);

const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });

/** A paragraph's sentences, each with its trailing space trimmed. */
export function splitSentences(text: string): string[] {
  return [...sentences.segment(text)].map((s) => s.segment.trim()).filter((s) => s !== '');
}

/**
 * Cuts text that is over `budget` on its own (one endless sentence, a line of
 * base64) into pieces of at most `budget` tokens: between words where it can,
 * inside a word only when a single word is over the budget.
 */
export function splitByTokens(text: string, budget: number): string[] {
  const pieces: string[] = [];
  let piece = '';
  let tokens = 0;
  for (const word of text.split(/(?<=\s)/)) {
    const wordTokens = countTokens(word);
    if (tokens + wordTokens <= budget) {
      piece += word;
      tokens += wordTokens;
      continue;
    }
    if (piece.trim() !== '') pieces.push(piece.trim());
    piece = '';
    tokens = 0;
    let rest = word;
    while (countTokens(rest) > budget) {
      // The longest prefix within the budget, by halving: a rare path (a word longer than a chunk).
      let low = 1;
      let high = rest.length;
      while (low < high) {
        const mid = Math.ceil((low + high) / 2);
        if (countTokens(rest.slice(0, mid)) <= budget) low = mid;
        else high = mid - 1;
      }
      if (low > 1 && /[\uD800-\uDBFF]/.test(rest[low - 1]!)) low--; // never between the halves of a surrogate pair
      pieces.push(rest.slice(0, low));
      rest = rest.slice(low);
    }
    piece = rest;
    tokens = countTokens(rest);
  }
  if (piece.trim() !== '') pieces.push(piece.trim());
  return pieces;
}
