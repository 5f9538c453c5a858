/**
 * XRATE_MARKET_WEIGHT_SHARE tick by tick against a reference computed from `explainPair` alone:
 * after every tick, the share points the engine wrote at it are exactly the markets whose share
 * (its `weight_share` when used, 0 when left out) differs from the one last written, in
 * (exchange id, symbol id) order, with the same values. The engine keeps a changed share in its
 * pair's slot and reads it at the emit; markets first seen mid-log move the others' places, which
 * this holds to the simple computation.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, type Engine, type OwnMetricBatch } from '../../src/core/engine.js';
import { logArb } from './arbitraries.js';

const SHARE = 'XRATE_MARKET_WEIGHT_SHARE';

/**
 * Every market's share now, key "exchange|symbol": its `weight_share` where explain lists it as
 * used, 0 for every other SPOT market the engine has read (`seen`).
 */
function referenceShares(engine: Engine, seen: Iterable<string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const k of seen) out.set(k, 0);
  for (const pr of engine.pairs()) {
    const x = engine.explainPair(pr.base, pr.quote);
    if (x !== undefined) for (const u of x.used) out.set(`${u.exchange_id}|${u.symbol_id}`, u.weight_share ?? Number.NaN);
  }
  return out;
}

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

describe("xrate's own metrics: weight shares tick by tick", () => {
  it('are the changes of the reference shares, in order, at every tick', () => {
    let compared = 0;
    fc.assert(
      fc.property(logArb(), (log) => {
        let engine: Engine | undefined;
        const spot = new Map(log.markets.map((m) => [m.id, `${m.exchange}|${m.id}`]));
        const seen = new Set<string>();
        const written = new Map<string, number>();
        let points: [string, number][] = [];
        let batchTime = Number.NaN;
        const onOwnMetrics = (b: OwnMetricBatch): void => {
          batchTime = b.time;
          points = [];
          for (let i = 0; i < b.length; i++) if (b.metricId(i) === SHARE) points.push([`${b.exchangeId(i)}|${b.symbolId(i)}`, b.value[i]]);
        };
        const onTick = (T: number): void => {
          const got = batchTime === T ? points : [];
          const want: [string, number][] = [];
          for (const [k, v] of referenceShares(engine!, seen)) if (!Object.is(written.get(k), v)) want.push([k, v]);
          want.sort((a, b) => {
            const [xa, sa] = a[0].split('|');
            const [xb, sb] = b[0].split('|');
            return byCodeUnit(xa, xb) || byCodeUnit(sa, sb);
          });
          expect(got, `tick ${T}`).toEqual(want);
          for (const [k, v] of want) written.set(k, v);
          compared += want.length;
        };
        engine = createEngine(log.config, { onOwnMetrics, onTick });
        for (const e of log.events) {
          engine.apply(e);
          const k = 'symbolId' in e && e.symbolId !== undefined ? spot.get(e.symbolId) : undefined;
          if (k !== undefined) seen.add(k);
        }
        engine.advanceTo(log.end);
      }),
      { seed: 11, numRuns: 60 },
    );
    expect(compared).toBeGreaterThan(200);
  });
});
