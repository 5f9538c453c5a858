/**
 * The pair-major layout (docs/performance.md, tick/L) is a copy: whenever it is in use, every slot
 * holds exactly its market's exchange, eligibility, volume and committed quote, and each pair's
 * slots list its markets in the pair's order, through quotes, refreshes, symbol redefinitions and
 * snapshot restores.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, type Engine, restoreEngine } from '../../src/core/engine.js';
import type { EngineState } from '../../src/core/engine/state.js';
import { logArb } from './arbitraries.js';

const S = 1_000_000;

/** The engine's state (a private field: this test checks an internal invariant). */
function stateOf(e: Engine): EngineState {
  return (e as unknown as { state: EngineState }).state;
}

/** Checks the layout against the columns; returns the number of slots checked. */
function checkLayout(e: Engine): number {
  const s = stateOf(e);
  const M = s.markets;
  if (!M.layoutValid) return 0;
  const lists = s.pairs.markets;
  let slots = 0;
  for (let pr = 0; pr + 1 < M.pStart.length; pr++) {
    const from = M.pStart[pr];
    expect(M.pStart[pr + 1] - from).toBe(lists[pr].length);
    lists[pr].forEach((m, i) => {
      const sl = from + i;
      expect(M.pMarket[sl]).toBe(m);
      expect(M.slotOf[m]).toBe(sl);
      expect(M.pExchange[sl]).toBe(M.exchange[m]);
      expect(M.pEligible[sl]).toBe(M.eligible[m]);
      expect(M.pVolume[sl]).toBe(M.volume[m]);
      expect([...M.pq.subarray(5 * sl, 5 * sl + 5)]).toEqual([...M.mq.subarray(5 * m, 5 * m + 5)]);
      // The market's record keeps its slot and pair for the commit of staged quotes.
      const rec = (M as unknown as { rec: Int32Array }).rec;
      expect([rec[4 * m + 1], rec[4 * m + 2]]).toEqual([sl, pr]);
      slots++;
    });
  }
  return slots;
}

describe('pair-major layout', () => {
  it('always equals the market columns', () => {
    let checked = 0;
    fc.assert(
      fc.property(logArb(), fc.nat(), (log, cut) => {
        let engine = createEngine(log.config);
        const at = log.events.length > 0 ? cut % log.events.length : 0;
        log.events.forEach((ev, i) => {
          if (i === at) engine = restoreEngine(JSON.parse(JSON.stringify(engine.snapshot())));
          engine.apply(ev);
          checked += checkLayout(engine);
        });
        engine.advanceTo(log.end + 3 * S);
        checked += checkLayout(engine);
      }),
      { seed: 20261123, numRuns: 80 },
    );
    expect(checked).toBeGreaterThan(1000);
  });
});
