/**
 * Invariants of `xrate plot`'s drawing (src/cli/plot): nice ticks are 1, 2 or 5 times a power of
 * ten and cover the data; the scales map the data into the plot box; time ticks are whole steps
 * inside the range; the SVG is the same bytes for the same data, and every point of the rate
 * line lies in the plot box.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linearScale, niceTicks, timeTicks } from '../../src/cli/plot/scale.js';
import { percentChange, renderCompareSvg } from '../../src/cli/plot/compare.js';
import { renderSvg } from '../../src/cli/plot/svg.js';
import type { ChartData } from '../../src/replay/chart.js';

const RUNS = { seed: 20261124, numRuns: 300 };

const value = fc.double({ min: 1e-8, max: 1e9, noNaN: true, noDefaultInfinity: true });

describe('niceTicks', () => {
  it('steps of 1, 2 or 5 times a power of ten, ascending, covering [min, max], about `count` of them', () => {
    fc.assert(
      fc.property(value, value, fc.integer({ min: 2, max: 10 }), (a, b, count) => {
        const [min, max] = a <= b ? [a, b] : [b, a];
        const t = niceTicks(min, max, count);
        const mant = t.step / 10 ** Math.floor(Math.log10(t.step) + 1e-9);
        expect([1, 2, 5].some((m) => Math.abs(mant - m) < 1e-9)).toBe(true);
        expect(t.lo).toBeLessThanOrEqual(min);
        expect(t.hi).toBeGreaterThanOrEqual(max);
        expect(t.ticks[0]).toBe(t.lo);
        expect(t.ticks.at(-1)).toBe(t.hi);
        expect(t.ticks.length).toBeLessThanOrEqual(2 * count + 3);
        for (let i = 1; i < t.ticks.length; i++) {
          expect(t.ticks[i]).toBeGreaterThan(t.ticks[i - 1]);
          expect(Math.abs(t.ticks[i] - t.ticks[i - 1] - t.step)).toBeLessThanOrEqual(t.step * 1e-6);
        }
        // Each label, written with `decimals`, reads back as its tick (to the step's precision).
        for (const v of t.ticks) expect(Math.abs(Number(v.toFixed(t.decimals)) - v)).toBeLessThanOrEqual(t.step * 1e-6);
      }),
      RUNS,
    );
  });

  it('the scale over the nice domain maps every value of [min, max] into the plot box', () => {
    fc.assert(
      fc.property(value, value, fc.double({ min: 0, max: 1, noNaN: true }), (a, b, f) => {
        const [min, max] = a <= b ? [a, b] : [b, a];
        const t = niceTicks(min, max, 6);
        const fy = linearScale(t.lo, t.hi, 500, 40);
        const y = fy(min + (max - min) * f);
        expect(y).toBeGreaterThanOrEqual(40 - 1e-6);
        expect(y).toBeLessThanOrEqual(500 + 1e-6);
        expect(fy(t.lo)).toBeCloseTo(500, 6);
        expect(fy(t.hi)).toBeCloseTo(40, 6);
      }),
      RUNS,
    );
  });
});

describe('timeTicks', () => {
  it('whole steps of UTC time inside [t0, t1], at most `count` + 1, labelled', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1_600_000_000, max: 1_800_000_000 }), fc.integer({ min: 1, max: 40 * 86_400 }), (t0, span) => {
        const t1 = t0 + span;
        const x = timeTicks(t0, t1, 7);
        expect(x.ticks.length).toBeLessThanOrEqual(8);
        for (const t of x.ticks) {
          expect(t).toBeGreaterThanOrEqual(t0);
          expect(t).toBeLessThanOrEqual(t1);
          expect(t % x.step).toBe(0);
        }
        expect(x.labels.length).toBe(x.ticks.length);
        if (span >= 7 * 60) expect(x.ticks.length).toBeGreaterThanOrEqual(2);
      }),
      RUNS,
    );
  });
});

/** A chart of random series (some gaps), markets, exclusions and candles. */
const chart: fc.Arbitrary<ChartData> = fc
  .record({
    start: fc.integer({ min: 1_700_000_000, max: 1_750_000_000 }),
    rate: fc.array(fc.option(value, { nil: null, freq: 8 }), { minLength: 2, maxLength: 300 }),
    markets: fc.integer({ min: 0, max: 4 }),
    excl: fc.array(
      fc.record({ i: fc.nat(), reason: fc.constantFrom('stale', 'spread', 'rank', 'outlier', 'not_eligible' as const), k: value }),
    ),
    note: fc.option(fc.string({ maxLength: 300 }), { nil: null }),
    // By period: each market's share (some null), for the panel under the rate.
    byPeriod: fc.boolean(),
    shares: fc.array(fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null, freq: 6 }), { minLength: 300, maxLength: 300 }),
  })
  .map(({ start, rate, markets, excl, note, byPeriod, shares }) => {
    const ticks = rate.map((_, i) => start + i);
    const iso = (t: number): string => new Date(t * 1000).toISOString().replace('Z', '0000Z');
    return {
      asset_id_base: 'BTC',
      asset_id_quote: 'USD',
      time_start: iso(ticks[0]),
      time_end: iso(ticks.at(-1)!),
      period_id: '1MIN',
      resolution: byPeriod ? '1MIN' : 'tick',
      source: 'log',
      markets_detail: true,
      note,
      ticks,
      rate,
      markets: Array.from({ length: markets }, (_, m) => ({
        symbol_id: `X${m}_SPOT_BTC_USD`,
        exchange_id: `X${m}`,
        price: rate.map((r) => (r === null ? null : r * (1 + m / 100))),
      })),
      exclusions: excl.map((e) => {
        const t = ticks[e.i % ticks.length];
        return { t, time: iso(t), symbol_id: 'Y_SPOT_BTC_USD', exchange_id: 'Y', reason: e.reason, detail: null, price: e.k };
      }),
      candles: [
        {
          time_period_start: iso(ticks[0]),
          time_period_end: iso(ticks[0] + 60),
          time_open: iso(ticks[0]),
          time_close: iso(ticks[0]),
          rate_open: 2,
          rate_high: 3,
          rate_low: 1,
          rate_close: 2.5,
        },
      ],
      provenance: [],
      point_provenance: rate.map(() => -1),
      weight_share:
        byPeriod && markets > 0
          ? Array.from({ length: markets }, (_, m) => ({
              symbol_id: `X${m}_SPOT_BTC_USD`,
              exchange_id: `X${m}`,
              share: rate.map((_, i) =>
                shares[(i + m * 7) % shares.length] === null ? null : shares[(i + m * 7) % shares.length]! / markets,
              ),
            }))
          : null,
      markets_used: byPeriod && markets > 0 ? rate.map((_, i) => i % (markets + 1)) : null,
    } satisfies ChartData;
  });

