// From ranked snippets to the figures issue 27 asks for, per split, mode and kind:
// recall@1/5/10 and MRR (the answer's document among the snippets), answer-string
// containment@5 (a top-5 snippet of that document holds the answer's text), the
// false-grounding rate on unanswerable questions, and the verdicts on the test split.
import type { Kind, Question, Split } from './dataset.js';
import { normalizeText } from './text.js';
import type { Snippet } from './types.js';

/** What was searched: one of the gateway's modes, or the in-process BM25 reference. */
export type Method = 'bm25' | 'lexical' | 'vector' | 'hybrid';

export interface Judged {
  id: string;
  kind: Kind;
  split: Split;
  method: Method;
  /** 1-based rank of the first snippet from an answer's document; null when none is. */
  rank: number | null;
  /** 1-based rank of the first snippet from an answer's document holding its text. */
  passageRank: number | null;
  returned: number;
  status?: string;
  ms: number;
  top: { documentName: string; chunkIndex: number; score: number }[];
}

export function judge(question: Question, snippets: Snippet[]): { rank: number | null; passageRank: number | null } {
  const wanted = question.answers.map((a) => ({ document: a.document, contains: normalizeText(a.contains) }));
  const rank = snippets.findIndex((s) => wanted.some((a) => a.document === s.documentName));
  const passageRank = snippets.findIndex((s) => {
    const content = normalizeText(s.content);
    return wanted.some((a) => a.document === s.documentName && content.includes(a.contains));
  });
  return { rank: rank === -1 ? null : rank + 1, passageRank: passageRank === -1 ? null : passageRank + 1 };
}

export type RowKind = Kind | 'answerable';

export interface Row {
  split: Split;
  method: Method;
  kind: RowKind;
  questions: number;
  recallAt1: number | null;
  recallAt5: number | null;
  recallAt10: number | null;
  mrr: number | null;
  containsAt5: number | null;
  /** Unanswerable questions that got any snippet back. */
  falseGrounding: number | null;
  /** Answerable questions that got nothing back (abstained wrongly). */
  emptyAnswers: number | null;
  p50Ms: number;
}

const mean = (values: number[]) => (values.length ? values.reduce((sum, v) => sum + v, 0) / values.length : Number.NaN);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)]! : Number.NaN;
}

function row(split: Split, method: Method, kind: RowKind, judged: Judged[]): Row {
  const answerable = kind !== 'unanswerable';
  const within = (k: number, of: (j: Judged) => number | null) => mean(judged.map((j) => (of(j) !== null && of(j)! <= k ? 1 : 0)));
  const rank = (j: Judged) => j.rank;
  return {
    split,
    method,
    kind,
    questions: judged.length,
    recallAt1: answerable ? within(1, rank) : null,
    recallAt5: answerable ? within(5, rank) : null,
    recallAt10: answerable ? within(10, rank) : null,
    mrr: answerable ? mean(judged.map((j) => (j.rank === null ? 0 : 1 / j.rank))) : null,
    containsAt5: answerable ? within(5, (j) => j.passageRank) : null,
    falseGrounding: answerable ? null : mean(judged.map((j) => (j.returned > 0 ? 1 : 0))),
    emptyAnswers: answerable ? mean(judged.map((j) => (j.returned === 0 ? 1 : 0))) : null,
    p50Ms: median(judged.map((j) => j.ms)),
  };
}

export function summarize(judged: Judged[], methods: readonly Method[], kinds: readonly Kind[], splits: readonly Split[]): Row[] {
  const rows: Row[] = [];
  for (const split of splits)
    for (const method of methods) {
      const of = judged.filter((j) => j.method === method && j.split === split);
      for (const kind of kinds) {
        const ofKind = of.filter((j) => j.kind === kind);
        if (ofKind.length) rows.push(row(split, method, kind, ofKind));
      }
      const answerable = of.filter((j) => j.kind !== 'unanswerable');
      if (answerable.length) rows.push(row(split, method, 'answerable', answerable));
    }
  return rows;
}

export interface Verdict {
  target: string;
  measured: string;
  pass: boolean;
}

/** Issue 27's targets, on the test split, for hybrid retrieval with the built-in embedder. */
export function verdicts(rows: Row[], kinds: readonly Kind[]): Verdict[] {
  const at = (method: Method, kind: RowKind) => rows.find((r) => r.split === 'test' && r.method === method && r.kind === kind);
  const out: Verdict[] = [];
  const floor = (target: string, value: number | null | undefined, min: number) =>
    out.push({ target, measured: fmt(value), pass: (value ?? 0) >= min - 1e-9 });
  floor('hybrid recall@5 overall ≥ 0.80', at('hybrid', 'answerable')?.recallAt5, 0.8);
  floor('hybrid recall@5 on paraphrase ≥ 0.55', at('hybrid', 'paraphrase')?.recallAt5, 0.55);
  const fg = at('hybrid', 'unanswerable')?.falseGrounding;
  out.push({ target: 'hybrid false grounding ≤ 0.35', measured: fmt(fg), pass: fg !== undefined && fg !== null && fg <= 0.35 + 1e-9 });
  const answerableKinds = kinds.filter((k) => k !== 'unanswerable');
  const notBelow = (method: Method, reference: Method) => {
    const worse = answerableKinds.filter((k) => (at(method, k)?.recallAt5 ?? 0) < (at(reference, k)?.recallAt5 ?? 0) - 1e-9);
    out.push({
      target: `${method} recall@5 ≥ ${reference} on every kind`,
      measured: worse.length
        ? worse.map((k) => `${k} ${fmt(at(method, k)?.recallAt5)} < ${fmt(at(reference, k)?.recallAt5)}`).join(', ')
        : 'all kinds',
      pass: worse.length === 0,
    });
  };
  notBelow('hybrid', 'bm25');
  notBelow('hybrid', 'lexical');
  notBelow('hybrid', 'vector');
  notBelow('lexical', 'bm25');
  return out;
}

export function fmt(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);
}

export function printTable(rows: Row[]): void {
  console.log('| split | method | kind | n | R@1 | R@5 | R@10 | MRR | contains@5 | false grounding | empty | p50 ms |');
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows)
    console.log(
      `| ${r.split} | ${r.method} | ${r.kind} | ${r.questions} | ${fmt(r.recallAt1)} | ${fmt(r.recallAt5)} | ${fmt(r.recallAt10)} | ` +
        `${fmt(r.mrr)} | ${fmt(r.containsAt5)} | ${fmt(r.falseGrounding)} | ${fmt(r.emptyAnswers)} | ${fmt(r.p50Ms, 1)} |`,
    );
}
