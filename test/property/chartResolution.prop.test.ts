/**
 * The resolution of a chart (src/answers/chartResolution.ts): tick exactly when the range holds at
 * most 7200 ticks; else a period with no more buckets over the range than the points asked for,
 * the shortest that is available; a longer range (one range inside the other) never gets a
 * shorter period; and the examples of the contract (a day at 1MIN, a year at 6HRS or 1DAY).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bucketsIn,
  CHART_MAX_TICKS,
  CHART_POINTS,
  type ChartResolution,
  chartResolution,
  checkPoints,
  ticksIn,
} from '../../src/answers/chartResolution.js';
import { bucketEnd, bucketStartAtOrAfter, EXCHANGE_RATE_PERIODS, type PeriodRecord } from '../../src/core/periods.js';
import { US_PER_SECOND } from '../../src/core/time.js';

const RUNS = { seed: 20261128, numRuns: 500 };

/** 2024-03-01T00:00:00Z, µs. */
const T0 = 1_709_251_200 * US_PER_SECOND;

/** Ranges from a fraction of a second to about six years, at any µs. */
const range = fc
  .tuple(
    fc.integer({ min: 0, max: 400 * 86_400_000_000 }),
    fc.oneof(fc.integer({ min: 1, max: 3 * 3_600_000_000 }), fc.integer({ min: 1, max: 6 * 365 * 86_400_000_000 })),
  )
  .map(([a, len]) => ({ from: T0 + a, to: T0 + a + len }));

const points = fc.integer({ min: CHART_POINTS.min, max: CHART_POINTS.max });

/** A subset of the periods (some always, as a stored 1MIN, 1HRS, 1DAY make every period from 1MIN on). */
const availability = fc.oneof(
  fc.constant((_p: PeriodRecord) => true),
  fc.constant((p: PeriodRecord) => p.length_seconds >= 60),
  fc
    .array(fc.boolean(), { minLength: EXCHANGE_RATE_PERIODS.length, maxLength: EXCHANGE_RATE_PERIODS.length })
    .map((bits) => (p: PeriodRecord) => bits[EXCHANGE_RATE_PERIODS.indexOf(p)]),
);

/** Seconds of a resolution: 0 for tick, Infinity for none. */
function length(r: ChartResolution | undefined): number {
  return r === undefined ? Number.POSITIVE_INFINITY : r.kind === 'tick' ? 0 : r.period.length_seconds;
}

/** The buckets a chart draws: those whose start lies in [from, to). */
function drawn(from: number, to: number, p: PeriodRecord): number {
  let n = 0;
  for (let s = bucketStartAtOrAfter(from, p); s < to; s = bucketEnd(s, p)) n++;
  return n;
}

describe('chartResolution', () => {
  it('is tick exactly when the range holds at most 7200 ticks, else a period of at most `points` buckets, the shortest available', () => {
    fc.assert(
      fc.property(range, points, availability, ({ from, to }, n, available) => {
        const r = chartResolution(from, to, n, available);
        expect(r?.kind === 'tick').toBe(ticksIn(from, to) <= CHART_MAX_TICKS);
        if (r?.kind === 'tick') {
          expect(r.points).toBe(ticksIn(from, to));
          return;
        }
        for (const p of EXCHANGE_RATE_PERIODS) {
          const fits = bucketsIn(from, to, p) <= n && available(p);
          if (r === undefined) expect(fits).toBe(false);
          else if (p.length_seconds < r.period.length_seconds) expect(fits).toBe(false);
        }
        if (r === undefined) return;
        expect(available(r.period)).toBe(true);
        expect(r.points).toBe(bucketsIn(from, to, r.period));
        expect(r.points).toBeLessThanOrEqual(n);
        expect(drawn(from, to, r.period)).toBeLessThanOrEqual(r.points);
      }),
      RUNS,
    );
  });

  it('never gives a longer range (one holding the other) a shorter period, nor fewer points a shorter one', () => {
    fc.assert(
      fc.property(
        range,
        fc.integer({ min: 0, max: 90 * 86_400_000_000 }),
        fc.integer({ min: 0, max: 90 * 86_400_000_000 }),
        points,
        points,
        availability,
        ({ from, to }, before, after, n, m, available) => {
          const inner = chartResolution(from, to, n, available);
          expect(length(chartResolution(from - before, to + after, n, available))).toBeGreaterThanOrEqual(length(inner));
          const [few, many] = n < m ? [n, m] : [m, n];
          expect(length(chartResolution(from, to, few, available))).toBeGreaterThanOrEqual(
            length(chartResolution(from, to, many, available)),
          );
        },
      ),
      RUNS,
    );
  });

  it('charts a minute to two hours by tick, a day at 1MIN, a year at 6HRS (2000 points) or 1DAY (400)', () => {
    const at = (seconds: number, n = CHART_POINTS.default): string | undefined => chartResolution(T0, T0 + seconds * US_PER_SECOND, n)?.id;
    expect(at(60)).toBe('tick');
    expect(at(7199)).toBe('tick');
    expect(at(7200)).toBe('4SEC'); // 7201 ticks: 1800 buckets of 4 s
    expect(at(7200, 5000)).toBe('2SEC');
    expect(at(4 * 3600)).toBe('10SEC');
    expect(at(86_400)).toBe('1MIN');
    expect(at(365 * 86_400)).toBe('6HRS');
    expect(at(365 * 86_400, 400)).toBe('1DAY');
    expect(at(40 * 365 * 86_400, 50)).toBeUndefined();
    // From a database storing 1MIN, 1HRS and 1DAY: the periods rolled up from them.
    expect(chartResolution(T0, T0 + 4 * 3600 * US_PER_SECOND, 2000, (p) => p.length_seconds % 60 === 0)?.id).toBe('1MIN');
  });

  it('takes 50 to 5000 points, and names the parameter otherwise', () => {
    expect(checkPoints(50)).toBe(50);
    expect(checkPoints(5000)).toBe(5000);
    for (const bad of [49, 5001, 1.5, Number.NaN]) {
      expect(() => checkPoints(bad)).toThrow(`points must be an integer in 50..5000, got ${bad}`);
      expect(() => checkPoints(bad, '--width')).toThrow(expect.objectContaining({ code: 'usage', field: '--width' }));
    }
  });
});
