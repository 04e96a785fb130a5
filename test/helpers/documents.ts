// Sample documents for ingestion tests, built here in code (nothing downloaded):
// a real PDF (pdf-lib), a real DOCX (jszip: the OOXML parts Word writes), and small
// HTML, Markdown, CSV, JSON and text files, plus hostile ones (a zip bomb, a broken PDF).
import { deflateSync } from 'node:zlib';
import JSZip from 'jszip';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';

// ---------------------------------------------------------------- PDF

export interface SamplePdfOptions {
  /** The Title in the document information (pdfjs reports it as the title). */
  title?: string;
  /** Prints "Page n" at the foot of each page, as real documents do (extraction drops it). */
  pageNumbers?: boolean;
}

/**
 * A PDF with one page per entry of `pages`; each string on a page is a block:
 * "# text" a large heading, "## text" a smaller one, "- text" a bullet, anything else
 * a paragraph, wrapped to the page width. Text must be in WinAnsi (Latin-1) characters.
 */
export async function samplePdf(pages: string[][], options: SamplePdfOptions = {}): Promise<Buffer> {
  const doc = await PDFDocument.create();
  if (options.title) doc.setTitle(options.title);
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  pages.forEach((blocks, index) => {
    const page = doc.addPage([595, 842]);
    let y = 790;
    for (const block of blocks) {
      const [size, font, text, indent] = block.startsWith('## ')
        ? [15, bold, block.slice(3), 0]
        : block.startsWith('# ')
          ? [20, bold, block.slice(2), 0]
          : [11, regular, block, block.startsWith('- ') ? 10 : 0];
      if (size > 11) y -= 8; // space above a heading
      for (const line of wrap(text, font, size, 495 - indent)) {
        if (y < 60) break; // the rest of an overlong page is dropped; tests keep pages short
        page.drawText(line, { x: 50 + indent, y, size, font });
        y -= size * 1.3;
      }
      y -= size * 0.9; // space between paragraphs
    }
    if (options.pageNumbers ?? true) page.drawText(`Page ${index + 1}`, { x: 280, y: 30, size: 9, font: regular });
  });
  return Buffer.from(await doc.save());
}

