/**
 * Exact decimals: parsing event numbers into {@link Dec} (float value + exact text) and exact
 * comparison of decimal texts.
 *
 * docs/methodology.md section 1 lets numbers arrive as JSON numbers or decimal strings and parses
 * strings exactly; section 7 decides every rule boundary on the exact decimal. So each number
 * keeps its text next to its float value: the hot path uses the float, the boundary fall-backs
 * use the text with {@link ExactDecimal}.
 *
 * @module
 */

import { Decimal } from 'decimal.js';
import type { Dec } from './types.js';

/**
 * A `Decimal` constructor configured for exact work: 1000 significant digits, round half to
 * even, and never exponential notation in `toString()`.
 *
 * Why: docs/methodology.md section 7 decides rule boundaries (rule 5's spread 0.67, rule 6 weights,
 * rule 11 outliers) exactly on the parsed decimals. With 1000 digits, sums and products of a
 * few event decimals are exact, so a float test near a boundary can fall back to this. It is a
 * clone, so it never changes the global `Decimal` configuration other code may rely on.
 *
 * @example
 * ```ts
 * const bid = new ExactDecimal('0.1'), ask = new ExactDecimal('0.2');
 * bid.plus(ask).toString(); // "0.3" (exact, unlike 0.1 + 0.2 in float)
 * ```
 */
export const ExactDecimal: Decimal.Constructor = Decimal.clone({
  precision: 1000,
  rounding: Decimal.ROUND_HALF_EVEN,
  toExpNeg: -9e15,
  toExpPos: 9e15,
});

/** True when `s` (already trimmed) is a decimal literal: [+-] (d+[.d*] | .d+) [(e|E)[+-]d+]. */
function isDecimalLiteral(s: string): boolean {
  const len = s.length;
  let i = 0;
  let c = s.charCodeAt(0);
  if (c === 43 /* + */ || c === 45 /* - */) i++;
  let digits = 0;
  while (i < len) {
    c = s.charCodeAt(i);
    if (c < 48 || c > 57) break;
    digits++;
    i++;
  }
  if (i < len && s.charCodeAt(i) === 46 /* . */) {
    i++;
    while (i < len) {
      c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      digits++;
      i++;
    }
  }
  if (digits === 0) return false;
  if (i === len) return true;
  c = s.charCodeAt(i);
  if (c !== 101 /* e */ && c !== 69 /* E */) return false;
  i++;
  c = s.charCodeAt(i);
  if (c === 43 || c === 45) i++;
  const expStart = i;
  while (i < len) {
    c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
    i++;
  }
  return i > expStart;
}

function isWhitespace(c: number): boolean {
  // ASCII space, \t \n \v \f \r; anything else (NBSP, U+2028, ...) goes through String#trim.
  return c === 32 || (c >= 9 && c <= 13) || c > 127;
}

/**
 * Parse a number of an event into a {@link Dec}: its float64 value and its exact decimal text.
 *
 * Accepts a finite JSON number (text = `String(v)`, the shortest text that round-trips to the
 * same float) or a string holding a decimal literal: optional sign, digits with an optional
 * fraction (`1`, `1.`, `.5`, `1.50`), optional exponent (`1e-8`, `2.5E+3`); surrounding
 * whitespace is trimmed and the rest is kept as is (`"0.1000"` stays `"0.1000"`).
 * `value = Number(text)`; a negative zero value is normalized to `0`. Rejects (returns
 * `undefined`) NaN, infinities, hex, `1_000`, empty text, `1.2.3`, texts whose value overflows
 * (`"1e400"`), booleans, null, objects and everything else. Never throws.
 *
 * Why: docs/methodology.md section 1 (numbers may be JSON numbers or decimal strings, strings are
 * parsed exactly) and section 7 (boundaries are decided on the exact decimal, so the text must
 * survive; byte-identical outputs whatever the input format).
 *
 * @param v - a field value from a JSON, CSV or SQLite record
 * @returns the parsed decimal, or `undefined`
 *
 * @example
 * ```ts
 * parseDec('0.1000'); // { value: 0.1, text: '0.1000' }
 * parseDec(2.5);      // { value: 2.5, text: '2.5' }
 * parseDec(' 1e-8 '); // { value: 1e-8, text: '1e-8' }
 * parseDec('0x10');   // undefined
 * ```
 */
export function parseDec(v: unknown): Dec | undefined {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return undefined;
    return { value: v === 0 ? 0 : v, text: String(v) };
  }
  if (typeof v !== 'string') return undefined;
  let text = v;
  const len = v.length;
  if (len === 0) return undefined;
  if (isWhitespace(v.charCodeAt(0)) || isWhitespace(v.charCodeAt(len - 1))) {
    text = v.trim();
    if (text.length === 0) return undefined;
  }
  if (!isDecimalLiteral(text)) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value)) return undefined;
  return { value: value === 0 ? 0 : value, text };
}

