import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExactDecimal, parseDec } from '../../../../src/core/decimal.js';
import type { MetricValue, SeriesKey } from '../../../../src/core/metrics/events.js';
import { formatTimeAs, parseTimeFormat } from '../../../../src/core/metrics/timeFormat.js';
import {
  groupMetricSeries,
  type KeyedMetricSeries,
  METRIC_ITEM_FIELDS,
  type MetricBucket,
  type MetricBucketColumns,
  type MetricPoint,
  metricTimeseries,
  metricTimeseriesColumns,
  type MetricTimeseriesQuery,
  toMetricTimeseriesItem,
} from '../../../../src/core/metrics/timeseries.js';
import { bucketStart, type PeriodRecord } from '../../../../src/core/periods.js';
import { formatTime } from '../../../../src/core/time.js';
import { P, US, utc } from '../periodHelpers.js';

const dec = (text: string): MetricValue => {
  const d = parseDec(text);
  if (!d) throw new Error(`bad decimal ${text}`);
  return { kind: 'decimal', dec: d };
};
const txt = (text: string): MetricValue => ({ kind: 'text', text });
const tim = (us: number): MetricValue => ({ kind: 'time', us });
const pt = (time: number, value: MetricValue, seq?: number): MetricPoint => (seq === undefined ? { time, value } : { time, value, seq });
/** first/last/min/max/sum texts of a bucket, for short assertions. */
const texts = (b: MetricBucket) => {
  const d = b.decimals;
  return d && { first: d.first.text, last: d.last.text, min: d.min.text, max: d.max.text, sum: d.sum.text };
};

