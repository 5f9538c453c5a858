/**
 * The metrics routes (all GET, right `metrics`), over a {@link MetricsSource}. Required
 * parameters are those of the interface description's table, declared with each route
 * (api/tableRoutes.ts) and checked before it answers (a missing one is a 400 naming it; "one of"
 * names each):
 *
 * | route | requires | answer |
 * |---|---|---|
 * | `/v1/metrics/listing` | | `[{metric_id, description}]` (`time`) |
 * | `/v1/metrics/exchange/listing` | exchange_id | `[{exchange_id, metric_id}]` of the exchange-level series |
 * | `/v1/metrics/symbol/listing` | exchange_id or symbol_id | `[{exchange_id, metric_id, symbol_id}]` of the symbol-level series |
 * | `/v1/metrics/asset/listing` | | `v1.ListingItem[]` of the asset-level series (`metric_id, exchange_id, asset_id, chain_id?, network_id?`) |
 * | `/v1/metrics/exchange/current` | exchange_id | current values of the exchange-level series (no asset_id, no symbol_id) |
 * | `/v1/metrics/symbol/current` | exchange_id or symbol_id | current values of the symbol-level series (asset_id and symbol_id) |
 * | `/v1/metrics/asset/current` | | current values of the asset-level series (asset_id, no symbol_id) |
 * | `/v1/metrics/{exchange,symbol,asset}/{id}/current` | (path) | the same, the id taken from the path |
 * | `/v1/metrics/by-exchange/{exchange_id}` | (path) | `[{asset_id, exchange_id, metric_id, symbol_id, chain_id, network_id, min_time, max_time}]`: every series of the exchange, of every scope |
 * | `/v1/metrics/exchange/history` | metric_id, exchange_id | the timeseries items of the series |
 * | `/v1/metrics/symbol/history` | metric_id, symbol_id | the same |
 * | `/v1/metrics/asset/history` | metric_id, exchange_id, asset_id | the same |
 * | `/v1/metrics/history` | metric_id; symbol_id, asset_id or exchange_id | the items of the points of every matching series together |
 * | `/v1/metrics/group` | metric_id; exchange_id, symbol_id or asset_id; groupby | `{series_label: [...], rows: [[items], ...]}`: one timeseries per value of `groupby` among the matching series, labels sorted |
 *
 * Every listing and current route also filters by the other ids given (`metric_id`,
 * `exchange_id`, `symbol_id`, `asset_id`, `chain_id`, `network_id`) and answers as of `time`.
 * Times are ISO 8601 with 7 fractional digits as in the exchange-rate answers, or Unix timestamps
 * with `time_format` (nanoseconds as a string of digits, see timeFormat.ts). `period_id` takes
 * the second-to-day ids and the month ids (default `1SEC`). A history or group costs one request
 * per 100 items returned (at least 1); every other answer costs 1. Every bad parameter is a 400
 * naming it.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { MetricScope, MetricValue, SeriesKey } from '../core/metrics/events.js';
import type { MetricFilter, MetricsSource, SeriesSpan, StoredMetricPoint } from '../core/metrics/source.js';
import { formatTimeAs, parseTimeFormat } from '../core/metrics/timeFormat.js';
import {
  groupMetricSeries,
  type KeyedMetricSeries,
  type MetricBucketColumns,
  type MetricGroupBy,
  type MetricTimeseriesItem,
  metricTimeseriesColumns,
  type MetricTimeseriesQuery,
  toMetricTimeseriesItem,
} from '../core/metrics/timeseries.js';
import { bucketStartAtOrAfter, getPeriod } from '../core/periods.js';
import { formatTime, TIME_RANGE } from '../core/time.js';
import type { TimeUs } from '../core/types.js';
import { HISTORY_MAX_LIMIT } from '../replay/query.js';
import { badParam } from '../http/errors.js';
import { noDataError } from '../answers/index.js';
import type { RequestLimits } from './requestLimits.js';
import { metricHistoryJson, type TimeWriter } from './metricHistory.js';
import { type Query, shown } from '../http/params.js';
import { answerFromTable, type Answer, type Offload, registerRouteTable, type TableRoute } from './routeTable.js';
import { ratesAsWritten } from './metricRates.js';

/** Options of {@link registerMetricRoutes}. */
export interface MetricRouteOptions {
  /** The request limits of the service (charges and limit headers, heavy requests). */
  limits: RequestLimits;
  /** Where long timeseries are answered off the event loop (heavyPool.ts); none: here. */
  offload?: Offload;
}

/** The id parameters that filter series (the fields of {@link SeriesKey}). */
type IdParam = keyof SeriesKey;
type Ids = Partial<Record<IdParam, string>>;

