// `npm run bench:retrieval -- --tune`: the dev split's figures for the settings of the
// ranking (fusion's k and weights, the alignment's weight) and of the answerability
// rule, from each question's candidates fetched once (the legs and the alignment do
// not depend on either setting). The ranking is chosen first (recall@5 per kind), then
// the rule (recall@5 counting abstentions as misses, against false grounding). Only
// dev questions are looked at: the test split is for the report.
import { ALIGNED_CANDIDATES, reorder } from '../../src/areas/os/retrieval/alignment-rank.js';
import { ANSWERABILITY, type Evidence, evidenceOf, isAnswerable } from '../../src/areas/os/retrieval/answerability.js';
import { DIVERSE_HEAD, PER_DOCUMENT_IN_HEAD, spreadHead } from '../../src/areas/os/retrieval/diversity.js';
import { fuse, type FusionWeights } from '../../src/areas/os/retrieval/fusion.js';
import type { Legs } from '../../src/areas/os/retrieval/search.js';
import type { ReferenceChunk } from './bm25.js';
import { KINDS, type Question } from './dataset.js';
import { fmt, judge } from './metrics.js';

export interface Probed {
  question: Question;
  legs: Legs;
  /** Chunk id → its word alignment with the question, for every candidate of either leg. */
  alignment: Map<string, number>;
}

interface Setting {
  weights: FusionWeights;
  alignment: number;
  /** Passages of one document among the first DIVERSE_HEAD (diversity.ts); 0: the head is not spread. */
  perDocument: number;
}

/** The ranking a setting gives, and its evidence: what search.ts's rankScope computes. */
function ranked(p: Probed, setting: Setting, chunks: Map<string, ReferenceChunk>): { ids: string[]; evidence: Evidence } {
  const fused = fuse(p.legs.lexical, p.legs.vector, setting.weights);
  const head = fused.slice(0, ALIGNED_CANDIDATES);
  const aligned = reorder(head, p.alignment, setting.weights.k, setting.alignment);
  let hits = [...aligned.hits, ...fused.slice(ALIGNED_CANDIDATES)];
  if (setting.perDocument > 0) hits = spreadHead(hits, (id) => chunks.get(id)?.documentName, DIVERSE_HEAD, setting.perDocument);
  const ids = hits.map((h) => h.chunkId);
  return { ids, evidence: evidenceOf(p.legs.lexical, p.legs.vector, aligned.best) };
}

type Scores = Record<string, number>;

function score(probed: Probed[], chunks: Map<string, ReferenceChunk>, setting: Setting, answerable: (e: Evidence) => boolean): Scores {
  const hits: Record<string, number[]> = {};
  let grounded = 0;
  let unanswerable = 0;
  const contained: number[] = [];
  for (const p of probed) {
    const { ids, evidence } = ranked(p, setting, chunks);
    const ok = answerable(evidence) && ids.length > 0;
    if (p.question.kind === 'unanswerable') {
      unanswerable++;
      if (ok) grounded++;
      continue;
    }
    const snippets = ok ? ids.slice(0, 10).map((id) => ({ ...chunks.get(id)!, score: 0 })) : [];
    const { rank, passageRank } = judge(p.question, snippets);
    contained.push(passageRank !== null && passageRank <= 5 ? 1 : 0);
    const list = hits[p.question.kind] ?? [];
    list.push(rank !== null && rank <= 5 ? 1 : 0);
    hits[p.question.kind] = list;
  }
  const scores: Scores = {};
  const all = Object.values(hits).flat();
  for (const [kind, list] of Object.entries(hits)) scores[kind] = list.reduce((a, b) => a + b, 0) / list.length;
  scores.answerable = all.reduce((a, b) => a + b, 0) / Math.max(1, all.length);
  scores.falseGrounding = unanswerable ? grounded / unanswerable : 0;
  scores.contains = contained.reduce((a, b) => a + b, 0) / Math.max(1, contained.length);
  return scores;
}

const line = (label: string, s: Scores) =>
  `${label.padEnd(58)} R@5 ${fmt(s.answerable)} | ${KINDS.filter((k) => k !== 'unanswerable')
    .map((k) => `${k} ${fmt(s[k])}`)
    .join(' ')} | contains@5 ${fmt(s.contains)} | FG ${fmt(s.falseGrounding)}`;

