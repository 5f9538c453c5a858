/**
 * Metric timeseries: the data points of a series (or of a group of series) in period buckets.
 *
 * METHODOLOGY section 10: buckets as in section 6 (epoch-aligned; month ids aligned to calendar
 * months from 1970-01); a bucket [start, end) receives every data point with start <= time < end;
 * first/last by time (ties: log order), min, max, count and sum over value_decimal (text and time
 * values count only in `count`); time_open/time_close are the first and last data point times;
 * empty buckets are not returned. Grouped results are one series per distinct value of `groupby`.
 *
 * **Reading.** `first`, `last`, `min`, `max` and `sum` are all taken over the bucket's
 * value_decimal points only, and are all absent (null on the wire) when the bucket has none;
 * `count`, `time_open` and `time_close` are over every data point of the bucket, whatever its
 * value. (The wire fields `first`/`last` are numbers in the interface's example, so a text value
 * cannot be one; and a bucket of text values only has no sum rather than a sum of 0.)
 *
 * The wire shape is the example response of `GET /v1/metrics/{exchange,symbol,asset}/history`
 * in specs/market-data-rest.openapi.json (its schema is named `v1.MetricData`, but the example
 * items are `time_period_start, time_period_end, time_open, time_close, first, last, min, max,
 * count, sum`): see {@link MetricTimeseriesItem}.
 *
 * @module
 */

import type { Decimal } from 'decimal.js';
import { compareDecText, ExactDecimal } from '../decimal.js';
import { bucketEnd, bucketStart, bucketStartAtOrAfter, type PeriodRecord } from '../periods.js';
import type { Dec, TimeUs } from '../types.js';
import type { MetricValue, SeriesKey } from './events.js';

/**
 * One data point of a metric series. A `MetricEvent` is one.
 *
 * `seq` is the point's position in the log (its line, or any increasing counter). It breaks
 * time ties between points of different series of a group; without it the array order is the
 * log order. Give it to every point or to none.
 *
 * @example
 * ```ts
 * const p: MetricPoint = { time: 1704067200000000, value: { kind: 'text', text: 'open' } };
 * ```
 */
export interface MetricPoint {
  readonly time: TimeUs;
  readonly value: MetricValue;
  readonly seq?: number;
}

/**
 * The aggregates of the value_decimal points of a bucket (exact decimals). `sum` is exact (its
 * text is the exact sum of the texts, to 1000 significant digits; its value that text's float).
 *
 * @example
 * ```ts
 * const d: DecimalAggregates = { first: dec, last: dec, min: dec, max: dec, sum: dec };
 * ```
 */
export interface DecimalAggregates {
  /** The value of the earliest decimal point (ties: the earlier line). */
  readonly first: Dec;
  /** The value of the latest decimal point (ties: the later line). */
  readonly last: Dec;
  /** The smallest value, compared exactly (equal values: the first one in time). */
  readonly min: Dec;
  /** The largest value, compared exactly (equal values: the first one in time). */
  readonly max: Dec;
  readonly sum: Dec;
}

/**
 * One non-empty bucket of a metric timeseries, times in µs.
 *
 * @example
 * ```ts
 * const b: MetricBucket = { start: 0, end: 1_000_000, timeOpen: 5, timeClose: 900_000, count: 2 };
 * ```
 */
export interface MetricBucket {
  /** Bucket start (inclusive). */
  readonly start: TimeUs;
  /** Bucket end (exclusive). */
  readonly end: TimeUs;
  /** Time of the bucket's first data point (any value kind). */
  readonly timeOpen: TimeUs;
  /** Time of the bucket's last data point (any value kind). */
  readonly timeClose: TimeUs;
  /** Number of data points (every value kind), >= 1. */
  readonly count: number;
  /** Aggregates of the value_decimal points; absent when the bucket has none. */
  readonly decimals?: DecimalAggregates;
}

/**
 * Which buckets a timeseries answers.
 *
 * @example
 * ```ts
 * const q: MetricTimeseriesQuery = { period: getPeriod('1MTH', { months: true })!, timeStart: 0, limit: 100 };
 * ```
 */
