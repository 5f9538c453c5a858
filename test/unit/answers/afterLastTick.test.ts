/**
 * The answers after a live engine's last tick (src/answers/afterLastTick.ts): a replay answers as
 * its database, a followed log as of its last tick, a replica with its engine copied and advanced.
 */
import { describe, expect, it } from 'vitest';
import { AFTER_LAST_TICK, type DatabaseAnswers, type LiveContext } from '../../../src/answers/afterLastTick.js';
import type { RateSource } from '../../../src/answers/types.js';
import { restoreEngine } from '../../../src/core/engine.js';
import { EngineSource, PairTable } from '../../../src/replay/rateSources.js';
import { Scenario, us } from '../../helpers/scenario.js';

const ROWS = `
  x 00:00:00.1 A true 0
  t 00:00:00.5 A_SPOT_BTC_USD 100 1
  q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1
  t 00:00:00.5 A_SPOT_ETH_USD 10 1
  q 00:00:00.5 A_SPOT_ETH_USD 9 1 11 1`;

/** An engine at 00:00:05 and the context of a live provider over it (the database a fake recording its calls). */
function live(config = {}) {
  const s = new Scenario(config).feed(ROWS).to('00:00:05');
  const calls: string[] = [];
  const fromDb = new PairTable(us('00:00:09'), []);
  const db: DatabaseAnswers = {
    sourceFor: (at, what) => {
      calls.push(`sourceFor ${at} ${what}`);
      return fromDb;
    },
    explain: (base, quote, at) => {
      calls.push(`explain ${base}/${quote} ${at}`);
      return { kind: 'db' } as never;
    },
    symbols: (at) => {
      calls.push(`symbols ${at}`);
      return [];
    },
  };
  const current: RateSource = new EngineSource(s.engine);
  let version = 0;
  const ctx: LiveContext = { engine: s.engine, db, current: () => current, version: () => version };
  return { s, calls, fromDb, current, ctx, bump: () => version++ };
}

/** rate(base, quote) of a source, as computed. */
const rateOf = (src: RateSource, base: string, quote: string) => src.rate(base, quote)?.raw;

describe('after the last tick', () => {
  const at = us('00:00:09.5');
  const T = us('00:00:09');

  it('a replay answers as its database, with the time asked for', () => {
    const { calls, fromDb, ctx } = live();
    const after = AFTER_LAST_TICK.replay(ctx);
    expect(after.source(T, at, 'no rate for BTC/USD')).toBe(fromDb);
    expect(after.explain('BTC', 'USD', at, T)).toEqual({ kind: 'db' });
    expect(after.symbols(at, T, {})).toEqual([]);
    expect(calls).toEqual([`sourceFor ${at} no rate for BTC/USD`, `explain BTC/USD ${at}`, `symbols ${at}`]);
  });

  it('a followed log answers as of its last tick, with the engine as it is', () => {
    const { s, calls, current, ctx } = live();
    const after = AFTER_LAST_TICK.follow(ctx);
    expect(after.source(T, at, 'x')).toBe(current);
    const e = after.explain('btc', 'usd', at, T);
    expect(e).toMatchObject({ asset_id_base: 'BTC', asset_id_quote: 'USD' });
    expect(after.symbols(at, T, {})).toEqual(s.engine.symbols({}));
    expect(s.engine.lastTickTime).toBe(us('00:00:05'));
    expect(calls).toEqual([]);
  });

  it('a replica answers with its engine copied and advanced to T, the engine itself untouched', () => {
    const { s, calls, ctx, bump } = live();
    const after = AFTER_LAST_TICK.replica(ctx);
    const src = after.source(T, at, 'x');
    expect(src.tick).toBe(T);
    const copy = restoreEngine(s.engine.snapshot(), {});
    copy.advanceTo(T);
    expect(rateOf(src, 'BTC', 'USD')).toBe(copy.rate('BTC', 'USD')?.rate);
    expect(after.symbols(at, T, {})).toEqual(copy.symbols({}));
    expect(after.explain('BTC', 'USD', at, T)).toMatchObject({ asset_id_base: 'BTC', asset_id_quote: 'USD' });
    expect(s.engine.lastTickTime).toBe(us('00:00:05'));
    // The copy is kept while the replica applies nothing new, and made again once it has.
    expect(after.source(T, at, 'x')).toBe(src);
    s.feed('t 00:00:05.5 A_SPOT_BTC_USD 200 1\nq 00:00:05.5 A_SPOT_BTC_USD 199 1 201 1').to('00:00:06');
    bump();
    const again = after.source(T, at, 'x');
    expect(again).not.toBe(src);
    expect(rateOf(again, 'BTC', 'USD')).not.toBe(rateOf(src, 'BTC', 'USD'));
    expect(calls).toEqual([]);
  });

  it('a replica has no pair once every carried rate has expired (maxRateAge), as a replay database', () => {
    const { ctx } = live({ maxRateAgeSeconds: 60 });
    const after = AFTER_LAST_TICK.replica(ctx);
    const late = us('00:01:07');
    expect(rateOf(after.source(us('00:01:06'), us('00:01:06'), 'x'), 'BTC', 'USD')).toBeDefined();
    const none = after.source(late, late, 'x');
    expect(none.tick).toBe(late);
    expect(none.assets()).toEqual([]);
  });
});
