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
