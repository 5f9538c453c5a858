/**
 * The replay harness: streams event logs through the engine in event time and writes what it
 * computes (rate changes, OHLC buckets, rejects) to the replay database or a rate file.
 *
 * - Input: one or more logs (NDJSON plain or gzip, CSV, SQLite), read in order, streamed in
 *   batches; bad lines become rejects with their line number and raw text, never fatal.
 * - `from`: events before it are warm-up (applied, but no rate or OHLC output); at the first tick
 *   >= from every pair with a rate is written once so the output starts from a full state.
 * - `to`: events with time <= to are applied and ticks run through the last whole second <= to.
 *   Reading stops at the first (released) event after `to` that the engine accepts: the ticks up
 *   to `to` are computed first, exactly as an uninterrupted replay would, so nothing read later
 *   could change them. A rejected line moves no clock (docs/methodology.md section 2).
 * - Without `to`, ticks run through the last accepted event's second rounded up (so every event counts).
 * - `reorderWindowUs`: events are buffered and sorted within that window before the engine.
 * - Snapshots: every `snapshotEveryUs` of event time the engine and driver state are stored in the
 *   same transaction as the batch; `resume` continues from the newest snapshot and gives the same
 *   outputs as a run that was never stopped.
 *
 * @module
 */
import { HeapBudget } from './heapBudget.js';
import { createEngine, restoreEngine, type Engine, type EngineListener } from '../core/engine.js';
import type { EngineConfig } from '../core/config.js';
import { US_PER_SECOND } from '../core/time.js';
import type { RejectReason, XrateEvent } from '../core/types.js';
import { RateFileWriter } from '../io/rateFile.js';
import { expandInputs } from '../io/inputs.js';
import { watchInputs } from '../io/inputWatch.js';
import { mergeSources } from '../io/merge.js';
import { type EventSource, openSource, type SourceFormat, type SourceRecord } from '../io/source.js';
import type { VendorTime } from '../io/vendorCsv.js';
import { ReplayStore } from '../io/store.js';
import { Ingest, type IngestState, type RunTotals } from './ingest.js';
import { validateReplayOptions } from './options.js';
import { type Positioned, ReorderWindow } from './reorder.js';

/** OHLC periods stored by default for each tracked pair; any other period rolls up from these or, finer than all of them, is made from the pair's change series. */
export const DEFAULT_STORED_PERIODS: readonly string[] = Object.freeze(['1MIN', '1HRS', '1DAY']);

/** Progress of a running replay (see {@link ReplayOptions.onProgress}). */
export interface ReplayProgress {
  input: number;
  inputs: number;
  path: string;
  bytesRead: number;
  totalBytes: number;
  eventsRead: number;
  /** Newest event time read, µs. */
  eventTime: number | undefined;
  elapsedMs: number;
}

/**
 * Records per batch of each input of a merge: the merge holds one batch of every input at once, so
 * a small one keeps thousands of inputs within memory (src/io/merge.ts).
 */
const MERGE_INPUT_BATCH = 64;

