import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { D, refPairRate, type RefMarket } from '../../../src/reference/index.js';

/** A locked book at price p with sizes q/2 each side and volume V: w = V q by default. */
function at(p: string, volume = '1', q = '2'): RefMarket {
  const half = new Decimal(q).div(2).toString();
  return { bid: p, ask: p, bidSize: half, askSize: half, volume };
}

const s = (x: Decimal | undefined): string | undefined => x?.toString();
const close = (x: Decimal, y: string, rel = '1e-150'): boolean => x.minus(y).abs().lte(new D(y).abs().times(rel));

describe('refPairRate, weighted_sigma (rule 11 literal) and rule 1', () => {
  it('n = 10, equal weights: one market at exactly 3 sigma is NOT dropped', () => {
    // nine at 100, one at 101: mu = 100.1, sigma = sqrt((9 * 0.01 + 0.81) / 10) = 0.3,
    // |101 - 100.1| = 0.9 = 3 sigma exactly, and the rule is strict.
    const ms = [...Array.from({ length: 9 }, () => at('100')), at('101')];
    const r = refPairRate(ms)!;
    expect(r.dropped).toEqual([]);
    expect(r.used).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(s(r.rate)).toBe('100.1');
    expect(s(r.mu)).toBe('100.1');
    expect(s(r.sigma)).toBe('0.3');
    expect(r.fallback).toBe(false);
  });

  it('n = 10: the same market with a slightly smaller weight is dropped', () => {
    // weight share f: |p - mu| / sigma = sqrt((1 - f) / f); f < 1/10 puts it beyond 3 sigma
    const ms = [...Array.from({ length: 9 }, () => at('100')), at('101', '0.99')];
    const r = refPairRate(ms)!;
    expect(r.dropped).toEqual([9]);
    expect(s(r.rate)).toBe('100');
  });

  it('sigmas and minMarkets options', () => {
    const ms = [...Array.from({ length: 9 }, () => at('100')), at('101')];
    expect(refPairRate(ms, { sigmas: 2 })!.dropped).toEqual([9]);
    const r = refPairRate([...ms.slice(0, 9), at('101', '0.5')], { minMarkets: 11 })!;
    expect(r.dropped).toEqual([]);
    expect(r.mu).toBeUndefined();
    expect(r.sigma).toBeUndefined();
  });

  it('n = 3: a far market with a small weight IS dropped', () => {
    // w = 1000, 1000, 1: W = 2001, S = 200200, Q = 20040000
    // market 2: (200 W - S)^2 = 4e10 > 9 (W Q - S^2) = 9 * 2e7
    const ms = [at('100', '10', '100'), at('100', '10', '100'), at('200', '1', '1')];
    const r = refPairRate(ms)!;
    expect(r.dropped).toEqual([2]);
    expect(r.used).toEqual([0, 1]);
    expect(s(r.rate)).toBe('100');
    expect(r.weights.map(String)).toEqual(['1000', '1000', '1']);
    expect(r.prices.map(String)).toEqual(['100', '100', '200']);
    // mu = 200200 / 2001, sigma = sqrt(2e7) / 2001
    expect(close(r.mu!, new D(200200).div(2001).toString())).toBe(true);
    expect(close(r.sigma!, new D(20000000).sqrt().div(2001).toString())).toBe(true);
  });

  it('n = 3 with equal weights never drops (no point beyond sqrt(2) sigma)', () => {
    const r = refPairRate([at('100'), at('100'), at('1000')])!;
    expect(r.dropped).toEqual([]);
    expect(s(r.rate)).toBe('400');
  });

  it('n = 2: nothing is dropped, however far', () => {
    const r = refPairRate([at('100', '1000'), at('1000000', '1')])!;
    expect(r.dropped).toEqual([]);
    expect(r.used).toEqual([0, 1]);
    expect(r.mu).toBeUndefined();
    // (100 * 2000 + 1e6 * 2) / 2002
    expect(s(r.rate)).toBe(new D(2200000).div(2002).toString());
  });

  it('one dominant market: small markets a basis point away are dropped', () => {
    const ms = [at('100', '1000000'), at('100.01'), at('99.99')];
    const r = refPairRate(ms)!;
    expect(r.dropped).toEqual([1, 2]);
    expect(s(r.rate)).toBe('100');
  });

  it('n = 1 gives that market; empty or weightless gives undefined', () => {
    expect(s(refPairRate([at('42.5')])!.rate)).toBe('42.5');
    expect(refPairRate([])).toBeUndefined();
    expect(refPairRate([at('100', '0'), at('101', '0'), at('102', '0')])).toBeUndefined();
  });

  it('rejects bad options', () => {
    expect(() => refPairRate([at('1')], { sigmas: -1 })).toThrow(RangeError);
    expect(() => refPairRate([at('1')], { minMarkets: 2.5 })).toThrow(RangeError);
  });
});

