// Reads and checks a GGUF file's header in-process, before llama.cpp ever sees the
// file: magic, version, well-formed metadata, and the keys llama.cpp needs (some
// of which, when missing, make it abort the whole process). Reads are bounded
// and every length is checked against what is left of the file and a cap, so a
// hostile file costs at most MAX_HEADER_BYTES of reading.
import { open, type FileHandle } from 'node:fs/promises';

export interface GgufSummary {
  version: number;
  architecture: string;
  contextLength: number;
  embeddingLength: number;
  blockCount: number;
  tensorCount: number;
  /** llama.cpp's pooling type `rank` (4): the file is a reranker (a cross-encoder's classification head). */
  ranks: boolean;
}

export type GgufCheck = { ok: true; summary: GgufSummary } | { ok: false; reason: string };

/** Vocabularies and merges of real models take a few MB; nothing legitimate comes near this. */
const MAX_HEADER_BYTES = 256 * 1024 * 1024;
const MAX_KEY_BYTES = 64 * 1024;
/** Strings kept in memory; longer ones (chat templates) are skipped over. */
const MAX_KEPT_STRING = 256;
const MAX_KEPT_ARRAY = 4096;
const MAX_DEPTH = 3;
const CHUNK = 1024 * 1024;

// Architectures without attention or feed-forward hyperparameters (recurrent models).
/** llama.cpp's enum llama_pooling_type: NONE 0, MEAN 1, CLS 2, LAST 3, RANK 4. */
const LLAMA_POOLING_TYPE_RANK = 4;

const RECURRENT = new Set(['mamba', 'mamba2', 'rwkv6', 'rwkv6qwen2', 'rwkv7', 'arwkv7']);

enum T {
  UINT8 = 0,
  INT8,
  UINT16,
  INT16,
  UINT32,
  INT32,
  FLOAT32,
  BOOL,
  STRING,
  ARRAY,
  UINT64,
  INT64,
  FLOAT64,
}
const SCALAR_SIZE: Partial<Record<T, number>> = {
  [T.UINT8]: 1,
  [T.INT8]: 1,
  [T.BOOL]: 1,
  [T.UINT16]: 2,
  [T.INT16]: 2,
  [T.UINT32]: 4,
  [T.INT32]: 4,
  [T.FLOAT32]: 4,
  [T.UINT64]: 8,
  [T.INT64]: 8,
  [T.FLOAT64]: 8,
};

type Value = number | string | boolean | { skipped: 'string'; length: number } | { array: T; length: number; values?: Value[] };

class Invalid extends Error {}

/** Sequential reader over a file handle: reads in chunks, never past the file or the cap. */
class Reader {
  private buffer = Buffer.alloc(0);
  private bufferStart = 0;
  position = 0;

  constructor(
    private readonly file: FileHandle,
    private readonly size: number,
  ) {}

  private async ensure(length: number): Promise<Buffer> {
    const end = this.position + length;
    if (end > this.size) throw new Invalid('the file ends inside its header (truncated?)');
    if (end > MAX_HEADER_BYTES) throw new Invalid(`the header is larger than ${MAX_HEADER_BYTES} bytes`);
    if (end > this.bufferStart + this.buffer.length) {
      const keep = this.buffer.subarray(this.position - this.bufferStart);
      const want = Math.min(Math.max(length - keep.length, CHUNK), this.size - this.position - keep.length);
      const fresh = Buffer.alloc(want);
      const { bytesRead } = await this.file.read(fresh, 0, want, this.position + keep.length);
      if (bytesRead < want) throw new Invalid('the file changed while it was being read');
      this.buffer = Buffer.concat([keep, fresh]);
      this.bufferStart = this.position;
    }
    const offset = this.position - this.bufferStart;
    this.position = end;
    return this.buffer.subarray(offset, offset + length);
  }

  async skip(length: number): Promise<void> {
    if (this.position + length > this.size) throw new Invalid('the file ends inside its header (truncated?)');
    if (this.position + length > MAX_HEADER_BYTES) throw new Invalid(`the header is larger than ${MAX_HEADER_BYTES} bytes`);
    this.position += length;
  }

  async u32(): Promise<number> {
    return (await this.ensure(4)).readUInt32LE(0);
  }

  /** A u64 count or length; anything beyond what a file of this size could hold is refused. */
  async count(what: string): Promise<number> {
    const value = (await this.ensure(8)).readBigUInt64LE(0);
    if (value > BigInt(this.size)) throw new Invalid(`${what} (${value}) is larger than the file`);
    return Number(value);
  }

  async string(maxKept: number): Promise<string | { skipped: 'string'; length: number }> {
    const length = await this.count('a string length');
    if (length > maxKept) {
      await this.skip(length);
      return { skipped: 'string', length };
    }
    return (await this.ensure(length)).toString('utf8');
  }