/** Options of {@link replay}. */
export interface ReplayOptions {
  /**
   * Event logs, read in this order (or merged by time: `merge`); a directory stands for the event
   * logs under it, read recursively in path order (src/io/inputs.ts).
   */
  inputs: string[];
  /** Input format (default: from each file's name and first bytes). */
  format?: SourceFormat;
  /**
   * Merge all inputs by event time (ties: input order, then line) instead of reading them one after
   * another (src/io/merge.ts). Not with `resume`, `snapshotEveryUs` or `partition`.
   */
  merge?: boolean;
  /** Vendor files (CoinAPI, tardis): events take the receive time (default) or the exchange's. */
  time?: VendorTime;
  /** Start of output, µs (events before it are warm-up). */
  from?: number;
  /** End of the replay, µs. */
  to?: number;
  /** Engine configuration. */
  config?: Partial<EngineConfig>;
  /** Pairs whose OHLC is kept, as `BASE/QUOTE` (default: every direct pair as it gets a rate). */
  track?: string[];
  /** OHLC periods to keep per tracked pair (default {@link DEFAULT_STORED_PERIODS}). */
  periods?: readonly string[];
  /** Buffer and sort events within this many µs instead of rejecting them as late. */
  reorderWindowUs?: number;
  /** Write outputs to this SQLite database. */
  db?: string;
  /** Write rate changes to this NDJSON or CSV file instead of a database. */
  out?: string;
  /** Snapshot the engine into the database every this many µs of event time. */
  snapshotEveryUs?: number;
  /** Continue from the newest snapshot in `db`. */
  resume?: boolean;
  /** Records per batch (one database transaction each). */
  batchSize?: number;
  /**
   * Keep the process's heap near its live size with full collections between batches
   * (heapBudget.ts): what `xrate replay` does, whose process is the replay's alone. Off by
   * default: in a process that holds more than the replay, each collection would cost that much.
   */
  heapBudget?: boolean;
  /** Compute xrate's own metrics and store them with the log's (docs/methodology.md section 9). */
  ownMetrics?: boolean;
  /** Maximum line length, bytes of UTF-8 (default 1 MiB): a longer line is a `line_too_long` reject. */
  maxLineBytes?: number;
  /** With `to` past the end of the log, tick at most this far past the last event (default: all the way). */
  tailUs?: number;
  /** Called with progress at most every `progressEveryMs` (default 200). */
  onProgress?: (p: ReplayProgress) => void;
  progressEveryMs?: number;
  /** Extra engine listener (e.g. to collect buckets in memory). */
  listener?: EngineListener;
  /** Called with the engine once it is made, before any event (a listener that explains each tick reads it). */
  onEngine?: (engine: Engine) => void;
  /** Wall clock for run metadata and timing (injectable for tests). */
  now?: () => number;
  /**
   * Replay one partition of a partitioned replay (docs/parallel.md; src/replay/prescan.ts plans
   * them): read from `start` on, after applying the carried `metadata` events and setting the
   * clock to just after `clockUs`. With `from` (its cut) and `to` (the next cut - 1 µs). Its
   * rejects are stored from its first output on (the lines before belong to the partition
   * before), and {@link ReplaySummary.owned} counts its own lines.
   */
  partition?: PartitionStart;
}

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
 * What the replay driver carries between batches, stored as is in each snapshot (so the key order
 * of the new-run literal in {@link replay} is part of the stored bytes).
 */
interface DriverState extends IngestState {
  lastEventTime: number | null;
  lastSnapTick: number | null;
  seq: number;
  window: ReturnType<ReorderWindow['toJSON']> | null;
  stopped: boolean;
}

function parsePairSpec(spec: string): [string, string] {
  const parts = spec.split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1]) throw new Error(`xrate: bad pair "${spec}" (expected BASE/QUOTE, e.g. BTC/USD)`);
  return [parts[0].trim(), parts[1].trim()];
}

/**
 * Replays event logs through a new engine (or one resumed from a snapshot).
 *
 * @throws `xrate:` errors for bad usage or unreadable inputs (a missing file, a CSV without a
 * header); bad lines inside a log never throw.
 * @example
 * ```ts
 * const summary = await replay({ inputs: ['fixtures/demo/demo.ndjson.gz'], db: 'out/xrate.sqlite' });
 * summary.engine.rate('BTC', 'USD');
 * ```
 */
