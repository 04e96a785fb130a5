import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chunkBlocks } from '../../src/areas/os/ingestion/chunking.js';
import type { Block } from '../../src/areas/os/ingestion/extract/types.js';
import { countTokens, splitSentences } from '../../src/areas/os/ingestion/tokens.js';
import { prose } from '../helpers/documents.js';

const p = (text: string, page: number | null = null): Block => ({ kind: 'paragraph', text, page });
const h = (level: number, text: string): Block => ({ kind: 'heading', level, text, page: null });
const options = { chunkTokens: 120, chunkOverlapTokens: 30 };

describe('chunking', () => {
  it('packs whole paragraphs into chunks up to the token budget, never over it', () => {
    const paragraphs = Array.from({ length: 40 }, (_, i) => prose(i, 1 + (i % 4)));
    const chunks = chunkBlocks(
      'Doc',
      paragraphs.map((text) => p(text)),
      { chunkTokens: 120, chunkOverlapTokens: 0 },
    );
    assert.ok(chunks.length > 5, `${chunks.length} chunks`);
    for (const chunk of chunks) {
      assert.ok(chunk.tokenCount <= 120, `${chunk.tokenCount} tokens`);
      assert.equal(chunk.tokenCount, countTokens(chunk.content));
      assert.equal(chunk.title, 'Doc');
    }
    // Without overlap, the chunks are the paragraphs, whole and in order.
    assert.deepEqual(
      chunks.flatMap((c) => c.content.split('\n\n')),
      paragraphs,
    );
  });

  it('holds the bound for any budget, cutting between sentences only when a paragraph is too long', () => {
    const text = prose(7, 60); // ~800 tokens in one paragraph
    for (const chunkTokens of [32, 50, 100, 333]) {
      const chunks = chunkBlocks('Doc', [p(text)], { chunkTokens, chunkOverlapTokens: 10 });
      assert.ok(chunks.length > 1);
      for (const chunk of chunks) {
        assert.ok(chunk.tokenCount <= chunkTokens, `${chunk.tokenCount} > ${chunkTokens}`);
        assert.match(chunk.content, /\.$/, 'every chunk ends at the end of a sentence');
        assert.match(chunk.content, /^[A-Z]/, 'and starts at the start of one');
      }
      const sentences = new Set(splitSentences(text));
      for (const chunk of chunks) for (const s of splitSentences(chunk.content)) assert.ok(sentences.has(s), `"${s}" is a whole sentence`);
    }
  });

  it('cuts a single sentence over the budget between words, within the budget', () => {
    const endless = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const base64 = 'QUJD'.repeat(500);
    const chunks = chunkBlocks('Doc', [p(endless), p(base64)], { chunkTokens: 64, chunkOverlapTokens: 16 });
    for (const chunk of chunks) assert.ok(chunk.tokenCount <= 64, `${chunk.tokenCount} tokens`);
    const words = chunks.flatMap((c) => c.content.split(/\s+/)).filter((w) => w.startsWith('word'));
    assert.deepEqual([...new Set(words)], endless.split(' '), 'no word is lost or cut');
    assert.equal(
      chunks
        .map((c) => c.content)
        .join('')
        .match(/QUJD/g)?.length,
      500,
      'the long word is cut, not lost',
    );
  });

  it('keeps the heading path and starts a new chunk at each section', () => {
    const blocks = [
      h(1, 'Handbook'),
      p('Intro.'),
      h(2, 'Holidays'),
      p('27 days.'),
      h(3, 'Booking'),
      p('Use the portal.'),
      h(2, 'Expenses'),
      p('Keep receipts.'),
    ];
    const chunks = chunkBlocks('Handbook', blocks, options);
    assert.deepEqual(
      chunks.map((c) => [c.headingPath, c.content]),
      [
        [['Handbook'], 'Intro.'],
        [['Handbook', 'Holidays'], '27 days.'],
        [['Handbook', 'Holidays', 'Booking'], 'Use the portal.'],
        [['Handbook', 'Expenses'], 'Keep receipts.'],
      ],
    );
  });

  it('opens a continuing chunk with the last whole sentences of the previous one, never across sections', () => {
    const blocks = [h(1, 'One'), ...Array.from({ length: 12 }, (_, i) => p(prose(100 + i, 3))), h(1, 'Two'), p(prose(200, 2))];
    const chunks = chunkBlocks('Doc', blocks, options);
    const one = chunks.filter((c) => c.headingPath[0] === 'One');
    assert.ok(one.length >= 3);
    for (let i = 1; i < one.length; i++) {
      const previous = splitSentences(one[i - 1]!.content);
      const first = splitSentences(one[i]!.content)[0]!;
      assert.ok(previous.includes(first), `chunk ${i} starts with a sentence of chunk ${i - 1}`);
      assert.ok(countTokens(first) <= options.chunkOverlapTokens);
    }
    const two = chunks.find((c) => c.headingPath[0] === 'Two')!;
    assert.equal(two.content, prose(200, 2), 'a new section starts clean');
  });

  it('cuts a table between rows and repeats its header rows in every piece', () => {
    const rows = Array.from({ length: 60 }, (_, i) => [`SKU-${i}`, `Product number ${i}`, `${i * 3}.99 EUR`]);
    const table: Block = { kind: 'table', header: [['SKU', 'Name', 'Price']], rows, page: null };
    const chunks = chunkBlocks(
      'Prices',
      [h(1, 'Price list'), p('All prices include VAT.'), table, p('Prices valid until December.')],
      options,
    );
    const pieces = chunks.filter((c) => c.content.includes('SKU-'));
    assert.ok(pieces.length >= 3, `${pieces.length} pieces`);
    for (const piece of pieces) {
      const lines = piece.content.split('\n');
      const at = lines.indexOf('| SKU | Name | Price |');
      assert.ok(at >= 0, 'the header is in the piece');
      assert.equal(lines[at + 1], '| --- | --- | --- |');
      assert.ok(piece.tokenCount <= options.chunkTokens);
      assert.deepEqual(piece.headingPath, ['Price list']);
    }
    const seen = pieces.flatMap((c) => c.content.split('\n').filter((l) => l.startsWith('| SKU-')));
    assert.deepEqual(
      seen,
      rows.map((r) => `| ${r.join(' | ')} |`),
      'every row once, in order',
    );
  });

  it('lets a small table join the text before it, and escapes pipes in cells', () => {
    const table: Block = { kind: 'table', header: [['Key', 'Value']], rows: [['a|b', 'line\nbreak']], page: null };
    const [chunk, ...rest] = chunkBlocks('Doc', [p('Settings:'), table], options);
    assert.equal(rest.length, 0);
    assert.equal(chunk!.content, 'Settings:\n\n| Key | Value |\n| --- | --- |\n| a\\|b | line break |');
  });

  it('joins list items line by line and cuts preformatted text between lines', () => {
    const items: Block[] = ['Seals', 'Filters'].map((text) => ({ kind: 'item', text, marker: '-', depth: 0, page: null }));
    assert.equal(chunkBlocks('Doc', [p('Check:'), ...items], options)[0]!.content, 'Check:\n\n- Seals\n- Filters');

    const code = Array.from({ length: 80 }, (_, i) => `config.value_${i} = ${i * 7}`).join('\n');
    const chunks = chunkBlocks('Doc', [{ kind: 'preformatted', text: code, page: null }], options);
    assert.ok(chunks.length > 1);
    assert.deepEqual(
      chunks.flatMap((c) => c.content.split('\n')),
      code.split('\n'),
      'whole lines, none repeated',
    );
  });

  it('gives each chunk the page its text starts on, and null outside PDFs', () => {
    const texts = [prose(1, 4), prose(2, 4), prose(3, 4)];
    const sizes = texts.map(countTokens);
    const chunkTokens = Math.max(...sizes) + 2;
    assert.ok(Math.min(...sizes) * 2 + 1 > chunkTokens, 'no two paragraphs share a chunk');
    const chunks = chunkBlocks(
      'Doc',
      texts.map((text, i) => p(text, i + 1)),
      { chunkTokens, chunkOverlapTokens: 0 },
    );
    assert.deepEqual(
      chunks.map((c) => c.page),
      [1, 2, 3],
    );
    assert.equal(chunkBlocks('Doc', [p('x')], options)[0]!.page, null);
  });

  it('treats special-token text as text, and keeps a document of headings only', () => {
    const [chunk] = chunkBlocks('Doc', [p('Send <|endoftext|> to stop.')], options);
    assert.equal(chunk!.content, 'Send <|endoftext|> to stop.');
    const toc = chunkBlocks('Contents', [h(1, 'Contents'), h(2, 'Chapter 1'), h(2, 'Chapter 2')], options);
    assert.equal(toc.length, 1);
    assert.equal(toc[0]!.content, 'Contents\n\nChapter 1\n\nChapter 2');
    assert.deepEqual(chunkBlocks('Doc', [], options), []);
  });
});
