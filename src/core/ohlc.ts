/**
 * OHLC buckets of a rate series (docs/methodology.md section 5): a streaming aggregator that keeps the
 * open bucket of each period, roll-ups of finer buckets into coarser ones, and the mapping to
 * the interface's `ExchangeRatesTimeseriesItem`.
 *
 * A bucket `[start, end)` receives the rate at every fresh tick `T` in it: `open`/`close` are
 * the first/last of those rates, `high`/`low` the extremes, `timeOpen`/`timeClose` the ticks of
 * the first and last. Empty buckets are never produced. Deciding which ticks are fresh is the
 * caller's job; everything here is plain, exact comparison of float64 rates and integer µs times,
 * so the result does not depend on how a replay was chunked or resumed.
 *
 * @module
 */

import { bucketEnd, bucketStart, periodLengthUs, type PeriodRecord } from './periods.js';
import { wireNumber } from './wire.js';

/**
 * One OHLC bucket. Times are integer microseconds since the epoch.
 *
 * Why: docs/methodology.md section 5 — a bucket `[start, end)` carries open/high/low/close rates and the
 * times of its first and last tick; `count` (ticks that fed it) makes roll-ups checkable.
 *
 * @example
 * const b: OhlcBucket = {
 *   start: 0, end: 1_000_000, timeOpen: 100, timeClose: 900_000,
 *   open: 1.5, high: 1.7, low: 1.4, close: 1.6, count: 4,
 * };
 */
export interface OhlcBucket {
  /** Bucket start (inclusive), µs. */
  start: number;
  /** Bucket end (exclusive), µs. */
  end: number;
  /** Time of the first tick, µs. */
  timeOpen: number;
  /** Time of the last tick, µs. */
  timeClose: number;
  /** Rate at the first tick. */
  open: number;
  /** Highest rate. */
  high: number;
  /** Lowest rate. */
  low: number;
  /** Rate at the last tick. */
  close: number;
  /** Number of ticks that fed the bucket (≥ 1). */
  count: number;
}

/**
 * Plain-JSON snapshot of an {@link OhlcAggregator} (see {@link OhlcAggregator.toJSON}).
 *
 * Why: docs/methodology.md section 7 — a replay stopped and resumed from a snapshot must give
 * byte-identical output, so the open buckets are saved exactly (JSON numbers round-trip float64).
 *
 * @example
 * const snap: OhlcAggregatorSnapshot = JSON.parse(JSON.stringify(agg));
 */
export interface OhlcAggregatorSnapshot {
  /** Snapshot format version (1). */
  v: 1;
  /** `period_id` of each period, in aggregator order. */
  periods: string[];
  /** Time of the last tick, µs, or `null` before the first tick. */
  lastTickUs: number | null;
  /** Open-bucket state, 8 numbers per period: start, end, timeOpen, timeClose, open, high, low, close. */
  state: number[];
  /** Tick count of each open bucket; 0 = no open bucket. */
  counts: number[];
}

// Slots of one period's open state in the Float64Array.
const S_START = 0;
const S_END = 1;
const S_TOPEN = 2;
const S_TCLOSE = 3;
const S_OPEN = 4;
const S_HIGH = 5;
const S_LOW = 6;
const S_CLOSE = 7;
/** Numbers per period in the open state. */
const STRIDE = 8;

/**
 * Streaming OHLC aggregator for ONE rate series over a list of periods.
 *
 * Feed it the series' fresh ticks in strictly increasing time with {@link update}; whenever a
 * tick falls outside a period's open bucket, that bucket is closed and handed to `onClose`
 * (periods in array order; each call gets a fresh object it may keep) and a new one is opened.
 * The open state lives in one `Float64Array` (8 slots per period) plus a count array, so an
 * update that stays inside every open bucket allocates nothing.
 *
 * Why: docs/methodology.md section 5 — every period's buckets, computed in one pass, equal the roll-up of
 * the 1SEC series (each period is aligned independently, so this holds by construction; the
 * property tests check it).
 *
 * @example
 * const out: OhlcBucket[] = [];
 * const agg = new OhlcAggregator([getPeriod('1SEC')!, getPeriod('1MIN')!], (_i, b) => out.push(b));
 * agg.update(0, 1.0);
 * agg.update(500_000, 1.2);
 * agg.update(1_000_000, 1.1); // closes 1SEC bucket [0, 1 s)
 * agg.flush();                // closes 1SEC [1 s, 2 s) and 1MIN [0, 60 s)
 */
