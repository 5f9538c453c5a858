/**
 * Rule 6, a market's price reference and weight (docs/methodology.md section 3), and the
 * weighted mean of rule 1.
 *
 * @module
 */
import type { Decimal } from 'decimal.js';
import { type RefNum, sum, toD } from './decimal.js';

/** Weighting option of rule 6. `'trade_x_passive'` is the default. */
export type RefWeighting = 'trade_x_passive' | 'trade' | 'passive' | 'microprice';

/**
 * One contributing market as the reference sees it: its latest accepted quote (top of
 * book) and V, its traded base volume over the 24 h before the last refresh (rule 8).
 */
export interface RefMarket {
  readonly bid: RefNum;
  readonly ask: RefNum;
  readonly bidSize: RefNum;
  readonly askSize: RefNum;
  /** V: 24 h traded base volume at the last eligibility refresh. */
  readonly volume: RefNum;
}

/** Price reference p, passive volume q and weight w of one market (rule 6). */
export interface RefPriceWeight {
  readonly p: Decimal;
  readonly q: Decimal;
  readonly w: Decimal;
}

/**
 * Rule 6: price reference p, passive volume q and weight w of one market.
 *
 * - p = (bid + ask) / 2, the midpoint (exact: halving a decimal terminates)
 * - q = bidSize + askSize (base units)
 * - w by weighting: `'trade_x_passive'` w = V * q (default); `'trade'` w = V;
 *   `'passive'` w = q; `'microprice'` p = (bid * askSize + ask * bidSize) / (bidSize + askSize)
 *   and w = V. When bidSize + askSize = 0 the microprice is undefined and p is the midpoint.
 *
 * This is one market alone: the pair-level q = 0 fallback (all markets use w = V) is
 * applied by {@link refPairRate}.
 */
export function refMarketPriceWeight(m: RefMarket, weighting: RefWeighting = 'trade_x_passive'): RefPriceWeight {
  const bid = toD(m.bid);
  const ask = toD(m.ask);
  const bidSize = toD(m.bidSize);
  const askSize = toD(m.askSize);
  const v = toD(m.volume);
  const q = bidSize.plus(askSize);
  const mid = bid.plus(ask).div(2);
  switch (weighting) {
    case 'trade_x_passive':
      return { p: mid, q, w: v.times(q) };
    case 'trade':
      return { p: mid, q, w: v };
    case 'passive':
      return { p: mid, q, w: q };
    case 'microprice': {
      const p = q.isZero() ? mid : bid.times(askSize).plus(ask.times(bidSize)).div(q);
      return { p, q, w: v };
    }
    default: {
      const never: never = weighting;
      throw new RangeError(`reference: unknown weighting ${String(never)}`);
    }
  }
}

/**
 * Rule 1's weighted mean: sum(w p) / sum(w).
 *
 * @returns the mean, or `undefined` when sum(w) = 0 (no weight, no rate)
 * @throws RangeError if the arrays differ in length
 */
export function refWeightedMean(prices: readonly RefNum[], weights: readonly RefNum[]): Decimal | undefined {
  if (prices.length !== weights.length) {
    throw new RangeError(`reference: ${prices.length} prices but ${weights.length} weights`);
  }
  const w = weights.map(toD);
  const sw = sum(w);
  if (sw.isZero()) return undefined;
  const swp = sum(prices.map((p, i) => toD(p).times(w[i])));
  return swp.div(sw);
}
