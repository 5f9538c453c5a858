/**
 * An eligibility cadence that does not divide the volume window (13 s against 24 h) makes the
 * window's buckets 1 s long. The window then keeps each market's traded buckets only, so an engine
 * of a thousand markets stays small and its snapshot too (a ring of 86,415 buckets per market
 * made gigabytes and ran the snapshot out of memory), and a restored engine goes on exactly as
 * the one that never stopped.
 */
import { describe, expect, it } from 'vitest';
import { restoreEngine, type EngineSnapshot } from '../../../../src/core/engine.js';
import { Scenario } from '../../../helpers/scenario.js';

const MARKETS = 1000;

function rows(from: number, to: number): string {
  const out: string[] = [];
  for (let s = from; s < to; s++) {
    const hh = String(Math.floor(s / 3600)).padStart(2, '0');
    const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
    const ss = String(s % 60).padStart(2, '0');
    for (let k = s % 7; k < MARKETS; k += 7) {
      const sym = `E${k % 10}_SPOT_A${Math.floor(k / 10)}_USD`;
      out.push(`t ${hh}:${mm}:${ss}.5 ${sym} ${100 + (k % 13)} 0.${(s % 9) + 1}`);
      out.push(`q ${hh}:${mm}:${ss}.5 ${sym} ${99 + (k % 13)} 1 ${101 + (k % 13)} 1`);
    }
  }
  return out.join('\n');
}

describe('volume window with a cadence that does not divide it', () => {
  it('keeps a thousand markets and their snapshot small, and resumes exactly', () => {
    const config = { refreshEverySeconds: 13 };
    const exchanges = Array.from({ length: 10 }, (_, i) => `x 00:00:00.1 E${i} true 0`).join('\n');
    const whole = new Scenario(config).feed(exchanges).feed(rows(0, 60)).to('00:01:00');
    const snap = whole.engine.snapshot();
    expect(snap.volume.refreshUs).toBe(13_000_000);
    expect(snap.volume.markets).toBeDefined();
    // one entry per traded (market, second): about MARKETS * 60 / 7, not MARKETS * 86,415
    expect(snap.volume.index.length).toBeLessThanOrEqual(Math.ceil(MARKETS / 7) * 60);
    const text = JSON.stringify(snap);
    expect(text.length).toBeLessThan(20_000_000);
    const resumed = new Scenario(config, restoreEngine(JSON.parse(text) as EngineSnapshot));
    whole.feed(rows(60, 120)).to('00:02:00');
    resumed.feed(rows(60, 120)).to('00:02:00');
    expect(resumed.changes).toEqual(whole.changes.slice(whole.changes.length - resumed.changes.length));
    expect(resumed.changes.length).toBeGreaterThan(0);
    expect(JSON.stringify(resumed.engine.snapshot())).toBe(JSON.stringify(whole.engine.snapshot()));
    expect(resumed.engine.explain('A5', 'USD')).toEqual(whole.engine.explain('A5', 'USD'));
  });
});