export interface MetricTimeseriesQuery {
  readonly period: PeriodRecord;
  /** Only buckets whose start is >= timeStart (µs); no bound when absent. */
  readonly timeStart?: TimeUs;
  /** Only buckets whose start is < timeEnd (µs); no bound when absent. */
  readonly timeEnd?: TimeUs;
  /** At most this many buckets, the oldest; no bound when absent. */
  readonly limit?: number;
}

/** Exact order of two decimals: the floats when they differ (rounding is monotonic), else the texts. */
function compareDec(a: Dec, b: Dec): number {
  return a.value !== b.value ? a.value - b.value : compareDecText(a.text, b.text);
}

/** The points by time, equal times in log order (`seq`, then array order: the sort is stable). */
function byTimeInLogOrder(points: readonly MetricPoint[]): readonly MetricPoint[] {
  const before = (a: MetricPoint, b: MetricPoint) => a.time - b.time || (a.seq ?? 0) - (b.seq ?? 0);
  // Points read from a store come in this order already: checking is cheaper than sorting.
  for (let i = 1; i < points.length; i++) if (before(points[i - 1], points[i]) > 0) return [...points].sort(before);
  return points;
}

/** A decimal text that is already in the form the exact sum writes (no exponent, sign or padding). */
const CANONICAL = /^-?(0|[1-9]\d*)(\.\d*[1-9])?$/;

/** A decimal text in that form but for zeros at the end of its fraction (`0.0120`, `1.0`). */
const TRAILING_ZEROS = /^-?(0|[1-9]\d*)\.\d*0$/;

/** The exact sum of one decimal: its text in the form the exact sum writes, without the arithmetic. */
function sumOfOne(d: Dec): Dec {
  let text = d.text;
  if (CANONICAL.test(text)) {
    if (text === '-0') text = '0';
  } else if (TRAILING_ZEROS.test(text)) {
    // The fraction's last zeros (and a point left alone) dropped: what the exact decimal writes.
    text = text.replace(/\.?0+$/, '');
    if (text === '-0') text = '0';
  } else {
    const sum = new ExactDecimal(text);
    text = sum.isZero() ? '0' : sum.toString();
  }
  return { value: Number(text), text };
}

/** A bucket being filled. */
interface Acc {
  start: TimeUs;
  end: TimeUs;
  timeOpen: TimeUs;
  timeClose: TimeUs;
  count: number;
  first?: Dec;
  last?: Dec;
  min?: Dec;
  max?: Dec;
  /** The exact sum once the bucket has two decimal points (one: {@link Acc.last} is the sum). */
  sum?: Decimal;
  decimals: number;
}

/** Adds a point (its time, and its decimal value if it has one) to the bucket that holds it. */
function add(acc: Acc, time: TimeUs, d: Dec | undefined): void {
  acc.timeClose = time;
  acc.count += 1;
  if (d === undefined) return;
  acc.first ??= d;
  acc.last = d;
  if (acc.min === undefined || compareDec(d, acc.min) < 0) acc.min = d;
  if (acc.max === undefined || compareDec(d, acc.max) > 0) acc.max = d;
  acc.decimals += 1;
  if (acc.decimals === 2) acc.sum = new ExactDecimal(acc.first.text).plus(d.text);
  else if (acc.decimals > 2) acc.sum = acc.sum?.plus(d.text);
}

/** The exact sum of a bucket's decimal points: `sum` of two or more, else that of the one, `first`. */
function sumOf(first: Dec, sum: Decimal | undefined): Dec {
  if (sum === undefined) return sumOfOne(first);
  const text = sum.isZero() ? '0' : sum.toString();
  return { value: Number(text), text };
}

function close(acc: Acc): MetricBucket {
  const { start, end, timeOpen, timeClose, count, first, last, min, max, sum } = acc;
  const bucket = { start, end, timeOpen, timeClose, count };
  if (first === undefined || last === undefined || min === undefined || max === undefined) return bucket;
  return { ...bucket, decimals: { first, last, min, max, sum: sumOf(first, sum) } };
}

