// The converted word-vector file: what convert.ts writes once into the data dir and
// the embedder's worker reads on every start. One flat little-endian layout, so the
// worker reads it with one readFile and views it as typed arrays without parsing:
//
//   header (32 bytes)   magic "GWWORDV\0", version, dimensions, word count,
//                       source vocabulary size, words-blob bytes, CRC-32 of the body
//   scales              float32 × count      a word's vector ≈ scale × its int8 row
//   ranks               uint32 × count       0-based frequency rank in the source (SIF weights)
//   vectors             int8 × count × dimensions
//   words               UTF-8, '\n' after each word, in the same order as the rows
//
// The CRC and the exact length catch a truncated or corrupt file; the version changes
// whenever the layout or what conversion keeps changes, so an old file is rebuilt.
import { crc32 } from 'node:zlib';

export const FORMAT_MAGIC = 'GWWORDV\0';
export const FORMAT_VERSION = 1;
export const HEADER_BYTES = 32;

export interface WordVectorTable {
  dimensions: number;
  count: number;
  /** Words in the source vocabulary, kept or not: the V of the Zipf estimate. */
  sourceVocabulary: number;
  scales: Float32Array;
  ranks: Uint32Array;
  vectors: Int8Array;
  /** The words, each followed by '\n'. */
  words: Uint8Array;
}

export class WordVectorFormatError extends Error {}

export function encodeTable(table: WordVectorTable): Buffer {
  const count = table.scales.length;
  const dims = table.dimensions;
  if (table.ranks.length !== count || table.vectors.length !== count * dims) {
    throw new Error('Word-vector table arrays do not agree in length');
  }
  const body = Buffer.concat([bytesOf(table.scales), bytesOf(table.ranks), bytesOf(table.vectors), table.words]);
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(FORMAT_MAGIC, 0, 'latin1');
  header.writeUInt32LE(FORMAT_VERSION, 8);
  header.writeUInt32LE(dims, 12);
  header.writeUInt32LE(count, 16);
  header.writeUInt32LE(table.sourceVocabulary, 20);
  header.writeUInt32LE(table.words.byteLength, 24);
  header.writeUInt32LE(crc32(body), 28);
  return Buffer.concat([header, body]);
}

/** Views a file's bytes as a table; throws WordVectorFormatError when it is not a whole, current one. */
export function decodeTable(file: Buffer): WordVectorTable {
  if (file.byteLength < HEADER_BYTES || file.toString('latin1', 0, 8) !== FORMAT_MAGIC) {
    throw new WordVectorFormatError('not a word-vector file');
  }
  const version = file.readUInt32LE(8);
  if (version !== FORMAT_VERSION) throw new WordVectorFormatError(`format version ${version}, expected ${FORMAT_VERSION}`);
  const dims = file.readUInt32LE(12);
  const count = file.readUInt32LE(16);
  const sourceVocabulary = file.readUInt32LE(20);
  const wordBytes = file.readUInt32LE(24);
  const expected = HEADER_BYTES + count * 8 + count * dims + wordBytes;
  if (dims === 0 || file.byteLength !== expected) {
    throw new WordVectorFormatError(`length ${file.byteLength}, expected ${expected} (truncated?)`);
  }
  if (crc32(file.subarray(HEADER_BYTES)) !== file.readUInt32LE(28)) throw new WordVectorFormatError('checksum mismatch');

  // Typed-array views need aligned offsets; a file read whole starts at offset 0 of its own buffer.
  const bytes = file.byteOffset % 4 === 0 ? file : Buffer.from(file);
  let at = bytes.byteOffset + HEADER_BYTES;
  const take = <T>(make: (buffer: ArrayBuffer, offset: number, length: number) => T, length: number, width: number): T => {
    const view = make(bytes.buffer as ArrayBuffer, at, length);
    at += length * width;
    return view;
  };
  return {
    dimensions: dims,
    count,
    sourceVocabulary,
    scales: take((b, o, n) => new Float32Array(b, o, n), count, 4),
    ranks: take((b, o, n) => new Uint32Array(b, o, n), count, 4),
    vectors: take((b, o, n) => new Int8Array(b, o, n), count * dims, 1),
    words: take((b, o, n) => new Uint8Array(b, o, n), wordBytes, 1),
  };
}

function bytesOf(array: Float32Array | Uint32Array | Int8Array | Uint8Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}
