/**
 * What the metrics endpoints and `xrate metrics` read: the stored metric series of a replay (its
 * database, or a log replayed in memory), as of a tick.
 *
 * METHODOLOGY section 10: a `metric` event is one data point of the series (metric_id,
 * exchange_id, symbol_id or "", asset_id or ""); xrate's own metrics are series of the same shape
 * written by the engine whenever their value changes at a tick. "Current" is the latest point of
 * each series at or before T (ties: the later line). The listing is every `metric_definition`
 * (the latest description wins) plus every metric_id seen in a data point (xrate's own among
 * them only when their points are stored), sorted by metric_id.
 *
 * @module
 */

import type { TimeUs } from '../types.js';
import type { MetricScope, MetricValue, SeriesKey } from './events.js';
import type { MetricPointColumns } from './timeseries.js';

/**
 * One stored data point with its series key, in the order of the log (`seq`).
 *
 * @example
 * ```ts
 * const p: StoredMetricPoint = { metric_id: 'M', exchange_id: 'X', symbol_id: '', asset_id: 'BTC',
 *   time: 1704067200000000, recvTime: 1704067200000000, seq: 7, value: { kind: 'text', text: 'up' } };
 * ```
 */
export interface StoredMetricPoint extends SeriesKey {
  readonly chain_id?: string;
  readonly network_id?: string;
  /** The point's time (`entry_time` on the wire), µs. */
  readonly time: TimeUs;
  /** Its recv_time, or its time when it had none, µs. */
  readonly recvTime: TimeUs;
  /** Position in the log (later lines have larger numbers); breaks time ties. */
  readonly seq: number;
  readonly value: MetricValue;
}

/**
 * Which series a query is about: every given field must match exactly; `scope` keeps the series
 * of one scope (symbol-level: with a symbol_id; asset-level: an asset_id and no symbol_id;
 * exchange-level: neither).
 *
 * @example
 * ```ts
 * const f: MetricFilter = { scope: 'asset', asset_id: 'BTC', metric_id: 'XRATE_ASSET_USD_RATE' };
 * ```
 */
export interface MetricFilter {
  readonly scope?: MetricScope;
  readonly metric_id?: string;
  readonly exchange_id?: string;
  readonly symbol_id?: string;
  readonly asset_id?: string;
}

/**
 * A series with the times of its first and last data point (at or before a tick), what
 * `/v1/metrics/by-exchange/{exchange_id}` lists.
 *
 * @example
 * ```ts
 * const s: SeriesSpan = { metric_id: 'M', exchange_id: 'X', symbol_id: '', asset_id: 'BTC', first: 0, last: 1_000_000 };
 * ```
 */
export interface SeriesSpan extends SeriesKey {
  /** Time of the series' first data point, µs. */
  readonly first: TimeUs;
  /** Time of its last data point at or before the tick, µs. */
  readonly last: TimeUs;
}

/**
 * A metric of the listing.
 *
 * @example
 * ```ts
 * const d: MetricDefinition = { metric_id: 'XRATE_EXCHANGE_RANK', description: 'Rank of the exchange at the tick' };
 * ```
 */
export interface MetricDefinition {
  readonly metric_id: string;
  readonly description: string;
}

/**
 * The stored metrics of one replay, as of a tick. `at` is a time in µs: the answer is as of the
 * last tick at or before it (absent: the latest tick).
 *
 * @example
 * ```ts
 * const now = source.current({ scope: 'exchange', exchange_id: 'BINANCE' });
 * ```
 */
export interface MetricsSource {
  /** Every metric of the listing, sorted by metric_id. */
  listing(at?: TimeUs): MetricDefinition[];
  /** The keys of the series matching `filter` that have a point at or before `at`, sorted by (metric_id, exchange_id, symbol_id, asset_id). */
  series(filter: MetricFilter, at?: TimeUs): SeriesKey[];
  /** The latest point of each matching series at or before `at`, in the order of {@link series}. */
  current(filter: MetricFilter, at?: TimeUs): StoredMetricPoint[];
  /** The first and last point times of each matching series at or before `at`, in the order of {@link series}. */
  spans(filter: MetricFilter, at?: TimeUs): SeriesSpan[];
  /** Every point of the matching series with from <= time < to, by time then log order. */
  points(filter: MetricFilter, from: TimeUs, to: TimeUs): StoredMetricPoint[];
  /** The points of {@link points} as columns (time, and the value_decimal's float and text), as a long history reads them. */
  pointColumns(filter: MetricFilter, from: TimeUs, to: TimeUs): MetricPointColumns;
}

/**
 * Points (in time order, ties in log order) as the columns of a timeseries: each point's time,
 * and its value_decimal's float and text (null for a text or time value).
 *
 * @example
 * ```ts
 * pointColumnsOf(source.points(filter, from, to)); // { times: [...], values: [...], texts: [...] }
 * ```
 */
export function pointColumnsOf(points: readonly StoredMetricPoint[]): MetricPointColumns {
  const dec = (v: MetricValue) => (v.kind === 'decimal' ? v.dec : undefined);
  return {
    times: points.map((p) => p.time),
    values: points.map((p) => dec(p.value)?.value ?? null),
    texts: points.map((p) => dec(p.value)?.text ?? null),
  };
}

/**
 * Code-unit order of two strings (SQLite's BINARY order too, for ASCII ids).
 *
 * @example
 * ```ts
 * ['b', 'B', 'a'].sort(byCodeUnit); // ['B', 'a', 'b']
 * ```
 */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The listing of section 9: every definition (the later one winning) and every metric id seen in
 * a data point, sorted by metric_id (code-unit order). A metric seen with no definition has the
 * description of xrate's own metric of that id (`own`), else `""`; an own metric with no point
 * is not listed (a replay with `--no-own-metrics` stores none).
 *
 * @param seen - the metric ids of the stored points (any order, repeats allowed)
 * @param definitions - in log order
 *
 * @example
 * ```ts
 * metricListing(OWN_METRICS, ['M', 'XRATE_EXCHANGE_RANK'], [{ metric_id: 'M', description: 'Funding rate' }]);
 * // [{ metric_id: 'M', description: 'Funding rate' },
 * //  { metric_id: 'XRATE_EXCHANGE_RANK', description: 'rank of the exchange at the tick (xrate)' }]
 * ```
 */
export function metricListing(
  own: readonly MetricDefinition[],
  seen: Iterable<string>,
  definitions: Iterable<MetricDefinition>,
): MetricDefinition[] {
  const ownDescription = new Map(own.map((d) => [d.metric_id, d.description]));
  const byId = new Map<string, string>();
  for (const id of seen) if (!byId.has(id)) byId.set(id, ownDescription.get(id) ?? '');
  for (const d of definitions) byId.set(d.metric_id, d.description);
  return [...byId].map(([metric_id, description]) => ({ metric_id, description })).sort((a, b) => byCodeUnit(a.metric_id, b.metric_id));
}

/**
 * A {@link MetricsSource} whose every call goes to the source `now()` returns at that call (the
 * stored metrics of the run a database serves now).
 *
 * @example
 * ```ts
 * const metrics = delegatingMetrics(() => db.store.metrics(OWN_METRICS));
 * ```
 */
export function delegatingMetrics(now: () => MetricsSource): MetricsSource {
  return {
    listing: (at) => now().listing(at),
    series: (f, at) => now().series(f, at),
    current: (f, at) => now().current(f, at),
    spans: (f, at) => now().spans(f, at),
    points: (f, from, to) => now().points(f, from, to),
    pointColumns: (f, from, to) => now().pointColumns(f, from, to),
  };
}
