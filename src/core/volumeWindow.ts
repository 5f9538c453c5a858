/**
 * Rule 8, the rolling traded-volume window: V(R) = sum of trade sizes with time in (R - W, R].
 *
 * Refreshes happen at multiples of the cadence C (4 h) and the window W (24 h) is a multiple of
 * gcd(W, C), so per market a ring of (W + C) / g + 2 buckets of g = gcd(W, C) microseconds gives V
 * exactly at every aligned refresh: bucket i holds trades with time in (i*g, (i+1)*g], and a
 * trade exactly W before R falls in the bucket just outside the window. Memory is bounded by
 * markets x buckets, never by trades. The only unaligned refresh is the first tick T0, where
 * every trade seen so far lies within the last second, so summing the buckets that touch the
 * window is exact there too. When the ring would be long (a cadence that does not divide the window:
 * 13 s against 24 h makes g = 1 s and 86,415 buckets per market, gigabytes for a few thousand
 * markets), each market keeps instead only the buckets its trades went into, in order
 * ({@link SparseBuckets}): memory then follows the trades of the last W + C, never W / g.
 * Each bucket keeps its sum twice: as a float64 (the hot path) and
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

/**
 * Serialisable state of a {@link VolumeWindow}. A ring (`markets` absent) is written whole:
 * `capacity` markets of `ring` slots, `index` the bucket number of each slot (null when empty).
 * A sparse window (`markets` present) lists only the buckets that hold trades: entry i is bucket
 * `index[i]` of market `markets[i]`, in market then bucket order, and `capacity` is 0.
 */
export interface VolumeWindowJSON {
  windowUs: number;
  refreshUs: number;
  capacity: number;
  sums: number[];
  index: number[];
  /** Exact bucket sums as `mantissa` strings with their base-10 exponents. */
  exactMant: string[];
  exactExp: number[];
  /** The market of each entry, in a sparse window only. */
  markets?: number[];
}

/**
 * Longest ring (buckets per market) kept as one: 9 for the methodology's 24 h window and 4 h
 * cadence, 27 for an hourly cadence. Longer rings are kept sparse.
 */
