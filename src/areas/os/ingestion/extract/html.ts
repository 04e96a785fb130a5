// HTML (and DOCX, which mammoth turns into HTML): the parser's events become blocks.
// Headings, paragraphs, list items, preformatted text and tables keep their shape;
// scripts, styles and navigation are left out, being no part of what the page says.
import { Parser } from 'htmlparser2';
import type { Block, Extraction } from './types.js';

const SKIPPED = new Set([
  'script',
  'style',
  'nav',
  'noscript',
  'template',
  'svg',
  'math',
  'iframe',
  'object',
  'canvas',
  'select',
  'button',
]);
// Tags that end the text before them: everything inside one is a block of its own.
const BLOCK_TAGS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'ul',
]);
const HEADING = /^h([1-6])$/;

interface TableState {
  header: string[][];
  rows: string[][];
  /** Leading rows that are header rows (in <thead>, or made only of <th>), until a body row comes. */
  headerDone: boolean;
  inHead: boolean;
  row: string[] | null;
  rowAllTh: boolean;
  cell: string[] | null;
  caption: string[];
  inCaption: boolean;
}

/** Where text inside a table goes: the open cell or caption; whitespace between cells goes nowhere. */
const cellText = (t: TableState): string[] | null => t.cell ?? (t.inCaption ? t.caption : null);

export function extractHtml(html: string): Extraction {
  const blocks: Block[] = [];
  let title: string | null = null;
  let titleText: string[] | null = null;
  let firstH1: string | null = null;
  let skipDepth = 0;
  let tableDepth = 0;
  let table: TableState | null = null;
  let preDepth = 0;
  let heading = 0;
  let inItem = 0;
  const lists: { ordered: boolean; next: number }[] = [];
  let buffer: string[] = [];

  const flush = () => {
    const raw = buffer.join('');
    buffer = [];
    if (preDepth > 0) {
      const text = raw.replace(/^\n+|\s+$/g, '');
      if (text.trim() !== '') blocks.push({ kind: 'preformatted', text, page: null });
      return;
    }
    const text = raw.replace(/[ \t]*\n[ \t]*/g, '\n').trim();
    if (text === '') return;
    if (heading > 0) {
      blocks.push({ kind: 'heading', level: heading, text: text.replace(/\s+/g, ' '), page: null });
      if (heading === 1) firstH1 ??= text;
    } else if (inItem > 0 && lists.length > 0) {
      const list = lists[lists.length - 1]!;
      const marker = list.ordered ? `${list.next++}.` : '-';
      blocks.push({ kind: 'item', text, marker, depth: lists.length - 1, page: null });
    } else {
      blocks.push({ kind: 'paragraph', text, page: null });
    }
  };

  const closeTable = (t: TableState) => {
    // Without a marked header, a table's first row is its header (what documents and DOCX tables do).
    if (t.header.length === 0 && t.rows.length > 1) t.header.push(t.rows.shift()!);
    const caption = t.caption.join('').replace(/\s+/g, ' ').trim();
    if (caption) blocks.push({ kind: 'paragraph', text: caption, page: null });
    if (t.header.length + t.rows.length > 0) blocks.push({ kind: 'table', header: t.header, rows: t.rows, page: null });
  };

  const parser = new Parser(
    {
      onopentag(name) {
        if (skipDepth > 0 || SKIPPED.has(name)) {
          if (SKIPPED.has(name)) skipDepth++;
          return;
        }
        if (name === 'title') titleText = [];
        if (name === 'table') {
          if (tableDepth++ === 0) {
            flush();
            table = {
              header: [],
              rows: [],
              headerDone: false,
              inHead: false,
              row: null,
              rowAllTh: true,
              cell: null,
              caption: [],
              inCaption: false,
            };
          }
          return;
        }
        if (table && tableDepth > 0) {
          if (tableDepth > 1) return; // a table inside a cell reads as that cell's text
          if (name === 'thead') table.inHead = true;
          else if (name === 'tr') {
            table.row = [];
            table.rowAllTh = true;
          } else if (name === 'td' || name === 'th') {
            table.cell = [];
            if (name === 'td') table.rowAllTh = false;
          } else if (name === 'caption') table.inCaption = true;
          else if (name === 'br' || BLOCK_TAGS.has(name)) cellText(table)?.push(' ');
          return;
        }
        if (name === 'br') {
          buffer.push('\n');
          return;
        }
        if (!BLOCK_TAGS.has(name)) return;
        flush();
        const level = HEADING.exec(name);
        if (level) heading = Number(level[1]);
        else if (name === 'pre') preDepth++;
        else if (name === 'ul' || name === 'ol') lists.push({ ordered: name === 'ol', next: 1 });
        else if (name === 'li') inItem++;
      },
      ontext(text) {
        if (skipDepth > 0) return;
        if (titleText) titleText.push(text);
        else if (table && tableDepth > 0) cellText(table)?.push(text);
        else buffer.push(preDepth > 0 ? text : text.replace(/\s+/g, ' '));
      },
      onclosetag(name) {
        if (skipDepth > 0) {
          if (SKIPPED.has(name)) skipDepth--;
          return;
        }
        if (name === 'title' && titleText) {
          title ??= titleText.join('').replace(/\s+/g, ' ').trim() || null;
          titleText = null;
          return;
        }
        if (name === 'table') {
          if (--tableDepth === 0 && table) {
            closeTable(table);
            table = null;
          }
          return;
        }
        if (table && tableDepth > 0) {
          if (tableDepth > 1) return;
          if (name === 'thead') table.inHead = false;
          else if ((name === 'td' || name === 'th') && table.row && table.cell) {
            table.row.push(table.cell.join('').replace(/\s+/g, ' ').trim());
            table.cell = null;
          } else if (name === 'tr' && table.row) {
            if (table.row.some((c) => c !== '')) {
              const isHeader = !table.headerDone && (table.inHead || table.rowAllTh);
              if (isHeader) table.header.push(table.row);
              else {
                table.headerDone = true;
                table.rows.push(table.row);
              }
            }
            table.row = null;
          } else if (name === 'caption') table.inCaption = false;
          return;
        }
        if (!BLOCK_TAGS.has(name)) return;
        flush();
        if (HEADING.test(name)) heading = 0;
        else if (name === 'pre') preDepth = Math.max(0, preDepth - 1);
        else if (name === 'ul' || name === 'ol') lists.pop();
        else if (name === 'li') inItem = Math.max(0, inItem - 1);
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  flush();
  if (table) closeTable(table);
  return { title: title ?? firstH1, blocks };
}