/**
 * Folds points, given in time order (equal times in log order), into the buckets of a query:
 * each bucket, once it can take no more point, goes to `emit` (which reads it at once: the same
 * object is filled again for the next bucket). The one place of the bucketing rules of
 * {@link metricTimeseries}, whatever holds the points and the buckets.
 */
class Bucketing {
  private readonly acc: Acc = { start: 0, end: 0, timeOpen: 0, timeClose: 0, count: 0, decimals: 0 };
  private open = false;
  private emitted = 0;
  private readonly period: PeriodRecord;
  private readonly limit: number;
  private readonly from: TimeUs;
  private readonly to: TimeUs;

  constructor(
    q: MetricTimeseriesQuery,
    private readonly emit: (acc: Acc) => void,
  ) {
    const { period } = q;
    this.period = period;
    this.limit = q.limit ?? Number.POSITIVE_INFINITY;
    // A point's bucket starts in [timeStart, timeEnd) exactly when the point lies in [from, to).
    this.from = q.timeStart === undefined ? Number.NEGATIVE_INFINITY : bucketStartAtOrAfter(q.timeStart, period);
    this.to = q.timeEnd === undefined ? Number.POSITIVE_INFINITY : bucketStartAtOrAfter(q.timeEnd, period);
  }

  /** Adds the next point; false once no later point can be answered (past the window or the limit): stop. */
  add(time: TimeUs, d: Dec | undefined): boolean {
    if (time < this.from) return true;
    if (time >= this.to) return false;
    const acc = this.acc;
    if (!this.open || time >= acc.end) {
      this.close();
      if (this.emitted >= this.limit) return false;
      acc.start = bucketStart(time, this.period);
      acc.end = bucketEnd(time, this.period);
      acc.timeOpen = time;
      acc.count = 0;
      acc.first = acc.last = acc.min = acc.max = acc.sum = undefined;
      acc.decimals = 0;
      this.open = true;
    }
    add(acc, time, d);
    return true;
  }

  /** Hands over the bucket being filled, if any. */
  close(): void {
    if (!this.open) return;
    this.emit(this.acc);
    this.open = false;
    this.emitted += 1;
  }
}

/**
 * The non-empty buckets of `q.period` of some data points, oldest first: those whose start lies
 * in [timeStart, timeEnd) (half-open, as the exchange-rate history: a bucket is answered whole or
 * not at all, so a timeStart inside a bucket skips that bucket), at most `limit`.
 *
 * Each bucket [start, end) holds every point with start <= time < end: `timeOpen`/`timeClose`
 * are its first and last point times, `count` its number of points; `decimals` aggregates its
 * value_decimal points (first/last by time, ties in log order; exact min, max and sum), absent
 * when it has none. Points may come in any time order (log order, as accepted events are);
 * equal times keep their log order: `seq` when the points carry it, else the array order.
 *
 * Why: METHODOLOGY section 10 (metric timeseries) and section 6 (bucket alignment, empty buckets
 * left out).
 *
 * @param points - the data points of one series, or of several series for a group
 * @param q - the period, time window and limit
 * @returns the buckets, oldest first
 *
 * @example
 * ```ts
 * const d = (text: string) => ({ kind: 'decimal', dec: parseDec(text)! }) as const;
 * metricTimeseries([{ time: 1_500_000, value: d('0.1') }, { time: 1_200_000, value: d('0.2') }],
 *                  { period: getPeriod('1SEC')! });
 * // [{ start: 1e6, end: 2e6, timeOpen: 1_200_000, timeClose: 1_500_000, count: 2,
 * //    decimals: { first: 0.2, last: 0.1, min: 0.1, max: 0.2, sum: { value: 0.3, text: '0.3' } } }]
 * //    (first..max shown by value; they are the points' Dec objects)
 * ```
 */
