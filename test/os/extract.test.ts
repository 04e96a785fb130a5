import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MEDIA_TYPES, type MediaType } from '../../src/areas/os/documents/media-types.js';
import { ExtractionError, extractDocument, type ExtractorOptions } from '../../src/areas/os/ingestion/extractor.js';
import { extractCsv, parseCsv } from '../../src/areas/os/ingestion/extract/csv.js';
import { JSON_MAX_DEPTH } from '../../src/areas/os/ingestion/extract/json.js';
import { extractHtml } from '../../src/areas/os/ingestion/extract/html.js';
import { extractMarkdown } from '../../src/areas/os/ingestion/extract/markdown.js';
import * as samples from '../helpers/documents.js';

const options: ExtractorOptions = {
  timeoutMs: 60_000,
  maxMemoryMb: 256,
  maxExpandedBytes: 16 * 1024 ** 2,
  chunkTokens: 200,
  chunkOverlapTokens: 30,
};
const extract = (bytes: Uint8Array, type: MediaType, name: string, overrides: Partial<ExtractorOptions> = {}) =>
  extractDocument(bytes, type, name, { ...options, ...overrides });
const text = (doc: { chunks: { content: string }[] }) => doc.chunks.map((c) => c.content).join('\n\n');

/** Rejects with an ExtractionError of `code`, and the process goes on. */
async function rejectsWith(promise: Promise<unknown>, code: ExtractionError['code'], permanent = true) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ExtractionError, String(error));
    assert.equal(error.code, code, error.message);
    assert.equal(error.permanent, permanent);
    return true;
  });
}

