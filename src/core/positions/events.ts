/**
 * Event records to typed position events: validation of the `position` and `connectivity` events
 * of the event log (version 2), and the account ids they name.
 *
 * docs/methodology.md section 1 adds the two types, section 11 gives their meaning: a `position`
 * event is a snapshot of one position of one account (time, exchange_id with an optional account
 * tag, symbol_id_exchange, symbol_id?, avg_entry_price, quantity, side, leverage?, cross_margin?,
 * liquidation_price?, raw_data?); a `connectivity` event says whether an exchange can be reached
 * (time, exchange_id, reachable). Neither changes any rate. This module turns one record into one
 * of these events or a {@link Reject}, with the conventions of `src/core/events.ts` (absent =
 * undefined, null or a blank string; the first failing check, in the order of the table, decides
 * the reason).
 *
 * @module
 */

import { booleanOf, getDec, getId, getOptionalDec, getOptionalId, getTime, isAbsent, missing, reject, show, trimmed } from '../fields.js';
import { isReject } from '../types.js';
import type { Dec, Reject, TimeUs } from '../types.js';

/**
 * The characters that may separate an exchange id from an account tag, in the order of the
 * methodology (section 11).
 *
 * @example
 * ```ts
 * ACCOUNT_SEPARATORS.includes('~'); // true
 * ```
 */
export const ACCOUNT_SEPARATORS = '~/.,:;#$%^&*-_+=';

/**
 * An account id split at its first separator character: the exchange, and the tag (absent for an
 * exchange's own, untagged account).
 *
 * @example
 * ```ts
 * const a: Account = { id: 'BINANCE~hedge', exchangeId: 'BINANCE', tag: 'hedge' };
 * ```
 */
export interface Account {
  /** The whole id as given (trimmed): the key positions are kept under. */
  readonly id: string;
  readonly exchangeId: string;
  readonly tag?: string;
}

/**
 * Splits an account id at the first character of {@link ACCOUNT_SEPARATORS}: `BINANCE~hedge` is
 * account `hedge` of exchange `BINANCE`; `BINANCE` is the exchange's untagged account. The tag may
 * hold further separator characters (`BITSTAMP/7c17-74bd` has tag `7c17-74bd`).
 *
 * Misuse, which returns an error text instead: an empty exchange part (`~hedge`), an empty tag
 * (`BINANCE~`), or white space inside the id.
 *
 * Why: docs/methodology.md section 11 (positions are kept per full account id; the first
 * separator character splits exchange and tag).
 *
 * @param id - the exchange_id of a position event or query (already trimmed)
 * @returns the account, or a message saying what is wrong
 *
 * @example
 * ```ts
 * splitAccount('BINANCE~hedge'); // { id: 'BINANCE~hedge', exchangeId: 'BINANCE', tag: 'hedge' }
 * splitAccount('KRAKEN');        // { id: 'KRAKEN', exchangeId: 'KRAKEN' }
 * splitAccount('BINANCE~');      // 'the account tag after "~" is empty'
 * ```
 */
export function splitAccount(id: string): Account | string {
  if (id.length === 0) return 'the id is empty';
  if (/\s/.test(id)) return 'an account id cannot contain white space';
  let at = -1;
  for (let i = 0; i < id.length; i++) {
    if (ACCOUNT_SEPARATORS.includes(id[i])) {
      at = i;
      break;
    }
  }
  if (at < 0) return { id, exchangeId: id };
  const sep = id[at];
  if (at === 0) return `the exchange part before the account separator "${sep}" is empty`;
  if (at === id.length - 1) return `the account tag after "${sep}" is empty`;
  return { id, exchangeId: id.slice(0, at), tag: id.slice(at + 1) };
}

/** Side of a position: BUY (long, s = +1) or SELL (short, s = -1). */
export type PositionSide = 'BUY' | 'SELL';

/**
 * `position` event: a snapshot of one position of one account (docs/methodology.md section 11).
 * The latest snapshot per (account, symbol_id_exchange) replaces the previous one; quantity 0
 * closes the position.
 *
 * @example
 * ```ts
 * const p: PositionEvent = { type: 'position', time: 1709251200000000, account: 'BINANCE~hedge',
 *   symbolIdExchange: 'BTCUSDT', symbolId: 'BINANCE_SPOT_BTC_USDT',
 *   avgEntryPrice: { value: 60000, text: '60000' }, quantity: { value: 0.5, text: '0.5' }, side: 'BUY' };
 * ```
 */
