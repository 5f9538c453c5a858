/**
 * The traded volume of every market over the last hour and the last day, exactly, for the symbol
 * records' volume_1hrs and volume_1day (docs/methodology.md section 10). A bin is one market's
 * trades of one second: bin b holds the trades with time in ((b - 1) s, b s], so the trades of
 * (T - 1 h, T] at a whole-second tick T are exactly those of the bins T/1s - 3599 .. T/1s.
 *
 * Each market keeps two running exact totals, of its bins in the hour and in the day. The bins
 * wait in time order: a bin enters both totals once the ticks reach its second (no trade can join
 * it after that: rule 1 rejects the late ones), leaves the hour's total an hour later and the
 * day's a day later. Only the bins of the last hour (and of the next second) are held as columns,
 * in a ring; a bin older than an hour is read again only once, when it leaves the day, so it is
 * kept packed, a few bytes in a byte queue ({@link ColdBins}). Memory is then about five to seven
 * bytes per market and traded second of the last day, and a query is two lookups, not a walk
 * over the day's bins. Snapshots hold both lists packed.
 *
 * Bins are opened in time order but before the first tick, when trades of the day before may come
 * in any order: a bin opened out of order marks the queue unsorted, and the next advance sorts
 * every bin by second (stably) and rebuilds the totals from scratch. Two bins of one market and
 * second are both summed.
 *
 * @module
 */
import { ExactSums, type ExactSumsJSON, scaledText } from '../decimal.js';
import { PackedBytes, packedBytesOf } from '../packedBytes.js';
import { CHUNK, type ChunkSpill, type ColdBin, ColdBins } from './coldBins.js';
import { US_PER_SECOND } from '../time.js';

/** Seconds in the longest window asked for (volume_1day). */
export const DAY_SECONDS = 86_400;
/** Seconds of the volume_1hrs window. */
export const HOUR_SECONDS = 3_600;

/**
 * Serialisable state of {@link TradeBins}: the older bins of the day window (`cold`) and those of
 * the hour window and after (`hot`), each in order and packed as {@link ColdBins} packs them
 * (base64; each list's first bin's second written whole).
 */
export interface TradeBinsJSON {
  cold: string | PackedBytes;
  hot: string | PackedBytes;
}

/** One market's chain of bins, as snapshots before the running totals held them (still restored). */
export interface LegacyTradeBinsJSON {
  sec: number[];
  sums: ExactSumsJSON;
}

/**
 * The bin of a trade time: the whole second that ends its interval ((b - 1) s, b s].
 *
 * @example
 * ```ts
 * binOf(1_000_000); // 1 (a trade at exactly 00:00:01 counts for tick 00:00:01)
 * binOf(1_000_001); // 2
 * ```
 */
export function binOf(timeUs: number): number {
  return Math.ceil(timeUs / US_PER_SECOND);
}

/**
 * A reading of the bins `packed` holds (base64 text, or {@link PackedBytes} read a part at a time:
 * parts kept on disk are never whole in memory), from the first at each call.
 */
function binsOf(packed: string | PackedBytes): () => Iterable<ColdBin> {
  const parts = typeof packed === 'string' ? [packedBytesOf(packed)] : packed.parts;
  return () => ColdBins.read(parts);
}

/** Bins of one second sorted by a numeric key, market * ORDER_SPAN + offset (exact below 2^53 for 2^32 markets). */
const ORDER_SPAN = 2 ** 21;

/**
 * The running hour and day totals of every market and the bins that will leave them (see the
 * module description). Queries name the engine's last tick, which never goes back.
 *
 * @example
 * ```ts
 * const bins = new TradeBins();
 * bins.add(0, binOf(1_500_000), '0.1', 0);
 * bins.add(0, binOf(1_500_000), '0.2', 0);
 * bins.dayText(0, 2); // '0.3'
 * ```
 */
export class TradeBins {
  // The hot bins, a ring of columns: ring index i at slot i & mask, live from `front` to `end`.
  private sec = new Float64Array(1024);
  private market = new Int32Array(1024);
  private sums = new ExactSums(1024);
  private mask = 1023;
  private front = 0;
  /** The first hot bin not yet in the totals (its second is after the last advance's). */
  private inc = 0;
  private end = 0;
  private cold: ColdBins;
  /** Per market: the hour total (slot 2 m) and the day total (2 m + 1). */
  private totals = new ExactSums(0);
  /**
   * Per market: the ring index of its bin of the latest second (-1: none; of two of one second,
   * the later opened) and that second (-Infinity: none): where a trade of that second goes while
   * the bin is in the hour. Neither depends on when the totals were advanced.
   */
  private newest = new Float64Array(0);
  private newestSec = new Float64Array(0);
  /** Second of the last advance (-Infinity before the first). */
  private k = -Infinity;
  /** The orders `inOrder` computes. */
  private scratch = new Float64Array(64);
  /** Whether a bin was opened out of time order since the last advance. */
  private unsorted = false;
  /** Where the cold queue puts its chunks, and how many it holds (none: it holds them all). */
  private spill: { spill: ChunkSpill; hold: number | undefined } | undefined;

