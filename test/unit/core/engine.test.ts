/**
 * The engine end to end on small hand-computed logs: the rules (docs/methodology.md section 3).
 * Rejects, tracking, snapshots and the rest of the engine's API are in engineApi.test.ts.
 *
 * Unless said otherwise: the first event is at 00:00:00.1 on 2024-01-01, so T0 = 00:00:01 (the
 * first eligibility refresh), and every market trades at 00:00:00.5 so that it is eligible at T0.
 */
import { describe, expect, it } from 'vitest';
import type { EngineConfig } from '../../../src/core/config.js';
import type { Weighting } from '../../../src/core/config.js';
import { Scenario, us } from '../../helpers/scenario.js';

const excludedReasons = (s: Scenario, b: string, q: string) =>
  Object.fromEntries(s.engine.explainPair(b, q)!.excluded.map((m) => [m.symbol_id, m.reason]));

describe('rule 1 and rule 6: the weighted mean under each weighting', () => {
  // A: bid 99 x 3, ask 101 x 1 -> mid 100, q = 4, V = 2
  // B: bid 100 x 1, ask 104 x 1 -> mid 102, q = 2, V = 6
  const rows = `
    x 00:00:00.1 A true 0
    t 00:00:00.5 A_SPOT_BTC_USD 100 2
    t 00:00:00.5 B_SPOT_BTC_USD 100 6
    q 00:00:00.5 A_SPOT_BTC_USD 99 3 101 1
    q 00:00:00.5 B_SPOT_BTC_USD 100 1 104 1`;
  const cases: [Weighting, number, number[], string][] = [
    // w = V q = 8, 12: (8 * 100 + 12 * 102) / 20 = 2024 / 20
    ['trade_x_passive', 2024 / 20, [8, 12], '101.2'],
    // w = V = 2, 6: (200 + 612) / 8 = 812 / 8
    ['trade', 812 / 8, [2, 6], '101.5'],
    // w = q = 4, 2: (400 + 204) / 6 = 604 / 6
    ['passive', 604 / 6, [4, 2], '100.666...'],
    // p_A = (99 * 1 + 101 * 3) / 4 = 100.5, p_B = 102, w = V: (2 * 100.5 + 6 * 102) / 8 = 813 / 8
    ['microprice', 813 / 8, [2, 6], '101.625'],
  ];
  for (const [weighting, expected, weights, shown] of cases) {
    it(`${weighting}: ${shown}`, () => {
      const s = new Scenario({ weighting }).feed(rows).to('00:00:01');
      const r = s.engine.rate('BTC', 'USD')!;
      expect(r).toEqual({
        base: 'BTC',
        quote: 'USD',
        rate: expected,
        time: us('00:00:00.5'),
        kind: 'direct',
        fresh: true,
        path: ['BTC', 'USD'],
      });
      const ex = s.engine.explainPair('BTC', 'USD')!;
      expect(ex.used.map((m) => m.weight)).toEqual(weights);
      expect(ex.weighting).toBe(weighting);
      expect(ex.passive_fallback).toBe(false);
      expect(ex.outliers).toBeNull(); // n = 2: rule 11 does not run
    });
  }

  it('explains each market used (price, q, V, w, share, age)', () => {
    const s = new Scenario().feed(rows).to('00:00:01');
    const ex = s.engine.explainPair('BTC', 'USD')!;
    expect(ex).toMatchObject({
      tick: '2024-01-01T00:00:01.0000000Z',
      rate: 101.2,
      time: '2024-01-01T00:00:00.5000000Z',
      fresh: true,
      rank: 0,
    });
    expect(ex.used[0]).toEqual({
      symbol_id: 'A_SPOT_BTC_USD',
      exchange_id: 'A',
      rank: 0,
      bid_price: 99,
      ask_price: 101,
      bid_size: 3,
      ask_size: 1,
      quote_time: '2024-01-01T00:00:00.5000000Z',
      quote_age_seconds: 0.5,
      volume: 2,
      price: 100,
      q: 4,
      weight: 8,
      weight_share: 0.4, // 8 / 20
    });
    expect(ex.used[1].weight_share).toBe(0.6); // 12 / 20
  });

  it('q = 0 on one market makes the whole pair use w = V, and says so', () => {
    // A: sizes 0 / 0 -> q = 0, V = 1, mid 100; B: q = 2 + 3 = 5, V = 3, mid 102
    // fall-back w = V: (1 * 100 + 3 * 102) / 4 = 406 / 4 = 101.5 (without it, A would weigh 0: 102)
    const s = new Scenario()
      .feed(`
        x 00:00:00.1 A true 0
        t 00:00:00.5 A_SPOT_BTC_USD 100 1
        t 00:00:00.5 B_SPOT_BTC_USD 100 3
        q 00:00:00.5 A_SPOT_BTC_USD 99 0 101 0
        q 00:00:00.5 B_SPOT_BTC_USD 101 2 103 3`)
      .to('00:00:01');
    expect(s.rate('BTC', 'USD')).toBe(101.5);
    const ex = s.engine.explainPair('BTC', 'USD')!;
    expect(ex.passive_fallback).toBe(true);
    expect(ex.used.map((m) => [m.q, m.weight])).toEqual([
      [0, 1],
      [5, 3],
    ]);
  });
});

