/**
 * Partitioned replays (docs/methodology.md section 12, src/replay/partition.ts and the merge's
 * reference, src/reference/partitionMerge.ts): a log cut in
 * time, each partition warmed up over warmUpUs before its cut with the `exchange` and `symbol`
 * events before that window carried in, writes its whole state at its cut; the merged rate
 * changes equal a serial replay's, row for row. A short configuration keeps the warm-up window
 * (2 min 52 s) well inside the generated logs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/core/config.js';
import { createEngine, type Engine, type EngineListener, type PairRateChange } from '../../src/core/engine.js';
import { US_PER_SECOND } from '../../src/core/time.js';
import type { MetricEvent } from '../../src/core/metrics/events.js';
import { planCuts, warmUpUs } from '../../src/replay/partition.js';
import {
  mergeBuckets,
  mergeOwnMetricPoints,
  mergeRateChanges,
  type PartitionBucket,
  type PartitionChanges,
} from '../../src/reference/index.js';
import { type Log, logArb, TRACKED } from './arbitraries.js';

const SHORT = { maxRateAgeSeconds: 120, volumeWindowSeconds: 300, refreshEverySeconds: 60, staleAfterSeconds: 60 };

/** Periods of the tracked pairs: finer and coarser than the partitions. */
const PERIODS = ['1SEC', '10SEC', '1MIN', '5MIN', '1HRS'];

/** What an engine wrote: rate changes, OHLC buckets, own-metric points. */
interface Outputs {
  changes: PairRateChange[];
  buckets: PartitionBucket[];
  points: MetricEvent[];
}

/** A listener recording rate changes, OHLC buckets and own-metric points. */
function recording(): Outputs & { listener: EngineListener } {
  const out: Outputs = { changes: [], buckets: [], points: [] };
  const listener: EngineListener = {
    onPairRate: (c) => void out.changes.push({ ...c }),
    onBucket: (t, p, b) => void out.buckets.push({ track: `${t.base}/${t.quote}`, period: p.period_id, bucket: { ...b } }),
    onOwnMetrics: (b) => void out.points.push(...b.events()),
  };
  return { ...out, listener };
}

const track = (engine: Engine): void => {
  for (const [b, q] of TRACKED) engine.track(b, q, PERIODS);
};

function serial(log: Log): Outputs {
  const { changes, buckets, points, listener } = recording();
  const engine = createEngine({ ...log.config, ...SHORT }, listener);
  track(engine);
  for (const e of log.events) engine.apply(e);
  engine.advanceTo(log.end);
  engine.flush();
  return { changes, buckets, points };
}

/**
 * Partition [from, to) of the log (from undefined: the first; to undefined: the last), replayed
 * as a worker would: the metadata before its window, the clock there, the window's events.
 */
function partition(
  log: Log,
  from: number | undefined,
  to: number | undefined,
): PartitionChanges & { skipped: boolean; buckets: PartitionBucket[]; points: MetricEvent[] } {
  const config = { ...log.config, ...SHORT };
  const H = warmUpUs(resolveConfig(config));
  const events = log.events;
  const { changes, buckets, points, listener } = recording();
  const engine = createEngine(config, listener);
  // The OHLC of the partition's own ticks only: tracked from its first output tick.
  if (from === undefined) track(engine);
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
      track(engine);
      dumped = true;
    }
    engine.apply(e);
  }
  if (!dumped) {
    engine.advanceTo(from! - US_PER_SECOND);
    engine.emitAllAtNextTick();
    track(engine);
  }
  engine.advanceTo(to === undefined ? log.end : to - US_PER_SECOND);
  engine.flush();
  const lo = from ?? -Infinity;
  const hi = to ?? Infinity;
  return {
    from: from ?? lo,
    dumpsState: from !== undefined,
    changes: changes.filter((c) => c.tick >= lo && c.tick < hi),
    skipped: start > 0,
    buckets,
    points: points.filter((p) => p.time >= lo && p.time < hi),
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
  it('merged partitions write the rate changes, OHLC buckets and own metrics of a serial replay, row for row', () => {
    // What the logs exercised: partitions that skipped events, rows of the state written at a
    // cut, and of those the ones the merge kept.
    let skipped = 0;
    let dumped = 0;
    let kept = 0;
    let withBuckets = 0;
    fc.assert(
      fc.property(logArb({ maxSteps: 300 }), fc.integer({ min: 2, max: 5 }), fc.boolean(), fc.nat(), (log, n, atEvents, seed) => {
        const whole = serial(log);
        const want = withoutIds(whole.changes);
        // Evenly spaced cuts, or cuts at the tick right after some events (where rates change).
        const cuts = atEvents ? cutsAfterEvents(log, n, seed) : planCuts(log.first, log.end, n);
        const bounds = [undefined, ...cuts];
        const parts = bounds.map((from, k) => partition(log, from, cuts[k]));
        const merged = mergeRateChanges(parts);
        expect(merged).toEqual(want);
        expect(mergeBuckets(parts.map((p) => p.buckets))).toEqual(mergeBuckets([whole.buckets]));
        expect(mergeOwnMetricPoints(parts)).toEqual(whole.points);
        if (whole.buckets.length > 0) withBuckets++;
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
    expect(withBuckets).toBeGreaterThan(50);
  });
});