export interface PositionEvent {
  readonly type: 'position';
  readonly time: TimeUs;
  /** The `exchange_id` field: the exchange, or the exchange and an account tag ({@link splitAccount}). */
  readonly account: string;
  readonly symbolIdExchange: string;
  /** The xrate (CoinAPI) symbol id, when given: where the position's base and quote come from. */
  readonly symbolId?: string;
  /** >= 0. */
  readonly avgEntryPrice: Dec;
  /** >= 0; 0 closes the position. */
  readonly quantity: Dec;
  readonly side: PositionSide;
  /** >= 0. */
  readonly leverage?: Dec;
  readonly crossMargin?: boolean;
  /** >= 0. */
  readonly liquidationPrice?: Dec;
  /** What the exchange said besides (any JSON value), served as it is. */
  readonly rawData?: unknown;
}

/**
 * `connectivity` event: whether an exchange can be reached from its time on.
 *
 * @example
 * ```ts
 * const c: ConnectivityEvent = { type: 'connectivity', time: 1709251200000000, exchangeId: 'KRAKEN', reachable: false };
 * ```
 */
export interface ConnectivityEvent {
  readonly type: 'connectivity';
  readonly time: TimeUs;
  readonly exchangeId: string;
  readonly reachable: boolean;
}

/** A decimal >= 0 decided exactly (`"-0"` is 0; `"-1e-400"` is negative), or `reason`. */
function nonNegative(d: Dec, field: string, reason: 'bad_size' | 'bad_price' | 'bad_field'): Dec | Reject {
  const negative = d.value < 0 || (d.value === 0 && d.text.charCodeAt(0) === 45 && /[1-9]/.test(d.text.split(/[eE]/)[0]));
  if (!negative) return d;
  return reject(reason, `position: field "${field}" must be >= 0, got ${show(d.text)}`, field);
}

function getNonNegative(r: Record<string, unknown>, field: string, reason: 'bad_size' | 'bad_price' | 'bad_field'): Dec | Reject {
  const d = getDec('position', r, field);
  return isReject(d) ? d : nonNegative(d, field, reason);
}

function getOptionalNonNegative(r: Record<string, unknown>, field: string): Dec | undefined | Reject {
  const d = getOptionalDec('position', r, field);
  return d === undefined || isReject(d) ? d : nonNegative(d, field, 'bad_field');
}

function getSide(r: Record<string, unknown>): PositionSide | Reject {
  const v = r.side;
  if (isAbsent(v)) return missing('position', 'side');
  const s = typeof v === 'string' ? trimmed(v).toUpperCase() : undefined;
  if (s === 'BUY' || s === 'SELL') return s;
  return reject('bad_field', `position: field "side" must be BUY or SELL, got ${show(v)}`, 'side');
}

/** An account id field, checked by {@link splitAccount}. */
function getAccount(type: string, r: Record<string, unknown>): Account | Reject {
  const id = getId(type, r, 'exchange_id');
  if (isReject(id)) return id;
  const a = splitAccount(id);
  if (typeof a === 'string')
    return reject('bad_field', `${type}: field "exchange_id" ${show(id)} is not a valid account id: ${a}`, 'exchange_id');
  return a;
}

/**
 * `raw_data`: any JSON value, kept as it is; a string holding the JSON text of an object or an
 * array is that object or array (so a CSV or SQLite cell carries what an NDJSON object does).
 */