  /** @param chunkBytes bytes of a chunk of the packed bins (tests take small ones). */
  constructor(private readonly chunkBytes = CHUNK) {
    this.cold = new ColdBins(chunkBytes);
  }

  private ensure(m: number): void {
    if (m < this.newest.length) return;
    let cap = Math.max(16, this.newest.length);
    while (cap <= m) cap *= 2;
    const newest = new Float64Array(cap).fill(-1);
    newest.set(this.newest);
    this.newest = newest;
    const newestSec = new Float64Array(cap).fill(-Infinity);
    newestSec.set(this.newestSec);
    this.newestSec = newestSec;
    this.totals.grow(2 * cap);
  }

  /**
   * Adds a trade of market `m` to its bin of second `b` (the exact size as its text, or as a float
   * whose shortest text is exact: `sizeText` undefined), `k` the second of the engine's last tick.
   */
  add(m: number, b: number, sizeText: string | undefined, k: number, size = 0): void {
    this.ensure(m);
    let i = this.newest[m];
    if (!(this.newestSec[m] === b && b > k - HOUR_SECONDS && i >= this.front)) {
      if (k > this.k) this.advance(k);
      i = this.open(m, b);
    }
    const s = i & this.mask;
    if (sizeText === undefined) this.sums.addFloat(s, size);
    else this.sums.add(s, sizeText);
    // A bin already in the totals (before the first tick, trades of the tick's own second still
    // come after it entered them): the trade enters them too.
    if (i < this.inc) {
      for (const slot of [2 * m, 2 * m + 1]) {
        if (sizeText === undefined) this.totals.addFloat(slot, size);
        else this.totals.add(slot, sizeText);
      }
    }
  }

  private open(m: number, b: number): number {
    if (this.end - this.front > this.mask) this.grow();
    if (this.end > this.front ? b < this.sec[(this.end - 1) & this.mask] : b <= this.k) this.unsorted = true;
    const i = this.end++;
    const s = i & this.mask;
    this.sec[s] = b;
    this.market[s] = m;
    this.sums.clear(s);
    this.noteNewest(m, i, b);
    return i;
  }

  /** Bin `i` of market m, of second b, opened: its newest unless the market has a later one. */
  private noteNewest(m: number, i: number, b: number): void {
    if (b >= this.newestSec[m]) {
      this.newest[m] = i;
      this.newestSec[m] = b;
    }
  }

  /** Brings the totals to second `k`: bins up to k enter them, those an hour and a day older leave. */
  advance(k: number): void {
    if (this.unsorted) this.rebuild();
    if (k < this.k) return;
    this.k = k;
    const { sec, market, sums, totals } = this;
    let j = this.inc;
    for (; j < this.end && sec[j & this.mask] <= k; j++) {
      const s = j & this.mask;
      const m = market[s];
      const mant = sums.mantissaOf(s);
      totals.addSigned(2 * m, mant, sums.exponent(s), false);
      totals.addSigned(2 * m + 1, mant, sums.exponent(s), false);
    }
    this.inc = j;
    // Out of the hour, into the cold queue: each second's bins in market order.
    let h = this.front;
    while (h < this.inc && sec[h & this.mask] <= k - HOUR_SECONDS) h++;
    if (h > this.front) {
      const order = this.inOrder(this.front, h);
      for (let x = 0; x < h - this.front; x++) {
        const s = order[x] & this.mask;
        const m = market[s];
        const mant = sums.mantissaOf(s);
        totals.addSigned(2 * m, mant, sums.exponent(s), true);
        this.cold.push(m, sec[s], mant, sums.exponent(s));
      }
      this.front = h;
    }
    for (let b = this.cold.peek(); b !== undefined && b.sec <= k - DAY_SECONDS; b = this.cold.peek()) {
      this.cold.shift();
      totals.addSigned(2 * b.market + 1, b.mant, b.exp, true);
    }
  }

