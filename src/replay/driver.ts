/**
 * The one replay driver: what `xrate replay`, a partition of a partitioned replay, a followed log
 * (`serve --follow LOG`) and a replica (`serve --nats`) share once their records are read.
 * It is fed by a record source (recordSource.ts; the replica's is in src/distributed) and moved by
 * a tick policy (ticks.ts: event time, or the wall clock).
 *
 * It owns:
 * - the ingest path (ingest.ts): the engine, its sinks, one transaction per source batch;
 * - the driver state and its snapshot shape (driverState.ts), the last accepted event's time, and
 *   the snapshot cadence: after a batch, when the engine's last tick is `snapshotEveryUs` past the
 *   last snapshot's;
 * - a reorder window (events buffered and sorted before the engine);
 * - the output switch: on from the start, or at the first accepted event at or after `from`
 *   (`emitAllAtNextTick`, then the tracked pairs); a partition's bookkeeping (partitionRun.ts);
 * - the stop at `to`: at the first released event past it that the engine accepts, after the
 *   ticks through `to`. Only an event the engine accepts moves the clock (docs/methodology.md
 *   section 2);
 * - the end of the input: the window drained, the last ticks, OHLC flushed, the final snapshot;
 * - the run record (begun, finished or failed), and the stop of a live run.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { type BatchColumns, ROW_OTHER } from '../core/batch.js';
import { createEngine, type Engine, type EngineListener, restoreEngine } from '../core/engine.js';
import { FileSpill } from '../io/binSpill.js';
import { messageOf, XrateError } from '../core/errors.js';
import type { EngineConfig } from '../core/config.js';
import type { Reject, XrateEvent } from '../core/types.js';
import type { RateFileWriter } from '../io/rateFile.js';
import type { Paths } from '../io/pathList.js';
import type { SourceRecord } from '../io/source.js';
import type { ReplayCheckpoint, ReplayStore } from '../io/store.js';
import type { DriverMarks, WindowState } from './driverState.js';
import { HeapBudget, heapBudgetOf } from '../io/heapBudget.js';
import type { MergedRows } from '../io/mergeBatches.js';
import { Ingest, type IngestState, type RunTotals } from './ingest.js';
import type { PartitionRun } from './partitionRun.js';
import {
  type PolledSource,
  type RawOf,
  type RecordSink,
  type RecordSource,
  recordWith,
  type SourceBatch,
  type SourcePosition,
} from './recordSource.js';
import { type Positioned, ReorderWindow } from './reorder.js';
import type { DriverClock, TickPolicy } from './ticks.js';

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

/** A pair spec `BASE/QUOTE` as base and quote. */
export function parsePairSpec(spec: string): [string, string] {
  const parts = spec.split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1])
    throw new XrateError('usage', `bad pair "${spec}" (expected BASE/QUOTE, e.g. BTC/USD)`, { field: 'track' });
  return [parts[0].trim(), parts[1].trim()];
}

/** Options of {@link Driver}. */
export interface DriverOptions {
  /** Names of the inputs, by index (the `source` of rejects; a replica's grows as it meets logs). */
  inputs: Paths;
  /** The state the snapshots store as is (driverState.ts), updated in place. */
  state: IngestState;
  /** Where that state keeps the driver's clock marks. */
  marks: DriverMarks;
  /** A replay's reorder-window fields of the state. */
  windowState?: WindowState;
  /** Buffer and sort events within this many µs (with {@link windowState}). */
  reorderWindowUs?: number;
  /** The snapshot resumed, if any: its engine and batch. */
  resume?: ReplayCheckpoint;
  /** Engine configuration of a new run. */
  config?: Partial<EngineConfig>;
  store?: ReplayStore;
  rateFile?: RateFileWriter;
  /** Extra engine listener. */
  listener?: EngineListener;
  ownMetrics?: boolean;
  /**
   * When a new run clears the previous outputs: with its first batch (an unreadable input leaves
   * them), or as it begins (a followed log's service reads the database at once).
   */
  clear: 'first-batch' | 'at-begin';
  /** Start of output, µs (events before it are warm-up). */
  from?: number;
  /** Pairs to track (default: every direct pair as it gets a rate). */
  track?: readonly (readonly [string, string])[];
  /** OHLC periods kept per tracked pair. */
  periods: readonly string[];
  /** Event time between snapshots, µs (none without it). */
  snapshotEveryUs?: number;
  ticks: TickPolicy;
  /** A partition of a partitioned replay. */
  partition?: PartitionRun;
  /** Full collections between batches (src/io/heapBudget.ts); a number: the budget's floor, MB; or the replay's budget itself. */
  heapBudget?: boolean | number | HeapBudget;
  onProgress?: (p: ReplayProgress) => void;
  progressEveryMs?: number;
  /** Told how long each event's pending ticks took, s (only then measured). */
  onTicks?: (seconds: number) => void;
  /** Wall clock, ms. */
  now: () => number;
  /** When the run started (wall clock, ms). */
  started: number;
}