export const DENSE_RING_MAX = 64;

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
  /** The buckets of each market when the ring is longer than {@link DENSE_RING_MAX}; else undefined. */
  private readonly sparse: SparseBuckets | undefined;

  constructor(
    readonly windowUs: number,
    readonly refreshUs: number,
  ) {
    this.bucketUs = gcd(windowUs, refreshUs);
    // The buckets of the last refresh's window must survive until the next refresh, when the
    // exact sums may still be read (boundary fall-back of rule 11): W + C of history, plus slack.
    this.ring = (windowUs + refreshUs) / this.bucketUs + 2;
    this.sparse = this.ring > DENSE_RING_MAX ? new SparseBuckets(this.ring) : undefined;
  }

  /** Whether each market keeps only the buckets its trades went into (a ring longer than {@link DENSE_RING_MAX}). */
  get isSparse(): boolean {
    return this.sparse !== undefined;
  }

  /** Makes room for market ids < n. */
  ensure(n: number): void {
    if (n <= this.capacity || this.sparse !== undefined) return;
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

  /** The ring slot of bucket `b` of market `m`. */
  private slotOf(m: number, b: number): number {
    return m * this.ring + (((b % this.ring) + this.ring) % this.ring);
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
    if (this.sparse !== undefined) {
      this.sparse.add(m, b, size, sizeText);
      return;
    }
    const slot = this.slotOf(m, b);
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
    const first = Math.floor((refreshUs - this.windowUs) / this.bucketUs);
    const last = this.bucketOf(refreshUs);
    const total: ScaledSum = { mant: 0n, exp: 0 };
    if (this.sparse !== undefined) {
      this.sparse.exactSum(m, first, last, total);
      return `${total.mant}e${total.exp}`;
    }
    if (m >= this.capacity) return '0';
    for (let b = first; b <= last; b++) {
      const slot = this.slotOf(m, b);
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
    const first = Math.floor((refreshUs - this.windowUs) / this.bucketUs);
    const last = this.bucketOf(refreshUs);
    if (this.sparse !== undefined) return this.sparse.sum(m, first, last);
    if (m >= this.capacity) return 0;
    let total = 0;
    for (let b = first; b <= last; b++) {
      const slot = this.slotOf(m, b);
      if (this.index[slot] === b) total += this.sums[slot];
    }
    return total;
  }

  /** Plain-JSON snapshot (NaN encoded as null by JSON, restored by {@link fromJSON}). */
  toJSON(): VolumeWindowJSON {
    if (this.sparse !== undefined) return { windowUs: this.windowUs, refreshUs: this.refreshUs, capacity: 0, ...this.sparse.toJSON() };
    return {
      windowUs: this.windowUs,
      refreshUs: this.refreshUs,
      capacity: this.capacity,
      sums: Array.from(this.sums),
      index: Array.from(this.index),
      ...exactColumns(this.exact),
    };
  }

  /**
   * Restores a snapshot written by {@link toJSON}, either form into the form this window's ring
   * calls for (a ring snapshot of a long ring, written by an earlier version, loads sparse).
   */
  static fromJSON(j: VolumeWindowJSON): VolumeWindow {
    const w = new VolumeWindow(j.windowUs, j.refreshUs);
    if (w.sparse === undefined && j.markets === undefined) {
      w.capacity = j.capacity;
      w.sums = Float64Array.from(j.sums);
      w.index = Float64Array.from(j.index, (v) => (v === null ? NaN : v));
      w.exact = ExactSums.fromJSON({ mant: j.exactMant, exp: j.exactExp });
      for (const b of w.index) if (b > w.newestBucket) w.newestBucket = b;
      return w;
    }
    // Entry by entry: a sparse snapshot, or a ring loaded sparse (market of slot i: i / ring).
    for (let i = 0; i < j.index.length; i++) {
      const b = j.index[i] as number | null;
      if (b === null || Number.isNaN(b)) continue;
      const m = j.markets !== undefined ? j.markets[i] : Math.floor(i / w.ring);
      if (b > w.newestBucket) w.newestBucket = b;
      if (w.sparse !== undefined) w.sparse.load(m, b, j.sums[i], j.exactMant[i], j.exactExp[i]);
      else w.loadSlot(m, b, j.sums[i], j.exactMant[i], j.exactExp[i]);
    }
    return w;
  }

  /** Puts one bucket of a sparse snapshot into the ring (the cadence changed the form between versions). */
  private loadSlot(m: number, b: number, sum: number, mant: string, exp: number): void {
    this.ensure(m + 1);
    const slot = this.slotOf(m, b);
    this.index[slot] = b;
    this.sums[slot] = sum;
    this.exact.set(slot, mant, exp);
  }
}

/** One market's buckets in a {@link SparseBuckets}: bucket numbers in increasing order and their slots, live from `head`. */
interface MarketBuckets {
  bucket: number[];
  slot: number[];
  head: number;
}

/**
 * The buckets of a long ring, market by market: only those that trades went into, in bucket
 * order, their sums in pooled slots. A bucket is dropped when its market receives a trade `ring`
 * or more buckets later, as the ring would overwrite it, so every bucket of the last refresh's
 * window is still there at the next refresh. Trades come in time order but for the last second
 * (rule 1 rejects the late ones), so a bucket is found or inserted near a market's end.
 */
export class SparseBuckets {
  private sums = new Float64Array(0);
  private exact = new ExactSums(0);
  private used = 0;
  private readonly free: number[] = [];
  private readonly markets: (MarketBuckets | undefined)[] = [];

  constructor(readonly ring: number) {}

  /** A cleared slot from the free list or the pool (doubled when full). */
  private alloc(): number {
    const f = this.free.pop();
    const slot = f ?? this.used++;
    if (slot >= this.sums.length) {
      const cap = Math.max(64, this.sums.length * 2);
      const sums = new Float64Array(cap);
      sums.set(this.sums);
      this.sums = sums;
      this.exact.grow(cap);
    }
    this.sums[slot] = 0;
    this.exact.clear(slot);
    return slot;
  }

  /** The slot of bucket `b` of market `m`, made (and the market's too-old buckets dropped) when new. */
  private slotOf(m: number, b: number): number {
    let mb = this.markets[m];
    if (mb === undefined) {
      while (this.markets.length <= m) this.markets.push(undefined);
      mb = this.markets[m] = { bucket: [], slot: [], head: 0 };
    }
    const { bucket } = mb;
    let i = bucket.length - 1;
    while (i >= mb.head && bucket[i] > b) i--;
    if (i >= mb.head && bucket[i] === b) return mb.slot[i];
    const slot = this.alloc();
    if (i === bucket.length - 1) {
      bucket.push(b);
      mb.slot.push(slot);
    } else {
      bucket.splice(i + 1, 0, b);
      mb.slot.splice(i + 1, 0, slot);
    }
    const oldest = bucket[bucket.length - 1] - this.ring;
    while (mb.head < bucket.length && bucket[mb.head] <= oldest) this.free.push(mb.slot[mb.head++]);
    if (mb.head >= 64 && mb.head * 2 >= bucket.length) {
      bucket.splice(0, mb.head);
      mb.slot.splice(0, mb.head);
      mb.head = 0;
    }
    return slot;
  }

  /** Adds a trade of `size` (exact text `sizeText`, default the float's) to bucket `b` of market `m`. */
  add(m: number, b: number, size: number, sizeText: string | undefined): void {
    const slot = this.slotOf(m, b);
    this.sums[slot] += size;
    if (sizeText === undefined) this.exact.addFloat(slot, size);
    else this.exact.add(slot, sizeText);
  }

  /** Sets bucket `b` of market `m` from a snapshot. */
  load(m: number, b: number, sum: number, mant: string, exp: number): void {
    const slot = this.slotOf(m, b);
    this.sums[slot] = sum;
    this.exact.set(slot, mant, exp);
  }

  /** Float sum of market `m`'s buckets `first..last`. */
  sum(m: number, first: number, last: number): number {
    const mb = this.markets[m];
    let total = 0;
    if (mb === undefined) return total;
    for (let i = mb.bucket.length - 1; i >= mb.head && mb.bucket[i] >= first; i--) {
      if (mb.bucket[i] <= last) total += this.sums[mb.slot[i]];
    }
    return total;
  }

  /** Adds the exact sums of market `m`'s buckets `first..last` to `total`. */
  exactSum(m: number, first: number, last: number, total: ScaledSum): void {
    const mb = this.markets[m];
    if (mb === undefined) return;
    for (let i = mb.bucket.length - 1; i >= mb.head && mb.bucket[i] >= first; i--) {
      if (mb.bucket[i] <= last) this.exact.addTo(total, mb.slot[i]);
    }
  }

  /** The live buckets in market then bucket order (the sparse form of {@link VolumeWindowJSON}). */
  toJSON(): Pick<VolumeWindowJSON, 'sums' | 'index' | 'exactMant' | 'exactExp' | 'markets'> {
    const out = {
      markets: [] as number[],
      index: [] as number[],
      sums: [] as number[],
      exactMant: [] as string[],
      exactExp: [] as number[],
    };
    this.markets.forEach((mb, m) => {
      if (mb === undefined) return;
      for (let i = mb.head; i < mb.bucket.length; i++) {
        const slot = mb.slot[i];
        out.markets.push(m);
        out.index.push(mb.bucket[i]);
        out.sums.push(this.sums[slot]);
        out.exactMant.push(this.exact.mantissa(slot).toString());
        out.exactExp.push(this.exact.exponent(slot));
      }
    });
    return out;
  }
}

/** The `exactMant` and `exactExp` columns of a {@link VolumeWindowJSON}. */
function exactColumns(exact: ExactSums): { exactMant: string[]; exactExp: number[] } {
  const j = exact.toJSON();
  return { exactMant: j.mant, exactExp: j.exp };
}
