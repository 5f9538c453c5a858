/**
 * Shared types of the xrate core: events, rejects and symbol descriptions.
 *
 * Times are integer microseconds since the Unix epoch (UTC) held in a `number`
 * (exact up to year 2255). Decimal inputs keep their exact text next to their
 * float value so that rule boundaries (rule 5 spread, section 7) can be decided
 * on the exact decimal.
 *
 * @module
 */

import type { MetricDefinitionEvent, MetricEvent } from './metrics/events.js';
import type { ConnectivityEvent, PositionEvent } from './positions/events.js';

/** Integer microseconds since 1970-01-01T00:00:00Z. */
export type TimeUs = number;

/** A parsed decimal: its float64 value and its exact decimal text (e.g. `"0.67"`). */
export interface Dec {
  readonly value: number;
  readonly text: string;
}

/** Symbol types of the interface description (`symbol_type`). */
export type SymbolType =
  | 'SPOT'
  | 'FUTURES'
  | 'OPTION'
  | 'PERPETUAL'
  | 'DPERPETUAL'
  | 'INDEX'
  | 'CREDIT'
  | 'CONTRACT'
  | 'OPTION_COMBINATION'
  | 'FUTURES_COMBINATION';

/** What a symbol_id says about its market. Only SPOT markets are used for rates (rule 3). */
export interface SymbolInfo {
  readonly symbolId: string;
  readonly exchangeId: string;
  readonly symbolType: SymbolType;
  /** Base asset, when the pattern carries one (SPOT, FTS, OPT, PERP, DPERP, CRE). */
  readonly assetIdBase?: string;
  /** Quote asset, when the pattern carries one (SPOT, FTS, OPT, PERP, DPERP). */
  readonly assetIdQuote?: string;
  /** The `_suffix` that disambiguates duplicate ids, if any (without the leading `_`). */
  readonly duplicateSuffix?: string;
  /** Pattern-specific parts: delivery / expiry `YYMMDD`, strike, `C`/`P`, index or contract id. */
  readonly extra?: Readonly<Record<string, string>>;
}

/** `exchange` event: legitimacy (rule 4) and rank (rule 9) of an exchange. */
export interface ExchangeEvent {
  readonly type: 'exchange';
  readonly time: TimeUs;
  readonly exchangeId: string;
  readonly legitimate: boolean;
  /** Higher = more trusted. Integer, default 0. */
  readonly rank: number;
}

/** `symbol` event: declares a market. */
export interface SymbolEvent {
  readonly type: 'symbol';
  readonly time: TimeUs;
  readonly symbolId: string;
  readonly exchangeId: string;
  readonly symbolType: SymbolType;
  readonly assetIdBase: string;
  readonly assetIdQuote: string;
  readonly pricePrecision?: number;
  readonly sizePrecision?: number;
  readonly symbolIdExchange?: string;
  /** Version 2 (docs/methodology.md section 10): the exchange's own asset ids. */
  readonly assetIdBaseExchange?: string;
  readonly assetIdQuoteExchange?: string;
  /** Version 2: delivery time of a futures contract, µs. */
  readonly futureDeliveryTime?: TimeUs;
  /** Version 2: true for a call option, false for a put. */
  readonly optionTypeIsCall?: boolean;
  /** Version 2: strike price of an option (exact decimal). */
  readonly optionStrikePrice?: Dec;
  /** Version 2: expiration time of an option, µs. */
  readonly optionExpirationTime?: TimeUs;
  /** Version 2: false = delisted (absent = listed); only hides the symbol's record. */
  readonly active?: boolean;
}

/** `quote` event: top of book of one market. Prices > 0, sizes >= 0 (0 = unknown). */
export interface QuoteEvent {
  readonly type: 'quote';
  readonly time: TimeUs;
  readonly symbolId: string;
  readonly bidPrice: Dec;
  readonly bidSize: Dec;
  readonly askPrice: Dec;
  readonly askSize: Dec;
}

/** Taker side of a trade. */
export type TakerSide = 'BUY' | 'SELL' | 'BUY_ESTIMATED' | 'SELL_ESTIMATED' | 'UNKNOWN';

/** `trade` event: one trade of one market. Price > 0, size >= 0 (base units). */
export interface TradeEvent {
  readonly type: 'trade';
  readonly time: TimeUs;
  readonly symbolId: string;
  readonly price: Dec;
  readonly size: Dec;
  readonly takerSide?: TakerSide;
}

/** Any event the engine consumes. */
export type XrateEvent =
  | ExchangeEvent
  | SymbolEvent
  | QuoteEvent
  | TradeEvent
  | MetricEvent
  | MetricDefinitionEvent
  | PositionEvent
  | ConnectivityEvent;

/**
 * Why an event was rejected. Every reject is counted and recorded, never fatal.
 *
 * - `bad_json`: the line is not a JSON object (or the CSV row could not be read)
 * - `line_too_long`: the line (CSV row, SQLite row) is longer than the maximum line length
 * - `unknown_type`: `type` missing or not one of exchange, symbol, quote, trade, metric, metric_definition,
 *   position, connectivity
 * - `missing_field`: a required field is absent or empty
 * - `bad_time`: `time` is not an ISO 8601 UTC time the methodology accepts
 * - `bad_number`: a numeric field is not a finite decimal
 * - `bad_price`: a price is <= 0
 * - `bad_size`: a size is < 0
 * - `bad_field`: another field has an invalid value (e.g. `legitimate` not a boolean)
 * - `unknown_symbol`: a quote/trade names a symbol with no `symbol` event whose id cannot be parsed
 * - `late`: the event's time is at or before the last tick already computed
 */
export type RejectReason =
  | 'bad_json'
  | 'line_too_long'
  | 'unknown_type'
  | 'missing_field'
  | 'bad_time'
  | 'bad_number'
  | 'bad_price'
  | 'bad_size'
  | 'bad_field'
  | 'unknown_symbol'
  | 'late';

/** A rejected event: the reason, a human message, and where it came from when known. */
export interface Reject {
  readonly kind: 'reject';
  readonly reason: RejectReason;
  /** Specific message, e.g. `field "bid_price" must be > 0, got "-1"`. */
  readonly message: string;
  /** The field at fault, when there is one. */
  readonly field?: string;
  /** 1-based line (or row) number in the source, set by readers. */
  readonly line?: number;
  /** Raw text of the line or row, set by readers. */
  readonly raw?: string;
}

/** Type guard for {@link Reject}. */
export function isReject(x: unknown): x is Reject {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'reject';
}