export class OhlcAggregator {
  /** The periods, in the order used for `periodIndex`. */
  readonly periods: readonly PeriodRecord[];
  private readonly onClose: (periodIndex: number, bucket: OhlcBucket) => void;
  private readonly n: number;
  /** Length in µs of each second period; 0 for month periods (bucketStart/End used instead). */
  private readonly lenUs: Float64Array;
  private readonly state: Float64Array;
  private readonly counts: Float64Array;
  private lastTick = -Infinity;
  /**
   * A series whose rate stays costs a comparison a tick: after an {@link update}, every period's
   * open bucket holds its tick, at `lastRate`; until the earliest of their ends (`minEnd`), a tick
   * at that rate changes only each bucket's last tick and count. Such ticks are counted
   * (`pending`, the last at `pendingLast`) and applied to the state ({@link settle}) before the
   * state is read or changed otherwise.
   */
  private lastRate = Number.NaN;
  private minEnd = Number.NEGATIVE_INFINITY;
  private pending = 0;
  private pendingLast = 0;

  /**
   * @param periods - periods to aggregate (second or month based, any order, duplicates allowed).
   * @param onClose - called with the period's index and a fresh bucket each time one closes.
   * @throws RangeError for a malformed period record.
   */
  constructor(periods: readonly PeriodRecord[], onClose: (periodIndex: number, bucket: OhlcBucket) => void) {
    this.periods = Object.freeze(periods.slice());
    this.onClose = onClose;
    this.n = periods.length;
    this.lenUs = new Float64Array(this.n);
    for (let i = 0; i < this.n; i++) {
      const p = periods[i];
      bucketStart(0, p); // validates the record
      this.lenUs[i] = p.length_months > 0 ? 0 : periodLengthUs(p);
    }
    this.state = new Float64Array(this.n * STRIDE);
    this.counts = new Float64Array(this.n);
  }

  /**
   * Adds one fresh tick of the series.
   *
   * For each period: if `tickUs` is at or past the open bucket's end, that bucket is emitted
   * through `onClose` and a new bucket holding `tickUs` is opened (a tick exactly at a bucket
   * start belongs to the new bucket); then the tick updates open/high/low/close,
   * timeOpen/timeClose and count. Allocation-free unless a bucket closes.
   *
   * Why: docs/methodology.md section 5 — rate_open/rate_close are the first/last fresh ticks of the
   * bucket, rate_high/rate_low the extremes.
   *
   * @param tickUs - tick time, integer µs, strictly greater than the previous tick.
   * @param rate - the series' rate at the tick (finite).
   * @throws RangeError if `tickUs` is not after the previous tick, or `rate`/`tickUs` is not finite.
   * @example
   * agg.update(1_700_000_000_000_000, 43_250.5);
   */
  update(tickUs: number, rate: number): void {
    if (rate === this.lastRate && tickUs < this.minEnd && tickUs > this.lastTick) {
      // Inside every open bucket at the rate of the last tick (see `lastRate`).
      this.lastTick = tickUs;
      this.pending++;
      this.pendingLast = tickUs;
      return;
    }
    if (this.pending > 0) this.settle();
    if (!(tickUs > this.lastTick) || !Number.isFinite(tickUs)) {
      throw new RangeError(`OhlcAggregator: tick ${tickUs} is not after previous tick ${this.lastTick}`);
    }
    if (!Number.isFinite(rate)) throw new RangeError(`OhlcAggregator: rate ${rate} is not finite`);
    this.lastTick = tickUs;
    const st = this.state;
    const counts = this.counts;
    for (let i = 0, o = 0; i < this.n; i++, o += STRIDE) {
      const c = counts[i];
      if (c > 0 && tickUs < st[o + S_END]) {
        // Inside the open bucket: the steady state.
        if (rate > st[o + S_HIGH]) st[o + S_HIGH] = rate;
        if (rate < st[o + S_LOW]) st[o + S_LOW] = rate;
        st[o + S_CLOSE] = rate;
        st[o + S_TCLOSE] = tickUs;
        counts[i] = c + 1;
        continue;
      }
      this.open(i, tickUs, rate);
    }
    this.held(rate);
  }

