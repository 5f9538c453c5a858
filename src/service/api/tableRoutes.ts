/**
 * Declarations of the routes served from a route table (routeTable.ts): the metrics routes
 * (metrics.ts, right `metrics`) and the symbols routes (symbols.ts, right `symbols`), looked up by
 * path when the tables are registered or answered for the CLI.
 *
 * @module
 */
import { EXCHANGE_RATE_PERIODS, MONTH_PERIODS } from '../../core/periods.js';
import { HISTORY_MAX_LIMIT } from '../../replay/query.js';
import { arrayOf, type ParamDecl, pathParam, queryParam, type RouteDecl, ref } from '../../http/declare.js';
import { XrateError } from '../../core/errors.js';

const SCOPES = ['exchange', 'symbol', 'asset'] as const;
type Scope = (typeof SCOPES)[number];
const TITLE: Record<Scope, string> = { exchange: 'Exchange', symbol: 'Symbol', asset: 'Asset' };
const PATH_ID: Record<Scope, string> = { exchange: 'exchange_id', symbol: 'symbol_id', asset: 'asset_id' };
/** The id parameters, in the order the metrics routes read them. */
const IDS = ['metric_id', 'exchange_id', 'symbol_id', 'asset_id'] as const;
type Id = (typeof IDS)[number];
const DATA_ERRORS = [400, 401, 403, 429, 550] as const;
const LIST_ERRORS = [400, 401, 403, 429] as const;

const ID_TEXT: Record<Id, string> = {
  metric_id: 'Metric identifier (see /v1/metrics/listing).',
  exchange_id: 'Exchange identifier, e.g. BINANCE.',
  symbol_id: 'Symbol identifier, e.g. BINANCE_SPOT_BTC_USDT.',
  asset_id: 'Asset identifier, e.g. BTC.',
};

/**
 * What a route requires of the id parameters (the interface description's table): each of `all`,
 * and at least one of `oneOf`.
 */
interface IdsRequired {
  readonly all?: readonly Id[];
  readonly oneOf?: readonly Id[];
}

/**
 * The id parameters of a route (but `except`, the path's), with what it requires: in the order
 * the routes read them, the members of a one-of group in the order the group names them.
 */
function ids(required: IdsRequired = {}, except?: Id): ParamDecl[] {
  const group = required.oneOf ?? [];
  const order = [...IDS.filter((n) => !group.includes(n)), ...group].filter((n) => n !== except);
  return order.map((n) =>
    queryParam(n, 'string', ID_TEXT[n], { required: required.all?.includes(n), ...(group.includes(n) && { oneOf: 'ids' }) }),
  );
}

/** The ids each scope's listing and current routes require, and its history. */
const REQUIRED: Record<Scope, { listing: IdsRequired; history: IdsRequired }> = {
  exchange: { listing: { all: ['exchange_id'] }, history: { all: ['metric_id', 'exchange_id'] } },
  symbol: { listing: { oneOf: ['exchange_id', 'symbol_id'] }, history: { all: ['metric_id', 'symbol_id'] } },
  asset: { listing: {}, history: { all: ['metric_id', 'exchange_id', 'asset_id'] } },
};

const CHAIN = queryParam('chain_id', 'string', 'Blockchain identifier: series whose latest point is on it.');
const NETWORK = queryParam('network_id', 'string', 'Network identifier: series whose latest point is on it.');
const AT = queryParam('time', 'time', 'As of the last data point at or before this time; absent: the latest.', { extension: true });
const TIME_FORMAT = queryParam('time_format', 'string', 'Times as Unix timestamps in this unit (nanoseconds as a string of digits).', {
  enum: ['unix_sec', 'unix_millisec', 'unix_microsec', 'unix_nanosec'],
});
const TIMESERIES: readonly ParamDecl[] = [
  queryParam('period_id', 'string', 'Period identifier (matched ignoring case): 1SEC .. 10DAY, or months and years.', {
    enum: [...EXCHANGE_RATE_PERIODS, ...MONTH_PERIODS].map((p) => p.period_id),
    default: '1SEC',
  }),
  queryParam('time_start', 'time', 'Periods starting at or after this time; absent: from the first.'),
  queryParam('time_end', 'time', 'Periods starting before this time; absent: through the last.'),
  queryParam('limit', 'integer', 'Items to return at most (every 100 returned cost one request).', {
    minimum: 1,
    maximum: HISTORY_MAX_LIMIT,
    default: 100,
  }),
  TIME_FORMAT,
];