  /**
   * The ring indexes `from` .. `to` - 1 (bins in order of second) with each second's bins in order
   * of market, then of opening: the order they are packed in, which does not depend on how the
   * markets' trades were interleaved. In a scratch array, valid until the next call: read
   * `to` - `from` of it.
   */
  private inOrder(from: number, to: number): Float64Array {
    const { sec, market, mask } = this;
    if (this.scratch.length < to - from) this.scratch = new Float64Array(Math.max(2 * this.scratch.length, to - from));
    const out = this.scratch;
    for (let a = from; a < to; ) {
      let b = a + 1;
      while (b < to && sec[b & mask] === sec[a & mask]) b++;
      // A numeric sort of market * span + offset (exact below 2^53 for markets below 2^32).
      let span = ORDER_SPAN;
      while (b - a > span) span *= 2;
      const o = a - from;
      for (let r = 0; r < b - a; r++) out[o + r] = market[(a + r) & mask] * span + r;
      if (b - a <= 16) {
        // Insertion sort: the usual few bins of a second, without a view.
        for (let x = o + 1; x < o + b - a; x++) {
          const v = out[x];
          let y = x - 1;
          for (; y >= o && out[y] > v; y--) out[y + 1] = out[y];
          out[y + 1] = v;
        }
      } else out.subarray(o, o + b - a).sort();
      for (let r = 0; r < b - a; r++) out[o + r] = a + (out[o + r] % span);
      a = b;
    }
    return out;
  }

  /** Sorts every bin by second (stably) and builds the totals again from none (bins opened out of order). */
  private rebuild(): void {
    const all = this.bins();
    all.sort((a, b) => a.sec - b.sec);
    this.reset();
    for (const b of all) this.put(b);
  }

  /** Every bin, cold then hot, oldest first, with its market and exact size. */
  private bins(): ColdBin[] {
    const out: ColdBin[] = [...this.cold];
    for (let i = this.front; i < this.end; i++) {
      const s = i & this.mask;
      out.push({ market: this.market[s], sec: this.sec[s], mant: this.sums.mantissaOf(s), exp: this.sums.exponent(s) });
    }
    return out;
  }

  /** Puts the cold bins' chunks in `spill` from now on, but the few read next (`hold`: coldBins.ts). */
  useSpill(spill: ChunkSpill, hold?: number): void {
    this.spill = { spill, hold };
    this.cold.useSpill(spill, hold);
  }

  private reset(): void {
    this.cold = new ColdBins(this.chunkBytes);
    if (this.spill) this.cold.useSpill(this.spill.spill, this.spill.hold);
    this.front = this.inc = this.end = 0;
    this.k = -Infinity;
    this.unsorted = false;
    this.newest.fill(-1);
    this.newestSec.fill(-Infinity);
    this.totals = new ExactSums(this.totals.length);
  }

  /** Appends a bin as the newest (in time order) with its exact size. */
  private put(b: ColdBin): void {
    this.ensure(b.market);
    const i = this.open(b.market, b.sec);
    this.sums.set(i & this.mask, b.mant.toString(), b.exp);
  }

  /** Market m's traded volume of the last `seconds` (an hour or a day) up to second k, as a plain decimal text. */
  private text(m: number, k: number, day: boolean): string {
    this.advance(k);
    if (m >= this.newest.length) return '0';
    const slot = 2 * m + (day ? 1 : 0);
    return scaledText({ mant: this.totals.mantissa(slot), exp: this.totals.exponent(slot) });
  }

  /** Market m's volume of (k - 1 h, k] in seconds, exactly (k the engine's last tick, in seconds). */
  hourText(m: number, k: number): string {
    return this.text(m, k, false);
  }

  /** Market m's volume of (k - 24 h, k] in seconds, exactly. */
  dayText(m: number, k: number): string {
    return this.text(m, k, true);
  }

  /** Bytes of the packed bins (older than an hour), for memory figures. */
  get coldBytes(): number {
    return this.cold.bytes;
  }

  /** Bytes of the arrays that hold the packed bins, for memory figures. */
  get coldHeldBytes(): number {
    return this.cold.heldBytes;
  }

  /**
   * Plain-JSON state at second k (advanced there first): the hot bins and the cold ones, each
   * packed, as base64; with `packed`, as {@link PackedBytes} (the cold ones a view of this state,
   * valid until it changes).
   */
  toJSON(k: number, packed = false): TradeBinsJSON {
    this.advance(k);
    const hot = new ColdBins(this.chunkBytes);
    const order = this.inOrder(this.front, this.end);
    for (let x = 0; x < this.end - this.front; x++) this.pushHot(hot, order[x]);
    // The first cold bin's second whole, so the bytes depend on the bins alone, not on what left before.
    const j = { hot: new PackedBytes([...hot.parts()]), cold: this.cold.canonical() };
    return packed ? j : { hot: j.hot.base64(), cold: j.cold.base64() };
  }