export async function replay(given: ReplayOptions): Promise<ReplaySummary> {
  // Directories stand for the files under them: the run's inputs are those files.
  const opts: ReplayOptions = given.inputs.length > 0 ? { ...given, inputs: expandInputs(given.inputs) } : given;
  // What the run relies on in its inputs, checked once they are read (a changed input fails the run).
  const watch = watchInputs(given.inputs, opts.inputs);
  const now = opts.now ?? (() => Date.now());
  const started = now();
  // The options of the replay's mode only (src/replay/options.ts: the command line's check too).
  validateReplayOptions({ ...opts, inputs: undefined });
  if (opts.inputs.length === 0) throw new Error('xrate: no event log given');
  const part = opts.partition;
  const periods = opts.periods ?? DEFAULT_STORED_PERIODS;
  const trackSpecs = opts.track?.map(parsePairSpec);

  // A partition's database is thrown away if the partition fails: it needs no WAL (ReplayStore.open).
  const store = opts.db ? ReplayStore.open(opts.db, { scratch: part !== undefined }) : undefined;
  const rateFile = opts.out ? new RateFileWriter(opts.out) : undefined;
  try {
    const cp = opts.resume ? store!.latestSnapshot() : undefined;
    if (opts.resume && !cp) throw new Error(`xrate: nothing to resume: "${opts.db}" has no snapshot (run with --snapshot-every first)`);
    const st: DriverState = cp
      ? (cp.driver as DriverState)
      : {
          outputOn: false,
          eventsRead: 0,
          rateChanges: 0,
          buckets: 0,
          lastEventTime: null,
          lastSnapTick: null,
          seq: 0,
          window: null,
          stopped: false,
        };
    const ingest = new Ingest({
      inputs: opts.inputs,
      state: st,
      store,
      rateFile,
      listener: opts.listener,
      batch: cp ? cp.batch : 0,
      // A new replay replaces the previous outputs, but only in the transaction of its first batch:
      // if the input turns out unreadable, the database keeps the last complete run's outputs.
      clearWithFirstBatch: !cp,
      ownMetrics: opts.ownMetrics,
      rejectsWithOutputOnly: part !== undefined,
      engine: (listener) => (cp ? restoreEngine(cp.engine, listener) : createEngine(opts.config ?? {}, listener)),
    });
    const engine = ingest.engine;
    opts.onEngine?.(engine);
    if (cp?.final) return summarize(ingest, st, opts.inputs, started, now(), true, true);

    const runId = ingest.beginRun(
      { ...opts, listener: undefined, onProgress: undefined, now: undefined, heapBudget: undefined, onEngine: undefined },
      started,
      !!cp,
    );
    if (store && cp) store.truncateAfter(cp.batch);
    let ownedFrom: OwnedTotals | undefined;
    let trackedAtCut: string[] | undefined;
    // The state later partitions carry in, reported where their windows start (docs/parallel.md).
    const reportAt = part && !cp ? (part.reportAt ?? []) : [];
    let nextReport = 0;
    const carried: CarriedState[] = [];
    const acceptedMetadata: XrateEvent[] = reportAt.length > 0 ? [...(part?.metadata ?? [])] : [];
    const report = (input: number, line: number): void => {
      while (nextReport < reportAt.length) {
        const at = reportAt[nextReport];
        if (input < at.input || (input === at.input && line < at.line)) return;
        const latest = st.lastEventTime ?? undefined;
        const clock = part?.clockUs === undefined ? latest : latest === undefined ? part.clockUs : Math.max(part.clockUs, latest);
        carried.push({
          at: { input: at.input, line: at.line },
          metadata: [...acceptedMetadata],
          clockUs: clock,
          markets: engine.marketIds(),
        });
        nextReport++;
      }
    };

    try {
      const window =
        opts.reorderWindowUs !== undefined && opts.reorderWindowUs > 0
          ? st.window
            ? ReorderWindow.fromJSON(opts.reorderWindowUs, st.window)
            : new ReorderWindow(opts.reorderWindowUs)
          : undefined;

      // A partition: the carried metadata and clock first (nothing is written before its output).
      if (part && !cp) {
        for (const e of part.metadata) engine.apply(e);
        for (const id of part.markets ?? []) engine.knowMarket(id);
        if (part.clockUs !== undefined) engine.advanceTo(part.clockUs - 1);
      }
      // A partition's own lines start with the event that turns its output on (counted then).
      const enableOutput = (byEvent = false): void => {
        if (st.outputOn) return;
        if (part) ownedFrom = ownedCounts(ingest, byEvent ? st.eventsRead - 1 : st.eventsRead);
        if (opts.from !== undefined) engine.advanceTo(opts.from - 1);
        // The positions of the warm-up, which were not written as read: the book's state (a
        // partition's warm-up is the partition before's, which wrote it).
        if (opts.from !== undefined && !part) ingest.writePositionBook();
        st.outputOn = true;
        engine.emitAllAtNextTick();
        if (trackSpecs) for (const [b, q] of trackSpecs) engine.track(b, q, periods);
        else engine.trackDirectPairs(periods);
        for (const spec of part?.track ?? []) engine.track(...parsePairSpec(spec), periods);
        if (part) trackedAtCut = engine.trackedPairs().map((t) => `${t.base}/${t.quote}`);
      };
      if (!cp && opts.from === undefined) enableOutput();

      // Applies an event released in time order, unless it is past `to` (which ends the replay).
      // Only an event the engine accepts moves the clock (docs/methodology.md section 2): a rejected
      // one past `to` or `from` is recorded and reading goes on, and the replay's last event time
      // (where its ticks end) is that of the last accepted event.
      const applyOne = (
        read: XrateEvent,
        input: number,
        rec: { line: number; raw: string; event?: XrateEvent; venue?: { exchange: string; symbol: string } },
      ): boolean => {
        // A tardis row still as read: read before the symbol event that maps it (a reorder window).
        const event = rec.venue === undefined || rec.event !== read ? read : ingest.atVenue(rec, read, rec.venue, input);
        if (event === undefined) return true;
        const t = event.time;
        if (opts.to !== undefined && t > opts.to && engine.accepts(event)) {
          engine.advanceTo(opts.to);
          st.stopped = true;
          return false;
        }
        if (!st.outputOn && opts.from !== undefined && t >= opts.from && engine.accepts(event)) enableOutput(true);
        if (ingest.applyEvent(event, input, rec) === undefined) {
          if (st.lastEventTime === null || t > st.lastEventTime) st.lastEventTime = t;
          if (nextReport < reportAt.length && (event.type === 'exchange' || event.type === 'symbol')) acceptedMetadata.push(event);
        }
        return true;
      };

      const startInput = cp ? cp.input : (part?.start.input ?? 0);
      const heap = opts.heapBudget ? new HeapBudget() : undefined;
      let lastProgress = 0;
      const progressEvery = opts.progressEveryMs ?? 200;
      /** One record of input `i`, read in replay order. */
      const handle = (rec: SourceRecord, i: number): void => {
        if (nextReport < reportAt.length) report(i, rec.line);
        const ev = ingest.parseRecord(rec, i, window !== undefined);
        if (ev === undefined) return;
        if (window) {
          const q: Positioned = { event: ev, input: i, line: rec.line, raw: rec.raw, seq: st.seq++ };
          if (ev === rec.event && rec.venue !== undefined) q.venue = rec.venue; // not mapped yet
          window.push(q, engine.accepts(ev));
          for (const q of window.releasable()) if (!applyOne(q.event, q.input, q)) break;
        } else applyOne(ev, i, rec);
      };
      const progress = (input: number, inputs: number, path: string, bytesRead: number, totalBytes: number): void => {
        if (!opts.onProgress) return;
        const t = now();
        if (t - lastProgress < progressEvery) return;
        lastProgress = t;
        opts.onProgress({
          input,
          inputs,
          path,
          bytesRead,
          totalBytes,
          eventsRead: st.eventsRead,
          eventTime: st.lastEventTime ?? undefined,
          elapsedMs: t - started,
        });
      };
      if (opts.merge) {
        // All inputs at once, by event time: one batch of each held at a time (src/io/merge.ts).
        const sources: EventSource[] = [];
        try {
          for (const path of opts.inputs) {
            sources.push(
              openSource(path, {
                format: opts.format,
                batchSize: MERGE_INPUT_BATCH,
                maxLineBytes: opts.maxLineBytes,
                time: opts.time,
                lean: true,
              }),
            );
          }
        } catch (e) {
          for (const src of sources) src.close();
          throw e;
        }
        const merged = mergeSources(sources, opts.batchSize);
        try {
          for await (const { records, inputs } of merged.batches()) {
            ingest.inBatch(() => {
              for (let k = 0; k < records.length && !st.stopped; k++) handle(records[k], inputs[k]);
            });
            if (rateFile) await rateFile.drained();
            heap?.check();
            progress(0, 1, opts.inputs[0], merged.bytesRead(), merged.totalBytes);
            if (st.stopped) break;
          }
        } finally {
          merged.close();
        }
      }
      for (let i = startInput; i < opts.inputs.length && !st.stopped && !opts.merge; i++) {
        const src = openSource(opts.inputs[i], {
          format: opts.format,
          batchSize: opts.batchSize,
          maxLineBytes: opts.maxLineBytes,
          time: opts.time,
          startLine: cp && i === cp.input ? cp.line + 1 : part && i === part.start.input ? Math.max(1, part.start.line) : 1,
        });
        try {
          for await (const records of src.batches()) {
            ingest.inBatch(() => {
              let lastLine = 0;
              for (const rec of records) {
                lastLine = rec.line;
                handle(rec, i);
                if (st.stopped) break;
              }
              const lt = engine.lastTickTime;
              if (store && opts.snapshotEveryUs !== undefined && lt !== undefined && !st.stopped) {
                if (st.lastSnapTick === null || lt - st.lastSnapTick >= opts.snapshotEveryUs) {
                  st.lastSnapTick = lt;
                  st.window = window ? window.toJSON() : null;
                  ingest.saveSnapshot({ input: i, line: lastLine, final: false, driver: st }, now());
                }
              }
            });
            if (rateFile) await rateFile.drained();
            heap?.check();
            progress(i, opts.inputs.length, opts.inputs[i], src.bytesRead(), src.totalBytes);
            if (st.stopped) break;
          }
        } finally {
          src.close();
        }
      }

      // An input that changed while it was read: the run is not complete (src/io/inputWatch.ts).
      watch.check();
      // End of input: drain the window, finish the ticks, flush OHLC, store the final state.
      ingest.inBatch(() => {
        if (window && !st.stopped) for (const q of window.drain()) if (!applyOne(q.event, q.input, q)) break;
        if (!st.outputOn && opts.from !== undefined) enableOutput();
        if (!st.stopped && st.lastEventTime !== null) {
          const end = Math.ceil(st.lastEventTime / US_PER_SECOND) * US_PER_SECOND;
          if (opts.to !== undefined) engine.advanceTo(Math.min(opts.to, opts.tailUs !== undefined ? end + opts.tailUs : Infinity));
          else engine.advanceTo(end);
        }
        engine.flush();
        if (store) {
          st.window = null;
          ingest.saveSnapshot({ input: opts.inputs.length, line: 0, final: true, driver: st }, now());
        }
      });
    } catch (e) {
      if (store && runId !== undefined) store.failRun(runId, (e as Error).message.replace(/^xrate: /, ''), new Date(now()).toISOString());
      throw e;
    }

    const summary = summarize(ingest, st, opts.inputs, started, now(), !!cp, false);
    if (part) {
      // The event that stopped a partition (past `to`) was read, and is the next partition's.
      const end = ownedCounts(ingest, st.stopped ? st.eventsRead - 1 : st.eventsRead);
      summary.owned = ownedFrom === undefined ? ownedCounts(undefined, 0) : subtractCounts(end, ownedFrom);
      summary.trackedAtCut = trackedAtCut ?? [];
      if (reportAt.length > 0) summary.carried = carried;
    }
    ingest.finishRun(summary, { finishedAt: now(), durationMs: summary.durationMs, stopped: st.stopped });
    return summary;
  } finally {
    if (rateFile) await rateFile.close();
    store?.close();
  }
}

