/**
 * OHLC buckets from a tracked pair's change series (docs/methodology.md section 5, "Buckets from
 * changes").
 *
 * A tracked pair's OHLC aggregator receives, at every tick, the pair's fresh rate or nothing. That
 * input is fully described by its changes: a point `(tick, rate)` says that from `tick` on, at
 * every tick (one per second) up to the next point, the aggregator receives `rate` (NaN: nothing).
 * So every bucket of every period can be computed from the points alone, exactly as the
 * aggregator would have made it ({@link bucketsFromSeries}): open/close are the first/last rates fed, high/low the extremes,
 * `timeOpen`/`timeClose` the first and last tick fed, `count` the number of ticks fed. A replay
 * database stores the points instead of the one-second buckets, and answers the fine periods from
 * them at a cost that follows the changes and the buckets asked for, not the seconds.
 *
 * For a tracked direct pair the points would repeat its rate changes: what is fed is, nearly
 * always, the pair's own rate whenever it is fresh. So the engine reports a *follow* point for
 * that ("from here on, the pair's rate changes say it") and explicit points only for the rest;
 * {@link resolveSeries} merges them with the pair's rate changes back into the points.
 *
 * @module
 */

import type { OhlcBucket } from './ohlc.js';
import { bucketEnd, bucketStart, bucketStartAtOrAfter, type PeriodRecord } from './periods.js';
import { US_PER_SECOND } from './time.js';

/** One change of a tracked pair's fed rate: from `tick` on, `rate` (NaN: no fresh rate). */
export interface SeriesPoint {
  /** Tick, µs (a whole second). */
  tick: number;
  /** The rate fed from this tick on; NaN when none is. */
  rate: number;
}

/** A change as the engine reports it: `rate` from `tick` on, or with `follow`, the pair's own fresh rate. */
export interface StoredSeriesPoint {
  tick: number;
  /** The rate fed from this tick on; NaN when none is (ignored with `follow`). */
  rate: number;
  follow: boolean;
}

/** A change of the pair's own rate or freshness (a row of its rate changes). */
export interface RateChangePoint {
  tick: number;
  /** NaN when the pair has no rate. */
  rate: number;
  fresh: boolean;
}

/**
 * The points of a series from the engine's reported changes and the pair's rate changes, both in
 * increasing tick order: at each tick where either changes, the rate fed from then on (the pair's
 * own rate if fresh, under a follow point; else the explicit rate). Points that change nothing
 * are left out. To resolve from a time on, give each stream from its last item before it.
 *
 * @example
 * ```ts
 * const pts = [{ tick: 1e6, rate: NaN, follow: true }, { tick: 4e6, rate: 7, follow: false }];
 * const rates = [{ tick: 1e6, rate: 5, fresh: true }, { tick: 3e6, rate: 6, fresh: true }];
 * [...resolveSeries(pts, rates)]; // [{ tick: 1e6, rate: 5 }, { tick: 3e6, rate: 6 }, { tick: 4e6, rate: 7 }]
 * ```
 */
export function* resolveSeries(points: Iterable<StoredSeriesPoint>, rates: Iterable<RateChangePoint>): Generator<SeriesPoint> {
  const pi = points[Symbol.iterator]();
  const ri = rates[Symbol.iterator]();
  try {
    let p = pi.next();
    let r = ri.next();
    let follow = false;
    let explicit = Number.NaN;
    let own = Number.NaN;
    let last = Number.NaN;
    while (!p.done || !r.done) {
      const tick = p.done ? r.value.tick : r.done ? p.value.tick : Math.min(p.value.tick, r.value.tick);
      while (!p.done && p.value.tick === tick) {
        follow = p.value.follow;
        explicit = follow ? Number.NaN : p.value.rate;
        p = pi.next();
      }
      while (!r.done && r.value.tick === tick) {
        own = r.value.fresh ? r.value.rate : Number.NaN;
        r = ri.next();
      }
      const v = follow ? own : explicit;
      if (v === last || (Number.isNaN(v) && Number.isNaN(last))) continue;
      last = v;
      yield { tick, rate: v };
    }
  } finally {
    // Stopped early (the caller broke out): close both streams (a database cursor each).
    pi.return?.();
    ri.return?.();
  }
}

