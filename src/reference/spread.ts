/**
 * Rule 5, the spread filter (docs/methodology.md section 3).
 *
 * @module
 */
import { type RefNum, toD } from './decimal.js';

/**
 * Rule 5: is a quote's spread acceptable?
 *
 * spreadPrc = (ask - bid) / ((ask + bid) / 2); the quote is accepted iff
 * 0 <= spreadPrc <= maxSpread, both ends inclusive (a locked book bid = ask is kept,
 * a crossed book bid > ask is not, spread exactly `maxSpread` is kept).
 *
 * The decision is exact, without division. With ask + bid > 0:
 * spreadPrc >= 0  <=>  ask - bid >= 0, and
 * spreadPrc <= max <=> 2 (ask - bid) / (ask + bid) <= max <=> 2 (ask - bid) <= max (ask + bid)
 * (multiplying by the positive ask + bid keeps the direction).
 *
 * Prices are > 0 in valid input (section 1). If ask + bid <= 0 the spread is undefined
 * (or its sign meaningless) and the quote is rejected.
 *
 * @param bid best bid price
 * @param ask best ask price
 * @param maxSpread upper bound of spreadPrc, inclusive (default `'0.67'`)
 * @returns true iff the quote passes rule 5
 */
export function refSpreadOk(bid: RefNum, ask: RefNum, maxSpread: RefNum = '0.67'): boolean {
  const b = toD(bid);
  const a = toD(ask);
  const max = toD(maxSpread);
  const total = a.plus(b);
  if (total.lte(0)) return false;
  const diff = a.minus(b);
  if (diff.lt(0)) return false; // crossed book: spreadPrc < 0
  return diff.times(2).lte(max.times(total));
}
