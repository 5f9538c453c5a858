import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import type { OutlierMethod } from '../../../src/core/config.js';
import { MAD_SCALE, removeOutliers, type ExactPriceWeight } from '../../../src/core/outliers.js';

/** Runs the rule on prices/weights; returns the keep flags and the stats. */
function run(
  method: OutlierMethod,
  prices: number[],
  weights: number[],
  opts: { k?: number; min?: number; exact?: ExactPriceWeight } = {},
) {
  const n = prices.length;
  const p = Float64Array.from(prices);
  const w = Float64Array.from(weights);
  const idx = Int32Array.from({ length: n }, (_, i) => i);
  const keep = new Uint8Array(n).fill(1);
  const stats = removeOutliers(method, p, w, idx, n, keep, opts.k ?? 3, opts.min ?? 3, opts.exact);
  return { keep: Array.from(keep), stats };
}

/** Exact p, w from decimal texts. */
const exactOf =
  (prices: string[], weights: string[]): ExactPriceWeight =>
  (i) => ({ p: new Decimal(prices[i]), w: new Decimal(weights[i]) });

describe('rule 11: weighted_sigma (the literal default)', () => {
  it('never drops with n = 2, however far apart', () => {
    const r = run('weighted_sigma', [100, 200], [1, 1]);
    expect(r.stats).toBeUndefined();
    expect(r.keep).toEqual([1, 1]);
  });

  it('drops a small far market at n = 3', () => {
    // w = 20, 20, 0.2; mu = (2000 + 2000 + 26) / 40.2 = 4026 / 40.2 = 100.1492537...
    // var = (40 (0.1492537)^2 + 0.2 (29.8507463)^2) / 40.2 = (0.891065 + 178.213410) / 40.2 = 4.455335
    // sigma = 2.110766, 3 sigma = 6.3323; |130 - mu| = 29.85 > 6.33: dropped; |100 - mu| = 0.149: kept
    const r = run('weighted_sigma', [100, 100, 130], [20, 20, 0.2]);
    expect(r.keep).toEqual([1, 1, 0]);
    expect(r.stats!.dropped).toBe(1);
    expect(r.stats!.centre).toBeCloseTo(100.1492537, 6);
    expect(r.stats!.scale).toBeCloseTo(2.110766, 5);
    expect(r.stats!.exact).toBe(false);
  });

  it('keeps the same far market when it carries weight (n = 3)', () => {
    // w = 1, 1, 1: mu = 110, var = (100 + 100 + 400) / 3 = 200, 3 sigma = 42.43 > |130 - 110| = 20
    const r = run('weighted_sigma', [100, 100, 130], [1, 1, 1]);
    expect(r.keep).toEqual([1, 1, 1]);
    expect(r.stats!.centre).toBe(110);
    expect(r.stats!.scale).toBeCloseTo(Math.sqrt(200), 12);
  });

  it('with equal weights and n = 4 drops nothing (no point beyond sqrt(3) sigma)', () => {
    // mu = 413 / 4 = 103.25; deviations -3.25, -2.25, -1.25, 6.75; squares sum 62.75; var = 15.6875
    const r = run('weighted_sigma', [100, 101, 102, 110], [1, 1, 1, 1]);
    expect(r.keep).toEqual([1, 1, 1, 1]);
    expect(r.stats!.centre).toBe(103.25);
    expect(r.stats!.scale).toBe(Math.sqrt(15.6875));
  });

  it('drops small near markets when one market carries most of the weight', () => {
    // w = 1, 1, 1, 100: mu = 11303 / 103 = 109.7379; var = 237.92 / 103 = 2.3099, 3 sigma = 4.559
    // deviations 9.74, 8.74, 7.74 > 4.559 are dropped; 110 (0.26) kept
    const r = run('weighted_sigma', [100, 101, 102, 110], [1, 1, 1, 100]);
    expect(r.keep).toEqual([0, 0, 0, 1]);
    expect(r.stats!.dropped).toBe(3);
    expect(r.stats!.centre).toBeCloseTo(11303 / 103, 10);
  });

  it('keeps a market exactly at 3 sigma (n = 10, equal weights), deciding exactly', () => {
    // 9 markets at 100, 1 at 110: mu = 101, var = (9 * 1 + 81) / 10 = 9, sigma = 3, |110 - 101| = 9 = 3 sigma
    const r = run('weighted_sigma', [...Array(9).fill(100), 110], Array(10).fill(1), {
      exact: exactOf([...Array(9).fill('100'), '110'], Array(10).fill('1')),
    });
    expect(r.keep).toEqual(Array(10).fill(1));
    expect(r.stats!.exact).toBe(true);
    expect(r.stats!.centre).toBe(101);
    expect(r.stats!.scale).toBe(3);
  });

  it('decides exactly where floats are wrong (9 x 0.01 and 1 x 0.02)', () => {
    // Exactly: W = 10, S = 0.11, Q = 9 * 0.0001 + 0.0004 = 0.0013
    // (p W - S)^2 = (0.2 - 0.11)^2 = 0.0081; 9 (W Q - S^2) = 9 (0.013 - 0.0121) = 0.0081: not >, kept.
    const prices = [...Array(9).fill(0.01), 0.02];
    const floatOnly = run('weighted_sigma', prices, Array(10).fill(1));
    expect(floatOnly.keep[9]).toBe(0); // float rounding puts it just beyond 3 sigma
    const exact = run('weighted_sigma', prices, Array(10).fill(1), {
      exact: exactOf([...Array(9).fill('0.01'), '0.02'], Array(10).fill('1')),
    });
    expect(exact.keep).toEqual(Array(10).fill(1));
    expect(exact.stats).toMatchObject({ dropped: 0, exact: true });
  });

  it('drops beyond k sigma for another k', () => {
    // equal weights [100, 100, 100, 104]: mu = 101, var = (3 + 9) / 4 = 3, sigma = 1.732;
    // k = 1.5: 1.5 sigma = 2.598 < 3 (104 dropped), 1 < 2.598 (100s kept)
    const r = run('weighted_sigma', [100, 100, 100, 104], [1, 1, 1, 1], { k: 1.5 });
    expect(r.keep).toEqual([1, 1, 1, 0]);
  });

  it('does nothing below minMarkets', () => {
    expect(run('weighted_sigma', [100, 100, 130], [20, 20, 0.2], { min: 4 }).stats).toBeUndefined();
  });
});

