/**
 * The chart page's pure helpers (ui/helpers.js), run as the page runs them: the script evaluated
 * in a context of its own, read back from `globalThis.xrateHelpers`. Axis labels have the
 * precision their step needs (adjacent labels differ), time labels fit the step, a market keeps
 * its colour, counts have their noun.
 */
import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

interface Helpers {
  utc(t: number): string;
  iso(t: number): string;
  num(v: number | null): string;
  plural(n: number, noun: string): string;
  span(seconds: number): string;
  periodSeconds(id: string): number;
  numLabels(splits: number[], incr: number): string[];
  timeLabels(splits: number[], incr: number): string[];
  colorFor(symbol: string, taken: string[]): string;
  markerPath(reason: string): string;
  axisWidth(values: (number | null)[]): number;
  queryOf(url: URL): { base: string; quote: string; from: string; to: string; period: string };
  PALETTE: string[];
  MARKERS: Record<string, string>;
}

const context: { xrateHelpers?: Helpers } = {};
runInNewContext(readFileSync(new URL('../../../ui/helpers.js', import.meta.url), 'utf8'), context);
const h = context.xrateHelpers!;
const SEED = { seed: 20261128, numRuns: 500 };
const T = Date.UTC(2024, 2, 1, 4, 30) / 1000;

describe('value axis labels', () => {
  it('write ETH/BTC with the decimals its step needs', () => {
    expect(h.numLabels([0.0561, 0.0561 + 0.0001, 0.0563], 0.0001)).toEqual(['0.0561', '0.0562', '0.0563']);
    expect(h.numLabels([0.05475, 0.055, 0.05525], 0.00025)).toEqual(['0.05475', '0.05500', '0.05525']);
    expect(h.numLabels([62400, 62450, 62500], 50)).toEqual(['62,400', '62,450', '62,500']);
    expect(h.numLabels([0.000011385, 0.00001139], 5e-9)).toEqual(['0.000011385', '0.000011390']);
    expect(h.numLabels([-0.5, 0, 0.5], 0.5)).toEqual(['-0.5', '0.0', '0.5']);
  });

  it('never give two adjacent splits the same label (uPlot steps: 1, 2, 2.5, 5 times a power of ten)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 2, 2.5, 5),
        fc.integer({ min: -12, max: 6 }),
        fc.integer({ min: -1_000_000, max: 1_000_000 }),
        fc.integer({ min: 2, max: 12 }),
        (m, e, k, n) => {
          const incr = m * 10 ** e;
          const splits = Array.from({ length: n }, (_, i) => (k + i) * incr);
          const labels = h.numLabels(splits, incr);
          for (let i = 1; i < n; i++) expect(labels[i]).not.toBe(labels[i - 1]);
          // and each label reads back as its split
          for (let i = 0; i < n; i++) expect(Number(labels[i].replaceAll(',', ''))).toBeCloseTo(splits[i], Math.max(0, 1 - e));
        },
      ),
      SEED,
    );
  });
});

describe('time axis labels', () => {
  it('fit the step: seconds, minutes, days, months, with the date or year under the first and where it changes', () => {
    expect(h.timeLabels([T, T + 30], 30)).toEqual(['04:30:00\n2024-03-01', '04:30:30']);
    expect(h.timeLabels([T, T + 3600 * 20], 3600 * 20)).toEqual(['04:30\n2024-03-01', '00:30\n2024-03-02']);
    const day = Date.UTC(2024, 11, 30) / 1000;
    expect(h.timeLabels([day, day + 86400, day + 2 * 86400], 86400)).toEqual(['Dec 30\n2024', 'Dec 31', 'Jan 1\n2025']);
    expect(h.timeLabels([Date.UTC(2023, 10, 1) / 1000, Date.UTC(2023, 11, 1) / 1000, Date.UTC(2024, 0, 1) / 1000], 30 * 86400)).toEqual([
      'Nov\n2023',
      'Dec',
      'Jan\n2024',
    ]);
  });
});

