/**
 * The one ingest path of `xrate replay`, a followed log and a replica: what happens to a
 * record once a driver has read it, and to the outputs the engine computes from it.
 *
 * - Records: a record that cannot be read or parsed becomes a reject `{input, source, line,
 *   reason, message, raw}` (raw cut to its first 1024 characters) and is never fatal; an event
 *   is applied to the engine, and a reject the engine answers with is stored the same way
 *   (docs/methodology.md section 1.4).
 * - Sinks: rate changes, OHLC buckets and the tracked pairs' OHLC change series go to the replay
 *   database's writers and/or a rate file (rate changes only), then to an extra listener; every
 *   row carries the number of the batch it was written in.
 * - Batches: each batch is one database transaction; the first one of a new run may also clear
 *   the outputs of the previous run, so an unreadable input leaves them in place.
 * - Runs: the `runs` row (begun, then finished with the counters) and the engine snapshots.
 *
 * The driver (driver.ts) feeds it: the records of a source in batches, and when the clock moves,
 * the output turns on, snapshots are taken and the run ends.
 *
 * @module
 */
import type { Engine, EngineListener, OwnMetricBatch, PairRateChange, TrackedPair } from '../core/engine.js';
import { parseEvent } from '../core/events.js';
import type { OhlcBucket } from '../core/ohlc.js';
import type { MetricDefinitionEvent, MetricEvent } from '../core/metrics/events.js';
import type { PeriodRecord } from '../core/periods.js';
import type { ConnectivityEvent, PositionEvent } from '../core/positions/events.js';
import { isReject, type Reject, type RejectReason, type XrateEvent } from '../core/types.js';
import { clipText } from '../io/lineLimit.js';
import type { RateFileWriter } from '../io/rateFile.js';
import type { Paths } from '../io/pathList.js';
import type { SourceRecord } from '../io/source.js';
import type { ReplayStore } from '../io/store.js';
import { NO_BINS } from './partition.js';

/**
 * Characters of a reject's raw text kept in `rejects.raw`; a longer text is cut and marked
 * (docs/methodology.md section 1.4).
 */
const RAW_KEEP = 1024;

/**
 * Counters and the output switch of an ingest, updated in place. A replay keeps them in its driver
 * state, which its snapshots store, so they survive a resume.
 */
export interface IngestState {
  /** Whether rate changes and buckets are written (false during a replay's warm-up). */
  outputOn: boolean;
  /** Records read (every non-blank line or row, rejected or not). */
  eventsRead: number;
  /** Rate changes written. */
  rateChanges: number;
  /** OHLC buckets written. */
  buckets: number;
  /**
   * Metric points and definitions written: the last one's `seq` (log order). Absent in the state
   * of a replay snapshotted before metrics were stored.
   */
  metricEvents?: number;
  /**
   * Position and connectivity events written: the last one's `seq` (log order). Absent in the
   * state of a replay snapshotted before positions were stored.
   */
  positionEvents?: number;
  /**
   * symbol_id by exchange_id (lower case) and symbol_id_exchange, joined by a NUL character, from
   * the `symbol` events the engine accepted that carry a symbol_id_exchange: how the rows of a
   * tardis file find their market. Absent until the first such event (kept in snapshots).
   */
  venues?: Record<string, string>;
}

/** Options of {@link Ingest}. */
export interface IngestOptions {
  /** Names of the inputs, by index: the `source` of their rejects and the `inputs` of the run. */
  inputs: Paths;
  /** Makes the engine (new or restored) with the listener that writes its outputs. */
  engine: (listener: EngineListener) => Engine;
  /** Counters, updated in place. */
  state: IngestState;
  /** The replay database getting rates, buckets, rejects, the run and snapshots. */
  store?: ReplayStore;
  /** A rate file getting the rate changes. */
  rateFile?: RateFileWriter;
  /** Called after each output is written (and with each tick). */
  listener?: EngineListener;
  /** Number of the last batch already written (default 0; a snapshot's batch on resume). */
  batch?: number;
  /** Delete the previous run's outputs in the transaction of the first batch. */
  clearWithFirstBatch?: boolean;
  /** Compute and store xrate's own metrics (ownMetrics.ts). */
  ownMetrics?: boolean;
  /** Store rejects only while the output is on (a partition's warm-up lines are the partition before's). */
  rejectsWithOutputOnly?: boolean;
}

/** What a run did, from the engine's statistics and the ingest's counters (the `runs` columns). */
export interface RunTotals {
  eventsRead: number;
  eventsAccepted: number;
  eventsRejected: number;
  rejectsByReason: Partial<Record<RejectReason, number>>;
  quotesDiscarded: number;
  ticks: number;
  firstTick: number | undefined;
  lastTick: number | undefined;
  pairsWithRate: number;
  rateChanges: number;
  buckets: number;
}

