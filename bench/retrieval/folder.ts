// A tenant's folder of documents for the ingestion benchmark: the generated prose
// (prose.ts) written out as the text types people upload, in turn Markdown, plain
// text, HTML and CSV, each about `sections` chunks long with the default chunker.
// Deterministic from the generator's seed.
import type { UploadFile } from './bulk-ingest.js';
import type { ProseGenerator } from './prose.js';

export type FolderType = 'md' | 'txt' | 'html' | 'csv';

const MEDIA_TYPES: Record<FolderType, string> = {
  md: 'text/markdown',
  txt: 'text/plain',
  html: 'text/html',
  csv: 'text/csv',
};
const TYPES = Object.keys(MEDIA_TYPES) as FolderType[];
// A CSV row is a code, an item, a sentence and an amount (~40 tokens): ~8 rows fill a 350-token chunk.
const ROWS_PER_SECTION = 8;

export interface FolderFile extends UploadFile {
  type: FolderType;
  mediaType: string;
}

/** `count` files, the types in turn, each of `sections()` sections (about that many chunks). */
export function folderFiles(prose: ProseGenerator, count: number, sections: () => number): FolderFile[] {
  return Array.from({ length: count }, (_, i) => {
    const type = TYPES[i % TYPES.length]!;
    const doc = prose.document(sections());
    const base = doc.name.replace(/\.md$/, '');
    return { type, mediaType: MEDIA_TYPES[type], name: `${base}.${type}`, text: render(type, doc.title, doc.sections) };
  });
}

function render(type: FolderType, title: string, sections: { headingPath: string[]; content: string }[]): string {
  switch (type) {
    case 'md':
      return [`# ${title}`, '', ...sections.flatMap((s) => [`## ${s.headingPath.join(' / ')}`, '', s.content, ''])].join('\n');
    case 'txt':
      return [
        title.toUpperCase(),
        '',
        ...sections.flatMap((s) => [s.headingPath.join(' / '), '', s.content.replace(/^- /gm, '* '), '']),
      ].join('\n');
    case 'html':
      return [
        `<!doctype html><html><head><title>${htmlEscape(title)}</title></head><body>`,
        `<h1>${htmlEscape(title)}</h1>`,
        ...sections.flatMap((s) => [`<h2>${htmlEscape(s.headingPath.join(' / '))}</h2>`, ...htmlBlocks(s.content)]),
        '</body></html>',
      ].join('\n');
    case 'csv':
      return csv(sections);
  }
}

function htmlBlocks(content: string): string[] {
  return content.split(/\n\s*\n/).map((block) => {
    const lines = block.split('\n');
    if (lines.every((line) => line.startsWith('- ')))
      return `<ul>${lines.map((line) => `<li>${htmlEscape(line.slice(2))}</li>`).join('')}</ul>`;
    return `<p>${htmlEscape(block)}</p>`;
  });
}

/** A price list: each section's sentences become rows (code, item, description, price). */
function csv(sections: { headingPath: string[]; content: string }[]): string {
  const lines = ['code,item,description,price EUR'];
  let serial = 0;
  for (const section of sections) {
    const sentences = section.content
      .replace(/^- /gm, '')
      .split(/(?<=[.!?])\s+/)
      .filter((s) => s.length > 20);
    const per = Math.max(1, Math.ceil(sentences.length / ROWS_PER_SECTION));
    for (let i = 0; i < sentences.length; i += per) {
      serial++;
      const description = sentences.slice(i, i + per).join(' ');
      lines.push([`P-${1000 + serial}`, section.headingPath.join(' / '), description, `${(serial * 7) % 400}.50`].map(field).join(','));
    }
  }
  return `${lines.join('\n')}\n`;
}

const field = (value: string) => (/[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
const htmlEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