  /** After a tick at `rate` that every open bucket holds: the ticks at that rate before the earliest end are counted only. */
  private held(rate: number): void {
    let end = Number.POSITIVE_INFINITY;
    const st = this.state;
    for (let o = S_END; o < st.length; o += STRIDE) if (st[o] < end) end = st[o];
    // Not for a zero: -0 and 0 are equal to `===`, not to the close they would set.
    this.lastRate = rate === 0 ? Number.NaN : rate;
    this.minEnd = this.n > 0 ? end : Number.NEGATIVE_INFINITY;
  }

  /** Applies the ticks counted since the last one applied (see `lastRate`): each bucket's last tick and count. */
  private settle(): void {
    const st = this.state;
    const counts = this.counts;
    for (let i = 0, o = 0; i < this.n; i++, o += STRIDE) {
      st[o + S_TCLOSE] = this.pendingLast;
      counts[i] += this.pending;
    }
    this.pending = 0;
  }

  /**
   * Counts the run of ticks `fromUs`, `fromUs + stepUs`, ... `toUs` (on its grid, as {@link updateRun}
   * checks) at `rate` as {@link update} counts each, and says true, when every one falls in every
   * open bucket at the rate of the last tick (see `lastRate`); else does nothing and says false.
   * @example agg.holdRun(61_000_000, 65_000_000, 1_000_000, 1.25); // after a tick at 1.25 at 60 s: true
   */
  holdRun(fromUs: number, toUs: number, stepUs: number, rate: number): boolean {
    if (!(rate === this.lastRate && fromUs > this.lastTick && toUs < this.minEnd)) return false;
    this.pending += (toUs - fromUs) / stepUs + 1;
    this.lastTick = toUs;
    this.pendingLast = toUs;
    return true;
  }

  /**
   * Adds a run of fresh ticks at one rate: `fromUs`, `fromUs + stepUs`, ... through `toUs`: the
   * buckets of {@link update} at each, at a cost that follows the buckets closed, not the ticks (an
   * event-driven engine feeds the seconds in which nothing changed this way; {@link holdRun} first).
   *
   * Why: docs/methodology.md section 2 — ticks at which nothing can change cost nothing, yet every
   * bucket is what ticking each second would give (section 5).
   * @param fromUs - first tick, after the previous one.
   * @param toUs - last tick, `fromUs + k * stepUs` for some k >= 0.
   * @param stepUs - distance between ticks (> 0).
   * @param rate - the series' rate at every tick of the run (finite).
   * @throws RangeError as {@link update}, or when `toUs` is not on the run's grid.
   * @example
   * agg.updateRun(60_000_000, 179_000_000, 1_000_000, 1.25); // 120 ticks at 1.25
   */
  updateRun(fromUs: number, toUs: number, stepUs: number, rate: number): void {
    if (!(stepUs > 0) || !(toUs >= fromUs) || (toUs - fromUs) % stepUs !== 0) {
      throw new RangeError(`OhlcAggregator: run ${fromUs}..${toUs} is not a whole number of ${stepUs} µs steps`);
    }
    if (this.holdRun(fromUs, toUs, stepUs, rate)) return;
    this.update(fromUs, rate);
    if (toUs === fromUs) return;
    if (this.pending > 0) this.settle();
    this.lastTick = toUs;
    const st = this.state;
    const counts = this.counts;
    for (let i = 0, o = 0; i < this.n; i++, o += STRIDE) {
      let t = fromUs + stepUs; // the first tick is in (see update above)
      while (t <= toUs) {
        const end = st[o + S_END];
        if (t < end) {
          // The ticks t .. last all fall in the open bucket.
          const last = Math.min(toUs, t + Math.floor((end - 1 - t) / stepUs) * stepUs);
          if (rate > st[o + S_HIGH]) st[o + S_HIGH] = rate;
          if (rate < st[o + S_LOW]) st[o + S_LOW] = rate;
          st[o + S_CLOSE] = rate;
          st[o + S_TCLOSE] = last;
          counts[i] += (last - t) / stepUs + 1;
          t = last + stepUs;
        } else {
          this.open(i, t, rate);
          t += stepUs;
        }
      }
    }
    this.held(rate);
  }