describe('rule 5 through the engine', () => {
  it('keeps spread exactly 0.67 and discards 0.6700001, keeping the previous quote until it goes stale', () => {
    const s = new Scenario().feed(`
      x 00:00:00.1 A true 0
      t 00:00:00.5 A_SPOT_BTC_USD 200 1
      q 00:00:00.5 A_SPOT_BTC_USD 133 1 267 1`);
    s.to('00:00:01');
    // (267 - 133) / 200 = 0.67 exactly: kept, mid 200
    expect(s.rate('BTC', 'USD')).toBe(200);
    // bid 132.99999, ask 267.00001: 134.00002 / 200 = 0.6700001 -> discarded
    s.feed('q 00:00:01.5 A_SPOT_BTC_USD 132.99999 1 267.00001 1').to('00:00:02');
    expect(s.engine.rate('BTC', 'USD')).toMatchObject({ rate: 200, time: us('00:00:00.5'), fresh: true });
    expect(s.engine.getStats().quotesDiscarded).toBe(1);
    // Floats say 0.67 (ask 267.00000000000000001 is the float 267); exactly it is above: discarded.
    // 9.443 / 18.957 is exactly 0.67 though floats say 0.6700000000000002: kept, mid 14.2
    s.feed(['q 00:00:02.5 A_SPOT_BTC_USD 133 1 267.00000000000000001 1', 'q 00:00:02.6 A_SPOT_BTC_USD 9.443 1 18.957 1']).to('00:00:03');
    expect(s.engine.rate('BTC', 'USD')).toMatchObject({ rate: (9.443 + 18.957) / 2, time: us('00:00:02.6'), fresh: true });
    expect(s.engine.getStats().quotesDiscarded).toBe(2);
    // Only discarded quotes from now on (crossed at 00:01:00, wide at 00:05:00)
    s.feed(['q 00:01:00 A_SPOT_BTC_USD 101 1 99 1', 'q 00:05:00 A_SPOT_BTC_USD 50 1 150 1']);
    // tick 00:05:03: age 303 - 2.6 = 300.4 s: fresh
    s.to('00:05:03');
    expect(s.engine.rate('BTC', 'USD')!.fresh).toBe(true);
    // tick 00:05:04: age 301.4 s > 301 s: stale; the rate is carried (rule 13)
    s.to('00:05:04');
    expect(s.engine.rate('BTC', 'USD')).toMatchObject({ rate: 14.2, fresh: false, time: us('00:00:02.6') });
    expect(excludedReasons(s, 'BTC', 'USD')).toEqual({ A_SPOT_BTC_USD: 'stale' });
    expect(s.engine.getStats().quotesDiscarded).toBe(4);
  });

  it('keeps a locked book and discards a crossed one', () => {
    const s = new Scenario()
      .feed(`
        x 00:00:00.1 A true 0
        t 00:00:00.5 A_SPOT_BTC_USD 100 1
        t 00:00:00.5 B_SPOT_BTC_USD 100 1
        q 00:00:00.5 A_SPOT_BTC_USD 100 1 100 1
        q 00:00:00.5 B_SPOT_BTC_USD 101 1 99 1`)
      .to('00:00:01');
    // A locked at 100 (spread 0) is used; B crossed (spread -0.02) never had an accepted quote
    expect(s.rate('BTC', 'USD')).toBe(100);
    expect(excludedReasons(s, 'BTC', 'USD')).toEqual({ B_SPOT_BTC_USD: 'spread' });
    // a crossed quote on A changes nothing
    s.feed('q 00:00:01.5 A_SPOT_BTC_USD 101 1 99 1').to('00:00:02');
    expect(s.engine.rate('BTC', 'USD')).toMatchObject({ rate: 100, time: us('00:00:00.5') });
    expect(s.engine.getStats().quotesDiscarded).toBe(2);
  });
});