export function metricTimeseries(points: readonly MetricPoint[], q: MetricTimeseriesQuery): MetricBucket[] {
  const out: MetricBucket[] = [];
  const b = new Bucketing(q, (acc) => out.push(close(acc)));
  for (const p of byTimeInLogOrder(points)) if (!b.add(p.time, p.value.kind === 'decimal' ? p.value.dec : undefined)) break;
  b.close();
  return out;
}

/**
 * The series-key fields a grouped timeseries (`/v1/metrics/group`) can group by.
 *
 * @example
 * ```ts
 * const g: MetricGroupBy = 'exchange_id';
 * ```
 */
export type MetricGroupBy = 'symbol_id' | 'asset_id' | 'exchange_id' | 'metric_id';

/**
 * A metric series: its key and its data points (in log order).
 *
 * @example
 * ```ts
 * const s: KeyedMetricSeries = { key: seriesKey(event), points: [event] };
 * ```
 */
export interface KeyedMetricSeries {
  readonly key: SeriesKey;
  readonly points: readonly MetricPoint[];
}

/**
 * One series of a grouped answer: the group's label (a value of the `groupby` field) and its buckets.
 *
 * @example
 * ```ts
 * const g: MetricGroup = { label: 'BINANCE', buckets: [] };
 * ```
 */
export interface MetricGroup {
  readonly label: string;
  readonly buckets: MetricBucket[];
}

/**
 * Grouped timeseries: one series per distinct value of `groupby` among `series`, labels sorted
 * by UTF-16 code unit (plain string sort), each the {@link metricTimeseries} of the points of all
 * its series together (same window and limit per group). A series without a symbol_id (or
 * asset_id) has the label `""` for that field, and forms a group of its own. A group whose points
 * all lie outside the window is kept with no bucket (the caller chose the matching series).
 * Points of different series at the same time are in log order by `seq`; without `seq`, in the
 * order of `series`.
 *
 * Why: METHODOLOGY section 10 — "Grouped results (`/v1/metrics/group`) are one series per
 * distinct value of `groupby` among the matching series, labels sorted, each aggregated as above."
 *
 * @param series - the matching series
 * @param groupby - the key field to group by
 * @param q - period, window and limit of every group
 * @returns the groups, by label
 *
 * @example
 * ```ts
 * groupMetricSeries([{ key: k1, points: p1 }, { key: k2, points: p2 }], 'exchange_id', { period: getPeriod('1DAY')! });
 * // [{ label: 'BINANCE', buckets: [...] }, { label: 'KRAKEN', buckets: [...] }]
 * ```
 */
export function groupMetricSeries(series: Iterable<KeyedMetricSeries>, groupby: MetricGroupBy, q: MetricTimeseriesQuery): MetricGroup[] {
  const byLabel = new Map<string, MetricPoint[]>();
  for (const s of series) {
    const label = s.key[groupby];
    const points = byLabel.get(label);
    if (points === undefined) byLabel.set(label, [...s.points]);
    else points.push(...s.points);
  }
  const labels = [...byLabel.keys()].sort();
  return labels.map((label) => ({ label, buckets: metricTimeseries(byLabel.get(label) ?? [], q) }));
}

/**
 * One item of a metric history, field for field the interface's example response of
 * `/v1/metrics/{exchange,symbol,asset}/history`. Times are whatever the caller's formatter gives
 * (ISO text, or a number / digit string with `time_format`); the decimal aggregates are the
 * float values of the exact decimals, null when the bucket has no value_decimal point.
 *
 * @example
 * ```ts
 * const item: MetricTimeseriesItem<string> = toMetricTimeseriesItem(bucket, formatTime);
 * ```
 */
export interface MetricTimeseriesItem<T> {
  time_period_start: T;
  time_period_end: T;
  time_open: T;
  time_close: T;
  first: number | null;
  last: number | null;
  min: number | null;
  max: number | null;
  count: number;
  sum: number | null;
}

