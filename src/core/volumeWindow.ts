/**
 * Rule 8, the rolling traded-volume window: V(R) = sum of trade sizes with time in (R - W, R].
 *
 * Refreshes happen at multiples of the cadence C (4 h) and the window W (24 h) is a multiple of
 * gcd(W, C), so per market a ring of (W + C) / g + 2 buckets of g = gcd(W, C) microseconds gives V
 * exactly at every aligned refresh: bucket i holds trades with time in (i*g, (i+1)*g], and a
 * trade exactly W before R falls in the bucket just outside the window. Memory is bounded by
 * markets x buckets, never by trades. The only unaligned refresh is the first tick T0, where
 * every trade seen so far lies within the last second, so summing the buckets that touch the
 * window is exact there too. Each bucket keeps its sum twice: as a float64 (the hot path) and
 * exactly, as an integer mantissa with a base-10 exponent, for the exact boundary decisions of
 * docs/methodology.md section 7 (0.1 + 0.2 is 0.3 there). The mantissa is a float64 holding an
 * integer while it stays a safe integer (below 2^53, exact), and a BigInt only beyond: trade
 * sizes of ordinary precision never touch BigInt arithmetic.
 *
 * @module
 */
import { ExactSums, type ScaledSum } from './decimal.js';

function gcd(a: number, b: number): number {
  while (b !== 0) {
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/** Serialisable state of a {@link VolumeWindow}. */
export interface VolumeWindowJSON {
  windowUs: number;
  refreshUs: number;
  capacity: number;
  sums: number[];
  index: number[];
  /** Exact bucket sums as `mantissa` strings with their base-10 exponents. */
  exactMant: string[];
  exactExp: number[];
}

export { decimalToScaled } from './decimal.js';

/**
 * Per-market ring of volume buckets, held in two Float64Array columns.
 *
 * @example
 * ```ts
 * const w = new VolumeWindow(86_400e6, 14_400e6);
 * w.add(0, 1_000_000, 2.5);
 * w.sum(0, 14_400e6); // 2.5
 * ```
 */
export class VolumeWindow {
  /** Bucket length g in µs. */
  readonly bucketUs: number;
  /** Buckets per market in the ring. */
  readonly ring: number;
  private capacity = 0;
  private sums = new Float64Array(0);
  /** Bucket number held by each slot; NaN when empty. */
  private index = new Float64Array(0);

  /** Newest bucket any trade went into (-Infinity before the first; recomputed by fromJSON). */
  private newestBucket = -Infinity;
  /** Exact sum of each slot: an integer mantissa and a base-10 exponent. */
  private exact = new ExactSums(0);

  constructor(
    readonly windowUs: number,
    readonly refreshUs: number,
  ) {
    this.bucketUs = gcd(windowUs, refreshUs);
    // The buckets of the last refresh's window must survive until the next refresh, when the
    // exact sums may still be read (boundary fall-back of rule 11): W + C of history, plus slack.
    this.ring = (windowUs + refreshUs) / this.bucketUs + 2;
  }

  /** Makes room for market ids < n. */
  ensure(n: number): void {
    if (n <= this.capacity) return;
    let cap = Math.max(16, this.capacity);
    while (cap < n) cap *= 2;
    const sums = new Float64Array(cap * this.ring);
    const index = new Float64Array(cap * this.ring).fill(NaN);
    sums.set(this.sums);
    index.set(this.index);
    this.exact.grow(cap * this.ring);
    this.sums = sums;
    this.index = index;
    this.capacity = cap;
  }

  /** Bucket number of a trade time: t in (i*g, (i+1)*g]. */
  bucketOf(timeUs: number): number {
    return Math.ceil(timeUs / this.bucketUs) - 1;
  }

  /**
   * Adds a trade of `size` base units at `timeUs` to market `m`. `sizeText` is the exact decimal
   * (default: the float's shortest representation); it feeds the exact sums.
   */
  add(m: number, timeUs: number, size: number, sizeText?: string): void {
    const b = this.bucketOf(timeUs);
    if (b > this.newestBucket) this.newestBucket = b;
    const slot = m * this.ring + (((b % this.ring) + this.ring) % this.ring);
    if (this.index[slot] !== b) {
      this.index[slot] = b;
      this.sums[slot] = 0;
      this.exact.clear(slot);
    }
    this.sums[slot] += size;
    if (sizeText === undefined) this.exact.addFloat(slot, size);
    else this.exact.add(slot, sizeText);
  }

  /**
   * V of market `m` at refresh time `refreshUs`, exactly, as a decimal text (`"3e-1"`). Valid
   * for the latest refresh until the next one (the ring keeps those buckets).
   */
  exactSum(m: number, refreshUs: number): string {
    if (m >= this.capacity) return '0';
    const first = Math.floor((refreshUs - this.windowUs) / this.bucketUs);
    const last = this.bucketOf(refreshUs);
    const total: ScaledSum = { mant: 0n, exp: 0 };
    const base = m * this.ring;
    for (let b = first; b <= last; b++) {
      const slot = base + (((b % this.ring) + this.ring) % this.ring);
      if (this.index[slot] === b) this.exact.addTo(total, slot);
    }
    return `${total.mant}e${total.exp}`;
  }

  /**
   * Whether every market's V is 0 at refresh time `refreshUs` and at every later one: no trade
   * is newer than the window of `refreshUs` (trades added later are not foreseen).
   */
  emptyFrom(refreshUs: number): boolean {
    return this.newestBucket < Math.floor((refreshUs - this.windowUs) / this.bucketUs);
  }

  /** V of market `m` at refresh time `refreshUs`: trades with time in (R - W, R]. */
  sum(m: number, refreshUs: number): number {
    if (m >= this.capacity) return 0;
    const first = Math.floor((refreshUs - this.windowUs) / this.bucketUs);
    const last = this.bucketOf(refreshUs);
    let total = 0;
    const base = m * this.ring;
    for (let b = first; b <= last; b++) {
      const slot = base + (((b % this.ring) + this.ring) % this.ring);
      if (this.index[slot] === b) total += this.sums[slot];
    }
    return total;
  }

  /** Plain-JSON snapshot (NaN encoded as null by JSON, restored by {@link fromJSON}). */
  toJSON(): VolumeWindowJSON {
    return {
      windowUs: this.windowUs,
      refreshUs: this.refreshUs,
      capacity: this.capacity,
      sums: Array.from(this.sums),
      index: Array.from(this.index),
      ...exactColumns(this.exact),
    };
  }

  /** Restores a snapshot written by {@link toJSON}. */
  static fromJSON(j: VolumeWindowJSON): VolumeWindow {
    const w = new VolumeWindow(j.windowUs, j.refreshUs);
    w.capacity = j.capacity;
    w.sums = Float64Array.from(j.sums);
    w.index = Float64Array.from(j.index, (v) => (v === null ? NaN : v));
    w.exact = ExactSums.fromJSON({ mant: j.exactMant, exp: j.exactExp });
    for (const b of w.index) if (b > w.newestBucket) w.newestBucket = b;
    return w;
  }
}

/** The `exactMant` and `exactExp` columns of a {@link VolumeWindowJSON}. */
function exactColumns(exact: ExactSums): { exactMant: string[]; exactExp: number[] } {
  const j = exact.toJSON();
  return { exactMant: j.mant, exactExp: j.exp };
}