describe('rule 7 at the tick level', () => {
  it('age exactly 301 s is fresh, 301.000001 s is stale', () => {
    const s = new Scenario().feed(`
      x 00:00:00.1 A true 0
      t 00:00:00.5 A_SPOT_BTC_USD 100 1
      t 00:00:00.5 A_SPOT_ETH_USD 10 1
      q 00:00:00.999999 A_SPOT_ETH_USD 9 1 11 1
      q 00:00:01 A_SPOT_BTC_USD 99 1 101 1`);
    s.to('00:05:01');
    expect(s.engine.rate('BTC', 'USD')!.fresh).toBe(true); // age 300 s
    expect(s.engine.rate('ETH', 'USD')!.fresh).toBe(true); // age 300.000001 s
    s.to('00:05:02');
    // BTC: 302 - 1 = 301 s exactly: fresh. ETH: 302 - 0.999999 = 301.000001 s: stale (rate carried)
    expect(s.engine.rate('BTC', 'USD')).toMatchObject({ rate: 100, fresh: true });
    expect(s.engine.rate('ETH', 'USD')).toMatchObject({ rate: 10, fresh: false });
    const eth = s.engine.explainPair('ETH', 'USD')!;
    expect(eth.fresh).toBe(false);
    expect(eth.excluded[0]).toMatchObject({
      symbol_id: 'A_SPOT_ETH_USD',
      reason: 'stale',
      quote_age_seconds: 301.000001,
      detail: 'quote age 301.000001 s > 301 s',
    });
    expect(s.engine.explainPair('BTC', 'USD')!.used[0].quote_age_seconds).toBe(301);
    s.to('00:05:03');
    expect(s.engine.rate('BTC', 'USD')!.fresh).toBe(false); // 302 s
  });
});

describe('rule 8 through the engine: V at the 04:00 refresh', () => {
  it('excludes a trade exactly 24 h before the refresh and includes one 1 µs later', () => {
    const s = new Scenario().feed(`
      x 2024-01-01T03:59:59.9Z A true 0
      # exactly 24 h before R = 2024-01-02T04:00: out of V(R)
      t 2024-01-01T04:00:00Z A_SPOT_BTC_USD 100 1
      # 1 µs later: in
      t 2024-01-01T04:00:00.000001Z B_SPOT_BTC_USD 100 2
      t 2024-01-02T01:00:00Z A_SPOT_BTC_USD 100 3
      t 2024-01-02T01:00:00Z B_SPOT_BTC_USD 100 3
      q 2024-01-02T03:59:59Z A_SPOT_BTC_USD 99 1 101 1
      q 2024-01-02T03:59:59Z B_SPOT_BTC_USD 101 1 103 1
      # exactly at R: in (an event at T counts for tick T)
      t 2024-01-02T04:00:00Z A_SPOT_BTC_USD 100 4`);
    s.to('2024-01-02T03:59:59Z');
    // V from the 00:00 refresh, window (2024-01-01T00:00, 2024-01-02T00:00]: A = 1, B = 2; q = 2 each
    // w = 2, 4: (2 * 100 + 4 * 102) / 6 = 608 / 6
    expect(s.rate('BTC', 'USD')).toBe(608 / 6);
    expect(s.engine.explainPair('BTC', 'USD')!.used.map((m) => m.volume)).toEqual([1, 2]);
    s.to('2024-01-02T04:00:00Z');
    // V(R) over (2024-01-01T04:00, 2024-01-02T04:00]: A = 3 + 4 = 7 (the 1 at exactly R - 24 h is out),
    // B = 2 + 3 = 5. w = V q = 14, 10: (1400 + 1020) / 24 = 2420 / 24
    expect(s.engine.explainPair('BTC', 'USD')!.used.map((m) => m.volume)).toEqual([7, 5]);
    expect(s.rate('BTC', 'USD')).toBe(2420 / 24);
    expect(s.engine.getStats().refreshes).toBe(7); // T0 = 04:00 day 1, then 08:00 ... 04:00 day 2
  });

  it('V at an unaligned T0 counts only (T0 - 24 h, T0], even for trades logged out of order before T0', () => {
    // T0 = 2024-01-02T00:00:01; window (2024-01-01T00:00:01, 2024-01-02T00:00:01]. No tick is
    // computed before T0, so these older trades are not late.
    const s = new Scenario()
      .feed(`
        x 2024-01-02T00:00:00.5Z A true 0
        t 2024-01-02T00:00:00.6Z A_SPOT_BTC_USD 100 5
        t 2024-01-02T00:00:00.6Z B_SPOT_BTC_USD 100 1
        # 24 h + 0.3 s before T0: out (same 4 h bucket as the window's start)
        t 2024-01-01T00:00:00.7Z A_SPOT_BTC_USD 100 2
        # exactly 24 h before T0: out
        t 2024-01-01T00:00:01Z A_SPOT_BTC_USD 100 7
        # 24 h - 0.1 s before T0: in
        t 2024-01-01T00:00:01.1Z A_SPOT_BTC_USD 100 11
        # 32 h before T0: out, and must not evict the newer trade of B (same ring slot)
        t 2023-12-31T16:00:00.6Z B_SPOT_BTC_USD 100 3
        q 2024-01-02T00:00:00.6Z A_SPOT_BTC_USD 99 1 101 1
        q 2024-01-02T00:00:00.6Z B_SPOT_BTC_USD 103 1 105 1`)
      .to('2024-01-02T00:00:01Z');
    // V_A = 5 + 11 = 16, V_B = 1; q = 2: (32 * 100 + 2 * 104) / 34 = 3408 / 34
    expect(s.engine.explainPair('BTC', 'USD')!.used.map((m) => [m.symbol_id, m.volume])).toEqual([
      ['A_SPOT_BTC_USD', 16],
      ['B_SPOT_BTC_USD', 1],
    ]);
    expect(s.rate('BTC', 'USD')).toBe(3408 / 34);
    expect(s.engine.getStats().events.trade).toBe(6); // accepted and counted, just outside every window
  });

  it('a market with no trade by T0 waits for the next refresh', () => {
    const s = new Scenario().feed(`
      x 00:00:00.1 A true 0
      t 00:00:00.5 A_SPOT_BTC_USD 100 1
      q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1
      t 00:00:01.5 B_SPOT_BTC_USD 100 1
      q 00:00:01.5 B_SPOT_BTC_USD 109 1 111 1`);
    s.to('00:00:02');
    expect(s.rate('BTC', 'USD')).toBe(100);
    expect(s.engine.explainPair('BTC', 'USD')!.excluded[0]).toMatchObject({ symbol_id: 'B_SPOT_BTC_USD', reason: 'not_eligible' });
    s.feed(['q 03:59:59 A_SPOT_BTC_USD 99 1 101 1', 'q 03:59:59 B_SPOT_BTC_USD 109 1 111 1']).to('04:00:00');
    // both eligible at 04:00 with V = 1, q = 2: (100 + 110) / 2 = 105
    expect(s.rate('BTC', 'USD')).toBe(105);
  });
});

