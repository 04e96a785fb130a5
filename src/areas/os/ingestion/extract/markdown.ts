// Markdown, read line by line: the structure chunking needs (headings, paragraphs,
// list items, pipe tables, code fences) without a full CommonMark renderer, whose
// output we would only parse back. Inline markup is reduced to its text.
import type { Block, Extraction } from './types.js';

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const ITEM = /^([ \t]*)([-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const TABLE_SEPARATOR = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const FRONT_MATTER_TITLE = /^title:[ \t]*["']?(.*?)["']?[ \t]*$/m;

export function extractMarkdown(text: string): Extraction {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  let title: string | null = null;
  let paragraph: string[] = [];
  let item: { lines: string[]; marker: string; depth: number } | null = null;

  const flush = () => {
    if (paragraph.length > 0) blocks.push({ kind: 'paragraph', text: inline(paragraph.join('\n')), page: null });
    if (item) blocks.push({ kind: 'item', text: inline(item.lines.join(' ')), marker: item.marker, depth: item.depth, page: null });
    paragraph = [];
    item = null;
  };
  const heading = (level: number, raw: string) => {
    flush();
    const text = inline(raw);
    if (text === '') return;
    if (level === 1 && title === null) title = text;
    blocks.push({ kind: 'heading', level, text, page: null });
  };

  let i = 0;
  // YAML front matter: metadata, not text; its title is the document's.
  if (lines[0]?.trim() === '---') {
    const end = lines.indexOf('---', 1);
    if (end > 0) {
      title = FRONT_MATTER_TITLE.exec(lines.slice(1, end).join('\n'))?.[1]?.trim() || null;
      i = end + 1;
    }
  }
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const close = new RegExp(`^ {0,3}${fence[1]![0] === '`' ? '`' : '~'}{${fence[1]!.length},}[ \\t]*$`);
      const body: string[] = [];
      for (i++; i < lines.length && !close.test(lines[i]!); i++) body.push(lines[i]!);
      if (body.join('').trim() !== '') blocks.push({ kind: 'preformatted', text: body.join('\n'), page: null });
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    const atx = ATX_HEADING.exec(line);
    if (atx) {
      heading(atx[1]!.length, atx[2] ?? '');
      continue;
    }
    // "Title\n=====": the underline turns the paragraph above it into a heading.
    const underline = SETEXT_UNDERLINE.exec(line);
    if (underline && paragraph.length > 0 && !item) {
      const raw = paragraph.join(' ');
      paragraph = [];
      heading(underline[1]![0] === '=' ? 1 : 2, raw);
      continue;
    }
    if (RULE.test(line)) {
      flush();
      continue;
    }
    // A pipe table: a row, then a separator row with pipes ("---" alone underlines a heading).
    const next = lines[i + 1] ?? '';
    if (line.includes('|') && next.includes('|') && next.includes('-') && TABLE_SEPARATOR.test(next)) {
      flush();
      const rows: string[][] = [];
      for (i += 2; i < lines.length && lines[i]!.includes('|') && lines[i]!.trim() !== ''; i++) rows.push(cells(lines[i]!));
      i--;
      blocks.push({ kind: 'table', header: [cells(line)], rows, page: null });
      continue;
    }
    const listItem = ITEM.exec(line);
    if (listItem) {
      flush();
      item = { lines: [listItem[3]!], marker: listItem[2]!, depth: Math.floor(listItem[1]!.replace(/\t/g, '    ').length / 2) };
      continue;
    }
    const quoted = line.replace(/^ {0,3}>[ \t]?/, '');
    if (item) item.lines.push(quoted.trim());
    else paragraph.push(quoted.trim());
  }
  flush();
  return { title, blocks };
}

/** The cells of a pipe-table row, without the outer pipes; `\|` is a literal pipe. */
function cells(row: string): string[] {
  const trimmed = row
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return trimmed.split(/(?<!\\)\|/).map((cell) => inline(cell.replace(/\\\|/g, '|')));
}

/** Inline markup → its text: images to their alt text, links to their label, emphasis and code marks dropped. */
function inline(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/<(https?:[^>\s]+)>/g, '$1')
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])/g, '$2')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/<!--[\s\S]*?-->/g, '')
    .trim();
}
