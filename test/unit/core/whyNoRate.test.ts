/**
 * engine.whyNoRate(base, quote) and the `none` explanation: when rate(base, quote) is undefined,
 * the first reason in the order of the checks (docs/methodology.md section 6), one hand-written
 * log per reason.
 */
import { describe, expect, it } from 'vitest';
import { restoreEngine } from '../../../src/core/engine.js';
import { Scenario } from '../../helpers/scenario.js';

const BN = 'BINANCE_SPOT_BTC_USD';
const KR = 'KRAKEN_SPOT_BTC_USD';
const CB = 'COINBASE_SPOT_BTC_USD';

/** A scenario fed with `rows` and ticked through `to`. */
function at(rows: string, to: string, config = {}): Scenario {
  return new Scenario(config).feed(rows).to(to);
}

describe('engine.whyNoRate', () => {
  it('no_tick before any event; unknown_asset for an asset no event named', () => {
    const s = new Scenario();
    expect(s.engine.whyNoRate('BTC', 'USD')).toEqual({ reason: 'no_tick', message: 'no tick has been computed yet' });
    s.feed(`t 00:00:00 ${BN} 100 1`).to('00:00:05');
    expect(s.engine.whyNoRate('BTC', 'EUR')).toEqual({ reason: 'unknown_asset', message: 'unknown asset "EUR"' });
    expect(s.engine.whyNoRate('DOGE', 'USD')).toEqual({ reason: 'unknown_asset', message: 'unknown asset "DOGE"' });
  });

  it('not_eligible: trades after the last eligibility refresh wait for the next one, and it says when', () => {
    // What an embedder writes first: a quote, then trades, then more quotes. T0 = 00:00:01 (the
    // first event rounded up) refreshes eligibility before the trades: no market is eligible.
    const rows = `
      q 00:00:00.5 ${BN} 99 1 101 1
      t 00:00:01.2 ${BN} 100 1
      q 00:00:02 ${BN} 99 1 101 1`;
    const s = at(rows, '00:00:10');
    expect(s.rate('BTC', 'USD')).toBeUndefined();
    const why = {
      reason: 'not_eligible',
      pair: 'BTC/USD',
      next_refresh: '2024-01-01T04:00:00.0000000Z',
      message:
        'BTC/USD has no eligible market yet (rule 8: a market is used only after an eligibility refresh that saw its trades): ' +
        `${BN} traded only after the last refresh (2024-01-01T00:00:01.0000000Z); the next refresh is at 2024-01-01T04:00:00.0000000Z (every 4 h)`,
    };
    expect(s.engine.whyNoRate('BTC', 'USD')).toEqual(why);
    // The inverse asks for the same pair.
    expect(s.engine.whyNoRate('USD', 'BTC')).toEqual(why);
    // The explanation says the same, where it said "no path ... in the graph".
    expect(s.engine.explain('BTC', 'USD')).toEqual({
      asset_id_base: 'BTC',
      asset_id_quote: 'USD',
      tick: '2024-01-01T00:00:10.0000000Z',
      kind: 'none',
      rate: null,
      time: null,
      fresh: false,
      method: 'bfs',
      path: [],
      legs: [],
      ...why,
    });
    // Past the refresh, with a fresh quote, the rate is there and there is no reason.
    s.feed(`q 04:00:00.5 ${BN} 99 1 101 1`).to('04:00:01');
    expect(s.rate('BTC', 'USD')).toBe(100);
    expect(s.engine.whyNoRate('BTC', 'USD')).toBeUndefined();
    const e = s.engine.explain('BTC', 'USD');
    expect(e.kind).toBe('direct');
    expect(Object.keys(e)).toEqual(['asset_id_base', 'asset_id_quote', 'tick', 'kind', 'rate', 'time', 'fresh', 'method', 'path', 'legs']);
  });

  it('not_eligible: each market says why (traded since, exchange not legitimate at the refresh, no trade at all)', () => {
    const s = at(
      `x 00:00:00 BINANCE false
       t 00:00:00 ${BN} 100 1
       q 00:00:01 ${BN} 99 1 101 1
       x 00:00:01 BINANCE true
       t 00:00:01.5 ${KR} 100 1
       q 00:00:01.5 ${KR} 99 1 101 1
       q 00:00:01.5 ${CB} 99 1 101 1`,
      '00:00:10',
      { refreshEverySeconds: 3600, volumeWindowSeconds: 7200 },
    );
    expect(s.engine.whyNoRate('BTC', 'USD')).toEqual({
      reason: 'not_eligible',
      pair: 'BTC/USD',
      next_refresh: '2024-01-01T01:00:00.0000000Z',
      message:
        'BTC/USD has no eligible market yet (rule 8: a market is used only after an eligibility refresh that saw its trades): ' +
        `${KR} traded only after the last refresh (2024-01-01T00:00:00.0000000Z); ` +
        `the exchange of ${BN} was not legitimate at the last refresh (rule 4); ` +
        `${CB} had no trade in the 2 h before the last refresh, nor since; ` +
        'the next refresh is at 2024-01-01T01:00:00.0000000Z (every 1 h)',
    });
  });

  it('not_legitimate: eligible at the refresh, its exchange killed since', () => {
    const s = at(
      `t 00:00:00 ${BN} 100 1
       x 00:00:00.5 BINANCE false
       q 00:00:01 ${BN} 99 1 101 1`,
      '00:00:10',
    );
    expect(s.engine.whyNoRate('BTC', 'USD')).toEqual({
      reason: 'not_legitimate',
      pair: 'BTC/USD',
      message: `BTC/USD: its eligible markets (${BN}) are on exchanges not legitimate now (rule 4): BINANCE`,
    });
  });

  it('stale: eligible, but every accepted quote older than 301 s (a rate that never came, or expired)', () => {
    // Eligible from the 04:00 refresh on, when its only quote is 4 h old: never a rate.
    const never = at(`q 00:00:00.5 ${BN} 99 1 101 1\nt 00:00:01.2 ${BN} 100 1`, '04:00:00');
    expect(never.rate('BTC', 'USD')).toBeUndefined();
    expect(never.engine.whyNoRate('BTC', 'USD')).toEqual({
      reason: 'stale',
      pair: 'BTC/USD',
      message:
        'BTC/USD: the quotes of its eligible markets are stale (rule 7: a quote is used while at most 301 s old): ' +
        `the newest, of ${BN} at 2024-01-01T00:00:00.5000000Z, is 14399.5 s old at the tick`,
    });
    const expired = at(`t 00:00:00 ${BN} 100 1\nq 00:00:00 ${BN} 99 1 101 1`, '00:10:00', { maxRateAgeSeconds: 60 });
    expect(expired.rate('BTC', 'USD')).toBeUndefined();
    expect(expired.engine.whyNoRate('BTC', 'USD')).toEqual({
      reason: 'stale',
      pair: 'BTC/USD',
      message:
        'BTC/USD: the quotes of its eligible markets are stale (rule 7: a quote is used while at most 301 s old): ' +
        `the newest, of ${BN} at 2024-01-01T00:00:00.0000000Z, is 600 s old at the tick`,
    });
  });

  it('the rule 13 example of docs/methodology.md: the rate expired after 24 h, not_eligible or stale', () => {
    const rows = `
      t 00:00:00 KRAKEN_SPOT_SOL_USD 100 5
      t 00:00:00 BINANCE_SPOT_SOL_USD 101 5
      q 00:00:09.999999 BINANCE_SPOT_SOL_USD 100.9 1 101.1 1
      q 00:00:10 KRAKEN_SPOT_SOL_USD 99.9 1 100.1 1`;
    // No trade after the first second: the refresh at 2024-01-02T00:00:00 left both markets out.
    const s = at(rows, '2024-01-02T00:00:10Z');
    expect(s.rate('SOL', 'USD')).toBe(100);
    s.to('2024-01-02T00:00:11Z');
    expect(s.rate('SOL', 'USD')).toBeUndefined();
    expect(s.engine.whyNoRate('SOL', 'USD')).toMatchObject({ reason: 'not_eligible', next_refresh: '2024-01-02T04:00:00.0000000Z' });
    expect(s.engine.whyNoRate('SOL', 'USD')?.message).toContain(
      'BINANCE_SPOT_SOL_USD and KRAKEN_SPOT_SOL_USD had no trade in the 24 h before the last refresh, nor since',
    );
    // With a trade of Kraken's in the window of that refresh, Kraken stays eligible: its quote is stale.
    const traded = at(`${rows}\nt 12:00:00 KRAKEN_SPOT_SOL_USD 100 1`, '2024-01-02T00:00:11Z');
    expect(traded.rate('SOL', 'USD')).toBeUndefined();
    expect(traded.engine.whyNoRate('SOL', 'USD')).toMatchObject({ reason: 'stale', pair: 'SOL/USD' });
    expect(traded.engine.whyNoRate('SOL', 'USD')?.message).toMatch(
      /the newest, of KRAKEN_SPOT_SOL_USD at 2024-01-01T00:00:10.0000000Z, is 86401 s old at the tick$/,
    );
  });

  it('stale comes before spread: one market stale, the other with every quote discarded', () => {
    const s = at(
      `t 00:00:00 ${BN} 100 1
       t 00:00:00 ${KR} 100 1
       q 00:00:00 ${BN} 99 1 101 1
       q 00:00:00 ${KR} 50 1 150 1`,
      '00:10:00',
      { maxRateAgeSeconds: 60 },
    );
    expect(s.engine.whyNoRate('BTC', 'USD')?.reason).toBe('stale');
    // A market that is not eligible does not hide the stage the eligible ones reached.
    const mixed = at(`t 00:00:00 ${BN} 100 1\nq 00:00:00 ${BN} 99 1 101 1\nq 00:00:00.5 ${CB} 99 1 101 1`, '00:10:00', {
      maxRateAgeSeconds: 60,
    });
    expect(mixed.engine.whyNoRate('BTC', 'USD')?.reason).toBe('stale');
  });

  it('spread: every quote so far discarded; no_quote: none yet', () => {
    const spread = at(`t 00:00:00 ${BN} 100 1\nq 00:00:00 ${BN} 50 1 150 1`, '00:00:10');
    expect(spread.engine.whyNoRate('BTC', 'USD')).toEqual({
      reason: 'spread',
      pair: 'BTC/USD',
      message: `BTC/USD: every quote of its eligible markets (${BN}) so far had a spread outside [0, 0.67] (rule 5), so none has an accepted quote`,
    });
    const none = at(`t 00:00:00 ${BN} 100 1`, '00:00:10');
    expect(none.engine.whyNoRate('BTC', 'USD')).toEqual({
      reason: 'no_quote',
      pair: 'BTC/USD',
      message: `BTC/USD: its eligible markets (${BN}) have no quote yet`,
    });
  });

  it('rank: the top rank gives no weight (V x q below the smallest float) and rule 9 leaves the lower rank out', () => {
    const rows = `
      x 00:00:00 BINANCE true 2
      t 00:00:00 ${BN} 100 1e-170
      q 00:00:00 ${BN} 99 1e-170 101 1e-170`;
    const s = at(`${rows}\nt 00:00:00 ${KR} 100 1\nq 00:00:00 ${KR} 99 1 101 1`, '00:00:05');
    expect(s.rate('BTC', 'USD')).toBeUndefined();
    expect(s.engine.whyNoRate('BTC', 'USD')).toEqual({
      reason: 'rank',
      pair: 'BTC/USD',
      message: `BTC/USD: its markets of the top rank 2 (${BN}) give a total weight of 0 (rule 6), and rule 9 leaves out those of lower rank (${KR})`,
    });
    // Alone, the same market is zero_weight.
    const alone = at(rows, '00:00:05');
    expect(alone.engine.whyNoRate('BTC', 'USD')).toEqual({
      reason: 'zero_weight',
      pair: 'BTC/USD',
      message: `BTC/USD: the weights of its fresh markets (${BN}) sum to 0 (rule 6)`,
    });
  });

  it('no_path: no listed pair links the assets; a cross rate names the pair without a rate on its path', () => {
    const rows = `
      t 00:00:00 ${BN} 100 1
      q 00:00:00 ${BN} 99 1 101 1
      t 00:00:00 KRAKEN_SPOT_ETH_EUR 2000 1
      q 00:00:00 KRAKEN_SPOT_ETH_EUR 1999 1 2001 1
      t 00:00:00 KRAKEN_SPOT_SOL_BTC 0.002 1
      q 00:00:00 KRAKEN_SPOT_SOL_BTC 0.00199 1 0.00201 1
      q 00:00:00.5 KRAKEN_SPOT_ETH_USD 1999 1 2001 1
      t 00:00:01.5 KRAKEN_SPOT_ETH_USD 2000 1`;
    const s = at(rows, '00:00:10');
    expect(s.rate('SOL', 'USD')).toBeCloseTo(0.2);
    expect(s.engine.whyNoRate('SOL', 'USD')).toBeUndefined();
    expect(s.engine.whyNoRate('SOL', 'EUR')).toMatchObject({
      reason: 'not_eligible',
      pair: 'ETH/USD',
      next_refresh: '2024-01-01T04:00:00.0000000Z',
    });
    expect(s.engine.whyNoRate('SOL', 'EUR')?.message).toMatch(
      /^on the path SOL -> BTC -> USD -> ETH -> EUR \(the fewest hops through listed pairs\), ETH\/USD has no eligible market yet/,
    );
    const apart = at(`t 00:00:00 ${BN} 100 1\nq 00:00:00 ${BN} 99 1 101 1\nt 00:00:00 KRAKEN_SPOT_ETH_EUR 2000 1`, '00:00:10');
    expect(apart.engine.whyNoRate('BTC', 'EUR')).toEqual({
      reason: 'no_path',
      message: 'no path from BTC to EUR (rule 12): no listed pair links them, directly or through other assets',
    });
  });

  it('a restored engine (what a replay database explains with) gives the same reasons', () => {
    const s = at(`q 00:00:00.5 ${BN} 99 1 101 1\nt 00:00:01.2 ${BN} 100 1`, '00:00:10');
    const restored = restoreEngine(JSON.parse(JSON.stringify(s.engine.snapshot())));
    expect(restored.whyNoRate('BTC', 'USD')).toEqual(s.engine.whyNoRate('BTC', 'USD'));
    expect(restored.explain('BTC', 'USD')).toEqual(s.engine.explain('BTC', 'USD'));
  });
});
