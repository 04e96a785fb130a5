// Generated company documents for the scale benchmark: markdown with headings,
// paragraphs and lists, whose sentences come from a word-bigram chain trained on the
// quality benchmark's corpus (an invented company's policies, manuals and runbooks:
// the Markdown of bench/retrieval/corpus/). So the text has the vocabulary, the word
// frequencies and the sentence shapes of real company documents, which is what
// full-text ranking and the word vectors are sensitive to; a few invented codes and
// amounts per section add the rare terms a large real corpus is full of.
// Deterministic: the same seed gives the same documents and the same queries.
//
// A section is about one chunk's worth of text (~230 words, ~350 tokens with the
// default chunker), so a document of N sections becomes about N chunks.
import { seededRandom } from '../../test/helpers/seeded-random.js';
import { markdownTexts } from './dataset.js';

export { seededRandom };

const SECTION_WORDS = 220;
const SENTENCE_MAX_WORDS = 40;
const COMPANIES = ['Northwind', 'Contoso', 'Fabrikam', 'Tailspin', 'Adventure Works', 'Litware', 'Proseware', 'Wingtip'];
const DOC_KINDS = ['Handbook', 'Policy', 'Guide', 'Manual', 'Procedure', 'Notes', 'Minutes', 'Price list'];
const QUESTION_OPENERS = ['How do I', 'What is the rule for', 'Who approves', 'When can I', 'Where do I find', 'What happens if'];
const END = /[.!?]$/;

/** The corpus as a chain: which word follows which (with repeats, so frequent pairs are likely), and how sentences start. */
interface Chain {
  next: Map<string, string[]>;
  starts: string[];
  headings: string[];
  topics: string[];
}

let trained: Chain | undefined;

function train(): Chain {
  const next = new Map<string, string[]>();
  const starts: string[] = [];
  const headings: string[] = [];
  const topics = new Set<string>();
  for (const file of markdownTexts()) {
    for (const raw of file.text.split('\n')) {
      const line = raw.trim();
      const heading = /^#{2,4}\s+(.+)$/.exec(line);
      if (heading) {
        if (heading[1]!.length <= 60) headings.push(heading[1]!.replace(/[*_`]/g, ''));
        continue;
      }
      // Prose and list items; not titles, tables, code or links-only lines.
      if (!line || /^(#|\||```|>|\[|!\[)/.test(line)) continue;
      const words = line
        .replace(/^([-*+]|\d+\.)\s+/, '')
        .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/[*_`]/g, '')
        .split(/\s+/)
        .filter(Boolean);
      if (words.length < 4) continue;
      // Hard-wrapped lines start mid-sentence: only a capital starts one.
      if (/^[A-Z]/.test(words[0]!)) starts.push(words[0]!);
      for (let i = 0; i < words.length; i++) {
        const word = words[i]!;
        if (word.length > 6 && /^[a-z]+$/.test(word)) topics.add(word);
        const following = i + 1 < words.length ? words[i + 1]! : '.';
        if (!next.has(word)) next.set(word, []);
        next.get(word)!.push(following);
      }
    }
  }
  return { next, starts, headings, topics: [...topics].sort() };
}

export interface GeneratedDocument {
  name: string;
  title: string;
  /** The markdown as uploaded. */
  text: string;
  /** The same text cut at its sections, for filling the database directly (each one chunk). */
  sections: { headingPath: string[]; content: string }[];
}

export class ProseGenerator {
  private readonly random: () => number;
  private readonly chain: Chain;
  private serial = 0;

  constructor(seed: number) {
    this.random = seededRandom(seed);
    trained ??= train();
    this.chain = trained;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  /** Walks the chain from a sentence start to a full stop. */
  private words(max = SENTENCE_MAX_WORDS): string[] {
    const out = [this.pick(this.chain.starts)];
    while (out.length < max && !END.test(out[out.length - 1]!)) {
      const choices = this.chain.next.get(out[out.length - 1]!);
      const word = choices ? this.pick(choices) : '.';
      if (word === '.') break;
      out.push(word);
    }
    return out;
  }

  private sentence(): string {
    const words = this.words();
    // The rare terms of a real corpus: part numbers, amounts, reference codes.
    if (this.random() < 0.15) words.splice(this.int(1, words.length), 0, this.code());
    const text = words.join(' ');
    return END.test(text) ? text : `${text.replace(/[,;:]$/, '')}.`;
  }

  private code(): string {
    const kind = this.int(0, 2);
    if (kind === 0)
      return `${String.fromCharCode(65 + this.int(0, 25))}${String.fromCharCode(65 + this.int(0, 25))}-${this.int(100, 9999)}`;
    if (kind === 1) return `${this.int(2, 500) * 5} EUR`;
    return `ref ${this.int(10_000, 99_999)}`;
  }

  private section(): string {
    const parts: string[] = [];
    let words = 0;
    while (words < SECTION_WORDS) {
      const part =
        this.random() < 0.2
          ? Array.from({ length: this.int(3, 5) }, () => `- ${this.sentence()}`).join('\n')
          : Array.from({ length: this.int(2, 5) }, () => this.sentence()).join(' ');
      parts.push(part);
      words += part.split(/\s+/).length;
    }
    return parts.join('\n\n');
  }

  /** One document of `sections` sections (about that many chunks). */
  document(sections: number): GeneratedDocument {
    const serial = ++this.serial;
    const topic = this.pick(this.chain.topics);
    const title = `${this.pick(COMPANIES)} ${topic[0]!.toUpperCase()}${topic.slice(1)} ${this.pick(DOC_KINDS)} ${serial}`;
    const out: GeneratedDocument['sections'] = [];
    const lines = [`# ${title}`, '', this.sentence(), ''];
    for (let i = 0; i < sections; i++) {
      const heading = this.pick(this.chain.headings);
      const content = this.section();
      out.push({ headingPath: [heading], content });
      lines.push(`## ${heading}`, '', content, '');
    }
    return { name: `${title.toLowerCase().replace(/\s+/g, '-')}.md`, title, text: lines.join('\n'), sections: out };
  }

  /** A search query in one of the shapes users type: a few keywords, a question, a heading. */
  query(): string {
    const plain = (words: string[]) =>
      words
        .join(' ')
        .replace(/[^\p{L}\p{N}\s'-]/gu, '')
        .trim();
    const shape = this.int(0, 2);
    if (shape === 0) return plain(this.words(this.int(2, 4))) || this.pick(this.chain.topics);
    if (shape === 1) return `${this.pick(QUESTION_OPENERS)} ${plain(this.words(this.int(3, 8))).toLowerCase()}?`;
    return this.pick(this.chain.headings);
  }
}
