// A seeded pseudo-random source, so that a failing fuzz run is replayed exactly by
// its seed. mulberry32: a few lines, fast, and good enough to pick test inputs.

export class Rng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Letters and digits, for names that must be unique and pattern-safe. */
  word(length: number): string {
    const alphabet = 'abcdefghijkmnopqrstuvwxyz0123456789';
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(this.next() * alphabet.length)];
    return out;
  }
}

/** FUZZ_SEED replays a run; otherwise a fixed default, so the suite is deterministic. */
export function seedFromEnv(fallback = 20240514): number {
  const raw = process.env.FUZZ_SEED;
  if (raw === undefined || raw === '') return fallback;
  const seed = Number(raw);
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`FUZZ_SEED must be a non-negative integer, got ${raw}`);
  return seed;
}
