/**
 * The metrics routes (all GET, right `metrics`), over a {@link MetricsSource}:
 *
 * | route | answer |
 * |---|---|
 * | `/v1/metrics/listing` | `v1.Metric[]` (`time`) |
 * | `/v1/metrics/{exchange,symbol,asset}/listing` | `v1.ListingItem[]` of the series of that scope (`metric_id`, `exchange_id` (required for exchange), `symbol_id`, `asset_id`, `chain_id`, `network_id`, `time`) |
 * | `/v1/metrics/{exchange,symbol,asset}/current` | `v1.GeneralData[]`: the latest point of each series of that scope (same filters, `time`, `time_format`) |
 * | `/v1/metrics/exchange/{exchange_id}/current`, `/v1/metrics/symbol/{symbol_id}/current`, `/v1/metrics/asset/{asset_id}/current` | the same, the id taken from the path |
 * | `/v1/metrics/by-exchange/{exchange_id}` | `v1.GeneralData[]`: the latest point of every series of the exchange, of every scope |
 * | `/v1/metrics/{exchange,symbol,asset}/history` | the timeseries items of one series (`metric_id` and the scope's id required; `period_id`, `time_start`, `time_end`, `limit`, `time_format`) |
 * | `/v1/metrics/history` | the timeseries of the points of every series matching the filters together (`metric_id` required) |
 * | `/v1/metrics/group` | `[{groupby, label, data: items}]`: one timeseries per value of `groupby` among the matching series, labels sorted |
 *
 * Times are ISO 8601 with 7 fractional digits as in the exchange-rate answers, or Unix timestamps
 * with `time_format` (nanoseconds as a string of digits, see timeFormat.ts). `period_id` takes
 * the second-to-day ids and the month ids (default `1SEC`). A history costs one request per 100
 * items returned (at least 1); every other answer costs 1. Every bad parameter is a 400 naming it.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { MetricScope, MetricValue, SeriesKey } from '../core/metrics/events.js';
import type { MetricFilter, MetricsSource, StoredMetricPoint } from '../core/metrics/source.js';
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
import { badParam, missingParam, noData } from './errors.js';
import type { RequestLimits } from './requestLimits.js';
import { metricHistoryJson, type TimeWriter } from './metricHistory.js';
import { type Query, shown } from './params.js';
import { answerFromTable, type Answer, registerRouteTable, type TableRoute } from './routeTable.js';
import { ratesAsWritten } from './metricRates.js';

/** Options of {@link registerMetricRoutes}. */
export interface MetricRouteOptions {
  /** The request limits of the service (charges and limit headers, heavy requests). */
  limits: RequestLimits;
}

/** The id parameters that filter series (the fields of {@link SeriesKey}). */
type IdParam = keyof SeriesKey;
type Ids = Partial<Record<IdParam, string>>;

const ID_PARAMS: readonly IdParam[] = ['metric_id', 'exchange_id', 'symbol_id', 'asset_id'];
const GROUP_BY: readonly MetricGroupBy[] = ['symbol_id', 'asset_id', 'exchange_id', 'metric_id'];

/** The required ids of the routes of each scope (spec: the `required` query parameters). */
const REQUIRED: Record<MetricScope, { listing: IdParam[]; history: IdParam[] }> = {
  exchange: { listing: ['exchange_id'], history: ['metric_id', 'exchange_id'] },
  symbol: { listing: [], history: ['metric_id', 'symbol_id'] },
  asset: { listing: [], history: ['metric_id', 'exchange_id', 'asset_id'] },
};
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
 * differs from the path's is a 400), each of `required` present (else 400).
 */
function filterOf(q: Query, scope: MetricScope | undefined, required: readonly IdParam[], path: Ids = {}): MetricFilter {
  if (q.text('asset_id_external') !== undefined) throw badParam('asset_id_external', 'xrate keeps no external asset ids: use asset_id');
  const ids: Ids = {};
  for (const name of ID_PARAMS) {
    const given = q.text(name);
    const fromPath = path[name];
    if (fromPath !== undefined && given !== undefined && given !== fromPath)
      throw badParam(name, `${shown(given)} differs from the path's ${shown(fromPath)}`);
    const v = fromPath ?? given;
    if (v === undefined && required.includes(name)) throw missingParam(name);
    if (v !== undefined) ids[name] = v;
  }
  return scope === undefined ? ids : { scope, ...ids };
}

