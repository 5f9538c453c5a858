/**
 * Declarations of the rate service's own routes: the four exchange-rate operations of the
 * interface, xrate's extensions (explain, chart, the chart page) and the operations routes
 * (`/healthz`, `/readyz`, `/metrics`). Registered by routes.ts, chart.ts and ops.ts.
 *
 * @module
 */
import { CHART_MAX_TICKS, CHART_POINTS } from '../../answers/chartResolution.js';
import { EXCHANGE_RATE_PERIODS } from '../../core/periods.js';
import { HISTORY_MAX_LIMIT } from '../../replay/query.js';
import { arrayOf, pathParam, queryParam, type RouteDecl, ref } from '../../http/declare.js';

/** The exchange-rate period ids (1SEC .. 10DAY). */
const RATE_PERIOD_IDS: readonly string[] = EXCHANGE_RATE_PERIODS.map((p) => p.period_id);

const BASE = pathParam('asset_id_base', 'Base asset identifier, e.g. BTC (matched exactly, else ignoring case)');
const QUOTE = pathParam('asset_id_quote', 'Quote asset identifier, e.g. USD (matched exactly, else ignoring case)');
const TIME = queryParam('time', 'time', 'The rate as of the last tick at or before this time; absent: the last tick.');
const DATA_ERRORS = [400, 401, 403, 429, 550] as const;

/** `GET /v1/exchangerate/{asset_id_base}/{asset_id_quote}`. */
export const RATE_ROUTE: RouteDecl = {
  path: '/v1/exchangerate/:asset_id_base/:asset_id_quote',
  operationId: 'getSpecificRate',
  tag: 'Exchange rates',
  summary: 'Get specific rate',
  description: 'The exchange rate between a pair of assets, at the last tick or at `time`.',
  right: 'rate',
  params: [BASE, QUOTE, TIME],
  formats: true,
  ok: { description: 'The rate', schema: ref('ExchangeRate') },
  errors: DATA_ERRORS,
};

/** `GET /v1/exchangerate/{asset_id_base}`. */
export const RATES_ROUTE: RouteDecl = {
  path: '/v1/exchangerate/:asset_id_base',
  operationId: 'getAllCurrentRates',
  tag: 'Exchange rates',
  summary: 'Get all current rates',
  description: 'The rates of every asset reachable from the base (direct, inverse or cross), quote assets sorted.',
  right: 'rates',
  params: [
    BASE,
    queryParam('filter_asset_id', 'string', 'Quote assets to answer, separated by `,` or `;` (unknown ones are left out); absent: all.'),
    queryParam('invert', 'boolean', 'Answer 1 / rate for each quote asset (true, false, 1 or 0 in any case).', { default: false }),
    queryParam('time', 'time', 'The rates as of the last tick at or before this time; absent: the last tick.'),
  ],
  formats: true,
  ok: { description: 'The rates of the base asset', schema: ref('ExchangeRates') },
  errors: DATA_ERRORS,
};

/** `GET /v1/exchangerate/history/periods`. */
export const PERIODS_ROUTE: RouteDecl = {
  path: '/v1/exchangerate/history/periods',
  operationId: 'getTimeseriesPeriods',
  tag: 'Exchange rates',
  summary: 'Timeseries periods',
  description: 'The 33 periods of the exchange-rate timeseries.',
  right: 'periods',
  formats: true,
  ok: { description: 'The periods', schema: arrayOf(ref('TimeseriesPeriod')) },
  errors: [400, 401, 403, 429],
};

/** `GET /v1/exchangerate/{asset_id_base}/{asset_id_quote}/history`. */
export const HISTORY_ROUTE: RouteDecl = {
  path: '/v1/exchangerate/:asset_id_base/:asset_id_quote/history',
  operationId: 'getTimeseriesData',
  tag: 'Exchange rates',
  summary: 'Timeseries data',
  description:
    'The OHLC periods of the rate whose start lies in [time_start, time_end), oldest first, empty periods left out. ' +
    'With `limit`, every 100 items returned cost one request (at least 1); a `limit` above 1000 makes a heavy request.',
  right: 'history',
  params: [
    BASE,
    QUOTE,
    queryParam('period_id', 'string', 'Period identifier (see /v1/exchangerate/history/periods; matched ignoring case).', {
      required: true,
      enum: RATE_PERIOD_IDS,
      missing: 'e.g. 1MIN (see /v1/exchangerate/history/periods)',
    }),
    queryParam('time_start', 'time', 'Start of the timeseries (inclusive).', {
      required: true,
      missing: 'an ISO 8601 time, e.g. 2024-03-01T04:00:00Z',
    }),
    queryParam('time_end', 'time', 'End of the timeseries (exclusive).', {
      required: true,
      missing: 'an ISO 8601 time, e.g. 2024-03-01T05:00:00Z',
    }),
    queryParam('limit', 'integer', 'Items to return at most.', { minimum: 1, maximum: HISTORY_MAX_LIMIT, default: 100 }),
  ],
  formats: true,
  ok: { description: 'The periods of the timeseries', schema: arrayOf(ref('ExchangeRatesTimeseriesItem')) },
  errors: DATA_ERRORS,
};

