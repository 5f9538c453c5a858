/**
 * Event records to typed events: validation of the event types of the event log (the metric
 * types are read by metrics/events.ts).
 *
 * docs/methodology.md section 1 defines the log: one event per NDJSON line, CSV row or SQLite row,
 * with the fields of its table; a bad event is never fatal and never silently dropped but
 * becomes a reject record with a reason. This module turns one record into an
 * {@link XrateEvent} or a {@link Reject} (readers add `line` and `raw`).
 *
 * @module
 */

import {
  booleanOf,
  getDec,
  getId,
  getOptionalBoolean,
  getOptionalDec,
  getOptionalId,
  getOptionalTime,
  getTime,
  isAbsent,
  missing,
  parseInteger,
  reject,
  show,
  trimmed,
} from './fields.js';
import { parseMetricDefinitionEvent, parseMetricEvent } from './metrics/events.js';
import { parseConnectivityEvent, parsePositionEvent } from './positions/events.js';
import { SYMBOL_TYPES, symbolTypeFromText } from './symbols.js';
import { isReject } from './types.js';
import type {
  Dec,
  ExchangeEvent,
  QuoteEvent,
  Reject,
  RejectReason,
  SymbolEvent,
  SymbolType,
  TakerSide,
  TradeEvent,
  XrateEvent,
} from './types.js';

/**
 * Every {@link RejectReason}, in the order of types.ts.
 *
 * Why: docs/methodology.md section 1 — every reject is counted by reason; reports and tests list
 * the reasons from here so that none is forgotten.
 *
 * @example
 * ```ts
 * const counts = Object.fromEntries(REJECT_REASONS.map((r) => [r, 0]));
 * ```
 */
export const REJECT_REASONS: readonly RejectReason[] = Object.freeze([
  'bad_json',
  'line_too_long',
  'unknown_type',
  'missing_field',
  'bad_time',
  'bad_number',
  'bad_price',
  'bad_size',
  'bad_field',
  'unknown_symbol',
  'late',
] as const);

// The version-1 wording, kept as it is: the rejects of a log without position events stay
// byte-identical (docs/methodology.md section 11). The EMS types are accepted all the same.
const EXPECTED_TYPES = '(expected exchange, symbol, quote, trade, metric or metric_definition)';

/** A price: > 0, also as a float (an exactly positive text that underflows to 0 is rejected). */
function getPrice(type: string, record: Record<string, unknown>, field: string): Dec | Reject {
  const d = getDec(type, record, field);
  if (isReject(d)) return d;
  if (d.value > 0) return d;
  const msg =
    d.value === 0 && !isNegativeText(d.text) && hasNonZeroDigit(d.text)
      ? `${type}: field "${field}" must be > 0 and not underflow to 0 as a float, got ${show(d.text)}`
      : `${type}: field "${field}" must be > 0, got ${show(d.text)}`;
  return reject('bad_price', msg, field);
}

/** A size: >= 0, decided exactly (`"-0"` is 0 and accepted; `"-1e-400"` is negative). */
function getSize(type: string, record: Record<string, unknown>, field: string): Dec | Reject {
  const d = getDec(type, record, field);
  if (isReject(d)) return d;
  if (d.value > 0 || (d.value === 0 && !(isNegativeText(d.text) && hasNonZeroDigit(d.text)))) {
    return d;
  }
  return reject('bad_size', `${type}: field "${field}" must be >= 0, got ${show(d.text)}`, field);
}

function isNegativeText(text: string): boolean {
  return text.charCodeAt(0) === 45;
}

/** True when the mantissa of a decimal literal has a digit 1-9. */
function hasNonZeroDigit(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 101 || c === 69) return false; // exponent: mantissa done
    if (c >= 49 && c <= 57) return true;
  }
  return false;
}

function getLegitimate(record: Record<string, unknown>): boolean | Reject {
  const v = record.legitimate;
  if (isAbsent(v)) return missing('exchange', 'legitimate');
  return booleanOf('exchange', 'legitimate', v);
}

function getRank(record: Record<string, unknown>): number | Reject {
  const v = record.rank;
  if (isAbsent(v)) return 0;
  const n = parseInteger(v);
  if (n === undefined) {
    return reject('bad_field', `exchange: field "rank" must be an integer, got ${show(v)}`, 'rank');
  }
  return n;
}

