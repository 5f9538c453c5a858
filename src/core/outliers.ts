/**
 * Rule 11, outlier removal, on the fast path (float64 columns) with an exact fall-back.
 *
 * Default `weighted_sigma`, with n >= minMarkets markets: mu = sum(w p) / sum(w),
 * sigma = sqrt(sum(w (p - mu)^2) / sum(w)) (weighted, population); a market with |p - mu| > k sigma
 * (strict) is dropped, once. The comparison is made on squares, (p - mu)^2 > k^2 var, and when the
 * two sides agree to 1e-9 the decision is re-made exactly on decimals: with W = sum w, S = sum w p,
 * Q = sum w p^2 it reads (p W - S)^2 > k^2 (W Q - S^2), which needs no division or square root.
 * This decides, for example, the equal-weight case n = 10 where one market sits exactly at 3 sigma
 * (kept). Options: `leave_one_out` compares each market to mu and sigma of the others; `mad` drops
 * |p - median| > k * 1.4826 * MAD (unweighted median, mean of the middle two for even n).
 *
 * @module
 */
import type { Decimal } from 'decimal.js';
import type { OutlierMethod } from './config.js';
import { ExactDecimal } from './decimal.js';

/** Scale factor that makes the MAD a consistent estimator of sigma for normal data. */
export const MAD_SCALE = 1.4826;
/** Relative band inside which a float comparison defers to exact arithmetic. */
const NEAR = 1e-9;

/** Exact price and weight of the i-th market, for the fall-back near a boundary. */
export type ExactPriceWeight = (i: number) => { p: Decimal; w: Decimal };

/** Statistics of one outlier pass, for provenance. */
export interface OutlierStats {
  method: OutlierMethod;
  /** Centre used: weighted mean (weighted_sigma) or median (mad); NaN for leave_one_out / none. */
  centre: number;
  /** Spread used: weighted sigma, or 1.4826 * MAD; NaN for leave_one_out / none. */
  scale: number;
  /** Markets dropped. */
  dropped: number;
  /** Whether any decision was made on exact decimals. */
  exact: boolean;
}

function exactWeightedSigmaOutlier(i: number, n: number, k: number, keepIdx: Int32Array, exact: ExactPriceWeight): boolean {
  let W = new ExactDecimal(0);
  let S = new ExactDecimal(0);
  let Q = new ExactDecimal(0);
  for (let j = 0; j < n; j++) {
    const { p, w } = exact(keepIdx[j]);
    W = W.plus(w);
    const wp = w.times(p);
    S = S.plus(wp);
    Q = Q.plus(wp.times(p));
  }
  const pi = exact(keepIdx[i]).p;
  const lhs = pi.times(W).minus(S).pow(2);
  const rhs = new ExactDecimal(k).pow(2).times(W.times(Q).minus(S.pow(2)));
  return lhs.gt(rhs);
}

/**
 * Applies the configured outlier rule to markets `idx[0..n)` with prices `p` and weights `w`
 * (indexed by the same slot numbers), clearing `keep[slot]` for each market dropped.
 *
 * @param exact - exact inputs for the boundary fall-back (`weighted_sigma` and `leave_one_out`)
 * @returns statistics, or undefined when fewer than `minMarkets` markets (nothing dropped)
 * @example
 * ```ts
 * const p = Float64Array.of(100, 100.1, 130), w = Float64Array.of(10, 10, 0.1);
 * const keep = Uint8Array.of(1, 1, 1);
 * removeOutliers('weighted_sigma', p, w, Int32Array.of(0, 1, 2), 3, keep, 3, 3);
 * keep; // [1, 1, 0]
 * ```
 */
export function removeOutliers(
  method: OutlierMethod,
  p: Float64Array,
  w: Float64Array,
  idx: Int32Array,
  n: number,
  keep: Uint8Array,
  k: number,
  minMarkets: number,
  exact?: ExactPriceWeight,
): OutlierStats | undefined {
  if (method === 'none' || n < minMarkets) return undefined;
  if (method === 'weighted_sigma') return weightedSigma(p, w, idx, n, keep, k, exact);
  if (method === 'leave_one_out') return leaveOneOut(p, w, idx, n, keep, k, exact);
  return mad(p, idx, n, keep, k);
}