describe('document extraction (in a worker thread)', () => {
  it('PDF: text by page, headings from the type size, the title from the document info', async () => {
    const pdf = await samples.samplePdf(
      [
        [
          '# Safety Manual',
          'Wear gloves at all times when handling the pump housing, because the surface may be hot after long use.',
          '## Storage',
          'Store the unit in a dry room.',
        ],
        ['## Disposal', 'Return old units to the depot in Bremen.', '- Remove the battery first.'],
      ],
      { title: 'Pump Safety' },
    );
    const doc = await extract(pdf, MEDIA_TYPES.pdf, 'safety.pdf');
    assert.equal(doc.title, 'Pump Safety');
    const byText = (needle: string) => doc.chunks.find((c) => c.content.includes(needle))!;
    assert.deepEqual(byText('Wear gloves').headingPath, ['Safety Manual']);
    assert.match(
      byText('Wear gloves').content,
      /when handling the pump housing, because the surface may be hot after long use\./,
      'wrapped lines are one paragraph',
    );
    assert.deepEqual(byText('dry room').headingPath, ['Safety Manual', 'Storage']);
    assert.equal(byText('dry room').page, 1);
    assert.deepEqual(byText('Bremen').headingPath, ['Safety Manual', 'Disposal']);
    assert.equal(byText('Bremen').page, 2);
    assert.match(byText('Bremen').content, /\n- Remove the battery first\.$/);
    assert.doesNotMatch(text(doc), /Page \d/, 'page numbers are furniture');
  });

  it('PDF without a title: the first large heading, else the file name', async () => {
    const titled = await extract(
      await samples.samplePdf([['# Annual Report', 'Revenue grew by a tenth over the year.']]),
      MEDIA_TYPES.pdf,
      'r.pdf',
    );
    assert.equal(titled.title, 'Annual Report');
    const plain = await extract(await samples.samplePdf([['Revenue grew.']]), MEDIA_TYPES.pdf, 'reports/q3 2024.final.pdf');
    assert.equal(plain.title, 'q3 2024.final');
  });

  it('DOCX: heading path, list items and a table with its header survive mammoth', async () => {
    const docx = await samples.sampleDocx([
      { heading: 'Travel Policy' },
      { paragraph: 'This policy covers business travel.' },
      { heading: 'Booking', level: 2 },
      { item: 'Book trains for trips under 500 km.' },
      { item: 'Approve flights with your manager.', ordered: true },
      { heading: 'Allowances', level: 2 },
      {
        table: [
          ['Expense', 'Limit'],
          ['Hotel night', '180 EUR'],
          ['Dinner', '45 EUR'],
        ],
      },
    ]);
    const doc = await extract(docx, MEDIA_TYPES.docx, 'travel.docx');
    assert.equal(doc.title, 'Travel Policy');
    assert.deepEqual(
      doc.chunks.map((c) => [c.headingPath, c.content]),
      [
        [['Travel Policy'], 'This policy covers business travel.'],
        [['Travel Policy', 'Booking'], '- Book trains for trips under 500 km.\n1. Approve flights with your manager.'],
        [['Travel Policy', 'Allowances'], '| Expense | Limit |\n| --- | --- |\n| Hotel night | 180 EUR |\n| Dinner | 45 EUR |'],
      ],
    );
    assert.ok(doc.chunks.every((c) => c.page === null));
  });

  it('HTML: title, headings, lists, tables and pre; no script, style or navigation', async () => {
    const doc = await extract(samples.sampleHtml(), MEDIA_TYPES.html, 'pump.html');
    assert.equal(doc.title, 'Pump Manual');
    const all = text(doc);
    assert.doesNotMatch(all, /secret|color: red|Home|Docs/);
    assert.match(all, /Replace the "gasket" every 6 months\.\n\n- Check the seals\.\n- Drain the reservoir\./);
    const specs = doc.chunks.find((c) => c.headingPath.at(-1) === 'Specifications')!;
    assert.deepEqual(specs.headingPath, ['Zephyr-9 Pump', 'Specifications']);
    assert.match(specs.content, /^\| Model \| Flow \(l\/min\) \| Price \|\n\| --- \| --- \| --- \|\n\| Zephyr-9 \| 120 \| EUR 4,300 \|/);
    assert.match(specs.content, /pump --start --pressure 42$/);
  });

  it('Markdown: headings, lists, pipe tables and code fences', async () => {
    const doc = await extract(samples.sampleMarkdown(), MEDIA_TYPES.markdown, 'handbook.md');
    assert.equal(doc.title, 'Employee Handbook');
    assert.deepEqual(
      doc.chunks.map((c) => c.headingPath),
      [['Employee Handbook'], ['Employee Handbook', 'Holidays'], ['Employee Handbook', 'Expenses']],
    );
    assert.equal(doc.chunks[0]!.content, 'Welcome to Acme. This handbook explains how we work.');
    assert.match(
      doc.chunks[1]!.content,
      /27 days of paid holiday.*\n\n- Book holidays in the HR portal\.\n- Tell your team two weeks ahead\.$/s,
    );
    assert.match(
      doc.chunks[2]!.content,
      /^\| Item \| Limit \| Receipt needed \|\n\| --- \| --- \| --- \|\n\| Hotel night \| 180 EUR \| yes \|/,
    );
    assert.match(doc.chunks[2]!.content, /expenses submit --month 2024-05$/);
  });

  it('CSV: one table, the first row its header, repeated in every piece', async () => {
    const small = await extract(samples.sampleCsv(), MEDIA_TYPES.csv, 'stock.csv');
    assert.equal(small.title, 'stock');
    assert.equal(
      small.chunks[0]!.content,
      '| sku | name | price | stock |\n| --- | --- | --- | --- |\n| A-100 | Widget, large | 19.99 | 120 |\n| A-200 | Gadget | 5.49 | 3000 |\n| A-300 | Doohickey "pro" | 99.00 | 7 |',
    );
    const rows = Array.from({ length: 300 }, (_, i) => `${i};Item ${i};${i}.50`).join('\n');
    const big = await extract(Buffer.from(`id;name;price\n${rows}\n`), MEDIA_TYPES.csv, 'big.csv', { chunkTokens: 100 });
    assert.ok(big.chunks.length > 5);
    for (const chunk of big.chunks) {
      assert.ok(chunk.content.startsWith('| id | name | price |\n| --- | --- | --- |\n'), chunk.content);
      assert.ok(chunk.tokenCount <= 100);
    }
  });

  it('JSON nested 200,000 deep is refused saying so, not with "Maximum call stack size exceeded" (issue 26)', async () => {
    const deep = (depth: number) => Buffer.from(`${'['.repeat(depth)}1${']'.repeat(depth)}`);
    const deepObject = Buffer.from(`${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`);
    for (const bytes of [deep(200_000), deepObject, deep(JSON_MAX_DEPTH + 1)]) {
      await assert.rejects(extract(bytes, MEDIA_TYPES.json, 'deep.json'), (error: unknown) => {
        assert.ok(error instanceof ExtractionError, String(error));
        assert.equal(error.code, 'malformed');
        assert.equal(
          error.message,
          'The JSON file is nested deeper than 1,000 levels (arrays and objects inside each other): it is not read.',
        );
        return true;
      });
    }
    // At the bound it is read.
    const atBound = await extract(deep(JSON_MAX_DEPTH), MEDIA_TYPES.json, 'deep.json');
    assert.match(text(atBound), /: 1$/);
  });

  it('JSON: path: value lines, or a table for an array of records', async () => {
    const doc = await extract(samples.sampleJson(), MEDIA_TYPES.json, 'service.json');
    assert.equal(
      doc.chunks[0]!.content,
      'service.name: billing\nservice.owner: Team Orca\nservice.regions[0]: eu-west\nservice.regions[1]: us-east\nretries: 3',
    );
    const records = await extract(samples.sampleJsonRecords(), MEDIA_TYPES.json, 'cities.json');
    assert.equal(
      records.chunks[0]!.content,
      '| city | population | coast |\n| --- | --- | --- |\n| Lisbon | 545000 |  |\n| Porto | 232000 | true |',
    );
  });

  it('plain text: paragraphs, the file name as title, Latin-1 bytes read as text', async () => {
    const doc = await extract(samples.sampleText(), MEDIA_TYPES.text, 'minutes.txt');
    assert.equal(doc.title, 'minutes');
    assert.match(text(doc), /^Minutes of the board meeting\n\nThe board approved the 2025 budget of 1\.2 million\.\nThe next meeting/);
    const latin1 = await extract(Buffer.from('Caf\xe9 cr\xe8me costs 3 euros.', 'latin1'), MEDIA_TYPES.text, 'menu.txt');
    assert.equal(latin1.chunks[0]!.content, 'Café crème costs 3 euros.');
  });

  it('hands a pooled Buffer over as a copy, leaving the caller’s bytes intact', async () => {
    const pooled = Buffer.from('Small note.');
    assert.notEqual(pooled.buffer.byteLength, pooled.byteLength, 'precondition: a view into the pool');
    await extract(pooled, MEDIA_TYPES.text, 'note.txt');
    assert.equal(pooled.toString(), 'Small note.');
  });

  it('rejects hostile and broken input with a permanent error, never taking the process down', async () => {
    await rejectsWith(extract(samples.malformedPdf(), MEDIA_TYPES.pdf, 'bad.pdf'), 'malformed');
    await rejectsWith(extract(Buffer.from('not a pdf at all'), MEDIA_TYPES.pdf, 'bad.pdf'), 'malformed');
    await rejectsWith(extract(await samples.samplePdf([[]], { pageNumbers: false }), MEDIA_TYPES.pdf, 'blank.pdf'), 'empty');
    const docx = await samples.sampleDocx([{ paragraph: 'Hello' }]);
    await rejectsWith(extract(samples.truncated(docx), MEDIA_TYPES.docx, 'cut.docx'), 'malformed');
    await rejectsWith(extract(Buffer.from('PK\x03\x04 nothing else'), MEDIA_TYPES.docx, 'fake.docx'), 'malformed');
    const zeroBytes = [MEDIA_TYPES.pdf, MEDIA_TYPES.docx, MEDIA_TYPES.json, MEDIA_TYPES.text];
    await Promise.all(zeroBytes.map((type) => rejectsWith(extract(new Uint8Array(0), type, 'empty'), 'empty')));
    await rejectsWith(extract(Buffer.from('{"a": [1, 2'), MEDIA_TYPES.json, 'bad.json'), 'malformed');
    await rejectsWith(extract(Buffer.from('\n\n   \n'), MEDIA_TYPES.text, 'blank.txt'), 'empty');
    await rejectsWith(extract(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]), MEDIA_TYPES.text, 'image.txt'), 'malformed');
    await rejectsWith(extract(Buffer.from('x'), 'image/png' as MediaType, 'x.png'), 'unsupported');
  });

  it('refuses a zip bomb DOCX before inflating it, whether its sizes tell the truth or lie', async () => {
    const bomb = await samples.zipBombDocx(64 * 1024 ** 2);
    assert.ok(bomb.length < 200 * 1024, `${bomb.length} bytes on disk`);
    await rejectsWith(extract(bomb, MEDIA_TYPES.docx, 'bomb.docx'), 'too_large');
    // Declared as 1 KB: only counting what actually inflates finds it.
    const liar = await samples.zipBombDocx(64 * 1024 ** 2, true);
    await assert.rejects(extract(liar, MEDIA_TYPES.docx, 'liar.docx'), /lies about its size/);
    // Within the limit, the same shape of file is a document.
    const fine = await extract(await samples.zipBombDocx(1024 ** 2), MEDIA_TYPES.docx, 'padded.docx');
    assert.equal(fine.chunks[0]!.content, 'Nothing to see here.');
  });

  it('refuses a PDF whose compressed streams inflate beyond the limit, before pdfjs holds them', async () => {
    const bomb = await samples.flateBombPdf(64 * 1024 ** 2);
    assert.ok(bomb.length < 200 * 1024, `${bomb.length} bytes on disk`);
    await rejectsWith(extract(bomb, MEDIA_TYPES.pdf, 'bomb.pdf'), 'too_large');
    const fine = await extract(await samples.flateBombPdf(1024 ** 2), MEDIA_TYPES.pdf, 'padded.pdf');
    assert.match(text(fine), /Hello bomb/, 'the same shape within the limit is read');
  });

  it('extracts a 50-page PDF and a 1 MB Markdown file', async (t) => {
    const pdf = await samples.longPdf(50);
    const pdfBytes = pdf.length; // the buffer is handed to the worker (detached) by the call
    let started = performance.now();
    const fromPdf = await extract(pdf, MEDIA_TYPES.pdf, 'long.pdf', { chunkTokens: 350, chunkOverlapTokens: 50 });
    const pdfMs = performance.now() - started;
    assert.equal(new Set(fromPdf.chunks.map((c) => c.page)).size, 50);
    assert.deepEqual(fromPdf.chunks.at(-1)!.headingPath, ['Section 50', 'Details 50']);

    let source = '# Big\n';
    for (let i = 0; source.length < 1024 * 1024; i++)
      source += `\n## Part ${i}\n\n${samples.prose(i, 12)}\n\n- ${samples.prose(i + 1, 1)}\n`;
    const markdown = Buffer.from(source);
    const markdownBytes = markdown.length;
    started = performance.now();
    const fromMarkdown = await extract(markdown, MEDIA_TYPES.markdown, 'big.md', { chunkTokens: 350, chunkOverlapTokens: 50 });
    const markdownMs = performance.now() - started;
    assert.ok(fromMarkdown.chunks.length >= 700, `${fromMarkdown.chunks.length} chunks`);
    t.diagnostic(`50-page PDF (${pdfBytes} bytes): ${pdfMs.toFixed(0)} ms, ${fromPdf.chunks.length} chunks`);
    t.diagnostic(`Markdown (${markdownBytes} bytes): ${markdownMs.toFixed(0)} ms, ${fromMarkdown.chunks.length} chunks`);
    // How fast is a figure (npm run bench:retrieval-scale measures ingest), not a test: it depends on the machine's load.
  });
});

