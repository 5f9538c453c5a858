/**
 * JSON number literals on UTF-8 bytes, for the byte readers (ndjsonBytes.ts): a literal's value
 * computed from its digits where that is exact, and whether its text is the one `String` gives.
 *
 * @module
 */ // biome-ignore-all lint/suspicious/noAssignInExpressions: the number scanner reads each byte once, in the loop condition

const latin1 = new TextDecoder('latin1');

const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];
const TWO_53 = 2 ** 53;

/** Where the literal read by the last {@link jsonNumberFrom} ended. */
export let numberEnd = 0;

/**
 * The value of the JSON number literal b[from, to) (`Number` of its text), or NaN when it is not
 * one: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?
 */
export function jsonNumberAt(b: Uint8Array, from: number, to: number): number {
  const v = jsonNumberFrom(b, from, to);
  return numberEnd === to ? v : Number.NaN;
}

/**
 * The value of the longest JSON number literal at b[from] (within `to`), its end in
 * {@link numberEnd}; NaN when no literal starts there, or when one stops short of its digits
 * (`1.`, `1e`, `-`).
 */
export function jsonNumberFrom(b: Uint8Array, from: number, to: number): number {
  let i = from;
  const neg = b[i] === 45;
  if (neg) i++;
  if (i >= to) return Number.NaN;
  let m = 0;
  let exact = true;
  let c = b[i];
  if (c === 48) i++;
  else if (c >= 49 && c <= 57) {
    while (i < to && (c = b[i]) >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      i++;
    }
    if (m >= TWO_53) exact = false;
  } else return Number.NaN;
  let scale = 0;
  if (i < to && b[i] === 46) {
    i++;
    const start = i;
    while (i < to && (c = b[i]) >= 48 && c <= 57) {
      if (exact) {
        m = m * 10 + (c - 48);
        if (m >= TWO_53) exact = false;
      }
      i++;
    }
    if (i === start) return Number.NaN;
    scale = i - start;
  }
  if (i < to && ((c = b[i]) === 101 || c === 69)) {
    i++;
    let eneg = false;
    if (i < to && ((c = b[i]) === 43 || c === 45)) {
      eneg = c === 45;
      i++;
    }
    const start = i;
    let e = 0;
    while (i < to && (c = b[i]) >= 48 && c <= 57) {
      if (e < 100_000) e = e * 10 + (c - 48);
      i++;
    }
    if (i === start) return Number.NaN;
    scale -= eneg ? -e : e;
  }
  numberEnd = i;
  let v: number;
  if (exact && scale >= -22 && scale <= 22) v = scale >= 0 ? m / POW10[scale] : m * POW10[-scale];
  else v = Number(latin1.decode(b.subarray(neg ? from + 1 : from, i)));
  return neg ? -v : v;
}

/**
 * Whether the literal b[from, to), whose value is `v` (finite, not 0), is `String(v)`: the plain
 * forms checked without formatting (as fastNdjson.ts' `numberDec`): no exponent, at most 15
 * characters, no trailing fractional zero, not below 1e-6.
 */
export function isPlain(b: Uint8Array, from: number, to: number, v: number): boolean {
  if (to - from > 15 || !(v >= 1e-6 || v <= -1e-6)) return false;
  let dot = false;
  for (let k = from; k < to; k++) {
    const c = b[k];
    if (c === 101 || c === 69) return false;
    if (c === 46) dot = true;
  }
  return !(dot && b[to - 1] === 48);
}
