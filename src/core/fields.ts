/**
 * The field readers of event records, shared by every event type's parser (events.ts,
 * metrics/events.ts): what counts as absent, how ids, times, decimals and integers are read, and
 * the wording of each reject.
 *
 * A record is a parsed NDJSON object (numbers, booleans, strings, null) or a CSV / SQLite row
 * (strings, or numbers and null from SQLite). Each reader returns the value, or a {@link Reject}
 * (an object with kind 'reject'; values are strings, numbers, booleans or Dec objects).
 *
 * @module
 */

import { parseDec } from './decimal.js';
import { formatTime, isTimeOutOfRange, parseTime, TIME_RANGE } from './time.js';
import type { Dec, Reject, RejectReason, TimeUs } from './types.js';

/**
 * A reject with its reason, message and, when one field is at fault, that field.
 *
 * @example
 * ```ts
 * reject('bad_field', 'exchange: field "rank" must be an integer, got "x"', 'rank');
 * ```
 */
export function reject(reason: RejectReason, message: string, field?: string): Reject {
  return field === undefined ? { kind: 'reject', reason, message } : { kind: 'reject', reason, message, field };
}

/**
 * A value rendered for a message: never throws, at most ~80 characters.
 *
 * @example
 * ```ts
 * show('abc'); // '"abc"'
 * ```
 */