function getPrecision(record: Record<string, unknown>, field: string): number | undefined | Reject {
  const v = record[field];
  if (isAbsent(v)) return undefined;
  const n = parseInteger(v);
  if (n === undefined || n < 0) {
    return reject('bad_field', `symbol: field "${field}" must be a non-negative integer, got ${show(v)}`, field);
  }
  return n;
}

function getSymbolType(record: Record<string, unknown>): SymbolType | Reject {
  const v = record.symbol_type;
  if (isAbsent(v)) return missing('symbol', 'symbol_type');
  const t = typeof v === 'string' ? symbolTypeFromText(v) : undefined;
  if (t === undefined) {
    return reject('bad_field', `symbol: field "symbol_type" must be one of ${SYMBOL_TYPES.join(', ')}, got ${show(v)}`, 'symbol_type');
  }
  return t;
}

/** The taker sides of a trade (types.ts' TakerSide), in the order messages name them. */
const TAKER_SIDES: readonly TakerSide[] = ['BUY', 'SELL', 'BUY_ESTIMATED', 'SELL_ESTIMATED', 'UNKNOWN'];

/**
 * The taker side named exactly (upper case), or undefined. Rule-free: the side is informational.
 * @example takerSideOf('BUY') // 'BUY'
 */
export function takerSideOf(s: string): TakerSide | undefined {
  return TAKER_SIDES.find((t) => t === s);
}

function getTakerSide(record: Record<string, unknown>): TakerSide | undefined | Reject {
  const v = record.taker_side;
  if (isAbsent(v)) return undefined;
  if (typeof v === 'string') {
    const t = takerSideOf(v) ?? takerSideOf(trimmed(v).toUpperCase());
    if (t !== undefined) return t;
  }
  return reject('bad_field', `trade: field "taker_side" must be one of ${TAKER_SIDES.join(', ')}, got ${show(v)}`, 'taker_side');
}

function parseExchange(r: Record<string, unknown>): ExchangeEvent | Reject {
  const time = getTime('exchange', r);
  if (typeof time !== 'number') return time;
  const exchangeId = getId('exchange', r, 'exchange_id');
  if (typeof exchangeId !== 'string') return exchangeId;
  const legitimate = getLegitimate(r);
  if (typeof legitimate !== 'boolean') return legitimate;
  const rank = getRank(r);
  if (typeof rank !== 'number') return rank;
  return { type: 'exchange', time, exchangeId, legitimate, rank };
}

function parseSymbol(r: Record<string, unknown>): SymbolEvent | Reject {
  const time = getTime('symbol', r);
  if (typeof time !== 'number') return time;
  const symbolId = getId('symbol', r, 'symbol_id');
  if (typeof symbolId !== 'string') return symbolId;
  const exchangeId = getId('symbol', r, 'exchange_id');
  if (typeof exchangeId !== 'string') return exchangeId;
  const symbolType = getSymbolType(r);
  if (isReject(symbolType)) return symbolType;
  const assetIdBase = getId('symbol', r, 'asset_id_base');
  if (typeof assetIdBase !== 'string') return assetIdBase;
  const assetIdQuote = getId('symbol', r, 'asset_id_quote');
  if (typeof assetIdQuote !== 'string') return assetIdQuote;
  const pricePrecision = getPrecision(r, 'price_precision');
  if (isReject(pricePrecision)) return pricePrecision;
  const sizePrecision = getPrecision(r, 'size_precision');
  if (isReject(sizePrecision)) return sizePrecision;
  const symbolIdExchange = getOptionalId('symbol', r, 'symbol_id_exchange');
  if (isReject(symbolIdExchange)) return symbolIdExchange;
  const ev: MutableSymbolEvent = { type: 'symbol', time, symbolId, exchangeId, symbolType, assetIdBase, assetIdQuote };
  if (pricePrecision !== undefined) ev.pricePrecision = pricePrecision;
  if (sizePrecision !== undefined) ev.sizePrecision = sizePrecision;
  if (symbolIdExchange !== undefined) ev.symbolIdExchange = symbolIdExchange;
  return addVersion2Fields(r, ev);
}

