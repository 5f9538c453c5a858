/**
 * What a tracked pair's aggregator is fed (docs/methodology.md section 5): at every tick, computed
 * or skipped as quiet, each tracked pair — direct, reversed, cross, identity — is fed the rate the
 * engine gives for it at that tick when that rate is fresh, and nothing when it is not. Checked
 * from outside the tracking: the open 1SEC bucket at each tick against `rate()`, on random logs
 * (the tracking keeps what it fed a pair while the pair's edge is not derived again: this holds
 * that to the engine's own answer).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/core/engine.js';
import { logArb } from './arbitraries.js';

const S = 1_000_000;

describe("a tracked pair's feed", () => {
  it('is, at every tick, the fresh rate the engine gives for the pair then, or nothing', () => {
    let fed = 0;
    let unfed = 0;
    let ticks = 0;
    fc.assert(
      fc.property(logArb(), fc.boolean(), (log, everySecond) => {
        const checkTick = (T: number): void => {
          ticks++;
          for (const tr of engine.trackedPairs()) {
            const r = engine.rate(tr.base, tr.quote);
            const open = engine.openBuckets(tr).find((b) => b.period.period_id === '1SEC')?.bucket;
            const at = open !== undefined && open.start === T ? open : undefined;
            if (r?.fresh) {
              expect(at, `${tr.base}/${tr.quote} at ${T}`).toBeDefined();
              expect(at!.timeClose).toBe(T);
              expect(Object.is(at!.close, r.rate), `${tr.base}/${tr.quote} at ${T}: ${at!.close} against ${r.rate}`).toBe(true);
              fed++;
            } else {
              expect(at, `${tr.base}/${tr.quote} at ${T}: fed with no fresh rate`).toBeUndefined();
              unfed++;
            }
          }
        };
        const engine: Engine = createEngine(log.config, { onTick: checkTick });
        // Every tick computed in full, or the quiet ones skipped (each still seen by onTick).
        engine.setTickEverySecond(everySecond);
        for (const [b, q] of [
          ['ETH', 'EUR'],
          ['EUR', 'BTC'],
          ['USD', 'ETH'],
          ['BTC', 'BTC'],
        ])
          engine.track(b, q, ['1SEC', '1MIN']);
        engine.trackDirectPairs(['1SEC', '1MIN']);
        for (const e of log.events) engine.apply(e);
        engine.advanceTo(log.end + 30 * S);
      }),
      { seed: 20261129, numRuns: 40 },
    );
    expect(ticks).toBeGreaterThan(1000);
    expect(fed).toBeGreaterThan(1000);
    expect(unfed).toBeGreaterThan(100);
  });
});
