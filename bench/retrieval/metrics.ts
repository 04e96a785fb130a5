// From ranked snippets to the figures issue 16 asks for: recall@1/5/10 and MRR per
// kind of answerable question, the false-grounding rate on unanswerable ones, and
// the verdicts against the targets for hybrid retrieval.
import type { Kind, Question } from './dataset.js';
import { normalizeText } from './text.js';
import type { Mode, Snippet } from './types.js';

export interface Judged {
  id: string;
  kind: Kind;
  mode: Mode;
  /** 1-based rank of the first snippet that holds an answer; null when none does. */
  rank: number | null;
  returned: number;
  ms: number;
  top: { documentName: string; chunkIndex: number; score: number }[];
}

/** The rank of the first snippet from an answer's document whose content holds that answer's text. */
export function firstHit(question: Question, snippets: Snippet[]): number | null {
  const wanted = question.answers.map((a) => ({ document: a.document, contains: normalizeText(a.contains) }));
  const index = snippets.findIndex((s) => {
    const content = normalizeText(s.content);
    return wanted.some((a) => a.document === s.documentName && content.includes(a.contains));
  });
  return index === -1 ? null : index + 1;
}

export interface Row {
  mode: Mode;
  kind: Kind | 'answerable';
  questions: number;
  recallAt1: number | null;
  recallAt5: number | null;
  recallAt10: number | null;
  mrr: number | null;
  /** Unanswerable questions that got any snippet back. */
  falseGrounding: number | null;
  /** Answerable questions that got nothing back (the threshold cut everything). */
  emptyAnswers: number | null;
  meanSnippets: number;
  p50Ms: number;
}

function mean(values: number[]): number {
  return values.length ? values.reduce((sum, v) => sum + v, 0) / values.length : Number.NaN;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)]! : Number.NaN;
}

function row(mode: Mode, kind: Row['kind'], judged: Judged[]): Row {
  const answerable = kind !== 'unanswerable';
  const recall = (k: number) => (answerable ? mean(judged.map((j) => (j.rank !== null && j.rank <= k ? 1 : 0))) : null);
  return {
    mode,
    kind,
    questions: judged.length,
    recallAt1: recall(1),
    recallAt5: recall(5),
    recallAt10: recall(10),
    mrr: answerable ? mean(judged.map((j) => (j.rank === null ? 0 : 1 / j.rank))) : null,
    falseGrounding: answerable ? null : mean(judged.map((j) => (j.returned > 0 ? 1 : 0))),
    emptyAnswers: answerable ? mean(judged.map((j) => (j.returned === 0 ? 1 : 0))) : null,
    meanSnippets: mean(judged.map((j) => j.returned)),
    p50Ms: median(judged.map((j) => j.ms)),
  };
}

export function summarize(judged: Judged[], modes: readonly Mode[], kinds: readonly Kind[]): Row[] {
  const rows: Row[] = [];
  for (const mode of modes) {
    const ofMode = judged.filter((j) => j.mode === mode);
    for (const kind of kinds) {
      const ofKind = ofMode.filter((j) => j.kind === kind);
      if (ofKind.length) rows.push(row(mode, kind, ofKind));
    }
    const answerable = ofMode.filter((j) => j.kind !== 'unanswerable');
    if (answerable.length) rows.push(row(mode, 'answerable', answerable));
  }
  return rows;
}

export interface Verdict {
  target: string;
  measured: string;
  pass: boolean;
}

/** Issue 16's targets for hybrid retrieval with the built-in embedder. */
export function verdicts(rows: Row[]): Verdict[] {
  const at = (mode: Mode, kind: Row['kind']) => rows.find((r) => r.mode === mode && r.kind === kind);
  const out: Verdict[] = [];
  const hp = at('hybrid', 'paraphrase');
  const lp = at('lexical', 'paraphrase');
  if (hp && lp)
    out.push({
      target: 'hybrid recall@5 on paraphrase ≥ lexical + 0.15',
      measured: `${fmt(hp.recallAt5)} vs ${fmt(lp.recallAt5)} (+${fmt((hp.recallAt5 ?? 0) - (lp.recallAt5 ?? 0))})`,
      pass: (hp.recallAt5 ?? 0) >= (lp.recallAt5 ?? 0) + 0.15 - 1e-9,
    });
  for (const kind of ['lexical', 'table'] as const) {
    const h = at('hybrid', kind);
    const l = at('lexical', kind);
    if (h && l)
      out.push({
        target: `hybrid recall@5 on ${kind} no worse than lexical (−0.02 allowed)`,
        measured: `${fmt(h.recallAt5)} vs ${fmt(l.recallAt5)}`,
        pass: (h.recallAt5 ?? 0) >= (l.recallAt5 ?? 0) - 0.02 - 1e-9,
      });
  }
  const hu = at('hybrid', 'unanswerable');
  if (hu) out.push({ target: 'hybrid false grounding ≤ 0.4', measured: fmt(hu.falseGrounding), pass: (hu.falseGrounding ?? 1) <= 0.4 });
  return out;
}

export function fmt(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);
}

export function printTable(rows: Row[]): void {
  console.log('| mode | kind | n | R@1 | R@5 | R@10 | MRR | false grounding | empty | mean snippets | p50 ms |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows)
    console.log(
      `| ${r.mode} | ${r.kind} | ${r.questions} | ${fmt(r.recallAt1)} | ${fmt(r.recallAt5)} | ${fmt(r.recallAt10)} | ${fmt(r.mrr)} | ` +
        `${fmt(r.falseGrounding)} | ${fmt(r.emptyAnswers)} | ${fmt(r.meanSnippets, 1)} | ${fmt(r.p50Ms, 1)} |`,
    );
}
