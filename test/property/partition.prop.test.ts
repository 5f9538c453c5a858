/**
 * Partitioned replays (docs/methodology.md section 12, src/replay/partition.ts): a log cut in
 * time, each partition warmed up over warmUpUs before its cut with the `exchange` and `symbol`
 * events before that window carried in, writes its whole state at its cut; the merged rate
 * changes equal a serial replay's, row for row. A short configuration keeps the warm-up window
 * (2 min 52 s) well inside the generated logs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/core/config.js';
import { createEngine, type PairRateChange } from '../../src/core/engine.js';
import { US_PER_SECOND } from '../../src/core/time.js';
import { mergeRateChanges, type PartitionChanges, planCuts, warmUpUs } from '../../src/replay/partition.js';
import { type Log, logArb } from './arbitraries.js';

const SHORT = { maxRateAgeSeconds: 120, volumeWindowSeconds: 300, refreshEverySeconds: 60, staleAfterSeconds: 60 };

function serial(log: Log): PairRateChange[] {
  const changes: PairRateChange[] = [];
  const engine = createEngine({ ...log.config, ...SHORT }, { onPairRate: (c) => void changes.push({ ...c }) });
  for (const e of log.events) engine.apply(e);
  engine.advanceTo(log.end);
  return changes;
}

/**
 * Partition [from, to) of the log (from undefined: the first; to undefined: the last), replayed
 * as a worker would: the metadata before its window, the clock there, the window's events.
 */
function partition(log: Log, from: number | undefined, to: number | undefined): PartitionChanges & { skipped: boolean } {
  const config = { ...log.config, ...SHORT };
  const H = warmUpUs(resolveConfig(config));
  const events = log.events;
  const changes: PairRateChange[] = [];
  const engine = createEngine(config, { onPairRate: (c) => void changes.push({ ...c }) });
  let start = 0;
  if (from !== undefined) {
    while (start < events.length && events[start].time < from - H) start++;
    // Carried in: the exchange and symbol events before the window, and the replay clock there
    // (the log is in time order: the ticks before the window's first event's time).
    for (let i = 0; i < start; i++) if (events[i].type === 'exchange' || events[i].type === 'symbol') engine.apply(events[i]);
    if (start > 0 && engine.lastTickTime !== undefined) engine.advanceTo(events[start - 1].time - 1);
  }
  let dumped = from === undefined;
  for (let i = start; i < events.length; i++) {
    const e = events[i];
    if (to !== undefined && e.time > to - US_PER_SECOND) break;
    if (!dumped && e.time > from! - US_PER_SECOND) {
      engine.advanceTo(from! - US_PER_SECOND);
      engine.emitAllAtNextTick();
      dumped = true;
    }
    engine.apply(e);
  }
  if (!dumped) {
    engine.advanceTo(from! - US_PER_SECOND);
    engine.emitAllAtNextTick();
  }
  engine.advanceTo(to === undefined ? log.end : to - US_PER_SECOND);
  const lo = from ?? -Infinity;
  const hi = to ?? Infinity;
  return {
    from: from ?? lo,
    dumpsState: from !== undefined,
    changes: changes.filter((c) => c.tick >= lo && c.tick < hi),
    skipped: start > 0,
  };
}

/** Up to n - 1 cuts at the first tick after events picked by `seed` (increasing, after the first tick). */
function cutsAfterEvents(log: Log, n: number, seed: number): number[] {
  const ticks = new Set<number>();
  for (let k = 1; k < n; k++) {
    const e = log.events[(seed * k * 7919) % log.events.length];
    ticks.add(Math.ceil((e.time + 1) / US_PER_SECOND) * US_PER_SECOND);
  }
  const first = Math.ceil(log.first / US_PER_SECOND) * US_PER_SECOND;
  return [...ticks].filter((c) => c > first && c <= log.end).sort((a, b) => a - b);
}

const withoutIds = (cs: PairRateChange[]) => cs.map((c) => ({ ...c, pair: -1 }));

describe('partitioned replays (section 12)', () => {
  it('merged partitions write the rate changes of a serial replay, row for row', () => {
    // What the logs exercised: partitions that skipped events, rows of the state written at a
    // cut, and of those the ones the merge kept.
    let skipped = 0;
    let dumped = 0;
    let kept = 0;
    fc.assert(
      fc.property(logArb({ maxSteps: 300 }), fc.integer({ min: 2, max: 5 }), fc.boolean(), fc.nat(), (log, n, atEvents, seed) => {
        const want = withoutIds(serial(log));
        // Evenly spaced cuts, or cuts at the tick right after some events (where rates change).
        const cuts = atEvents ? cutsAfterEvents(log, n, seed) : planCuts(log.first, log.end, n);
        const bounds = [undefined, ...cuts];
        const parts = bounds.map((from, k) => partition(log, from, cuts[k]));
        const merged = mergeRateChanges(parts);
        expect(merged).toEqual(want);
        for (const p of parts.slice(1)) {
          if (p.skipped) skipped++;
          dumped += p.changes.filter((c) => c.tick === p.from).length;
          kept += merged.filter((c) => c.tick === p.from).length;
        }
      }),
      { seed: 42, numRuns: 100 },
    );
    expect(skipped).toBeGreaterThan(100);
    expect(kept).toBeGreaterThan(20);
    expect(dumped).toBeGreaterThan(kept + 20);
  });
});
