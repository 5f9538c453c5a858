/**
 * The symbols routes (all GET, right `symbols`), over the provider's symbol records
 * (docs/methodology.md section 10):
 *
 * | route | answer |
 * |---|---|
 * | `/v1/symbols` | `v1.Symbol[]` of every symbol (`filter_symbol_id`, `filter_exchange_id`, `filter_asset_id`, `time`) |
 * | `/v1/symbols/{exchange_id}` | `v1.Symbol[]` of the exchange's symbols (`filter_symbol_id`, `filter_asset_id`, `time`) |
 * | `/v1/symbols/{exchange_id}/active` | the same, the active (listed) ones only |
 * | `/v1/symbols/map/{exchange_id}` | `v1.SymbolMapping[]` of the exchange's active symbols (`time`) |
 *
 * Filters are comma- or semicolon-separated lists matched case-insensitively: `filter_symbol_id`
 * by prefix (the spec's `BITSTAMP_`, `BINANCE_SPOT_`), `filter_exchange_id` exactly, and
 * `filter_asset_id` against the base or the quote asset. An unknown exchange gives `[]`. Fields
 * are those of the schemas, in their order, absent values left out (as the spec's examples);
 * times are written as in the exchange-rate answers. Every answer costs 1 (no `limit`).
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { SymbolFilter, SymbolRecord } from '../core/engine.js';
import { formatTime } from '../core/time.js';
import type { RequestLimits } from './requestLimits.js';
import { Query, splitList } from '../http/params.js';
import { answerFromTable, type Answer, registerRouteTable, type TableRoute } from './routeTable.js';

/** Where the symbol records come from (the service's {@link RateProvider}). */
export interface SymbolSource {
  symbols(at: number | undefined, filter: SymbolFilter): SymbolRecord[];
}

type PathParams = { exchange_id?: string };

/** The decimal text as a JSON number (a double), undefined stays undefined. */
function num(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Number(text);
}

/** A time as the exchange-rate answers write it, undefined stays undefined. */
function time(us: number | undefined): string | undefined {
  return us === undefined ? undefined : formatTime(us);
}

/**
 * A precision as the interface writes it, the size of one step (`0.01`), from the number of
 * decimals a `symbol` event gives (`2`).
 */
function step(decimals: number | undefined): number | undefined {
  return decimals === undefined ? undefined : Number(`1e-${decimals}`);
}