describe('metricTimeseries: one series', () => {
  it('sums exactly: 0.1 + 0.2 = 0.3', () => {
    const [b] = metricTimeseries([pt(1_100_000, dec('0.1')), pt(1_200_000, dec('0.2'))], { period: P('1SEC') });
    expect(b.decimals?.sum).toStrictEqual({ value: 0.3, text: '0.3' });
    expect(toMetricTimeseriesItem(b, (us) => us).sum).toBe(0.3);
  });

  it('a sum that cancels out is "0"; huge and tiny terms are kept', () => {
    const [b] = metricTimeseries([pt(0, dec('-0.5')), pt(1, dec('0.50'))], { period: P('1SEC') });
    expect(b.decimals?.sum).toStrictEqual({ value: 0, text: '0' });
    const [c] = metricTimeseries([pt(0, dec('1e20')), pt(1, dec('1e-20'))], { period: P('1SEC') });
    expect(c.decimals?.sum.text).toBe(`1${'0'.repeat(20)}.${'0'.repeat(19)}1`);
  });

  it('one bucket: open/close times, first/last by time, exact min/max, count', () => {
    const pts = [pt(5_500_000, dec('3')), pt(5_100_000, dec('2')), pt(5_900_000, dec('0.30000000000000001')), pt(5_800_000, dec('0.3'))];
    const [b, ...rest] = metricTimeseries(pts, { period: P('1SEC') });
    expect(rest).toHaveLength(0);
    expect(b).toMatchObject({ start: 5 * US, end: 6 * US, timeOpen: 5_100_000, timeClose: 5_900_000, count: 4 });
    // The floats of 0.3 and 0.30000000000000001 are equal: the minimum is decided on the texts.
    expect(texts(b)).toStrictEqual({ first: '2', last: '0.30000000000000001', min: '0.3', max: '3', sum: '5.60000000000000001' });
  });

  it('ties: first and last by time, equal times in log (array) order', () => {
    const pts = [pt(2 * US, dec('1')), pt(2 * US, dec('2')), pt(3 * US, dec('3')), pt(3 * US, dec('4'))];
    const [b] = metricTimeseries(pts, { period: P('1MIN') });
    expect(texts(b)).toMatchObject({ first: '1', last: '4' });
    const [c] = metricTimeseries([pts[1], pts[0], pts[3], pts[2]], { period: P('1MIN') });
    expect(texts(c)).toMatchObject({ first: '2', last: '3' });
  });

  it('ties: equal values keep the first in time for min and max', () => {
    const [b] = metricTimeseries([pt(0, dec('1.0')), pt(1, dec('1')), pt(2, dec('1.00'))], { period: P('1SEC') });
    expect(texts(b)).toMatchObject({ min: '1.0', max: '1.0', first: '1.0', last: '1.00' });
  });

  it('text and time values count only in count (and in time_open / time_close)', () => {
    const pts = [pt(10, txt('OPEN')), pt(20, dec('7')), pt(30, tim(5)), pt(2 * US, txt('x')), pt(2 * US + 1, tim(0))];
    const [a, b] = metricTimeseries(pts, { period: P('1SEC') });
    expect(a).toMatchObject({ timeOpen: 10, timeClose: 30, count: 3 });
    expect(texts(a)).toStrictEqual({ first: '7', last: '7', min: '7', max: '7', sum: '7' });
    expect(b).toStrictEqual({ start: 2 * US, end: 3 * US, timeOpen: 2 * US, timeClose: 2 * US + 1, count: 2 });
    expect(toMetricTimeseriesItem(b, formatTime)).toStrictEqual({
      time_period_start: '1970-01-01T00:00:02.0000000Z',
      time_period_end: '1970-01-01T00:00:03.0000000Z',
      time_open: '1970-01-01T00:00:02.0000000Z',
      time_close: '1970-01-01T00:00:02.0000010Z',
      first: null,
      last: null,
      min: null,
      max: null,
      count: 2,
      sum: null,
    });
  });

  it('empty buckets are not returned', () => {
    const out = metricTimeseries([pt(0, dec('1')), pt(5 * US, dec('2')), pt(5 * US + 1, dec('3'))], { period: P('1SEC') });
    expect(out.map((b) => [b.start, b.count])).toStrictEqual([
      [0, 1],
      [5 * US, 2],
    ]);
    expect(metricTimeseries([], { period: P('1SEC') })).toStrictEqual([]);
  });

  it('month buckets follow the calendar (leap February, 3MTH quarters, 1YRS)', () => {
    const pts = [
      pt(utc(2024, 1, 31, 23, 59, 59), dec('1')),
      pt(utc(2024, 2, 1), dec('2')),
      pt(utc(2024, 2, 29, 12), dec('3')),
      pt(utc(2024, 3, 1), dec('4')),
    ];
    const months = metricTimeseries(pts, { period: P('1MTH') });
    expect(months.map((b) => [formatTime(b.start), formatTime(b.end), b.count])).toStrictEqual([
      ['2024-01-01T00:00:00.0000000Z', '2024-02-01T00:00:00.0000000Z', 1],
      ['2024-02-01T00:00:00.0000000Z', '2024-03-01T00:00:00.0000000Z', 2],
      ['2024-03-01T00:00:00.0000000Z', '2024-04-01T00:00:00.0000000Z', 1],
    ]);
    const quarters = metricTimeseries([...pts, pt(utc(2024, 4, 1), dec('5'))], { period: P('3MTH') });
    expect(quarters.map((b) => [b.start, b.end, b.count])).toStrictEqual([
      [utc(2024, 1), utc(2024, 4), 4],
      [utc(2024, 4), utc(2024, 7), 1],
    ]);
    expect(metricTimeseries(pts, { period: P('1YRS') }).map((b) => [b.start, b.end, b.count])).toStrictEqual([
      [utc(2024, 1), utc(2025, 1), 4],
    ]);
  });

  it('time_start / time_end: buckets whose start lies in [time_start, time_end)', () => {
    const pts = [0, 1, 2, 3, 4].map((s) => pt(s * US + 500_000, dec(String(s))));
    const starts = (q: { timeStart?: number; timeEnd?: number; limit?: number }) =>
      metricTimeseries(pts, { period: P('1SEC'), ...q }).map((b) => b.start / US);
    expect(starts({})).toStrictEqual([0, 1, 2, 3, 4]);
    expect(starts({ timeStart: 1 * US, timeEnd: 3 * US })).toStrictEqual([1, 2]);
    // A time_start inside a bucket skips that bucket (it starts before time_start) ...
    expect(starts({ timeStart: 1 * US + 1 })).toStrictEqual([2, 3, 4]);
    // ... and a time_end inside a bucket keeps it (it starts before time_end).
    expect(starts({ timeEnd: 3 * US + 1 })).toStrictEqual([0, 1, 2, 3]);
    expect(starts({ timeStart: 3 * US, timeEnd: 3 * US })).toStrictEqual([]);
    expect(starts({ timeStart: 9 * US })).toStrictEqual([]);
  });

  it('limit: at most that many buckets, the oldest', () => {
    const pts = [0, 1, 2, 3].map((s) => pt(s * US, dec('1')));
    expect(metricTimeseries(pts, { period: P('1SEC'), limit: 2 }).map((b) => b.start)).toStrictEqual([0, US]);
    expect(metricTimeseries(pts, { period: P('1SEC'), limit: 1, timeStart: 2 * US }).map((b) => b.start)).toStrictEqual([2 * US]);
    expect(metricTimeseries(pts, { period: P('1SEC'), limit: 9 })).toHaveLength(4);
    expect(metricTimeseries(pts, { period: P('1SEC'), limit: 0 })).toStrictEqual([]);
  });

  it('times before 1970 floor into their bucket', () => {
    const [b] = metricTimeseries([pt(-1, dec('1'))], { period: P('1MIN') });
    expect([b.start, b.end]).toStrictEqual([-60 * US, 0]);
  });
});

