/**
 * Declarations of the routes served from a route table (routeTable.ts): the metrics routes
 * (metrics.ts, right `metrics`) and the symbols routes (symbols.ts, right `symbols`), looked up by
 * path when the tables are registered or answered for the CLI.
 *
 * @module
 */
import { EXCHANGE_RATE_PERIODS, MONTH_PERIODS } from '../../core/periods.js';
import { HISTORY_MAX_LIMIT } from '../../replay/query.js';
import { arrayOf, type ParamDecl, pathParam, queryParam, type RouteDecl, ref } from './declare.js';

const SCOPES = ['exchange', 'symbol', 'asset'] as const;
type Scope = (typeof SCOPES)[number];
const TITLE: Record<Scope, string> = { exchange: 'Exchange', symbol: 'Symbol', asset: 'Asset' };
const PATH_ID: Record<Scope, string> = { exchange: 'exchange_id', symbol: 'symbol_id', asset: 'asset_id' };
const LISTING_SCHEMA: Record<Scope, string> = {
  exchange: 'ExchangeMetricListingItem',
  symbol: 'SymbolMetricListingItem',
  asset: 'AssetMetricListingItem',
};
/** The ids a history of each scope requires (with metric_id). */
const HISTORY_IDS: Record<Scope, readonly string[]> = {
  exchange: ['exchange_id'],
  symbol: ['symbol_id'],
  asset: ['exchange_id', 'asset_id'],
};
const DATA_ERRORS = [400, 401, 403, 429, 550] as const;
const LIST_ERRORS = [400, 401, 403, 429] as const;

const ID_TEXT: Record<string, string> = {
  metric_id: 'Metric identifier (see /v1/metrics/listing)',
  exchange_id: 'Exchange identifier, e.g. BINANCE',
  symbol_id: 'Symbol identifier, e.g. BINANCE_SPOT_BTC_USDT',
  asset_id: 'Asset identifier, e.g. BTC',
};

/** An id filter; `note` says when the interface requires it. */
function id(name: string, required = false, note = ''): ParamDecl {
  return queryParam(name, 'string', `${ID_TEXT[name]}.${note}`, { required });
}

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
/** The note of an id the interface requires unless one of `others` is given (the handler checks it). */
const unless = (others: string): string => ` Required unless ${others} is given.`;

function metricRoute(path: string, operationId: string, summary: string, rest: Partial<RouteDecl> & Pick<RouteDecl, 'ok'>): RouteDecl {
  return { path, operationId, tag: 'Metrics', summary, right: 'metrics', formats: true, errors: LIST_ERRORS, ...rest };
}

function scopeRoutes(scope: Scope): RouteDecl[] {
  const T = TITLE[scope];
  const ids = (required: readonly string[], except?: string): ParamDecl[] =>
    ['metric_id', 'exchange_id', 'symbol_id', 'asset_id'].filter((n) => n !== except).map((n) => id(n, required.includes(n)));
  const listingIds =
    scope === 'symbol'
      ? [id('metric_id'), id('exchange_id', false, unless('symbol_id')), id('symbol_id', false, unless('exchange_id')), id('asset_id')]
      : ids(scope === 'exchange' ? ['exchange_id'] : []);
  const current = ref('MetricCurrentValue');
  return [
    metricRoute(`/v1/metrics/${scope}/listing`, `list${T}Metrics`, `${T}-level metric series`, {
      params: [...listingIds, CHAIN, NETWORK, AT],
      ok: { description: `The ${scope}-level series matching the filters`, schema: arrayOf(ref(LISTING_SCHEMA[scope])) },
    }),
    metricRoute(`/v1/metrics/${scope}/current`, `get${T}MetricsCurrent`, `Current ${scope}-level metrics`, {
      params: [...listingIds, CHAIN, NETWORK, AT, TIME_FORMAT],
      ok: { description: 'The latest point of each matching series', schema: arrayOf(current) },
    }),
    metricRoute(`/v1/metrics/${scope}/:${PATH_ID[scope]}/current`, `get${T}MetricsCurrentById`, `Current metrics of one ${scope}`, {
      params: [pathParam(PATH_ID[scope], ID_TEXT[PATH_ID[scope]]), ...ids([], PATH_ID[scope]), CHAIN, NETWORK, AT, TIME_FORMAT],
      ok: { description: 'The latest point of each of its series', schema: arrayOf(current) },
    }),
    metricRoute(`/v1/metrics/${scope}/history`, `get${T}MetricHistory`, `History of one ${scope}-level series`, {
      params: [...ids(['metric_id', ...HISTORY_IDS[scope]]), ...TIMESERIES],
      ok: { description: 'The periods of the series', schema: arrayOf(ref('MetricTimeseriesItem')) },
      errors: DATA_ERRORS,
    }),
  ];
}

/** The metrics routes, in the order of metrics.ts' table. */
const METRIC_ROUTES: readonly RouteDecl[] = [
  metricRoute('/v1/metrics/listing', 'listMetrics', 'Metrics', {
    params: [AT],
    ok: { description: 'Every metric with a definition or data, sorted', schema: arrayOf(ref('Metric')) },
  }),
  ...SCOPES.flatMap(scopeRoutes),
  metricRoute('/v1/metrics/by-exchange/:exchange_id', 'getMetricsByExchange', 'Metric series of an exchange', {
    params: [
      pathParam('exchange_id', ID_TEXT.exchange_id),
      id('metric_id'),
      id('symbol_id'),
      id('asset_id'),
      CHAIN,
      NETWORK,
      AT,
      TIME_FORMAT,
    ],
    ok: { description: 'Every series of the exchange, of every level', schema: arrayOf(ref('MetricByExchangeItem')) },
  }),
  metricRoute('/v1/metrics/history', 'getMetricHistory', 'History of the matching series together', {
    params: [
      id('metric_id', true),
      id('symbol_id', false, unless('asset_id or exchange_id')),
      id('asset_id', false, unless('symbol_id or exchange_id')),
      id('exchange_id', false, unless('symbol_id or asset_id')),
      ...TIMESERIES,
    ],
    ok: { description: 'The periods of the points of every matching series', schema: arrayOf(ref('MetricTimeseriesItem')) },
    errors: DATA_ERRORS,
  }),
  metricRoute('/v1/metrics/group', 'getMetricGroups', 'Metric timeseries grouped', {
    description:
      'One timeseries per value of `groupby` among the matching series, labels sorted. Every 100 items returned cost one request.',
    params: [
      queryParam('groupby', 'string', 'The field whose values label the groups (matched ignoring case).', {
        required: true,
        enum: ['symbol_id', 'asset_id', 'exchange_id', 'metric_id'],
      }),
      id('metric_id', false, ' Required by the interface description.'),
      id('exchange_id'),
      id('symbol_id'),
      id('asset_id'),
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
  if (d === undefined) throw new Error(`xrate: the route ${path} has no declaration (src/service/api/tableRoutes.ts)`);
  return d;
}