/**
 * One ingest run: an engine wired to its sinks, the batch counter and the run's database rows.
 *
 * @example
 * ```ts
 * const state = { outputOn: true, eventsRead: 0, rateChanges: 0, buckets: 0 };
 * const ingest = new Ingest({ inputs: ['log.ndjson'], state, store, clearWithFirstBatch: true, engine: (l) => createEngine({}, l) });
 * ingest.beginRun({}, Date.now(), false);
 * ingest.inBatch(() => { for (const rec of records) ingest.ingestRecord(rec, 0); });
 * ingest.finishRun(ingest.totals(), { finishedAt: Date.now(), durationMs: 0, stopped: false });
 * ```
 */
export class Ingest {
  /** The engine, made by {@link IngestOptions.engine}. */
  readonly engine: Engine;
  /** The listener writing the engine's outputs (the one the engine was made with). */
  readonly listener: EngineListener;
  private readonly inputs: Paths;
  private readonly state: IngestState;
  private readonly store: ReplayStore | undefined;
  private readonly writers: ReturnType<ReplayStore['writers']> | undefined;
  private batchNo: number;
  private pendingClear: boolean;
  private run: number | undefined;
  private readonly rejectsWithOutputOnly: boolean;

  constructor(opts: IngestOptions) {
    this.inputs = opts.inputs;
    this.state = opts.state;
    this.store = opts.store;
    this.writers = opts.store?.writers();
    this.batchNo = opts.batch ?? 0;
    this.pendingClear = !!opts.store && !!opts.clearWithFirstBatch;
    this.rejectsWithOutputOnly = opts.rejectsWithOutputOnly === true;
    const st = opts.state;
    const rateFile = opts.rateFile;
    const user = opts.listener ?? {};
    const writers = this.writers;
    /** Stores a metric point (log order: `seq`); false during a warm-up, which writes nothing. */
    const storePoint = (e: MetricEvent): boolean => {
      if (!st.outputOn) return false;
      st.metricEvents = (st.metricEvents ?? 0) + 1;
      writers?.point(e, st.metricEvents, this.batchNo);
      return true;
    };
    this.listener = {
      onTick: user.onTick,
      onPairRate: (c: PairRateChange) => {
        if (!st.outputOn) return;
        st.rateChanges++;
        writers?.rate(c, this.batchNo);
        rateFile?.write(c);
        user.onPairRate?.(c);
      },
      onBucket: (track: TrackedPair, period: PeriodRecord, b: OhlcBucket) => {
        if (!st.outputOn) return;
        st.buckets++;
        writers?.bucket(track.base, track.quote, period.period_id, b, this.batchNo);
        rateFile?.bucket(track.base, track.quote, period.period_id, b);
        user.onBucket?.(track, period, b);
      },
      onSeries: (track: TrackedPair, tick: number, rate: number, follow: boolean) => {
        if (!st.outputOn) return;
        writers?.series(track.base, track.quote, tick, rate, follow, this.batchNo);
        user.onSeries?.(track, tick, rate, follow);
      },
      onMetric: (e: MetricEvent) => {
        if (storePoint(e)) user.onMetric?.(e);
      },
      // The engine computes its own metrics only for a listener that has this method.
      onOwnMetrics: opts.ownMetrics
        ? (b: OwnMetricBatch) => {
            if (!st.outputOn) return;
            // Written from the batch's columns: no event object per point.
            if (b.length > 0) {
              const seq = (st.metricEvents ?? 0) + 1;
              st.metricEvents = seq - 1 + b.length;
              writers?.ownPoints(b, seq, this.batchNo);
            }
            user.onOwnMetrics?.(b);
          }
        : undefined,
      onMetricDefinition: (e: MetricDefinitionEvent) => {
        if (!st.outputOn) return;
        st.metricEvents = (st.metricEvents ?? 0) + 1;
        writers?.definition(e, st.metricEvents, this.batchNo);
        user.onMetricDefinition?.(e);
      },
      // Like metric points: written while the output is on (a warm-up's are the partition
      // before's, or before --from), in log order (`seq`).
      onPosition: (e: PositionEvent, assets: { base: string; quote: string } | undefined) => {
        if (!st.outputOn) return;
        st.positionEvents = (st.positionEvents ?? 0) + 1;
        writers?.position(e, assets, st.positionEvents, this.batchNo);
        user.onPosition?.(e, assets);
      },
      onConnectivity: (e: ConnectivityEvent) => {
        if (!st.outputOn) return;
        st.positionEvents = (st.positionEvents ?? 0) + 1;
        writers?.connectivity(e, st.positionEvents, this.batchNo);
        user.onConnectivity?.(e);
      },
    };
    this.engine = opts.engine(this.listener);
  }

  /** Number of the current (last begun) batch. */
  get batch(): number {
    return this.batchNo;
  }

