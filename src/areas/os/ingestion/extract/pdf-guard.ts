// A PDF's streams are usually Flate-compressed, and a megabyte of them can inflate to
// gigabytes. pdfjs inflates them into ArrayBuffers, which live outside the worker's
// heap and so outside its resourceLimits: one such page would grow the whole server
// process. So, before pdfjs, every compressed stream it would decode for text (pages,
// forms, fonts, object streams; not images, which text extraction never decodes) is
// inflated here as a stream and counted, keeping nothing, against maxExpandedBytes.
import { createInflate } from 'node:zlib';
import { ExtractionError } from './types.js';

const STREAM = Buffer.from('stream');
const FLATE = /\/(?:FlateDecode|Fl)\b/g;

export async function checkPdfExpansion(pdf: Uint8Array, maxExpandedBytes: number): Promise<void> {
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  let total = 0;
  for (let at = bytes.indexOf(STREAM); at >= 0; at = bytes.indexOf(STREAM, at + STREAM.length)) {
    if (bytes.toString('latin1', Math.max(0, at - 3), at) === 'end') continue; // "endstream"
    // The data starts after the end of the line that holds the keyword.
    let start = at + STREAM.length;
    if (bytes[start] === 0x0d) start++;
    if (bytes[start] !== 0x0a && bytes[start - 1] !== 0x0d) continue; // "stream" inside some other token
    start++;
    const dictionary = streamDictionary(bytes, at);
    if (/\/Subtype\s*\/Image\b/.test(dictionary)) continue;
    const layers = dictionary.match(FLATE)?.length ?? 0;
    if (layers === 0) continue;
    const end = bytes.indexOf('endstream', start);
    total += await inflatedSize(bytes.subarray(start, end < 0 ? bytes.byteLength : end), layers, maxExpandedBytes - total);
  }
}

/** The text between the object's start and its `stream` keyword: its dictionary. */
function streamDictionary(bytes: Buffer, streamAt: number): string {
  const window = bytes.toString('latin1', Math.max(0, streamAt - 4096), streamAt);
  const objectStart = window.lastIndexOf(' obj');
  return objectStart >= 0 ? window.slice(objectStart) : window;
}

/**
 * Inflates one stream through `layers` zlib decoders (a filter chain may repeat
 * FlateDecode), counting the output; zlib finds the stream's end by itself. Damaged
 * data counts what inflated before the damage: pdfjs reports the damage if it matters.
 */
function inflatedSize(data: Buffer, layers: number, budget: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const chain = Array.from({ length: layers }, () => createInflate());
    for (let i = 0; i + 1 < chain.length; i++) chain[i]!.pipe(chain[i + 1]!);
    let total = 0;
    let done = false;
    const finish = (outcome: number | ExtractionError) => {
      if (done) return;
      done = true;
      for (const inflater of chain) inflater.destroy();
      if (typeof outcome === 'number') resolve(outcome);
      else reject(outcome);
    };
    const last = chain[chain.length - 1]!;
    last.on('data', (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > budget)
        finish(new ExtractionError('too_large', 'The PDF holds compressed streams that expand beyond the limit (a decompression bomb).'));
    });
    last.on('end', () => finish(total));
    for (const inflater of chain) inflater.on('error', () => finish(total));
    chain[0]!.end(data);
  });
}
