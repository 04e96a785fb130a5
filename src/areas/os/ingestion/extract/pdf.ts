// PDF through pdfjs-dist: a page's text items are positioned glyph runs, so lines are
// rebuilt from their baselines, paragraphs from the gaps between lines, and headings
// from type noticeably larger than the body text. Every block keeps its page number.
import { createRequire } from 'node:module';
import path from 'node:path';
import { checkPdfExpansion } from './pdf-guard.js';
import type { Block, Extraction } from './types.js';
import { ExtractionError, emptyDocument } from './types.js';

interface Line {
  text: string;
  /** Baseline, in PDF units (grows upwards). */
  y: number;
  /** Font size: the height of the largest glyph run on the line. */
  size: number;
  page: number;
}

// Page furniture that says nothing about the content: "3", "Page 3", "3 of 12", "- 3 -".
const PAGE_NUMBER = /^[\s\-–]*(page\s*)?\d+(\s*(of|\/)\s*\d+)?[\s\-–]*$/i;
const BULLET = /^([•◦▪▫‣⁃∙·\-–*]|\d{1,3}[.)]|[a-z][.)])\s+/;

export async function extractPdf(bytes: Uint8Array, maxExpandedBytes: number): Promise<Extraction> {
  await checkPdfExpansion(bytes, maxExpandedBytes);
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  // pdfjs in Node reads its CMaps (CJK encodings) and standard fonts from these folders by path.
  const root = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
  const task = pdfjs.getDocument({
    // pdfjs refuses a Buffer (a Uint8Array subclass); a plain view over the same memory it takes.
    data: bytes instanceof Buffer ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes,
    disableFontFace: true,
    isEvalSupported: false,
    useSystemFonts: false,
    isOffscreenCanvasSupported: false,
    enableXfa: false,
    cMapUrl: `${root}/cmaps/`,
    cMapPacked: true,
    standardFontDataUrl: `${root}/standard_fonts/`,
    verbosity: 0,
  });
  let pdf: Awaited<typeof task.promise>;
  try {
    pdf = await task.promise;
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'PasswordException') throw new ExtractionError('unsupported', 'The PDF is password-protected.');
    throw new ExtractionError('malformed', `The file is not a readable PDF (${(error as Error).message}).`);
  }
  try {
    const info = (await pdf.getMetadata().catch(() => null))?.info as { Title?: unknown } | undefined;
    const lines: Line[] = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      lines.push(...pageLines(content.items as Item[], n));
      page.cleanup();
    }
    if (!lines.some((l) => /\p{L}|\p{N}/u.test(l.text))) throw emptyDocument('The PDF (perhaps scanned images without a text layer)');
    const blocks = toBlocks(lines);
    const metaTitle = typeof info?.Title === 'string' ? info.Title.trim() : '';
    const firstH1 = blocks.find((b) => b.kind === 'heading' && b.level === 1);
    return { title: metaTitle || (firstH1?.kind === 'heading' ? firstH1.text : null), blocks };
  } finally {
    await pdf.destroy();
  }
}

type Item = { str?: string; transform?: number[]; width?: number; hasEOL?: boolean };

/** Text runs → lines: a run starts a new line when its baseline moves by more than half its size. */
function pageLines(items: Item[], page: number): Line[] {
  const lines: Line[] = [];
  let line: (Line & { end: number }) | null = null;
  for (const item of items) {
    if (!item.str || !item.transform) continue;
    const [, b = 0, , d = 0, x = 0, y = 0] = item.transform;
    const size = Math.hypot(b, d) || 1;
    if (line && Math.abs(y - line.y) <= 0.5 * Math.max(size, line.size)) {
      // A gap wider than a fraction of the font size is a space the PDF drew as distance.
      const gap = x - line.end;
      if (gap > 0.15 * size && !/\s$/.test(line.text) && !/^\s/.test(item.str)) line.text += ' ';
      line.text += item.str;
      line.size = Math.max(line.size, size);
    } else {
      if (line) lines.push(line);
      line = { text: item.str, y, size, page, end: x };
    }
    line.end = x + (item.width ?? 0);
  }
  if (line) lines.push(line);
  const kept = lines.map(({ text, y, size }) => ({ text: text.replace(/\s+/g, ' ').trim(), y, size, page })).filter((l) => l.text !== '');
  // Page numbers at the top or bottom of the page are furniture, not text.
  if (kept.length > 0 && PAGE_NUMBER.test(kept[kept.length - 1]!.text)) kept.pop();
  if (kept.length > 0 && PAGE_NUMBER.test(kept[0]!.text)) kept.shift();
  return kept;
}

/** Lines → blocks, using the document's body text size to tell headings from text. */
function toBlocks(lines: Line[]): Block[] {
  const body = bodySize(lines);
  const isHeading = (l: Line) => l.size >= body * 1.15 && l.text.length <= 200 && /\p{L}/u.test(l.text);
  // The largest heading size is level 1, the next level 2, and so on.
  const headingSizes = [...new Set(lines.filter(isHeading).map((l) => Math.round(l.size)))].sort((a, b) => b - a);
  const level = (l: Line) => Math.min(6, headingSizes.indexOf(Math.round(l.size)) + 1);

  const blocks: Block[] = [];
  let current: { lines: Line[]; heading: boolean; marker: string | null } | null = null;
  const flush = () => {
    if (!current) return;
    const first = current.lines[0]!;
    const text = joinLines(current.lines.map((l) => l.text));
    if (current.heading) blocks.push({ kind: 'heading', level: level(first), text, page: first.page });
    else if (current.marker !== null) blocks.push({ kind: 'item', text, marker: current.marker, depth: 0, page: first.page });
    else blocks.push({ kind: 'paragraph', text, page: first.page });
    current = null;
  };
  let previous: Line | null = null;
  for (const line of lines) {
    const heading = isHeading(line);
    const bullet = heading ? null : BULLET.exec(line.text);
    const gap = previous && previous.page === line.page ? previous.y - line.y : Number.POSITIVE_INFINITY;
    const continues =
      current !== null &&
      current.heading === heading &&
      !bullet &&
      Math.abs(line.size - previous!.size) <= 0.1 * previous!.size &&
      gap > 0 &&
      gap <= 1.6 * Math.max(line.size, previous!.size);
    if (!continues) {
      flush();
      const marker = bullet ? bullet[1]!.replace(/^[•◦▪▫‣⁃∙·–*]$/, '-') : null;
      current = { lines: [], heading, marker };
      if (bullet) line.text = line.text.slice(bullet[0].length);
    }
    current!.lines.push(line);
    previous = line;
  }
  flush();
  return blocks;
}

/** The most common font size, weighted by characters: what the body text is set in. */
function bodySize(lines: Line[]): number {
  const chars = new Map<number, number>();
  for (const l of lines) chars.set(Math.round(l.size), (chars.get(Math.round(l.size)) ?? 0) + l.text.length);
  // On a tie, the smaller size: a title page with as much heading as text is still text at the smaller size.
  return [...chars].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]?.[0] ?? 10;
}

/** Joins wrapped lines, mending words hyphenated at a line break ("exam-" + "ple"). */
function joinLines(lines: string[]): string {
  let text = '';
  for (const line of lines) {
    if (text === '') text = line;
    else if (/\p{Ll}-$/u.test(text) && /^\p{Ll}/u.test(line)) text = text.slice(0, -1) + line;
    else text += ` ${line}`;
  }
  return text;
}