  /**
   * The earliest end of an open bucket (the first tick at or after it closes that bucket), or
   * Infinity when no bucket is open.
   *
   * @example
   * agg.update(1_500_000, 2); agg.nextClose(); // 2_000_000 with a 1SEC period
   */
  nextClose(): number {
    let end = Infinity;
    for (let i = 0; i < this.n; i++) if (this.counts[i] > 0 && this.state[i * STRIDE + S_END] < end) end = this.state[i * STRIDE + S_END];
    return end;
  }

  /** Emits period i's open bucket, if any, and opens the one holding `tickUs` with its first tick. */
  private open(i: number, tickUs: number, rate: number): void {
    const st = this.state;
    const o = i * STRIDE;
    if (this.counts[i] > 0) this.onClose(i, this.bucketAt(i));
    const len = this.lenUs[i];
    if (len > 0) {
      let r = tickUs % len;
      if (r < 0) r += len;
      const start = tickUs - r + 0;
      st[o + S_START] = start;
      st[o + S_END] = start + len;
    } else {
      const p = this.periods[i];
      st[o + S_START] = bucketStart(tickUs, p);
      st[o + S_END] = bucketEnd(tickUs, p);
    }
    st[o + S_TOPEN] = tickUs;
    st[o + S_TCLOSE] = tickUs;
    st[o + S_OPEN] = rate;
    st[o + S_HIGH] = rate;
    st[o + S_LOW] = rate;
    st[o + S_CLOSE] = rate;
    this.counts[i] = 1;
  }

