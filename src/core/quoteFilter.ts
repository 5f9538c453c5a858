/**
 * Rule 5, the spread filter: a quote is accepted iff 0 <= (ask - bid) / ((ask + bid) / 2) <= maxSpread.
 *
 * Both ends are inclusive (a locked book, bid = ask, is kept; a crossed one, ask < bid, is not),
 * and the decision is exact on the parsed decimals (docs/methodology.md section 7): a float test decides
 * every quote that is clearly inside or outside, and the few within 1e-12 of the boundary are
 * decided on the exact decimal texts. Dividing is avoided: spread <= s  <=>  2(ask - bid) <= s(ask + bid)
 * for positive prices.
 *
 * @module
 */
import { ExactDecimal } from './decimal.js';
import type { Dec } from './types.js';

/** Relative band around the boundary inside which the float test defers to exact arithmetic. */
const NEAR = 1e-12;

/**
 * Spread of a quote as a fraction of its midpoint (for provenance and display; never for decisions).
 *
 * @example spreadOf(99, 101) // 0.02
 */
export function spreadOf(bid: number, ask: number): number {
  return (ask - bid) / ((ask + bid) / 2);
}

/**
 * Exact rule-5 decision on decimal texts. Prices must be positive (the event parser guarantees it).
 *
 * @example spreadAcceptedExact('133', '267', '0.67') // true: (267-133)/200 = 0.67 exactly
 */
export function spreadAcceptedExact(bidText: string, askText: string, maxSpreadText: string): boolean {
  const bid = new ExactDecimal(bidText);
  const ask = new ExactDecimal(askText);
  if (ask.lt(bid)) return false;
  return ask
    .minus(bid)
    .times(2)
    .lte(new ExactDecimal(maxSpreadText).times(ask.plus(bid)));
}

/**
 * Rule 5 on parsed decimals: a fast float decision with an exact fall-back near the boundary.
 *
 * @param maxSpreadValue - float value of `maxSpreadText` (passed in to keep the hot path free of parsing)
 * @example
 * ```ts
 * // spread exactly 0.67: (267 - 133) / ((267 + 133) / 2) = 134 / 200
 * spreadAccepted({ value: 133, text: '133' }, { value: 267, text: '267' }, '0.67', 0.67); // true
 * ```
 */
export function spreadAccepted(bid: Dec, ask: Dec, maxSpreadText: string, maxSpreadValue: number): boolean {
  const b = bid.value;
  const a = ask.value;
  if (a === b && bid.text === ask.text) return true; // locked book, same text: spread exactly 0
  const d = spreadFloatDecision(b, a, maxSpreadValue);
  return d === SPREAD_EXACT ? spreadAcceptedExact(bid.text, ask.text, maxSpreadText) : d === SPREAD_ACCEPTED;
}

/** {@link spreadFloatDecision}: accepted. */
export const SPREAD_ACCEPTED = 1;
/** {@link spreadFloatDecision}: discarded. */
export const SPREAD_DISCARDED = 0;
/** {@link spreadFloatDecision}: too near the boundary (or a locked book), the exact texts decide. */
export const SPREAD_EXACT = -1;

/**
 * Rule 5's float test on the values of a quote's bid and ask (see {@link spreadAccepted}, which
 * decides {@link SPREAD_EXACT} on the exact texts; a locked book, bid = ask as floats, is
 * {@link SPREAD_EXACT}: accepted at once when both texts are the same).
 */
export function spreadFloatDecision(b: number, a: number, maxSpreadValue: number): number {
  // Float parsing is monotone: a < b as floats implies a < b exactly (crossed book).
  if (a < b) return SPREAD_DISCARDED;
  const lhs = 2 * (a - b);
  const rhs = maxSpreadValue * (a + b);
  const diff = lhs - rhs;
  const scale = NEAR * (lhs + rhs);
  if (a > b && diff < -scale) return SPREAD_ACCEPTED;
  if (diff > scale) return SPREAD_DISCARDED;
  return SPREAD_EXACT;
}