  private pushHot(q: ColdBins, i: number): void {
    const s = i & this.mask;
    q.push(this.market[s], this.sec[s], this.sums.mantissaOf(s), this.sums.exponent(s));
  }

  /** Slots of the ring of columns (for tests and memory figures). */
  get ringSlots(): number {
    return this.mask + 1;
  }

  /** Bins held as columns: those of the last hour and after. */
  get hotBins(): number {
    return this.end - this.front;
  }

  /**
   * Restores {@link toJSON} output at second `k`; or, from a snapshot written before the running
   * totals, each market's chain of bins (`legacy`, by market). With `spill`, as {@link useSpill}.
   */
  static fromJSON(
    j: TradeBinsJSON | (LegacyTradeBinsJSON | null)[],
    k: number | undefined,
    chunkBytes = CHUNK,
    spill?: ChunkSpill,
  ): TradeBins {
    const bins = new TradeBins(chunkBytes);
    // Before any bin: the chunks restored go to it as they are made.
    if (spill) bins.useSpill(spill);
    if (Array.isArray(j)) {
      const all: ColdBin[] = [];
      j.forEach((chain, market) => {
        if (chain === null) return;
        for (let n = 0; n < chain.sec.length; n++)
          all.push({ market, sec: chain.sec[n], mant: BigInt(chain.sums.mant[n]), exp: chain.sums.exp[n] });
      });
      all.sort((a, b) => a.sec - b.sec || a.market - b.market);
      for (const b of all) bins.put(b);
    } else {
      const cold = binsOf(j.cold);
      const hot = binsOf(j.hot);
      if (k !== undefined && bins.restore(cold, hot, k)) return bins;
      for (const read of [cold, hot]) for (const b of read()) bins.put(b);
    }
    if (k !== undefined) bins.advance(k);
    return bins;
  }

  /**
   * Restores {@link toJSON}(k) output at that second without passing the older bins through the
   * ring: they go straight back into the cold queue (in chunks), so a restored day holds the
   * memory a replayed one does, not a ring of the whole day's bins. The totals see the same
   * additions and subtractions in the same order as when every bin is put in the ring and
   * advanced to k, so the state is the same to the last exponent. False, with this reset, when
   * the bins are not as toJSON(k) leaves them (a cold bin within the hour, a hot one out of it or
   * out of order): the caller then puts them all.
   */
  private restore(cold: () => Iterable<ColdBin>, hot: () => Iterable<ColdBin>, k: number): boolean {
    let c = 0;
    let last = Number.NEGATIVE_INFINITY;
    let lastMarket = -1;
    for (const b of cold()) {
      // In the order advance() packs them: by second, then market.
      const m = b.market;
      if (!(b.sec <= k - HOUR_SECONDS && (b.sec > last || (b.sec === last && m >= lastMarket)))) {
        this.reset();
        return false;
      }
      last = b.sec;
      lastMarket = m;
      this.ensure(m);
      // As open() at ring index c.
      this.noteNewest(m, c, b.sec);
      // As advance(k) adds each bin up to k to both totals.
      this.totals.addSigned(2 * m, b.mant, b.exp, false);
      this.totals.addSigned(2 * m + 1, b.mant, b.exp, false);
      this.cold.push(m, b.sec, b.mant, b.exp);
      c++;
    }
    this.front = this.inc = this.end = c;
    for (const b of hot()) this.put(b);
    if (this.unsorted || (this.end > this.front && this.sec[this.front & this.mask] <= k - HOUR_SECONDS)) {
      this.reset();
      return false;
    }
    // The hot bins up to k enter both totals; then, as advance(k) had the cold bins leave the
    // hour after them, they leave it.
    this.advance(k);
    for (const b of cold()) this.totals.addSigned(2 * b.market, b.mant, b.exp, true);
    return true;
  }

  /** Doubles the ring, keeping every live bin at its index. */
  private grow(): void {
    const size = 2 * (this.mask + 1);
    const sec = new Float64Array(size);
    const market = new Int32Array(size);
    const sums = new ExactSums(size);
    const mask = size - 1;
    for (let i = this.front; i < this.end; i++) {
      sec[i & mask] = this.sec[i & this.mask];
      market[i & mask] = this.market[i & this.mask];
      this.sums.copyTo(sums, i & this.mask, i & mask);
    }
    this.sec = sec;
    this.market = market;
    this.sums = sums;
    this.mask = mask;
  }
}