function metricRoute(path: string, operationId: string, summary: string, rest: Partial<RouteDecl> & Pick<RouteDecl, 'ok'>): RouteDecl {
  return { path, operationId, tag: 'Metrics', summary, right: 'metrics', formats: true, errors: LIST_ERRORS, ...rest };
}

function scopeRoutes(scope: Scope): RouteDecl[] {
  const T = TITLE[scope];
  const { listing, history } = REQUIRED[scope];
  const current = arrayOf(ref(`${T}MetricCurrentValue`));
  return [
    metricRoute(`/v1/metrics/${scope}/listing`, `list${T}Metrics`, `${T}-level metric series`, {
      params: [...ids(listing), CHAIN, NETWORK, AT],
      ok: { description: `The ${scope}-level series matching the filters`, schema: arrayOf(ref(`${T}MetricListingItem`)) },
    }),
    metricRoute(`/v1/metrics/${scope}/current`, `get${T}MetricsCurrent`, `Current ${scope}-level metrics`, {
      params: [...ids(listing), CHAIN, NETWORK, AT, TIME_FORMAT],
      ok: { description: 'The latest point of each matching series', schema: current },
    }),
    metricRoute(`/v1/metrics/${scope}/:${PATH_ID[scope]}/current`, `get${T}MetricsCurrentById`, `Current metrics of one ${scope}`, {
      params: [pathParam(PATH_ID[scope], ID_TEXT[PATH_ID[scope] as Id]), ...ids({}, PATH_ID[scope] as Id), CHAIN, NETWORK, AT, TIME_FORMAT],
      ok: { description: 'The latest point of each of its series', schema: current },
    }),
    metricRoute(`/v1/metrics/${scope}/history`, `get${T}MetricHistory`, `History of one ${scope}-level series`, {
      params: [...ids(history), ...TIMESERIES],
      ok: { description: 'The periods of the series', schema: arrayOf(ref('MetricTimeseriesItem')) },
      errors: DATA_ERRORS,
    }),
  ];
}

/** The metrics routes, in the order of metrics.ts' table. */
const METRIC_ROUTES: readonly RouteDecl[] = [
  metricRoute('/v1/metrics/listing', 'listMetrics', 'Metrics', {
    params: [AT],
    ok: { description: 'The metrics the data holds, sorted by metric_id', schema: arrayOf(ref('Metric')) },
  }),
  ...SCOPES.flatMap(scopeRoutes),
  metricRoute('/v1/metrics/by-exchange/:exchange_id', 'getMetricsByExchange', 'Metric series of an exchange', {
    params: [pathParam('exchange_id', ID_TEXT.exchange_id), ...ids({}, 'exchange_id'), CHAIN, NETWORK, AT, TIME_FORMAT],
    ok: {
      description: 'Every series of the exchange, of every level, with the times of its first and last data points',
      schema: arrayOf(ref('MetricByExchangeItem')),
    },
  }),
  metricRoute('/v1/metrics/history', 'getMetricHistory', 'History of the matching series together', {
    params: [...ids({ all: ['metric_id'], oneOf: ['symbol_id', 'asset_id', 'exchange_id'] }), ...TIMESERIES],
    ok: { description: 'The periods of the points of every matching series', schema: arrayOf(ref('MetricTimeseriesItem')) },
    errors: DATA_ERRORS,
  }),
  metricRoute('/v1/metrics/group', 'getMetricGroups', 'Metric timeseries grouped', {
    description:
      'One timeseries per value of `groupby` among the matching series, labels sorted. Every 100 items returned cost one request.',
    params: [
      ...ids({ all: ['metric_id'], oneOf: ['exchange_id', 'symbol_id', 'asset_id'] }),
      queryParam('groupby', 'string', 'The field whose values label the groups (matched ignoring case).', {
        required: true,
        enum: ['symbol_id', 'asset_id', 'exchange_id', 'metric_id'],
      }),
      ...TIMESERIES,
    ],
    ok: { description: 'The groups', schema: ref('MetricGroups') },
  }),
];