describe('rule 11 through the engine', () => {
  /** Markets X0..Xn-1 on BTC/USD, each at its own exchange: [bid, ask, V]; sizes 1 / 1. */
  const markets = (spec: [string, string, string][]) => {
    const rows = ['x 00:00:00.1 X0 true 0'];
    for (const [i, [bid, ask, v]] of spec.entries()) {
      rows.push(`t 00:00:00.5 X${i}_SPOT_BTC_USD ${bid} ${v}`, `q 00:00:00.5 X${i}_SPOT_BTC_USD ${bid} 1 ${ask} 1`);
    }
    return rows;
  };

  it('n = 2 never drops', () => {
    // mids 100 and 200, w = 2 each: (100 + 200) / 2 = 150
    const s = new Scenario()
      .feed(
        markets([
          ['99', '101', '1'],
          ['199', '201', '1'],
        ]),
      )
      .to('00:00:01');
    expect(s.rate('BTC', 'USD')).toBe(150);
    expect(s.engine.explainPair('BTC', 'USD')!.outliers).toBeNull();
  });

  it('n = 3: a small far market is dropped', () => {
    // mids 100, 100, 130; w = V q = 20, 20, 0.2 -> 130 beyond 3 sigma (|29.85| > 6.33): rate (2000 + 2000) / 40 = 100
    const spec: [string, string, string][] = [
      ['99', '101', '10'],
      ['99', '101', '10'],
      ['129', '131', '0.1'],
    ];
    const s = new Scenario().feed(markets(spec)).to('00:00:01');
    expect(s.engine.rate('BTC', 'USD')!.rate).toBe(100);
    const ex = s.engine.explainPair('BTC', 'USD')!;
    expect(ex.outliers).toMatchObject({ method: 'weighted_sigma', dropped: 1, sigmas: 3, exact: false });
    expect(ex.outliers!.centre).toBeCloseTo(4026 / 40.2, 10);
    expect(ex.used.length).toBe(2);
    expect(ex.excluded).toHaveLength(1);
    expect(ex.excluded[0]).toMatchObject({ symbol_id: 'X2_SPOT_BTC_USD', reason: 'outlier', price: 130 });
    expect(s.engine.pairs()[0].used).toBe(2);
    // with outliers 'none': (2000 + 2000 + 0.2 * 130) / 40.2 = 4026 / 40.2
    const none = new Scenario({ outliers: 'none' }).feed(markets(spec)).to('00:00:01');
    expect(none.rate('BTC', 'USD')).toBeCloseTo(4026 / 40.2, 12);
  });

  it('n = 10 equal weights, one market exactly at 3 sigma: kept, decided exactly', () => {
    // 9 locked books at 0.01 and one at 0.02, V = 1, q = 2: mu = 0.011, sigma = 0.003,
    // |0.02 - 0.011| = 0.009 = 3 sigma exactly (floats alone put it just beyond): kept.
    // rate = (9 * 0.01 + 0.02) / 10 = 0.011
    const spec: [string, string, string][] = Array.from({ length: 10 }, (_, i) =>
      i === 9 ? ['0.02', '0.02', '1'] : ['0.01', '0.01', '1'],
    );
    const s = new Scenario().feed(markets(spec)).to('00:00:01');
    const ex = s.engine.explainPair('BTC', 'USD')!;
    expect(ex.outliers).toMatchObject({ dropped: 0, exact: true });
    expect(ex.used).toHaveLength(10);
    expect(s.rate('BTC', 'USD')).toBeCloseTo(0.011, 15);
  });

  it('the exact fall-back uses the configured weights (every weighting, and the q = 0 fall-back)', () => {
    // equal weights under every option (V = 1, q = 2; microprice of a locked book is its price)
    const spec: [string, string, string][] = Array.from({ length: 10 }, (_, i) =>
      i === 9 ? ['0.02', '0.02', '1'] : ['0.01', '0.01', '1'],
    );
    for (const weighting of ['trade', 'passive', 'microprice'] as const) {
      const s = new Scenario({ weighting }).feed(markets(spec)).to('00:00:01');
      expect(s.engine.explainPair('BTC', 'USD')!.outliers, weighting).toMatchObject({ dropped: 0, exact: true });
      expect(s.rate('BTC', 'USD')).toBeCloseTo(0.011, 15);
    }
    // sizes 0 / 0 everywhere: q = 0, w = V = 1 for all
    const zero = markets(spec).map((r) => (r.startsWith('q ') ? r.replace(/ 1 (\S+) 1$/, ' 0 $1 0') : r));
    for (const weighting of ['trade_x_passive', 'microprice'] as const) {
      const s = new Scenario({ weighting }).feed(zero).to('00:00:01');
      const ex = s.engine.explainPair('BTC', 'USD')!;
      expect(ex.passive_fallback).toBe(true);
      expect(ex.outliers).toMatchObject({ dropped: 0, exact: true });
      expect(ex.used.map((m) => m.weight)).toEqual(Array(10).fill(1));
    }
  });

  // mids 100, 101, 102, 110 with equal weights (V = 1, q = 2)
  const four: [string, string, string][] = [
    ['99', '101', '1'],
    ['100', '102', '1'],
    ['101', '103', '1'],
    ['109', '111', '1'],
  ];
  const byMethod: [EngineConfig['outliers'], number, number][] = [
    // mu = 103.25, sigma = 3.96; 3 sigma = 11.9 > 6.75: nothing dropped
    ['weighted_sigma', 103.25, 4],
    // 110 vs the others (mu 101, sigma 0.816): 9 > 2.45, dropped: (100 + 101 + 102) / 3 = 101
    ['leave_one_out', 101, 3],
    // median 101.5, MAD 1, 3 * 1.4826 = 4.45 < 8.5: 110 dropped: 101
    ['mad', 101, 3],
    ['none', 103.25, 4],
  ];
  for (const [outliers, expected, used] of byMethod) {
    it(`outliers = ${outliers}: ${expected}`, () => {
      const s = new Scenario({ outliers }).feed(markets(four)).to('00:00:01');
      expect(s.rate('BTC', 'USD')).toBe(expected);
      expect(s.engine.explainPair('BTC', 'USD')!.used).toHaveLength(used);
    });
  }
});