describe('refPairRate, weightings (rule 6)', () => {
  // p1 = 100, q1 = 5, V1 = 10; p2 = 200, q2 = 2, V2 = 30
  const ms: RefMarket[] = [
    { bid: '99', ask: '101', bidSize: '2', askSize: '3', volume: '10' },
    { bid: '199', ask: '201', bidSize: '1', askSize: '1', volume: '30' },
  ];

  it('trade_x_passive: w = 50, 60', () => {
    const r = refPairRate(ms)!;
    expect(r.weights.map(String)).toEqual(['50', '60']);
    expect(s(r.rate)).toBe(new D(17000).div(110).toString());
  });

  it('trade: w = 10, 30', () => {
    const r = refPairRate(ms, { weighting: 'trade' })!;
    expect(r.weights.map(String)).toEqual(['10', '30']);
    expect(s(r.rate)).toBe('175');
  });

  it('passive: w = 5, 2', () => {
    const r = refPairRate(ms, { weighting: 'passive' })!;
    expect(r.weights.map(String)).toEqual(['5', '2']);
    expect(s(r.rate)).toBe(new D(900).div(7).toString());
  });

  it('microprice: p = 99.8, 200; w = 10, 30', () => {
    const r = refPairRate(ms, { weighting: 'microprice' })!;
    expect(r.prices.map(String)).toEqual(['99.8', '200']);
    expect(r.weights.map(String)).toEqual(['10', '30']);
    expect(s(r.rate)).toBe('174.95');
  });
});

describe('refPairRate, q = 0 fallback (rule 6)', () => {
  const ms: RefMarket[] = [
    { bid: '100', ask: '100', bidSize: '1', askSize: '1', volume: '1' },
    { bid: '110', ask: '110', bidSize: '0', askSize: '0', volume: '3' },
  ];

  for (const weighting of ['trade_x_passive', 'passive', 'trade', 'microprice'] as const) {
    it(`every market uses w = V when one has q = 0 (${weighting})`, () => {
      const r = refPairRate(ms, { weighting })!;
      expect(r.fallback).toBe(true);
      expect(r.weights.map(String)).toEqual(['1', '3']);
      expect(s(r.rate)).toBe('107.5'); // (100 + 330) / 4
    });
  }

  it('the fallback weights are the ones rule 11 sees', () => {
    // V-weights 1000, 1000, 1 drop the far market; with V q it would weigh 1000 * 1000
    const r = refPairRate([at('100', '1000', '0'), at('100', '1000', '2'), at('200', '1', '1000')])!;
    expect(r.fallback).toBe(true);
    expect(r.weights.map(String)).toEqual(['1000', '1000', '1']);
    expect(r.dropped).toEqual([2]);
    expect(s(r.rate)).toBe('100');
  });

  it('no fallback when every q > 0', () => {
    expect(refPairRate(ms.slice(0, 1))!.fallback).toBe(false);
  });
});

describe('refPairRate, leave_one_out', () => {
  it('drops a market the others place beyond 3 sigma that weighted_sigma keeps', () => {
    // all weights equal. Without 101: mu = 100, sigma = sqrt(0.02 / 3) = 0.0816..., |101 - 100| = 1 > 0.245
    // weighted_sigma: mu = 100.25, sigma = sqrt(0.1925) = 0.4387..., |0.75| < 1.316: kept
    const ms = [at('100'), at('100.1'), at('99.9'), at('101')];
    const loo = refPairRate(ms, { outliers: 'leave_one_out' })!;
    expect(loo.dropped).toEqual([3]);
    expect(s(loo.rate)).toBe('100');
    expect(loo.mu).toBeUndefined();
    const lit = refPairRate(ms)!;
    expect(lit.dropped).toEqual([]);
    expect(s(lit.rate)).toBe('100.25');
  });

  it('is strict at exactly 3 sigma of the others', () => {
    // 103 vs {99, 101}: mu = 100, sigma = 1, |3| = 3 sigma; 99 vs {101, 103} likewise; 101 vs {99, 103} at 0
    expect(refPairRate([at('99'), at('101'), at('103')], { outliers: 'leave_one_out' })!.dropped).toEqual([]);
    // 103.001 vs {99, 101}: 3.001 > 3 -> dropped; 99 vs {101, 103.001}: 3.0005 < 3.0015 -> kept
    const r = refPairRate([at('99'), at('101'), at('103.001')], { outliers: 'leave_one_out' })!;
    expect(r.dropped).toEqual([2]);
    expect(s(r.rate)).toBe('100');
  });

  it('keeps a market whose others weigh nothing', () => {
    // market 0 is compared with {200, 300} of weight 0: kept. Markets 1 and 2 see
    // mu = 100 and sigma = 0 (only market 0 weighs): dropped.
    const r = refPairRate([at('100', '1'), at('200', '0'), at('300', '0')], { outliers: 'leave_one_out' })!;
    expect(r.dropped).toEqual([1, 2]);
    expect(s(r.rate)).toBe('100');
  });

  it('does nothing with n < 3', () => {
    expect(refPairRate([at('1'), at('1000')], { outliers: 'leave_one_out' })!.dropped).toEqual([]);
  });
});

