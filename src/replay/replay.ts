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
import type { Engine, EngineListener } from '../core/engine.js';
import type { EngineConfig } from '../core/config.js';
import { DEFAULT_STORED_PERIODS } from '../core/periods.js';
import { FileSpill } from '../io/binSpill.js';
import { RateFileWriter } from '../io/rateFile.js';
import { listedInputs } from '../io/inputs.js';
import { PathList, type Paths } from '../io/pathList.js';
import { defaultThreads } from '../io/batchSource.js';
import { watchInputs } from '../io/inputWatch.js';
import { heapBudgetOf } from '../io/heapBudget.js';
import type { SourceFormat } from '../io/source.js';
import type { VendorTime } from '../io/vendorCsv.js';
import { CHUNK_POINTS } from '../io/metricChunks.js';
import { ReplayStore, type ReplayCheckpoint } from '../io/store.js';
import { Driver, parsePairSpec, type ReplayProgress } from './driver.js';
import { newReplayState, type ReplayState } from './driverState.js';
import { validateReplayOptions } from './options.js';
import { PartitionRun, type PartitionStart } from './partitionRun.js';
import { fileSequence, mergedFiles } from './recordSource.js';
import { runSummary, type ReplaySummary } from './summary.js';
import { EventTimeTicks } from './ticks.js';
import { XrateError } from '../core/errors.js';

export type { ReplayProgress } from './driver.js';
export type { CarriedState, PartitionStart } from './partitionRun.js';
export type { OwnedTotals, ReplaySummary } from './summary.js';