const ID_PARAMS: readonly IdParam[] = ['metric_id', 'exchange_id', 'symbol_id', 'asset_id'];
const GROUP_BY: readonly MetricGroupBy[] = ['symbol_id', 'asset_id', 'exchange_id', 'metric_id'];

const PATH_ID: Record<MetricScope, IdParam> = { exchange: 'exchange_id', symbol: 'symbol_id', asset: 'asset_id' };

/** Every point whose bucket can be answered: no bound on either side. */
const ALL_TIME = { first: TIME_RANGE.first, end: TIME_RANGE.last };

/** Every 100 items returned cost one request, at least 1 (as the exchange-rate history). */
function itemsCost(n: number): number {
  return Math.max(1, Math.ceil(n / 100));
}

/** `time_format`: ISO text when absent, else one of the four Unix units (400 on any other). */
function timeWriter(q: Query): TimeWriter {
  const text = q.text('time_format');
  if (text === undefined) return formatTime;
  const unit = parseTimeFormat(text);
  if (unit === undefined)
    throw badParam('time_format', `${shown(text)} is not one of unix_sec, unix_millisec, unix_microsec, unix_nanosec`);
  return (us) => formatTimeAs(us, unit);
}

/**
 * The filter of a request: `scope`, the ids of the query (those of the path win; a query id that
 * differs from the path's is a 400). The ids a route requires are checked before (its declaration).
 */
function filterOf(q: Query, scope: MetricScope | undefined, path: Ids = {}): MetricFilter {
  if (q.text('asset_id_external') !== undefined) throw badParam('asset_id_external', 'xrate keeps no external asset ids: use asset_id');
  const ids: Ids = {};
  for (const name of ID_PARAMS) {
    const given = q.text(name);
    const fromPath = path[name];
    if (fromPath !== undefined && given !== undefined && given !== fromPath)
      throw badParam(name, `${shown(given)} differs from the path's ${shown(fromPath)}`);
    const v = fromPath ?? given;
    if (v !== undefined) ids[name] = v;
  }
  return scope === undefined ? ids : { scope, ...ids };
}

/** The object without its undefined and empty-string fields (the interface omits absent ids). */
function present<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as Partial<T>;
}

/** The listing item of a series (its chain and network as of its latest point): the fields of its scope's listing. */
function listingItem(p: StoredMetricPoint, scope: MetricScope): Record<string, unknown> {
  const { metric_id, symbol_id, exchange_id, asset_id, chain_id, network_id } = p;
  if (scope === 'exchange') return { exchange_id, metric_id };
  if (scope === 'symbol') return { exchange_id, metric_id, symbol_id };
  return present({ metric_id, symbol_id, exchange_id, asset_id, chain_id, network_id });
}

/** The value field of a point: exactly one of value_decimal, value_text, value_time. */
function valueField(v: MetricValue, time: TimeWriter): Record<string, unknown> {
  switch (v.kind) {
    case 'decimal':
      return { value_decimal: v.dec.value };
    case 'text':
      return { value_text: v.text };
    case 'time':
      return { value_time: time(v.us) };
  }
}

/**
 * The current value of a point, fields in the description's order: `asset_id` on the asset- and
 * symbol-level answers (`""` for a symbol-level point without one), `symbol_id` on the
 * symbol-level ones; neither on the exchange-level ones.
 */
function currentItem(p: StoredMetricPoint, scope: MetricScope, time: TimeWriter): Record<string, unknown> {
  const ids =
    scope === 'exchange'
      ? { exchange_id: p.exchange_id, metric_id: p.metric_id }
      : scope === 'asset'
        ? { exchange_id: p.exchange_id, asset_id: p.asset_id, metric_id: p.metric_id }
        : { exchange_id: p.exchange_id, asset_id: p.asset_id, symbol_id: p.symbol_id, metric_id: p.metric_id };
  return { entry_time: time(p.time), recv_time: time(p.recvTime), ...ids, ...valueField(p.value, time) };
}

/**
 * The metric-by-exchange item of a series: its ids (`""` for those it has none of), the chain and
 * network of its latest point (`""` when absent), the times of its first and last points.
 */
function byExchangeItem(s: SeriesSpan, latest: StoredMetricPoint | undefined, time: TimeWriter): Record<string, unknown> {
  return {
    asset_id: s.asset_id,
    exchange_id: s.exchange_id,
    metric_id: s.metric_id,
    symbol_id: s.symbol_id,
    chain_id: latest?.chain_id ?? '',
    network_id: latest?.network_id ?? '',
    min_time: time(s.first),
    max_time: time(s.last),
  };
}

/** Whether a point's chain and network match the `chain_id` / `network_id` filters. */
function chainFilter(q: Query): (p: StoredMetricPoint) => boolean {
  const chain = q.text('chain_id');
  const network = q.text('network_id');
  return (p) => (chain === undefined || p.chain_id === chain) && (network === undefined || p.network_id === network);
}

