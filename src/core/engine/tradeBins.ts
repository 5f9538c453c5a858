/**
 * The traded volume of every market per second, exactly, for the symbol records' volume_1hrs and
 * volume_1day (docs/methodology.md section 10). A bin is one market's trades of one second: bin b
 * holds the trades with time in ((b - 1) s, b s], so the trades of (T - 1 h, T] at a whole-second
 * tick T are exactly those of the bins T/1s - 3599 .. T/1s.
 *
 * The bins of all markets are appended to one ring in the order they open (nearly time order), and
 * each market's bins are chained newest first; a market's newest bin is where its next trade of
 * the same second goes. So a trade writes to the end of the ring or to a bin it just wrote, never
 * to scattered memory. Bins older than a day before the last tick leave the ring from its front
 * (a bin out of order, possible only before the first tick, just leaves a little later), so memory
 * holds at most about a day of bins. Two bins of one market and second (out of order) are both
 * summed.
 *
 * @module
 */
import { ExactSums, type ExactSumsJSON, type ScaledSum, scaledText } from '../decimal.js';
import { US_PER_SECOND } from '../time.js';

/** Seconds in the longest window asked for (volume_1day). */
export const DAY_SECONDS = 86_400;

/** Serialisable state of one market's bins in {@link TradeBins}: their seconds and exact sums, oldest first. */
export interface TradeBinsJSON {
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
 * The ring of per-second bins of all markets (see the module description). Bins are named by
 * their ring index, which only grows (`front` .. `end` - 1 are live).
 *
 * @example
 * ```ts
 * const bins = new TradeBins();
 * const i = bins.open(binOf(1_500_000), -1);
 * bins.add(i, '0.1');
 * bins.add(i, '0.2');
 * bins.sumText(i, 1, 2); // '0.3'
 * ```
 */
export class TradeBins {
  private sec = new Float64Array(1024);
  private prev = new Float64Array(1024);
  private sums = new ExactSums(1024);
  private mask = 1023;
  private front = 0;
  private end = 0;

  /** Whether ring index `i` names a live bin. */
  live(i: number): boolean {
    return i >= this.front && i < this.end;
  }

  /** The second of live bin `i`. */
  secondOf(i: number): number {
    return this.sec[i & this.mask];
  }

  /** Opens an empty bin for second `b` whose market's previous bin is `prev` (-1: none); returns its index. */
  open(b: number, prev: number): number {
    if (this.end - this.front > this.mask) this.grow();
    const i = this.end++;
    const k = i & this.mask;
    this.sec[k] = b;
    this.prev[k] = prev;
    this.sums.clear(k);
    return i;
  }

  /** Adds a trade size (exact decimal text) to live bin `i`. */
  add(i: number, text: string): void {
    this.sums.add(i & this.mask, text);
  }

  /** Adds a trade size whose exact text is `String(v)` to live bin `i` ({@link ExactSums.addFloat}). */
  addFloat(i: number, v: number): void {
    this.sums.addFloat(i & this.mask, v);
  }

  /** Drops the bins at the front older than second `minBin`. */
  drop(minBin: number): void {
    while (this.front < this.end && this.sec[this.front & this.mask] < minBin) this.front++;
  }

  /** The exact sum of the bins of seconds `from` .. `to` in the chain from bin `newest`, as a plain decimal text. */
  sumText(newest: number, from: number, to: number): string {
    const total: ScaledSum = { mant: 0n, exp: 0 };
    for (let i = newest; this.live(i); i = this.prev[i & this.mask]) {
      const s = this.sec[i & this.mask];
      if (s >= from && s <= to) this.sums.addTo(total, i & this.mask);
    }
    return scaledText(total);
  }

  /**
   * Plain-JSON state of one market's chain from bin `newest`: its live bins of second `minBin` or
   * later (those a later tick can ask for), oldest first; null when none. Per market, so the
   * snapshot does not depend on how the markets' bins were interleaved in the ring.
   */
  chainJSON(newest: number, minBin: number): TradeBinsJSON | null {
    const sec: number[] = [];
    const mant: string[] = [];
    const exp: number[] = [];
    for (let i = newest; this.live(i); i = this.prev[i & this.mask]) {
      const k = i & this.mask;
      if (this.sec[k] < minBin) continue;
      sec.push(this.sec[k]);
      mant.push(this.sums.mantissa(k).toString());
      exp.push(this.sums.exponent(k));
    }
    if (sec.length === 0) return null;
    return { sec: sec.reverse(), sums: { mant: mant.reverse(), exp: exp.reverse() } };
  }

  /** Appends a market's chain from {@link chainJSON}; returns its newest bin's index. */
  restoreChain(j: TradeBinsJSON): number {
    let i = -1;
    for (let n = 0; n < j.sec.length; n++) {
      i = this.open(j.sec[n], i);
      this.sums.set(i & this.mask, j.sums.mant[n], j.sums.exp[n]);
    }
    return i;
  }

  /** Doubles the ring, keeping every live bin at its index. */
  private grow(): void {
    const size = 2 * (this.mask + 1);
    const sec = new Float64Array(size);
    const prev = new Float64Array(size);
    const sums = new ExactSums(size);
    const mask = size - 1;
    for (let i = this.front; i < this.end; i++) {
      sec[i & mask] = this.sec[i & this.mask];
      prev[i & mask] = this.prev[i & this.mask];
      this.sums.copyTo(sums, i & this.mask, i & mask);
    }
    this.sec = sec;
    this.prev = prev;
    this.sums = sums;
    this.mask = mask;
  }
}
