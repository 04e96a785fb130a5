import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MEDIA_TYPES } from '../../src/areas/os/documents/media-types.js';
import { ExtractionError } from '../../src/areas/os/ingestion/extractor.js';
import { JSON_MAX_DEPTH } from '../../src/areas/os/ingestion/extract/json.js';
import { extractCsv, parseCsv } from '../../src/areas/os/ingestion/extract/csv.js';
import { extractHtml } from '../../src/areas/os/ingestion/extract/html.js';
import { extractMarkdown } from '../../src/areas/os/ingestion/extract/markdown.js';
import * as samples from '../helpers/documents.js';
import { extract, text } from './extract-support.js';

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