/**
 * Maps a bucket to its wire item, times formatted with `fmt`, fields in the interface's order.
 *
 * Why: METHODOLOGY section 10 — the timeseries items of the metric history endpoints.
 *
 * @example
 * ```ts
 * toMetricTimeseriesItem({ start: 0, end: 1e6, timeOpen: 5, timeClose: 5, count: 1 }, (us) => us);
 * // { time_period_start: 0, time_period_end: 1000000, time_open: 5, time_close: 5,
 * //   first: null, last: null, min: null, max: null, count: 1, sum: null }
 * ```
 */
export function toMetricTimeseriesItem<T>(b: MetricBucket, fmt: (us: TimeUs) => T): MetricTimeseriesItem<T> {
  const d = b.decimals;
  if (d === undefined) return itemOf(b.start, b.end, b.timeOpen, b.timeClose, null, null, null, null, b.count, null, fmt);
  return itemOf(b.start, b.end, b.timeOpen, b.timeClose, d.first.value, d.last.value, d.min.value, d.max.value, b.count, d.sum.value, fmt);
}

/** The wire item of a bucket's numbers, in the item's order (aggregates null when it has no decimal point). */
function itemOf<T>(
  start: TimeUs,
  end: TimeUs,
  timeOpen: TimeUs,
  timeClose: TimeUs,
  first: number | null,
  last: number | null,
  min: number | null,
  max: number | null,
  count: number,
  sum: number | null,
  fmt: (us: TimeUs) => T,
): MetricTimeseriesItem<T> {
  return {
    time_period_start: fmt(start),
    time_period_end: fmt(end),
    time_open: fmt(timeOpen),
    time_close: fmt(timeClose),
    first,
    last,
    min,
    max,
    count,
    sum,
  };
}

/**
 * The fields of a {@link MetricTimeseriesItem}, in its order: what {@link MetricBucketColumns}
 * keeps per bucket (field `f` of bucket `i` is `num(i, f)`).
 */
export const METRIC_ITEM_FIELDS = [
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
] as const satisfies readonly (keyof MetricTimeseriesItem<unknown>)[];

/** Numbers kept per bucket. */
const FIELDS = METRIC_ITEM_FIELDS.length;

/**
 * Data points as columns, in time order (equal times in log order), as a store reads them for a
 * long history: no object per point.
 *
 * @example
 * ```ts
 * const c: MetricPointColumns = { times: [1e6, 2e6], values: [0.5, null], texts: ['0.50', null] };
 * ```
 */
export interface MetricPointColumns {
  /** The points' times, µs. */
  readonly times: ArrayLike<TimeUs>;
  /** The float of each value_decimal point (null: NaN); anything for the other points. */
  readonly values: ArrayLike<number | null>;
  /** The exact text of each value_decimal point; null for a text or time value. */
  readonly texts: ArrayLike<string | null>;
}

/**
 * The buckets of a metric timeseries in columns: per bucket the numbers of its wire item (one
 * Float64Array; a few bytes per bucket, no object for the garbage collector), made by
 * {@link metricTimeseriesColumns}.
 *
 * @example
 * ```ts
 * const cols = metricTimeseriesColumns(points, { period: getPeriod('1SEC')! });
 * cols.item(0, formatTime); // the wire item of the first bucket
 * ```
 */
export interface MetricBucketColumns {
  /** Number of buckets. */
  readonly length: number;
  /**
   * Field `f` (index in {@link METRIC_ITEM_FIELDS}) of bucket `i`: a time in µs, the count, or
   * the float of an aggregate (NaN when the bucket has no decimal point).
   */
  num(i: number, f: number): number;
  /** Whether bucket `i` has a value_decimal point (else its first, last, min, max and sum are null). */
  hasDecimals(i: number): boolean;
  /** The exact text of bucket `i`'s sum, whose float is its `sum` (undefined: no value_decimal point). */
  sumText(i: number): string | undefined;
  /** The wire item of bucket `i`, as {@link toMetricTimeseriesItem} makes it. */
  item<T>(i: number, fmt: (us: TimeUs) => T): MetricTimeseriesItem<T>;
}