/** Options of {@link replay}. */
export interface ReplayOptions {
  /**
   * Event logs, read in this order (or merged by time: `merge`); a directory stands for the event
   * logs under it, read recursively in path order (src/io/inputs.ts).
   */
  inputs: string[];
  /**
   * The files each of `inputs` stands for, as the caller listed them (`expandEach(inputs)` or
   * `listInputs(inputs).each`, src/io/inputs.ts): read, and watched, as listed. Default: listed at
   * the start of the run.
   */
  listed?: readonly Paths[];
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
  /**
   * Continue from this snapshot (of a replay of the same inputs) instead of from their start,
   * writing no database (a chart's replay of a short range near the end of a long log:
   * src/replay/chart.ts). Not with `db` or `resume`.
   */
  resumeFrom?: ReplayCheckpoint;
  /** Records per batch (one database transaction each). */
  batchSize?: number;
  /**
   * Threads reading each input (src/io/batchSource.ts `openBatchSource`): 1 reads in the
   * replay's thread; more, file reads, gunzip and parsing in a worker thread. Default: the cores
   * available (`defaultThreads`, os.availableParallelism). With `merge`, from 3 on, one worker reads
   * every vendor file ahead of the merge (src/io/readAhead.ts); below, the replay's thread reads
   * them (on two cores the worker cost more than it saved). Not with `workers` yet.
   */
  threads?: number;
  /**
   * Keep the process's heap near its live size with full collections between batches
   * (src/io/heapBudget.ts): what `xrate replay` does, whose process is the replay's alone. Off by
   * default: in a process that holds more than the replay, each collection would cost that much.
   * A number is the budget's floor in MB (default 64, and {@link MERGE_HEAP_FLOOR_MB} for a
   * `merge`): the heap is not collected on purpose below it.
   */
  heapBudget?: boolean | number;
  /**
   * Compute xrate's own metrics and store them with the log's (docs/methodology.md section 9).
   * Default: on when the replay writes a database (`db`).
   */
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

/**
 * The heap budget's floor of a merge, MB (`heapBudget: true`; src/io/heapBudget.ts): a merge of a
 * year of vendor files keeps 20-30 MB alive in its thread (its files in columns, src/io/pathList.ts),
 * and the default floor of 64 MB let its heap hold as much again of garbage. At 32 MB, a merge of
 * 179,103 files into a database peaked lower in the same time (docs/performance.md).
 */
const MERGE_HEAP_FLOOR_MB = 32;

/**
 * Replays event logs through a new engine (or one resumed from a snapshot).
 *
 * @throws XrateErrors for bad usage or unreadable inputs (a missing file, a CSV without a
 * header); bad lines inside a log never throw.
 * @example
 * ```ts
 * const summary = await replay({ inputs: ['fixtures/demo/demo.ndjson.gz'], db: 'out/xrate.sqlite' });
 * summary.engine.rate('BTC', 'USD');
 * ```
 */
export async function replay(given: ReplayOptions): Promise<ReplaySummary> {
  // Directories stand for the files under them: the run's inputs are those files.
  const each = listedInputs(given);
  // The files, kept in columns (src/io/pathList.ts): a year of vendor files is 180,000 paths.
  const files = PathList.concat(each);
  const opts: ReplayOptions = given.listed === undefined ? given : { ...given, listed: undefined };
  // What the run relies on in its inputs, checked once they are read (a changed input fails the run).
  // One budget for the run: the watch's marks, then the driver's batches.
  const budget = heapBudgetOf(opts.heapBudget === true && opts.merge ? MERGE_HEAP_FLOOR_MB : opts.heapBudget);
  const watch = watchInputs(given.inputs, each, budget && (() => void budget.check()));
  const now = opts.now ?? (() => Date.now());
  const started = now();
  // The options of the replay's mode only (src/replay/options.ts: the command line's check too).
  validateReplayOptions({ ...opts, inputs: undefined });
  if (files.length === 0) throw new XrateError('usage', 'no event log given');
  const part = opts.partition;
  const periods = opts.periods ?? DEFAULT_STORED_PERIODS;
  const trackSpecs = opts.track?.map(parsePairSpec);

  // A partition's database is thrown away if the partition fails: it needs no WAL (ReplayStore.open).
  // Else the batches are written by a thread of their own (src/io/writerThread.ts).
  // Own metric points are gathered over batches (written at each snapshot at the latest).
  const store = opts.db
    ? ReplayStore.open(opts.db, { scratch: part !== undefined, writerThread: part === undefined, ownChunkPoints: CHUNK_POINTS })
    : undefined;
  const rateFile = opts.out ? new RateFileWriter(opts.out) : undefined;
  /** The run's driver, once made (its spill closed at the end of a partition's run). */
  let made: Driver | undefined;
  let binsOnDisk: FileSpill | undefined;
  try {
    if (opts.resumeFrom && (store || opts.resume)) throw new XrateError('usage', 'resumeFrom replays write no database');
    // The snapshot's trade bins on disk until the driver has restored its engine from them.
    binsOnDisk = opts.resume ? new FileSpill() : undefined;
    let cp = opts.resume ? store!.latestSnapshot(undefined, { packed: true, store: binsOnDisk }) : opts.resumeFrom;
    if (opts.resume && !cp)
      throw new XrateError('conflict', `nothing to resume: "${opts.db}" has no snapshot (run with --snapshot-every first)`, {
        field: '--resume',
      });
    const st: ReplayState = cp ? (cp.driver as ReplayState) : newReplayState();
    const partition = part ? new PartitionRun(part, !!cp) : undefined;
    const resumed = cp && { input: cp.input, line: cp.line, final: cp.final };
    const driver = new Driver({
      inputs: files,
      state: st,
      marks: st,
      windowState: st,
      reorderWindowUs: opts.reorderWindowUs,
      resume: cp,
      config: opts.config,
      store,
      rateFile,
      listener: opts.listener,
      ownMetrics: opts.ownMetrics ?? opts.db !== undefined,
      clear: 'first-batch',
      from: opts.from,
      track: trackSpecs,
      periods,
      snapshotEveryUs: opts.snapshotEveryUs,
      ticks: new EventTimeTicks({ to: opts.to, tailUs: opts.tailUs }),
      partition,
      heapBudget: budget,
      onProgress: opts.onProgress,
      progressEveryMs: opts.progressEveryMs,
      now,
      started,
    });
    made = driver;
    // Restored: the snapshot is not held for the run (a day of a dense log's trade bins is tens of megabytes).
    cp = undefined;
    binsOnDisk?.close();
    const engine = driver.engine;
    opts.onEngine?.(engine);
    const summaryNow = (resumed: boolean, alreadyComplete: boolean): ReplaySummary =>
      runSummary(files, driver.ingest.totals(), engine, { started, ended: now() }, { resumed, alreadyComplete });
    if (resumed?.final) return summaryNow(true, true);

    // The run's options as stored: what shapes its outputs (not how many threads read them, nor the heap's upkeep),
    // its inputs apart (the row's own column: a year of vendor files lists 180,000 paths, stored once).
    driver.beginRun({
      ...opts,
      inputs: undefined,
      listener: undefined,
      onProgress: undefined,
      now: undefined,
      heapBudget: undefined,
      onEngine: undefined,
      threads: undefined,
      resumeFrom: undefined,
    });
    try {
      driver.start();
      // Reading and parsing in a worker thread by default; a partition's own thread reads its window
      // (its siblings keep the other cores busy).
      const threads = opts.threads ?? (part ? 1 : defaultThreads());
      const open = { format: opts.format, batchSize: opts.batchSize, maxLineBytes: opts.maxLineBytes, time: opts.time, threads };
      const start = resumed ? { input: resumed.input, line: resumed.line + 1 } : partition?.start;
      await driver.consume(opts.merge ? mergedFiles(files, open, driver.keepHeap) : fileSequence(files, open, start));
      // An input that changed while it was read: the run is not complete (src/io/inputWatch.ts).
      watch.check();
      driver.finish();
    } catch (e) {
      driver.failRun(e);
      throw e;
    }

    const summary = summaryNow(!!resumed, false);
    partition?.summarize(summary, driver.ingest, st.eventsRead, st.stopped);
    driver.finishRun(summary, summary.durationMs);
    return summary;
  } finally {
    // A partition's engine goes with its run (its summary gives counts): its spill files close now.
    if (part) made?.closeSpill();
    binsOnDisk?.close();
    if (rateFile) await rateFile.close();
    store?.close();
  }
}