type MutableSymbolEvent = { -readonly [K in keyof SymbolEvent]: SymbolEvent[K] };

/**
 * The optional fields of a version-2 `symbol` event (docs/methodology.md section 10), added to
 * `ev` only when present (an event without them keeps exactly the version-1 keys); the first bad
 * one is the reject: `bad_field` (a non-string id, a bad boolean), `bad_time`, `bad_number`.
 */
function addVersion2Fields(r: Record<string, unknown>, ev: MutableSymbolEvent): SymbolEvent | Reject {
  const baseExchange = getOptionalId('symbol', r, 'asset_id_base_exchange');
  if (isReject(baseExchange)) return baseExchange;
  const quoteExchange = getOptionalId('symbol', r, 'asset_id_quote_exchange');
  if (isReject(quoteExchange)) return quoteExchange;
  const delivery = getOptionalTime('symbol', r, 'future_delivery_time');
  if (isReject(delivery)) return delivery;
  const isCall = getOptionalBoolean('symbol', r, 'option_type_is_call');
  if (isReject(isCall)) return isCall;
  const strike = getOptionalDec('symbol', r, 'option_strike_price');
  if (isReject(strike)) return strike;
  const expiration = getOptionalTime('symbol', r, 'option_expiration_time');
  if (isReject(expiration)) return expiration;
  const active = getOptionalBoolean('symbol', r, 'active');
  if (isReject(active)) return active;
  if (baseExchange !== undefined) ev.assetIdBaseExchange = baseExchange;
  if (quoteExchange !== undefined) ev.assetIdQuoteExchange = quoteExchange;
  if (delivery !== undefined) ev.futureDeliveryTime = delivery;
  if (isCall !== undefined) ev.optionTypeIsCall = isCall;
  if (strike !== undefined) ev.optionStrikePrice = strike;
  if (expiration !== undefined) ev.optionExpirationTime = expiration;
  if (active !== undefined) ev.active = active;
  return ev;
}

function parseQuote(r: Record<string, unknown>): QuoteEvent | Reject {
  const time = getTime('quote', r);
  if (typeof time !== 'number') return time;
  const symbolId = getId('quote', r, 'symbol_id');
  if (typeof symbolId !== 'string') return symbolId;
  const bidPrice = getPrice('quote', r, 'bid_price');
  if (isReject(bidPrice)) return bidPrice;
  const bidSize = getSize('quote', r, 'bid_size');
  if (isReject(bidSize)) return bidSize;
  const askPrice = getPrice('quote', r, 'ask_price');
  if (isReject(askPrice)) return askPrice;
  const askSize = getSize('quote', r, 'ask_size');
  if (isReject(askSize)) return askSize;
  return { type: 'quote', time, symbolId, bidPrice, bidSize, askPrice, askSize };
}

function parseTrade(r: Record<string, unknown>): TradeEvent | Reject {
  const time = getTime('trade', r);
  if (typeof time !== 'number') return time;
  const symbolId = getId('trade', r, 'symbol_id');
  if (typeof symbolId !== 'string') return symbolId;
  const price = getPrice('trade', r, 'price');
  if (isReject(price)) return price;
  const size = getSize('trade', r, 'size');
  if (isReject(size)) return size;
  const takerSide = getTakerSide(r);
  if (isReject(takerSide)) return takerSide;
  return takerSide === undefined
    ? { type: 'trade', time, symbolId, price, size }
    : { type: 'trade', time, symbolId, price, size, takerSide };
}

/** The parser of each event type, by its name in the log's `type` field. */
const PARSERS: ReadonlyMap<unknown, (r: Record<string, unknown>) => XrateEvent | Reject> = new Map<
  unknown,
  (r: Record<string, unknown>) => XrateEvent | Reject
>([
  ['quote', parseQuote],
  ['trade', parseTrade],
  ['symbol', parseSymbol],
  ['exchange', parseExchange],
  ['metric', parseMetricEvent],
  ['metric_definition', parseMetricDefinitionEvent],
  ['position', parsePositionEvent],
  ['connectivity', parseConnectivityEvent],
]);

