/**
 * What a replay did, written once: the summary a serial replay and a partitioned one return, the
 * counts a partition owns (its own lines), and their arithmetic (owned counts at a point, the
 * difference of two, the sum of the partitions', the totals of a merged run).
 *
 * @module
 */
import type { Engine } from '../core/engine.js';
import { flatList } from '../io/inputs.js';
import type { Paths } from '../io/pathList.js';
import { US_PER_SECOND } from '../core/time.js';
import type { RejectReason } from '../core/types.js';
import type { RunTotals } from './ingest.js';
import type { CarriedState } from './partitionRun.js';

/** What a partition counted of its own lines (see {@link ReplayOptions.partition}). */
export interface OwnedTotals {
  eventsRead: number;
  eventsAccepted: number;
  eventsRejected: number;
  rejectsByReason: Partial<Record<RejectReason, number>>;
  quotesDiscarded: number;
}

/** What a replay did (its totals are also stored in `runs`). */
export interface ReplaySummary extends RunTotals {
  inputs: string[];
  durationMs: number;
  eventsPerSecond: number;
  resumed: boolean;
  /** Peak resident set size of this process so far, MB (process.resourceUsage().maxRSS). */
  peakRssMb: number;
  /** True when --resume found the previous run already complete. */
  alreadyComplete: boolean;
  engine: Engine;
  /** With {@link ReplayOptions.partition}: the counts of the partition's own lines. */
  owned?: OwnedTotals;
  /** With {@link ReplayOptions.partition}: the pairs it tracked from its cut (`B/Q`). */
  trackedAtCut?: string[];
  /** With {@link PartitionStart.reportAt}: the state at each of those records that it read. */
  carried?: CarriedState[];
}

/**
 * The summary of a run over `inputs` with these totals, from `started` to `ended` (wall clock,
 * ms): its duration, events per second (of the records read) and the process's peak memory.
 * Inputs kept as columns (src/io/pathList.ts) become the summary's array when it is first read: a
 * command that reads no more than the totals makes no string of 180,000 paths at the run's end.
 */
export function runSummary(
  inputs: Paths,
  totals: RunTotals,
  engine: Engine,
  time: { started: number; ended: number },
  flags: { resumed: boolean; alreadyComplete: boolean },
): ReplaySummary {
  const durationMs = time.ended - time.started;
  const summary = {
    inputs: [] as string[],
    ...totals,
    durationMs,
    eventsPerSecond: durationMs > 0 ? (totals.eventsRead / durationMs) * 1000 : 0,
    resumed: flags.resumed,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    alreadyComplete: flags.alreadyComplete,
    engine,
  };
  if (Array.isArray(inputs)) summary.inputs = inputs;
  else {
    // A plain property once read (or set), in the place it has among the summary's.
    const settle = (list: string[]): string[] => {
      Object.defineProperty(summary, 'inputs', { value: list, enumerable: true, configurable: true, writable: true });
      return list;
    };
    Object.defineProperty(summary, 'inputs', {
      enumerable: true,
      configurable: true,
      get: () => settle(flatList([inputs])),
      set: settle,
    });
  }
  return summary;
}

/** No lines at all. */
export function noOwnedCounts(): OwnedTotals {
  return { eventsRead: 0, eventsAccepted: 0, eventsRejected: 0, rejectsByReason: {}, quotesDiscarded: 0 };
}

/** The line counts of a run's totals now, with `eventsRead` given. */
export function ownedCounts(t: RunTotals, eventsRead: number): OwnedTotals {
  return {
    eventsRead,
    eventsAccepted: t.eventsAccepted,
    eventsRejected: t.eventsRejected,
    rejectsByReason: { ...t.rejectsByReason },
    quotesDiscarded: t.quotesDiscarded,
  };
}

/** Counts `a` - `b`, by reason too (a reason left at 0 is dropped). */
export function subtractCounts(a: OwnedTotals, b: OwnedTotals): OwnedTotals {
  const byReason: Partial<Record<RejectReason, number>> = {};
  for (const [r, n] of Object.entries(a.rejectsByReason) as [RejectReason, number][]) {
    const d = n - (b.rejectsByReason[r] ?? 0);
    if (d !== 0) byReason[r] = d;
  }
  return {
    eventsRead: a.eventsRead - b.eventsRead,
    eventsAccepted: a.eventsAccepted - b.eventsAccepted,
    eventsRejected: a.eventsRejected - b.eventsRejected,
    rejectsByReason: byReason,
    quotesDiscarded: a.quotesDiscarded - b.quotesDiscarded,
  };
}

/** Counts `a` + `b`, by reason too. */
export function addCounts(a: OwnedTotals, b: OwnedTotals): OwnedTotals {
  const byReason = { ...a.rejectsByReason };
  for (const [r, n] of Object.entries(b.rejectsByReason) as [RejectReason, number][]) byReason[r] = (byReason[r] ?? 0) + n;
  return {
    eventsRead: a.eventsRead + b.eventsRead,
    eventsAccepted: a.eventsAccepted + b.eventsAccepted,
    eventsRejected: a.eventsRejected + b.eventsRejected,
    rejectsByReason: byReason,
    quotesDiscarded: a.quotesDiscarded + b.quotesDiscarded,
  };
}

/**
 * The totals of a run merged from partitions: the counts their own lines add up to, the ticks
 * from the first partition's first tick to the last one's last (one a second), and what the
 * merged database and engine hold.
 */
export function mergedTotals(
  owned: OwnedTotals,
  ticks: { firstTick: number | undefined; lastTick: number | undefined },
  outputs: { pairsWithRate: number; rateChanges: number; buckets: number },
): RunTotals {
  const { firstTick, lastTick } = ticks;
  return {
    ...owned,
    ticks: firstTick === undefined || lastTick === undefined ? 0 : (lastTick - firstTick) / US_PER_SECOND + 1,
    firstTick,
    lastTick,
    pairsWithRate: outputs.pairsWithRate,
    rateChanges: outputs.rateChanges,
    buckets: outputs.buckets,
  };
}
