/**
 * Buckets from changes (docs/methodology.md section 5): for any rate series fed tick by tick (one
 * tick a second, a fresh rate or none at each), the buckets {@link bucketsFromSeries} makes from
 * the series' changes alone equal those the OHLC aggregator closes, for every period, any window
 * [first, end) and any limit; and the changes the engine reports for a tracked pair, resolved with
 * the pair's rate changes, describe exactly what its aggregator was fed (direct pairs, which
 * follow their rate changes, and cross and reversed pairs, told point by point).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/core/engine.js';
import { OhlcAggregator, type OhlcBucket } from '../../src/core/ohlc.js';
import {
  bucketsFromSeries,
  type RateChangePoint,
  resolveSeries,
  type SeriesPoint,
  type StoredSeriesPoint,
} from '../../src/core/ohlcSeries.js';
import { bucketStart, EXCHANGE_RATE_PERIODS, getPeriod, type PeriodRecord } from '../../src/core/periods.js';
import { logArb } from './arbitraries.js';

const S = 1_000_000;
const RUNS = { seed: 20261123, numRuns: 300 };
const SECOND_PERIODS = EXCHANGE_RATE_PERIODS.filter((p) => p.length_months === 0 && p.length_seconds <= 86_400);

/** Runs of ticks at one rate (NaN: no fresh rate), as values per tick. */
const seriesArb = fc
  .array(
    fc.record({
      len: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 400 })),
      rate: fc.oneof(
        { arbitrary: fc.constantFrom(1, 2, 2.5, 100), weight: 3 },
        { arbitrary: fc.double({ min: 0.001, max: 1e6, noNaN: true }), weight: 2 },
        { arbitrary: fc.constant(Number.NaN), weight: 2 },
      ),
    }),
    { minLength: 1, maxLength: 30 },
  )
  .map((runs) => runs.flatMap((r) => Array.from({ length: r.len }, () => r.rate)));

/** What the aggregator closes and what the change series says, fed `values` from tick `t0`. */
function feed(values: number[], t0: number, period: PeriodRecord): { buckets: OhlcBucket[]; points: SeriesPoint[]; lastTick: number } {
  const buckets: OhlcBucket[] = [];
  const agg = new OhlcAggregator([period], (_i, b) => buckets.push(b));
  const points: SeriesPoint[] = [];
  let last = Number.NaN;
  values.forEach((v, i) => {
    const T = t0 + i * S;
    if (!(v === last || (Number.isNaN(v) && Number.isNaN(last)))) points.push({ tick: T, rate: v });
    last = v;
    if (!Number.isNaN(v)) agg.update(T, v);
  });
  agg.flush();
  return { buckets, points, lastTick: t0 + (values.length - 1) * S };
}

describe('bucketsFromSeries', () => {
  it('equals the aggregator fed tick by tick, for any period, window and limit', () => {
    fc.assert(
      fc.property(
        seriesArb,
        fc.integer({ min: 0, max: 200_000 }),
        fc.constantFrom(...SECOND_PERIODS),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 50 }),
        (values, t0s, period, a, b, limit) => {
          const t0 = 1_709_251_200 * S + t0s * S;
          const { buckets, points, lastTick } = feed(values, t0, period);
          // The whole series.
          expect(
            bucketsFromSeries(points, { period, first: bucketStart(t0, period), end: Number.MAX_SAFE_INTEGER, lastTick, limit: 1e9 }),
          ).toEqual(buckets);
          if (buckets.length === 0) return;
          // A window of whole buckets and a limit, given the last point before it and the points in it.
          const starts = buckets.map((x) => x.start);
          const first = starts[a % starts.length];
          const end = starts[b % starts.length] + 1;
          const want = buckets.filter((x) => x.start >= first && x.start < end).slice(0, limit);
          const before = points.filter((p) => p.tick < first).slice(-1);
          const given = [...before, ...points.filter((p) => p.tick >= first)];
          expect(bucketsFromSeries(given, { period, first, end, lastTick, limit })).toEqual(want);
        },
      ),
      RUNS,
    );
  });

  it('gives nothing for an empty window, a zero limit or a series of no rate', () => {
    const p = getPeriod('10SEC')!;
    const pts = [{ tick: 10 * S, rate: 5 }];
    expect(bucketsFromSeries(pts, { period: p, first: 20 * S, end: 20 * S, lastTick: 30 * S, limit: 5 })).toEqual([]);
    expect(bucketsFromSeries(pts, { period: p, first: 10 * S, end: 30 * S, lastTick: 30 * S, limit: 0 })).toEqual([]);
    expect(bucketsFromSeries([{ tick: 10 * S, rate: Number.NaN }], { period: p, first: 0, end: 1e9, lastTick: 30 * S, limit: 5 })).toEqual(
      [],
    );
  });
});

describe('the engine reports the changes of what it feeds its tracked pairs', () => {
  it('on random logs, every period of every tracked pair follows from the reported changes', () => {
    let compared = 0;
    let followed = 0;
    let explicit = 0;
    fc.assert(
      fc.property(logArb(), (log) => {
        const periods = ['1SEC', '5SEC', '1MIN'].map((id) => getPeriod(id)!);
        const buckets = new Map<string, OhlcBucket[]>();
        const points = new Map<string, StoredSeriesPoint[]>();
        const rates = new Map<string, RateChangePoint[]>();
        const engine = createEngine(log.config, {
          onBucket: (tr, p, b) => {
            const k = `${tr.base}/${tr.quote} ${p.period_id}`;
            buckets.set(k, [...(buckets.get(k) ?? []), b]);
          },
          onSeries: (tr, tick, rate, follow) => {
            const k = `${tr.base}/${tr.quote}`;
            points.set(k, [...(points.get(k) ?? []), { tick, rate, follow }]);
          },
          onPairRate: (c) => {
            const k = `${c.base}/${c.quote}`;
            rates.set(k, [...(rates.get(k) ?? []), { tick: c.tick, rate: c.rate ?? Number.NaN, fresh: c.fresh }]);
          },
        });
        const ids = periods.map((p) => p.period_id);
        // A cross pair and reversed pairs, told point by point; then every direct pair, which follows its rate changes.
        for (const [b, q] of [
          ['ETH', 'EUR'],
          ['EUR', 'BTC'],
          ['USD', 'ETH'],
        ])
          engine.track(b, q, ids);
        engine.trackDirectPairs(ids);
        for (const e of log.events) engine.apply(e);
        engine.advanceTo(log.end);
        const lastTick = engine.lastTickTime;
        engine.flush();
        if (lastTick === undefined) return;
        for (const tr of engine.trackedPairs()) {
          const k = `${tr.base}/${tr.quote}`;
          const stored = points.get(k) ?? [];
          if (stored.some((p) => p.follow)) followed++;
          explicit += stored.filter((p) => !p.follow && !Number.isNaN(p.rate)).length;
          const pts: SeriesPoint[] = [...resolveSeries(stored, rates.get(k) ?? [])];
          for (const p of periods) {
            const want = buckets.get(`${tr.base}/${tr.quote} ${p.period_id}`) ?? [];
            const got = bucketsFromSeries(pts, {
              period: p,
              first: pts.length > 0 ? bucketStart(pts[0].tick, p) : 0,
              end: Number.MAX_SAFE_INTEGER,
              lastTick,
              limit: 1e9,
            });
            expect(got).toEqual(want);
            compared += want.length;
          }
        }
      }),
      { seed: 20261123, numRuns: 60 },
    );
    expect(compared).toBeGreaterThan(1000);
    expect(followed).toBeGreaterThan(20);
    expect(explicit).toBeGreaterThan(100);
  });
});