  /**
   * Closes and emits every open bucket (periods in array order), e.g. at the end of a replay.
   * Later ticks must still be after the last one seen.
   *
   * Why: docs/methodology.md section 5 — a series' last buckets are returned like any other non-empty
   * bucket.
   *
   * @example
   * agg.flush();
   */
  flush(): void {
    if (this.pending > 0) this.settle();
    this.lastRate = Number.NaN;
    this.minEnd = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < this.n; i++) {
      if (this.counts[i] > 0) {
        const b = this.bucketAt(i);
        this.counts[i] = 0;
        this.state.fill(0, i * STRIDE, (i + 1) * STRIDE);
        this.onClose(i, b);
      }
    }
  }

  /**
   * Copies of the still-open buckets, in period order, without closing them. Periods with no
   * open bucket (before the first tick, after {@link flush}) are skipped; use
   * {@link openBucket} to address one period.
   *
   * Why: docs/methodology.md section 5 — lets a service answer a timeseries request whose range ends in
   * the current, unfinished bucket.
   *
   * @example
   * agg.openBuckets().map((b) => b.close);
   */
  openBuckets(): OhlcBucket[] {
    const out: OhlcBucket[] = [];
    for (let i = 0; i < this.n; i++) if (this.counts[i] > 0) out.push(this.bucketAt(i));
    return out;
  }

  /**
   * Copy of the open bucket of period `periodIndex`, or `undefined` if it has none.
   *
   * Why: docs/methodology.md section 5 — same as {@link openBuckets}, for one period.
   *
   * @example
   * agg.openBucket(0)?.high;
   */
  openBucket(periodIndex: number): OhlcBucket | undefined {
    if (!(periodIndex >= 0 && periodIndex < this.n) || this.counts[periodIndex] === 0) {
      return undefined;
    }
    return this.bucketAt(periodIndex);
  }

  /**
   * Exact, plain-JSON snapshot of the aggregator (periods by id, last tick, open state).
   * Restore it with {@link OhlcAggregator.fromJSON}.
   *
   * Why: docs/methodology.md section 7 — a replay resumed from a snapshot gives byte-identical output.
   *
   * @example
   * const text = JSON.stringify(agg); // calls toJSON()
   */
  toJSON(): OhlcAggregatorSnapshot {
    if (this.pending > 0) this.settle();
    return {
      v: 1,
      periods: this.periods.map((p) => p.period_id),
      lastTickUs: this.lastTick === -Infinity ? null : this.lastTick,
      state: Array.from(this.state),
      counts: Array.from(this.counts),
    };
  }

  /**
   * Rebuilds an aggregator from {@link toJSON}'s output; feeding it the rest of the ticks gives
   * exactly the buckets an uninterrupted aggregator would have given.
   *
   * Why: docs/methodology.md section 7 — stop/resume must not change any output.
   *
   * @param json - the snapshot (already parsed).
   * @param periods - the same periods, in the same order, as the snapshotted aggregator.
   * @param onClose - the new close callback.
   * @throws Error if the snapshot is malformed or its period ids differ from `periods`.
   * @example
   * const agg2 = OhlcAggregator.fromJSON(JSON.parse(text), periods, onClose);
   */
  static fromJSON(
    json: OhlcAggregatorSnapshot,
    periods: readonly PeriodRecord[],
    onClose: (periodIndex: number, bucket: OhlcBucket) => void,
  ): OhlcAggregator {
    const n = periods.length;
    const bad = (why: string): never => {
      throw new Error(`OhlcAggregator.fromJSON: ${why}`);
    };
    if (json === null || typeof json !== 'object' || json.v !== 1) bad('not a v1 snapshot');
    if (!Array.isArray(json.periods) || json.periods.length !== n) bad('period count differs');
    for (let i = 0; i < n; i++) {
      if (json.periods[i] !== periods[i].period_id) {
        bad(`period ${i} is ${String(json.periods[i])}, expected ${periods[i].period_id}`);
      }
    }
    const finite = (a: unknown, len: number): a is number[] =>
      Array.isArray(a) && a.length === len && a.every((x) => typeof x === 'number' && Number.isFinite(x));
    if (!finite(json.state, n * STRIDE)) bad('state is not an array of finite numbers');
    if (!finite(json.counts, n) || json.counts.some((c) => c < 0 || !Number.isInteger(c))) {
      bad('counts are not non-negative integers');
    }
    const last = json.lastTickUs;
    if (last !== null && !(typeof last === 'number' && Number.isFinite(last))) bad('bad lastTickUs');
    const agg = new OhlcAggregator(periods, onClose);
    agg.state.set(json.state);
    agg.counts.set(json.counts);
    agg.lastTick = last === null ? -Infinity : last;
    return agg;
  }

  private bucketAt(i: number): OhlcBucket {
    if (this.pending > 0) this.settle();
    const st = this.state;
    const o = i * STRIDE;
    return {
      start: st[o + S_START],
      end: st[o + S_END],
      timeOpen: st[o + S_TOPEN],
      timeClose: st[o + S_TCLOSE],
      open: st[o + S_OPEN],
      high: st[o + S_HIGH],
      low: st[o + S_LOW],
      close: st[o + S_CLOSE],
      count: this.counts[i],
    };
  }
}

/**
 * Combines finer buckets into the buckets of `period`: open/timeOpen from the first, close/
 * timeClose from the last, high = max, low = min, count = sum. Target buckets with no input are
 * absent.
 *
 * Input must be sorted by start, non-overlapping, and each bucket must nest in one bucket of
 * `period` (see `isRollupOf`); otherwise a RangeError is thrown rather than a wrong answer.
 *
 * Why: docs/methodology.md section 5 — "Every period must equal the roll-up of the 1SEC series over the
 * same span"; this is that roll-up (and also serves 1MIN → 1HRS etc.).
 *
 * @throws RangeError for unsorted/overlapping input or a bucket straddling a target boundary.
 * @example
 * rollUp(oneSecondBuckets, getPeriod('1MIN')!); // 1MIN buckets
 */
export function rollUp(buckets: Iterable<OhlcBucket>, period: PeriodRecord): OhlcBucket[] {
  const out: OhlcBucket[] = [];
  let cur: OhlcBucket | undefined;
  let prevEnd = -Infinity;
  for (const b of buckets) {
    if (b.start < prevEnd) {
      throw new RangeError(`rollUp: bucket at ${b.start} overlaps or precedes the previous one`);
    }
    prevEnd = b.end;
    if (cur !== undefined && b.start < cur.end) {
      if (b.end > cur.end) {
        throw new RangeError(`rollUp: bucket [${b.start}, ${b.end}) straddles ${cur.end}`);
      }
      if (b.high > cur.high) cur.high = b.high;
      if (b.low < cur.low) cur.low = b.low;
      cur.close = b.close;
      cur.timeClose = b.timeClose;
      cur.count += b.count;
      continue;
    }
    const start = bucketStart(b.start, period);
    const end = bucketEnd(b.start, period);
    if (b.end > end) {
      throw new RangeError(`rollUp: bucket [${b.start}, ${b.end}) does not nest in ${period.period_id}`);
    }
    cur = {
      start,
      end,
      timeOpen: b.timeOpen,
      timeClose: b.timeClose,
      open: b.open,
      high: b.high,
      low: b.low,
      close: b.close,
      count: b.count,
    };
    out.push(cur);
  }
  return out;
}

