/**
 * Rule 11, outlier removal, on the fast path (float64 columns) with an exact fall-back.
 *
 * Default `weighted_sigma`, with n >= minMarkets markets: mu = sum(w p) / sum(w),
 * sigma = sqrt(sum(w (p - mu)^2) / sum(w)) (weighted, population); a market with |p - mu| > k sigma
 * (strict) is dropped, once. The comparison is made on squares, (p - mu)^2 > k^2 var, and when the
 * two sides agree to 1e-9 the decision is re-made exactly on decimals: with W = sum w, S = sum w p,
 * Q = sum w p^2 it reads (p W - S)^2 > k^2 (W Q - S^2), which needs no division or square root.
 * This decides, for example, the equal-weight case n = 10 where one market sits exactly at 3 sigma
 * (kept). The band is an error bound of the float computation (a few ulps of the largest price
 * carried through the deviation and the variance), not a fixed relative width, so deviations
 * that are tiny next to the price still reach the exact path. Options: `leave_one_out` compares
 * each market to mu and sigma of the others; `mad` drops |p - median| > k * 1.4826 * MAD
 * (unweighted median, mean of the middle two for even n), with the same kind of exact fall-back.
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
const EPS = Number.EPSILON;

/**
 * Absolute error bound of a deviation p - centre computed in float64 over n markets whose
 * prices are at most `pmax` in size: parsing, the midpoint, the weighted sums and the
 * subtraction each add a few ulps of pmax. Generous on purpose: a wider band only sends more
 * (rare) cases to the exact path.
 */
function deviationError(n: number, pmax: number): number {
  return (8 + 4 * n) * EPS * pmax;
}

function maxAbs(p: Float64Array, idx: Int32Array, n: number): number {
  let m = 0;
  for (let j = 0; j < n; j++) {
    const a = Math.abs(p[idx[j]]);
    if (a > m) m = a;
  }
  return m;
}

/**
 * Whether "lhs > rhs" (two squares, d^2 vs k^2 var) might be decided wrongly on floats, given
 * |d| and sigma and the error E of a deviation: the errors of d^2 and of var are about
 * 2|d|E + E^2 and 2 sigma E + E^2.
 */
function nearSquares(lhs: number, rhs: number, absD: number, sigma: number, k: number, E: number): boolean {
  const band = 2 * absD * E + E * E + k * k * (2 * sigma * E + E * E) + NEAR * (lhs + rhs);
  return Math.abs(lhs - rhs) <= band;
}

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
 * @param exact - exact inputs for the boundary fall-back (every method)
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
  return mad(p, idx, n, keep, k, exact);
}

function weightedSigma(
  p: Float64Array,
  w: Float64Array,
  idx: Int32Array,
  n: number,
  keep: Uint8Array,
  k: number,
  exact?: ExactPriceWeight,
): OutlierStats {
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
  const sigma = Math.sqrt(V);
  const E = deviationError(n, maxAbs(p, idx, n));
  let dropped = 0;
  let usedExact = false;
  for (let j = 0; j < n; j++) {
    const s = idx[j];
    const d = p[s] - mu;
    const lhs = d * d;
    let out: boolean;
    // Every float price equal: 0 > 0 is false (exact prices can differ only below float
    // resolution, i.e. with more than 15 significant digits; see docs/methodology.md).
    if (lhs === 0 && k2v === 0) out = false;
    else if (!nearSquares(lhs, k2v, Math.abs(d), sigma, k, E)) out = lhs > k2v;
    else if (exact) {
      usedExact = true;
      out = exactWeightedSigmaOutlier(j, n, k, idx, exact);
    } else out = lhs > k2v;
    if (out) {
      keep[s] = 0;
      dropped++;
    }
  }
  return { method: 'weighted_sigma', centre: mu, scale: sigma, dropped, exact: usedExact };
}

function leaveOneOut(
  p: Float64Array,
  w: Float64Array,
  idx: Int32Array,
  n: number,
  keep: Uint8Array,
  k: number,
  exact?: ExactPriceWeight,
): OutlierStats {
  let dropped = 0;
  let usedExact = false;
  const drop = new Uint8Array(n);
  const E = deviationError(n, maxAbs(p, idx, n));
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
    if (lhs === 0 && k2v === 0) out = false;
    else if (!exact || !nearSquares(lhs, k2v, Math.abs(d), Math.sqrt(V), k, E)) out = lhs > k2v;
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
      out = pi
        .times(We)
        .minus(Se)
        .pow(2)
        .gt(new ExactDecimal(k).pow(2).times(We.times(Qe).minus(Se.pow(2))));
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

function mad(p: Float64Array, idx: Int32Array, n: number, keep: Uint8Array, k: number, exact?: ExactPriceWeight): OutlierStats {
  const ps = new Float64Array(n);
  for (let j = 0; j < n; j++) ps[j] = p[idx[j]];
  ps.sort();
  const med = median(ps);
  for (let j = 0; j < n; j++) ps[j] = Math.abs(p[idx[j]] - med);
  ps.sort();
  const scale = MAD_SCALE * median(ps);
  // |p - med| and k * 1.4826 * MAD each carry a few ulps of the largest price.
  const E = deviationError(n, maxAbs(p, idx, n)) * (1 + 2 * k * MAD_SCALE);
  let exactDrop: boolean[] | undefined;
  let dropped = 0;
  for (let j = 0; j < n; j++) {
    const a = Math.abs(p[idx[j]] - med);
    const b = k * scale;
    let out: boolean;
    if (a === 0 && b === 0) out = false;
    else if (!exact || Math.abs(a - b) > E + NEAR * (a + b)) out = a > b;
    else {
      exactDrop ??= exactMad(idx, n, k, exact);
      out = exactDrop[j];
    }
    if (out) {
      keep[idx[j]] = 0;
      dropped++;
    }
  }
  return { method: 'mad', centre: med, scale, dropped, exact: exactDrop !== undefined };
}

function exactMedian(sorted: Decimal[]): Decimal {
  const n = sorted.length;
  const h = n >> 1;
  return n % 2 === 1 ? sorted[h] : sorted[h - 1].plus(sorted[h]).div(2);
}

/** The MAD rule decided on exact decimals: drop[j] for the j-th market of idx. */
function exactMad(idx: Int32Array, n: number, k: number, exact: ExactPriceWeight): boolean[] {
  const ps = Array.from({ length: n }, (_, j) => exact(idx[j]).p);
  const med = exactMedian([...ps].sort((a, b) => a.comparedTo(b)));
  const dev = ps.map((x) => x.minus(med).abs());
  const madv = exactMedian([...dev].sort((a, b) => a.comparedTo(b)));
  const limit = new ExactDecimal(k).times(new ExactDecimal('1.4826')).times(madv);
  return dev.map((d) => d.gt(limit));
}