describe('toMetricTimeseriesItem', () => {
  it('fields in the interface order, values as floats of the exact decimals', () => {
    const [b] = metricTimeseries([pt(1_000_001, dec('0.10')), pt(1_000_002, dec('-2'))], { period: P('1SEC') });
    const item = toMetricTimeseriesItem(b, (us) => formatTimeAs(us, 'unix_millisec'));
    expect(Object.keys(item)).toStrictEqual([
      'time_period_start',
      'time_period_end',
      'time_open',
      'time_close',
      'first',
      'last',
      'min',
      'max',
      'count',
      'sum',
    ]);
    expect(item).toStrictEqual({
      time_period_start: 1000,
      time_period_end: 2000,
      time_open: 1000,
      time_close: 1000,
      first: 0.1,
      last: -2,
      min: -2,
      max: 0.1,
      count: 2,
      sum: -1.9,
    });
  });
});

describe('groupMetricSeries', () => {
  const key = (exchange_id: string, symbol_id = '', asset_id = '', metric_id = 'M'): SeriesKey => ({
    metric_id,
    exchange_id,
    symbol_id,
    asset_id,
  });

  it('one series per distinct value, labels sorted by code unit, points of a group aggregated together', () => {
    const series: KeyedMetricSeries[] = [
      { key: key('b'), points: [pt(0, dec('1'))] },
      { key: key('B'), points: [pt(0, dec('2'))] },
      { key: key('a'), points: [pt(0, dec('3'))] },
      { key: key('b', 'b_SPOT_X_Y'), points: [pt(1, dec('4')), pt(2 * US, txt('t'))] },
      { key: key('Ä'), points: [pt(0, dec('5'))] },
    ];
    const groups = groupMetricSeries(series, 'exchange_id', { period: P('1SEC') });
    expect(groups.map((g) => g.label)).toStrictEqual(['B', 'a', 'b', 'Ä']);
    const b = groups[2].buckets;
    expect(b.map((x) => [x.start, x.count])).toStrictEqual([
      [0, 2],
      [2 * US, 1],
    ]);
    expect(texts(b[0])).toStrictEqual({ first: '1', last: '4', min: '1', max: '4', sum: '5' });
  });

  it('a series without the grouped field forms the group ""', () => {
    const series = [
      { key: key('X', 'S1'), points: [pt(0, dec('1'))] },
      { key: key('X'), points: [pt(0, dec('2'))] },
    ];
    expect(groupMetricSeries(series, 'symbol_id', { period: P('1SEC') }).map((g) => g.label)).toStrictEqual(['', 'S1']);
    expect(groupMetricSeries(series, 'metric_id', { period: P('1SEC') }).map((g) => [g.label, g.buckets[0].count])).toStrictEqual([
      ['M', 2],
    ]);
  });

  it('equal times across series: log order by seq, else the order of the series', () => {
    const s1 = { key: key('X', 'S1'), points: [pt(5, dec('1'), 20)] };
    const s2 = { key: key('X', 'S2'), points: [pt(5, dec('2'), 10)] };
    expect(texts(groupMetricSeries([s1, s2], 'exchange_id', { period: P('1SEC') })[0].buckets[0])).toMatchObject({ first: '2', last: '1' });
    const u1 = { key: s1.key, points: [pt(5, dec('1'))] };
    const u2 = { key: s2.key, points: [pt(5, dec('2'))] };
    expect(texts(groupMetricSeries([u1, u2], 'exchange_id', { period: P('1SEC') })[0].buckets[0])).toMatchObject({ first: '1', last: '2' });
  });

  it('window and limit apply per group; a group with no bucket in the window stays, empty', () => {
    const series = [
      { key: key('A'), points: [pt(0, dec('1')), pt(US, dec('1')), pt(2 * US, dec('1'))] },
      { key: key('B'), points: [pt(0, dec('1'))] },
    ];
    const groups = groupMetricSeries(series, 'exchange_id', { period: P('1SEC'), timeStart: US, limit: 1 });
    expect(groups.map((g) => [g.label, g.buckets.map((b) => b.start)])).toStrictEqual([
      ['A', [US]],
      ['B', []],
    ]);
  });
});

