// The corpus's PDF and DOCX documents are kept as text (`name.pdf.md`, `name.docx.md`:
// headings, paragraphs, bullets) and rendered into real files when the benchmark
// loads them, with the same builders the ingestion tests use: a diff stays readable
// and the extractor still meets Word's and pdf-lib's real structure.
import { type DocxBlock, sampleDocx, samplePdf } from '../../test/helpers/documents.js';

export type RenderedType = 'pdf' | 'docx';

interface Block {
  kind: 'heading' | 'paragraph' | 'item';
  level: 1 | 2 | 3;
  text: string;
}

/**
 * PDF text is WinAnsi (the standard fonts): typographic characters become their plain
 * forms. The benchmark reads the same replaced text, so labels match what was rendered.
 */
export function plainLatin(text: string): string {
  return text
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201C\u201D]/g, '"')
    .replace(/[\u2013\u2014\u2212]/g, '-')
    .replace(/\u2026/g, '...')
    .replace(/\u00A0/g, ' ')
    .replace(/[^\n\x20-\x7E\u00A1-\u00FF]/g, '?');
}

export function parseBlocks(source: string): Block[] {
  const blocks: Block[] = [];
  for (const raw of source.split(/\n\s*\n/)) {
    for (const line of raw.trim().split('\n').reduce<string[]>(joinWrapped, [])) {
      const heading = /^(#{1,3})\s+(.*)$/.exec(line);
      if (heading) blocks.push({ kind: 'heading', level: heading[1]!.length as 1 | 2 | 3, text: heading[2]!.trim() });
      else if (/^[-*]\s+/.test(line)) blocks.push({ kind: 'item', level: 1, text: line.replace(/^[-*]\s+/, '').trim() });
      else if (line.trim()) blocks.push({ kind: 'paragraph', level: 1, text: line.trim() });
    }
  }
  return blocks;
}

/** Lines of one blank-line-separated block: a heading or bullet starts a line, anything else continues the last. */
function joinWrapped(lines: string[], line: string): string[] {
  if (lines.length === 0 || /^(#{1,3}\s|[-*]\s)/.test(line) || /^#{1,3}\s/.test(lines[lines.length - 1]!)) lines.push(line);
  else lines[lines.length - 1] = `${lines[lines.length - 1]} ${line.trim()}`;
  return lines;
}

// An A4 page of samplePdf holds ~50 lines of 11 pt text ~90 characters wide: pages are
// filled to a safe 38 so nothing runs off the bottom (samplePdf drops what would).
const LINES_PER_PAGE = 38;
const CHARS_PER_LINE = 80;

function pdfPages(blocks: Block[]): string[][] {
  const pages: string[][] = [[]];
  let used = 0;
  for (const block of blocks) {
    const lines = Math.ceil(block.text.length / CHARS_PER_LINE) + (block.kind === 'heading' ? 3 : 1);
    if (used + lines > LINES_PER_PAGE && pages[pages.length - 1]!.length) {
      pages.push([]);
      used = 0;
    }
    used += lines;
    const prefix = block.kind === 'heading' ? (block.level === 1 ? '# ' : '## ') : block.kind === 'item' ? '- ' : '';
    pages[pages.length - 1]!.push(prefix + block.text);
  }
  return pages;
}

export async function render(source: string, type: RenderedType, title: string): Promise<Buffer> {
  const blocks = parseBlocks(plainLatin(source));
  if (type === 'pdf') return samplePdf(pdfPages(blocks), { title, pageNumbers: true });
  const docx: DocxBlock[] = blocks.map((b) =>
    b.kind === 'heading' ? { heading: b.text, level: b.level } : b.kind === 'item' ? { item: b.text } : { paragraph: b.text },
  );
  return sampleDocx(docx);
}
