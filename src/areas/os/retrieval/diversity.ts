// The head of a ranking spread over documents: one long document on the question's
// topic otherwise fills the first places with its neighbouring passages (a guide's
// every section mentions "docking station"), and the one passage of another document
// that holds the answer (a row of the station directory) drops out of the top-k.
// Chosen on bench/retrieval's dev split (docs/retrieval.md, "Diversity"): at most three
// passages of one document among the first five lifted hybrid recall@5 0.92 → 0.93 and
// left the answering passage in the top five as often (contains@5 0.78); one a document
// lifted recall as much but pushed the answering passage out (contains@5 0.68), since
// the second passage of the right document is often the one that holds the answer.
// The passages it moves down follow right after the head.
import type { FusedHit } from './fusion.js';

/** How many first places are spread over documents. */
export const DIVERSE_HEAD = 5;
/** Passages of one document among those first places. */
export const PER_DOCUMENT_IN_HEAD = 3;

/**
 * `ranked` with its first DIVERSE_HEAD places taken by the best passage of each
 * document in turn (at most PER_DOCUMENT_IN_HEAD each), then every other passage in its
 * original order. A ranking of one document's passages is returned as it was.
 */
export function spreadHead<T extends Pick<FusedHit, 'chunkId'>>(
  ranked: T[],
  documentOf: (chunkId: string) => string | undefined,
  head = DIVERSE_HEAD,
  perDocument = PER_DOCUMENT_IN_HEAD,
): T[] {
  const first: T[] = [];
  const taken = new Set<string>();
  const perDoc = new Map<string, number>();
  for (const hit of ranked) {
    if (first.length >= head) break;
    const document = documentOf(hit.chunkId) ?? hit.chunkId;
    const seen = perDoc.get(document) ?? 0;
    if (seen >= perDocument) continue;
    perDoc.set(document, seen + 1);
    first.push(hit);
    taken.add(hit.chunkId);
  }
  return [...first, ...ranked.filter((hit) => !taken.has(hit.chunkId))];
}