/**
 * Compare two decimal texts exactly: -1 if a < b, 0 if equal, 1 if a > b.
 *
 * `"0.10"` equals `"1e-1"`; `"-0"` equals `"0"`. Both texts must be decimal literals as
 * {@link parseDec} returns them (or any text decimal.js accepts); an invalid text makes
 * decimal.js throw, which is a programming error.
 *
 * Why: docs/methodology.md section 7 — a rule's boundary is decided exactly on the parsed decimals,
 * not on rounded floats (e.g. two prices whose floats are equal but whose texts differ).
 *
 * @param a - a decimal text
 * @param b - a decimal text
 * @returns the sign of a - b
 *
 * @example
 * ```ts
 * compareDecText('0.1', '0.10');                 // 0
 * compareDecText('0.30000000000000001', '0.3');  // 1 (the floats are equal)
 * ```
 */
export function compareDecText(a: string, b: string): -1 | 0 | 1 {
  if (a === b) return 0;
  const c = new ExactDecimal(a).cmp(new ExactDecimal(b));
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

/**
 * Splits a non-negative decimal text into an integer mantissa and a base-10 exponent.
 *
 * @example
 * ```ts
 * decimalToScaled('12.50'); // [1250n, -2]
 * decimalToScaled('1e-8');  // [1n, -8]
 * ```
 */
export function decimalToScaled(text: string): [bigint, number] {
  let s = text.trim();
  let exp = 0;
  const e = s.search(/[eE]/);
  if (e >= 0) {
    exp = Number(s.slice(e + 1));
    s = s.slice(0, e);
  }
  const dot = s.indexOf('.');
  if (dot >= 0) {
    exp -= s.length - dot - 1;
    s = s.slice(0, dot) + s.slice(dot + 1);
  }
  if (s.startsWith('+')) s = s.slice(1);
  return [BigInt(s === '' || s === '-' ? '0' : s), exp];
}

const TEN = 10n;

/** Powers of ten exact in a float64 (10^0 .. 10^22). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** The result of the last successful {@link decimalToSafe} (no tuple allocated per call), and its text. */
let safeMant = 0;
let safeExp = 0;
let safeText: string | undefined;

/**
 * {@link decimalToScaled} with the mantissa as a float64 into `safeMant` and `safeExp`, when it is
 * a safe integer (exact): true; false otherwise (then use the BigInt form). Plain decimal texts
 * only: `[+|-]digits[.digits]`.
 */
function decimalToSafe(text: string): boolean {
  if (text === safeText) return true; // the same size is often summed twice in a row (rule 8, section 10)
  const n = text.length;
  let i = 0;
  let neg = false;
  const c0 = text.charCodeAt(0);
  if (c0 === 43 || c0 === 45) {
    neg = c0 === 45;
    i = 1;
  }
  let mant = 0;
  let exp = 0;
  let dot = false;
  let digits = 0;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 46 && !dot) {
      dot = true;
      continue;
    }
    const d = c - 48;
    if (d < 0 || d > 9) return false;
    mant = mant * 10 + d;
    digits++;
    if (dot) exp--;
  }
  if (digits === 0 || digits > 15) return false; // 15 digits are always below 2^53
  safeMant = neg ? -mant : mant;
  safeExp = exp;
  safeText = text;
  return true;
}

/**
 * {@link decimalToSafe} of `String(v)`, mostly without making the string: true with `safeMant`
 * and `safeExp` set when the float's shortest text has at most 15 characters in plain notation
 * and is found from v alone. For 1e-6 <= v < 1e13 (I integer digits, "0" below 1) and k = 14 - I:
 * N = round(v 10^k) is below 2^53, and when N / 10^k (one correctly rounded division of exact
 * floats) is v, the decimal N 10^-k has v as its nearest float. It is the only decimal of at
 * most k fraction digits that has (two of them differ by 10^-k or more, more than the spacing
 * of floats near v). `String(v)` has at most k fraction digits too (it has the fewest significant
 * digits of the decimals whose nearest float is v; a power of ten between the two would be that
 * string), so it is that decimal: N without its trailing zeros (up to k of them) and minus the
 * fraction digits left, as decimalToSafe reads it (at most I + k = 14 digits). False otherwise
 * (then nothing is known: read `String(v)`).
 */
export function floatToSafe(v: number): boolean {
  if (!(v >= 1e-6 && v < 1e13)) return false;
  let digits = 1;
  let p = 10;
  while (v >= p) {
    digits++;
    p *= 10;
  }
  let k = 14 - digits;
  const scale = POW10[k];
  let n = Math.round(v * scale);
  if (n / scale !== v) return false;
  // Its trailing zeros, at most k (13 at most): 8, 4, 2 and 1 at a time, each division exact.
  if (k >= 8 && n % 1e8 === 0) {
    n /= 1e8;
    k -= 8;
  }
  if (k >= 4 && n % 1e4 === 0) {
    n /= 1e4;
    k -= 4;
  }
  if (k >= 2 && n % 100 === 0) {
    n /= 100;
    k -= 2;
  }
  if (k >= 1 && n % 10 === 0) {
    n /= 10;
    k--;
  }
  floatMant = n;
  floatExp = -k;
  return true;
}

