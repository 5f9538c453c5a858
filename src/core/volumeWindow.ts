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

/**
 * Splits a non-negative decimal text into an integer mantissa and a base-10 exponent:
 * "12.50" -> [1250n, -2], "1e-8" -> [1n, -8].
 */
export function decimalToScaled(text: string): [bigint, number] {
  let s = text.trim();
  let exp = 0;
  const e = s.search(/[eE]/);
  if (e >= 0) {
    exp = Number(s.slice(e + 1));
    s = s.slice(0, e);
  }
  const dot = s.indexOf('.');
  if (dot >= 0) {
    exp -= s.length - dot - 1;
    s = s.slice(0, dot) + s.slice(dot + 1);
  }
  if (s.startsWith('+')) s = s.slice(1);
  return [BigInt(s === '' || s === '-' ? '0' : s), exp];
}

const TEN = 10n;

/** Powers of ten exact in a float64 (10^0 .. 10^22). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * {@link decimalToScaled} with the mantissa as a float64, when it is a safe integer (exact);
 * undefined otherwise (then use the BigInt form). Plain decimal texts only: `[+|-]digits[.digits]`.
 */
function decimalToSafe(text: string): [number, number] | undefined {
  const n = text.length;
  let i = 0;
  let neg = false;
  const c0 = text.charCodeAt(0);
  if (c0 === 43 || c0 === 45) {
    neg = c0 === 45;
    i = 1;
  }
  let mant = 0;
  let exp = 0;
  let dot = false;
  let digits = 0;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 46 && !dot) {
      dot = true;
      continue;
    }
    const d = c - 48;
    if (d < 0 || d > 9) return undefined;
    mant = mant * 10 + d;
    digits++;
    if (dot) exp--;
  }
  if (digits === 0 || digits > 15) return undefined; // 15 digits are always below 2^53
  return [neg ? -mant : mant, exp];
}

/** `a * 10^k + b` when it is a safe integer (computed exactly), else NaN. */
function scaledAdd(a: number, k: number, b: number): number {
  if (k > 22) return Number.NaN;
  const p = a * POW10[k];
  if (!Number.isSafeInteger(p)) return Number.NaN;
  const r = p + b;
  return Number.isSafeInteger(r) ? r : Number.NaN;
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

  /** Newest bucket any trade went into (-Infinity before the first; recomputed by fromJSON). */
  private newestBucket = -Infinity;
  /**
   * Exact sum of each slot: an integer mantissa and a base-10 exponent. The mantissa is
   * `fastMant[slot]` (a safe integer) unless `bigMant[slot]` is set, once it would not be.
   */
  private fastMant = new Float64Array(0);
  private bigMant: (bigint | undefined)[] = [];
  private exactExp = new Int32Array(0);

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
    const exp = new Int32Array(cap * this.ring);
    exp.set(this.exactExp);
    const fast = new Float64Array(cap * this.ring);
    fast.set(this.fastMant);
    while (this.bigMant.length < cap * this.ring) this.bigMant.push(undefined);
    this.sums = sums;
    this.index = index;
    this.exactExp = exp;
    this.fastMant = fast;
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
      this.fastMant[slot] = 0;
      this.bigMant[slot] = undefined;
      this.exactExp[slot] = 0;
    }
    this.sums[slot] += size;
    const text = sizeText ?? String(size);
    const cur = this.exactExp[slot];
    const fast = this.bigMant[slot] === undefined ? decimalToSafe(text) : undefined;
    if (fast !== undefined) {
      const [mant, exp] = fast;
      if (mant === 0) return;
      const held = this.fastMant[slot];
      const r = exp >= cur ? scaledAdd(mant, exp - cur, held) : scaledAdd(held, cur - exp, mant);
      if (!Number.isNaN(r)) {
        this.fastMant[slot] = r;
        if (exp < cur) this.exactExp[slot] = exp;
        return;
      }
    }
    // Beyond a safe integer, or an unusual text (exponent): BigInt from here on for this slot.
    const [mant, exp] = decimalToScaled(text);
    if (mant === 0n) return;
    const held = this.bigMant[slot] ?? BigInt(this.fastMant[slot]);
    if (exp >= cur) this.bigMant[slot] = held + mant * TEN ** BigInt(exp - cur);
    else {
      this.bigMant[slot] = held * TEN ** BigInt(cur - exp) + mant;
      this.exactExp[slot] = exp;
    }
  }

  /** The exact mantissa of a slot (0n for an empty one). */
  private mantissa(slot: number): bigint {
    return this.bigMant[slot] ?? BigInt(this.fastMant[slot]);
  }

  /**
   * V of market `m` at refresh time `refreshUs`, exactly, as a decimal text (`"3e-1"`). Valid
   * for the latest refresh until the next one (the ring keeps those buckets).
   */
  exactSum(m: number, refreshUs: number): string {
    if (m >= this.capacity) return '0';
    const first = Math.floor((refreshUs - this.windowUs) / this.bucketUs);
    const last = this.bucketOf(refreshUs);
    let mant = 0n;
    let exp = 0;
    const base = m * this.ring;
    for (let b = first; b <= last; b++) {
      const slot = base + (((b % this.ring) + this.ring) % this.ring);
      if (this.index[slot] !== b) continue;
      const sm = this.mantissa(slot);
      if (sm === 0n) continue;
      const se = this.exactExp[slot];
      if (mant === 0n) {
        mant = sm;
        exp = se;
      } else if (se >= exp) mant += sm * TEN ** BigInt(se - exp);
      else {
        mant = mant * TEN ** BigInt(exp - se) + sm;
        exp = se;
      }
    }
    return `${mant}e${exp}`;
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
      exactMant: Array.from(this.fastMant, (v, slot) => (this.bigMant[slot] ?? v).toString()),
      exactExp: Array.from(this.exactExp),
    };
  }

  /** Restores a snapshot written by {@link toJSON}. */
  static fromJSON(j: VolumeWindowJSON): VolumeWindow {
    const w = new VolumeWindow(j.windowUs, j.refreshUs);
    w.capacity = j.capacity;
    w.sums = Float64Array.from(j.sums);
    w.index = Float64Array.from(j.index, (v) => (v === null ? NaN : v));
    w.fastMant = new Float64Array(j.exactMant.length);
    w.bigMant = j.exactMant.map((v, slot) => {
      const n = Number(v);
      if (Number.isSafeInteger(n)) {
        w.fastMant[slot] = n;
        return undefined;
      }
      return BigInt(v);
    });
    w.exactExp = Int32Array.from(j.exactExp);
    for (const b of w.index) if (b > w.newestBucket) w.newestBucket = b;
    return w;
  }
}
