/**
 * The pair rate: rules 6 (weights, q = 0 fallback), 11 (outliers) and 1 (weighted mean),
 * docs/methodology.md section 3, applied to markets that already passed rules 3, 4, 5, 7, 8 and 9.
 *
 * Every outlier decision is exact: it is made on squares of exact sums and products, never
 * on a rounded quotient or square root. Products and sums at {@link D}'s 200 digits are exact
 * as long as the digits of the operands span fewer than about 200 places, which holds with a
 * wide margin for prices, sizes and volumes of up to ~30 significant digits each.
 *
 * @module
 */
import type { Decimal } from 'decimal.js';
import { D, sum, toD } from './decimal.js';
import { type RefMarket, type RefWeighting, refMarketPriceWeight, refWeightedMean } from './weight.js';

/** Outlier option of rule 11. `'weighted_sigma'` (the literal rule) is the default. */
export type RefOutliers = 'weighted_sigma' | 'leave_one_out' | 'mad' | 'none';

/** Options of {@link refPairRate}; every default is the methodology's. */
export interface RefPairOptions {
  /** Rule 6 weighting, default `'trade_x_passive'` (w = V * q). */
  readonly weighting?: RefWeighting;
  /** Rule 11 method, default `'weighted_sigma'`. */
  readonly outliers?: RefOutliers;
  /** k in |p - mu| > k sigma (rule 11), default 3. Must be >= 0. */
  readonly sigmas?: number;
  /** The outlier rule runs only with n >= minMarkets markets, default 3. */
  readonly minMarkets?: number;
}

/** Outcome of {@link refPairRate}. Arrays `weights` and `prices` are indexed like the input. */
export interface RefPairResult {
  /** Rule 1: sum(w p) / sum(w) over the markets kept. */
  readonly rate: Decimal;
  /** Indices (into the input) of the markets kept, ascending. */
  readonly used: number[];
  /** Indices of the markets dropped as outliers, ascending. */
  readonly dropped: number[];
  /**
   * Centre of the outlier test, only when the test ran (n >= minMarkets):
   * `'weighted_sigma'` the weighted mean of all n markets; `'mad'` the median.
   * Absent for `'leave_one_out'` (each market has its own) and `'none'`.
   */
  readonly mu?: Decimal;
  /**
   * Spread of the outlier test, only when the test ran: `'weighted_sigma'` the weighted
   * population standard deviation of all n markets; `'mad'` the scaled MAD 1.4826 * MAD.
   * Absent for `'leave_one_out'` and `'none'`.
   */
  readonly sigma?: Decimal;
  /** True iff some market has q = 0, so every market was weighted w = V (rule 6). */
  readonly fallback: boolean;
  /** w of every input market (after the q = 0 fallback). */
  readonly weights: Decimal[];
  /** p of every input market. */
  readonly prices: Decimal[];
}

/** MAD scale factor of rule 11's `'mad'` option (consistency constant for a normal law). */
export const MAD_SCALE = '1.4826';

interface OutlierOutcome {
  readonly drop: boolean[];
  readonly mu?: Decimal;
  readonly sigma?: Decimal;
}

/** W = sum(w), S = sum(w p), Q = sum(w p^2), all exact. */
function moments(prices: readonly Decimal[], weights: readonly Decimal[]): { W: Decimal; S: Decimal; Q: Decimal } {
  return {
    W: sum(weights),
    S: sum(prices.map((p, i) => weights[i].times(p))),
    Q: sum(prices.map((p, i) => weights[i].times(p).times(p))),
  };
}

/**
 * Is p farther than k sigma from the weighted mean of a set with moments W > 0, S, Q?
 *
 * Claim: |p - mu| > k sigma  <=>  (p W - S)^2 > k^2 (W Q - S^2), for W > 0 and k >= 0,
 * where mu = S / W and sigma = sqrt(sum(w (p_j - mu)^2) / W).
 *
 * Proof. Expand the variance:
 *   sum(w (p_j - mu)^2) = Q - 2 mu S + mu^2 W = Q - 2 S^2 / W + S^2 / W = Q - S^2 / W,
 * so sigma^2 = (Q - S^2 / W) / W = (W Q - S^2) / W^2 (and W Q - S^2 >= 0, being W^2 sigma^2).
 * Both |p - mu| and k sigma are >= 0, and squaring is strictly increasing on [0, inf), so
 *   |p - mu| > k sigma  <=>  (p - mu)^2 > k^2 sigma^2
 *                       <=>  (p W - S)^2 / W^2 > k^2 (W Q - S^2) / W^2     (p - mu = (p W - S) / W)
 *                       <=>  (p W - S)^2 > k^2 (W Q - S^2)                  (multiply by W^2 > 0).
 * Only sums and products remain, so the comparison is exact, boundary included. QED.
 */
function beyondKSigma(p: Decimal, W: Decimal, S: Decimal, Q: Decimal, k2: Decimal): boolean {
  const dev = p.times(W).minus(S);
  return dev.times(dev).gt(k2.times(W.times(Q).minus(S.times(S))));
}

/** Rule 11 literal: weighted mean and population sigma of all n markets, one pass. */
function weightedSigma(prices: readonly Decimal[], weights: readonly Decimal[], k: Decimal): OutlierOutcome {
  const { W, S, Q } = moments(prices, weights);
  const k2 = k.times(k);
  const drop = prices.map((p) => beyondKSigma(p, W, S, Q, k2));
  // For provenance only (rounded at 200 digits): mu = S / W, sigma = sqrt(W Q - S^2) / W.
  return { drop, mu: S.div(W), sigma: W.times(Q).minus(S.times(S)).sqrt().div(W) };
}

