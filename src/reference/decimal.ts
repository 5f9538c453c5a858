/**
 * The arithmetic of the reference implementation (docs/methodology.md section 7).
 *
 * `D` is a private clone of decimal.js with 200 significant digits and banker's
 * rounding. At that precision every sum and product of the parsed inputs the
 * engine sees is exact; only divisions and square roots round (at the 200th
 * digit), far below the 1e-9 relative tolerance the property tests use.
 *
 * @module
 */
import { Decimal } from 'decimal.js';

/** decimal.js clone used by every reference computation: precision 200, ROUND_HALF_EVEN. */
export const D = Decimal.clone({ precision: 200, rounding: Decimal.ROUND_HALF_EVEN });

/** A numeric input of the reference: a decimal string (parsed exactly), a number or a Decimal. */
export type RefNum = string | number | Decimal;

/**
 * Converts an input to a {@link D} decimal. Numbers go through `String(n)` (the shortest
 * round-trip text, so `0.1` becomes exactly 0.1); strings are parsed exactly.
 *
 * @throws RangeError if the value is not a finite number.
 */
export function toD(x: RefNum): Decimal {
  const d = typeof x === 'number' ? new D(String(x)) : new D(x);
  if (!d.isFinite()) throw new RangeError(`reference: not a finite number: ${String(x)}`);
  return d;
}

/** Sum of decimals (exact at precision 200 for engine-sized inputs). */
export function sum(xs: readonly Decimal[]): Decimal {
  let s = new D(0);
  for (const x of xs) s = s.plus(x);
  return s;
}