describe('formatTimeAs / parseTimeFormat', () => {
  const t = 1_704_067_200_123_456; // 2024-01-01T00:00:00.123456Z

  it('integers floored to the unit; nanoseconds as a digit string', () => {
    expect(formatTimeAs(t, 'unix_sec')).toBe(1_704_067_200);
    expect(formatTimeAs(t, 'unix_millisec')).toBe(1_704_067_200_123);
    expect(formatTimeAs(t, 'unix_microsec')).toBe(t);
    expect(formatTimeAs(t, 'unix_nanosec')).toBe('1704067200123456000');
    expect(formatTimeAs(0, 'unix_nanosec')).toBe('0');
  });

  it('floors towards the past before 1970, never -0', () => {
    expect(formatTimeAs(-1, 'unix_sec')).toBe(-1);
    expect(formatTimeAs(-1, 'unix_millisec')).toBe(-1);
    expect(formatTimeAs(-1_000_000, 'unix_sec')).toBe(-1);
    expect(formatTimeAs(-1, 'unix_nanosec')).toBe('-1000');
    expect(Object.is(formatTimeAs(-0, 'unix_sec'), 0)).toBe(true);
    expect(Object.is(formatTimeAs(-0, 'unix_microsec'), 0)).toBe(true);
  });

  it('is exact at the ends of the time range', () => {
    const max = Number.MAX_SAFE_INTEGER; // 9007199254740991 µs
    expect(formatTimeAs(max, 'unix_sec')).toBe(9_007_199_254);
    expect(formatTimeAs(max, 'unix_millisec')).toBe(9_007_199_254_740);
    expect(formatTimeAs(max, 'unix_nanosec')).toBe('9007199254740991000');
    expect(formatTimeAs(-max, 'unix_sec')).toBe(-9_007_199_255);
    expect(formatTimeAs(8_999_999_999_999_999, 'unix_sec')).toBe(8_999_999_999);
    expect(formatTimeAs(8_999_999_999_999_999, 'unix_millisec')).toBe(8_999_999_999_999);
  });

  it('floor agrees with BigInt division (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }), (us) => {
        const b = BigInt(us);
        const floor = (d: bigint) => (b >= 0n || b % d === 0n ? b / d : b / d - 1n);
        expect(BigInt(formatTimeAs(us, 'unix_sec'))).toBe(floor(1_000_000n));
        expect(BigInt(formatTimeAs(us, 'unix_millisec'))).toBe(floor(1000n));
        expect(BigInt(formatTimeAs(us, 'unix_nanosec'))).toBe(b * 1000n);
      }),
      { seed: 42, numRuns: 2000 },
    );
  });

  it('parseTimeFormat knows exactly the four names', () => {
    for (const f of ['unix_sec', 'unix_millisec', 'unix_microsec', 'unix_nanosec']) expect(parseTimeFormat(f)).toBe(f);
    for (const f of ['', 'unix', 'UNIX_SEC', ' unix_sec', 'unix_msec', 'iso']) expect(parseTimeFormat(f)).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// Properties: the buckets against a brute-force reference.

const DEC_TEXTS = ['0', '0.1', '0.2', '0.3', '0.30000000000000001', '-0.3', '1e-8', '42', '-7.5', '1.0', '1', '1000000.000001'];
const valueArb: fc.Arbitrary<MetricValue> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...DEC_TEXTS).map(dec) },
  { weight: 1, arbitrary: fc.constantFrom('a', 'b').map(txt) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 10 }).map(tim) },
);
const T0 = utc(2024, 1, 30, 23, 59, 50);
/** Times near T0 on a half-second grid (many ties, several seconds, minutes, a month boundary). */
const fineTime = fc.integer({ min: -40, max: 200 }).map((k) => T0 + k * 500_000);
/** Times over about 14 months before and after T0, to the µs. */
const wideTime = fc
  .integer({ min: -200 * 86_400, max: 230 * 86_400 })
  .chain((s) => fc.integer({ min: 0, max: 999_999 }).map((f) => T0 + s * US + f));