  /** Id of the `runs` row begun by {@link beginRun}, if any. */
  get runId(): number | undefined {
    return this.run;
  }

  /**
   * Inserts the `runs` row (status `running`) with the engine's configuration; no-op without a
   * database.
   *
   * @param options - the run's options as stored (JSON)
   * @param startedAt - wall-clock start, ms
   */
  beginRun(options: unknown, startedAt: number, resumed: boolean): number | undefined {
    this.run = this.store?.beginRun(this.inputs, this.engine.snapshot().config, options, new Date(startedAt).toISOString(), resumed);
    return this.run;
  }

  /**
   * Runs `fn` as the next batch: the batch counter goes up, and with a database `fn` runs in one
   * transaction (rolled back if it throws), which also clears the previous outputs when that is
   * still pending.
   */
  inBatch<T>(fn: () => T): T {
    this.batchNo++;
    const store = this.store;
    if (!store) return fn();
    store.begin();
    try {
      if (this.pendingClear) store.clearOutputs(this.run);
      const r = fn();
      store.commit();
      this.pendingClear = false;
      return r;
    } catch (e) {
      store.rollback();
      throw e;
    }
  }

  /**
   * Stores a reject of input `input` at `line` in the current batch; a `raw` text of more than
   * {@link RAW_KEEP} characters is stored cut, marked `… [truncated: N bytes in all]`.
   */
  reject(r: Reject, input: number, line: number, raw: string): void {
    if (this.rejectsWithOutputOnly && !this.state.outputOn) return;
    const text = raw.length > RAW_KEEP ? clipText(raw, 0, raw.length, RAW_KEEP) : raw;
    this.writers?.reject(input, this.inputs.at(input) as string, line, r.reason, r.message, text, this.batchNo);
  }

  /**
   * Counts a record read from input `input` and parses it: the event, or undefined when the record
   * was unreadable or not a valid event (then it is counted and stored as a reject). A record with
   * a `venue` (a tardis row) gets its symbol_id from the accepted `symbol` events ({@link atVenue});
   * with `defer`, one not mapped yet is returned as read (the caller maps it with `atVenue` when it
   * applies it: a reorder window).
   */
  parseRecord(rec: SourceRecord, input: number, defer = false): XrateEvent | undefined {
    this.state.eventsRead++;
    if (rec.event !== undefined) {
      if (rec.venue === undefined) return rec.event;
      // Not mapped yet, and the caller will apply it later (a reorder window): the event as read,
      // for `atVenue` when it is released.
      if (defer && this.symbolAt(rec.venue) === undefined) return rec.event;
      return this.atVenue(rec, rec.event, rec.venue, input);
    }
    if (rec.error !== undefined || rec.record === undefined) {
      this.reject(
        this.engine.countReject({ kind: 'reject', reason: rec.reason ?? 'bad_json', message: rec.error ?? 'unreadable record' }),
        input,
        rec.line,
        rec.raw,
      );
      return undefined;
    }
    const parsed = parseEvent(rec.record);
    if (isReject(parsed)) {
      this.reject(this.engine.countReject(parsed), input, rec.line, rec.raw);
      return undefined;
    }
    return parsed;
  }

  /**
   * Applies an event to the engine; the engine's reject is stored with `at`'s line and raw text
   * (`raw` is read only then: CSV and SQLite records make it on demand).
   */
  applyEvent(event: XrateEvent, input: number, at: { line: number; raw: string }): Reject | undefined {
    const r = this.engine.apply(event);
    if (r) this.reject(r, input, at.line, at.raw);
    else if (event.type === 'symbol' && event.symbolIdExchange !== undefined) {
      this.state.venues ??= {};
      this.state.venues[venueKey(event.exchangeId, event.symbolIdExchange)] = event.symbolId;
    }
    return r;
  }

  /**
   * Writes the engine's position book as rows, its snapshots and connectivity events as they were
   * applied: the state a replay's output starts from when it starts late (`--from`), so that the
   * stored rows rebuild the engine's book (docs/methodology.md section 11). Call in a batch.
   */
  writePositionBook(): void {
    const st = this.state;
    const w = this.writers;
    for (const a of this.engine.positions()) {
      for (const p of a.positions) {
        st.positionEvents = (st.positionEvents ?? 0) + 1;
        w?.position(
          p.event,
          p.base !== undefined && p.quote !== undefined ? { base: p.base, quote: p.quote } : undefined,
          st.positionEvents,
          this.batchNo,
        );
      }
    }
    for (const c of this.engine.connectivity()) {
      st.positionEvents = (st.positionEvents ?? 0) + 1;
      w?.connectivity(c, st.positionEvents, this.batchNo);
    }
  }