/** The mantissa and exponent {@link floatToSafe} found. */
let floatMant = 0;
let floatExp = 0;

/** `a * 10^k + b` when it is a safe integer (computed exactly), else NaN. */
function scaledAdd(a: number, k: number, b: number): number {
  if (k > 22) return Number.NaN;
  const p = a * POW10[k];
  if (!Number.isSafeInteger(p)) return Number.NaN;
  const r = p + b;
  return Number.isSafeInteger(r) ? r : Number.NaN;
}

/** An exact sum being built: an integer mantissa and a base-10 exponent (`mant * 10^exp`). */
export interface ScaledSum {
  mant: bigint;
  exp: number;
}

/**
 * Adds `mant * 10^exp` to `total` exactly (the exponent of the total is the smaller of the two).
 *
 * @example
 * ```ts
 * const t = { mant: 1n, exp: -1 };   // 0.1
 * addScaled(t, 2n, -1);              // t = { mant: 3n, exp: -1 }: 0.3
 * ```
 */
export function addScaled(total: ScaledSum, mant: bigint, exp: number): void {
  if (mant === 0n) return;
  if (total.mant === 0n) {
    total.mant = mant;
    total.exp = exp;
  } else if (exp >= total.exp) total.mant += mant * TEN ** BigInt(exp - total.exp);
  else {
    total.mant = total.mant * TEN ** BigInt(total.exp - exp) + mant;
    total.exp = exp;
  }
}

/**
 * The plain decimal text of `mant * 10^exp` (`"0.3"`, `"12"`, `"0"`): no exponent, no trailing
 * zeros after the point.
 *
 * @example
 * ```ts
 * scaledText({ mant: 30n, exp: -2 }); // '0.3'
 * ```
 */
export function scaledText(s: ScaledSum): string {
  return new ExactDecimal(`${s.mant}e${s.exp}`).toString();
}

/** Serialisable state of {@link ExactSums}: each slot's mantissa as a decimal string, and its exponent. */
export interface ExactSumsJSON {
  mant: string[];
  exp: number[];
}

/**
 * Exact sums of decimal texts, one per slot, in columns: an integer mantissa and a base-10
 * exponent. The mantissa is a float64 holding an integer while it stays a safe integer (below
 * 2^53, exact), and a BigInt only beyond, so sums of ordinary sizes never touch BigInt arithmetic
 * (docs/methodology.md section 7: 0.1 + 0.2 is exactly 0.3).
 *
 * @example
 * ```ts
 * const s = new ExactSums(4);
 * s.add(0, '0.1');
 * s.add(0, '0.2');
 * s.mantissa(0); // 3n
 * s.exponent(0); // -1
 * ```
 */
export class ExactSums {
  private fastMant: Float64Array;
  /** The mantissas that are not safe integers, by slot (rare: most sums never need one). */
  private big = new Map<number, bigint>();
  private exp: Int32Array;

  /** @param capacity - number of slots */
  constructor(capacity = 0) {
    this.fastMant = new Float64Array(capacity);
    this.exp = new Int32Array(capacity);
  }

  /** Makes room for `n` slots (the new ones empty). */
  grow(n: number): void {
    if (n <= this.exp.length) return;
    const fast = new Float64Array(n);
    fast.set(this.fastMant);
    const exp = new Int32Array(n);
    exp.set(this.exp);
    this.fastMant = fast;
    this.exp = exp;
  }

  /** The BigInt mantissa of a slot, if it has one. */
  private bigOf(slot: number): bigint | undefined {
    return this.big.size === 0 ? undefined : this.big.get(slot);
  }

  /** Sets (or, with undefined, removes) the BigInt mantissa of a slot. */
  private setBig(slot: number, v: bigint | undefined): void {
    if (v !== undefined) this.big.set(slot, v);
    else if (this.big.size !== 0) this.big.delete(slot);
  }

  /** Empties a slot (sum 0). */
  clear(slot: number): void {
    this.fastMant[slot] = 0;
    this.setBig(slot, undefined);
    this.exp[slot] = 0;
  }

  /** Copies slot `from` into slot `to` of `target`. */
  copyTo(target: ExactSums, from: number, to: number): void {
    target.fastMant[to] = this.fastMant[from];
    target.setBig(to, this.bigOf(from));
    target.exp[to] = this.exp[from];
  }

