/**
 * What a partition of a partitioned replay (docs/parallel.md) adds to the replay driver: the state
 * it carries in before its window, the counts of its own lines, the pairs it tracks from its cut,
 * and the state it reports at the first records of later windows. The loop is the driver's
 * (driver.ts); this is the partition's bookkeeping around it.
 *
 * @module
 */
import type { Engine } from '../core/engine.js';
import type { XrateEvent } from '../core/types.js';
import { parsePairSpec } from './driver.js';
import type { Ingest } from './ingest.js';
import { noOwnedCounts, type OwnedTotals, ownedCounts, type ReplaySummary, subtractCounts } from './summary.js';

/** Where a partition starts reading and what it carries in (see {@link ReplayOptions.partition}). */
export interface PartitionStart {
  /** The first record to read: input index, and line (0: the input's start). */
  start: { input: number; line: number };
  /** The `exchange` and `symbol` events read before `start`, in order. */
  metadata: readonly XrateEvent[];
  /** The latest event time read before `start`. */
  clockUs?: number;
  /** The symbol ids named before `start` (markets a serial replay knows there). */
  markets?: readonly string[];
  /**
   * Pairs (`B/Q`) to track from the cut besides those auto-tracked: the pairs a serial replay
   * tracks by then, which had a rate before the window (docs/parallel.md, "Tracked pairs").
   */
  track?: readonly string[];
  /**
   * Where to report the state a later partition carries in ({@link ReplaySummary.carried}): the
   * first records of later windows that this partition reads, in reading order.
   */
  reportAt?: readonly { input: number; line: number }[];
  /**
   * Whether its final snapshot keeps the engine's trade bins (default true). A partition before
   * the last is told false: the merge takes the final engine's bins from the last partition alone.
   */
  finalBins?: boolean;
}

/**
 * The state a serial replay has just before a record (see {@link PartitionStart.reportAt}), as
 * this partition knows it: the `exchange` and `symbol` events accepted before, the latest time of
 * an accepted event, and the markets known.
 */
export interface CarriedState {
  at: { input: number; line: number };
  metadata: XrateEvent[];
  clockUs?: number;
  markets: string[];
}

/** One partition's run: its carried state in, its counts, tracks and reports out. */
export class PartitionRun {
  /** The state later partitions carry in, reported where their windows start (docs/parallel.md). */
  private readonly reportAt: readonly { input: number; line: number }[];
  private nextReport = 0;
  private readonly carried: CarriedState[] = [];
  private readonly acceptedMetadata: XrateEvent[];
  private ownedFrom: OwnedTotals | undefined;
  private trackedAtCut: string[] | undefined;

  constructor(
    readonly part: PartitionStart,
    resumed: boolean,
  ) {
    this.reportAt = !resumed ? (part.reportAt ?? []) : [];
    this.acceptedMetadata = this.reportAt.length > 0 ? [...part.metadata] : [];
  }

  /** Whether the final snapshot keeps the trade bins ({@link PartitionStart.finalBins}). */
  get finalBins(): boolean {
    return this.part.finalBins !== false;
  }

  /** The first record to read: the window's start (line 0 is the input's start). */
  get start(): { input: number; line: number } {
    return { input: this.part.start.input, line: Math.max(1, this.part.start.line) };
  }

  /** The carried metadata and clock, into a new engine (nothing is written before its output). */
  carryIn(engine: Engine): void {
    for (const e of this.part.metadata) engine.apply(e);
    for (const id of this.part.markets ?? []) engine.knowMarket(id);
    if (this.part.clockUs !== undefined) engine.advanceTo(this.part.clockUs - 1);
  }

  /** Whether reports are still to be made (only then are records and metadata watched). */
  get reporting(): boolean {
    return this.nextReport < this.reportAt.length;
  }

  /** Before the record at `line` of `input`: the state at each report position reached. */
  beforeRecord(input: number, line: number, lastEventTime: number | null, engine: Engine): void {
    const part = this.part;
    while (this.nextReport < this.reportAt.length) {
      const at = this.reportAt[this.nextReport];
      if (input < at.input || (input === at.input && line < at.line)) return;
      const latest = lastEventTime ?? undefined;
      const clock = part.clockUs === undefined ? latest : latest === undefined ? part.clockUs : Math.max(part.clockUs, latest);
      this.carried.push({
        at: { input: at.input, line: at.line },
        metadata: [...this.acceptedMetadata],
        clockUs: clock,
        markets: engine.marketIds(),
      });
      this.nextReport++;
    }
  }

  /** An event the engine accepted: kept while reporting when it is metadata. */
  accepted(event: XrateEvent): void {
    if (this.nextReport < this.reportAt.length && (event.type === 'exchange' || event.type === 'symbol')) this.acceptedMetadata.push(event);
  }

  /** The output turns on: the partition's own lines start with the `eventsRead`-th record read. */
  outputOn(ingest: Ingest, eventsRead: number): void {
    this.ownedFrom = ownedCounts(ingest.totals(), eventsRead);
  }

  /** After the driver's tracks: the pairs the partition is told to track too, and all it tracks at its cut. */
  track(engine: Engine, periods: readonly string[]): void {
    for (const spec of this.part.track ?? []) engine.track(...parsePairSpec(spec), periods);
    this.trackedAtCut = engine.trackedPairs().map((t) => `${t.base}/${t.quote}`);
  }

  /** The partition's part of the summary: owned counts (the event that stopped it is the next partition's), tracks, reports. */
  summarize(summary: ReplaySummary, ingest: Ingest, eventsRead: number, stopped: boolean): void {
    const end = ownedCounts(ingest.totals(), stopped ? eventsRead - 1 : eventsRead);
    summary.owned = this.ownedFrom === undefined ? noOwnedCounts() : subtractCounts(end, this.ownedFrom);
    summary.trackedAtCut = this.trackedAtCut ?? [];
    if (this.reportAt.length > 0) summary.carried = this.carried;
  }
}