describe('extractors (in process, the worker aside)', () => {
  it('Markdown: setext headings, front matter, nested items, a "---" that is no table', () => {
    const { title, blocks } = extractMarkdown(
      '---\ntitle: "Ops Guide"\nauthor: x\n---\nIntro | with a pipe\n---\n\n1. First\n   1. Nested [link](http://x)\n\nPlain **bold** `code`.\n\nSecond\n======\n',
    );
    assert.equal(title, 'Ops Guide');
    assert.deepEqual(blocks, [
      { kind: 'heading', level: 2, text: 'Intro | with a pipe', page: null },
      { kind: 'item', text: 'First', marker: '1.', depth: 0, page: null },
      { kind: 'item', text: 'Nested link', marker: '1.', depth: 1, page: null },
      { kind: 'paragraph', text: 'Plain bold code.', page: null },
      { kind: 'heading', level: 1, text: 'Second', page: null },
    ]);
  });

  it('HTML: a table without <thead> takes its first row as header; nested tables and captions read as text', () => {
    const { title, blocks } = extractHtml(
      '<h1>Rates</h1><table><caption>Hourly rates</caption><tr><td>Role</td><td>Rate</td></tr><tr><td>Engineer <table><tr><td>senior</td></tr></table></td><td>120</td></tr></table><p>After<br>break</p>',
    );
    assert.equal(title, 'Rates');
    assert.deepEqual(blocks.slice(1), [
      { kind: 'paragraph', text: 'Hourly rates', page: null },
      { kind: 'table', header: [['Role', 'Rate']], rows: [['Engineer senior', '120']], page: null },
      { kind: 'paragraph', text: 'After\nbreak', page: null },
    ]);
  });

  it('CSV: quoted separators, quotes and line breaks; the separator sniffed', () => {
    assert.deepEqual(parseCsv('a,"b,c","say ""hi""","two\nlines"\r\n1,2,3,4'), [
      ['a', 'b,c', 'say "hi"', 'two\nlines'],
      ['1', '2', '3', '4'],
    ]);
    const { blocks } = extractCsv('name;price\nTea;2,50\n');
    assert.deepEqual(blocks, [{ kind: 'table', header: [['name', 'price']], rows: [['Tea', '2,50']], page: null }]);
  });
});
