import { describe, expect, it } from 'vitest';
import { resolveConfig, type EngineConfig } from '../../../src/core/config.js';
import { computePairRate, PairScratch } from '../../../src/core/pairRate.js';

interface M {
  p: number;
  q: number;
  v: number;
  t: number;
}
function compute(markets: M[], cfg: Partial<EngineConfig> = {}) {
  const s = new PairScratch();
  s.ensure(markets.length);
  markets.forEach((m, i) => {
    s.p[i] = m.p;
    s.q[i] = m.q;
    s.v[i] = m.v;
    s.t[i] = m.t;
  });
  return { s, res: computePairRate(s, markets.length, resolveConfig(cfg)) };
}

// A: mid 100, q = 4, V = 2; B: mid 102, q = 2, V = 6
const AB: M[] = [
  { p: 100, q: 4, v: 2, t: 5 },
  { p: 102, q: 2, v: 6, t: 7 },
];

describe('rules 6, 11, 1: computePairRate', () => {
  it('trade_x_passive: w = V q', () => {
    // w = 8, 12: (800 + 1224) / 20 = 101.2; time = newest quote (7); volume = 2 + 6
    const { res } = compute(AB);
    expect(res).toEqual({ rate: 101.2, time: 7, used: 2, volume: 8, fallback: false, stats: undefined });
  });

  it('trade: w = V; passive: w = q', () => {
    // (2 * 100 + 6 * 102) / 8 = 812 / 8 = 101.5
    expect(compute(AB, { weighting: 'trade' }).res!.rate).toBe(101.5);
    // (4 * 100 + 2 * 102) / 6 = 604 / 6 = 100.666...
    expect(compute(AB, { weighting: 'passive' }).res!.rate).toBe(604 / 6);
  });

  it('q = 0 makes the whole pair use w = V (trade_x_passive and passive)', () => {
    // A: q = 0, V = 1; B: q = 5, V = 3 -> w = 1, 3: (100 + 306) / 4 = 101.5
    const m: M[] = [
      { p: 100, q: 0, v: 1, t: 1 },
      { p: 102, q: 5, v: 3, t: 2 },
    ];
    const a = compute(m);
    expect(a.res).toMatchObject({ rate: 101.5, fallback: true });
    expect(a.s.useVolume).toBe(true);
    expect(Array.from(a.s.w.subarray(0, 2))).toEqual([1, 3]);
    expect(compute(m, { weighting: 'passive' }).res!.rate).toBe(101.5);
    // trade weighting: w = V anyway (fallback reported, weights unchanged)
    const t = compute(m, { weighting: 'trade' });
    expect(t.res!.rate).toBe(101.5);
    expect(t.s.useVolume).toBe(false);
  });

  it('drops outliers with n >= 3; time and volume come from the markets left', () => {
    // w = V q = 20, 20, 0.2 -> 130 dropped (see outliers.test.ts); rate (2000 + 2000) / 40 = 100
    const { res, s } = compute([
      { p: 100, q: 2, v: 10, t: 1 },
      { p: 100, q: 2, v: 10, t: 2 },
      { p: 130, q: 2, v: 0.1, t: 9 },
    ]);
    expect(res).toMatchObject({ rate: 100, time: 2, used: 2, volume: 20 });
    expect(res!.stats!.dropped).toBe(1);
    expect(Array.from(s.keep.subarray(0, 3))).toEqual([1, 1, 0]);
    // with outliers 'none': (2000 + 2000 + 26) / 40.2
    const none = compute(
      [
        { p: 100, q: 2, v: 10, t: 1 },
        { p: 100, q: 2, v: 10, t: 2 },
        { p: 130, q: 2, v: 0.1, t: 9 },
      ],
      { outliers: 'none' },
    );
    expect(none.res).toMatchObject({ rate: 4026 / 40.2, time: 9, used: 3 });
  });

  it('returns undefined with no market or a zero total weight', () => {
    expect(compute([]).res).toBeUndefined();
    expect(
      compute(
        [
          { p: 100, q: 1, v: 0, t: 1 },
          { p: 101, q: 1, v: 0, t: 1 },
        ],
        { weighting: 'trade' },
      ).res,
    ).toBeUndefined();
  });

  it('PairScratch grows by doubling from 8', () => {
    const s = new PairScratch();
    s.ensure(3);
    expect(s.capacity).toBe(8);
    s.ensure(8);
    expect(s.capacity).toBe(8);
    s.ensure(20);
    expect(s.capacity).toBe(32);
    expect(s.p.length).toBe(32);
  });
});
