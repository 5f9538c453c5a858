import { describe, expect, it } from 'vitest';
import { D, refMarketPriceWeight, refWeightedMean, type RefMarket } from '../../../src/reference/index.js';

const m: RefMarket = { bid: '99', ask: '101', bidSize: '2', askSize: '3', volume: '10' };

describe('refMarketPriceWeight (rule 6)', () => {
  it('trade_x_passive (default): p = mid, q = bidSize + askSize, w = V q', () => {
    const r = refMarketPriceWeight(m);
    expect(r.p.toString()).toBe('100');
    expect(r.q.toString()).toBe('5');
    expect(r.w.toString()).toBe('50');
    expect(refMarketPriceWeight(m, 'trade_x_passive').w.toString()).toBe('50');
  });

  it('trade: w = V', () => {
    const r = refMarketPriceWeight(m, 'trade');
    expect([r.p.toString(), r.q.toString(), r.w.toString()]).toEqual(['100', '5', '10']);
  });

  it('passive: w = q', () => {
    const r = refMarketPriceWeight(m, 'passive');
    expect([r.p.toString(), r.q.toString(), r.w.toString()]).toEqual(['100', '5', '5']);
  });

  it('microprice: p = (bid askSize + ask bidSize) / (bidSize + askSize), w = V', () => {
    const r = refMarketPriceWeight(m, 'microprice');
    // (99 * 3 + 101 * 2) / 5 = 499 / 5
    expect(r.p.toString()).toBe('99.8');
    expect(r.w.toString()).toBe('10');
  });

  it('microprice with no size falls back to the mid', () => {
    const r = refMarketPriceWeight({ ...m, bidSize: 0, askSize: '0' }, 'microprice');
    expect(r.p.toString()).toBe('100');
    expect(r.q.isZero()).toBe(true);
  });

  it('parses numbers through their shortest text, exactly', () => {
    const r = refMarketPriceWeight({ bid: 0.1, ask: 0.2, bidSize: 0.1, askSize: 0.2, volume: 3 });
    expect(r.p.toString()).toBe('0.15');
    expect(r.q.toString()).toBe('0.3');
    expect(r.w.toString()).toBe('0.9');
  });

  it('rejects non-finite input', () => {
    expect(() => refMarketPriceWeight({ ...m, bid: Number.NaN })).toThrow(RangeError);
    expect(() => refMarketPriceWeight({ ...m, ask: 'Infinity' })).toThrow(RangeError);
  });
});

describe('refWeightedMean (rule 1)', () => {
  it('is sum(w p) / sum(w)', () => {
    expect(refWeightedMean(['100', '200'], ['1', '3'])!.toString()).toBe('175');
    expect(refWeightedMean([1, 2, 4], [1, 1, 1])!.eq(new D(7).div(3))).toBe(true);
  });

  it('is undefined with no weight', () => {
    expect(refWeightedMean(['100', '200'], ['0', 0])).toBeUndefined();
    expect(refWeightedMean([], [])).toBeUndefined();
  });

  it('throws on mismatched lengths', () => {
    expect(() => refWeightedMean(['1'], [])).toThrow(RangeError);
  });
});