const SYMBOL_FILTER = queryParam(
  'filter_symbol_id',
  'string',
  'Symbol id prefixes (e.g. BITSTAMP_, BINANCE_SPOT_), separated by `,` or `;`, matched ignoring case.',
);
const ASSET_FILTER = queryParam('filter_asset_id', 'string', 'Assets (base or quote), separated by `,` or `;`, matched ignoring case.');
const SYMBOL_TIME = queryParam(
  'time',
  'time',
  'As of the last tick at or before this time; absent: the last tick. Before the last tick of a replay database: 550 (ask the log).',
  { extension: true },
);
const EXCHANGE = pathParam('exchange_id', 'Exchange identifier, e.g. BINANCE');

function symbolRoute(path: string, operationId: string, summary: string, rest: Partial<RouteDecl> & Pick<RouteDecl, 'ok'>): RouteDecl {
  return { path, operationId, tag: 'Metadata', summary, right: 'symbols', formats: true, errors: DATA_ERRORS, ...rest };
}

/** The symbols routes, in the order of symbols.ts' table. */
const SYMBOL_ROUTES: readonly RouteDecl[] = [
  symbolRoute('/v1/symbols', 'listAllSymbols', 'List all symbols', {
    params: [
      SYMBOL_FILTER,
      queryParam('filter_exchange_id', 'string', 'Exchanges, separated by `,` or `;`, matched ignoring case.'),
      ASSET_FILTER,
      SYMBOL_TIME,
    ],
    ok: { description: 'Every symbol, delisted ones too, sorted by symbol id', schema: arrayOf(ref('Symbol')) },
  }),
  symbolRoute('/v1/symbols/map/:exchange_id', 'getSymbolMapping', 'Symbol mapping of an exchange', {
    params: [EXCHANGE, SYMBOL_TIME],
    ok: { description: 'The active symbols of the exchange', schema: arrayOf(ref('SymbolMapping')) },
  }),
  symbolRoute('/v1/symbols/:exchange_id', 'listExchangeSymbols', 'List of symbols for the exchange', {
    params: [EXCHANGE, SYMBOL_FILTER, ASSET_FILTER, SYMBOL_TIME],
    ok: { description: 'The symbols of the exchange, delisted ones too (an unknown exchange: [])', schema: arrayOf(ref('Symbol')) },
  }),
  symbolRoute('/v1/symbols/:exchange_id/active', 'listActiveSymbols', 'List of active symbols for the exchange', {
    params: [EXCHANGE, SYMBOL_FILTER, ASSET_FILTER, SYMBOL_TIME],
    ok: { description: 'The active symbols of the exchange', schema: arrayOf(ref('Symbol')) },
  }),
];

const BY_PATH = new Map([...METRIC_ROUTES, ...SYMBOL_ROUTES].map((r) => [r.path, r]));

/**
 * The declaration of the table route at `path` (fastify syntax).
 *
 * @throws Error when there is none: a route of a table must be declared
 */
export function tableRouteDecl(path: string): RouteDecl {
  const d = BY_PATH.get(path);
  if (d === undefined) throw new XrateError('internal', `the route ${path} has no declaration (src/service/api/tableRoutes.ts)`);
  return d;
}
