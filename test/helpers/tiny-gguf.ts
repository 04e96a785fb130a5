// A tiny llama-architecture GGUF model (GGUF v3, F32 weights from a seeded RNG),
// written without dependencies, so the `local` engine is tested on real loading
// and real inference without downloading anything. The output is gibberish, but
// deterministic for a seed (at temperature 0).
import { writeFileSync } from 'node:fs';
import { seededRandom } from './seeded-random.js';

export interface TinyGgufOptions {
  /** Seeds the weights: same seed, same model, same greedy output. */
  seed?: number;
  /** Metadata keys to leave out, e.g. 'llama.feed_forward_length' (llama.cpp then aborts the process). */
  omit?: string[];
  /** Metadata values to replace (or add), by key. Numbers are written as UINT32. */
  override?: Record<string, number | string>;
  /** `llama.context_length`, the model's trained context (default 256). */
  contextLength?: number;
  /**
   * Never generate the end-of-sequence token, so generation always runs to maxTokens
   * (or the context). Random weights otherwise end at a seed-dependent point.
   */
  endless?: boolean;
}

const N_EMBD = 64;
const N_LAYER = 2;
const N_HEAD = 4;
const N_FF = 128;
const ALIGNMENT = 32;

// GGUF value types.
const UINT32 = 4;
const INT32 = 5;
const FLOAT32 = 6;
const STRING = 8;
const ARRAY = 9;

/** SentencePiece-style vocabulary: <unk>, <s>, </s>, 256 byte tokens, then a few word pieces. */
function vocabulary(): { tokens: string[]; scores: number[]; types: number[] } {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3];
  for (let byte = 0; byte < 256; byte++) {
    tokens.push(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6);
  }
  for (const piece of ['▁', '▁the', '▁a', '▁is', '▁hello', '▁world', 'e', 't', 'a', 'o', 'n', 's', '▁I', '▁you']) {
    tokens.push(piece);
    types.push(1);
  }
  return { tokens, scores: tokens.map((_, i) => -i), types };
}

