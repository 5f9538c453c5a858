import { describe, expect, it } from 'vitest';
import { bucketsFromSeries, resolveSeries } from '../../../src/core/ohlcSeries.js';
import { getPeriod } from '../../../src/core/periods.js';

const S = 1_000_000;

describe('resolveSeries', () => {
  it('follows the pair rate changes under a follow point and leaves out points that change nothing', () => {
    const pts = [
      { tick: 1 * S, rate: Number.NaN, follow: true },
      { tick: 4 * S, rate: 7, follow: false },
      { tick: 6 * S, rate: Number.NaN, follow: true },
    ];
    const rates = [
      { tick: 1 * S, rate: 5, fresh: true },
      { tick: 2 * S, rate: 5, fresh: true }, // only its rank changed: nothing new is fed
      { tick: 3 * S, rate: 6, fresh: false }, // not fresh: nothing is fed
      { tick: 5 * S, rate: 8, fresh: true }, // under an explicit point: not fed
    ];
    expect([...resolveSeries(pts, rates)]).toEqual([
      { tick: 1 * S, rate: 5 },
      { tick: 3 * S, rate: Number.NaN },
      { tick: 4 * S, rate: 7 },
      { tick: 6 * S, rate: 8 },
    ]);
  });

  it('closes both streams when the caller stops early', () => {
    const closed: string[] = [];
    function* stream<T>(name: string, items: T[]): Generator<T> {
      try {
        yield* items;
      } finally {
        closed.push(name);
      }
    }
    const pts = stream('points', [
      { tick: 1 * S, rate: 2, follow: false },
      { tick: 2 * S, rate: 3, follow: false },
      { tick: 3 * S, rate: 4, follow: false },
    ]);
    const rates = stream('rates', [{ tick: 1 * S, rate: 1, fresh: true }]);
    const b = bucketsFromSeries(resolveSeries(pts, rates), { period: getPeriod('1SEC')!, first: 0, end: 1e12, lastTick: 10 * S, limit: 1 });
    expect(b).toEqual([{ start: 1 * S, end: 2 * S, timeOpen: 1 * S, timeClose: 1 * S, open: 2, high: 2, low: 2, close: 2, count: 1 }]);
    expect(closed.sort()).toEqual(['points', 'rates']);
  });
});

describe('bucketsFromSeries', () => {
  it('answers only buckets that start at or after first, also when first is inside a bucket', () => {
    const pts = [{ tick: 1 * S, rate: 5 }];
    const q = { period: getPeriod('10SEC')!, end: 1e12, lastTick: 25 * S, limit: 10 };
    const aligned = bucketsFromSeries(pts, { ...q, first: 10 * S });
    expect(bucketsFromSeries(pts, { ...q, first: 3 * S })).toEqual(aligned);
    expect(aligned.map((b) => [b.start, b.count])).toEqual([
      [10 * S, 10],
      [20 * S, 6],
    ]);
  });
});