describe('rule 9: rank', () => {
  it('uses only the top rank, and the next rank when the top ones are all stale', () => {
    const s = new Scenario().feed(`
      x 00:00:00.1 A true 2
      x 00:00:00.1 B true 1
      x 00:00:00.1 C true 1
      t 00:00:00.5 A_SPOT_BTC_USD 100 1
      t 00:00:00.5 B_SPOT_BTC_USD 100 1
      t 00:00:00.5 C_SPOT_BTC_USD 100 1
      q 00:00:00.5 A_SPOT_BTC_USD 109 1 111 1
      q 00:00:00.5 B_SPOT_BTC_USD 99 1 101 1
      q 00:00:00.5 C_SPOT_BTC_USD 101 1 103 1`);
    s.to('00:00:01');
    // only rank 2: A at 110
    expect(s.rate('BTC', 'USD')).toBe(110);
    let ex = s.engine.explainPair('BTC', 'USD')!;
    expect(ex.rank).toBe(2);
    expect(excludedReasons(s, 'BTC', 'USD')).toEqual({ B_SPOT_BTC_USD: 'rank', C_SPOT_BTC_USD: 'rank' });
    expect(ex.excluded[0].detail).toBe('rank 1 < 2');
    s.feed(['q 00:05:00 B_SPOT_BTC_USD 99 1 101 1', 'q 00:05:00 C_SPOT_BTC_USD 101 1 103 1']);
    s.to('00:05:01'); // A age 300.5 s: still fresh
    expect(s.rate('BTC', 'USD')).toBe(110);
    s.to('00:05:02'); // A age 301.5 s: stale -> rank 1: (100 + 102) / 2 = 101
    expect(s.rate('BTC', 'USD')).toBe(101);
    ex = s.engine.explainPair('BTC', 'USD')!;
    expect(ex.rank).toBe(1);
    expect(excludedReasons(s, 'BTC', 'USD')).toEqual({ A_SPOT_BTC_USD: 'stale' });
    expect(s.engine.pairs()[0]).toMatchObject({ rank: 1, used: 2, fresh: true });
    expect(s.engine.explain('BTC', 'USD').legs[0].rank).toBe(1);
  });
});