function weightedSigma(p: Float64Array, w: Float64Array, idx: Int32Array, n: number, keep: Uint8Array, k: number, exact?: ExactPriceWeight): OutlierStats {
  let W = 0;
  let S = 0;
  for (let j = 0; j < n; j++) {
    const s = idx[j];
    W += w[s];
    S += w[s] * p[s];
  }
  const mu = S / W;
  let V = 0;
  for (let j = 0; j < n; j++) {
    const s = idx[j];
    const d = p[s] - mu;
    V += w[s] * d * d;
  }
  V /= W;
  const k2v = k * k * V;
  let dropped = 0;
  let usedExact = false;
  for (let j = 0; j < n; j++) {
    const s = idx[j];
    const d = p[s] - mu;
    const lhs = d * d;
    let out: boolean;
    if (lhs === 0) out = false; // 0 > k^2 var is false for any var >= 0
    else if (Math.abs(lhs - k2v) > NEAR * (lhs + k2v)) out = lhs > k2v;
    else if (exact) {
      usedExact = true;
      out = exactWeightedSigmaOutlier(j, n, k, idx, exact);
    } else out = lhs > k2v;
    if (out) {
      keep[s] = 0;
      dropped++;
    }
  }
  return { method: 'weighted_sigma', centre: mu, scale: Math.sqrt(V), dropped, exact: usedExact };
}

function leaveOneOut(p: Float64Array, w: Float64Array, idx: Int32Array, n: number, keep: Uint8Array, k: number, exact?: ExactPriceWeight): OutlierStats {
  let dropped = 0;
  let usedExact = false;
  const drop = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let W = 0;
    let S = 0;
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      W += w[idx[j]];
      S += w[idx[j]] * p[idx[j]];
    }
    if (W <= 0) continue;
    const mu = S / W;
    let V = 0;
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      const d = p[idx[j]] - mu;
      V += w[idx[j]] * d * d;
    }
    V /= W;
    const d = p[idx[i]] - mu;
    const lhs = d * d;
    const k2v = k * k * V;
    let out: boolean;
    if (lhs === 0) out = false;
    else if (Math.abs(lhs - k2v) > NEAR * (lhs + k2v) || !exact) out = lhs > k2v;
    else {
      usedExact = true;
      // Exact: the others' W, S, Q and the same square comparison as weighted_sigma.
      let We = new ExactDecimal(0);
      let Se = new ExactDecimal(0);
      let Qe = new ExactDecimal(0);
      for (let j = 0; j < n; j++) {
        if (j === i) continue;
        const e = exact(idx[j]);
        We = We.plus(e.w);
        const wp = e.w.times(e.p);
        Se = Se.plus(wp);
        Qe = Qe.plus(wp.times(e.p));
      }
      const pi = exact(idx[i]).p;
      out = pi.times(We).minus(Se).pow(2).gt(new ExactDecimal(k).pow(2).times(We.times(Qe).minus(Se.pow(2))));
    }
    if (out) drop[i] = 1;
  }
  for (let i = 0; i < n; i++) {
    if (drop[i]) {
      keep[idx[i]] = 0;
      dropped++;
    }
  }
  return { method: 'leave_one_out', centre: NaN, scale: NaN, dropped, exact: usedExact };
}

function median(sorted: Float64Array): number {
  const n = sorted.length;
  const h = n >> 1;
  return n % 2 === 1 ? sorted[h] : (sorted[h - 1] + sorted[h]) / 2;
}

function mad(p: Float64Array, idx: Int32Array, n: number, keep: Uint8Array, k: number): OutlierStats {
  const ps = new Float64Array(n);
  for (let j = 0; j < n; j++) ps[j] = p[idx[j]];
  ps.sort();
  const med = median(ps);
  for (let j = 0; j < n; j++) ps[j] = Math.abs(p[idx[j]] - med);
  ps.sort();
  const scale = MAD_SCALE * median(ps);
  let dropped = 0;
  for (let j = 0; j < n; j++) {
    if (Math.abs(p[idx[j]] - med) > k * scale) {
      keep[idx[j]] = 0;
      dropped++;
    }
  }
  return { method: 'mad', centre: med, scale, dropped, exact: false };
}
