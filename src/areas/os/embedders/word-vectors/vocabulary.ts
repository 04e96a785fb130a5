// Word → row lookup over the file's word bytes, without a JS string per word.
// A Map<string, number> of 200k words costs ~15 MB of heap (a string object and a map
// entry each); this open-addressing table over the bytes already in the file costs
// 4 bytes per slot plus 4 per word (~2.4 MB at 200k words), which matters against
// the embedder's ~60 MB budget. Words are ASCII a-z (convert.ts keeps only those),
// so a JS string's char codes compare directly with the stored bytes.

const EMPTY = -1;
const NEWLINE = 10;

export class Vocabulary {
  /** Start of each word in `bytes`; offsets[i + 1] - 1 is its end (the '\n'). */
  private readonly offsets: Uint32Array;
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(
    private readonly bytes: Uint8Array,
    readonly size: number,
  ) {
    this.offsets = new Uint32Array(size + 1);
    // Load factor ≤ 0.5 keeps probe chains short.
    let capacity = 1;
    while (capacity < size * 2) capacity <<= 1;
    this.slots = new Int32Array(capacity).fill(EMPTY);
    this.mask = capacity - 1;

    let word = 0;
    let start = 0;
    let hash = FNV_OFFSET;
    for (let at = 0; at < bytes.length && word < size; at++) {
      const byte = bytes[at] as number;
      if (byte !== NEWLINE) {
        hash = Math.imul(hash ^ byte, FNV_PRIME);
        continue;
      }
      this.offsets[word] = start;
      let slot = hash & this.mask;
      while (this.slots[slot] !== EMPTY) slot = (slot + 1) & this.mask;
      this.slots[slot] = word;
      word++;
      start = at + 1;
      hash = FNV_OFFSET;
    }
    if (word !== size) throw new Error(`The vocabulary holds ${word} words, expected ${size}`);
    this.offsets[size] = start;
  }

  /** The row of `word` (lowercase a-z), or -1 when it is not kept. */
  indexOf(word: string): number {
    let hash = FNV_OFFSET;
    for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), FNV_PRIME);
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const candidate = this.slots[slot] as number;
      if (candidate === EMPTY) return -1;
      if (this.matches(candidate, word)) return candidate;
    }
  }

  private matches(index: number, word: string): boolean {
    const start = this.offsets[index] as number;
    if ((this.offsets[index + 1] as number) - 1 - start !== word.length) return false;
    for (let i = 0; i < word.length; i++) if (this.bytes[start + i] !== word.charCodeAt(i)) return false;
    return true;
  }
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;