/** The object without its undefined fields (the interface's examples leave absent values out). */
function defined(o: Record<string, unknown>): Record<string, unknown> {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

/**
 * The `v1.Symbol` of a record, fields in the schema's order.
 *
 * @example
 * ```ts
 * toV1Symbol(engine.symbols()[0]); // { symbol_id: 'KRAKEN_SPOT_BTC_USD', exchange_id: 'KRAKEN', ... }
 * ```
 */
export function toV1Symbol(r: SymbolRecord): Record<string, unknown> {
  return defined({
    symbol_id: r.symbolId,
    exchange_id: r.exchangeId,
    symbol_type: r.symbolType,
    asset_id_base: r.assetIdBase,
    asset_id_quote: r.assetIdQuote,
    future_delivery_time: time(r.futureDeliveryTime),
    option_type_is_call: r.optionTypeIsCall,
    option_strike_price: num(r.optionStrikePrice),
    option_expiration_time: time(r.optionExpirationTime),
    data_start: time(r.dataStart),
    data_end: time(r.dataEnd),
    data_quote_start: time(r.dataQuoteStart),
    data_quote_end: time(r.dataQuoteEnd),
    data_trade_start: time(r.dataTradeStart),
    data_trade_end: time(r.dataTradeEnd),
    volume_1hrs: num(r.volume1hrs),
    volume_1hrs_usd: r.volume1hrsUsd,
    volume_1day: num(r.volume1day),
    volume_1day_usd: r.volume1dayUsd,
    price: num(r.price),
    symbol_id_exchange: r.symbolIdExchange,
    asset_id_base_exchange: r.assetIdBaseExchange,
    asset_id_quote_exchange: r.assetIdQuoteExchange,
    price_precision: step(r.pricePrecision),
    size_precision: step(r.sizePrecision),
  });
}

/** The `v1.SymbolMapping` of a record, fields in the schema's order. */
function toSymbolMapping(r: SymbolRecord): Record<string, unknown> {
  return defined({
    symbol_id: r.symbolId,
    symbol_id_exchange: r.symbolIdExchange,
    asset_id_base_exchange: r.assetIdBaseExchange,
    asset_id_quote_exchange: r.assetIdQuoteExchange,
    asset_id_base: r.assetIdBase,
    asset_id_quote: r.assetIdQuote,
    price_precision: step(r.pricePrecision),
    size_precision: step(r.sizePrecision),
  });
}

/** A filter list parameter, undefined when absent or empty. */
function list(q: Query, name: string): string[] | undefined {
  const items = splitList(q.text(name));
  return items.length === 0 ? undefined : items;
}

/** The filter of a request: the query's lists, the path's exchange, and whether only active symbols. */
function filterOf(q: Query, p: PathParams, activeOnly: boolean): SymbolFilter {
  const f: SymbolFilter = { activeOnly };
  const symbolIds = list(q, 'filter_symbol_id');
  const exchangeIds = p.exchange_id === undefined ? list(q, 'filter_exchange_id') : [p.exchange_id];
  const assetIds = list(q, 'filter_asset_id');
  if (symbolIds) f.symbolIds = symbolIds;
  if (exchangeIds) f.exchangeIds = exchangeIds;
  if (assetIds) f.assetIds = assetIds;
  return f;
}

/** A symbols route: its path (fastify syntax) and its answer. */
type SymbolRoute = TableRoute<SymbolSource>;

/** The v1.Symbol answer of a route (active only or all). */
function symbolsAnswer(activeOnly: boolean): SymbolRoute['answer'] {
  return (src, q, p) => ({ kind: 'symbols', value: src.symbols(q.time('time'), filterOf(q, p, activeOnly)).map(toV1Symbol), cost: 1 });
}

/** Every symbols route (see the module description); `map/...` before `{exchange_id}` when matched in order. */
const ROUTES: readonly SymbolRoute[] = [
  { path: '/v1/symbols', answer: symbolsAnswer(false) },
  {
    path: '/v1/symbols/map/:exchange_id',
    answer: (src, q, p) => ({
      kind: 'symbol_map',
      value: src.symbols(q.time('time'), { exchangeIds: [p.exchange_id!], activeOnly: true }).map(toSymbolMapping),
      cost: 1,
    }),
  },
  { path: '/v1/symbols/:exchange_id', answer: symbolsAnswer(false) },
  { path: '/v1/symbols/:exchange_id/active', answer: symbolsAnswer(true) },
];

/**
 * The answer of the symbols route at `path` (e.g. `/v1/symbols/BINANCE/active`) to `query`, as
 * the service gives it, without HTTP: what `xrate symbols` prints. Undefined when no route has
 * that path; a bad parameter or a time with no records throws the service's error.
 *
 * @example
 * ```ts
 * answerSymbols(provider, '/v1/symbols/BINANCE', { filter_asset_id: 'BTC' })?.value;
 * ```
 */
export function answerSymbols(source: SymbolSource, path: string, query: Record<string, string>): Answer | undefined {
  return answerFromTable(ROUTES, source, path, query);
}

/**
 * The `time` of a symbols query (µs; undefined: the last tick), read as the routes read it (a 400
 * naming it when bad): the CLI replays a log to it before answering.
 *
 * @example
 * ```ts
 * symbolsTime({ time: '2024-03-01T04:00:00Z' }); // 1709265600000000
 * ```
 */
export function symbolsTime(query: Record<string, string>): number | undefined {
  return new Query(query).time('time');
}

/** Registers the symbols routes on `app` (the onRequest hook of server.ts checks the `symbols` right). */
export function registerSymbolRoutes(app: FastifyInstance, source: SymbolSource, opts: { limits: RequestLimits }): void {
  registerRouteTable(app, ROUTES, source, 'symbols', opts.limits);
}