/** The bucket window and limit of a history (`period_id`, `time_start`, `time_end`, `limit`). */
function timeseriesQuery(q: Query): MetricTimeseriesQuery & { limit: number } {
  const pid = q.text('period_id') ?? '1SEC';
  const period = getPeriod(pid, { months: true });
  if (period === undefined)
    throw badParam(
      'period_id',
      `${shown(pid)} is not a period (1SEC..10DAY as /v1/exchangerate/history/periods, or 1MTH, 2MTH, 3MTH, 4MTH, 6MTH, 1YRS, ...)`,
    );
  const timeStart = q.time('time_start');
  const timeEnd = q.time('time_end');
  if (timeStart !== undefined && timeEnd !== undefined && !(timeEnd > timeStart)) throw badParam('time_end', 'must be after time_start');
  const limit = q.int('limit', 1, HISTORY_MAX_LIMIT, 100);
  return { period, timeStart, timeEnd, limit };
}

/** The time range [from, to) of the points a history reads: those in the buckets that start in [time_start, time_end). */
function pointRange(w: MetricTimeseriesQuery): { from: TimeUs; to: TimeUs } {
  const from = w.timeStart === undefined ? ALL_TIME.first : bucketStartAtOrAfter(w.timeStart, w.period);
  const to = w.timeEnd === undefined ? ALL_TIME.end : bucketStartAtOrAfter(w.timeEnd, w.period);
  return { from, to };
}

/** The points a history reads (see {@link pointRange}). */
function pointsOf(source: MetricsSource, filter: MetricFilter, w: MetricTimeseriesQuery): StoredMetricPoint[] {
  const { from, to } = pointRange(w);
  return source.points(filter, from, to);
}

/** Words a filter for a message: `metric_id "M", exchange_id "X"`. */
function described(f: MetricFilter): string {
  return ID_PARAMS.flatMap((k) => (f[k] === undefined ? [] : [`${k} ${shown(f[k])}`])).join(', ');
}

/**
 * The series of a history (550 when none matches); its items, one per non-empty bucket. The
 * points are read as columns and the buckets kept in columns: the items are made only if asked
 * for, a JSON answer is written from the columns ({@link metricHistoryJson}).
 */
function historyAnswer(source: MetricsSource, q: Query, filter: MetricFilter): Answer {
  const time = timeWriter(q);
  const w = timeseriesQuery(q);
  const { from, to } = pointRange(w);
  const points = source.pointColumns(filter, from, to);
  if (points.times.length === 0 && source.series(filter).length === 0)
    throw noDataError(`no ${filter.scope === undefined ? '' : `${filter.scope}-level `}metric series with ${described(filter)}`);
  const cols = metricTimeseriesColumns(points, w);
  let items: MetricTimeseriesItem<string | number>[] | undefined;
  return {
    kind: 'metric_history',
    get value() {
      items ??= itemsOf(cols, time);
      return items;
    },
    cost: itemsCost(cols.length),
    json: metricHistoryJson(cols, time),
  };
}

/** The wire items of buckets in columns. */
function itemsOf(cols: MetricBucketColumns, time: TimeWriter): MetricTimeseriesItem<string | number>[] {
  const out: MetricTimeseriesItem<string | number>[] = [];
  for (let i = 0; i < cols.length; i++) out.push(cols.item(i, time));
  return out;
}

/** The key of a series as one string. */
function seriesId(k: SeriesKey): string {
  return JSON.stringify([k.metric_id, k.exchange_id, k.symbol_id, k.asset_id]);
}

/** The matching series with their points in the window (a series with none is kept, empty). */
function keyedSeries(source: MetricsSource, filter: MetricFilter, w: MetricTimeseriesQuery): KeyedMetricSeries[] {
  const id = seriesId;
  const byId = new Map<string, { key: SeriesKey; points: StoredMetricPoint[] }>();
  for (const key of source.series(filter)) byId.set(id(key), { key, points: [] });
  for (const p of pointsOf(source, filter, w)) {
    let s = byId.get(id(p));
    if (s === undefined) {
      s = { key: p, points: [] };
      byId.set(id(p), s);
    }
    s.points.push(p);
  }
  return [...byId.values()];
}

/**
 * `/v1/metrics/group`: one timeseries per distinct value of `groupby`, labels sorted, as
 * `{series_label, rows}` (the items of `rows[i]` are those of `series_label[i]`).
 */