  async scalar(type: T): Promise<number | boolean> {
    const size = SCALAR_SIZE[type];
    if (size === undefined) throw new Invalid(`unknown metadata value type ${type}`);
    const b = await this.ensure(size);
    switch (type) {
      case T.UINT8:
        return b.readUInt8(0);
      case T.INT8:
        return b.readInt8(0);
      case T.BOOL:
        return b.readUInt8(0) !== 0;
      case T.UINT16:
        return b.readUInt16LE(0);
      case T.INT16:
        return b.readInt16LE(0);
      case T.UINT32:
        return b.readUInt32LE(0);
      case T.INT32:
        return b.readInt32LE(0);
      case T.FLOAT32:
        return b.readFloatLE(0);
      case T.UINT64:
        return Number(b.readBigUInt64LE(0));
      case T.INT64:
        return Number(b.readBigInt64LE(0));
      default:
        return b.readDoubleLE(0);
    }
  }

  async value(type: T, depth: number): Promise<Value> {
    if (type === T.STRING) return this.string(MAX_KEPT_STRING);
    if (type !== T.ARRAY) return this.scalar(type);
    if (depth >= MAX_DEPTH) throw new Invalid('metadata arrays are nested too deeply');
    const elementType = (await this.u32()) as T;
    const length = await this.count('an array length');
    const size = SCALAR_SIZE[elementType];
    if (size !== undefined && length > MAX_KEPT_ARRAY) {
      await this.skip(length * size);
      return { array: elementType, length };
    }
    const keep = length <= MAX_KEPT_ARRAY;
    const values: Value[] = [];
    for (let i = 0; i < length; i++) {
      const element = elementType === T.STRING ? await this.string(keep ? MAX_KEPT_STRING : 0) : await this.value(elementType, depth + 1);
      if (keep) values.push(element);
    }
    return keep ? { array: elementType, length, values } : { array: elementType, length };
  }
}

export async function checkGgufHeader(path: string): Promise<GgufCheck> {
  let file: FileHandle | undefined;
  try {
    file = await open(path, 'r');
    const { size } = await file.stat();
    return { ok: true, summary: await readSummary(new Reader(file, size), size) };
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, reason: error.message };
    return { ok: false, reason: `the file could not be read: ${(error as Error).message}` };
  } finally {
    await file?.close();
  }
}

async function readSummary(reader: Reader, size: number): Promise<GgufSummary> {
  if (size < 24) throw new Invalid('the file is too small to be a GGUF model');
  const magic = await reader.u32();
  if (magic !== 0x46554747) throw new Invalid('not a GGUF file (bad magic)');
  const version = await reader.u32();
  if (version !== 2 && version !== 3) throw new Invalid(`GGUF version ${version} is not supported (2 or 3)`);
  const tensorCount = await reader.count('the tensor count');
  const kvCount = await reader.count('the metadata count');
  if (tensorCount === 0) throw new Invalid('the file holds no tensors');

  const meta = new Map<string, Value>();
  for (let i = 0; i < kvCount; i++) {
    const key = await reader.string(MAX_KEY_BYTES);
    if (typeof key !== 'string') throw new Invalid('a metadata key is too long');
    const type = (await reader.u32()) as T;
    meta.set(key, await reader.value(type, 0));
  }

  const architecture = meta.get('general.architecture');
  if (typeof architecture !== 'string' || architecture === '') throw new Invalid('general.architecture is missing');
  const positive = (key: string, required = true): number => {
    const value = meta.get(key);
    // Some architectures give per-layer values (an array); each must be positive.
    const values = typeof value === 'object' && 'array' in value ? (value.values ?? []) : [value];
    if (value === undefined) {
      if (required) throw new Invalid(`${key} is missing`);
      return 0;
    }
    if (values.length === 0 || !values.every((v) => typeof v === 'number' && Number.isInteger(v) && v > 0)) {
      throw new Invalid(`${key} must be a positive integer`);
    }
    return values[0] as number;
  };
  const summary: GgufSummary = {
    version,
    architecture,
    contextLength: positive(`${architecture}.context_length`),
    embeddingLength: positive(`${architecture}.embedding_length`),
    blockCount: positive(`${architecture}.block_count`),
    tensorCount,
    ranks: meta.get(`${architecture}.pooling_type`) === LLAMA_POOLING_TYPE_RANK,
  };
  if (!RECURRENT.has(architecture)) {
    // llama.cpp asserts (abort) on these rather than failing the load.
    positive(`${architecture}.feed_forward_length`);
    positive(`${architecture}.attention.head_count`);
    positive(`${architecture}.attention.head_count_kv`, false);
  }
  if (typeof meta.get('tokenizer.ggml.model') !== 'string') throw new Invalid('tokenizer.ggml.model is missing');
  const tokens = meta.get('tokenizer.ggml.tokens');
  if (typeof tokens !== 'object' || !('array' in tokens) || tokens.array !== T.STRING || tokens.length === 0) {
    throw new Invalid('tokenizer.ggml.tokens is missing');
  }
  return summary;
}