describe('renderSvg', () => {
  it('is deterministic, and every point of the rate line lies in the plot box, and of the weight shares in the panel below', () => {
    fc.assert(
      fc.property(chart, (c) => {
        const svg = renderSvg(c);
        expect(renderSvg(structuredClone(c))).toBe(svg);
        const boxes = [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="none" stroke="#555"\/>/g)];
        expect(boxes.length).toBe(c.weight_share ? 2 : 1);
        const [x, y, w, h] = boxes[0].slice(1).map(Number);
        if (c.weight_share) {
          const [px, py, pw, ph] = boxes[1].slice(1).map(Number);
          expect(py).toBeGreaterThan(y + h);
          const areas = [...svg.matchAll(/<path d="([^"]*)Z" fill="#[0-9a-f]+" fill-opacity="0.55"/g)];
          expect(areas.length).toBe(c.weight_share.length);
          for (const a of areas) {
            for (const m of a[1].matchAll(/[ML](-?[\d.]+) (-?[\d.]+)/g)) {
              expect(Number(m[1])).toBeGreaterThanOrEqual(px - 0.01);
              expect(Number(m[1])).toBeLessThanOrEqual(px + pw + 0.01);
              expect(Number(m[2])).toBeGreaterThanOrEqual(py - 0.01);
              expect(Number(m[2])).toBeLessThanOrEqual(py + ph + 0.01);
            }
          }
        }
        const line = /<path d="([^"]*)" fill="none" stroke="#000" stroke-width="2.5"/.exec(svg);
        expect(line !== null).toBe(c.rate.some((r) => r !== null));
        for (const m of line?.[1].matchAll(/[ML](-?[\d.]+) (-?[\d.]+)/g) ?? []) {
          expect(Number(m[1])).toBeGreaterThanOrEqual(x - 0.01);
          expect(Number(m[1])).toBeLessThanOrEqual(x + w + 0.01);
          expect(Number(m[2])).toBeGreaterThanOrEqual(y - 0.01);
          expect(Number(m[2])).toBeLessThanOrEqual(y + h + 0.01);
        }
      }),
      { ...RUNS, numRuns: 100 },
    );
  });
});

describe('renderCompareSvg', () => {
  it('draws each pair as its % change from its first value (0 there), every point in the plot box, deterministic', () => {
    fc.assert(
      fc.property(fc.array(chart, { minLength: 2, maxLength: 4 }), (charts) => {
        for (const c of charts) {
          const pct = percentChange(c.rate);
          const first = c.rate.findIndex((v) => v !== null && v !== 0);
          pct.forEach((v, i) => {
            if (c.rate[i] === null || first < 0) expect(v).toBe(null);
            else expect(v).toBeCloseTo((c.rate[i]! / c.rate[first]! - 1) * 100, 9);
          });
          if (first >= 0) expect(pct[first]).toBe(0);
        }
        const svg = renderCompareSvg(charts);
        expect(renderCompareSvg(structuredClone(charts))).toBe(svg);
        expect(svg).toContain('% change from its first value');
        const [x, y, w, h] = /<rect x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)" fill="none" stroke="#555"\/>/
          .exec(svg)!
          .slice(1)
          .map(Number);
        const lines = [...svg.matchAll(/<path d="([^"]*)" fill="none" stroke="#[0-9a-f]+" stroke-width="2" stroke-linejoin/g)];
        expect(lines.length).toBe(charts.filter((c) => c.rate.some((r) => r !== null)).length);
        for (const l of lines) {
          for (const m of l[1].matchAll(/[ML](-?[\d.]+) (-?[\d.]+)/g)) {
            expect(Number(m[1])).toBeGreaterThanOrEqual(x - 0.01);
            expect(Number(m[1])).toBeLessThanOrEqual(x + w + 0.01);
            expect(Number(m[2])).toBeGreaterThanOrEqual(y - 0.01);
            expect(Number(m[2])).toBeLessThanOrEqual(y + h + 0.01);
          }
        }
      }),
      { ...RUNS, numRuns: 50 },
    );
  });
});