function wrap(text: string, font: { widthOfTextAtSize(t: string, s: number): number }, size: number, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (line !== '' && font.widthOfTextAtSize(candidate, size) > width) {
      lines.push(line);
      line = word;
    } else line = candidate;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** A PDF of `pageCount` pages, each a heading and a few paragraphs of varied prose (for timing). */
export function longPdf(pageCount: number): Promise<Buffer> {
  const pages = Array.from({ length: pageCount }, (_, p) => [
    `# Section ${p + 1}`,
    ...Array.from({ length: 4 }, (_, i) => prose(p * 10 + i, 6)),
    `## Details ${p + 1}`,
    prose(p * 10 + 7, 5),
  ]);
  return samplePdf(pages);
}

/**
 * A valid one-page PDF whose page content is one Flate stream that inflates to
 * `expandedBytes` (a line of text, then spaces): a decompression bomb a few hundred KB small.
 */
export async function flateBombPdf(expandedBytes = 300 * 1024 ** 2): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  page.drawText('Hello', { x: 50, y: 790, size: 11, font }); // gives the page its font resource
  const content = Buffer.alloc(expandedBytes, 0x20);
  content.write('BT /F1 11 Tf 50 700 Td (Hello bomb) Tj ET\n');
  const stream = doc.context.stream(deflateSync(content, { level: 9 }), { Filter: 'FlateDecode' });
  page.node.set(PDFName.of('Contents'), doc.context.register(stream));
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** Bytes that start like a PDF and are not one. */
export const malformedPdf = (): Buffer => Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >>\ngarbage\n%%EOF\n');

// ---------------------------------------------------------------- DOCX

export type DocxBlock =
  | { heading: string; level?: 1 | 2 | 3 }
  | { paragraph: string }
  | { item: string; ordered?: boolean }
  /** The first row is the header row (marked as one, as Word does with "Repeat as header row"). */
  | { table: string[][] };

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const run = (text: string) => `<w:r><w:t xml:space="preserve">${xml(text)}</w:t></w:r>`;

function docxBody(blocks: DocxBlock[]): string {
  return blocks
    .map((block) => {
      if ('heading' in block) return `<w:p><w:pPr><w:pStyle w:val="Heading${block.level ?? 1}"/></w:pPr>${run(block.heading)}</w:p>`;
      if ('paragraph' in block) return `<w:p>${run(block.paragraph)}</w:p>`;
      if ('item' in block) {
        const numId = block.ordered ? 2 : 1;
        return `<w:p><w:pPr><w:pStyle w:val="ListParagraph"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="${numId}"/></w:numPr></w:pPr>${run(block.item)}</w:p>`;
      }
      const rows = block.table.map(
        (cells, i) =>
          `<w:tr>${i === 0 ? '<w:trPr><w:tblHeader/></w:trPr>' : ''}${cells.map((c) => `<w:tc><w:p>${run(c)}</w:p></w:tc>`).join('')}</w:tr>`,
      );
      return `<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/></w:tblPr>${rows.join('')}</w:tbl>`;
    })
    .join('');
}

const STYLES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="${W}">
  <w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>
  <w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/></w:style>
  <w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:basedOn w:val="Normal"/></w:style>
  <w:style w:type="paragraph" w:styleId="Heading3"><w:name w:val="heading 3"/><w:basedOn w:val="Normal"/></w:style>
  <w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/><w:basedOn w:val="Normal"/></w:style>
  <w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/></w:style>
</w:styles>`;

const NUMBERING = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering xmlns:w="${W}">
  <w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="•"/></w:lvl></w:abstractNum>
  <w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl></w:abstractNum>
  <w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>
  <w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>
</w:numbering>`;

/** The parts of a minimal Word document around `documentXml`'s body. */
function docxZip(bodyXml: string): JSZip {
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
  <Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
  <Default Extension="xml" ContentType="application/xml"/>
  <Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
  <Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>
  <Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/>
</Types>`,
  );
  zip.file(
    '_rels/.rels',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
  <Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>`,
  );
  zip.file(
    'word/_rels/document.xml.rels',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
  <Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>
  <Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/>
</Relationships>`,
  );
  zip.file('word/styles.xml', STYLES);
  zip.file('word/numbering.xml', NUMBERING);
  zip.file(
    'word/document.xml',
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="${W}"><w:body>${bodyXml}</w:body></w:document>`,
  );
  return zip;
}

/** A DOCX holding `blocks`, with Word's heading and list paragraph styles, numbering and a header row. */
export async function sampleDocx(blocks: DocxBlock[]): Promise<Buffer> {
  return docxZip(docxBody(blocks)).generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/**
 * A small DOCX (a few hundred KB at most) with an entry that inflates to `expandedBytes`
 * of zeros. With `lie`, the archive declares that entry as 1 KB, as a crafted bomb
 * would, so only counting what actually inflates catches it.
 */
export async function zipBombDocx(expandedBytes = 300 * 1024 ** 2, lie = false): Promise<Buffer> {
  const zip = docxZip(docxBody([{ paragraph: 'Nothing to see here.' }]));
  zip.file('word/media/padding.bin', Buffer.alloc(expandedBytes));
  const bytes = await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 9 } });
  if (lie) declareSize(bytes, 'word/media/padding.bin', 1024);
  return bytes;
}