  /** Sets a slot to the sum `mant * 10^exp` (the mantissa as decimal digits, as {@link toJSON} writes it). */
  set(slot: number, mant: string, exp: number): void {
    const n = Number(mant);
    const safe = Number.isSafeInteger(n);
    this.fastMant[slot] = safe ? n : 0;
    this.setBig(slot, safe ? undefined : BigInt(mant));
    this.exp[slot] = exp;
  }

  /**
   * Adds `String(v)` to a slot, exactly, as {@link add} would; the text is made only when
   * {@link floatToSafe} cannot tell its digits from v (a trade size of a columnar batch whose
   * exact text is the float's own).
   */
  addFloat(slot: number, v: number): void {
    if (this.bigOf(slot) === undefined && floatToSafe(v) && this.addSafe(slot, floatMant, floatExp)) return;
    this.add(slot, String(v));
  }

  /** Adds `mant * 10^exp` (a safe integer mantissa) to a slot without BigInt; false when the sum would not stay safe. */
  private addSafe(slot: number, mant: number, exp: number): boolean {
    if (mant === 0) return true;
    const cur = this.exp[slot];
    const held = this.fastMant[slot];
    const r = exp >= cur ? scaledAdd(mant, exp - cur, held) : scaledAdd(held, cur - exp, mant);
    if (Number.isNaN(r)) return false;
    this.fastMant[slot] = r;
    if (exp < cur) this.exp[slot] = exp;
    return true;
  }

  /** Adds the decimal text `text` (as {@link parseDec} keeps it) to a slot, exactly. */
  add(slot: number, text: string): void {
    if (this.bigOf(slot) === undefined && decimalToSafe(text) && this.addSafe(slot, safeMant, safeExp)) return;
    // Beyond a safe integer, or an unusual text (exponent): in BigInt arithmetic.
    const [mant, exp] = decimalToScaled(text);
    this.addSigned(slot, mant, exp, false);
  }

  /**
   * Adds `mant * 10^exp` (`mant` a non-negative safe integer or a BigInt), or with `negative`
   * subtracts it, exactly: a running total that values enter and leave. The mantissa goes back to
   * a float64 when it is a safe integer again, and a total back at zero forgets its exponent.
   */
  addSigned(slot: number, mant: number | bigint, exp: number, negative: boolean): void {
    if (mant === 0 || mant === 0n) return;
    if (typeof mant === 'number') {
      if (this.bigOf(slot) === undefined && this.addSafe(slot, negative ? -mant : mant, exp)) {
        if (this.fastMant[slot] === 0) this.exp[slot] = 0;
        return;
      }
      mant = BigInt(mant);
    }
    const cur = this.exp[slot];
    const held = this.bigOf(slot) ?? BigInt(this.fastMant[slot]);
    const m = negative ? -mant : mant;
    let next: bigint;
    if (exp >= cur) next = held + m * TEN ** BigInt(exp - cur);
    else {
      next = held * TEN ** BigInt(cur - exp) + m;
      this.exp[slot] = exp;
    }
    const n = Number(next);
    if (Number.isSafeInteger(n)) {
      this.fastMant[slot] = n;
      this.setBig(slot, undefined);
      if (n === 0) this.exp[slot] = 0;
    } else {
      this.fastMant[slot] = 0;
      this.setBig(slot, next);
    }
  }

  /** Slots held. */
  get length(): number {
    return this.exp.length;
  }

  /** The exact mantissa of a slot: a number while it is a safe integer, else a BigInt. */
  mantissaOf(slot: number): number | bigint {
    return this.bigOf(slot) ?? this.fastMant[slot];
  }

  /** The exact mantissa of a slot (0n for an empty one). */
  mantissa(slot: number): bigint {
    return this.bigOf(slot) ?? BigInt(this.fastMant[slot]);
  }

  /** The base-10 exponent of a slot. */
  exponent(slot: number): number {
    return this.exp[slot];
  }

  /** Adds a slot's sum to `total` ({@link addScaled}). */
  addTo(total: ScaledSum, slot: number): void {
    if (this.fastMant[slot] === 0 && this.bigOf(slot) === undefined) return;
    addScaled(total, this.mantissa(slot), this.exp[slot]);
  }

  /** Plain-JSON state of the first `n` slots (default all). */
  toJSON(n = this.exp.length): ExactSumsJSON {
    const mant: string[] = new Array<string>(n);
    for (let i = 0; i < n; i++) mant[i] = (this.bigOf(i) ?? this.fastMant[i]).toString();
    return { mant, exp: Array.from(this.exp.subarray(0, n)) };
  }

  /** Restores {@link toJSON} output. */
  static fromJSON(j: ExactSumsJSON): ExactSums {
    const s = new ExactSums(j.mant.length);
    for (let i = 0; i < j.mant.length; i++) s.set(i, j.mant[i], j.exp[i]);
    return s;
  }
}