/** The replay driver (see the module description). */
export class Driver implements DriverClock, RecordSink {
  readonly ingest: Ingest;
  readonly engine: Engine;
  private readonly opts: DriverOptions;
  private readonly state: IngestState;
  private readonly marks: DriverMarks;
  private window: ReorderWindow | undefined;
  private readonly heap: HeapBudget | undefined;
  /** Where the engine's older trade bins go (src/io/binSpill.ts). */
  private readonly spill: FileSpill;
  private lastProgress = 0;
  /** The batch of the snapshot resumed, if any. */
  private readonly resumedBatch: number | undefined;

  constructor(opts: DriverOptions) {
    const cp = opts.resume;
    // The snapshot's engine is restored here and not kept (a day of a dense log's trade bins is
    // tens of megabytes): only its batch is.
    this.opts = { ...opts, resume: undefined };
    this.resumedBatch = cp?.batch;
    const spill = new FileSpill();
    this.spill = spill;
    this.state = opts.state;
    this.marks = opts.marks;
    this.ingest = new Ingest({
      inputs: opts.inputs,
      state: opts.state,
      store: opts.store,
      rateFile: opts.rateFile,
      listener: opts.listener,
      batch: cp ? cp.batch : 0,
      // A new replay replaces the previous outputs, but only in the transaction of its first batch:
      // if the input turns out unreadable, the database keeps the last complete run's outputs.
      clearWithFirstBatch: !cp && opts.clear === 'first-batch',
      ownMetrics: opts.ownMetrics,
      rejectsWithOutputOnly: opts.partition !== undefined,
      // A day of older trade bins on disk, but a few chunks (src/io/binSpill.ts); restored ones as they are restored.
      engine: (listener) => {
        if (cp) return restoreEngine(cp.engine, listener, { spill });
        const e = createEngine(opts.config ?? {}, listener);
        e.spillBins(spill);
        return e;
      },
    });
    this.engine = this.ingest.engine;
    const budget = opts.heapBudget;
    this.heap = budget instanceof HeapBudget ? budget : heapBudgetOf(budget);
  }

  /** The latest time of an accepted event, µs. */
  get lastEventTime(): number | null {
    return this.marks.lastEventTime;
  }

  /** Whether reading stopped at `to`. */
  get stopped(): boolean {
    return this.marks.stopped === true;
  }

  /** Runs `fn` as the next batch (one transaction). */
  inBatch(fn: () => void): void {
    this.ingest.inBatch(fn);
  }

  /**
   * Begins the run record (`options` as stored in `runs`): a resumed run drops what was written
   * after its snapshot, a new one clears the previous outputs when asked to at once.
   */
  beginRun(options: unknown): void {
    const resumed = this.resumedBatch !== undefined;
    const runId = this.ingest.beginRun(options, this.opts.started, resumed);
    const store = this.opts.store;
    if (store && this.resumedBatch !== undefined) store.truncateAfter(this.resumedBatch);
    else if (store && this.opts.clear === 'at-begin') store.clearOutputs(runId);
  }