  /**
   * The event of a record that names its market by exchange and exchange symbol (a tardis row),
   * with the symbol_id of the latest accepted `symbol` event whose exchange_id matches the exchange
   * in any case and whose symbol_id_exchange is the symbol; without one, a reject
   * (`unknown_symbol`) naming both (docs/methodology.md section 1).
   */
  atVenue(
    rec: { line: number; raw: string },
    event: XrateEvent,
    venue: { exchange: string; symbol: string },
    input: number,
  ): XrateEvent | undefined {
    const id = this.symbolAt(venue);
    if (id === undefined) {
      const message =
        `${event.type}: no symbol event maps exchange "${venue.exchange}" symbol "${venue.symbol}" to a symbol_id ` +
        `(give a symbol event with that exchange_id, in any case, and symbol_id_exchange "${venue.symbol}" before it)`;
      this.reject(
        this.engine.countReject({ kind: 'reject', reason: 'unknown_symbol', message, field: 'symbol' }),
        input,
        rec.line,
        rec.raw,
      );
      return undefined;
    }
    return { ...event, symbolId: id } as XrateEvent;
  }

  /** The symbol_id the accepted `symbol` events map a venue to, if any. */
  private symbolAt(venue: { exchange: string; symbol: string }): string | undefined {
    return this.state.venues?.[venueKey(venue.exchange, venue.symbol)];
  }

  /** {@link parseRecord} then {@link applyEvent}: a record straight into the engine. */
  ingestRecord(rec: SourceRecord, input: number): void {
    const ev = this.parseRecord(rec, input);
    if (ev !== undefined) this.applyEvent(ev, input, rec);
  }

  /**
   * Stores a snapshot of the engine with the driver's state at the current batch (without the
   * engine's trade bins when `at.bins` is false); no-op without a database or a run.
   *
   * @param createdAt - wall clock, ms
   */
  saveSnapshot(at: { input: number; line: number; final: boolean; driver: unknown; bins?: boolean }, createdAt: number): void {
    if (!this.store || this.run === undefined) return;
    // The trade bins as bytes, encoded by the store as it writes them (src/io/snapshotBlob.ts);
    // none when told (the final snapshot of a partition before the last: the merge takes none).
    const engine = this.engine.snapshot({ packed: true });
    if (at.bins === false && engine.symbols) engine.symbols = { ...engine.symbols, bins: NO_BINS };
    const cp = { input: at.input, line: at.line, batch: this.batchNo, final: at.final, engine, driver: at.driver };
    this.store.saveSnapshot(this.run, cp, new Date(createdAt).toISOString());
  }

  /** The run's totals so far. */
  totals(): RunTotals {
    const engine = this.engine;
    const s = engine.getStats();
    return {
      eventsRead: this.state.eventsRead,
      eventsAccepted: Object.values(s.events).reduce((a, b) => a + b, 0),
      eventsRejected: Object.values(s.rejects).reduce((a, b) => a + (b ?? 0), 0),
      rejectsByReason: s.rejects,
      quotesDiscarded: s.quotesDiscarded,
      ticks: s.ticks,
      firstTick: engine.firstTickTime,
      lastTick: engine.lastTickTime,
      pairsWithRate: engine.pairs().length,
      rateChanges: this.state.rateChanges,
      buckets: this.state.buckets,
    };
  }

  /**
   * Closes the `runs` row as complete with `totals`; no-op without a database or a run.
   *
   * @param end - `finishedAt` (wall clock, ms), the run's duration, and whether it stopped before
   * the end of its input (`--to`, or a followed log that may go on)
   */
  finishRun(totals: RunTotals, end: { finishedAt: number; durationMs: number; stopped: boolean }): void {
    if (!this.store || this.run === undefined) return;
    this.store.finishRun(this.run, completedRun(totals, end));
  }
}

/** The key of a market by exchange (any case) and exchange symbol. */
function venueKey(exchange: string, symbol: string): string {
  return `${exchange.toLowerCase()}\u0000${symbol}`;
}

/** The `runs` fields of a completed run with these totals (the driver's runs, and parallel.ts's merged one). */
export function completedRun(
  totals: RunTotals,
  end: { finishedAt: number; durationMs: number; stopped: boolean },
): Parameters<ReplayStore['finishRun']>[1] {
  return {
    finished_at: new Date(end.finishedAt).toISOString(),
    status: 'complete',
    events_read: totals.eventsRead,
    events_accepted: totals.eventsAccepted,
    events_rejected: totals.eventsRejected,
    rejects_by_reason: JSON.stringify(totals.rejectsByReason),
    quotes_discarded: totals.quotesDiscarded,
    ticks: totals.ticks,
    first_tick: totals.firstTick ?? null,
    last_tick: totals.lastTick ?? null,
    pairs_with_rate: totals.pairsWithRate,
    rate_changes: totals.rateChanges,
    buckets: totals.buckets,
    duration_ms: end.durationMs,
    stopped: end.stopped ? 1 : 0,
  };
}