/** Rewrites the uncompressed size a zip declares for `name` (central directory and local header). */
function declareSize(zip: Buffer, name: string, size: number): void {
  for (let at = 0; at + 46 < zip.length; at++) {
    const signature = zip.readUInt32LE(at);
    const isCentral = signature === 0x02014b50;
    if (!isCentral && signature !== 0x04034b50) continue;
    const nameAt = at + (isCentral ? 46 : 30);
    const nameLength = zip.readUInt16LE(at + (isCentral ? 28 : 26));
    if (zip.toString('utf8', nameAt, nameAt + nameLength) === name) zip.writeUInt32LE(size, at + (isCentral ? 24 : 22));
  }
}

/** The first `fraction` of a file, as an interrupted upload leaves it. */
export const truncated = (bytes: Buffer, fraction = 0.5): Buffer => bytes.subarray(0, Math.floor(bytes.length * fraction));

// ---------------------------------------------------------------- text formats

export const sampleHtml = (): Buffer =>
  Buffer.from(`<!doctype html>
<html><head><title>Pump Manual</title><style>body { color: red }</style><script>var secret = "do not index";</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/docs">Docs</a></nav>
<h1>Zephyr-9 Pump</h1>
<p>The Zephyr-9 pump operates at a nominal pressure of 42 bar.</p>
<h2>Maintenance</h2>
<p>Replace the &quot;gasket&quot; every <b>6 months</b>.</p>
<ul><li>Check the seals.</li><li>Drain the reservoir.</li></ul>
<h2>Specifications</h2>
<table>
  <thead><tr><th>Model</th><th>Flow (l/min)</th><th>Price</th></tr></thead>
  <tbody><tr><td>Zephyr-9</td><td>120</td><td>EUR 4,300</td></tr><tr><td>Zephyr-12</td><td>180</td><td>EUR 6,100</td></tr></tbody>
</table>
<pre>pump --start --pressure 42</pre>
</body></html>`);

export const sampleMarkdown = (): Buffer =>
  Buffer.from(`# Employee Handbook

Welcome to **Acme**. This handbook explains how we work.

## Holidays

Every employee gets 27 days of paid holiday per year. Unused days expire on 31 March.

- Book holidays in the HR portal.
- Tell your team two weeks ahead.

## Expenses

| Item | Limit | Receipt needed |
|------|------:|----------------|
| Hotel night | 180 EUR | yes |
| Dinner | 45 EUR | yes |
| Taxi | 60 EUR | no |

\`\`\`
expenses submit --month 2024-05
\`\`\`
`);

export const sampleCsv = (): Buffer =>
  Buffer.from('sku,name,price,stock\nA-100,"Widget, large",19.99,120\nA-200,Gadget,5.49,3000\nA-300,"Doohickey ""pro""",99.00,7\n');

export const sampleJson = (): Buffer =>
  Buffer.from(JSON.stringify({ service: { name: 'billing', owner: 'Team Orca', regions: ['eu-west', 'us-east'] }, retries: 3 }));

export const sampleJsonRecords = (): Buffer =>
  Buffer.from(
    JSON.stringify([
      { city: 'Lisbon', population: 545_000 },
      { city: 'Porto', population: 232_000, coast: true },
    ]),
  );

export const sampleText = (): Buffer =>
  Buffer.from(
    'Minutes of the board meeting\n\nThe board approved the 2025 budget of 1.2 million.\nThe next meeting is on 14 May.\n\nAttendees: Ana, Bo, Chen.\n',
  );

// ---------------------------------------------------------------- prose

const WORDS = (
  'pump valve pressure seal gasket reservoir flow maintenance schedule operator manual safety inspection filter ' +
  'motor bearing housing outlet inlet gauge sensor alarm shutdown warranty service technician cycle temperature'
).split(' ');

/** Deterministic prose: `sentences` sentences of 8-20 words, different for each `seed`. */
export function prose(seed: number, sentences: number): string {
  let state = seed * 7919 + 17;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648);
  return Array.from({ length: sentences }, () => {
    const words = Array.from({ length: 8 + (next() % 13) }, () => WORDS[next() % WORDS.length]!);
    words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
    return `${words.join(' ')}.`;
  }).join(' ');
}