const range = (from: number, to: number, step: number) =>
  Array.from({ length: Math.round((to - from) / step) + 1 }, (_, i) => Math.round((from + i * step) * 1000) / 1000);

const quantiles = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return [0.1, 0.25, 0.5, 0.75, 0.9].map((q) => fmt(sorted[Math.floor(q * sorted.length)])).join('/');
};

export function tune(probed: Probed[], chunks: Map<string, ReferenceChunk>): void {
  const dev = probed.filter((p) => p.question.split === 'dev');
  const always = () => true;
  console.log(`\ntuning on ${dev.length} dev questions; evidence by kind (10/25/50/75/90th percentiles), default ranking:`);
  const current: Setting = { weights: { k: 5, lexical: 1, vector: 1 }, alignment: 1, perDocument: PER_DOCUMENT_IN_HEAD };
  for (const kind of KINDS) {
    const evidence = dev.filter((p) => p.question.kind === kind).map((p) => ranked(p, current, chunks).evidence);
    console.log(
      `  ${kind.padEnd(13)} coverage ${quantiles(evidence.map((e) => e.coverage))}  alignment ${quantiles(evidence.map((e) => e.alignment ?? 0))}  ` +
        `margin ${quantiles(evidence.map((e) => e.margin ?? 0))}  agreement ${fmt(evidence.filter((e) => e.agreement).length / evidence.length)}`,
    );
  }

  const legsOnly =
    (legs: 'lexical' | 'vector') =>
    (p: Probed): Probed => ({
      ...p,
      legs: { lexical: legs === 'lexical' ? p.legs.lexical : [], vector: legs === 'vector' ? p.legs.vector : [] },
    });
  console.log(line('lexical leg alone', score(dev.map(legsOnly('lexical')), chunks, { ...current, alignment: 0 }, always)));
  console.log(line('vector leg alone', score(dev.map(legsOnly('vector')), chunks, { ...current, alignment: 0 }, always)));
  console.log(line('lexical leg, aligned', score(dev.map(legsOnly('lexical')), chunks, current, always)));
  let best: { setting: Setting; scores: Scores } | undefined;
  for (const k of [2, 5, 10, 20, 60])
    for (const vector of [0.5, 0.75, 1, 1.5])
      for (const alignment of [0, 0.5, 1, 2]) {
        const setting = { weights: { k, lexical: 1, vector }, alignment, perDocument: current.perDocument };
        const scores = score(dev, chunks, setting, always);
        if (alignment === 1 || vector === 1) console.log(line(`k ${k}, vector weight ${vector}, alignment weight ${alignment}`, scores));
        if (!best || scores.answerable! > best.scores.answerable! + 1e-9) best = { setting, scores };
      }
  console.log(line(`best ranking ${JSON.stringify(best!.setting)}`, best!.scores));
  for (const perDocument of [0, 1, 2, 3])
    console.log(
      line(
        `passages a document among the first ${DIVERSE_HEAD}: ${perDocument || 'any'}`,
        score(dev, chunks, { ...current, perDocument }, always),
      ),
    );

  console.log('\nanswerability (alignment where known, else the legs), on the best ranking:');
  for (const alignment of range(0.5, 0.95, 0.05))
    for (const coverage of [0.55, 0.8, 1.01]) {
      const rule = { ...ANSWERABILITY, alignment, coverage };
      console.log(
        line(
          `alignment ≥ ${alignment}, or coverage ≥ ${coverage}`,
          score(dev, chunks, best!.setting, (e) => isAnswerable(e, rule)),
        ),
      );
    }
  console.log('\nanswerability without vectors or alignment (a PostgreSQL server without pgvector):');
  const lexicalOnly = dev.map(legsOnly('lexical'));
  for (const coverage of range(0.3, 0.9, 0.05)) {
    const rule = { ...ANSWERABILITY, textOnlyCoverage: coverage };
    const setting = { ...best!.setting, alignment: 0 };
    console.log(
      line(
        `coverage ≥ ${coverage}`,
        score(lexicalOnly, chunks, setting, (e) => isAnswerable({ ...e, alignment: null }, rule)),
      ),
    );
  }
}
