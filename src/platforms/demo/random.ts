/** Seeded, deterministic pseudo-random numbers for the demo platform: the same seed always yields byte-identical data. */

/** Mixes any number of integers or strings into one 32-bit seed (FNV-1a over the parts, then a murmur finaliser). */
export function mixSeed(...parts: Array<number | string>): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    const text = typeof part === 'number' ? `n${part}` : `s${part}`;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    // A separator so ('ab','c') and ('a','bc') differ.
    h ^= 0xff;
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export type RandomState = [number, number, number, number];

/** A small PRNG (sfc32: fast, 128-bit state, good statistical quality) with the helpers the generator needs. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    // Spread one 32-bit seed over the four state words, then warm up so nearby seeds diverge.
    this.a = mixSeed(seed, 'a');
    this.b = mixSeed(seed, 'b');
    this.c = mixSeed(seed, 'c');
    this.d = 1;
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** The generator's internal state, so a stream can be resumed later exactly where it stood (demo platform snapshots). */
  getState(): RandomState {
    return [this.a, this.b, this.c, this.d];
  }

  /** A generator continuing from a state taken with `getState`. */
  static fromState(state: RandomState): Random {
    const r = new Random(0);
    [r.a, r.b, r.c, r.d] = state;
    return r;
  }

  /** The next unsigned 32-bit integer. */
  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A float in [min, max). */
  float(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** True with the given probability. */
  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** One element of a non-empty array, uniformly. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** One element chosen by weight (weights need not sum to 1). */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.next() * total;
    for (let i = 0; i < items.length; i++) {
      r -= weights[i];
      if (r < 0) return items[i];
    }
    return items[items.length - 1];
  }

  /** A standard normal variate (Box-Muller; one of the pair is discarded to keep the stream simple). */
  normal(mean = 0, stdDev = 1): number {
    let u = 0;
    while (u === 0) u = this.next();
    const v = this.next();
    return mean + stdDev * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** A log-normal variate with the given median; sigma controls the spread (long right tail, like delivery times). */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(this.normal(0, sigma));
  }

  /** Lower-case hex of the given number of random bytes. */
  hex(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i++) out += (this.nextUint32() & 0xff).toString(16).padStart(2, '0');
    return out;
  }

  /** Random bytes (deterministic, so "secret" test fixtures are reproducible too). */
  bytes(length: number): Buffer {
    const buf = Buffer.alloc(length);
    for (let i = 0; i < length; i++) buf[i] = this.nextUint32() & 0xff;
    return buf;
  }

  /** A UUID-shaped (version 4 layout) identifier drawn from this stream. */
  uuid(): string {
    const h = this.hex(16).split('');
    h[12] = '4';
    h[16] = '89ab'[parseInt(h[16], 16) & 3];
    const s = h.join('');
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }

  /** A digit string of the given length (may start with 0). */
  digits(length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += String(this.nextUint32() % 10);
    return out;
  }
}

/** Creates a PRNG from a seed and optional labels, so independent parts of the data get independent streams. */
export function createRandom(seed: number, ...labels: Array<number | string>): Random {
  return new Random(labels.length ? mixSeed(seed, ...labels) : seed);
}
