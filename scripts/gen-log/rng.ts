/**
 * The generator's deterministic PRNG (see scripts/gen-log.ts).
 *
 * @module
 */

// ---------------------------------------------------------------------------------------------
// PRNG: xoshiro128** seeded through splitmix32.

/**
 * A small deterministic PRNG (xoshiro128**, seeded with splitmix32).
 *
 * @example
 * ```ts
 * const r = new Rng(1);
 * r.uniform(); // in [0, 1)
 * ```
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spare: number | undefined;

  constructor(seed: number) {
    let s = seed >>> 0 || 0x9e3779b9;
    const sm = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    // Mix in the high bits of seeds beyond 32 bits.
    s = (s ^ Math.floor(seed / 4294967296)) >>> 0;
    this.a = sm();
    this.b = sm();
    this.c = sm();
    this.d = sm();
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  /** Next uint32. */
  next(): number {
    const r = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return r;
  }

  /** Uniform in [0, 1). */
  uniform(): number {
    return this.next() / 4294967296;
  }

  /** Uniform in [lo, hi). */
  between(lo: number, hi: number): number {
    return lo + (hi - lo) * this.uniform();
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.uniform() * n);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.uniform() < p;
  }

  /** Standard normal (Box-Muller). */
  normal(): number {
    if (this.spare !== undefined) {
      const v = this.spare;
      this.spare = undefined;
      return v;
    }
    let u = this.uniform();
    while (u === 0) u = this.uniform();
    const v = this.uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Exponential with mean 1. */
  exp(): number {
    let u = this.uniform();
    while (u === 0) u = this.uniform();
    return -Math.log(u);
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
