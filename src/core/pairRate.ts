/**
 * Rules 6, 11 and 1 for one pair at one tick: weights, outliers, then the weighted mean.
 *
 * The caller (the engine) has already applied rules 3, 4, 5, 7, 8 and 9 and placed the surviving
 * markets in a {@link PairScratch}: price p, passive volume q, trade volume V, quote time and
 * rank per slot. This module forms the weights (with the pair-wide q = 0 fall-back of rule 6),
 * removes outliers (rule 11) and returns rate = sum(w p) / sum(w) over the markets left (rule 1),
 * whose time is the newest quote time among them.
 *
 * @module
 */
import type { ResolvedConfig } from './config.js';
import { marketWeight, PASSIVE_WEIGHTINGS } from './midpoint.js';
import { removeOutliers, type ExactPriceWeight, type OutlierStats } from './outliers.js';

/**
 * Reusable typed-array columns for the markets of one pair (no allocation per tick).
 */
export class PairScratch {
  capacity = 0;
  market = new Int32Array(0);
  p = new Float64Array(0);
  q = new Float64Array(0);
  v = new Float64Array(0);
  w = new Float64Array(0);
  t = new Float64Array(0);
  /** Exchange rank of each candidate (rule 9). */
  rank = new Float64Array(0);
  keep = new Uint8Array(0);
  idx = new Int32Array(0);
  /** Set by {@link computePairRate}: the q = 0 fall-back is in force, every weight is V. */
  useVolume = false;
  /** Result of the last {@link computePairRateInto} (valid when it returned true). */
  rate = 0;
  time = 0;
  used = 0;
  volume = 0;
  /** Sum of the weights w of the markets used (the denominator of the weighted mean). */
  weightSum = 0;
  fallback = false;
  stats: OutlierStats | undefined;

  /** Makes room for `n` slots. */
  ensure(n: number): void {
    if (n <= this.capacity) return;
    let cap = Math.max(8, this.capacity);
    while (cap < n) cap *= 2;
    this.capacity = cap;
    this.market = new Int32Array(cap);
    this.p = new Float64Array(cap);
    this.q = new Float64Array(cap);
    this.v = new Float64Array(cap);
    this.w = new Float64Array(cap);
    this.t = new Float64Array(cap);
    this.rank = new Float64Array(cap);
    this.keep = new Uint8Array(cap);
    this.idx = new Int32Array(cap);
  }
}

/** Result of {@link computePairRate}. */
export interface PairResult {
  /** The pair rate (rule 1). */
  rate: number;
  /** Newest quote time among the markets used, µs. */
  time: number;
  /** Markets used after outlier removal. */
  used: number;
  /** Sum of V over the markets used (the pair's traded volume, used by the layered cross method). */
  volume: number;
  /** Whether the q = 0 fall-back (w = V) was in force. */
  fallback: boolean;
  /** Outlier statistics, when the rule ran. */
  stats: OutlierStats | undefined;
}

/**
 * Computes a pair's rate from `n` candidate slots of `s`. Returns undefined when the weights sum
 * to 0 (cannot happen for eligible markets, whose V > 0, but kept total).
 *
 * @example
 * ```ts
 * const s = new PairScratch(); s.ensure(2);
 * s.p.set([100, 102]); s.q.set([1, 1]); s.v.set([3, 1]); s.t.set([5, 7]);
 * computePairRate(s, 2, resolveConfig())?.rate; // (3*100 + 1*102) / 4 = 100.5
 * ```
 */
export function computePairRate(s: PairScratch, n: number, cfg: ResolvedConfig, exact?: ExactPriceWeight): PairResult | undefined {
  if (!computePairRateInto(s, n, cfg, exact)) return undefined;
  return { rate: s.rate, time: s.time, used: s.used, volume: s.volume, fallback: s.fallback, stats: s.stats };
}

/**
 * {@link computePairRate} without allocating: the result is left in `s.rate`, `s.time`,
 * `s.used`, `s.volume`, `s.weightSum`, `s.fallback` and `s.stats`. Returns false when there is no rate.
 */
export function computePairRateInto(s: PairScratch, n: number, cfg: ResolvedConfig, exact?: ExactPriceWeight): boolean {
  if (n === 0) return false;
  let fallback = false;
  for (let j = 0; j < n; j++) {
    if (s.q[j] === 0) {
      fallback = true;
      break;
    }
  }
  const useV = fallback && PASSIVE_WEIGHTINGS.has(cfg.weighting);
  s.useVolume = useV;
  for (let j = 0; j < n; j++) {
    s.w[j] = useV ? s.v[j] : marketWeight(cfg.weighting, s.v[j], s.q[j]);
    s.keep[j] = 1;
    s.idx[j] = j;
  }
  const stats = removeOutliers(cfg.outliers, s.p, s.w, s.idx, n, s.keep, cfg.outlierSigmas, cfg.outlierMinMarkets, exact);
  let W = 0;
  let S = 0;
  let used = 0;
  let time = -Infinity;
  let volume = 0;
  for (let j = 0; j < n; j++) {
    if (!s.keep[j]) continue;
    W += s.w[j];
    S += s.w[j] * s.p[j];
    used++;
    volume += s.v[j];
    if (s.t[j] > time) time = s.t[j];
  }
  if (!(W > 0)) return false;
  // One market: the weighted mean is its price, exactly (S / W could be an ulp off).
  if (used === 1) {
    for (let j = 0; j < n; j++) if (s.keep[j]) s.rate = s.p[j];
  } else s.rate = S / W;
  s.time = time;
  s.used = used;
  s.volume = volume;
  s.weightSum = W;
  s.fallback = fallback;
  s.stats = stats;
  return true;
}
