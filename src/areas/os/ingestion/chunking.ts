// Blocks → chunks that keep meaning together. A chunk never spans two heading
// sections; paragraphs and list items go in whole while they fit, and are cut
// between sentences only when one alone is over the budget. A chunk that continues
// its section starts with the last sentences of the one before (the overlap), so a
// passage cut in two is still found whole. Tables are cut between rows, and every
// piece repeats the header row(s): a row without its header is numbers without names.
import type { ChunkInput } from '../chunks/store.js';
import type { Block, Page } from './extract/types.js';
import { countTokens, splitByTokens, splitSentences } from './tokens.js';

export interface ChunkingOptions {
  /** The most tokens one chunk's content may have. */
  chunkTokens: number;
  /** About how many tokens of the previous chunk (whole sentences) a continuing chunk repeats. */
  chunkOverlapTokens: number;
}

type PartKind = 'prose' | 'item' | 'table' | 'preformatted';

/** A piece of a chunk: `separator` is what joins it to the part before it. */
interface Part {
  text: string;
  tokens: number;
  kind: PartKind;
  separator: string;
  page: Page;
  /** Repeated from the previous chunk: such parts alone never make a chunk. */
  overlap?: boolean;
}

// Every separator is counted as one token, which keeps the sum of the parts an upper bound.
const SEPARATOR_TOKENS = 1;

export function chunkBlocks(title: string, blocks: Block[], options: ChunkingOptions): ChunkInput[] {
  const budget = Math.max(16, options.chunkTokens);
  const overlapBudget = Math.min(options.chunkOverlapTokens, Math.floor(budget / 2));
  const chunks: ChunkInput[] = [];
  const headings: { level: number; text: string }[] = [];
  let parts: Part[] = [];
  let tokens = 0;

  const emit = (list: Part[]) => {
    const content = list.map((p, i) => (i === 0 ? p.text : p.separator + p.text)).join('');
    chunks.push({
      content,
      title,
      headingPath: headings.map((h) => h.text),
      page: list.find((p) => p.page !== null)?.page ?? null,
      tokenCount: countTokens(content),
    });
  };
  /** Ends the current chunk; `continued` seeds the next one with the overlap. */
  const flush = (continued: boolean) => {
    if (!parts.some((p) => !p.overlap)) {
      parts = [];
      tokens = 0;
      return;
    }
    emit(parts);
    parts = continued ? overlapOf(parts, overlapBudget) : [];
    tokens = sum(parts);
  };
  const add = (part: Part) => {
    const cost = part.tokens + (parts.length > 0 ? SEPARATOR_TOKENS : 0);
    if (tokens + cost > budget) {
      flush(true);
      // The overlap gives way to new text: drop its oldest sentences until the part fits.
      while (parts.length > 0 && tokens + part.tokens + SEPARATOR_TOKENS > budget) {
        parts.shift();
        tokens = sum(parts);
      }
    }
    tokens += part.tokens + (parts.length > 0 ? SEPARATOR_TOKENS : 0);
    parts.push(part);
  };
  /** Text that may be cut between sentences when it is over the budget on its own. */
  const addProse = (text: string, kind: PartKind, separator: string, page: Page) => {
    const whole = countTokens(text);
    if (whole <= budget) return add({ text, tokens: whole, kind, separator, page });
    splitSentences(text).forEach((sentence, i) => {
      const sentenceTokens = countTokens(sentence);
      const pieces = sentenceTokens <= budget ? [sentence] : splitByTokens(sentence, budget - SEPARATOR_TOKENS);
      pieces.forEach((piece, j) => {
        const first = i === 0 && j === 0;
        add({
          text: piece,
          tokens: pieces.length === 1 ? sentenceTokens : countTokens(piece),
          kind,
          separator: first ? separator : ' ',
          page,
        });
      });
    });
  };

  for (const block of blocks) {
    if (block.kind !== 'table' && block.text.trim() === '') continue;
    switch (block.kind) {
      case 'heading': {
        flush(false);
        while (headings.length > 0 && headings[headings.length - 1]!.level >= block.level) headings.pop();
        headings.push({ level: block.level, text: block.text.length > 200 ? `${block.text.slice(0, 200)}…` : block.text });
        break;
      }
      case 'paragraph':
        addProse(block.text, 'prose', '\n\n', block.page);
        break;
      case 'item': {
        const listContinues = parts.length > 0 && parts[parts.length - 1]!.kind === 'item';
        addProse(`${'  '.repeat(block.depth)}${block.marker} ${block.text}`, 'item', listContinues ? '\n' : '\n\n', block.page);
        break;
      }
      case 'preformatted':
        addLines(block.text, block.page);
        break;
      case 'table':
        addTable(block);
        break;
    }
  }
  flush(false);
  // A document that is only headings (a table of contents, a cover page) still says something.
  if (chunks.length === 0 && blocks.some((b) => b.kind === 'heading')) {
    return chunkBlocks(
      title,
      blocks.map((b) => (b.kind === 'heading' ? { kind: 'paragraph', text: b.text, page: b.page } : b)),
      options,
    );
  }
  return chunks;

  /** Preformatted text is cut between lines, never inside one unless a line is over the budget. */
  function addLines(text: string, page: Page) {
    const whole = countTokens(text);
    if (whole <= budget) return add({ text, tokens: whole, kind: 'preformatted', separator: '\n\n', page });
    let first = true;
    for (const line of text.split('\n')) {
      const lineTokens = countTokens(line);
      const pieces = lineTokens <= budget ? [line] : splitByTokens(line, budget - SEPARATOR_TOKENS);
      for (const piece of pieces) {
        if (piece.trim() === '') continue;
        add({
          text: piece,
          tokens: pieces.length === 1 ? lineTokens : countTokens(piece),
          kind: 'preformatted',
          separator: first ? '\n\n' : '\n',
          page,
        });
        first = false;
      }
    }
  }

  function addTable(table: Extract<Block, { kind: 'table' }>) {
    const header = tableHeader(table.header, Math.floor(budget / 2));
    const headerTokens = header === '' ? 0 : countTokens(header);
    const rowBudget = budget - headerTokens - SEPARATOR_TOKENS;
    const rows = table.rows.flatMap((row) => {
      const line = tableRow(row);
      const lineTokens = countTokens(line);
      return lineTokens <= rowBudget
        ? [{ line, tokens: lineTokens }]
        : splitByTokens(line, rowBudget).map((l) => ({ line: l, tokens: countTokens(l) }));
    });
    const whole = headerTokens + rows.reduce((n, r) => n + r.tokens + SEPARATOR_TOKENS, 0);
    // A small table joins the chunk it follows, if it fits there whole.
    if (whole <= budget - tokens - SEPARATOR_TOKENS) {
      const text = [header, ...rows.map((r) => r.line)].filter((l) => l !== '').join('\n');
      return add({ text, tokens: whole, kind: 'table', separator: '\n\n', page: table.page });
    }
    flush(false);
    let piece: string[] = [];
    let pieceTokens = headerTokens;
    const emitPiece = () => {
      if (piece.length === 0) return;
      const text = [header, ...piece].filter((l) => l !== '').join('\n');
      parts = [{ text, tokens: pieceTokens, kind: 'table', separator: '\n\n', page: table.page }];
      tokens = pieceTokens;
      flush(false);
    };
    for (const row of rows) {
      if (pieceTokens + row.tokens + SEPARATOR_TOKENS > budget) {
        emitPiece();
        piece = [];
        pieceTokens = headerTokens;
      }
      piece.push(row.line);
      pieceTokens += row.tokens + SEPARATOR_TOKENS;
    }
    // The last piece stays open: the text after the table may share its chunk.
    if (piece.length > 0) {
      parts = [
        {
          text: [header, ...piece].filter((l) => l !== '').join('\n'),
          tokens: pieceTokens,
          kind: 'table',
          separator: '\n\n',
          page: table.page,
        },
      ];
      tokens = pieceTokens;
    } else if (header !== '' && table.rows.length === 0) {
      add({ text: header, tokens: headerTokens, kind: 'table', separator: '\n\n', page: table.page });
    }
  }
}