/**
 * Rule 11 option `'leave_one_out'`: market i is compared with the weighted mean and sigma of
 * the OTHER markets (same weights), |p_i - mu_i| > k sigma_i, decided exactly as in
 * {@link beyondKSigma}. Every decision is made against the original set, once.
 * Decision: if the other markets weigh nothing (sum of their w = 0), mu_i is undefined and
 * market i is kept.
 */
function leaveOneOut(prices: readonly Decimal[], weights: readonly Decimal[], k: Decimal): OutlierOutcome {
  const k2 = k.times(k);
  const drop = prices.map((p, i) => {
    const otherP = prices.filter((_, j) => j !== i);
    const otherW = weights.filter((_, j) => j !== i);
    const { W, S, Q } = moments(otherP, otherW);
    if (W.isZero()) return false;
    return beyondKSigma(p, W, S, Q, k2);
  });
  return { drop };
}

/** Median, unweighted; for an even count the mean of the two middle values (exact: a halving). */
function median(xs: readonly Decimal[]): Decimal {
  const s = [...xs].sort((a, b) => a.comparedTo(b));
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : s[mid - 1].plus(s[mid]).div(2);
}

/**
 * Rule 11 option `'mad'`: med = median(p) (unweighted), MAD = median(|p - med|), and a market
 * is dropped iff |p - med| > k * 1.4826 * MAD (strict). Everything here is exact (sums,
 * products, halvings). Literal reading kept on purpose: when MAD = 0 (more than half the
 * prices equal the median) the threshold is 0 and EVERY price different from the median is
 * dropped, however close.
 */
function madRule(prices: readonly Decimal[], k: Decimal): OutlierOutcome {
  const med = median(prices);
  const absDev = prices.map((p) => p.minus(med).abs());
  const scaled = median(absDev).times(MAD_SCALE);
  const threshold = k.times(scaled);
  return { drop: absDev.map((d) => d.gt(threshold)), mu: med, sigma: scaled };
}

/**
 * The rate of one pair at one tick: rules 6, 11 and 1 (docs/methodology.md sections 2 and 4).
 *
 * The input markets are those that already passed rules 3, 4, 5, 7, 8 and 9.
 *
 * 1. Rule 6: p, q, w of each market ({@link refMarketPriceWeight}). If ANY market has
 *    q = 0, EVERY market is weighted w = V, for rule 11 too, whatever the weighting option
 *    (it changes nothing for `'trade'` and `'microprice'`, whose w is already V, but
 *    `fallback` is still true, since the provenance must say a size was unknown).
 * 2. If sum(w) over all markets is 0, there is no rate: `undefined`.
 * 3. Rule 11 with n >= minMarkets (default 3), one pass, all decisions against the original
 *    set: `'weighted_sigma'` drops |p - mu| > k sigma (strict) with the weighted mean and
 *    population sigma; `'leave_one_out'` uses mu and sigma of the other markets;
 *    `'mad'` drops |p - median| > k * 1.4826 * MAD; `'none'` drops nothing.
 *    With n < minMarkets nothing is dropped.
 * 4. Rule 1: rate = sum(w p) / sum(w) over the markets kept; `undefined` if they weigh
 *    nothing (all dropped, which `'weighted_sigma'` cannot do but the options can).
 *
 * @throws RangeError on a negative weight, sigmas < 0 or not
 *   finite, or a non-integer minMarkets.
 */
export function refPairRate(markets: readonly RefMarket[], opts: RefPairOptions = {}): RefPairResult | undefined {
  const weighting = opts.weighting ?? 'trade_x_passive';
  const outliers = opts.outliers ?? 'weighted_sigma';
  const sigmas = opts.sigmas ?? 3;
  const minMarkets = opts.minMarkets ?? 3;
  if (!Number.isFinite(sigmas) || sigmas < 0) throw new RangeError(`reference: sigmas must be >= 0, got ${sigmas}`);
  if (!Number.isInteger(minMarkets)) throw new RangeError(`reference: minMarkets must be an integer, got ${minMarkets}`);
  const k = new D(String(sigmas));

  const n = markets.length;
  if (n === 0) return undefined;

  // Rule 6, with the pair-level q = 0 fallback.
  const pqw = markets.map((m) => refMarketPriceWeight(m, weighting));
  const fallback = pqw.some((x) => x.q.isZero());
  const prices = pqw.map((x) => x.p);
  const weights = fallback ? markets.map((m) => toD(m.volume)) : pqw.map((x) => x.w);
  for (const w of weights) {
    if (w.lt(0)) throw new RangeError(`reference: negative weight ${w.toString()}`);
  }
  if (sum(weights).isZero()) return undefined;

  // Rule 11.
  let outcome: OutlierOutcome = { drop: prices.map(() => false) };
  if (n >= minMarkets) {
    switch (outliers) {
      case 'weighted_sigma':
        outcome = weightedSigma(prices, weights, k);
        break;
      case 'leave_one_out':
        outcome = leaveOneOut(prices, weights, k);
        break;
      case 'mad':
        outcome = madRule(prices, k);
        break;
      case 'none':
        break;
      default: {
        const never: never = outliers;
        throw new RangeError(`reference: unknown outlier option ${String(never)}`);
      }
    }
  }
  const used: number[] = [];
  const dropped: number[] = [];
  outcome.drop.forEach((d, i) => {
    (d ? dropped : used).push(i);
  });

  // Rule 1.
  const rate = refWeightedMean(
    used.map((i) => prices[i]),
    used.map((i) => weights[i]),
  );
  if (rate === undefined) return undefined;

  const result: RefPairResult = { rate, used, dropped, fallback, weights, prices };
  if (outcome.mu !== undefined) return { ...result, mu: outcome.mu, sigma: outcome.sigma };
  return result;
}
