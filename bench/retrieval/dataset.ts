// The labelled question set and the corpus it is written against (one invented
// company's documents, bench/retrieval/corpus/), and the lint that keeps the labels
// honest: every answer is stated in exactly one place of the whole corpus, and each
// kind of question is worded the way its kind promises (see README.md).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { plainLatin, type RenderedType, render } from './render.js';
import { contentStems, normalizeText } from './text.js';

export const KINDS = ['lexical', 'paraphrase', 'multihop', 'table', 'unanswerable'] as const;
export type Kind = (typeof KINDS)[number];
export const SPLITS = ['dev', 'test'] as const;
export type Split = (typeof SPLITS)[number];

export interface Answer {
  /** The document's name as uploaded (a rendered `x.pdf.md` is `x.pdf`). */
  document: string;
  /** A short verbatim substring of the passage that answers the question. */
  contains: string;
}

export interface Question {
  id: string;
  kind: Kind;
  split: Split;
  question: string;
  answers: Answer[];
  /** Multi-hop: where the definition the question relies on is (not the gold passage). */
  via?: Answer;
}

export interface CorpusFile {
  /** The name uploaded (and reported back as the snippet's documentName). */
  name: string;
  bytes: Buffer;
  /** The text the labels are checked against (the source of a rendered file). */
  text: string;
}

const HERE = path.dirname(new URL(import.meta.url).pathname);
export const CORPUS_DIR = path.join(HERE, 'corpus');
export const QUESTIONS_DIR = path.join(HERE, 'questions');

export async function loadCorpus(dir = CORPUS_DIR): Promise<CorpusFile[]> {
  const files: CorpusFile[] = [];
  for (const file of readdirSync(dir).sort()) {
    const bytes = readFileSync(path.join(dir, file));
    const rendered = /^(.+)\.(pdf|docx)\.md$/.exec(file);
    if (rendered) {
      const [, base, type] = rendered;
      const text = plainLatin(bytes.toString('utf8'));
      files.push({ name: `${base}.${type}`, bytes: await render(text, type as RenderedType, titleOf(base!)), text });
    } else if (file.endsWith('.html')) files.push({ name: file, bytes, text: htmlText(bytes.toString('utf8')) });
    else if (/\.(md|csv|txt)$/.test(file)) files.push({ name: file, bytes, text: bytes.toString('utf8') });
  }
  return files;
}

/** The Markdown sources of the corpus (those rendered to PDF and DOCX included), read synchronously: text to imitate. */
export function markdownTexts(dir = CORPUS_DIR): { name: string; text: string }[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => ({ name, text: readFileSync(path.join(dir, name), 'utf8') }));
}

/** An HTML page's text as a reader sees it: blocks on lines of their own, entities decoded (labels are checked against this). */
export function htmlText(html: string): string {
  return html
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1>/gi, '')
    .replace(
      /<\/?(p|li|h[1-6]|tr|div|br|section|article|header|footer|nav|ul|ol|table|thead|tbody|main|aside|dt|dd|caption|pre|blockquote)\b[^>]*>/gi,
      '\n\n',
    )
    .replace(/<\/?(td|th)\b[^>]*>/gi, ' ')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n');
}

const titleOf = (base: string) => base.replace(/-/g, ' ').replace(/^./, (c) => c.toUpperCase());

/** Every area's questions (questions/*.json), in file order. */
export function loadQuestions(dir = QUESTIONS_DIR): Question[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .flatMap((name) => {
      const parsed: unknown = JSON.parse(readFileSync(path.join(dir, name), 'utf8'));
      if (!Array.isArray(parsed)) throw new Error(`${name}: expected a JSON array of questions`);
      return parsed as Question[];
    });
}

function occurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + 1)) count++;
  return count;
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
const MARKUP = /[*_`|#[\]\n<>]/;
/** A paraphrase may reuse this many ordinary words of its answer's sentence, never one of the answer itself. */
export const PARAPHRASE_MAX_SHARED = 2;
/** A lexical question shares at least this many content words with its answer's sentence. */
export const LEXICAL_MIN_SHARED = 2;

export interface LintReport {
  errors: string[];
  counts: Record<Kind, Record<Split, number>>;
}

/** Checks the whole data set; the caller fails loudly on any error. */
export function lint(questions: Question[], corpus: CorpusFile[]): LintReport {
  const errors: string[] = [];
  const counts = Object.fromEntries(KINDS.map((kind) => [kind, { dev: 0, test: 0 }])) as LintReport['counts'];
  const files = new Map(corpus.map((file) => [file.name, { file, normalized: normalizeText(file.text) }]));
  const vocabulary = new Set(corpus.flatMap((file) => contentStems(file.text)));
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
    if (!SPLITS.includes(q.split)) {
      errors.push(`${where}: split must be one of ${SPLITS.join(', ')}`);
      continue;
    }
    counts[q.kind][q.split]++;
    if (typeof q.question !== 'string' || q.question.trim().length < 8) errors.push(`${where}: question text missing or too short`);
    if (!Array.isArray(q.answers)) {
      errors.push(`${where}: answers must be an array`);
      continue;
    }
    const questionStems = new Set(contentStems(q.question));
    if (q.kind === 'unanswerable') {
      if (q.answers.length) errors.push(`${where}: an unanswerable question has no answers`);
      const known = [...questionStems].filter((s) => vocabulary.has(s));
      if (known.length < 2)
        errors.push(`${where}: an unanswerable question must share the corpus's vocabulary (shares: ${known.join(', ')})`);
      continue;
    }
    if (!q.answers.length) errors.push(`${where}: an answerable question needs at least one answer`);
    if (q.kind === 'multihop' && !q.via) errors.push(`${where}: a multihop question names its definition's place in "via"`);
    for (const answer of [...q.answers, ...(q.via ? [q.via] : [])]) {
      const problem = placeProblem(answer, files);
      if (problem) errors.push(`${where}: ${problem}`);
    }
    for (const answer of q.answers) {
      const entry = files.get(answer.document);
      if (!entry || placeProblem(answer, files)) continue;
      const sentence = sentencesAround(entry.file.text, answer.contains, answer.document.endsWith('.csv'));
      const shared = [...new Set(contentStems(sentence))].filter((s) => questionStems.has(s));
      const ofAnswer = [...new Set(contentStems(answer.contains))].filter((s) => questionStems.has(s) && !/^\d/.test(s));
      if (q.kind === 'paraphrase' && ofAnswer.length)
        errors.push(`${where}: a paraphrase reuses words of its answer "${answer.contains}": ${ofAnswer.join(', ')}`);
      if (q.kind === 'paraphrase' && shared.length > PARAPHRASE_MAX_SHARED)
        errors.push(
          `${where}: a paraphrase shares ${shared.length} content words with its answer sentence (at most ${PARAPHRASE_MAX_SHARED}): ${shared.join(', ')}`,
        );
      if (q.kind === 'lexical' && shared.length < LEXICAL_MIN_SHARED)
        errors.push(
          `${where}: a lexical question shares ${shared.length} content word(s) with its answer sentence (at least ${LEXICAL_MIN_SHARED})`,
        );
    }
  }
  return { errors, counts };
}

/** Why an answer does not point at exactly one place of the whole corpus, or null. */
function placeProblem(answer: Answer, files: Map<string, { file: CorpusFile; normalized: string }>): string | null {
  const entry = files.get(answer.document);
  if (!entry) return `document "${answer.document}" is not in the corpus`;
  if (typeof answer.contains !== 'string' || answer.contains.trim().length < 3) return '"contains" missing or shorter than 3 characters';
  if (MARKUP.test(answer.contains) || (answer.document.endsWith('.csv') && answer.contains.includes(',')))
    return `"contains" must not hold markup, line breaks or CSV separators: ${JSON.stringify(answer.contains)}`;
  const found = occurrences(entry.file.text, answer.contains);
  if (found !== 1 || occurrences(entry.normalized, normalizeText(answer.contains)) !== 1)
    return `"${answer.contains}" occurs ${found} times in ${answer.document} (must be exactly once)`;
  const elsewhere = [...files.values()].filter(
    (f) => f.file.name !== answer.document && f.normalized.includes(normalizeText(answer.contains)),
  );
  if (elsewhere.length) return `"${answer.contains}" also occurs in ${elsewhere.map((f) => f.file.name).join(', ')} (one home per fact)`;
  return null;
}