describe('rule 4: kill switch and restore', () => {
  const start = `
    x 00:00:00.1 A true 0
    t 00:00:00.5 A_SPOT_BTC_USD 100 1
    t 00:00:00.5 B_SPOT_BTC_USD 100 1
    q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1
    q 00:00:00.5 B_SPOT_BTC_USD 103 1 105 1`;

  it('removes the exchange from the next tick on and restores only markets eligible at the last refresh', () => {
    const s = new Scenario().feed(start).to('00:00:01');
    expect(s.rate('BTC', 'USD')).toBe(102); // (100 + 104) / 2
    s.feed('x 00:00:10.5 A false 0').to('00:00:10');
    expect(s.rate('BTC', 'USD')).toBe(102);
    s.to('00:00:11'); // the kill switch acts at the first tick after the event
    expect(s.rate('BTC', 'USD')).toBe(104);
    expect(s.engine.explainPair('BTC', 'USD')!.excluded[0]).toMatchObject({
      symbol_id: 'A_SPOT_BTC_USD',
      reason: 'not_legitimate',
      detail: 'exchange A is not legitimate',
    });
    // A_SPOT_ETH_USD becomes active after the T0 refresh
    s.feed(['t 00:00:15 A_SPOT_ETH_USD 10 1', 'q 00:00:15 A_SPOT_ETH_USD 9 1 11 1', 'x 00:00:20.5 A true 0']).to('00:00:21');
    // A_SPOT_BTC_USD was eligible at T0: back at once
    expect(s.rate('BTC', 'USD')).toBe(102);
    // A_SPOT_ETH_USD was not: it waits for 04:00
    expect(s.engine.rate('ETH', 'USD')).toBeUndefined();
    expect(excludedReasons(s, 'ETH', 'USD')).toEqual({ A_SPOT_ETH_USD: 'not_eligible' });
    s.feed('q 03:59:59 A_SPOT_ETH_USD 9 1 11 1').to('03:59:59');
    expect(s.engine.rate('ETH', 'USD')).toBeUndefined();
    s.to('04:00:00');
    expect(s.rate('ETH', 'USD')).toBe(10);
  });

  it('a market whose exchange was killed during a refresh waits for the next one after restore', () => {
    const s = new Scenario()
      .feed(start)
      .feed([
        'x 03:00:00 A false 0',
        'x 04:30:00 A true 0',
        'q 04:30:00 A_SPOT_BTC_USD 99 1 101 1',
        'q 04:30:00 B_SPOT_BTC_USD 103 1 105 1',
      ]);
    s.to('04:30:00');
    // at the 04:00 refresh A was not legitimate: not eligible, restored exchange does not bring it back
    expect(s.rate('BTC', 'USD')).toBe(104);
    expect(excludedReasons(s, 'BTC', 'USD')).toEqual({ A_SPOT_BTC_USD: 'not_eligible' });
    s.feed(['q 07:59:59 A_SPOT_BTC_USD 99 1 101 1', 'q 07:59:59 B_SPOT_BTC_USD 103 1 105 1']).to('08:00:00');
    expect(s.rate('BTC', 'USD')).toBe(102);
  });

  it('reads ranks at the tick', () => {
    const s = new Scenario().feed(start).to('00:00:01');
    expect(s.rate('BTC', 'USD')).toBe(102);
    s.feed('x 00:00:01.5 B true 5').to('00:00:02');
    expect(s.rate('BTC', 'USD')).toBe(104);
    expect(s.engine.explainPair('BTC', 'USD')!.rank).toBe(5);
  });
});

