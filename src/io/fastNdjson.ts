/**
 * The NDJSON fast path: a flat quote or trade line straight to its event, in one scan.
 *
 * Most lines of a market-data log are quotes and trades of one shape. For those, `JSON.parse`
 * followed by `parseEvent` costs about 1.7 µs a line, most of it building an object that is
 * thrown away, and turning each JSON number back into text (`String(v)`) to keep its exact
 * decimal. This scanner reads the line once, keeps each number's literal, and builds the event
 * that `parseEvent(JSON.parse(line))` would build, deep-equal, field for field (a property test
 * holds the two together). Anything it is not sure about (another event type, escapes, nested
 * values, whitespace around ids, a missing or invalid field, unusual time forms) makes it
 * decline with `undefined`, and the caller takes the general path, which also produces the
 * exact reject for a bad line.
 *
 * @module
 */ // biome-ignore-all lint/suspicious/noAssignInExpressions: the number scanner reads each character once, in the loop condition

import { parseDec } from '../core/decimal.js';
import { takerSideOf } from '../core/events.js';
import { parseTime } from '../core/time.js';
import type { Dec, QuoteEvent, TradeEvent } from '../core/types.js';

const Q = 34; // "
const COLON = 58;
const COMMA = 44;
const LBRACE = 123;
const RBRACE = 125;