/** {@link MetricBucketColumns} filled bucket by bucket, growing by doubling. */
class Columns implements MetricBucketColumns {
  length = 0;
  private nums: Float64Array;
  private decimals: Uint8Array;
  private readonly sums: (string | undefined)[] = [];

  /** `capacity`: the buckets expected at most (more can be pushed). */
  constructor(capacity: number) {
    this.nums = new Float64Array(FIELDS * Math.max(1, capacity));
    this.decimals = new Uint8Array(Math.max(1, capacity));
  }

  /** Appends a closed bucket. */
  push(acc: Acc): void {
    if (this.length === this.decimals.length) this.grow();
    const a = this.nums;
    const o = this.length * FIELDS;
    a[o] = acc.start;
    a[o + 1] = acc.end;
    a[o + 2] = acc.timeOpen;
    a[o + 3] = acc.timeClose;
    a[o + 8] = acc.count;
    const { first, last, min, max } = acc;
    if (first === undefined || last === undefined || min === undefined || max === undefined) {
      a.fill(Number.NaN, o + 4, o + 8);
      a[o + 9] = Number.NaN;
      this.sums.push(undefined);
    } else {
      a[o + 4] = first.value;
      a[o + 5] = last.value;
      a[o + 6] = min.value;
      a[o + 7] = max.value;
      const sum = sumOf(first, acc.sum);
      a[o + 9] = sum.value;
      this.sums.push(sum.text);
      this.decimals[this.length] = 1;
    }
    this.length++;
  }

  private grow(): void {
    const nums = new Float64Array(this.nums.length * 2);
    nums.set(this.nums);
    this.nums = nums;
    const decimals = new Uint8Array(this.decimals.length * 2);
    decimals.set(this.decimals);
    this.decimals = decimals;
  }

  num(i: number, f: number): number {
    return this.nums[i * FIELDS + f];
  }

  hasDecimals(i: number): boolean {
    return this.decimals[i] === 1;
  }

  sumText(i: number): string | undefined {
    return this.sums[i];
  }

  item<T>(i: number, fmt: (us: TimeUs) => T): MetricTimeseriesItem<T> {
    const a = this.nums;
    const o = i * FIELDS;
    if (this.decimals[i] !== 1) return itemOf(a[o], a[o + 1], a[o + 2], a[o + 3], null, null, null, null, a[o + 8], null, fmt);
    return itemOf(a[o], a[o + 1], a[o + 2], a[o + 3], a[o + 4], a[o + 5], a[o + 6], a[o + 7], a[o + 8], a[o + 9], fmt);
  }
}

/**
 * {@link metricTimeseries} of points held in columns (already in time order, equal times in log
 * order), the buckets in columns: the same buckets, by the same rules, for a long history read
 * from a store without an object per point or per bucket.
 *
 * Why: METHODOLOGY section 10 (metric timeseries), as {@link metricTimeseries}.
 *
 * @param points - the data points, in time order (ties in log order)
 * @param q - the period, time window and limit
 * @returns the buckets, oldest first
 *
 * @example
 * ```ts
 * const cols = metricTimeseriesColumns({ times: [1_200_000, 1_500_000], values: [0.2, 0.1], texts: ['0.2', '0.1'] },
 *                                      { period: getPeriod('1SEC')! });
 * cols.item(0, (us) => us); // { time_period_start: 1000000, ..., first: 0.2, last: 0.1, min: 0.1, max: 0.2, count: 2, sum: 0.3 }
 * ```
 */
export function metricTimeseriesColumns(points: MetricPointColumns, q: MetricTimeseriesQuery): MetricBucketColumns {
  const { times, values, texts } = points;
  const out = new Columns(Math.min(times.length, q.limit ?? times.length));
  const b = new Bucketing(q, (acc) => out.push(acc));
  for (let i = 0; i < times.length; i++) {
    const text = texts[i];
    if (!b.add(times[i], text === null ? undefined : { value: values[i] ?? Number.NaN, text })) break;
  }
  b.close();
  return out;
}
