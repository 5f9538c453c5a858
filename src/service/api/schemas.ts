/**
 * The schemas of the rate service's answers (`components.schemas` of its description), as the
 * interface description gives them, with the field names, types and nullability of the market-data
 * OpenAPI description where the interface description leaves them open: exchange rates, periods,
 * timeseries, metrics, symbols, and xrate's extensions (provenance, chart data, operations).
 *
 * @module
 */
import { arrayOf, type JsonSchema, ref } from '../../http/declare.js';

function str(description: string): JsonSchema {
  return { type: 'string', description };
}
function num(description: string): JsonSchema {
  return { type: 'number', format: 'double', description };
}
function int(description: string): JsonSchema {
  return { type: 'integer', description };
}
function orNull(s: JsonSchema): JsonSchema {
  if (s.$ref === undefined) return { ...s, type: [s.type, 'null'] };
  const { description, ...target } = s;
  return { description, anyOf: [target, { type: 'null' }] };
}
function time(description: string): JsonSchema {
  return { ...ref('Time'), description };
}
function metricTime(description: string): JsonSchema {
  return { ...ref('MetricTime'), description };
}

/** An object whose every listed property is required, none other allowed. */
function record(description: string, properties: Record<string, JsonSchema>, optional: readonly string[] = []): JsonSchema {
  const required = Object.keys(properties).filter((k) => !optional.includes(k));
  return { type: 'object', description, properties, required, additionalProperties: false };
}

/** The value fields of a current metric value: exactly one of them is present. */
const VALUE_FIELDS: Record<string, JsonSchema> = {
  value_decimal: num('Decimal value'),
  value_text: str('Text value'),
  value_time: metricTime('Time value'),
};

/** The latest data point of a series of one level, with the ids `ids` (in the answer's order). */
function currentValue(level: string, ids: Record<string, JsonSchema>): JsonSchema {
  return {
    ...record(
      `The latest data point of a ${level}-level series: exactly one of value_decimal, value_text, value_time`,
      {
        entry_time: metricTime('Entry time of the data point'),
        recv_time: metricTime('Receive time of the data point'),
        ...ids,
        ...VALUE_FIELDS,
      },
      Object.keys(VALUE_FIELDS),
    ),
    oneOf: Object.keys(VALUE_FIELDS).map((k) => ({ required: [k] })),
  };
}

/** A symbol record's properties, after `v1.Symbol` (fields xrate never has left out). */
const SYMBOL_PROPERTIES: Record<string, JsonSchema> = {
  symbol_id: str('Symbol identifier ({exchange_id}_SPOT_{base}_{quote}, ...)'),
  exchange_id: str('Exchange identifier'),
  symbol_type: str('Symbol type (SPOT, FUTURES, OPTION, PERPETUAL, INDEX, ...)'),
  asset_id_base: str('Base asset'),
  asset_id_quote: str('Quote asset'),
  future_delivery_time: time('Delivery time of a future'),
  option_type_is_call: { type: 'boolean', description: 'Whether an option is a call' },
  option_strike_price: num('Strike price of an option'),
  option_expiration_time: time('Expiration time of an option'),
  data_start: time('Time of the first data of the symbol'),
  data_end: time('Time of the last data of the symbol'),
  data_quote_start: time('Time of the first quote'),
  data_quote_end: time('Time of the last quote'),
  data_trade_start: time('Time of the first trade'),
  data_trade_end: time('Time of the last trade'),
  volume_1hrs: num('Base units traded in the last hour'),
  volume_1hrs_usd: num('The same in USD'),
  volume_1day: num('Base units traded in the last 24 hours'),
  volume_1day_usd: num('The same in USD'),
  price: num('Last trade price (else the midpoint of the last quote kept)'),
  symbol_id_exchange: str('The exchange’s own symbol'),
  asset_id_base_exchange: str('The exchange’s base asset id'),
  asset_id_quote_exchange: str('The exchange’s quote asset id'),
  price_precision: num('Price step (a data precision)'),
  size_precision: num('Size step (a data precision)'),
};

const SYMBOL_MAPPING_KEYS = [
  'symbol_id',
  'symbol_id_exchange',
  'asset_id_base_exchange',
  'asset_id_quote_exchange',
  'asset_id_base',
  'asset_id_quote',
  'price_precision',
  'size_precision',
];

