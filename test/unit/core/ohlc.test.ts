import { describe, expect, it } from 'vitest';
import { OhlcAggregator, rollUp, rollUpTicks, toTimeseriesItem, type OhlcBucket } from '../../../src/core/ohlc.js';
import { EXCHANGE_RATE_PERIODS, type PeriodRecord } from '../../../src/core/periods.js';
import { P, US, utc } from './periodHelpers.js';

type Closed = { i: number; b: OhlcBucket };
function collect(periods: readonly PeriodRecord[]): { agg: OhlcAggregator; out: Closed[] } {
  const out: Closed[] = [];
  const agg = new OhlcAggregator(periods, (i, b) => out.push({ i, b }));
  return { agg, out };
}

describe('OhlcAggregator', () => {
  it('computes OHLC, times and count; closes on the first tick at or past the end', () => {
    const { agg, out } = collect([P('1SEC'), P('1MIN')]);
    agg.update(0, 2);
    agg.update(200_000, 3);
    agg.update(400_000, 1);
    agg.update(999_999, 2.5);
    expect(out).toEqual([]);
    agg.update(US, 4); // exactly at the next 1SEC start: belongs to the new bucket
    expect(out).toEqual([
      {
        i: 0,
        b: { start: 0, end: US, timeOpen: 0, timeClose: 999_999, open: 2, high: 3, low: 1, close: 2.5, count: 4 },
      },
    ]);
    expect(agg.openBuckets()).toEqual([
      { start: US, end: 2 * US, timeOpen: US, timeClose: US, open: 4, high: 4, low: 4, close: 4, count: 1 },
      { start: 0, end: 60 * US, timeOpen: 0, timeClose: US, open: 2, high: 4, low: 1, close: 4, count: 5 },
    ]);
    expect(agg.openBucket(1)?.count).toBe(5);
    expect(agg.openBucket(2)).toBeUndefined();
    agg.update(60 * US, 5); // closes both, 1SEC first
    expect(out.slice(1).map((c) => [c.i, c.b.start, c.b.end, c.b.count])).toEqual([
      [0, US, 2 * US, 1],
      [1, 0, 60 * US, 5],
    ]);
  });

  it('skips empty buckets (gap of several periods)', () => {
    const { agg, out } = collect([P('1SEC')]);
    agg.update(500_000, 1);
    agg.update(10 * US + 1, 2);
    agg.flush();
    expect(out.map((c) => c.b.start)).toEqual([0, 10 * US]);
  });

  it('handles negative times', () => {
    const { agg, out } = collect([P('1SEC'), P('1MIN')]);
    agg.update(-60 * US - 1, 1);
    agg.update(-US, 2);
    agg.update(-1, 3);
    agg.update(0, 4);
    agg.flush();
    expect(out.map((c) => [c.i, c.b.start, c.b.end, c.b.open, c.b.close, c.b.count])).toEqual([
      [0, -61 * US, -60 * US, 1, 1, 1],
      [1, -120 * US, -60 * US, 1, 1, 1],
      [0, -US, 0, 2, 3, 2],
      [1, -60 * US, 0, 2, 3, 2],
      [0, 0, US, 4, 4, 1],
      [1, 0, 60 * US, 4, 4, 1],
    ]);
  });

  it('month periods: leap February, 3MTH quarters', () => {
    const { agg, out } = collect([P('1MTH'), P('3MTH')]);
    agg.update(utc(2024, 1, 31, 23, 59, 59), 1);
    agg.update(utc(2024, 2, 1), 2); // new month, same quarter
    agg.update(utc(2024, 2, 29, 23, 59, 59) + 999_999, 3);
    agg.update(utc(2024, 3, 1), 4);
    agg.update(utc(2024, 4, 1), 5); // new quarter
    agg.flush();
    const m = out.filter((c) => c.i === 0).map((c) => [c.b.start, c.b.end, c.b.count]);
    const q = out.filter((c) => c.i === 1).map((c) => [c.b.start, c.b.end, c.b.count]);
    expect(m).toEqual([
      [utc(2024, 1), utc(2024, 2), 1],
      [utc(2024, 2), utc(2024, 3), 2],
      [utc(2024, 3), utc(2024, 4), 1],
      [utc(2024, 4), utc(2024, 5), 1],
    ]);
    expect(q).toEqual([
      [utc(2024, 1), utc(2024, 4), 4],
      [utc(2024, 4), utc(2024, 7), 1],
    ]);
  });

  it('flush emits every open bucket in period order and leaves nothing open', () => {
    const periods = [P('1MIN'), P('1SEC'), P('1DAY')];
    const { agg, out } = collect(periods);
    agg.flush(); // nothing open: no-op
    expect(out).toEqual([]);
    agg.update(5 * US, 1);
    agg.flush();
    expect(out.map((c) => c.i)).toEqual([0, 1, 2]);
    expect(agg.openBuckets()).toEqual([]);
    agg.flush();
    expect(out).toHaveLength(3);
    agg.update(5 * US + 1, 2); // same buckets again, reopened
    agg.flush();
    expect(out.slice(3).map((c) => [c.i, c.b.start, c.b.count])).toEqual([
      [0, 0, 1],
      [1, 5 * US, 1],
      [2, 0, 1],
    ]);
  });

  it('onClose gets fresh objects that later updates do not touch', () => {
    const { agg, out } = collect([P('1SEC')]);
    agg.update(0, 1);
    agg.update(US, 2);
    const first = out[0].b;
    const copy = { ...first };
    agg.update(2 * US, 3);
    agg.flush();
    expect(first).toEqual(copy);
    expect(out[1].b).not.toBe(first);
    const open = agg.openBuckets();
    expect(open).toEqual([]);
  });

  it('rejects ticks that are not strictly increasing, and non-finite rates', () => {
    const { agg } = collect([P('1SEC')]);
    agg.update(10, 1);
    expect(() => agg.update(10, 1)).toThrow(RangeError);
    expect(() => agg.update(9, 1)).toThrow(RangeError);
    expect(() => agg.update(Number.NaN, 1)).toThrow(RangeError);
    expect(() => agg.update(11, Number.NaN)).toThrow(RangeError);
    expect(() => agg.update(11, Infinity)).toThrow(RangeError);
    agg.update(11, 2);
    expect(agg.openBucket(0)?.count).toBe(2);
  });

  it('a tick at the rate of the one before is counted as any other; its close keeps the sign of a zero', () => {
    const { agg, out } = collect([P('1MIN'), P('1HRS')]);
    agg.update(1 * US, 1.5);
    agg.update(2 * US, 1.5);
    agg.update(3 * US, 1.5);
    expect(agg.openBucket(0)).toEqual({
      start: 0,
      end: 60 * US,
      timeOpen: US,
      timeClose: 3 * US,
      open: 1.5,
      high: 1.5,
      low: 1.5,
      close: 1.5,
      count: 3,
    });
    agg.updateRun(4 * US, 59 * US, US, 1.5);
    agg.update(60 * US, 1.5); // closes the minute: the same rate past the earliest end
    expect(out.map((c) => [c.i, c.b.count, c.b.timeClose])).toEqual([[0, 59, 59 * US]]);
    expect(agg.openBucket(1)).toMatchObject({ timeClose: 60 * US, count: 60 });
    agg.update(61 * US, 0);
    agg.update(62 * US, -0);
    expect(Object.is(agg.openBucket(0)?.close, -0)).toBe(true);
    expect(agg.openBucket(1)).toMatchObject({ low: 0, count: 62 });
  });

  it('snapshot/restore mid-stream equals an uninterrupted run', () => {
    const periods = [...EXCHANGE_RATE_PERIODS, P('1MTH'), P('3MTH'), P('1YRS')];
    const ticks: { t: number; rate: number }[] = [];
    let t = utc(2023, 12, 31, 23, 58);
    let seed = 7;
    for (let k = 0; k < 2000; k++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      t += 1 + (seed % 3_000_000);
      ticks.push({ t, rate: 100 + (seed % 1000) / 7 });
    }
    const a = collect(periods);
    for (const x of ticks) a.agg.update(x.t, x.rate);
    a.agg.flush();

    for (const cut of [0, 1, 777, 1999, 2000]) {
      const b = collect(periods);
      for (const x of ticks.slice(0, cut)) b.agg.update(x.t, x.rate);
      const text = JSON.stringify(b.agg);
      const c = collect([]);
      const restored = OhlcAggregator.fromJSON(JSON.parse(text), periods, (i, bk) => c.out.push({ i, b: bk }));
      expect(JSON.stringify(restored)).toBe(text);
      for (const x of ticks.slice(cut)) restored.update(x.t, x.rate);
      restored.flush();
      expect([...b.out, ...c.out]).toEqual(a.out);
    }
  });

  it('fromJSON rejects mismatched periods and malformed snapshots', () => {
    const { agg } = collect([P('1SEC'), P('1MIN')]);
    agg.update(1, 1);
    const snap = agg.toJSON();
    const noop = (): void => {};
    expect(() => OhlcAggregator.fromJSON(snap, [P('1MIN'), P('1SEC')], noop)).toThrow(/expected/);
    expect(() => OhlcAggregator.fromJSON(snap, [P('1SEC')], noop)).toThrow(/count/);
    expect(() => OhlcAggregator.fromJSON({ ...snap, state: [1] }, [P('1SEC'), P('1MIN')], noop)).toThrow();
    expect(() => OhlcAggregator.fromJSON({ ...snap, counts: [1, -1] }, [P('1SEC'), P('1MIN')], noop)).toThrow();
    const r = OhlcAggregator.fromJSON(snap, [P('1SEC'), P('1MIN')], noop);
    expect(() => r.update(1, 2)).toThrow(RangeError); // last tick restored
  });

  it('snapshot of a fresh aggregator is plain JSON', () => {
    const { agg } = collect([P('1SEC')]);
    expect(JSON.parse(JSON.stringify(agg))).toEqual({
      v: 1,
      periods: ['1SEC'],
      lastTickUs: null,
      state: [0, 0, 0, 0, 0, 0, 0, 0],
      counts: [0],
    });
  });
});

