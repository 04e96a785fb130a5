// `npm run bench:retrieval -- --tune`: the dev split's figures for every fusion
// weighting and answerability rule in a grid, from the two legs' candidates fetched
// once per question (the legs do not depend on either setting). Ranking is chosen
// first (recall@5 per kind), then the rule (recall@5 counting abstentions as misses,
// against false grounding). Only dev questions are looked at: the test split is for
// the report.
import { type AnswerabilityRule, evidenceOf, isAnswerable } from '../../src/areas/os/retrieval/answerability.js';
import { fuse, type FusionWeights } from '../../src/areas/os/retrieval/fusion.js';
import type { Legs } from '../../src/areas/os/retrieval/search.js';
import type { ReferenceChunk } from './bm25.js';
import { KINDS, type Question } from './dataset.js';
import { fmt, judge } from './metrics.js';

export interface Probed {
  question: Question;
  legs: Legs;
}

const range = (from: number, to: number, step: number) =>
  Array.from({ length: Math.round((to - from) / step) + 1 }, (_, i) => Math.round((from + i * step) * 1000) / 1000);

type Scores = Record<string, number>;

function scoreRanking(
  probed: Probed[],
  chunks: Map<string, ReferenceChunk>,
  rank: (legs: Legs) => string[],
  answerable?: (legs: Legs) => boolean,
) {
  const hits: Record<string, number[]> = {};
  let grounded = 0;
  let unanswerable = 0;
  for (const { question, legs } of probed) {
    const ok = answerable ? answerable(legs) : true;
    if (question.kind === 'unanswerable') {
      unanswerable++;
      if (ok && rank(legs).length) grounded++;
      continue;
    }
    const snippets = ok
      ? rank(legs)
          .slice(0, 10)
          .flatMap((id) => (chunks.has(id) ? [{ ...chunks.get(id)!, score: 0 }] : []))
      : [];
    const { rank: at } = judge(question, snippets);
    const list = hits[question.kind] ?? [];
    list.push(at !== null && at <= 5 ? 1 : 0);
    hits[question.kind] = list;
  }
  const scores: Scores = {};
  const all: number[] = [];
  for (const [kind, list] of Object.entries(hits)) {
    scores[kind] = list.reduce((a, b) => a + b, 0) / list.length;
    all.push(...list);
  }
  scores.answerable = all.reduce((a, b) => a + b, 0) / Math.max(1, all.length);
  scores.falseGrounding = unanswerable ? grounded / unanswerable : 0;
  return scores;
}

const line = (label: string, s: Scores) =>
  `${label.padEnd(46)} R@5 ${fmt(s.answerable)} | ${KINDS.filter((k) => k !== 'unanswerable')
    .map((k) => `${k} ${fmt(s[k])}`)
    .join(' ')} | FG ${fmt(s.falseGrounding)}`;

export function tune(probed: Probed[], chunks: Map<string, ReferenceChunk>): void {
  const dev = probed.filter((p) => p.question.split === 'dev');
  console.log(`\ntuning on ${dev.length} dev questions`);
  const ids = (list: { chunkId: string }[]) => list.map((h) => h.chunkId);
  console.log(
    line(
      'lexical leg alone',
      scoreRanking(dev, chunks, (l) => ids(l.lexical)),
    ),
  );
  console.log(
    line(
      'vector leg alone',
      scoreRanking(dev, chunks, (l) => ids(l.vector)),
    ),
  );

  let best: { weights: FusionWeights; scores: Scores } | undefined;
  for (const k of [5, 20, 60])
    for (const vector of [0.5, 0.75, 1, 1.25, 1.5]) {
      const weights = { k, lexical: 1, vector };
      const scores = scoreRanking(dev, chunks, (l) => ids(fuse(l.lexical, l.vector, weights)));
      console.log(line(`fused k ${k} vector weight ${vector}`, scores));
      if (!best || scores.answerable! > best.scores.answerable!) best = { weights, scores };
    }
  console.log(line(`best fusion ${JSON.stringify(best!.weights)}`, best!.scores));

  const rules: { rule: AnswerabilityRule; scores: Scores }[] = [];
  for (const coverage of range(0.3, 0.9, 0.05))
    for (const margin of range(0.04, 0.2, 0.02))
      for (const agreedCoverage of range(0.1, 0.5, 0.1))
        for (const similarity of range(0.4, 0.7, 0.1)) {
          const rule = { coverage, margin, agreedCoverage, similarity };
          const scores = scoreRanking(
            dev,
            chunks,
            (l) => ids(fuse(l.lexical, l.vector, best!.weights)),
            (l) => isAnswerable(evidenceOf(l.lexical, l.vector), rule),
          );
          rules.push({ rule, scores });
        }
  for (const cap of [0.2, 0.25, 0.3, 0.35]) {
    const pick = rules.filter((r) => r.scores.falseGrounding! <= cap).sort((a, b) => b.scores.answerable! - a.scores.answerable!)[0];
    if (pick) console.log(line(`hybrid, FG ≤ ${cap}: ${JSON.stringify(pick.rule)}`, pick.scores));
  }
  for (const coverage of range(0.3, 0.9, 0.05)) {
    const rule = { coverage, margin: 1, agreedCoverage: 1, similarity: 1 };
    const scores = scoreRanking(
      dev,
      chunks,
      (l) => ids(l.lexical),
      (l) => isAnswerable(evidenceOf(l.lexical, []), rule),
    );
    console.log(line(`lexical only, coverage ≥ ${coverage}`, scores));
  }
}