describe('refPairRate, mad', () => {
  it('odd n: median 102, MAD 1, drops |p - 102| > 4.4478', () => {
    const r = refPairRate([at('100'), at('101'), at('102'), at('103'), at('150')], { outliers: 'mad' })!;
    expect(r.dropped).toEqual([4]);
    expect(s(r.mu)).toBe('102');
    expect(s(r.sigma)).toBe('1.4826');
    expect(s(r.rate)).toBe('101.5');
  });

  it('even n: the median is the mean of the middle two', () => {
    // median 101.5; |dev| 1.5, 0.5, 0.5, 8.5 -> MAD = (0.5 + 1.5) / 2 = 1
    const r = refPairRate([at('110'), at('100'), at('102'), at('101')], { outliers: 'mad' })!;
    expect(s(r.mu)).toBe('101.5');
    expect(s(r.sigma)).toBe('1.4826');
    expect(r.dropped).toEqual([0]);
    expect(s(r.rate)).toBe('101');
  });

  it('the median is unweighted while the rate is weighted', () => {
    const r = refPairRate([at('100', '1'), at('101', '100'), at('102', '1'), at('103', '1'), at('150', '1000')], {
      outliers: 'mad',
    })!;
    expect(r.dropped).toEqual([4]);
    expect(s(r.rate)).toBe(new D(100 + 10100 + 102 + 103).div(103).toString());
  });

  it('is strict at exactly 3 * 1.4826 * MAD', () => {
    // median 100, |dev| 1, 0, 0, 1, d -> MAD = 1
    const keep = refPairRate([at('99'), at('100'), at('100'), at('101'), at('104.4478')], { outliers: 'mad' })!;
    expect(keep.dropped).toEqual([]);
    const drop = refPairRate([at('99'), at('100'), at('100'), at('101'), at('104.4479')], { outliers: 'mad' })!;
    expect(drop.dropped).toEqual([4]);
  });

  it('MAD = 0: the literal rule drops every price off the median', () => {
    const r = refPairRate([at('100'), at('100'), at('100'), at('100.0000001')], { outliers: 'mad' })!;
    expect(s(r.sigma)).toBe('0');
    expect(r.dropped).toEqual([3]);
    expect(s(r.rate)).toBe('100');
  });

  it('all dropped gives undefined', () => {
    // sigmas = 0: median 101, every |dev| = 1 > 0
    expect(refPairRate([at('100'), at('100'), at('102'), at('102')], { outliers: 'mad', sigmas: 0 })).toBeUndefined();
  });
});

describe("refPairRate, 'none'", () => {
  it('drops nothing', () => {
    const r = refPairRate([at('100', '10', '100'), at('100', '10', '100'), at('200', '1', '1')], {
      outliers: 'none',
    })!;
    expect(r.dropped).toEqual([]);
    expect(r.mu).toBeUndefined();
    expect(s(r.rate)).toBe(new D(200200).div(2001).toString());
  });
});

describe('refPairRate, weighted_sigma exact test agrees with the textbook formula', () => {
  it('on random sets (away from the boundary)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 100000 }), fc.integer({ min: 1, max: 1000 })), {
          minLength: 3,
          maxLength: 12,
        }),
        (rows) => {
          const ms = rows.map(([p, v]) => at(new D(p).div(100).toString(), String(v)));
          const r = refPairRate(ms)!;
          const ps = r.prices;
          const ws = r.weights;
          const W = ws.reduce((a, b) => a.plus(b), new D(0));
          const mu = ps.reduce((a, p, i) => a.plus(p.times(ws[i])), new D(0)).div(W);
          const sigma = ps
            .reduce((a, p, i) => a.plus(ws[i].times(p.minus(mu).pow(2))), new D(0))
            .div(W)
            .sqrt();
          ps.forEach((p, i) => {
            const gap = p.minus(mu).abs().minus(sigma.times(3));
            if (gap.abs().lt('1e-100')) return; // at the boundary the rounded formula cannot decide
            expect(r.dropped.includes(i)).toBe(gap.gt(0));
          });
          expect(close(r.mu!, mu.toString(), '1e-150')).toBe(true);
        },
      ),
    );
  });
});