  /** Before the first record: the reorder window, a partition's carried state, the output switched on unless `from` waits. */
  start(): void {
    const us = this.opts.reorderWindowUs;
    const ws = this.opts.windowState;
    this.window = us !== undefined && us > 0 ? (ws?.window ? ReorderWindow.fromJSON(us, ws.window) : new ReorderWindow(us)) : undefined;
    if (this.resumedBatch !== undefined) return;
    this.opts.partition?.carryIn(this.engine);
    if (this.opts.from === undefined) this.outputOn();
  }

  /** Turns the output on (see the module description); `byEvent`: the record just read turns it on. */
  private outputOn(byEvent = false): void {
    const { from, partition, periods } = this.opts;
    const st = this.state;
    // A partition's own lines start with the event that turns its output on (counted then).
    partition?.outputOn(this.ingest, byEvent ? st.eventsRead - 1 : st.eventsRead);
    if (from !== undefined) this.engine.advanceTo(from - 1);
    // The positions of the warm-up, which were not written as read: the book's state (a
    // partition's warm-up is the partition before's, which wrote it).
    if (from !== undefined && !partition) this.ingest.writePositionBook();
    st.outputOn = true;
    this.engine.emitAllAtNextTick();
    if (this.opts.track) for (const [b, q] of this.opts.track) this.engine.track(b, q, periods);
    else this.engine.trackDirectPairs(periods);
    partition?.track(this.engine, periods);
  }

  /** One record of input `input`, read in replay order (through the window, if any); false once stopped. */
  record(rec: SourceRecord, input: number): boolean {
    if (this.opts.partition?.reporting) this.opts.partition.beforeRecord(input, rec.line, this.marks.lastEventTime, this.engine);
    const window = this.window;
    const ev = this.ingest.parseRecord(rec, input, window !== undefined);
    if (ev === undefined) return !this.stopped;
    if (window) {
      const ws = this.opts.windowState!;
      const q: Positioned = { event: ev, input, line: rec.line, raw: rec.raw, seq: ws.seq++ };
      if (ev === rec.event && rec.venue !== undefined) q.venue = rec.venue; // not mapped yet
      window.push(q, this.engine.accepts(ev));
      for (const q of window.releasable()) if (!this.apply(q.event, q.input, q)) break;
    } else this.apply(ev, input, rec);
    return !this.stopped;
  }

  /**
   * The rows of a columnar batch (see {@link RecordSink.rows}). A quote or trade row goes straight
   * to the engine ({@link applyRow}) unless a reorder window needs its record; any other row is
   * read as its record ({@link record}). A partition's reports look only at a row's place, the
   * clock and the markets known, and keep only metadata events (records): a quote or trade row
   * takes the straight way while they are made too.
   */
  rows(b: BatchColumns, input: number, raw: RawOf): number {
    const inputs = b.input;
    for (let i = 0; i < b.length; i++) if (!this.row(b, i, inputs === undefined ? input : inputs[i], raw)) return i + 1;
    return b.length;
  }

  /** The rows of a merge by reference (see {@link RecordSink.mergedRows}), each as {@link rows} takes a row. */
  mergedRows(m: MergedRows, raw: (b: BatchColumns, i: number, input: number) => string): number {
    let input = 0;
    // A row's raw text is asked for while the row is handled: of the row's input.
    const rawOfRow: RawOf = (b, i) => raw(b, i, input);
    for (let k = 0; k < m.length; k++) {
      input = m.input[k];
      if (!this.row(m.batches[k], m.rows[k], input, rawOfRow)) return k + 1;
    }
    return m.length;
  }

  /** Row i of batch b, of input `input` (see {@link rows}); false once the driver stopped. */
  private row(b: BatchColumns, i: number, input: number, raw: RawOf): boolean {
    if (b.kind[i] === ROW_OTHER || this.window !== undefined) return this.record(recordWith(b, i, raw), input);
    const partition = this.opts.partition;
    if (partition?.reporting) partition.beforeRecord(input, b.line[i], this.marks.lastEventTime, this.engine);
    this.state.eventsRead++;
    this.applyRow(b, i, input, raw);
    return !this.stopped;
  }