/** The line counts of an ingest now, with `eventsRead` given (no ingest: all zero). */
function ownedCounts(ingest: Ingest | undefined, eventsRead: number): OwnedTotals {
  if (ingest === undefined) return { eventsRead: 0, eventsAccepted: 0, eventsRejected: 0, rejectsByReason: {}, quotesDiscarded: 0 };
  const t = ingest.totals();
  return {
    eventsRead,
    eventsAccepted: t.eventsAccepted,
    eventsRejected: t.eventsRejected,
    rejectsByReason: { ...t.rejectsByReason },
    quotesDiscarded: t.quotesDiscarded,
  };
}

/** Counts `a` - `b`, by reason too (a reason left at 0 is dropped). */
function subtractCounts(a: OwnedTotals, b: OwnedTotals): OwnedTotals {
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

function summarize(
  ingest: Ingest,
  st: DriverState,
  inputs: string[],
  started: number,
  ended: number,
  resumed: boolean,
  alreadyComplete: boolean,
): ReplaySummary {
  const durationMs = ended - started;
  return {
    inputs,
    ...ingest.totals(),
    durationMs,
    eventsPerSecond: durationMs > 0 ? (st.eventsRead / durationMs) * 1000 : 0,
    resumed,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    alreadyComplete,
    engine: ingest.engine,
  };
}