const pointsArb = fc.array(
  fc.record({ time: fc.oneof(fineTime, wideTime), value: valueArb }).map((p) => pt(p.time, p.value)),
  { maxLength: 60 },
);
const periodArb = fc.constantFrom('1SEC', '2SEC', '10SEC', '1MIN', '1HRS', '1DAY', '1MTH', '3MTH', '1YRS').map(P);
const exact = (text: string) => new ExactDecimal(text);

interface Ref {
  start: number;
  count: number;
  timeOpen: number;
  timeClose: number;
  first?: string;
  last?: string;
  min?: string;
  max?: string;
  sum?: string;
}

/** Buckets by brute force: each point's bucket start, then per bucket the extremes by (time, index). */
function reference(points: readonly MetricPoint[], period: PeriodRecord, from: number, to: number): Ref[] {
  const byStart = new Map<number, { p: MetricPoint; i: number }[]>();
  points.forEach((p, i) => {
    const s = bucketStart(p.time, period);
    if (s < from || s >= to) return;
    byStart.set(s, [...(byStart.get(s) ?? []), { p, i }]);
  });
  const before = (a: { p: MetricPoint; i: number }, b: { p: MetricPoint; i: number }) =>
    a.p.time < b.p.time || (a.p.time === b.p.time && a.i < b.i);
  return [...byStart.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([start, all]) => {
      const ref: Ref = {
        start,
        count: all.length,
        timeOpen: Math.min(...all.map((x) => x.p.time)),
        timeClose: Math.max(...all.map((x) => x.p.time)),
      };
      const decs = all.filter((x) => x.p.value.kind === 'decimal');
      if (decs.length === 0) return ref;
      const text = (x: { p: MetricPoint }) => (x.p.value.kind === 'decimal' ? x.p.value.dec.text : '');
      ref.first = text(decs.reduce((a, b) => (before(b, a) ? b : a)));
      ref.last = text(decs.reduce((a, b) => (before(a, b) ? b : a)));
      const values = decs.map((x) => exact(text(x)));
      ref.min = values.reduce((a, b) => (b.lt(a) ? b : a)).toString();
      ref.max = values.reduce((a, b) => (b.gt(a) ? b : a)).toString();
      ref.sum = values.reduce((a, b) => a.plus(b)).toString();
      return ref;
    });
}