function isWs(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

// Field slots of the scan.
const F_TYPE = 0;
const F_TIME = 1;
const F_SYMBOL = 2;
const F_BID = 3;
const F_BID_SIZE = 4;
const F_ASK = 5;
const F_ASK_SIZE = 6;
const F_PRICE = 7;
const F_SIZE = 8;
const F_SIDE = 9;
const N_FIELDS = 10;

// Value kinds.
const K_ABSENT = 0;
const K_STRING = 1;
const K_NUMBER = 2;
const K_OTHER = 3; // true, false, null

/** Slot of the key starting at `i` (just after its opening quote) and ending at `end`, or -1. */
function slotAt(line: string, i: number, end: number): number {
  const n = end - i;
  const c = line.charCodeAt(i);
  switch (n) {
    case 4:
      if (c === 116 /* t */) return line.startsWith('type', i) ? F_TYPE : line.startsWith('time', i) ? F_TIME : -1;
      return line.startsWith('size', i) ? F_SIZE : -1;
    case 5:
      return line.startsWith('price', i) ? F_PRICE : -1;
    case 8:
      return line.startsWith('bid_size', i) ? F_BID_SIZE : line.startsWith('ask_size', i) ? F_ASK_SIZE : -1;
    case 9:
      if (c === 115) return line.startsWith('symbol_id', i) ? F_SYMBOL : -1;
      return line.startsWith('bid_price', i) ? F_BID : line.startsWith('ask_price', i) ? F_ASK : -1;
    case 10:
      return line.startsWith('taker_side', i) ? F_SIDE : -1;
    default:
      return -1;
  }
}

/**
 * Parses ISO times of the common shape `YYYY-MM-DDTHH:MM:SS[.f{1,7}]Z` with a one-entry cache
 * of the whole-second prefix (consecutive events share it); every other form, and every new
 * second, goes through {@link parseTime}. Same result as `parseTime` for every input.
 */
export class TimeCache {
  private prefix = '';
  private base = 0;

  /** {@link parse} of `line.slice(start, end)`, without slicing when the cached second matches. */
  parseAt(line: string, start: number, end: number): number | undefined {
    const len = end - start;
    if (
      len >= 21 &&
      this.prefix.length === 19 &&
      line.charCodeAt(end - 1) === 90 &&
      line.charCodeAt(start + 19) === 46 &&
      line.startsWith(this.prefix, start)
    ) {
      const digits = len - 21;
      if (digits >= 1 && digits <= 7) {
        let frac = 0;
        let ok = true;
        for (let k = 0; k < digits; k++) {
          const d = line.charCodeAt(start + 20 + k) - 48;
          if (d < 0 || d > 9) {
            ok = false;
            break;
          }
          if (k < 6) frac = frac * 10 + d;
        }
        if (ok) {
          for (let k = digits; k < 6; k++) frac *= 10;
          return this.base + frac;
        }
      }
    }
    return this.parse(line.slice(start, end));
  }

  parse(s: string): number | undefined {
    const len = s.length;
    if (len >= 20 && s.charCodeAt(len - 1) === 90 /* Z */ && this.prefix.length === 19 && s.startsWith(this.prefix)) {
      const c = s.charCodeAt(19);
      if (c === 90) return len === 20 ? this.base : parseTime(s);
      if (c === 46 /* . */) {
        const digits = len - 21;
        if (digits < 1 || digits > 7) return parseTime(s);
        let frac = 0;
        for (let i = 20; i < 20 + Math.min(digits, 6); i++) {
          const d = s.charCodeAt(i) - 48;
          if (d < 0 || d > 9) return parseTime(s);
          frac = frac * 10 + d;
        }
        if (digits === 7) {
          const d = s.charCodeAt(26) - 48;
          if (d < 0 || d > 9) return parseTime(s);
        }
        for (let i = digits; i < 6; i++) frac *= 10;
        return this.base + frac;
      }
    }
    const t = parseTime(s);
    // Remember the second of a standard-shape time (UTC "Z", fraction or none).
    if (t !== undefined && len >= 20 && s.charCodeAt(10) === 84 /* T */ && s.charCodeAt(len - 1) === 90) {
      const c = s.charCodeAt(19);
      if (c === 46 || (c === 90 && len === 20)) {
        this.prefix = s.slice(0, 19);
        this.base = Math.floor(t / 1_000_000) * 1_000_000;
      }
    }
    return t;
  }
}

/**
 * The Dec that `parseDec(JSON.parse(literal))` gives for a JSON number literal: its value, and
 * `String(value)` as text, which is the literal itself for the common plain forms (checked
 * without formatting: no exponent, at most 15 characters, no trailing fractional zero, not
 * below 1e-6), and is computed only otherwise.
 */
function numberDec(lit: string): Dec | undefined {
  const value = Number(lit);
  if (!Number.isFinite(value)) return undefined;
  if (value === 0) return { value: 0, text: '0' };
  const len = lit.length;
  let plain = len <= 15 && (value >= 1e-6 || value <= -1e-6);
  if (plain) {
    let dot = false;
    for (let i = 0; i < len; i++) {
      const c = lit.charCodeAt(i);
      if (c === 101 || c === 69) {
        plain = false;
        break;
      }
      if (c === 46) dot = true;
    }
    if (plain && dot && lit.charCodeAt(len - 1) === 48 /* 0 */) plain = false;
  }
  return { value, text: plain ? lit : String(value) };
}

/**
 * Parses a quote or trade line, or returns undefined (take the general path).
 *
 * @example
 * ```ts
 * const times = new TimeCache();
 * fastParseLine('{"type":"trade","time":"2024-03-01T00:00:00.2Z","symbol_id":"K_SPOT_BTC_USD","price":62310.9,"size":"0.015"}', times);
 * // { type: 'trade', time: 1709251200200000, symbolId: 'K_SPOT_BTC_USD', price: {...}, size: {...} }
 * ```
 */
export function fastParseLine(line: string, times: TimeCache): QuoteEvent | TradeEvent | undefined {
  const len = line.length;
  if (line.charCodeAt(0) !== LBRACE) return undefined;
  // Escapes anywhere: general path. Raw control characters (which JSON.parse refuses inside
  // strings) are checked below in the strings that nothing else validates (symbol id, other
  // keys and values); time, type, side and decimal strings are validated character by character.
  if (line.indexOf('\\') >= 0) return undefined;
  const f = FIELDS;
  f.fill(0, 0, N_FIELDS); // kinds: K_ABSENT
  let i = 1;
  while (i < len && isWs(line.charCodeAt(i))) i++;
  if (line.charCodeAt(i) === RBRACE) return undefined; // {} : the general path rejects it
  for (;;) {
    if (line.charCodeAt(i) !== Q) return undefined;
    const kEnd = line.indexOf('"', i + 1);
    if (kEnd < 0) return undefined;
    const slot = slotAt(line, i + 1, kEnd);
    if (slot < 0 && hasControl(line, i + 1, kEnd)) return undefined;
    i = kEnd + 1;
    while (i < len && isWs(line.charCodeAt(i))) i++;
    if (line.charCodeAt(i) !== COLON) return undefined;
    i++;
    while (i < len && isWs(line.charCodeAt(i))) i++;
    const c = line.charCodeAt(i);
    let vk: number;
    let vs: number;
    let ve: number;
    if (c === Q) {
      const vEnd = line.indexOf('"', i + 1);
      if (vEnd < 0) return undefined;
      if ((slot < 0 || slot === F_SYMBOL) && hasControl(line, i + 1, vEnd)) return undefined;
      vk = K_STRING;
      vs = i + 1;
      ve = vEnd;
      i = vEnd + 1;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      let k = i + 1;
      for (; k < len; k++) {
        const cc = line.charCodeAt(k);
        if (!((cc >= 48 && cc <= 57) || cc === 46 || cc === 101 || cc === 69 || cc === 43 || cc === 45)) break;
      }
      if (!isJsonNumber(line, i, k)) return undefined;
      vk = K_NUMBER;
      vs = i;
      ve = k;
      i = k;
    } else if (line.startsWith('true', i) || line.startsWith('null', i)) {
      vk = K_OTHER;
      vs = i;
      ve = i + 4;
      i += 4;
    } else if (line.startsWith('false', i)) {
      vk = K_OTHER;
      vs = i;
      ve = i + 5;
      i += 5;
    } else return undefined; // objects, arrays, garbage
    if (slot >= 0) {
      f[slot] = vk;
      f[N_FIELDS + slot] = vs;
      f[2 * N_FIELDS + slot] = ve;
    }
    while (i < len && isWs(line.charCodeAt(i))) i++;
    const sep = line.charCodeAt(i);
    i++;
    if (sep === COMMA) {
      while (i < len && isWs(line.charCodeAt(i))) i++;
      continue;
    }
    if (sep !== RBRACE) return undefined;
    break;
  }
  while (i < len) if (!isWs(line.charCodeAt(i++))) return undefined;

  if (f[F_TYPE] !== K_STRING || f[F_TIME] !== K_STRING || f[F_SYMBOL] !== K_STRING) return undefined;
  const tyS = f[N_FIELDS + F_TYPE];
  const tyLen = f[2 * N_FIELDS + F_TYPE] - tyS;
  const isQuote = tyLen === 5 && line.startsWith('quote', tyS);
  if (!isQuote && !(tyLen === 5 && line.startsWith('trade', tyS))) return undefined;
  const tS = f[N_FIELDS + F_TIME];
  const tE = f[2 * N_FIELDS + F_TIME];
  const sS = f[N_FIELDS + F_SYMBOL];
  const sE = f[2 * N_FIELDS + F_SYMBOL];
  if (tE === tS || sE === sS || isWs(line.charCodeAt(tS)) || isWs(line.charCodeAt(tE - 1))) return undefined;
  if (isWs(line.charCodeAt(sS)) || isWs(line.charCodeAt(sE - 1))) return undefined;
  const time = times.parseAt(line, tS, tE);
  if (time === undefined) return undefined;
  const symbolId = line.slice(sS, sE);
  if (isQuote) {
    const bidPrice = price(line, f, F_BID);
    if (!bidPrice) return undefined;
    const bidSize = size(line, f, F_BID_SIZE);
    if (!bidSize) return undefined;
    const askPrice = price(line, f, F_ASK);
    if (!askPrice) return undefined;
    const askSize = size(line, f, F_ASK_SIZE);
    if (!askSize) return undefined;
    return { type: 'quote', time, symbolId, bidPrice, bidSize, askPrice, askSize };
  }
  const p = price(line, f, F_PRICE);
  if (!p) return undefined;
  const sz = size(line, f, F_SIZE);
  if (!sz) return undefined;
  const sk = f[F_SIDE];
  const sideS = f[N_FIELDS + F_SIDE];
  const sideE = f[2 * N_FIELDS + F_SIDE];
  if (sk === K_ABSENT || (sk === K_OTHER && line.startsWith('null', sideS)) || (sk === K_STRING && sideE === sideS)) {
    return { type: 'trade', time, symbolId, price: p, size: sz };
  }
  if (sk !== K_STRING) return undefined;
  const side = takerSideOf(line.slice(sideS, sideE));
  if (!side) return undefined;
  return { type: 'trade', time, symbolId, price: p, size: sz, takerSide: side };
}

function hasControl(line: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (line.charCodeAt(k) < 32) return true;
  return false;
}

/** Scratch of the scan: kind, start and end of each field slot (no allocation per line). */
const FIELDS = new Int32Array(3 * N_FIELDS);

/** JSON number grammar on s[from, to): -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? */
function isJsonNumber(s: string, from: number, to: number): boolean {
  const len = to;
  let i = from;
  if (s.charCodeAt(i) === 45) i++;
  if (i >= len) return false;
  let c = s.charCodeAt(i);
  if (c === 48) i++;
  else if (c >= 49 && c <= 57) {
    while (i < len && (c = s.charCodeAt(i)) >= 48 && c <= 57) i++;
  } else return false;
  if (i < len && s.charCodeAt(i) === 46) {
    i++;
    const start = i;
    while (i < len && (c = s.charCodeAt(i)) >= 48 && c <= 57) i++;
    if (i === start) return false;
  }
  if (i < len && ((c = s.charCodeAt(i)) === 101 || c === 69)) {
    i++;
    if (i < len && ((c = s.charCodeAt(i)) === 43 || c === 45)) i++;
    const start = i;
    while (i < len && (c = s.charCodeAt(i)) >= 48 && c <= 57) i++;
    if (i === start) return false;
  }
  return i === len;
}

function dec(line: string, f: Int32Array, slot: number): Dec | undefined {
  const k = f[slot];
  const s = f[N_FIELDS + slot];
  const e = f[2 * N_FIELDS + slot];
  if (k === K_NUMBER) return numberDec(line.slice(s, e));
  if (k === K_STRING) return e > s ? parseDec(line.slice(s, e)) : undefined;
  return undefined;
}

/** A price the general path accepts unchanged: > 0. */
function price(line: string, f: Int32Array, slot: number): Dec | undefined {
  const d = dec(line, f, slot);
  return d && d.value > 0 ? d : undefined;
}

/** A size the general path accepts unchanged: > 0, or exactly 0 written without a sign. */
function size(line: string, f: Int32Array, slot: number): Dec | undefined {
  const d = dec(line, f, slot);
  return d && (d.value > 0 || (d.value === 0 && d.text.charCodeAt(0) !== 45)) ? d : undefined;
}