/** The object without its undefined and empty-string fields (the interface omits absent ids). */
function present<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as Partial<T>;
}

/** The `v1.ListingItem` of a series (its chain and network as of its latest point). */
function listingItem(p: StoredMetricPoint): Record<string, unknown> {
  const { metric_id, symbol_id, exchange_id, asset_id, chain_id, network_id } = p;
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

/** The `v1.GeneralData` of a point, fields in the schema's order. */
function currentItem(p: StoredMetricPoint, time: TimeWriter): Record<string, unknown> {
  const ids = present({ exchange_id: p.exchange_id, asset_id: p.asset_id, symbol_id: p.symbol_id, metric_id: p.metric_id });
  return { entry_time: time(p.time), recv_time: time(p.recvTime), ...ids, ...valueField(p.value, time) };
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
    throw noData(`no ${filter.scope === undefined ? '' : `${filter.scope}-level `}metric series with ${described(filter)}`);
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

/** The matching series with their points in the window (a series with none is kept, empty). */
function keyedSeries(source: MetricsSource, filter: MetricFilter, w: MetricTimeseriesQuery): KeyedMetricSeries[] {
  const id = (k: SeriesKey) => JSON.stringify([k.metric_id, k.exchange_id, k.symbol_id, k.asset_id]);
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

/** `/v1/metrics/group`: one timeseries per distinct value of `groupby`, labels sorted. */
function groupAnswer(source: MetricsSource, q: Query): Answer {
  const text = q.text('groupby');
  if (text === undefined) throw missingParam('groupby', GROUP_BY.join(', '));
  const groupby = GROUP_BY.find((g) => g === text.toLowerCase());
  if (groupby === undefined) throw badParam('groupby', `${shown(text)} is not one of ${GROUP_BY.join(', ')}`);
  const time = timeWriter(q);
  const w = timeseriesQuery(q);
  const groups = groupMetricSeries(keyedSeries(source, filterOf(q, undefined, []), w), groupby, w).map((g) => ({
    groupby,
    label: g.label,
    data: g.buckets.map((b) => toMetricTimeseriesItem(b, time)),
  }));
  return { kind: 'metric_groups', value: groups, cost: itemsCost(groups.reduce((n, g) => n + g.data.length, 0)) };
}

/** The listing items or the current values of the series matching `filter` (cost 1). */
function currentAnswer(source: MetricsSource, q: Query, what: 'listing' | 'current', filter: MetricFilter): Answer {
  const points = source.current(filter, q.time('time')).filter(chainFilter(q));
  if (what === 'listing') return { kind: 'metric_listing', value: points.map(listingItem), cost: 1 };
  const time = timeWriter(q);
  return { kind: 'metric_current', value: points.map((p) => currentItem(p, time)), cost: 1 };
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
  ...(['exchange', 'symbol', 'asset'] as const).flatMap((scope): MetricRoute[] => {
    const { listing, history } = REQUIRED[scope];
    return [
      {
        path: `/v1/metrics/${scope}/listing`,
        timeseries: false,
        answer: (src, q) => currentAnswer(src, q, 'listing', filterOf(q, scope, listing)),
      },
      {
        path: `/v1/metrics/${scope}/current`,
        timeseries: false,
        answer: (src, q) => currentAnswer(src, q, 'current', filterOf(q, scope, listing)),
      },
      {
        path: `/v1/metrics/${scope}/:${PATH_ID[scope]}/current`,
        timeseries: false,
        answer: (src, q, p) => currentAnswer(src, q, 'current', filterOf(q, scope, [], p)),
      },
      { path: `/v1/metrics/${scope}/history`, timeseries: true, answer: (src, q) => historyAnswer(src, q, filterOf(q, scope, history)) },
    ];
  }),
  {
    path: '/v1/metrics/by-exchange/:exchange_id',
    timeseries: false,
    answer: (src, q, p) => currentAnswer(src, q, 'current', filterOf(q, undefined, [], p)),
  },
  { path: '/v1/metrics/history', timeseries: true, answer: (src, q) => historyAnswer(src, q, filterOf(q, undefined, ['metric_id'])) },
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
  registerRouteTable(app, ROUTES, ratesAsWritten(source), 'metrics', opts.limits);
}