function rawDataOf(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = trimmed(v);
  const c = t.charCodeAt(0);
  if (c !== 123 && c !== 91) return v; // { [
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return v;
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Validate a `position` record and turn it into a {@link PositionEvent}, or a reject.
 *
 * Checks, in the order of the methodology's table, the first failure winning: `time`
 * (→ `missing_field` / `bad_time`), `exchange_id` (→ `missing_field`; not a string, or an account
 * id {@link splitAccount} refuses → `bad_field`), `symbol_id_exchange`, `symbol_id?`, then
 * `avg_entry_price` (not a decimal → `bad_number`, negative → `bad_price`), `quantity` (not a
 * decimal → `bad_number`, negative → `bad_size`), `side` (not BUY or SELL, any case →
 * `bad_field`), `leverage?` and `liquidation_price?` (→ `bad_number`, negative → `bad_field`),
 * `cross_margin?` (not a boolean → `bad_field`). `raw_data` is any value. Never throws on JSON,
 * CSV or SQLite values.
 *
 * Why: docs/methodology.md sections 1 and 11.
 *
 * @param rec - field name to value
 * @returns the event, or a {@link Reject} with `reason`, `message` and `field`
 *
 * @example
 * ```ts
 * parsePositionEvent({ type: 'position', time: '2024-03-01T00:00:00Z', exchange_id: 'BINANCE~hedge',
 *   symbol_id_exchange: 'BTCUSDT', avg_entry_price: '60000', quantity: '-1', side: 'BUY' }).reason; // 'bad_size'
 * ```
 */
export function parsePositionEvent(rec: Record<string, unknown>): PositionEvent | Reject {
  const type = 'position';
  const time = getTime(type, rec);
  if (isReject(time)) return time;
  const account = getAccount(type, rec);
  if (isReject(account)) return account;
  const symbolIdExchange = getId(type, rec, 'symbol_id_exchange');
  if (isReject(symbolIdExchange)) return symbolIdExchange;
  const symbolId = getOptionalId(type, rec, 'symbol_id');
  if (isReject(symbolId)) return symbolId;
  const avgEntryPrice = getNonNegative(rec, 'avg_entry_price', 'bad_price');
  if (isReject(avgEntryPrice)) return avgEntryPrice;
  const quantity = getNonNegative(rec, 'quantity', 'bad_size');
  if (isReject(quantity)) return quantity;
  const side = getSide(rec);
  if (isReject(side)) return side;
  const leverage = getOptionalNonNegative(rec, 'leverage');
  if (isReject(leverage)) return leverage;
  const cm = rec.cross_margin;
  const crossMargin = isAbsent(cm) ? undefined : booleanOf(type, 'cross_margin', cm);
  if (isReject(crossMargin)) return crossMargin;
  const liquidationPrice = getOptionalNonNegative(rec, 'liquidation_price');
  if (isReject(liquidationPrice)) return liquidationPrice;
  const ev: Mutable<PositionEvent> = { type, time, account: account.id, symbolIdExchange, avgEntryPrice, quantity, side };
  if (symbolId !== undefined) ev.symbolId = symbolId;
  if (leverage !== undefined) ev.leverage = leverage;
  if (crossMargin !== undefined) ev.crossMargin = crossMargin;
  if (liquidationPrice !== undefined) ev.liquidationPrice = liquidationPrice;
  if (!isAbsent(rec.raw_data)) ev.rawData = rawDataOf(rec.raw_data);
  return ev;
}

/**
 * Validate a `connectivity` record and turn it into a {@link ConnectivityEvent}, or a reject:
 * `time`, `exchange_id` (→ `missing_field`; an account id with a tag, or a misused separator →
 * `bad_field`: reachability is per exchange), `reachable` (→ `missing_field`; not a boolean →
 * `bad_field`). Never throws on JSON, CSV or SQLite values.
 *
 * Why: docs/methodology.md section 11 (an exchange is unreachable while its latest connectivity
 * event says so).
 *
 * @example
 * ```ts
 * parseConnectivityEvent({ type: 'connectivity', time: '2024-03-01', exchange_id: 'KRAKEN', reachable: 'false' });
 * // { type: 'connectivity', time: 1709251200000000, exchangeId: 'KRAKEN', reachable: false }
 * ```
 */
export function parseConnectivityEvent(rec: Record<string, unknown>): ConnectivityEvent | Reject {
  const type = 'connectivity';
  const time = getTime(type, rec);
  if (isReject(time)) return time;
  const account = getAccount(type, rec);
  if (isReject(account)) return account;
  if (account.tag !== undefined) {
    return reject(
      'bad_field',
      `connectivity: field "exchange_id" must name an exchange, not an account, got ${show(account.id)} (reachability is per exchange: use ${show(account.exchangeId)})`,
      'exchange_id',
    );
  }
  const v = rec.reachable;
  if (isAbsent(v)) return missing(type, 'reachable');
  const reachable = booleanOf(type, 'reachable', v);
  if (isReject(reachable)) return reachable;
  return { type, time, exchangeId: account.exchangeId, reachable };
}