/** `GET /v1/exchangerate/{asset_id_base}/{asset_id_quote}/explain` (extension). */
export const EXPLAIN_ROUTE: RouteDecl = {
  path: '/v1/exchangerate/:asset_id_base/:asset_id_quote/explain',
  operationId: 'explainRate',
  tag: 'Extensions',
  summary: 'How a rate was computed',
  description:
    'The provenance of the rate at the last tick: the markets used and left out with their reasons, the path of a cross rate. ' +
    'A `time` before the last tick is 550 (provenance is kept for the latest tick only).',
  right: 'explain',
  extension: true,
  params: [BASE, QUOTE, queryParam('time', 'time', 'The tick at or before this time (the last tick or later); absent: the last tick.')],
  formats: true,
  ok: { description: 'The explanation', schema: ref('RateExplanation') },
  errors: DATA_ERRORS,
};

/** `GET /v1/exchangerate/{asset_id_base}/{asset_id_quote}/chart` (extension). */
export const CHART_ROUTE: RouteDecl = {
  path: '/v1/exchangerate/:asset_id_base/:asset_id_quote/chart',
  operationId: 'getRateChart',
  tag: 'Extensions',
  summary: 'The data of a rate chart',
  description:
    `What \`xrate plot\` draws and the page at / shows, over any range. Up to ${CHART_MAX_TICKS} ticks, one point per tick: the rate, ` +
    `each market's price, the markets left out with their reason, each point's provenance, and candles with \`period_id\`. ` +
    `A longer range, one point per bucket of the shortest period with at most \`points\` buckets that the database can serve ` +
    `(\`resolution\`): each bucket's close, its candle, and each market's weight share in force at its end. ` +
    `A heavy request (it may replay the run's logs): one request per 100 points.`,
  right: 'history',
  extension: true,
  params: [
    BASE,
    QUOTE,
    queryParam('time_start', 'time', 'First tick; absent: the hour before time_end (from the first tick at the earliest).'),
    queryParam('time_end', 'time', 'Last tick; absent: the last tick.'),
    queryParam('points', 'integer', "How many points the client can draw (its width in pixels): the resolution's bound.", {
      minimum: CHART_POINTS.min,
      maximum: CHART_POINTS.max,
      default: CHART_POINTS.default,
    }),
    queryParam(
      'period_id',
      'string',
      `Candles of this period (matched ignoring case); absent: no candles over ${CHART_MAX_TICKS} ticks or less. Over a longer range, the resolution (at most ${CHART_POINTS.max} buckets).`,
      { enum: RATE_PERIOD_IDS },
    ),
  ],
  ok: { description: 'The chart data', schema: ref('ChartData') },
  errors: DATA_ERRORS,
};

/** The chart page and its files (`/`, `/ui/...`): no key, no data. */
export function pageRoute(path: string, media: string): RouteDecl {
  const name =
    path === '/' ? 'ChartPage' : path.slice(4).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase());
  return {
    path,
    operationId: `get${name.charAt(0).toUpperCase()}${name.slice(1)}`,
    tag: 'Chart page',
    summary: path === '/' ? 'The chart page (not an API)' : `A file of the chart page (not an API): ${path.slice(4)}`,
    open: true,
    extension: true,
    ok: { description: 'The file', media: media.split(';')[0], schema: { type: 'string' } },
    errors: [],
  };
}

/** `GET /healthz`. */
export const HEALTH_ROUTE: RouteDecl = {
  path: '/healthz',
  operationId: 'getHealth',
  tag: 'Operations',
  summary: 'Liveness',
  description: '200 while the process serves. No key, no cost.',
  open: true,
  extension: true,
  ok: { description: 'Serving', schema: ref('Health') },
  errors: [],
};

/** `GET /readyz`. */
export const READY_ROUTE: RouteDecl = {
  path: '/readyz',
  operationId: 'getReadiness',
  tag: 'Operations',
  summary: 'Readiness',
  description: 'Whether the service can answer with current data. No key, no cost.',
  open: true,
  extension: true,
  ok: { description: 'Ready', schema: ref('Ready') },
  errors: [{ status: 503, description: 'Not ready (the message says why)', schema: ref('NotReady') }],
};

/** `GET /metrics`. */
export const PROMETHEUS_ROUTE: RouteDecl = {
  path: '/metrics',
  operationId: 'getPrometheusMetrics',
  tag: 'Operations',
  summary: 'Prometheus metrics',
  description:
    'Requests by route pattern and status, their latency, and for a live engine its events, ticks and stream lag. No key, no cost.',
  open: true,
  extension: true,
  ok: { description: 'Prometheus text exposition format', media: 'text/plain', schema: { type: 'string' } },
  errors: [],
};