describe('rule 11 options', () => {
  it('none never drops', () => {
    const r = run('none', [100, 100, 130], [20, 20, 0.2]);
    expect(r.stats).toBeUndefined();
    expect(r.keep).toEqual([1, 1, 1]);
  });

  it('leave_one_out compares each market to the mean and sigma of the others', () => {
    // 110 vs others [100, 101, 102]: mu = 101, var = 2/3, 3 sigma = 2.449 < 9: dropped
    // 100 vs [101, 102, 110]: mu = 104.33, var = 16.22, 3 sigma = 12.08 > 4.33: kept
    // 101 vs [100, 102, 110]: mu = 104, var = 18.67, 3 sigma = 12.96 > 3: kept
    // 102 vs [100, 101, 110]: mu = 103.67, var = 20.22, 3 sigma = 13.49 > 1.67: kept
    const r = run('leave_one_out', [100, 101, 102, 110], [1, 1, 1, 1]);
    expect(r.keep).toEqual([1, 1, 1, 0]);
    expect(r.stats).toEqual({ method: 'leave_one_out', centre: NaN, scale: NaN, dropped: 1, exact: false });
  });

  it('leave_one_out decides exactly at 3 sigma of the others', () => {
    // 103 vs [99, 101]: mu = 100, sigma = 1, |103 - 100| = 3 = 3 sigma: kept
    // 99 vs [101, 103]: mu = 102, sigma = 1, |99 - 102| = 3: kept; 101 vs [99, 103]: |0|: kept
    const r = run('leave_one_out', [99, 101, 103], [1, 1, 1], { exact: exactOf(['99', '101', '103'], ['1', '1', '1']) });
    expect(r.keep).toEqual([1, 1, 1]);
    expect(r.stats!.exact).toBe(true);
    // and 103.000001 is beyond: (3.000001)^2 > 9
    const r2 = run('leave_one_out', [99, 101, 103.000001], [1, 1, 1], { exact: exactOf(['99', '101', '103.000001'], ['1', '1', '1']) });
    expect(r2.keep).toEqual([1, 1, 0]);
  });

  it('leave_one_out skips a market whose others weigh nothing', () => {
    // weights 0, 0, 1: for market 2 the others weigh 0 (skipped); market 0 vs [100 (w 0), 130 (w 1)]:
    // mu = 130, var = 0 -> |100 - 130| > 0 dropped; same for market 1
    const r = run('leave_one_out', [100, 100, 130], [0, 0, 1]);
    expect(r.keep).toEqual([0, 0, 1]);
  });

  it('mad drops |p - median| > 3 * 1.4826 * MAD (unweighted)', () => {
    // median of [100, 101, 102, 110] = (101 + 102) / 2 = 101.5
    // |p - 101.5| = 1.5, 0.5, 0.5, 8.5 -> median (0.5 + 1.5) / 2 = 1; scale = 1.4826; 3 * 1.4826 = 4.4478
    // 8.5 > 4.4478: 110 dropped; weights are ignored
    const r = run('mad', [100, 101, 102, 110], [1, 1, 1, 100]);
    expect(r.keep).toEqual([1, 1, 1, 0]);
    expect(r.stats).toEqual({ method: 'mad', centre: 101.5, scale: MAD_SCALE, dropped: 1, exact: false });
  });

  it('mad with odd n and a zero MAD drops everything off the median', () => {
    // median of [100, 100, 100.5] = 100; deviations 0, 0, 0.5; MAD = 0: 0.5 > 0 dropped
    const r = run('mad', [100, 100.5, 100], [1, 1, 1]);
    expect(r.keep).toEqual([1, 0, 1]);
    expect(r.stats).toMatchObject({ centre: 100, scale: 0, dropped: 1 });
  });
});
