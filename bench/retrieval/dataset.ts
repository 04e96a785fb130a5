// The labelled question set and the corpus it is written against, and the lint that
// keeps the labels honest: every answer must point at one exact place in its
// document, and a "paraphrase" question must share no content word with the
// sentence that answers it (otherwise it measures lexical search twice).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { contentStems, normalizeText } from './text.js';

export const KINDS = ['lexical', 'paraphrase', 'table', 'unanswerable'] as const;
export type Kind = (typeof KINDS)[number];

export interface Answer {
  /** The corpus file name, which is also the uploaded document's name. */
  document: string;
  /** A short verbatim substring of the passage that answers the question. */
  contains: string;
}

export interface Question {
  id: string;
  kind: Kind;
  question: string;
  answers: Answer[];
}

export interface CorpusFile {
  name: string;
  bytes: Buffer;
  text: string;
}

const HERE = path.dirname(new URL(import.meta.url).pathname);
export const CORPUS_DIR = path.join(HERE, 'corpus');
export const QUESTIONS_FILE = path.join(HERE, 'questions.json');

export function loadCorpus(dir = CORPUS_DIR): CorpusFile[] {
  return readdirSync(dir)
    .filter((name) => /\.(md|csv|txt|html|json)$/.test(name))
    .sort()
    .map((name) => {
      const bytes = readFileSync(path.join(dir, name));
      return { name, bytes, text: bytes.toString('utf8') };
    });
}

export function loadQuestions(file = QUESTIONS_FILE): Question[] {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(parsed)) throw new Error(`${file}: expected a JSON array of questions`);
  return parsed as Question[];
}

function occurrences(haystack: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + 1)) at.push(i);
  return at;
}

/**
 * The sentence or sentences around `needle` in `text`: from the end of the sentence
 * before it to the end of the sentence it finishes in. Hard-wrapped prose runs on
 * across single line breaks; a blank line, a list item, a heading or a table row
 * starts anew, and in a table (`lineIsRow`) every line is one row.
 */
export function sentencesAround(text: string, needle: string, lineIsRow = false): string {
  const at = text.indexOf(needle);
  if (at === -1) return '';
  const lineBreak = lineIsRow ? /\n/g : /\n(?=[ \t]*\n|[ \t]*[-*+] |[ \t]*\d+\. |#|\|)/g;
  const sentenceEnd = /[.!?]["')\]]?\s/g;
  const before = text.slice(0, at);
  const starts = [...before.matchAll(lineBreak), ...before.matchAll(sentenceEnd)].map((m) => m.index! + m[0].length);
  const start = Math.max(0, ...starts);
  const after = text.slice(at + needle.length);
  const ends = [...after.matchAll(lineBreak), ...after.matchAll(sentenceEnd)].map((m) => m.index!);
  const end = ends.length ? at + needle.length + Math.min(...ends) + 1 : text.length;
  return text.slice(start, end).trim();
}

/** Characters a chunker may rewrite (markup, CSV separators): an answer substring avoids them. */
const MARKUP = /[*_`|#[\]\n]/;

export interface LintReport {
  errors: string[];
  counts: Record<Kind, number>;
}

/** Checks the whole data set; the caller fails loudly on any error. */
export function lint(questions: Question[], corpus: CorpusFile[]): LintReport {
  const errors: string[] = [];
  const counts = Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Record<Kind, number>;
  const files = new Map(corpus.map((file) => [file.name, { file, normalized: normalizeText(file.text) }]));
  const seen = new Set<string>();
  for (const q of questions) {
    const where = `question ${q.id ?? '(no id)'}`;
    if (typeof q.id !== 'string' || !q.id) errors.push(`${where}: needs a string id`);
    else if (seen.has(q.id)) errors.push(`${where}: duplicate id`);
    seen.add(q.id);
    if (!KINDS.includes(q.kind)) {
      errors.push(`${where}: kind must be one of ${KINDS.join(', ')}`);
      continue;
    }
    counts[q.kind]++;
    if (typeof q.question !== 'string' || q.question.trim().length < 8) errors.push(`${where}: question text missing or too short`);
    if (!Array.isArray(q.answers)) {
      errors.push(`${where}: answers must be an array`);
      continue;
    }
    if (q.kind === 'unanswerable') {
      if (q.answers.length) errors.push(`${where}: an unanswerable question has no answers`);
      continue;
    }
    if (!q.answers.length) errors.push(`${where}: an answerable question needs at least one answer`);
    const questionStems = new Set(contentStems(q.question));
    for (const answer of q.answers) {
      const entry = files.get(answer.document);
      if (!entry) {
        errors.push(`${where}: document "${answer.document}" is not in the corpus`);
        continue;
      }
      if (typeof answer.contains !== 'string' || answer.contains.trim().length < 3) {
        errors.push(`${where}: "contains" missing or shorter than 3 characters`);
        continue;
      }
      if (MARKUP.test(answer.contains) || (answer.document.endsWith('.csv') && answer.contains.includes(',')))
        errors.push(`${where}: "contains" must not hold markup, line breaks or CSV separators: ${JSON.stringify(answer.contains)}`);
      const found = occurrences(entry.file.text, answer.contains).length;
      const foundNormalized = occurrences(entry.normalized, normalizeText(answer.contains)).length;
      if (found !== 1 || foundNormalized !== 1) {
        errors.push(`${where}: "${answer.contains}" occurs ${found} times in ${answer.document} (must be exactly once)`);
        continue;
      }
      const sentence = sentencesAround(entry.file.text, answer.contains, answer.document.endsWith('.csv'));
      const shared = [...new Set(contentStems(sentence))].filter((s) => questionStems.has(s));
      if (q.kind === 'paraphrase' && shared.length)
        errors.push(`${where}: a paraphrase shares content words with its answer sentence: ${shared.join(', ')}`);
      if (q.kind === 'lexical' && !shared.length)
        errors.push(`${where}: a lexical question shares no content word with its answer sentence`);
    }
  }
  return { errors, counts };
}