export function show(v: unknown): string {
  let s: string;
  try {
    if (typeof v === 'string') s = JSON.stringify(v);
    else if (typeof v === 'number' || typeof v === 'boolean' || v === null) s = String(v);
    else if (v === undefined) s = 'undefined';
    else if (typeof v === 'bigint') s = `${v.toString()}n`;
    else if (typeof v === 'symbol' || typeof v === 'function') s = typeof v;
    else s = JSON.stringify(v) ?? typeof v;
  } catch {
    s = Array.isArray(v) ? 'an array' : 'an object';
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function isWs(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c > 127;
}

/**
 * Absent = undefined, null, or a string that is empty or only whitespace.
 *
 * @example
 * ```ts
 * isAbsent(' '); // true
 * ```
 */
export function isAbsent(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v !== 'string') return false;
  const len = v.length;
  if (len === 0) return true;
  return isWs(v.charCodeAt(0)) && v.trim().length === 0;
}

/**
 * The string trimmed, without allocating when there is nothing to trim.
 *
 * @example
 * ```ts
 * trimmed(' BTC'); // 'BTC'
 * ```
 */
export function trimmed(s: string): string {
  const len = s.length;
  return isWs(s.charCodeAt(0)) || isWs(s.charCodeAt(len - 1)) ? s.trim() : s;
}

/**
 * The reject of a required field that is absent.
 *
 * @example
 * ```ts
 * missing('quote', 'bid_price').reason; // 'missing_field'
 * ```
 */
export function missing(type: string, field: string): Reject {
  return reject('missing_field', `${type}: missing required field "${field}"`, field);
}

/**
 * A present time field: µs since the epoch, or a `bad_time` reject naming the field and saying
 * why (not a time the methodology accepts, or outside the times a double holds exactly in µs).
 *
 * @example
 * ```ts
 * timeOf('metric', 'recv_time', '2024-01-01T00:00:00Z'); // 1704067200000000
 * ```
 */
export function timeOf(type: string, field: string, v: unknown): TimeUs | Reject {
  const text = typeof v === 'string' ? trimmed(v) : undefined;
  const t = text === undefined ? undefined : parseTime(text);
  if (t !== undefined) return t;
  if (text !== undefined && isTimeOutOfRange(text)) {
    return reject(
      'bad_time',
      `${type}: field "${field}" ${show(v)} is outside the times xrate can hold (${formatTime(TIME_RANGE.first)} to ` +
        `${formatTime(TIME_RANGE.last)}: microseconds since 1970 kept exactly in a double)`,
      field,
    );
  }
  return reject(
    'bad_time',
    `${type}: field "${field}" must be an ISO 8601 UTC time such as "2024-01-01T00:00:00.1234567Z", got ${show(v)}`,
    field,
  );
}

/**
 * A required time field (default `time`): {@link timeOf}, or `missing_field`.
 *
 * @example
 * ```ts
 * getTime('trade', { time: '2024-01-01' }); // 1704067200000000
 * ```
 */
export function getTime(type: string, record: Record<string, unknown>, field = 'time'): TimeUs | Reject {
  const v = record[field];
  return isAbsent(v) ? missing(type, field) : timeOf(type, field, v);
}

/**
 * An optional time field: {@link timeOf}, or undefined when absent.
 *
 * @example
 * ```ts
 * getOptionalTime('metric', {}, 'recv_time'); // undefined
 * ```
 */
export function getOptionalTime(type: string, record: Record<string, unknown>, field: string): TimeUs | undefined | Reject {
  const v = record[field];
  return isAbsent(v) ? undefined : timeOf(type, field, v);
}

/**
 * A present string field, trimmed (ids) or kept as it is (texts); `bad_field` when not a string.
 *
 * @example
 * ```ts
 * stringOf('metric', 'value_text', ' up ', false); // ' up '
 * ```
 */
export function stringOf(type: string, field: string, v: unknown, trim = true): string | Reject {
  if (typeof v !== 'string') {
    return reject('bad_field', `${type}: field "${field}" must be a string, got ${show(v)}`, field);
  }
  return trim ? trimmed(v) : v;
}

/**
 * A required id (a string, trimmed), or a reject.
 *
 * @example
 * ```ts
 * getId('trade', { symbol_id: ' K_SPOT_BTC_USD' }, 'symbol_id'); // 'K_SPOT_BTC_USD'
 * ```
 */
export function getId(type: string, record: Record<string, unknown>, field: string): string | Reject {
  const v = record[field];
  return isAbsent(v) ? missing(type, field) : stringOf(type, field, v);
}

/**
 * An optional id: undefined when absent, else as {@link getId}.
 *
 * @example
 * ```ts
 * getOptionalId('symbol', {}, 'symbol_id_exchange'); // undefined
 * ```
 */
export function getOptionalId(type: string, record: Record<string, unknown>, field: string): string | undefined | Reject {
  const v = record[field];
  return isAbsent(v) ? undefined : stringOf(type, field, v);
}

/**
 * A present decimal (JSON number or decimal text, kept exactly), or a `bad_number` reject.
 *
 * @example
 * ```ts
 * decOf('metric', 'value_decimal', '0.10'); // { value: 0.1, text: '0.10' }
 * ```
 */
export function decOf(type: string, field: string, v: unknown): Dec | Reject {
  const d = parseDec(v);
  if (d !== undefined) return d;
  return reject('bad_number', `${type}: field "${field}" must be a finite decimal number, got ${show(v)}`, field);
}

/**
 * A required decimal: {@link decOf}, or `missing_field`.
 *
 * @example
 * ```ts
 * getDec('trade', { price: 1.5 }, 'price'); // { value: 1.5, text: '1.5' }
 * ```
 */
export function getDec(type: string, record: Record<string, unknown>, field: string): Dec | Reject {
  const v = record[field];
  return isAbsent(v) ? missing(type, field) : decOf(type, field, v);
}

/**
 * An optional decimal: undefined when absent, else as {@link decOf}.
 *
 * @example
 * ```ts
 * getOptionalDec('symbol', { option_strike_price: '42000' }, 'option_strike_price'); // { value: 42000, text: '42000' }
 * ```
 */
export function getOptionalDec(type: string, record: Record<string, unknown>, field: string): Dec | undefined | Reject {
  const v = record[field];
  return isAbsent(v) ? undefined : decOf(type, field, v);
}

/**
 * An integer: a safe-integer number, or a string of [+-]digits; undefined otherwise.
 *
 * @example
 * ```ts
 * parseInteger('-3'); // -3
 * ```
 */
export function parseInteger(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v + 0 : undefined;
  if (typeof v !== 'string') return undefined;
  const s = trimmed(v);
  const len = s.length;
  let i = 0;
  const c0 = s.charCodeAt(0);
  if (c0 === 43 || c0 === 45) i++;
  if (i === len) return undefined;
  for (; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  const n = Number(s);
  return Number.isSafeInteger(n) ? n + 0 : undefined; // + 0 turns -0 into 0
}

/**
 * A boolean field: true, false, 1, 0 or their texts (any case); undefined otherwise.
 *
 * @example
 * ```ts
 * parseBoolean('FALSE'); // false
 * ```
 */
export function parseBoolean(v: unknown): boolean | undefined {
  if (v === true || v === false) return v;
  if (v === 1) return true;
  if (v === 0) return false;
  if (typeof v === 'string') {
    switch (trimmed(v).toLowerCase()) {
      case 'true':
      case '1':
        return true;
      case 'false':
      case '0':
        return false;
    }
  }
  return undefined;
}

/**
 * A present boolean field ({@link parseBoolean}), or a `bad_field` reject naming the field.
 *
 * @example
 * ```ts
 * booleanOf('symbol', 'active', '0'); // false
 * ```
 */
export function booleanOf(type: string, field: string, v: unknown): boolean | Reject {
  const b = parseBoolean(v);
  if (b !== undefined) return b;
  return reject('bad_field', `${type}: field "${field}" must be a boolean (true, false, 1 or 0), got ${show(v)}`, field);
}

/**
 * An optional boolean field: {@link booleanOf}, or undefined when absent.
 *
 * @example
 * ```ts
 * getOptionalBoolean('symbol', { active: 'false' }, 'active'); // false
 * ```
 */
export function getOptionalBoolean(type: string, record: Record<string, unknown>, field: string): boolean | undefined | Reject {
  const v = record[field];
  return isAbsent(v) ? undefined : booleanOf(type, field, v);
}