function groupAnswer(source: MetricsSource, q: Query): Answer {
  const filter = filterOf(q, undefined);
  // Declared required: checked before the route answers.
  const text = q.text('groupby')!;
  const groupby = GROUP_BY.find((g) => g === text.toLowerCase());
  if (groupby === undefined) throw badParam('groupby', `${shown(text)} is not one of ${GROUP_BY.join(', ')}`);
  const time = timeWriter(q);
  const w = timeseriesQuery(q);
  const groups = groupMetricSeries(keyedSeries(source, filter, w), groupby, w);
  const rows = groups.map((g) => g.buckets.map((b) => toMetricTimeseriesItem(b, time)));
  const value = { series_label: groups.map((g) => g.label), rows };
  return { kind: 'metric_groups', value, cost: itemsCost(rows.reduce((n, r) => n + r.length, 0)) };
}

/** The listing items or the current values of the series of `scope` matching `filter` (cost 1). */
function currentAnswer(source: MetricsSource, q: Query, what: 'listing' | 'current', scope: MetricScope, filter: MetricFilter): Answer {
  const points = source.current(filter, q.time('time')).filter(chainFilter(q));
  if (what === 'listing') return { kind: `metric_${scope}_listing`, value: points.map((p) => listingItem(p, scope)), cost: 1 };
  const time = timeWriter(q);
  return { kind: 'metric_current', value: points.map((p) => currentItem(p, scope, time)), cost: 1 };
}

/** `/v1/metrics/by-exchange/{exchange_id}`: every series of the exchange with its first and last point times (cost 1). */
function byExchangeAnswer(source: MetricsSource, q: Query, filter: MetricFilter): Answer {
  const at = q.time('time');
  const time = timeWriter(q);
  const latest = new Map(source.current(filter, at).map((p) => [seriesId(p), p]));
  const keep = chainFilter(q);
  const value = source.spans(filter, at).flatMap((s) => {
    const p = latest.get(seriesId(s));
    return p === undefined || keep(p) ? [byExchangeItem(s, p, time)] : [];
  });
  return { kind: 'metric_by_exchange', value, cost: 1 };
}

/** A metrics route: its path (fastify syntax), whether it is a timeseries, and its answer. */
type MetricRoute = TableRoute<MetricsSource>;

/** Every metrics route (see the module description). */
const ROUTES: readonly MetricRoute[] = [
  {
    path: '/v1/metrics/listing',
    timeseries: false,
    answer: (src, q) => ({ kind: 'metrics', value: src.listing(q.time('time')), cost: 1 }),
  },
  ...(['exchange', 'symbol', 'asset'] as const).flatMap((scope): MetricRoute[] => [
    {
      path: `/v1/metrics/${scope}/listing`,
      timeseries: false,
      answer: (src, q) => currentAnswer(src, q, 'listing', scope, filterOf(q, scope)),
    },
    {
      path: `/v1/metrics/${scope}/current`,
      timeseries: false,
      answer: (src, q) => currentAnswer(src, q, 'current', scope, filterOf(q, scope)),
    },
    {
      path: `/v1/metrics/${scope}/:${PATH_ID[scope]}/current`,
      timeseries: false,
      answer: (src, q, p) => currentAnswer(src, q, 'current', scope, filterOf(q, scope, p)),
    },
    { path: `/v1/metrics/${scope}/history`, timeseries: true, answer: (src, q) => historyAnswer(src, q, filterOf(q, scope)) },
  ]),
  {
    path: '/v1/metrics/by-exchange/:exchange_id',
    timeseries: false,
    answer: (src, q, p) => byExchangeAnswer(src, q, filterOf(q, undefined, p)),
  },
  { path: '/v1/metrics/history', timeseries: true, answer: (src, q) => historyAnswer(src, q, filterOf(q, undefined)) },
  { path: '/v1/metrics/group', timeseries: true, answer: (src, q) => groupAnswer(src, q) },
];

/**
 * The answer of the metrics route at `path` (e.g. `/v1/metrics/exchange/current`) to `query`, as
 * the service gives it, without HTTP: what `xrate metrics` prints. Undefined when no route has
 * that path; a bad parameter throws the service's error (status and message).
 *
 * @example
 * ```ts
 * answerMetrics(source, '/v1/metrics/exchange/current', { exchange_id: 'BINANCE' })?.value;
 * ```
 */
export function answerMetrics(source: MetricsSource, path: string, query: Record<string, string>): Answer | undefined {
  return answerFromTable(ROUTES, ratesAsWritten(source), path, query);
}

/**
 * Registers the metrics routes on `app` (the onRequest hook of server.ts authenticates the key
 * and checks the `metrics` right); see the module description. A timeseries of more than
 * HEAVY_LIMIT items is a heavy request, as the exchange-rate history.
 */
export function registerMetricRoutes(app: FastifyInstance, source: MetricsSource, opts: MetricRouteOptions): void {
  registerRouteTable(app, ROUTES, ratesAsWritten(source), 'metrics', opts.limits, opts.offload);
}