  /**
   * {@link apply} for quote or trade row i of a batch: the same stop at `to`, output switch,
   * tick timing and clock, the engine applying the row from its columns; a reject's raw text is
   * read only then.
   */
  private applyRow(b: BatchColumns, i: number, input: number, raw: RawOf): void {
    const engine = this.engine;
    const t = b.time[i];
    const to = this.opts.ticks.to;
    if (to !== undefined && t > to && engine.acceptsRow(b, i)) {
      engine.advanceTo(to);
      this.marks.stopped = true;
      return;
    }
    const from = this.opts.from;
    if (!this.state.outputOn && from !== undefined && t >= from && engine.acceptsRow(b, i)) this.outputOn(true);
    const onTicks = this.opts.onTicks;
    let rejected: Reject | undefined;
    if (onTicks) {
      const before = engine.lastTickTime;
      const t0 = performance.now();
      rejected = engine.applyRow(b, i);
      if (engine.lastTickTime !== before) onTicks((performance.now() - t0) / 1000);
    } else rejected = engine.applyRow(b, i);
    if (rejected === undefined) {
      const marks = this.marks;
      if (marks.lastEventTime === null || t > marks.lastEventTime) marks.lastEventTime = t;
    } else this.ingest.reject(rejected, input, b.line[i], raw(b, i));
  }

  /** The end of an input inside a stream: the end-of-input ticks. */
  endOfInput(): void {
    if (!this.stopped) this.opts.ticks.atEnd(this);
  }

  /**
   * Applies an event released in time order, unless it is past `to` (which ends the replay).
   * Only an event the engine accepts moves the clock (docs/methodology.md section 2): a rejected
   * one past `to` or `from` is recorded and reading goes on, and the last event time (where the
   * end-of-input ticks end) is that of the last accepted event.
   */
  private apply(
    read: XrateEvent,
    input: number,
    rec: { line: number; raw: string; event?: XrateEvent; venue?: { exchange: string; symbol: string } },
  ): boolean {
    const engine = this.engine;
    const ingest = this.ingest;
    // A tardis row still as read: read before the symbol event that maps it (a reorder window).
    const event = rec.venue === undefined || rec.event !== read ? read : ingest.atVenue(rec, read, rec.venue, input);
    if (event === undefined) return true;
    const t = event.time;
    const to = this.opts.ticks.to;
    if (to !== undefined && t > to && engine.accepts(event)) {
      engine.advanceTo(to);
      this.marks.stopped = true;
      return false;
    }
    const from = this.opts.from;
    if (!this.state.outputOn && from !== undefined && t >= from && engine.accepts(event)) this.outputOn(true);
    const onTicks = this.opts.onTicks;
    let rejected: Reject | undefined;
    if (onTicks) {
      const before = engine.lastTickTime;
      const t0 = performance.now();
      rejected = ingest.applyEvent(event, input, rec);
      if (engine.lastTickTime !== before) onTicks((performance.now() - t0) / 1000);
    } else rejected = ingest.applyEvent(event, input, rec);
    if (rejected === undefined) {
      const marks = this.marks;
      if (marks.lastEventTime === null || t > marks.lastEventTime) marks.lastEventTime = t;
      this.opts.partition?.accepted(event);
    }
    return true;
  }

  /** One batch of a source, in one transaction, then a snapshot when one is due. */
  batch(b: SourceBatch): void {
    this.ingest.inBatch(() => {
      const at = b.feed(this);
      const every = this.opts.snapshotEveryUs;
      const lt = this.engine.lastTickTime;
      if (this.opts.store && every !== undefined && lt !== undefined && !this.stopped) {
        if (this.marks.lastSnapTick === null || lt - this.marks.lastSnapTick >= every) {
          this.marks.lastSnapTick = lt;
          if (this.opts.windowState) this.opts.windowState.window = this.window ? this.window.toJSON() : null;
          this.ingest.saveSnapshot({ input: at.input, line: at.line, final: false, driver: this.state }, this.opts.now());
        }
      }
    });
  }