/**
 * Buckets of `period` straight from ticks: each tick counts as a bucket with
 * open = high = low = close = rate and timeOpen = timeClose = t, rolled up as in {@link rollUp}.
 *
 * Why: docs/methodology.md section 5 — the reference definition of a bucket from the fresh ticks in it;
 * used to check {@link OhlcAggregator} and for one-off computations.
 *
 * @param points - ticks in strictly increasing `t` (µs).
 * @throws RangeError if the ticks are not strictly increasing.
 * @example
 * rollUpTicks([{ t: 0, rate: 1 }, { t: 30_000_000, rate: 2 }], getPeriod('1MIN')!);
 * // [{ start: 0, end: 60_000_000, timeOpen: 0, timeClose: 30_000_000,
 * //    open: 1, high: 2, low: 1, close: 2, count: 2 }]
 */
export function rollUpTicks(points: Iterable<{ t: number; rate: number }>, period: PeriodRecord): OhlcBucket[] {
  const out: OhlcBucket[] = [];
  let cur: OhlcBucket | undefined;
  let prev = -Infinity;
  for (const { t, rate } of points) {
    if (!(t > prev)) throw new RangeError(`rollUpTicks: tick ${t} is not after ${prev}`);
    prev = t;
    if (cur !== undefined && t < cur.end) {
      if (rate > cur.high) cur.high = rate;
      if (rate < cur.low) cur.low = rate;
      cur.close = rate;
      cur.timeClose = t;
      cur.count += 1;
      continue;
    }
    cur = {
      start: bucketStart(t, period),
      end: bucketEnd(t, period),
      timeOpen: t,
      timeClose: t,
      open: rate,
      high: rate,
      low: rate,
      close: rate,
      count: 1,
    };
    out.push(cur);
  }
  return out;
}

/**
 * One item of `GET /v1/exchangerate/{base}/{quote}/history`, fields in the interface's
 * `ExchangeRatesTimeseriesItem` order.
 *
 * Why: docs/methodology.md section 5 — the timeseries wire shape.
 *
 * @example
 * const item: ExchangeRatesTimeseriesItem = toTimeseriesItem(bucket, formatUs);
 */
export interface ExchangeRatesTimeseriesItem {
  time_period_start: string;
  time_period_end: string;
  time_open: string;
  time_close: string;
  rate_open: number;
  rate_high: number;
  rate_low: number;
  rate_close: number;
}

/**
 * Maps a bucket to its wire item, formatting times with `fmt` (the caller's 7-digit ISO
 * formatter), the rates as written ({@link wireNumber}), and keeping the field order of
 * `ExchangeRatesTimeseriesItem`.
 *
 * Why: docs/methodology.md section 5 — time_period_start/end are the bucket bounds, time_open/close the
 * first/last ticks, rate_* the OHLC values; section 7 — numbers on output.
 *
 * @example
 * toTimeseriesItem(b, (us) => formatTime7(us));
 * // { time_period_start: '2024-01-01T00:00:00.0000000Z', time_period_end: ..., rate_open: ... }
 */
export function toTimeseriesItem(b: OhlcBucket, fmt: (us: number) => string): ExchangeRatesTimeseriesItem {
  return {
    time_period_start: fmt(b.start),
    time_period_end: fmt(b.end),
    time_open: fmt(b.timeOpen),
    time_close: fmt(b.timeClose),
    rate_open: wireNumber(b.open),
    rate_high: wireNumber(b.high),
    rate_low: wireNumber(b.low),
    rate_close: wireNumber(b.close),
  };
}