/** What {@link bucketsFromSeries} answers. */
export interface SeriesBucketQuery {
  /** The period of the buckets. */
  period: PeriodRecord;
  /** Buckets whose start lies in [first, end) are answered. */
  first: number;
  end: number;
  /** The last tick computed (the series says nothing past it). */
  lastTick: number;
  /** At most this many buckets. */
  limit: number;
}

/**
 * The buckets of `q.period` whose start lies in [first, end), oldest first, at most `limit`,
 * exactly as an {@link OhlcAggregator} fed the series tick by tick would close them (a bucket
 * holding `lastTick` is cut there, as a flush at the end of a replay cuts it).
 *
 * `points` must be in increasing tick order and start with the last point before `first`, if
 * there is one; points past the last bucket asked for may be left out.
 *
 * @example
 * ```ts
 * // 5.0 from tick 10 s, none from 13 s, 6.0 from 15 s; ticks through 16 s.
 * const pts = [{ tick: 10e6, rate: 5 }, { tick: 13e6, rate: NaN }, { tick: 15e6, rate: 6 }];
 * bucketsFromSeries(pts, { period: getPeriod('10SEC')!, first: 10e6, end: 20e6, lastTick: 16e6, limit: 10 });
 * // [{ start: 10e6, end: 20e6, timeOpen: 10e6, timeClose: 16e6, open: 5, high: 6, low: 5, close: 6, count: 5 }]
 * ```
 */
export function bucketsFromSeries(points: Iterable<SeriesPoint>, q: SeriesBucketQuery): OhlcBucket[] {
  const { period, end, lastTick, limit } = q;
  // Buckets start at or after `first`: from the first bucket boundary at or after it.
  const first = bucketStartAtOrAfter(q.first, period);
  const out: OhlcBucket[] = [];
  let cur: OhlcBucket | undefined;
  let done = limit <= 0 || first >= end;

  /** Feeds `rate` at every tick in [a, b]; sets `done` past the last bucket asked for. */
  const run = (a: number, b: number, rate: number): void => {
    let t = a;
    while (t <= b) {
      const start = bucketStart(t, period);
      if (start >= end) {
        done = true;
        return;
      }
      const bEnd = bucketEnd(t, period);
      const last = Math.min(b, bEnd - US_PER_SECOND);
      const n = (last - t) / US_PER_SECOND + 1;
      if (cur !== undefined && cur.start === start) {
        if (rate > cur.high) cur.high = rate;
        if (rate < cur.low) cur.low = rate;
        cur.close = rate;
        cur.timeClose = last;
        cur.count += n;
      } else {
        if (cur !== undefined) {
          out.push(cur);
          if (out.length >= limit) {
            cur = undefined;
            done = true;
            return;
          }
        }
        cur = { start, end: bEnd, timeOpen: t, timeClose: last, open: rate, high: rate, low: rate, close: rate, count: n };
      }
      t = last + US_PER_SECOND;
    }
  };

  let prev: SeriesPoint | undefined;
  if (!done) {
    for (const p of points) {
      if (prev !== undefined && !Number.isNaN(prev.rate)) {
        run(Math.max(prev.tick, first), Math.min(p.tick - US_PER_SECOND, lastTick), prev.rate);
        if (done) break;
      }
      prev = p;
    }
    if (!done && prev !== undefined && !Number.isNaN(prev.rate)) run(Math.max(prev.tick, first), lastTick, prev.rate);
  }
  if (cur !== undefined && out.length < limit) out.push(cur);
  return out;
}