/** A bucket in the reference's terms (min, max and sum compared by exact value). */
function asRef(b: MetricBucket): Ref {
  const ref: Ref = { start: b.start, count: b.count, timeOpen: b.timeOpen, timeClose: b.timeClose };
  const d = b.decimals;
  if (d === undefined) return ref;
  return {
    ...ref,
    first: d.first.text,
    last: d.last.text,
    min: exact(d.min.text).toString(),
    max: exact(d.max.text).toString(),
    sum: exact(d.sum.text).toString(),
  };
}

describe('metricTimeseries: properties', () => {
  it('every bucket equals the brute-force reference; counts sum to the points in range', () => {
    const window = fc.option(fineTime, { nil: undefined });
    fc.assert(
      fc.property(pointsArb, periodArb, window, window, (points, period, timeStart, timeEnd) => {
        const out = metricTimeseries(points, { period, timeStart, timeEnd });
        const from = timeStart ?? Number.NEGATIVE_INFINITY;
        const to = timeEnd ?? Number.POSITIVE_INFINITY;
        expect(out.map(asRef)).toStrictEqual(reference(points, period, from, to));
        const inRange = points.filter((p) => bucketStart(p.time, period) >= from && bucketStart(p.time, period) < to);
        expect(out.reduce((n, b) => n + b.count, 0)).toBe(inRange.length);
        for (const b of out) expect(b.end).toBeGreaterThan(b.timeClose);
      }),
      { seed: 42, numRuns: 500 },
    );
  });

  it('with a limit, the first buckets of the unlimited answer', () => {
    fc.assert(
      fc.property(pointsArb, periodArb, fc.integer({ min: 1, max: 5 }), (points, period, limit) => {
        expect(metricTimeseries(points, { period, limit })).toStrictEqual(metricTimeseries(points, { period }).slice(0, limit));
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it('1SEC buckets re-bucketed give the direct buckets (count, sum, min, max, first, last, times)', () => {
    fc.assert(
      fc.property(pointsArb, periodArb, (points, period) => {
        const fine = metricTimeseries(points, { period: P('1SEC') });
        const rolled = new Map<number, MetricBucket[]>();
        for (const b of fine) {
          const s = bucketStart(b.start, period);
          rolled.set(s, [...(rolled.get(s) ?? []), b]);
        }
        const direct = metricTimeseries(points, { period });
        expect(direct.map((b) => b.start)).toStrictEqual([...rolled.keys()]);
        for (const b of direct) {
          const parts = rolled.get(b.start) ?? [];
          expect(b.count).toBe(parts.reduce((n, x) => n + x.count, 0));
          expect(b.timeOpen).toBe(parts[0].timeOpen);
          expect(b.timeClose).toBe(parts[parts.length - 1].timeClose);
          const ds = parts.flatMap((x) => (x.decimals ? [x.decimals] : []));
          if (ds.length === 0) {
            expect(b.decimals).toBeUndefined();
            continue;
          }
          expect(b.decimals?.first).toBe(ds[0].first);
          expect(b.decimals?.last).toBe(ds[ds.length - 1].last);
          expect(exact(b.decimals?.sum.text ?? '').eq(ds.reduce((a, d) => a.plus(d.sum.text), exact('0')))).toBe(true);
          expect(exact(b.decimals?.min.text ?? '').eq(ExactDecimal.min(...ds.map((d) => d.min.text)))).toBe(true);
          expect(exact(b.decimals?.max.text ?? '').eq(ExactDecimal.max(...ds.map((d) => d.max.text)))).toBe(true);
        }
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it('a group equals the timeseries of its series concatenated; labels are sorted and distinct', () => {
    const seriesArb = fc.array(
      fc.record({ ex: fc.constantFrom('B', 'a', 'b', ''), sym: fc.constantFrom('', 'S1', 'S2'), points: pointsArb }),
      { maxLength: 6 },
    );
    fc.assert(
      fc.property(seriesArb, periodArb, (raw, period) => {
        const series = raw.map((s) => ({ key: { metric_id: 'M', exchange_id: s.ex, symbol_id: s.sym, asset_id: '' }, points: s.points }));
        const groups = groupMetricSeries(series, 'exchange_id', { period });
        const labels = groups.map((g) => g.label);
        expect(labels).toStrictEqual([...new Set(raw.map((s) => s.ex))].sort());
        for (const g of groups) {
          const points = series.filter((s) => s.key.exchange_id === g.label).flatMap((s) => s.points);
          expect(g.buckets).toStrictEqual(metricTimeseries(points, { period }));
        }
      }),
      { seed: 42, numRuns: 200 },
    );
  });
});

/** The points in time order (equal times in array order) as columns. */
function columnsOf(points: readonly MetricPoint[]) {
  const sorted = [...points].sort((a, b) => a.time - b.time);
  const dec = (p: MetricPoint) => (p.value.kind === 'decimal' ? p.value.dec : undefined);
  return {
    sorted,
    columns: {
      times: sorted.map((p) => p.time),
      values: sorted.map((p) => dec(p)?.value ?? null),
      texts: sorted.map((p) => dec(p)?.text ?? null),
    },
  };
}

/** Every bucket of columns as {@link toMetricTimeseriesItem} makes it from a bucket, with its sum's text. */
function columnItems(cols: MetricBucketColumns) {
  return Array.from({ length: cols.length }, (_, i) => ({
    item: cols.item(i, (us) => us),
    nums: METRIC_ITEM_FIELDS.map((_, f) => cols.num(i, f)),
    decimals: cols.hasDecimals(i),
    sumText: cols.sumText(i),
  }));
}

/** The same from buckets. */
function bucketItems(buckets: readonly MetricBucket[]) {
  return buckets.map((b) => {
    const item = toMetricTimeseriesItem(b, (us) => us);
    return {
      item,
      nums: METRIC_ITEM_FIELDS.map((f) => item[f] ?? Number.NaN),
      decimals: b.decimals !== undefined,
      sumText: b.decimals?.sum.text,
    };
  });
}

describe('metricTimeseriesColumns', () => {
  it('the buckets of metricTimeseries, in columns (any period, window, limit; buckets of one point or more)', () => {
    const window = fc.option(fineTime, { nil: undefined });
    const limit = fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined });
    // Points a second apart (one per 1SEC bucket) as well as the mixed ones.
    const spaced = fc.array(valueArb, { maxLength: 40 }).map((vs) => vs.map((v, i) => pt(T0 + i * US, v)));
    fc.assert(
      fc.property(fc.oneof(pointsArb, spaced), periodArb, window, window, limit, (points, period, timeStart, timeEnd, lim) => {
        const q: MetricTimeseriesQuery = { period, timeStart, timeEnd, ...(lim !== undefined && { limit: lim }) };
        const { sorted, columns } = columnsOf(points);
        expect(columnItems(metricTimeseriesColumns(columns, q))).toStrictEqual(bucketItems(metricTimeseries(sorted, q)));
      }),
      { seed: 42, numRuns: 500 },
    );
  });

  it('a decimal without its float reads as NaN, as the store reads it', () => {
    const cols = metricTimeseriesColumns({ times: [0], values: [null], texts: ['1.5'] }, { period: P('1SEC') });
    expect(cols.item(0, (us) => us)).toMatchObject({ first: Number.NaN, count: 1, sum: 1.5 });
  });

  it('a sum of one point is written as the exact sum writes it (trailing zeros, exponents, signs, -0)', () => {
    const texts = ['0.0120', '1.0', '10.50', '100', '-0', '-0.000', '0.000', '+1.50', '1e-8', '1.5E3', '007.10', '.5', '-0.0100'];
    for (const text of texts) {
      const [b] = metricTimeseries([pt(0, dec(text))], { period: P('1SEC') });
      const exact = new ExactDecimal(text);
      const want = exact.isZero() ? '0' : exact.toString();
      expect(b.decimals?.sum, text).toStrictEqual({ value: Number(want), text: want });
    }
  });
});