describe('rule 12 through the engine', () => {
  /** Locked-book markets: [symbol, price, V]. */
  const locked = (ex: string, spec: [string, string, string][]) => [
    ex,
    ...spec.flatMap(([sym, p, v]) => [`t 00:00:00.5 ${sym} ${p} ${v}`, `q 00:00:00.5 ${sym} ${p} 1 ${p} 1`]),
  ];

  it('BFS: equal hops -> highest lowest rank, then the smallest asset sequence', () => {
    const diamond = (rankA: number, rankB: number) =>
      new Scenario()
        .feed([
          `x 00:00:00.1 EA true ${rankA}`,
          ...locked(`x 00:00:00.1 EB true ${rankB}`, [
            ['EB_SPOT_X_B', '4', '1'],
            ['EB_SPOT_B_Y', '5', '1'],
            ['EA_SPOT_X_A', '2', '1'],
            ['EA_SPOT_A_Y', '3', '1'],
          ]),
        ])
        .to('00:00:01');
    // ranks 1 / 2: path X-B-Y (lowest rank 2 > 1): 4 * 5 = 20
    const hi = diamond(1, 2);
    expect(hi.engine.rate('X', 'Y')).toMatchObject({ rate: 20, kind: 'cross', path: ['X', 'B', 'Y'], fresh: true });
    const ex = hi.engine.explain('X', 'Y');
    expect(ex.kind).toBe('cross');
    expect(ex.legs.map((l) => [l.pair, l.rank, l.inverted])).toEqual([
      ['X/B', 2, false],
      ['B/Y', 2, false],
    ]);
    // equal ranks: X-A-Y (A < B): 2 * 3 = 6
    const eq = diamond(1, 1);
    expect(eq.engine.rate('X', 'Y')).toMatchObject({ rate: 6, path: ['X', 'A', 'Y'] });
    // and back: 1 / 3 * 1 / 2
    expect(eq.engine.rate('Y', 'X')).toMatchObject({ rate: (1 / 3) * (1 / 2), path: ['Y', 'A', 'X'], kind: 'cross' });
  });

  it('direct, inverse, identity, unreachable', () => {
    const s = new Scenario().feed(
      locked('x 00:00:00.1 E true 0', [
        ['E_SPOT_BTC_USD', '100', '1'],
        ['E_SPOT_ZZZ_WWW', '3', '1'],
      ]),
    );
    expect(s.engine.explain('BTC', 'USD')).toMatchObject({ kind: 'none', message: 'no tick has been computed yet', tick: null });
    expect(s.engine.rate('BTC', 'BTC')).toBeUndefined(); // no tick yet
    s.to('00:00:01');
    expect(s.engine.rate('BTC', 'USD')).toMatchObject({ rate: 100, kind: 'direct' });
    expect(s.engine.rate('USD', 'BTC')).toMatchObject({ rate: 1 / 100, kind: 'inverse', path: ['USD', 'BTC'] });
    const inv = s.engine.explain('USD', 'BTC');
    expect(inv).toMatchObject({ kind: 'inverse', rate: 0.01 });
    expect(inv.legs[0]).toMatchObject({ pair: 'BTC/USD', from: 'USD', to: 'BTC', inverted: true, rate: 0.01 });
    // rate(X, X) = 1 at the tick, also for an asset with no pair
    expect(s.engine.rate('BTC', 'BTC')).toEqual({
      base: 'BTC',
      quote: 'BTC',
      rate: 1,
      time: us('00:00:01'),
      kind: 'identity',
      fresh: true,
      path: ['BTC'],
    });
    expect(s.engine.explain('ETH', 'ETH')).toMatchObject({ kind: 'identity', rate: 1, time: '2024-01-01T00:00:01.0000000Z', legs: [] });
    // unreachable
    expect(s.engine.rate('BTC', 'ZZZ')).toBeUndefined();
    expect(s.engine.explain('BTC', 'ZZZ')).toMatchObject({
      kind: 'none',
      rate: null,
      path: [],
      reason: 'no_path',
      message: 'no path from BTC to ZZZ (rule 12): no listed pair links them, directly or through other assets',
    });
    expect(s.engine.explain('FOO', 'BTC').message).toBe('unknown asset "FOO"');
    expect(s.engine.explain('BTC', 'FOO').message).toBe('unknown asset "FOO"');
    expect(s.engine.explainPair('BTC', 'FOO')).toBeUndefined();
    expect(s.engine.explainPair('USD', 'BTC')).toBeUndefined(); // not listed that way
    // listing helpers
    expect(s.engine.assetIds()).toEqual(['BTC', 'USD', 'WWW', 'ZZZ']);
    expect(s.engine.listedPairs()).toEqual(['BTC/USD', 'ZZZ/WWW']);
    expect(s.engine.rates('BTC').map((r) => [r.quote, r.rate])).toEqual([['USD', 100]]);
    expect(s.engine.rates('USD', { filter: ['BTC', 'BTC', 'ZZZ'], invert: true }).map((r) => [r.quote, r.rate])).toEqual([['BTC', 100]]);
    expect(s.engine.graphModel().edges()).toEqual(['BTC~USD', 'WWW~ZZZ']);
    expect(s.engine.pairs().map((p) => [p.base, p.quote, p.rate, p.fresh])).toEqual([
      ['BTC', 'USD', 100, true],
      ['ZZZ', 'WWW', 3, true],
    ]);
  });

  it('both B/Q and Q/B listed: rank, then markets used, then the base that sorts first', () => {
    const run = (rows: string[]) => new Scenario().feed(rows).to('00:00:01').engine;
    // BTC/USD at 100, USD/BTC at 0.0125 (= 1 / 80)
    const btcusd = (ex: string) => [`t 00:00:00.5 ${ex}_SPOT_BTC_USD 100 1`, `q 00:00:00.5 ${ex}_SPOT_BTC_USD 100 1 100 1`];
    const usdbtc = (ex: string) => [`t 00:00:00.5 ${ex}_SPOT_USD_BTC 0.0125 1`, `q 00:00:00.5 ${ex}_SPOT_USD_BTC 0.0125 1 0.0125 1`];
    // rank: USD/BTC at rank 2 beats BTC/USD at rank 1
    let e = run(['x 00:00:00.1 E1 true 1', 'x 00:00:00.1 E2 true 2', ...btcusd('E1'), ...usdbtc('E2')]);
    expect(e.rate('BTC', 'USD')).toMatchObject({ rate: 80, kind: 'inverse' });
    expect(e.rate('USD', 'BTC')).toMatchObject({ rate: 0.0125, kind: 'direct' });
    // equal ranks: USD/BTC used 2 markets, BTC/USD 1
    e = run(['x 00:00:00.1 E1 true 0', ...btcusd('E1'), ...usdbtc('E2'), ...usdbtc('E3')]);
    expect(e.rate('BTC', 'USD')).toMatchObject({ rate: 80, kind: 'inverse' });
    // all equal: BTC sorts before USD -> BTC/USD
    e = run(['x 00:00:00.1 E1 true 0', ...btcusd('E1'), ...usdbtc('E2')]);
    expect(e.rate('BTC', 'USD')).toMatchObject({ rate: 100, kind: 'direct' });
    expect(e.rate('USD', 'BTC')).toMatchObject({ rate: 0.01, kind: 'inverse' });
  });

  it('layered: the volume-weighted mean over a diamond', () => {
    // X/A = 2 (V 10), A/Y = 3 (V 1): via A 6; X/B = 4 (V 10), B/Y = 1.25 (V 3): via B 5
    // price(Y) = (1 * 6 + 3 * 5) / (1 + 3) = 21 / 4 = 5.25
    const rows = locked('x 00:00:00.1 E true 0', [
      ['E_SPOT_X_A', '2', '10'],
      ['E_SPOT_A_Y', '3', '1'],
      ['E_SPOT_X_B', '4', '10'],
      ['E_SPOT_B_Y', '1.25', '3'],
    ]);
    const s = new Scenario({ crossMethod: 'layered' }).feed(rows).to('00:00:01');
    expect(s.engine.rate('X', 'Y')).toMatchObject({ rate: 5.25, kind: 'cross', fresh: true });
    const ex = s.engine.explain('X', 'Y');
    expect(ex.method).toBe('layered');
    expect(ex.legs.map((l) => l.pair).sort()).toEqual(['A/Y', 'B/Y']);
    // the default bfs takes X-A-Y: 6
    expect(new Scenario().feed(rows).to('00:00:01').rate('X', 'Y')).toBe(6);
  });
});
