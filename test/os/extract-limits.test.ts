// Extraction of hostile, broken and large documents, in the worker thread: each is
// refused with a permanent error (or read within its limits) and the process goes on.
// Apart from extract.test.ts because these are the slow ones: each file keeps well
// inside the runner's per-file timeout on a loaded machine.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MEDIA_TYPES, type MediaType } from '../../src/areas/os/documents/media-types.js';
import * as samples from '../helpers/documents.js';
import { extract, rejectsWith, text } from './extract-support.js';

describe('document extraction: hostile input and limits (in a worker thread)', () => {
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
