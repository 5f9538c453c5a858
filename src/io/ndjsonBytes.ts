/**
 * The NDJSON fast path on bytes: a quote or trade line of the common shape, read from its UTF-8
 * bytes straight into a {@link BatchBuilder} row, without a string per line or an object per
 * number.
 *
 * It accepts a subset of what the string fast path (fastNdjson.ts `fastParseLine`) accepts, and
 * gives the same event, cell for cell: the same scan (keys in any order, duplicates: the last
 * wins, other keys skipped, escapes and odd values declined), on bytes. A line it declines goes
 * to the caller's general path (ndjson.ts `lineRecord`), which gives today's record for it, so
 * declining is always safe. Besides what `fastParseLine` declines, it declines a line with a
 * byte over 0x7f (only strings may hold one): the general path decodes it (and counts its length
 * as decoded, as the record-at-a-time reader does, which differs for invalid UTF-8).
 *
 * Shapes: a line read whole keeps its shape, the bytes between its values (keys, punctuation,
 * spaces) and the field of each value. A later line with the same bytes between its values is
 * read by comparing them and scanning its values alone, with the same value scanner; a line that
 * departs from every shape kept, at any byte, is scanned key by key. A log's lines have one shape
 * per kind of event, so keys are matched once per shape, not once per line.
 *
 * Bytes are read four at a time where they are only compared or checked: the bytes between the
 * values against a shape's, a string's bytes for a quote, a backslash, a control character or a
 * byte over 0x7f (then read one at a time from that word on), a time's second and minute against
 * the last ones, and symbol ids (symbolDict.ts). A number literal's value and end are read in one
 * pass.
 *
 * Numbers: the value of a literal of at most 2^53 - 1 as mantissa and a power of ten of at most
 * 22 either way is computed from its digits (one correctly rounded multiplication or division,
 * so it is `Number(literal)` exactly); any other goes through `Number` on its text. A JSON number
 * never lists a text (its text is `String(value)`, as in `fastParseLine`); a decimal string lists
 * its text when that text is not `String(value)`.
 *
 * @module
 */ // biome-ignore-all lint/suspicious/noAssignInExpressions: the number scanner reads each byte once, in the loop condition

import { type BatchBuilder, CELLS, SIDE_CODES } from '../core/batch.js';
import { parseDec } from '../core/decimal.js';
import { parseTime } from '../core/time.js';
import { isPlain, jsonNumberAt, jsonNumberFrom, numberEnd } from './jsonNumbers.js';
import { SymbolDict } from './symbolDict.js';

const Q = 34;
const BACKSLASH = 92;

const latin1 = new TextDecoder('latin1');
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