/** A metric timeseries item (every field present; the aggregates null in a bucket of text or time values). */
const METRIC_TIMESERIES_ITEM = record('One period of a metric timeseries', {
  time_period_start: metricTime('Period start (inclusive)'),
  time_period_end: metricTime('Period end (exclusive)'),
  time_open: metricTime('Time of the first data point in the period'),
  time_close: metricTime('Time of the last data point in the period'),
  first: orNull(num('Opening value (null: no decimal value in the period)')),
  last: orNull(num('Closing value')),
  min: orNull(num('Lowest value')),
  max: orNull(num('Highest value')),
  count: int('Number of data points in the period'),
  sum: orNull(num('Sum of the values')),
});

/** The schemas of the rate service (see the module description). */
export const SERVICE_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  Time: {
    type: 'string',
    format: 'date-time',
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{7}Z$',
    description: 'UTC time with 7 fractional digits',
    examples: ['2024-03-01T05:53:52.2753720Z'],
  },
  MetricTime: {
    description:
      'A time: ISO 8601 with 7 fractional digits, or with `time_format` a Unix timestamp (an integer; nanoseconds as a string of digits, beyond what a double holds exactly)',
    anyOf: [ref('Time'), { type: 'integer' }, { type: 'string', pattern: '^-?\\d+$' }],
  },
  ExchangeRate: record('An exchange rate', {
    time: time('Time of the market data the rate was computed from'),
    asset_id_base: str('Base asset'),
    asset_id_quote: str('Quote asset'),
    rate: num('Rate: quote units per base unit'),
  }),
  ExchangeRates: record('The rates of a base asset', {
    asset_id_base: str('Base asset of every rate'),
    rates: arrayOf(ref('ExchangeRatesRate')),
  }),
  ExchangeRatesRate: record('One rate of a base asset', {
    time: time('Time of the market data the rate was computed from'),
    asset_id_quote: str('Quote asset'),
    rate: num('Rate: quote units per base unit'),
  }),
  TimeseriesPeriod: record('A timeseries period', {
    period_id: str('Period identifier (1SEC .. 10DAY)'),
    length_seconds: int('Seconds part of the length'),
    length_months: int('Months part of the length'),
    unit_count: int('Length in units'),
    unit_name: { type: 'string', enum: ['second', 'minute', 'hour', 'day'], description: 'Unit' },
    display_name: str('Name, e.g. 30 Minutes'),
  }),
  ExchangeRatesTimeseriesItem: record('One period of a rate timeseries', {
    time_period_start: time('Period start (inclusive)'),
    time_period_end: time('Period end (exclusive)'),
    time_open: orNull(time('Time of the first rate in the period')),
    time_close: orNull(time('Time of the last rate in the period')),
    rate_open: orNull(num('First rate in the period')),
    rate_high: orNull(num('Highest rate in the period')),
    rate_low: orNull(num('Lowest rate in the period')),
    rate_close: orNull(num('Last rate in the period')),
  }),
  RateExplanation: {
    type: 'object',
    description: 'How a rate was computed at a tick (extension; the JSON of `xrate explain`)',
    properties: {
      asset_id_base: str('Base asset'),
      asset_id_quote: str('Quote asset'),
      tick: orNull(time('The tick explained')),
      kind: { type: 'string', enum: ['identity', 'direct', 'inverse', 'cross', 'none'], description: 'How the rate is had' },
      rate: orNull(num('The rate')),
      time: orNull(time('Time of the market data used')),
      fresh: { type: 'boolean', description: 'Whether the rate was computed at the tick' },
      method: str('Cross method'),
      path: { type: 'array', items: { type: 'string' }, description: 'Assets along the path, base first' },
      legs: { type: 'array', items: { type: 'object' }, description: 'One explanation per pair of the path' },
      message: str('Why there is no rate, when kind is none'),
    },
    required: ['asset_id_base', 'asset_id_quote', 'tick', 'kind', 'rate', 'time', 'fresh', 'method', 'path', 'legs'],
  },
  ChartData: {
    type: 'object',
    description: 'What a rate chart draws (extension; the data of `xrate plot`)',
    properties: {
      asset_id_base: str('Base asset'),
      asset_id_quote: str('Quote asset'),
      time_start: time('First tick charted'),
      time_end: time('Last tick charted'),
      period_id: orNull(str('Period of the candles')),
      resolution: str('`tick` (one point per tick) or the period id of the points (one per bucket)'),
      source: { type: 'string', enum: ['log', 'database'] },
      markets_detail: { type: 'boolean', description: 'Whether markets, exclusions and provenance are charted' },
      note: orNull(str('Why some of the chart is missing')),
      ticks: {
        type: 'array',
        items: { type: 'integer' },
        description: "The points' times, Unix seconds: the ticks, or the buckets' starts",
      },
      rate: { type: 'array', items: { type: ['number', 'null'] }, description: "The rate after each tick, or each bucket's close" },
      markets: { type: 'array', items: { type: 'object' } },
      exclusions: { type: 'array', items: { type: 'object' } },
      candles: orNull(arrayOf(ref('ExchangeRatesTimeseriesItem'))),
      provenance: arrayOf(ref('RateExplanation')),
      point_provenance: { type: 'array', items: { type: 'integer' } },
      weight_share: orNull(
        arrayOf({
          type: 'object',
          description: "A market of the pair: its XRATE_MARKET_WEIGHT_SHARE in force at each point (after the tick; at the bucket's end)",
          properties: {
            symbol_id: str('Symbol'),
            exchange_id: str('Exchange'),
            share: { type: 'array', items: { type: ['number', 'null'] } },
          },
          required: ['symbol_id', 'exchange_id', 'share'],
        }),
      ),
      markets_used: orNull({
        type: 'array',
        items: { type: ['integer', 'null'] },
        description: 'How many markets of the pair had a weight share > 0 at each point',
      }),
    },
    required: [
      'asset_id_base',
      'asset_id_quote',
      'time_start',
      'time_end',
      'period_id',
      'source',
      'markets_detail',
      'note',
      'ticks',
      'rate',
      'markets',
      'exclusions',
      'candles',
      'provenance',
      'point_provenance',
      'resolution',
      'weight_share',
      'markets_used',
    ],
  },
  Metric: record('A metric', { metric_id: str('Metric identifier'), description: str('What it measures') }),
  ExchangeMetricListingItem: record('An exchange-level series', { exchange_id: str('Exchange'), metric_id: str('Metric') }),
  SymbolMetricListingItem: record('A symbol-level series', {
    exchange_id: str('Exchange'),
    metric_id: str('Metric'),
    symbol_id: str('Symbol'),
  }),
  AssetMetricListingItem: record(
    'An asset-level series (its chain and network as of its latest point)',
    {
      metric_id: str('Metric'),
      symbol_id: str('Symbol'),
      exchange_id: str('Exchange'),
      asset_id: str('Asset'),
      chain_id: str('Blockchain'),
      network_id: str('Network'),
    },
    ['symbol_id', 'chain_id', 'network_id'],
  ),
  ExchangeMetricCurrentValue: currentValue('exchange', { exchange_id: str('Exchange'), metric_id: str('Metric') }),
  SymbolMetricCurrentValue: currentValue('symbol', {
    exchange_id: str('Exchange'),
    asset_id: str('Asset (empty when the point has none)'),
    symbol_id: str('Symbol'),
    metric_id: str('Metric'),
  }),
  AssetMetricCurrentValue: currentValue('asset', { exchange_id: str('Exchange'), asset_id: str('Asset'), metric_id: str('Metric') }),
  MetricByExchangeItem: record('A series of the exchange, with its first and last occurrence', {
    asset_id: str('Asset (may be empty)'),
    exchange_id: str('Exchange'),
    metric_id: str('Metric'),
    symbol_id: str('Symbol (may be empty)'),
    chain_id: str('Blockchain (may be empty)'),
    network_id: str('Network (may be empty)'),
    min_time: metricTime('First occurrence'),
    max_time: metricTime('Last occurrence'),
  }),
  MetricTimeseriesItem: METRIC_TIMESERIES_ITEM,
  MetricGroups: record('One timeseries per label of the grouping', {
    series_label: { type: 'array', items: { type: 'string' }, description: 'The label of each group' },
    rows: { type: 'array', items: arrayOf(ref('MetricTimeseriesItem')), description: 'One timeseries per label, in the same order' },
  }),
  Symbol: record('A symbol record (fields without a value left out)', SYMBOL_PROPERTIES, Object.keys(SYMBOL_PROPERTIES).slice(3)),
  SymbolMapping: record(
    'How an exchange names an active symbol',
    Object.fromEntries(SYMBOL_MAPPING_KEYS.map((k) => [k, SYMBOL_PROPERTIES[k]])),
    SYMBOL_MAPPING_KEYS.slice(1),
  ),
  Health: record('The process serves', { status: { type: 'string', const: 'ok' } }),
  Ready: {
    type: 'object',
    description: 'Ready to answer with current data (a replica adds its stream position)',
    properties: { status: { type: 'string', const: 'ready' } },
    required: ['status'],
  },
  NotReady: {
    type: 'object',
    description: 'Why not ready (a replica adds its stream position)',
    properties: { message: { type: 'string', minLength: 1 } },
    required: ['message'],
  },
};