const sum = (parts: { tokens: number }[]): number => parts.reduce((n, p, i) => n + p.tokens + (i > 0 ? SEPARATOR_TOKENS : 0), 0);

/**
 * The last whole sentences of a chunk's prose, up to `budget` tokens, to open the next
 * chunk with. Tables and code are not repeated (a table's next piece repeats its header).
 */
function overlapOf(parts: Part[], budget: number): Part[] {
  if (budget <= 0) return [];
  const taken: Part[] = [];
  let tokens = 0;
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]!;
    if (part.kind === 'table' || part.kind === 'preformatted') break;
    const sentences = splitSentences(part.text);
    for (let s = sentences.length - 1; s >= 0; s--) {
      const sentence = sentences[s]!;
      const sentenceTokens = countTokens(sentence);
      if (tokens + sentenceTokens + SEPARATOR_TOKENS > budget) return taken;
      const startsPart = s === 0;
      taken.unshift({
        text: sentence,
        tokens: sentenceTokens,
        kind: part.kind,
        separator: startsPart ? part.separator : ' ',
        page: part.page,
        overlap: true,
      });
      tokens += sentenceTokens + SEPARATOR_TOKENS;
    }
  }
  return taken;
}

/** Header rows as markdown, with the separator row; cut down when they alone would crowd out the rows. */
function tableHeader(header: string[][], budget: number): string {
  if (header.length === 0) return '';
  for (let rows = header.length; rows > 0; rows--) {
    const lines = header.slice(0, rows).map(tableRow);
    const text = [...lines, tableRow(header[0]!.map(() => '---'))].join('\n');
    if (countTokens(text) <= budget) return text;
  }
  return splitByTokens(tableRow(header[0]!), budget)[0] ?? '';
}

const tableRow = (cells: string[]): string => `| ${cells.map((c) => c.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim()).join(' | ')} |`;