describe('colours and markers', () => {
  it('give a market the same colour from its id, and distinct markets distinct colours while the palette lasts', () => {
    const ids = ['BINANCE_SPOT_ETH_BTC', 'BITSTAMP_SPOT_ETH_BTC', 'BYBIT_SPOT_ETH_BTC', 'COINBASE_SPOT_ETH_BTC', 'OKX_SPOT_ETH_BTC'];
    const taken: string[] = [];
    for (const id of ids) taken.push(h.colorFor(id, taken));
    expect(new Set(taken).size).toBe(ids.length);
    expect(ids.map((id, i) => h.colorFor(id, taken.slice(0, i)))).toEqual(taken);
    expect(h.colorFor('BINANCE_SPOT_ETH_BTC', [])).toBe(taken[0]);
    const all: string[] = [];
    for (let i = 0; i < h.PALETTE.length; i++) all.push(h.colorFor(`M${i}`, all));
    expect(new Set(all).size).toBe(h.PALETTE.length);
    expect(h.PALETTE).not.toContain('#000000');
  });

  it('shape a marker by the reason, one shape per reason', () => {
    const reasons = ['not_spot', 'not_legitimate', 'not_eligible', 'no_quote', 'spread', 'stale', 'rank', 'outlier'];
    expect(new Set(reasons.map((r) => h.markerPath(r))).size).toBe(reasons.length);
    expect(Object.keys(h.MARKERS).sort()).toEqual([...reasons].sort());
  });
});

describe('the address and the axis width', () => {
  it('read the chart of an address: pair, from, to, period, or the route names of the range', () => {
    expect(h.queryOf(new URL('http://x/?pair=ETH/BTC&from=2024-03-01T04:30:00Z&to=2024-03-01T05:00:00Z&period=5min'))).toEqual({
      base: 'ETH',
      quote: 'BTC',
      from: '2024-03-01T04:30:00Z',
      to: '2024-03-01T05:00:00Z',
      period: '5MIN',
    });
    expect(h.queryOf(new URL('http://x/?pair=SOL/USD&time_start=2024-03-01&period_id=1HRS'))).toEqual({
      base: 'SOL',
      quote: 'USD',
      from: '2024-03-01',
      to: '',
      period: '1HRS',
    });
    expect(h.queryOf(new URL('http://x/?pair=BTC'))).toEqual({ base: 'BTC', quote: 'USD', from: '', to: '', period: '' });
  });

  it('make the value axis wide enough for the longest label of the range', () => {
    expect(h.axisWidth([null])).toBe(64);
    expect(h.axisWidth([62_300.5, null, 62_541.2])).toBe(24 + 7 * '62,541'.length);
    // ETH/BTC over a narrow range: six decimals at most (a step of 0.000025 needs six)
    expect(h.axisWidth([0.05546, 0.0561])).toBe(24 + 7 * '0.056100'.length);
    expect(h.axisWidth([0.000011385, 0.000011391])).toBeGreaterThan(h.axisWidth([0.05546, 0.0561]));
  });
});

describe('words and times', () => {
  it('count with the noun in the singular for one', () => {
    expect(h.plural(1, 'market')).toBe('1 market');
    expect(h.plural(4, 'market')).toBe('4 markets');
    expect(h.plural(1201, 'tick')).toBe('1,201 ticks');
    expect(h.plural(0, 'candle')).toBe('0 candles');
  });

  it('say a span, a period and a time', () => {
    expect(h.span(1200)).toBe('20 minutes');
    expect(h.span(3 * 86400)).toBe('3 days');
    expect(h.span(3600)).toBe('60 minutes');
    expect(h.span(365 * 86400)).toBe('365 days');
    expect(h.span(3 * 365.25 * 86400)).toBe('3 years');
    expect(h.periodSeconds('5MIN')).toBe(300);
    expect(h.periodSeconds('6HRS')).toBe(21600);
    expect(h.periodSeconds('1MTH')).toBe(0);
    expect(h.iso(T)).toBe('2024-03-01T04:30:00Z');
    expect(h.iso(T + 0.25)).toBe('2024-03-01T04:30:00.250Z');
    expect(h.utc(T)).toBe('2024-03-01 04:30:00');
    expect(h.num(0.0561234567891)).toBe('0.05612345679');
    expect(h.num(null)).toBe('-');
  });
});
