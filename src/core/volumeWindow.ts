/**
 * Rule 8, the rolling traded-volume window: V(R) = sum of trade sizes with time in (R - W, R].
 *
 * Refreshes happen at multiples of the cadence C (4 h) and the window W (24 h) is a multiple of
 * gcd(W, C), so per market a ring of W / g + 2 buckets of g = gcd(W, C) microseconds gives V
 * exactly at every aligned refresh: bucket i holds trades with time in (i*g, (i+1)*g], and a
 * trade exactly W before R falls in the bucket just outside the window. Memory is bounded by
 * markets x buckets, never by trades. The only unaligned refresh is the first tick T0, where
 * every trade seen so far lies within the last second, so summing the buckets that touch the
 * window is exact there too.
 *
 * @module
 */

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
}

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

  constructor(readonly windowUs: number, readonly refreshUs: number) {
    this.bucketUs = gcd(windowUs, refreshUs);
    this.ring = windowUs / this.bucketUs + 2;
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
    this.sums = sums;
    this.index = index;
    this.capacity = cap;
  }

  /** Bucket number of a trade time: t in (i*g, (i+1)*g]. */
  bucketOf(timeUs: number): number {
    return Math.ceil(timeUs / this.bucketUs) - 1;
  }

  /** Adds a trade of `size` base units at `timeUs` to market `m`. */
  add(m: number, timeUs: number, size: number): void {
    const b = this.bucketOf(timeUs);
    const slot = m * this.ring + (((b % this.ring) + this.ring) % this.ring);
    if (this.index[slot] !== b) {
      this.index[slot] = b;
      this.sums[slot] = 0;
    }
    this.sums[slot] += size;
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
    };
  }

  /** Restores a snapshot written by {@link toJSON}. */
  static fromJSON(j: VolumeWindowJSON): VolumeWindow {
    const w = new VolumeWindow(j.windowUs, j.refreshUs);
    w.capacity = j.capacity;
    w.sums = Float64Array.from(j.sums);
    w.index = Float64Array.from(j.index, (v) => (v === null ? NaN : v));
    return w;
  }
}
