// Converts the npm package's word vectors (one ~307 MB JSON file) into the compact
// file of format.ts, once per data dir. Runs in a child process of its own (see
// conversion.ts), so neither the 300 MB of text nor the parse ever touches the
// server's heap or event loop; within it the JSON is scanned as a stream rather than
// JSON.parse'd whole, which keeps the child near 100 MB.
//
// What is kept: the most frequent `maxWords` words made only of the letters a-z. The
// source has no accented or apostrophe words, and words with digits or hyphens are few
// and never produced by the tokeniser (tokenize.ts splits on anything but letters).
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeTable } from './format.js';

export const DEFAULT_MAX_WORDS = 200_000;

export interface ConversionResult {
  words: number;
  sourceVocabulary: number;
  bytes: number;
  ms: number;
}

/** The share of the source read so far, 0 to 1. */
export type ConversionProgress = (fraction: number) => void;

/** How often the child reports progress (the server logs each report): a few lines, not hundreds. */
export const PROGRESS_STEP = 0.25;

const KEEP = /^[a-z]+$/;

/** Writes `targetFile` from `sourceFile` through a temporary name, so a crash never leaves half a file. */
export async function convertWordVectors(
  sourceFile: string,
  targetFile: string,
  maxWords = DEFAULT_MAX_WORDS,
  onProgress: ConversionProgress = () => {},
): Promise<ConversionResult> {
  const started = performance.now();
  const parsed = await scanSource(sourceFile, onProgress);
  const table = keepMostFrequent(parsed, maxWords);
  const file = encodeTable(table);

  await mkdir(path.dirname(targetFile), { recursive: true });
  const temporary = `${targetFile}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await open(temporary, 'w', 0o644);
    try {
      await handle.writeFile(file);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, targetFile);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  return {
    words: table.count,
    sourceVocabulary: parsed.sourceVocabulary,
    bytes: file.byteLength,
    ms: Math.round(performance.now() - started),
  };
}

interface ScannedWords {
  dimensions: number;
  sourceVocabulary: number;
  words: string[];
  ranks: number[];
  scales: number[];
  /** Quantised rows, `dimensions` bytes each, in scan order. */
  rows: Int8Array;
}

/**
 * Reads `{…, "size": n, "dimensions": d, "words": [...], "vectors": {"word": [d numbers, l2norm, rank], …}}`
 * chunk by chunk, quantising each kept word's vector as soon as it is read.
 */
async function scanSource(sourceFile: string, onProgress: ConversionProgress): Promise<ScannedWords> {
  const size = (await stat(sourceFile)).size || 1;
  let reported = 0;
  const stream = createReadStream(sourceFile, { encoding: 'utf8', highWaterMark: 1 << 20 });
  let preamble = '';
  let pending = '';
  let inVectors = false;
  let finished = false;
  let dimensions = 0;
  let sourceVocabulary = 0;
  const words: string[] = [];
  const ranks: number[] = [];
  const scales: number[] = [];
  let rows: Int8Array = new Int8Array(0);

  for await (const chunk of stream as AsyncIterable<string>) {
    if (finished) break;
    const read = stream.bytesRead / size;
    if (read - reported >= PROGRESS_STEP) {
      reported = Math.floor(read / PROGRESS_STEP) * PROGRESS_STEP;
      onProgress(reported);
    }
    if (!inVectors) {
      // Only the first few hundred bytes hold the sizes; the words array after them is not needed
      // (each vector carries its own rank), so it is skipped rather than kept.
      if (preamble.length < 4096) preamble += chunk.slice(0, 4096);
      pending += chunk;
      const start = pending.indexOf('"vectors":{');
      if (start < 0) {
        pending = pending.slice(-16);
        continue;
      }
      dimensions = headerNumber(preamble, 'dimensions');
      sourceVocabulary = headerNumber(preamble, 'size');
      rows = new Int8Array(Math.min(sourceVocabulary, 400_000) * dimensions);
      inVectors = true;
      pending = pending.slice(start + '"vectors":{'.length);
    } else {
      pending += chunk;
    }

    let at = 0;
    for (;;) {
      while (at < pending.length && (pending[at] === ',' || pending[at] === ' ' || pending[at] === '\n' || pending[at] === '\r')) at++;
      if (at >= pending.length) break;
      if (pending[at] === '}') {
        finished = true;
        break;
      }
      if (pending[at] !== '"') throw new Error(`Unexpected ${JSON.stringify(pending.slice(at, at + 20))} in the vectors object`);
      const keyEnd = closingQuote(pending, at + 1);
      if (keyEnd < 0) break;
      const open = keyEnd + 1;
      const close = pending.indexOf(']', open);
      if (close < 0) break;
      if (pending[open] !== ':' || pending[open + 1] !== '[')
        throw new Error(`Malformed vector entry at ${JSON.stringify(pending.slice(at, at + 40))}`);
      const rawKey = pending.slice(at + 1, keyEnd);
      const word = rawKey.includes('\\') ? (JSON.parse(`"${rawKey}"`) as string) : rawKey;
      if (KEEP.test(word)) {
        const numbers = pending.slice(open + 2, close).split(',');
        if (numbers.length !== dimensions + 2)
          throw new Error(`The vector of "${word}" has ${numbers.length - 2} dimensions, expected ${dimensions}`);
        if (words.length * dimensions >= rows.length) rows = grow(rows);
        scales.push(quantise(numbers, dimensions, rows, words.length * dimensions));
        ranks.push(Number(numbers[dimensions + 1]));
        // A copy, not a slice: V8 slices of 13+ characters keep the whole 1 MB chunk alive.
        words.push(Buffer.from(word, 'latin1').toString('latin1'));
      }
      at = close + 1;
    }
    pending = pending.slice(at);
  }
  stream.destroy();
  if (!finished) throw new Error('The word-vector source ended before its vectors object closed');
  return { dimensions, sourceVocabulary, words, ranks, scales, rows: rows.subarray(0, words.length * dimensions) };
}

/** Index of the quote closing a JSON string whose text starts at `from`, or -1 when it lies beyond the buffer. */
function closingQuote(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92 /* \ */) i++;
    else if (c === 34 /* " */) return i;
  }
  return -1;
}

function headerNumber(preamble: string, key: string): number {
  const match = new RegExp(`"${key}"\\s*:\\s*(\\d+)`).exec(preamble);
  if (!match) throw new Error(`The word-vector source has no "${key}" before its words`);
  return Number(match[1]);
}

/** Symmetric int8 per vector: the largest component maps to ±127. Returns the scale. */
function quantise(numbers: string[], dimensions: number, rows: Int8Array, offset: number): number {
  let maxAbs = 0;
  for (let d = 0; d < dimensions; d++) maxAbs = Math.max(maxAbs, Math.abs(Number(numbers[d])));
  const scale = maxAbs / 127 || 1;
  for (let d = 0; d < dimensions; d++) rows[offset + d] = Math.round(Number(numbers[d]) / scale);
  return scale;
}

function grow(rows: Int8Array): Int8Array {
  const bigger = new Int8Array(Math.max(rows.length * 2, 1 << 16));
  bigger.set(rows);
  return bigger;
}

function keepMostFrequent(scanned: ScannedWords, maxWords: number) {
  const { dimensions, words } = scanned;
  const order = words.map((_, i) => i).sort((x, y) => (scanned.ranks[x] as number) - (scanned.ranks[y] as number));
  const kept = order.slice(0, maxWords);
  const scales = new Float32Array(kept.length);
  const ranks = new Uint32Array(kept.length);
  const vectors = new Int8Array(kept.length * dimensions);
  kept.forEach((from, to) => {
    scales[to] = scanned.scales[from] as number;
    ranks[to] = scanned.ranks[from] as number;
    vectors.set(scanned.rows.subarray(from * dimensions, (from + 1) * dimensions), to * dimensions);
  });
  const text = Buffer.from(kept.map((i) => `${words[i]}\n`).join(''), 'utf8');
  return {
    dimensions,
    count: kept.length,
    sourceVocabulary: scanned.sourceVocabulary,
    scales,
    ranks,
    vectors,
    words: new Uint8Array(text.buffer, text.byteOffset, text.byteLength),
  };
}

// Run as a child process (conversion.ts): `convert.ts <source> <target> [maxWords]`. Progress and then the
// result go to stdout as JSON lines: `{"progress":0.25}` each quarter of the source, the result last.
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [source, target, maxWords] = process.argv.slice(2);
  if (!source || !target) {
    process.stderr.write('usage: convert <source.json> <target.bin> [maxWords]\n');
    process.exit(2);
  }
  const progress = (fraction: number) => process.stdout.write(`${JSON.stringify({ progress: Math.round(fraction * 100) / 100 })}\n`);
  convertWordVectors(source, target, maxWords ? Number(maxWords) : undefined, progress).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: Error) => {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 1;
    },
  );
}
