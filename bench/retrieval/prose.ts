// Generated company documents for the scale benchmark: handbooks, manuals, policies
// and minutes written as markdown with headings, paragraphs and lists, in plain
// English words (so the built-in word vectors know them and BM25 sees a realistic
// spread of frequent and rare terms). Deterministic: the same seed gives the same
// corpus and the same queries, so runs compare.
//
// A section is about one chunk's worth of text (~230 words, ~350 tokens with the
// default chunker), so a document of N sections becomes about N chunks.

/** mulberry32: small, fast, and good enough to vary prose. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Topic {
  name: string;
  nouns: string[];
  verbs: string[];
  adjectives: string[];
}

const TOPICS: Topic[] = [
  t(
    'Leave',
    'vacation holiday absence allowance entitlement request manager calendar parent sickness carryover balance',
    'approve request book cancel record extend',
    'annual unpaid paid parental statutory',
  ),
  t(
    'Expenses',
    'receipt invoice reimbursement mileage meal hotel limit card claim budget currency',
    'submit reimburse approve attach reject itemise',
    'refundable taxable monthly corporate itemised',
  ),
  t(
    'Security',
    'password laptop badge phishing incident firewall encryption token access breach vulnerability',
    'report encrypt rotate revoke patch lock',
    'confidential suspicious mandatory encrypted temporary',
  ),
  t(
    'Onboarding',
    'mentor orientation contract equipment checklist induction account desk colleague introduction',
    'welcome assign prepare sign complete introduce',
    'first new initial personal remaining',
  ),
  t(
    'Procurement',
    'supplier quote tender contract purchase order catalogue vendor delivery warranty',
    'negotiate order compare renew evaluate sign',
    'preferred competitive approved framework annual',
  ),
  t(
    'Travel',
    'flight train booking itinerary passport visa insurance accommodation luggage destination',
    'book travel upgrade insure depart reserve',
    'international economy domestic overnight urgent',
  ),
  t(
    'Benefits',
    'pension insurance dental bonus salary gym subscription allowance scheme contribution',
    'enrol contribute claim opt waive increase',
    'optional generous eligible matched voluntary',
  ),
  t(
    'Support',
    'ticket printer network outage helpdesk software licence upgrade backup server',
    'restart install troubleshoot escalate restore configure',
    'urgent remote scheduled faulty wireless',
  ),
  t(
    'Safety',
    'fire evacuation helmet ladder chemical bandage warden hazard accident drill',
    'evacuate inspect wear store label report',
    'flammable protective hazardous emergency mandatory',
  ),
  t(
    'Maintenance',
    'pump valve filter boiler gasket pressure motor bearing lubricant inspection',
    'replace tighten clean calibrate drain lubricate',
    'worn hydraulic leaking weekly spare',
  ),
  t(
    'Pricing',
    'price discount tier subscription quote rebate margin volume licence renewal',
    'discount bill invoice renew upgrade negotiate',
    'wholesale annual enterprise standard promotional',
  ),
  t(
    'Minutes',
    'meeting agenda board motion vote quorum chair proposal budget deadline',
    'adopt propose second defer approve minute',
    'quarterly unanimous pending previous extraordinary',
  ),
];

function t(name: string, nouns: string, verbs: string, adjectives: string): Topic {
  return { name, nouns: nouns.split(' '), verbs: verbs.split(' '), adjectives: adjectives.split(' ') };
}

const article = (word: string) => `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;

const COMMON_NOUNS =
  'employee team office policy department process week month year customer staff form request site system record manager rule'.split(' ');
const SUBJECTS = [
  'Every employee',
  'The team lead',
  'Each department',
  'The office manager',
  'Staff on probation',
  'A contractor',
  'The finance team',
  'New starters',
];
const CONNECTIVES = [
  'In addition,',
  'However,',
  'As a rule,',
  'Where possible,',
  'In most cases,',
  'For clarity,',
  'Unless agreed otherwise,',
  'At the latest,',
];
const DOC_KINDS = ['Handbook', 'Policy', 'Guide', 'Manual', 'Procedure', 'Notes'];
const HEADINGS = [
  'Scope',
  'Who this applies to',
  'How to',
  'Limits and exceptions',
  'Responsibilities',
  'Frequently asked questions',
  'Examples',
  'Records',
  'Deadlines',
  'Contacts',
  'Changes',
];
const COMPANIES = ['Northwind', 'Contoso', 'Fabrikam', 'Tailspin', 'Adventure Works', 'Litware', 'Proseware', 'Wingtip'];

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
  private serial = 0;

  constructor(seed: number) {
    this.random = seededRandom(seed);
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  private sentence(topic: Topic): string {
    const n = () => this.pick(this.random() < 0.7 ? topic.nouns : COMMON_NOUNS);
    const v = () => this.pick(topic.verbs);
    const a = () => this.pick(topic.adjectives);
    const patterns = [
      () => `${this.pick(SUBJECTS)} must ${v()} the ${a()} ${n()} within ${this.int(2, 30)} working days.`,
      () =>
        `The ${n()} for ${article(a())} ${n()} is limited to ${this.int(1, 40) * 25} euros per ${this.pick(['day', 'month', 'trip', 'year'])}.`,
      () => `${this.pick(CONNECTIVES)} the ${n()} should ${v()} any ${a()} ${n()} before the ${n()} is closed.`,
      () => `If ${article(n())} is ${a()}, ask the ${n()} desk to ${v()} it and keep a copy of the ${n()}.`,
      () => `About ${this.int(5, 95)} percent of ${n()} requests are handled by the ${this.pick(COMPANIES)} ${n()} team.`,
      () =>
        `Do not ${v()} ${article(n())} on behalf of another ${n()} unless the ${n()} has been ${this.pick(['signed', 'approved', 'checked', 'recorded'])}.`,
      () => `The ${a()} ${n()} applies from the ${this.int(1, 28)}th of each month and ends with the ${n()} review.`,
      () => `Questions about the ${n()} go to the ${n()} owner, who will ${v()} them in writing.`,
    ];
    return this.pick(patterns)();
  }

  private paragraph(topic: Topic, sentences: number): string {
    return Array.from({ length: sentences }, () => this.sentence(topic)).join(' ');
  }

  private section(topic: Topic): string {
    const parts: string[] = [];
    let words = 0;
    // ~230 words: about one chunk of the default 350 tokens.
    while (words < 220) {
      const part =
        this.random() < 0.25
          ? Array.from({ length: this.int(3, 5) }, () => `- ${this.sentence(topic)}`).join('\n')
          : this.paragraph(topic, this.int(3, 6));
      parts.push(part);
      words += part.split(/\s+/).length;
    }
    return parts.join('\n\n');
  }

  /** One document of `sections` sections (about that many chunks). */
  document(sections: number): GeneratedDocument {
    const topic = this.pick(TOPICS);
    const serial = ++this.serial;
    const title = `${this.pick(COMPANIES)} ${topic.name} ${this.pick(DOC_KINDS)} ${serial}`;
    const out: GeneratedDocument['sections'] = [];
    const lines = [`# ${title}`, '', this.paragraph(topic, 2), ''];
    for (let i = 0; i < sections; i++) {
      const heading = `${this.pick(HEADINGS)}: ${this.pick(topic.adjectives)} ${this.pick(topic.nouns)}`;
      const content = this.section(topic);
      out.push({ headingPath: [heading], content });
      lines.push(`## ${heading}`, '', content, '');
    }
    return { name: `${title.toLowerCase().replace(/\s+/g, '-')}.md`, title, text: lines.join('\n'), sections: out };
  }

  /** A search query in one of the shapes users type: keywords, a question, a longer request. */
  query(): string {
    const topic = this.pick(TOPICS);
    const n = () => this.pick(topic.nouns);
    const shapes = [
      () => `${n()} ${n()}`,
      () => `${this.pick(topic.adjectives)} ${n()} ${this.pick(COMMON_NOUNS)}`,
      () => `How do I ${this.pick(topic.verbs)} ${article(this.pick(topic.adjectives))} ${n()}?`,
      () => `What is the limit for ${n()} and ${n()} per ${this.pick(['day', 'month', 'year'])}?`,
      () => `Who must ${this.pick(topic.verbs)} the ${n()} when the ${n()} is ${this.pick(topic.adjectives)}`,
      () => `${topic.name.toLowerCase()} rules for ${this.pick(SUBJECTS).toLowerCase()} about the ${n()}`,
    ];
    return this.pick(shapes)();
  }
}
