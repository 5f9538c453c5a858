/**
 * A tracked pair whose own market stops quoting loses its rate (its quote goes stale) and is fed
 * a cross rate (docs/methodology.md section 5): the tracking keeps what it fed such a pair only
 * while no edge of the graph is derived again, so when a leg of the cross path moves, the pair's
 * feed moves with it, at every tick, computed, skipped as quiet one by one (a listener that wants
 * each tick) or skipped as one run.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../../../src/core/engine.js';
import type { OhlcBucket } from '../../../../src/core/ohlc.js';
import { ev, us } from '../../../helpers/scenario.js';

/** A quote is stale after 7 s (its market left out); a rate expires after 30 s. */
const CLOCK = { staleAfterSeconds: 7, maxRateAgeSeconds: 30 };

/**
 * ETH/EUR quoted once, at the start; ETH/USD and EUR/USD every 5 s for four minutes, ETH/USD
 * moving from 2100 to 2200 at 00:02:00.
 */
function rows(): string[] {
  const out = ['x 00:00:00.1 A true 0'];
  for (const m of ['ETH_EUR 1899 1 1901 1', 'ETH_USD 2099 1 2101 1', 'EUR_USD 1.09 100 1.11 100']) {
    const [sym, bid] = m.split(' ');
    out.push(`t 00:00:00.5 A_SPOT_${sym} ${bid} 1`);
    out.push(`q 00:00:00.5 A_SPOT_${m}`);
  }
  for (let s = 5; s < 240; s += 5) {
    const mm = String(Math.floor(s / 60)).padStart(2, '0');
    const ss = String(s % 60).padStart(2, '0');
    const eth = s >= 120 ? '2199 1 2201 1' : '2099 1 2101 1';
    out.push(`q 00:${mm}:${ss} A_SPOT_ETH_USD ${eth}`);
    out.push(`q 00:${mm}:${ss}.5 A_SPOT_EUR_USD 1.09 100 1.11 100`);
  }
  return out;
}

interface Run {
  /** The 1SEC buckets of ETH/EUR, in order. */
  buckets: OhlcBucket[];
  /** Ticks at which ETH/EUR's rate was a cross rate, and fresh. */
  crossTicks: number;
}

function run(mode: 'every second' | 'each tick' | 'runs'): Run {
  const buckets: OhlcBucket[] = [];
  let crossTicks = 0;
  let engine: Engine | undefined;
  const onTick = (T: number): void => {
    const r = engine!.rate('ETH', 'EUR');
    const open = engine!.openBuckets(engine!.trackedPairs()[0]).find((b) => b.period.period_id === '1SEC')?.bucket;
    const at = open !== undefined && open.start === T ? open : undefined;
    if (r?.fresh) {
      expect(at?.close, `ETH/EUR at ${T}`).toBe(r.rate);
      if (r.kind === 'cross') crossTicks++;
    } else expect(at, `ETH/EUR at ${T}: fed with no fresh rate`).toBeUndefined();
  };
  engine = createEngine(CLOCK, {
    onBucket: (_t, p, b) => void (p.period_id === '1SEC' && buckets.push(b)),
    ...(mode === 'runs' ? {} : { onTick }),
  });
  engine.setTickEverySecond(mode === 'every second');
  engine.track('ETH', 'EUR', ['1SEC']);
  for (const row of rows()) engine.apply(ev(row));
  engine.advanceTo(us('00:05:00'));
  engine.flush();
  return { buckets, crossTicks };
}

describe('a tracked pair fed a cross rate', () => {
  it('follows the cross rate when a leg moves, at every tick, whether ticks are computed, skipped one by one or as runs', () => {
    const every = run('every second');
    const each = run('each tick');
    const runs = run('runs');
    // Its own market is quoted once: 7 s on, its quote is stale, and ETH/EUR a cross rate through USD.
    expect(every.crossTicks).toBeGreaterThan(150);
    expect(each.crossTicks).toBe(every.crossTicks);
    const close = (b: OhlcBucket[], at: string) => b.find((x) => x.start === us(at))?.close;
    // 2100 / 1.1 before ETH/USD moved, 2200 / 1.1 after.
    expect(close(every.buckets, '00:01:00')).toBeCloseTo(2100 / 1.1, 6);
    expect(close(every.buckets, '00:03:00')).toBeCloseTo(2200 / 1.1, 6);
    expect(each.buckets).toEqual(every.buckets);
    expect(runs.buckets).toEqual(every.buckets);
  });
});
