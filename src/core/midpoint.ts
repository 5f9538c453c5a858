/**
 * Rule 6, price reference and weight of one market.
 *
 * The market's price is the midpoint of its latest accepted quote, p = (bid + ask) / 2; its passive
 * volume is the size resting at the best prices, q = bid_size + ask_size (base units); its trade
 * volume V is the 24-hour traded base volume at the last eligibility refresh (rule 8). The weight
 * depends on the {@link Weighting} option. A size of 0 means "unknown": if any market of a pair
 * has q = 0 at a tick, the whole pair falls back to w = V ({@link PASSIVE_WEIGHTINGS}).
 *
 * @module
 */
import type { Weighting } from './config.js';

/**
 * Midpoint of a quote.
 * @example midpoint(99, 101) // 100
 */
export function midpoint(bid: number, ask: number): number {
  return (bid + ask) / 2;
}

/**
 * Passive volume q = bid_size + ask_size.
 * @example passiveVolume(1.5, 2) // 3.5
 */
export function passiveVolume(bidSize: number, askSize: number): number {
  return bidSize + askSize;
}

/**
 * Size-weighted mid (bid * ask_size + ask * bid_size) / (bid_size + ask_size); the plain midpoint
 * when both sizes are 0 (unknown).
 * @example microprice(99, 101, 3, 1) // 100.5: more size on the bid pushes the price toward the ask
 */
export function microprice(bid: number, ask: number, bidSize: number, askSize: number): number {
  const s = bidSize + askSize;
  return s > 0 ? (bid * askSize + ask * bidSize) / s : (bid + ask) / 2;
}

/**
 * Price of a market under a weighting option: the microprice for `microprice`, else the midpoint.
 * @example marketPrice('trade_x_passive', 99, 101, 1, 1) // 100
 */
export function marketPrice(weighting: Weighting, bid: number, ask: number, bidSize: number, askSize: number): number {
  return weighting === 'microprice' ? microprice(bid, ask, bidSize, askSize) : (bid + ask) / 2;
}

/** Weightings whose weight uses q, and so fall back to w = V when a market of the pair has q = 0. */
export const PASSIVE_WEIGHTINGS: ReadonlySet<Weighting> = new Set<Weighting>(['trade_x_passive', 'passive']);

/**
 * Weight of a market before the pair-wide q = 0 fall-back: V*q, V, q or V (microprice).
 * @example marketWeight('trade_x_passive', 10, 2) // 20
 */
export function marketWeight(weighting: Weighting, volume: number, q: number): number {
  switch (weighting) {
    case 'trade_x_passive':
      return volume * q;
    case 'passive':
      return q;
    default:
      return volume;
  }
}