  /**
   * Keeps the heap within its budget, if the replay has one (`heapBudget`): the driver does after
   * each batch; a source calls it in long work before its first batch (a merge placing its files).
   */
  readonly keepHeap = (): void => {
    this.heap?.check();
  };

  /**
   * Reads `source` batch by batch until its end or the stop at `to`; `afterBatch` runs after each
   * batch (once its rate-file writes drained).
   */
  async consume(source: RecordSource, afterBatch?: () => void): Promise<void> {
    for await (const b of source.batches()) {
      this.batch(b);
      if (this.opts.rateFile) await this.opts.rateFile.drained();
      this.heap?.check();
      this.progress(source);
      afterBatch?.();
      if (this.stopped) break;
    }
  }

  /** Reads what a polled source has (a followed log: what was appended, a batch per chunk), then the tick policy's ticks. */
  poll(source: PolledSource): void {
    source.read((b) => this.batch(b));
    this.opts.ticks.afterRead(this);
  }

  private progress(source: RecordSource): void {
    const onProgress = this.opts.onProgress;
    if (!onProgress || !source.progress) return;
    const t = this.opts.now();
    if (t - this.lastProgress < (this.opts.progressEveryMs ?? 200)) return;
    this.lastProgress = t;
    const p = source.progress();
    onProgress({
      input: p.input,
      inputs: p.inputs,
      path: p.path,
      bytesRead: p.bytesRead,
      totalBytes: p.totalBytes,
      eventsRead: this.state.eventsRead,
      eventTime: this.marks.lastEventTime ?? undefined,
      elapsedMs: t - this.opts.started,
    });
  }

  /** End of input: drain the window, turn a waiting output on, the last ticks, flush OHLC, store the final state. */
  finish(): void {
    const st = this.state;
    this.ingest.inBatch(() => {
      const window = this.window;
      if (window && !this.stopped) for (const q of window.drain()) if (!this.apply(q.event, q.input, q)) break;
      if (!st.outputOn && this.opts.from !== undefined) this.outputOn();
      if (!this.stopped) this.opts.ticks.atEnd(this);
      this.engine.flush();
      if (this.opts.store) {
        if (this.opts.windowState) this.opts.windowState.window = null;
        const bins = this.opts.partition?.finalBins ?? true;
        this.ingest.saveSnapshot({ input: this.opts.inputs.length, line: 0, final: true, driver: st, bins }, this.opts.now());
      }
    });
  }

  /**
   * Closes the files of the engine's older trade bins, once the engine is not used again: a
   * partition's, whose engine stays in its run (a worker thread's end closes no file, and a
   * queue's worker runs partition after partition). Otherwise they close when the engine is
   * collected.
   */
  closeSpill(): void {
    this.spill.close();
  }

  /** Closes the run record as complete with `totals` (taking `durationMs`); with a heap budget, the heap collected first. */
  finishRun(totals: RunTotals, durationMs: number): void {
    this.heap?.collect();
    this.ingest.finishRun(totals, { finishedAt: this.opts.now(), durationMs, stopped: this.stopped });
  }

  /** Marks the run record failed with `e`'s message. */
  failRun(e: unknown): void {
    const store = this.opts.store;
    const runId = this.ingest.runId;
    if (store && runId !== undefined) store.failRun(runId, messageOf(e), new Date(this.opts.now()).toISOString());
  }

  /**
   * Stops a live run: in a batch of its own, OHLC flushed (`flush`: a followed log, which ends
   * there) and a snapshot at `at` storing `driver` (default: the state); the run closed as stopped.
   */
  stopLive(opts: { flush: boolean; at: SourcePosition; driver?: unknown }): void {
    const now = this.opts.now;
    this.ingest.inBatch(() => {
      if (opts.flush) this.engine.flush();
      this.ingest.saveSnapshot({ input: opts.at.input, line: opts.at.line, final: false, driver: opts.driver ?? this.state }, now());
    });
    this.ingest.finishRun(this.ingest.totals(), { finishedAt: now(), durationMs: now() - this.opts.started, stopped: true });
  }
}
