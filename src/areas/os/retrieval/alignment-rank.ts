// The fused ranking's head, re-ordered by how well each passage covers the question
// word by word (the built-in word vectors' alignment, embedders/word-vectors/alignment.ts):
// a third, finer signal than either leg, affordable on a few dozen passages. Measured on
// bench/retrieval's dev split (docs/retrieval.md, "Alignment"): recall@5 of paraphrased
// questions 0.77 → 0.85, no kind worse. It needs the passages' text, which the snippets
// need anyway: the rows read here are handed on.
import type { FusedHit } from './fusion.js';
import type { SnippetRow } from './repository.js';

/** How many of the fused ranking's first passages are aligned and re-ordered. */
export const ALIGNED_CANDIDATES = 40;
/** The alignment's weight as a reciprocal-rank leg beside the fused order (RRF constant: fusion's). */
export const ALIGNMENT_WEIGHT = 1;
/** The best alignment among this many first passages is the query's alignment evidence. */
export const ALIGNMENT_EVIDENCE_DEPTH = 3;

/** The built-in word vectors' alignment; null when they are not loaded (the head keeps its fused order). */
export type Aligner = (query: string, texts: string[]) => Promise<number[] | null>;

/** The text a passage is aligned on: what the ranking sees of it (title and heading path lead, as in the index). */
export const alignedText = (row: SnippetRow): string => `${[row.title, ...row.heading_path].join(' ')}\n${row.content}`;

export interface AlignedHead {
  hits: FusedHit[];
  /** The best alignment of the first ALIGNMENT_EVIDENCE_DEPTH passages after re-ordering; null when none was computed. */
  best: number | null;
}

export async function alignHead(
  align: Aligner | undefined,
  query: string,
  head: FusedHit[],
  rows: Map<string, SnippetRow>,
  k: number,
): Promise<AlignedHead> {
  const present = head.filter((hit) => rows.has(hit.chunkId));
  const scores =
    align && present.length
      ? await align(
          query,
          present.map((hit) => alignedText(rows.get(hit.chunkId)!)),
        )
      : null;
  if (!scores) return { hits: head, best: null };
  return reorder(present, new Map(present.map((hit, i) => [hit.chunkId, scores[i]!])), k);
}

/** `head` (fused order) re-ordered with `alignment` as a second reciprocal-rank leg; the best alignment of its new first passages. */
export function reorder<T extends { chunkId: string }>(head: T[], alignment: Map<string, number>, k: number, weight = ALIGNMENT_WEIGHT) {
  const order = new Map(head.map((hit, i) => [hit.chunkId, 1 / (k + i + 1)]));
  const byAlignment = [...head].sort((a, b) => alignment.get(b.chunkId)! - alignment.get(a.chunkId)!);
  for (const [i, hit] of byAlignment.entries()) order.set(hit.chunkId, order.get(hit.chunkId)! + weight / (k + i + 1));
  const hits = [...head].sort((a, b) => order.get(b.chunkId)! - order.get(a.chunkId)!);
  const best = hits.length ? Math.max(...hits.slice(0, ALIGNMENT_EVIDENCE_DEPTH).map((hit) => alignment.get(hit.chunkId)!)) : null;
  return { hits, best };
}