describe('rollUp / rollUpTicks', () => {
  const ticks = [
    { t: 0, rate: 5 },
    { t: 500_000, rate: 7 },
    { t: 59 * US, rate: 3 },
    { t: 60 * US, rate: 4 },
    { t: 3 * 60 * US + 1, rate: 6 },
  ];

  it('rollUpTicks builds buckets straight from ticks, empty ones absent', () => {
    expect(rollUpTicks(ticks, P('1MIN'))).toEqual([
      { start: 0, end: 60 * US, timeOpen: 0, timeClose: 59 * US, open: 5, high: 7, low: 3, close: 3, count: 3 },
      { start: 60 * US, end: 120 * US, timeOpen: 60 * US, timeClose: 60 * US, open: 4, high: 4, low: 4, close: 4, count: 1 },
      { start: 180 * US, end: 240 * US, timeOpen: 180 * US + 1, timeClose: 180 * US + 1, open: 6, high: 6, low: 6, close: 6, count: 1 },
    ]);
    expect(() =>
      rollUpTicks(
        [
          { t: 1, rate: 1 },
          { t: 1, rate: 1 },
        ],
        P('1SEC'),
      ),
    ).toThrow(RangeError);
  });

  it('rollUp of 1SEC buckets equals rollUpTicks; does not mutate its input', () => {
    const secs = rollUpTicks(ticks, P('1SEC'));
    const frozen = JSON.stringify(secs);
    expect(rollUp(secs, P('1MIN'))).toEqual(rollUpTicks(ticks, P('1MIN')));
    expect(rollUp(secs, P('1HRS'))).toEqual(rollUpTicks(ticks, P('1HRS')));
    expect(rollUp(secs, P('1MTH'))).toEqual(rollUpTicks(ticks, P('1MTH')));
    expect(JSON.stringify(secs)).toBe(frozen);
    expect(rollUp([], P('1MIN'))).toEqual([]);
  });

  it('rejects unsorted, overlapping or straddling input', () => {
    const mins = rollUpTicks(ticks, P('1MIN'));
    expect(() => rollUp([mins[1], mins[0]], P('1HRS'))).toThrow(RangeError);
    expect(() => rollUp([mins[0], mins[0]], P('1HRS'))).toThrow(RangeError);
    // 1MIN buckets into 1SEC targets straddle.
    expect(() => rollUp(mins, P('1SEC'))).toThrow(RangeError);
    // 4SEC buckets into 10SEC: [8 s, 12 s) straddles 10 s.
    const four = rollUpTicks([{ t: 9 * US, rate: 1 }], P('4SEC'));
    expect(() => rollUp(four, P('10SEC'))).toThrow(RangeError);
  });
});

describe('toTimeseriesItem', () => {
  it('maps fields in the interface order', () => {
    const b: OhlcBucket = { start: 0, end: 60 * US, timeOpen: 1, timeClose: 2, open: 1.5, high: 2, low: 1, close: 1.75, count: 3 };
    const item = toTimeseriesItem(b, (us) => `T${us}`);
    expect(Object.keys(item)).toEqual([
      'time_period_start',
      'time_period_end',
      'time_open',
      'time_close',
      'rate_open',
      'rate_high',
      'rate_low',
      'rate_close',
    ]);
    expect(item).toEqual({
      time_period_start: 'T0',
      time_period_end: 'T60000000',
      time_open: 'T1',
      time_close: 'T2',
      rate_open: 1.5,
      rate_high: 2,
      rate_low: 1,
      rate_close: 1.75,
    });
  });
});