function isWs(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

// Field slots of the scan (as in fastNdjson.ts).
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

const K_ABSENT = 0;
const K_STRING = 1;
const K_NUMBER = 2;
const K_OTHER = 3;

const codes = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const KEY_TYPE = codes('type');
const KEY_TIME = codes('time');
const KEY_SIZE = codes('size');
const KEY_PRICE = codes('price');
const KEY_BID_SIZE = codes('bid_size');
const KEY_ASK_SIZE = codes('ask_size');
const KEY_SYMBOL = codes('symbol_id');
const KEY_BID = codes('bid_price');
const KEY_ASK = codes('ask_price');
const KEY_SIDE = codes('taker_side');
const QUOTE = codes('quote');
const TRADE = codes('trade');
const TRUE = codes('true');
const NULL = codes('null');
const FALSE = codes('false');
const SIDES = SIDE_CODES.map((s) => (s === undefined ? new Uint8Array(0) : codes(s)));

/** Whether b[at, at + w.length) is `w` (within `end`). */
function isAt(b: Uint8Array, at: number, end: number, w: Uint8Array): boolean {
  const n = w.length;
  if (at + n > end) return false;
  for (let k = 0; k < n; k++) if (b[at + k] !== w[k]) return false;
  return true;
}

function slotAt(b: Uint8Array, i: number, end: number): number {
  switch (end - i) {
    case 4:
      if (b[i] === 116 /* t */) return isAt(b, i, end, KEY_TYPE) ? F_TYPE : isAt(b, i, end, KEY_TIME) ? F_TIME : -1;
      return isAt(b, i, end, KEY_SIZE) ? F_SIZE : -1;
    case 5:
      return isAt(b, i, end, KEY_PRICE) ? F_PRICE : -1;
    case 8:
      return isAt(b, i, end, KEY_BID_SIZE) ? F_BID_SIZE : isAt(b, i, end, KEY_ASK_SIZE) ? F_ASK_SIZE : -1;
    case 9:
      if (b[i] === 115) return isAt(b, i, end, KEY_SYMBOL) ? F_SYMBOL : -1;
      return isAt(b, i, end, KEY_BID) ? F_BID : isAt(b, i, end, KEY_ASK) ? F_ASK : -1;
    case 10:
      return isAt(b, i, end, KEY_SIDE) ? F_SIDE : -1;
    default:
      return -1;
  }
}

/** Scratch of the scan: kind, start and end of each slot. */
const F = new Int32Array(3 * N_FIELDS);
/** Scratch of the scan: the value of each slot holding a JSON number. */
const NUM = new Float64Array(N_FIELDS);
/** Values of a line whose shape is kept, at most; and the shapes kept (a quote's and a trade's, and a few more). */
const MAX_TOKENS = 32;
const MAX_SHAPES = 4;
/** Scratch of the scan: start and end of each value's token, and its field slot (-1: a key not read). */
const TOKENS = new Int32Array(2 * MAX_TOKENS);
const TOKEN_SLOTS = new Int8Array(MAX_TOKENS);

/**
 * The shape of a line: the bytes between its values (from the `{` to the line's end), and the
 * field slot of each value. Gap `k` is `gaps[gapEnd[k - 1], gapEnd[k])`; there is one more gap
 * than values.
 */
interface Shape {
  gaps: Uint8Array;
  /** A view of `gaps`, to compare four bytes at a time. */
  view: DataView;
  gapEnd: Int32Array;
  slots: Int8Array;
}

/** What a byte inside a string is: 0 a plain one, or the closing quote, a byte declining the line (`\\`, over 0x7f), a control character. */
const S_QUOTE = 1;
const S_DECLINE = 2;
const S_CONTROL = 3;
const STRING_BYTE = new Uint8Array(256).map((_, x) =>
  x === Q ? S_QUOTE : x === BACKSLASH || x > 127 ? S_DECLINE : x < 32 ? S_CONTROL : 0,
);

/**
 * Whether the four bytes of `w` (little-endian) hold one that ends a plain run of a string's
 * bytes: a quote, a backslash, a control character or a byte over 0x7f (each flagged in its
 * byte's top bit; a flag may be set falsely only above a byte rightly flagged).
 */
function special(w: number): boolean {
  const q = w ^ 0x22222222;
  const bs = w ^ 0x5c5c5c5c;
  const quote = ((q - 0x01010101) | 0) & ~q;
  const backslash = ((bs - 0x01010101) | 0) & ~bs;
  const control = ((w - 0x20202020) | 0) & ~w;
  return ((quote | backslash | control | w) & 0x80808080) !== 0;
}

/**
 * Reads the value token at b[i] (i < e) of the field in `slot` (-1: a key not read): the slot's
 * kind, start and end (a string's inside its quotes) into {@link F}, a number's value into
 * {@link NUM}. Returns the index after the token, or -1 when the line is not one this path reads
 * (an escape, a byte over 0x7f, a control character in a symbol id or in a value not read, a
 * number that is not a JSON number, an object or array).
 */
function value(b: Uint8Array, dv: DataView, i: number, e: number, slot: number): number {
  const c = b[i];
  let vk: number;
  let vs: number;
  let ve: number;
  let next: number;
  if (c === Q) {
    let vEnd = i + 1;
    let ctl = false;
    // Four bytes at a time while none is one the loop below stops at.
    while (vEnd + 4 <= e && !special(dv.getInt32(vEnd, true))) vEnd += 4;
    for (; vEnd < e; vEnd++) {
      const k = STRING_BYTE[b[vEnd]];
      if (k === 0) continue;
      if (k === S_QUOTE) break;
      if (k === S_DECLINE) return -1;
      ctl = true;
    }
    if (vEnd >= e) return -1;
    if ((slot < 0 || slot === F_SYMBOL) && ctl) return -1;
    vk = K_STRING;
    vs = i + 1;
    ve = vEnd;
    next = vEnd + 1;
  } else if (c === 45 || (c >= 48 && c <= 57)) {
    // The literal's value and end in one pass. A literal followed by more of what a number runs
    // over (`01`, `1-2`) is no JSON number: the caller then meets that byte where a gap of the
    // line's shape, a comma or the closing brace must be, and declines the line.
    const v = jsonNumberFrom(b, i, e);
    const k = numberEnd;
    if (Number.isNaN(v)) return -1;
    if (slot >= 0) NUM[slot] = v;
    vk = K_NUMBER;
    vs = i;
    ve = k;
    next = k;
  } else if (isAt(b, i, e, TRUE) || isAt(b, i, e, NULL)) {
    vk = K_OTHER;
    vs = i;
    ve = next = i + 4;
  } else if (isAt(b, i, e, FALSE)) {
    vk = K_OTHER;
    vs = i;
    ve = next = i + 5;
  } else return -1;
  if (slot >= 0) {
    F[slot] = vk;
    F[N_FIELDS + slot] = vs;
    F[2 * N_FIELDS + slot] = ve;
  }
  return next;
}

/**
 * The fast path's state across lines: a whole-second time cache and the symbol dictionary.
 * {@link line} parses one line into a row of a builder, or declines.
 */
export class ByteLineParser {
  private readonly prefix = new Uint8Array(19);
  private readonly prefixView = new DataView(this.prefix.buffer);
  private hasPrefix = false;
  private base = 0;
  /** The minute of the last standard-shape time parsed whole (`YYYY-MM-DDTHH:MM`), and its µs. */
  private readonly minute = new Uint8Array(16);
  private readonly minuteView = new DataView(this.minute.buffer);
  private hasMinute = false;
  private minuteBase = 0;
  private readonly symbols = new SymbolDict();
  /** Shapes of lines read (see {@link shaped}), and the one replaced next. */
  private readonly shapes: Shape[] = [];
  private nextShape = 0;
  /** Values scanned in the line being read. */
  private tokens = 0;
  /** A view of the bytes last read (`viewOf`), to read four at a time. */
  private view: DataView = new DataView(new ArrayBuffer(0));
  private viewOf: Uint8Array | undefined;

  /** A view of `b` (the one of the bytes last read, or a new one), in {@link view}. */
  private viewFor(b: Uint8Array): DataView {
    if (b !== this.viewOf) {
      this.viewOf = b;
      this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    }
    return this.view;
  }

  /**
   * The µs after the whole second of the time b[s, e) (ending in `Z`): 0 for `:SSZ`, the
   * fraction of `:SS.f{1,7}Z` (a 7th digit truncated), or -1 for any other form.
   */
  private static fraction(b: Uint8Array, s: number, e: number): number {
    const len = e - s;
    const c = b[s + 19];
    if (c === 90) return len === 20 ? 0 : -1;
    const digits = len - 21;
    if (c !== 46 || digits < 1 || digits > 7) return -1;
    let frac = 0;
    for (let j = 0; j < digits; j++) {
      const d = b[s + 20 + j] - 48;
      if (d < 0 || d > 9) return -1;
      if (j < 6) frac = frac * 10 + d;
    }
    for (let x = digits; x < 6; x++) frac *= 10;
    return frac;
  }

  /**
   * The time of b[s, e) (as fastNdjson.ts `TimeCache.parseAt`), or undefined: a time of the
   * second last parsed, or of its minute (a new second, `:SS` checked 00-59), is read from its
   * fraction; any other goes through `parseTime`.
   */
  timeAt(b: Uint8Array, s: number, e: number): number | undefined {
    const len = e - s;
    if (len >= 20 && b[e - 1] === 90) {
      const dv = this.viewFor(b);
      if (this.hasPrefix) {
        // The first 16 bytes four at a time, then 3.
        const p = this.prefix;
        const pv = this.prefixView;
        let k = 0;
        while (k < 16 && dv.getInt32(s + k, true) === pv.getInt32(k, true)) k += 4;
        if (k === 16) while (k < 19 && b[s + k] === p[k]) k++;
        if (k === 19) {
          const frac = ByteLineParser.fraction(b, s, e);
          if (frac >= 0) return this.base + frac;
        }
      }
      if (this.hasMinute && b[s + 16] === 58) {
        const mv = this.minuteView;
        let k = 0;
        while (k < 16 && dv.getInt32(s + k, true) === mv.getInt32(k, true)) k += 4;
        const s1 = b[s + 17] - 48;
        const s2 = b[s + 18] - 48;
        if (k === 16 && s1 >= 0 && s1 <= 5 && s2 >= 0 && s2 <= 9) {
          const frac = ByteLineParser.fraction(b, s, e);
          const base = this.minuteBase + (s1 * 10 + s2) * 1_000_000;
          if (frac >= 0 && Number.isSafeInteger(base) && Number.isSafeInteger(base + 999_999)) {
            this.prefix.set(b.subarray(s, s + 19));
            this.hasPrefix = true;
            this.base = base;
            return base + frac;
          }
        }
      }
    }
    const text = utf8.decode(b.subarray(s, e));
    const t = parseTime(text);
    // Remember the second of a standard-shape time (UTC "Z", fraction or none), ASCII only.
    if (t !== undefined && len >= 20 && text.length === len && b[s + 10] === 84 && b[e - 1] === 90) {
      const c = b[s + 19];
      if (c === 46 || (c === 90 && len === 20)) {
        this.prefix.set(b.subarray(s, s + 19));
        this.hasPrefix = true;
        this.base = Math.floor(t / 1_000_000) * 1_000_000;
        if (b[s + 16] === 58) {
          this.minute.set(b.subarray(s, s + 16));
          this.hasMinute = true;
          this.minuteBase = Math.floor(t / 60_000_000) * 60_000_000;
        }
      }
    }
    return t;
  }

  /**
   * Adds the quote or trade line b[s, e) (no line ending) as row of `bb` (generation `gen`, which
   * changes with each new batch; its raw at `s + delta` in the batch's raw bytes) and returns true, or returns false (nothing added): take the
   * general path.
   */
  line(b: Uint8Array, s: number, e: number, lineNo: number, bb: BatchBuilder, gen: number, delta: number): boolean {
    if (b[s] !== 123) return false;
    this.viewFor(b);
    const shaped = this.shaped(b, s, e);
    if (!shaped && !this.scan(b, s, e)) return false;
    if (!this.fields(b, s, e, lineNo, bb, gen, delta)) return false;
    if (!shaped) this.keepShape(b, s, e);
    return true;
  }

  /**
   * Scans the line b[s, e) (starting with `{`) as any JSON object of flat values: each field's
   * kind, start and end into {@link F}, each number's value into {@link NUM}, each value's token
   * into {@link TOKENS}; false when the line is not one this path reads.
   */
  private scan(b: Uint8Array, s: number, e: number): boolean {
    const f = F;
    for (let k = 0; k < N_FIELDS; k++) f[k] = K_ABSENT;
    this.tokens = 0;
    let i = s + 1;
    while (i < e && isWs(b[i])) i++;
    if (i >= e || b[i] === 125) return false;
    for (;;) {
      if (i >= e || b[i] !== Q) return false;
      let kEnd = i + 1;
      let ctl = false;
      for (; kEnd < e; kEnd++) {
        const c = b[kEnd];
        if (c === Q) break;
        if (c === BACKSLASH || c > 127) return false;
        if (c < 32) ctl = true;
      }
      if (kEnd >= e) return false;
      const slot = slotAt(b, i + 1, kEnd);
      if (slot < 0 && ctl) return false;
      i = kEnd + 1;
      while (i < e && isWs(b[i])) i++;
      if (i >= e || b[i] !== 58) return false;
      i++;
      while (i < e && isWs(b[i])) i++;
      if (i >= e) return false;
      const t = this.tokens;
      const from = i;
      i = value(b, this.view, i, e, slot);
      if (i < 0) return false;
      if (t < MAX_TOKENS) {
        TOKENS[2 * t] = from;
        TOKENS[2 * t + 1] = i;
        TOKEN_SLOTS[t] = slot;
      }
      this.tokens = t + 1;
      while (i < e && isWs(b[i])) i++;
      if (i >= e) return false;
      const sep = b[i++];
      if (sep === 44) {
        while (i < e && isWs(b[i])) i++;
        continue;
      }
      if (sep !== 125) return false;
      break;
    }
    while (i < e) if (!isWs(b[i++])) return false;
    return true;
  }

  /**
   * Reads the line b[s, e) as {@link scan} would, when it has the shape of a line read before: the
   * same bytes between its values (keys, punctuation, spaces), values of any kind. False when it
   * has none of the shapes kept (nothing read then).
   */
  private shaped(b: Uint8Array, s: number, e: number): boolean {
    const f = F;
    const dv = this.view;
    for (let n = 0; n < this.shapes.length; n++) {
      const sh = this.shapes[n];
      const gaps = sh.gaps;
      const gv = sh.view;
      const gapEnd = sh.gapEnd;
      const values = sh.slots.length;
      for (let k = 0; k < N_FIELDS; k++) f[k] = K_ABSENT;
      let i = s;
      let g = 0;
      for (let v = 0; ; v++) {
        const ge = gapEnd[v];
        if (i + (ge - g) > e) break;
        while (g + 4 <= ge && dv.getInt32(i, true) === gv.getInt32(g, true)) {
          g += 4;
          i += 4;
        }
        while (g < ge && b[i] === gaps[g]) {
          g++;
          i++;
        }
        if (g < ge) break;
        if (v === values) {
          if (i === e) return true;
          break;
        }
        if (i >= e) break;
        i = value(b, dv, i, e, sh.slots[v]);
        if (i < 0) break;
      }
    }
    return false;
  }

  /** Keeps the shape of the line b[s, e) just read by {@link scan} (the oldest of {@link MAX_SHAPES} goes). */
  private keepShape(b: Uint8Array, s: number, e: number): void {
    const n = this.tokens;
    if (n > MAX_TOKENS) return;
    const gapEnd = new Int32Array(n + 1);
    let len = 0;
    for (let t = 0, from = s; t <= n; t++) {
      const to = t < n ? TOKENS[2 * t] : e;
      len += to - from;
      gapEnd[t] = len;
      if (t < n) from = TOKENS[2 * t + 1];
    }
    const gaps = new Uint8Array(len);
    for (let t = 0, from = s; t <= n; t++) {
      const to = t < n ? TOKENS[2 * t] : e;
      gaps.set(b.subarray(from, to), t === 0 ? 0 : gapEnd[t - 1]);
      if (t < n) from = TOKENS[2 * t + 1];
    }
    const shape: Shape = { gaps, view: new DataView(gaps.buffer), gapEnd, slots: TOKEN_SLOTS.slice(0, n) };
    if (this.shapes.length < MAX_SHAPES) this.shapes.push(shape);
    else this.shapes[this.nextShape] = shape;
    this.nextShape = (this.nextShape + 1) % MAX_SHAPES;
  }

  /** The fields read (by {@link scan} or {@link shaped}) as a quote or trade row of `bb`, or false. */
  private fields(b: Uint8Array, s: number, e: number, lineNo: number, bb: BatchBuilder, gen: number, delta: number): boolean {
    const f = F;
    if (f[F_TYPE] !== K_STRING || f[F_TIME] !== K_STRING || f[F_SYMBOL] !== K_STRING) return false;
    const tyS = f[N_FIELDS + F_TYPE];
    const tyE = f[2 * N_FIELDS + F_TYPE];
    const isQuote = isAt(b, tyS, tyE, QUOTE) && tyE - tyS === 5;
    if (!isQuote && !(isAt(b, tyS, tyE, TRADE) && tyE - tyS === 5)) return false;
    const tS = f[N_FIELDS + F_TIME];
    const tE = f[2 * N_FIELDS + F_TIME];
    const sS = f[N_FIELDS + F_SYMBOL];
    const sE = f[2 * N_FIELDS + F_SYMBOL];
    if (tE === tS || sE === sS || isWs(b[tS]) || isWs(b[tE - 1]) || isWs(b[sS]) || isWs(b[sE - 1])) return false;
    const time = this.timeAt(b, tS, tE);
    if (time === undefined) return false;
    const cells = this.cells;
    const texts = this.texts;
    if (isQuote) {
      if (!this.dec(b, f, F_BID, 0, true) || !this.dec(b, f, F_BID_SIZE, 1, false)) return false;
      if (!this.dec(b, f, F_ASK, 2, true) || !this.dec(b, f, F_ASK_SIZE, 3, false)) return false;
      const sym = this.symbols.index(b, this.view, sS, sE, bb, gen);
      const row = bb.quote(lineNo, time, sym, cells[0], cells[1], cells[2], cells[3], s + delta, e + delta);
      for (let k = 0; k < 4; k++) if (texts[k] !== undefined) bb.text(CELLS * row + k, texts[k] as string);
      return true;
    }
    if (!this.dec(b, f, F_PRICE, 0, true) || !this.dec(b, f, F_SIZE, 1, false)) return false;
    const sk = f[F_SIDE];
    const sideS = f[N_FIELDS + F_SIDE];
    const sideE = f[2 * N_FIELDS + F_SIDE];
    let side = 0;
    if (sk === K_STRING && sideE > sideS) {
      for (let k = 1; k < SIDES.length; k++) {
        if (sideE - sideS === SIDES[k].length && isAt(b, sideS, sideE, SIDES[k])) {
          side = k;
          break;
        }
      }
      if (side === 0) return false;
    } else if (!(sk === K_ABSENT || (sk === K_OTHER && isAt(b, sideS, sideE, NULL)) || sk === K_STRING)) return false;
    const sym = this.symbols.index(b, this.view, sS, sE, bb, gen);
    const row = bb.trade(lineNo, time, sym, cells[0], cells[1], side, s + delta, e + delta);
    for (let k = 0; k < 2; k++) if (texts[k] !== undefined) bb.text(CELLS * row + k, texts[k] as string);
    return true;
  }

  /** The values of the decimal cells of the line being read, and their texts when listed. */
  private readonly cells = new Float64Array(4);
  private readonly texts: (string | undefined)[] = [undefined, undefined, undefined, undefined];

  /**
   * Cell `c` from slot `slot`: a price (> 0) or a size (> 0, or 0 not written with a sign), as
   * fastNdjson.ts' `price` and `size`; false when the value is not one.
   */
  private dec(b: Uint8Array, f: Int32Array, slot: number, c: number, isPrice: boolean): boolean {
    const k = f[slot];
    const s = f[N_FIELDS + slot];
    const e = f[2 * N_FIELDS + slot];
    let v: number;
    let text: string | undefined;
    if (k === K_NUMBER) {
      v = NUM[slot];
      if (!Number.isFinite(v)) return false;
      if (v === 0) v = 0;
    } else if (k === K_STRING && e > s) {
      v = jsonNumberAt(b, s, e);
      if (!Number.isNaN(v)) {
        if (!Number.isFinite(v)) return false;
        if (v === 0) {
          v = 0;
          if (!(e - s === 1 && b[s] === 48)) text = latin1.decode(b.subarray(s, e));
        } else if (!isPlain(b, s, e, v)) {
          const t = latin1.decode(b.subarray(s, e));
          if (t !== String(v)) text = t;
        }
      } else {
        const d = parseDec(latin1.decode(b.subarray(s, e)));
        if (d === undefined) return false;
        v = d.value;
        if (d.text !== String(v)) text = d.text;
      }
    } else return false;
    if (isPrice ? !(v > 0) : !(v > 0 || (v === 0 && (text === undefined || text.charCodeAt(0) !== 45)))) return false;
    this.cells[c] = v;
    this.texts[c] = text;
    return true;
  }
}