class Writer {
  private chunks: Buffer[] = [];
  length = 0;
  push(buffer: Buffer): void {
    this.chunks.push(buffer);
    this.length += buffer.length;
  }
  u32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(value);
    this.push(b);
  }
  i32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(value);
    this.push(b);
  }
  u64(value: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(value));
    this.push(b);
  }
  f32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(value);
    this.push(b);
  }
  string(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  pad(): void {
    const rest = this.length % ALIGNMENT;
    if (rest !== 0) this.push(Buffer.alloc(ALIGNMENT - rest));
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

type MetaValue =
  | { type: 'u32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'str'; value: string }
  | { type: 'arr'; of: 'str' | 'f32' | 'i32'; values: (string | number)[] };

function writeMeta(w: Writer, key: string, meta: MetaValue): void {
  w.string(key);
  if (meta.type === 'u32') {
    w.u32(UINT32);
    w.u32(meta.value);
  } else if (meta.type === 'f32') {
    w.u32(FLOAT32);
    w.f32(meta.value);
  } else if (meta.type === 'str') {
    w.u32(STRING);
    w.string(meta.value);
  } else {
    w.u32(ARRAY);
    w.u32(meta.of === 'str' ? STRING : meta.of === 'f32' ? FLOAT32 : INT32);
    w.u64(meta.values.length);
    for (const v of meta.values) {
      if (meta.of === 'str') w.string(v as string);
      else if (meta.of === 'f32') w.f32(v as number);
      else w.i32(v as number);
    }
  }
}

/** The bytes of a tiny GGUF model (~0.5 MB). */
export function tinyGgufBytes(options: TinyGgufOptions = {}): Buffer {
  const { tokens, scores, types } = vocabulary();
  const nVocab = tokens.length;
  const meta: [string, MetaValue][] = [
    ['general.architecture', { type: 'str', value: 'llama' }],
    ['general.name', { type: 'str', value: 'tiny-test' }],
    ['general.alignment', { type: 'u32', value: ALIGNMENT }],
    ['llama.context_length', { type: 'u32', value: options.contextLength ?? 256 }],
    ['llama.embedding_length', { type: 'u32', value: N_EMBD }],
    ['llama.block_count', { type: 'u32', value: N_LAYER }],
    ['llama.feed_forward_length', { type: 'u32', value: N_FF }],
    ['llama.attention.head_count', { type: 'u32', value: N_HEAD }],
    ['llama.attention.head_count_kv', { type: 'u32', value: N_HEAD }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
    ['llama.rope.dimension_count', { type: 'u32', value: N_EMBD / N_HEAD }],
    ['tokenizer.ggml.model', { type: 'str', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'arr', of: 'str', values: tokens }],
    ['tokenizer.ggml.scores', { type: 'arr', of: 'f32', values: scores }],
    ['tokenizer.ggml.token_type', { type: 'arr', of: 'i32', values: types }],
    ['tokenizer.ggml.unknown_token_id', { type: 'u32', value: 0 }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: 2 }],
  ];
  for (const [key, value] of Object.entries(options.override ?? {})) {
    const entry: MetaValue = typeof value === 'string' ? { type: 'str', value } : { type: 'u32', value };
    const at = meta.findIndex(([k]) => k === key);
    if (at >= 0) meta[at] = [key, entry];
    else meta.push([key, entry]);
  }
  const kept = meta.filter(([key]) => !(options.omit ?? []).includes(key));

  const headDim = N_EMBD / N_HEAD;
  const tensors: [string, number[]][] = [['token_embd.weight', [N_EMBD, nVocab]]];
  for (let i = 0; i < N_LAYER; i++) {
    tensors.push(
      [`blk.${i}.attn_norm.weight`, [N_EMBD]],
      [`blk.${i}.attn_q.weight`, [N_EMBD, N_EMBD]],
      [`blk.${i}.attn_k.weight`, [N_EMBD, headDim * N_HEAD]],
      [`blk.${i}.attn_v.weight`, [N_EMBD, headDim * N_HEAD]],
      [`blk.${i}.attn_output.weight`, [N_EMBD, N_EMBD]],
      [`blk.${i}.ffn_norm.weight`, [N_EMBD]],
      [`blk.${i}.ffn_gate.weight`, [N_EMBD, N_FF]],
      [`blk.${i}.ffn_up.weight`, [N_EMBD, N_FF]],
      [`blk.${i}.ffn_down.weight`, [N_FF, N_EMBD]],
    );
  }
  tensors.push(['output_norm.weight', [N_EMBD]], ['output.weight', [N_EMBD, nVocab]]);

  const w = new Writer();
  w.push(Buffer.from('GGUF', 'latin1'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(kept.length);
  for (const [key, value] of kept) writeMeta(w, key, value);

  let offset = 0;
  const sizes: number[] = [];
  for (const [name, dims] of tensors) {
    w.string(name);
    w.u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(0); // F32
    w.u64(offset);
    const size = dims.reduce((a, b) => a * b, 1) * 4;
    sizes.push(size);
    offset += Math.ceil(size / ALIGNMENT) * ALIGNMENT;
  }
  w.pad();

  const random = seededRandom(options.seed ?? 1);
  tensors.forEach(([name], i) => {
    const count = sizes[i]! / 4;
    const data = new Float32Array(count);
    // Norm weights are 1 (identity scale); the rest small random values around 0.
    if (name.endsWith('norm.weight')) data.fill(1);
    else for (let j = 0; j < count; j++) data[j] = (random() * 2 - 1) * 0.5;
    if (options.endless) endless(name, data, nVocab);
    w.push(Buffer.from(data.buffer));
    w.pad();
  });
  return w.bytes();
}

/**
 * Residual dimension 0 holds a constant: every token embeds a large positive value
 * there and no block writes to it. The output row of `</s>` (id 2) reads it with
 * a large negative weight, so its logit stays far below every other token's.
 */
function endless(name: string, data: Float32Array, nVocab: number): void {
  if (name === 'token_embd.weight') for (let v = 0; v < nVocab; v++) data[v * N_EMBD] = 4;
  else if (/attn_output|ffn_down/.test(name))
    data.fill(0, 0, data.length / N_EMBD); // the weights producing dimension 0
  else if (name === 'output.weight') for (let v = 0; v < nVocab; v++) data[v * N_EMBD] = v === 2 ? -10 : 0;
}

export function writeTinyGguf(file: string, options?: TinyGgufOptions): void {
  writeFileSync(file, tinyGgufBytes(options));
}