/**
 * Validate one event record and turn it into a typed event, or a reject.
 *
 * The record is a parsed NDJSON object (numbers, booleans, strings, null) or a CSV / SQLite row
 * (strings, or numbers and null from SQLite); an empty (or whitespace-only) string or null is an
 * absent field. Input names are snake_case; the event uses the camelCase fields of types.ts.
 * Checks, in the order of the methodology's table, the first failure winning:
 * `type` (→ `unknown_type`), required fields (→ `missing_field`), `time` (→ `bad_time`), numbers
 * (→ `bad_number`), prices > 0 (→ `bad_price`), sizes >= 0 (→ `bad_size`), and `legitimate`,
 * `rank`, `symbol_type`, `taker_side`, precisions and string ids (→ `bad_field`). Ids are
 * trimmed; numbers keep their exact text. Never throws, whatever the input.
 *
 * Why: docs/methodology.md section 1 (event fields per type; a bad event becomes a reject record
 * with its reason and is counted, never fatal) and section 7 (numbers parsed exactly; the same
 * event from NDJSON, CSV or SQLite gives the same result).
 *
 * @param record - field name to value
 * @returns the event, or a {@link Reject} with `reason`, `message` and `field` (no `line`/`raw`)
 *
 * @example
 * ```ts
 * parseEvent({ type: 'trade', time: '2024-01-01T00:00:00Z', symbol_id: 'X_SPOT_BTC_USD',
 *              price: '42000.10', size: 0.5 });
 * // { type: 'trade', time: 1704067200000000, symbolId: 'X_SPOT_BTC_USD',
 * //   price: { value: 42000.1, text: '42000.10' }, size: { value: 0.5, text: '0.5' } }
 * const r = parseEvent({ type: 'quote', time: '2024-01-01', symbol_id: 'X', bid_price: '-1' });
 * if (isReject(r)) r.message; // 'quote: field "bid_price" must be > 0, got "-1"'
 * ```
 */
export function parseEvent(record: Record<string, unknown>): XrateEvent | Reject {
  try {
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      return reject('bad_json', `event record must be an object, got ${show(record)}`);
    }
    const type = record.type;
    const parse = PARSERS.get(type);
    if (parse !== undefined) return parse(record);
    if (isAbsent(type)) {
      return reject('unknown_type', `missing event type ${EXPECTED_TYPES}`, 'type');
    }
    // Trimmed and in lower case.
    const loose = typeof type === 'string' ? PARSERS.get(trimmed(type).toLowerCase()) : undefined;
    if (loose !== undefined) return loose(record);
    return reject('unknown_type', `unknown event type ${show(type)} ${EXPECTED_TYPES}`, 'type');
  } catch {
    // Defensive: only exotic inputs (throwing getters, proxies) can get here.
    return reject('bad_json', 'event record could not be read');
  }
}

/**
 * Parse one NDJSON line into an event, or a reject.
 *
 * `JSON.parse` in a try/catch; a line that is not valid JSON, or whose value is not an object
 * (an array, a string, a number, null), is rejected with `bad_json` and a message saying why;
 * otherwise {@link parseEvent} decides. Never throws.
 *
 * Why: docs/methodology.md section 1 (one event per NDJSON line; an unparseable line becomes a
 * reject record, never fatal).
 *
 * @param line - one line of the log, without its line break
 * @returns the event, or a {@link Reject} (readers add `line` and `raw`)
 *
 * @example
 * ```ts
 * parseJsonLine('{"type":"exchange","time":"2024-01-01","exchange_id":"KRAKEN","legitimate":true}');
 * // { type: 'exchange', time: 1704067200000000, exchangeId: 'KRAKEN', legitimate: true, rank: 0 }
 * parseJsonLine('[1,2]').reason; // 'bad_json'
 * ```
 */
export function parseJsonLine(line: string): XrateEvent | Reject {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return reject('bad_json', `line is not valid JSON: ${why}`);
  }
  if (typeof value !== 'object' || value === null) {
    return reject('bad_json', `line must be a JSON object, got ${value === null ? 'null' : typeof value}`);
  }
  if (Array.isArray(value)) return reject('bad_json', 'line must be a JSON object, got an array');
  return parseEvent(value as Record<string, unknown>);
}
