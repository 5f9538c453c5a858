/**
 * The replay database (better-sqlite3, WAL): rate changes, OHLC buckets, the OHLC change series of tracked pairs, rejects, runs and
 * engine snapshots, written batch by batch, each batch in one transaction (or, through the writer
 * thread, with the batches that waited for it), and the queries the CLI and the service read back.
 *
 * Every output row carries the number of the batch that wrote it. A snapshot is written in the
 * same transaction as the batch it follows, so after a crash the database holds a consistent
 * prefix and `--resume` deletes the rows of batches after the last snapshot before going on.
 *
 * Times are INTEGER microseconds since the epoch; rates are REAL (IEEE double, exact round trip).
 * A new replay (not a resume) replaces the outputs of the previous one; `runs` keeps every run.
 *
 * @module
 */
import Database from 'better-sqlite3';
import { mergePartitionOutputs } from './partitionMerge.js';
import { existsSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { type UnpackOptions, unpackSnapshot } from './snapshotBlob.js';
import { flatList } from './inputs.js';
import type { Paths } from './pathList.js';
import type { PairRateChange } from '../core/engine.js';
import type { OhlcBucket } from '../core/ohlc.js';
import type { RateChangePoint, StoredSeriesPoint } from '../core/ohlcSeries.js';
import { OwnChunkWriters } from './metricChunks.js';
import { DatabaseMetrics, metricWriters } from './metricStore.js';
import type { MetricDefinition } from '../core/metrics/source.js';
import { positionWriters, StoredPositions } from './positionStore.js';
import type { RowSinkMaker } from './rowJob.js';
import { createSchema, OUTPUT_TABLES, runIsDead } from './storeSchema.js';
import { deleteSnapshots, snapshotParts, storeSnapshot } from './snapshotParts.js';
import { CLEAR_SQL, WriterThread } from './writerThread.js';
import type {
  MergedCounts,
  PartitionOutput,
  PositionHistory,
  RateRow,
  ReplayCheckpoint,
  RowWriters,
  RunRow,
  StoreOpenOptions,
  StoredMetrics,
} from './storeTypes.js';
import { SMALL_PAGE_CACHE_KB } from './storeTypes.js';
import { isXrateError, messageOf, XrateError } from '../core/errors.js';

export type { RateRow, ReplayCheckpoint, RunRow, StoreOpenOptions } from './storeTypes.js';
export { SMALL_PAGE_CACHE_KB } from './storeTypes.js';

/** A pair's last row before a tick, and its rows in a tick range (see `ReplayStore.fromLastBefore`). */
interface RangeStatements {
  before: Database.Statement;
  from: Database.Statement;
}

/**
 * The replay database.
 *
 * @example
 * ```ts
 * const store = ReplayStore.open('out/xrate.sqlite');
 * store.latestRun();
 * store.close();
 * ```
 */
export class ReplayStore {
  private constructor(
    private readonly conn: Database.Database,
    readonly path: string,
    private readonly thread?: WriterThread,
    ownChunkPoints = 0,
  ) {
    this.ownChunks = new OwnChunkWriters(ownChunkPoints);
  }

  /** The own-metric chunk writers of {@link writers}: flushed into each batch before its commit. */
  private readonly ownChunks: OwnChunkWriters;
  /** Whether the open batch stores a snapshot (its commit writes every own-metric chunk gathered). */
  private snapshotInBatch = false;
  /** The connection, once every batch posted to the writer thread (if any) is committed. */
  private get db(): Database.Database {
    this.thread?.drain();
    return this.conn;
  }

  /**
   * Opens (and, unless `readonly`, creates) a replay database ({@link StoreOpenOptions}).
   * @throws XrateError when the file cannot be opened or is not a replay database.
   */
  static open(path: string, opts: StoreOpenOptions = {}): ReplayStore {
    let db: Database.Database;
    try {
      db = new Database(path, { readonly: !!opts.readonly, fileMustExist: !!opts.readonly });
    } catch (e) {
      throw new XrateError('input', `cannot open database "${path}": ${(e as Error).message}`);
    }
    try {
      if (opts.pageCacheKb !== undefined || opts.scratch) db.pragma(`cache_size = -${opts.pageCacheKb ?? SMALL_PAGE_CACHE_KB}`);
      if (!opts.readonly) {
        if (opts.scratch) {
          db.pragma('journal_mode = MEMORY');
          db.pragma('synchronous = OFF');
        } else {
          db.pragma('journal_mode = WAL');
          db.pragma('synchronous = NORMAL');
        }
        createSchema(db);
        // Runs whose process died while running are marked so (their tables stay refused until a
        // replay or --resume completes).
        for (const r of db.prepare(`SELECT id, status, pid, host FROM runs WHERE status = 'running'`).all() as RunRow[]) {
          if (runIsDead(r)) db.prepare(`UPDATE runs SET status = 'killed' WHERE id = ?`).run(r.id);
        }
      } else {
        const t = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'runs'`).get();
        if (!t) throw new Error('it has no "runs" table (not written by `xrate replay`)');
      }
    } catch (e) {
      db.close();
      if (isXrateError(e)) throw e;
      throw new XrateError('input', `"${path}" is not a usable xrate database: ${messageOf(e)}`, { cause: e });
    }
    const thread = opts.writerThread && !opts.readonly && !opts.scratch ? new WriterThread(path) : undefined;
    return new ReplayStore(db, path, thread, opts.ownChunkPoints ?? 0);
  }

  /** Whether `path` looks like a replay database (SQLite with a `runs` table). */
  static isReplayDatabase(path: string): boolean {
    try {
      const db = new Database(path, { readonly: true, fileMustExist: true });
      try {
        return !!db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'runs'`).get();
      } finally {
        db.close();
      }
    } catch {
      return false;
    }
  }

  /**
   * Copies the replay database `from` into the new file `to` with SQLite's online backup: a
   * consistent copy even while another process writes `from` (a running replica).
   *
   * @throws XrateError when `from` is not a replay database or `to` exists
   */
  static async copy(from: string, to: string): Promise<void> {
    if (!ReplayStore.isReplayDatabase(from)) throw new XrateError('input', `"${from}" is not a database written by xrate`);
    if (existsSync(to)) throw new XrateError('conflict', `"${to}" exists already: a copy goes to a new file`);
    const db = new Database(from, { readonly: true, fileMustExist: true });
    try {
      mkdirSync(dirname(resolve(to)), { recursive: true });
      await db.backup(to);
    } catch (e) {
      throw new XrateError('input', `cannot copy "${from}" to "${to}": ${(e as Error).message}`);
    } finally {
      db.close();
    }
  }

  close(): void {
    if (!this.conn.open) return;
    try {
      this.thread?.close();
    } finally {
      this.conn.close();
    }
  }

  /** Whether the database is still open. */
  get isOpen(): boolean {
    return this.conn.open;
  }

  private readStmts: { begin: Database.Statement; version: Database.Statement; end: Database.Statement } | undefined;

  /**
   * Starts a read transaction: every query until {@link endRead} sees the database as it is now,
   * whatever other connections commit meanwhile. Returns `PRAGMA data_version` as of that
   * snapshot, which changes whenever another connection (or process) has committed a change.
   */
  beginRead(): number {
    this.readStmts ??= {
      begin: this.db.prepare('BEGIN'),
      version: this.db.prepare('PRAGMA data_version').pluck(),
      end: this.db.prepare('COMMIT'),
    };
    this.readStmts.begin.run();
    // Reading the version starts the snapshot (a deferred BEGIN reads nothing by itself).
    return this.readStmts.version.get() as number;
  }

  /** Ends the read transaction of {@link beginRead}, if one is open (for a connection that writes nothing). */
  endRead(): void {
    if (this.readStmts && this.db.open && this.db.inTransaction) this.readStmts.end.run();
  }

  /** Starts the transaction of one input batch (with a writer thread: the batch's job). */
  begin(): void {
    if (this.thread) this.thread.begin();
    else this.conn.prepare('BEGIN').run();
  }

  /**
   * Commits the open transaction. With a writer thread: posts the batch's job, which the thread
   * commits; throws the error of an earlier batch that failed there.
   */
  commit(): void {
    this.ownChunks.flush(this.snapshotInBatch);
    this.snapshotInBatch = false;
    if (this.thread) this.thread.commit();
    else this.conn.prepare('COMMIT').run();
  }

  /** Rolls back the open transaction, if there is one. */
  rollback(): void {
    this.ownChunks.drop();
    this.snapshotInBatch = false;
    if (this.thread) this.thread.rollback();
    else if (this.conn.inTransaction) this.conn.prepare('ROLLBACK').run();
  }

  /** Deletes the outputs of earlier runs (a new replay replaces them). */
  clearOutputs(runId?: number): void {
    if (this.thread?.inJob) {
      this.thread.clearOutputs(runId);
      return;
    }
    for (const sql of CLEAR_SQL) this.db.exec(sql);
    deleteSnapshots(this.db);
    if (runId !== undefined) this.setOutputsRun(runId);
  }

  /** Records that the output tables now belong to run `runId` (see {@link outputsRun}). */
  private setOutputsRun(runId: number): void {
    this.db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('outputs_run', ?)`).run(String(runId));
  }

  /**
   * The run whose outputs the tables hold: the run that last cleared them (a new replay, in the
   * transaction of its first batch) or resumed writing them. Undefined for a database written
   * before this was recorded. Its status tells whether the tables are complete: a failed or
   * killed run leaves them partial.
   */
  outputsRun(): RunRow | undefined {
    const m = this.db.prepare(`SELECT value FROM meta WHERE key = 'outputs_run'`).get() as { value: string } | undefined;
    if (!m) return undefined;
    return this.db.prepare('SELECT * FROM runs WHERE id = ?').get(Number(m.value)) as RunRow | undefined;
  }

  /** Deletes rows written by batches after `batch` (resume after a crash). */
  truncateAfter(batch: number): void {
    for (const t of OUTPUT_TABLES) this.db.prepare(`DELETE FROM ${t} WHERE batch > ?`).run(batch);
  }

  beginRun(inputs: Paths, config: unknown, options: unknown, startedAt: string, resumed: boolean): number {
    const files = JSON.stringify(flatList([inputs]));
    const r = this.db
      .prepare(`INSERT INTO runs(started_at, status, inputs, config, options, resumed, pid, host) VALUES (?, 'running', ?, ?, ?, ?, ?, ?)`)
      .run(startedAt, files, JSON.stringify(config), JSON.stringify(options), resumed ? 1 : 0, process.pid, hostname());
    const id = Number(r.lastInsertRowid);
    // A resumed run takes over the outputs the interrupted one began.
    if (resumed) this.setOutputsRun(id);
    return id;
  }

  finishRun(id: number, fields: Omit<RunRow, 'id' | 'started_at' | 'inputs' | 'config' | 'options' | 'resumed'>): void {
    try {
      this.thread?.drain();
    } catch (e) {
      // A batch failed in the writer thread: the run fails with its error.
      this.failRun(id, messageOf(e), new Date().toISOString());
      throw e;
    }
    this.db
      .prepare(
        `UPDATE runs SET finished_at = @finished_at, status = @status, events_read = @events_read,
         events_accepted = @events_accepted, events_rejected = @events_rejected, rejects_by_reason = @rejects_by_reason,
         quotes_discarded = @quotes_discarded, ticks = @ticks, first_tick = @first_tick, last_tick = @last_tick,
         pairs_with_rate = @pairs_with_rate, rate_changes = @rate_changes, buckets = @buckets, duration_ms = @duration_ms,
         stopped = @stopped
         WHERE id = @id`,
      )
      .run({ ...fields, id });
  }

  /**
   * Writers for the hot path (call inside {@link begin} / {@link commit}): each row run by its
   * prepared statement, or packed into the batch's job for the writer thread.
   */
  writers(): RowWriters {
    // Without a writer thread, a row's sink is its statement's own `run`, bound (a rest parameter
    // spread again would make an array a row).
    const make: RowSinkMaker = this.thread
      ? (sql) => this.thread!.sink(sql)
      : (sql) => {
          const stmt = this.conn.prepare(sql);
          return stmt.run.bind(stmt);
        };
    const rate = make(
      `INSERT INTO rates(tick, base, quote, rate, time, rank, used, fresh, volume, batch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const bucket = make(
      `INSERT OR REPLACE INTO ohlc(base, quote, period_id, start, "end", time_open, time_close, open, high, low, close, count, batch)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const series = make('INSERT OR REPLACE INTO series(base, quote, tick, rate, follow, batch) VALUES (?, ?, ?, ?, ?, ?)');
    const rej = make(`INSERT INTO rejects(input, source, line, reason, message, raw, batch) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    return {
      rate: (c, batch) => rate(c.tick, c.base, c.quote, c.rate, c.time, c.rank, c.used, c.fresh ? 1 : 0, c.volume, batch),
      bucket: (base, quote, periodId, b, batch) =>
        bucket(base, quote, periodId, b.start, b.end, b.timeOpen, b.timeClose, b.open, b.high, b.low, b.close, b.count, batch),
      series: (base, quote, tick, r, follow, batch) => series(base, quote, tick, Number.isNaN(r) ? null : r, follow ? 1 : 0, batch),
      reject: (input, source, line, reason, message, raw, batch) => rej(input, source, line, reason, message, raw, batch),
      ...metricWriters(make, this.ownChunks.add(make)),
      ...positionWriters(make),
    };
  }

  /** The stored positions and connectivity changes (docs/methodology.md section 11). */
  positions(): PositionHistory {
    return new StoredPositions(this.db);
  }

  /** The stored metrics (`own`: the definitions of xrate's own metrics, the descriptions of those stored). */
  metrics(own: readonly MetricDefinition[] = []): StoredMetrics {
    return new DatabaseMetrics(this.db, own);
  }

  /** The rate changes stored, in the order written (as a replay's `--out` file would hold them). */
  *rateChanges(): Generator<PairRateChange> {
    const rows = this.db
      .prepare('SELECT tick, base, quote, rate, time, rank, used, fresh, volume FROM rates ORDER BY rowid')
      .iterate() as Iterable<RateRow>;
    for (const r of rows) yield { ...r, pair: -1, fresh: r.fresh === 1 };
  }

  /**
   * Every pair (`B/Q`) with a rate in some row of `rates`, sorted: the pairs by a loose index scan
   * ({@link ratePairs}), each looked up until its first row with a rate (its first row, but for
   * one whose rate has lapsed), not every row read.
   */
  pairsWithRate(): string[] {
    return this.ratePairs()
      .filter((p) => this.hasRateStmt().get(p.base, p.quote) !== undefined)
      .map((p) => `${p.base}/${p.quote}`);
  }

  private hasRate: Database.Statement | undefined;

  private hasRateStmt(): Database.Statement {
    this.hasRate ??= this.db.prepare('SELECT 1 FROM rates WHERE base = ? AND quote = ? AND rate IS NOT NULL LIMIT 1');
    return this.hasRate;
  }

  /**
   * Makes the outputs in this database those of run `runId`: the first partition's database
   * becoming a partitioned replay's (its own run rows and snapshots go; its output rows stay).
   */
  adoptOutputs(runId: number): void {
    this.db.prepare('DELETE FROM runs WHERE id <> ?').run(runId);
    deleteSnapshots(this.db);
    this.setOutputsRun(runId);
  }

  /** Merges a partitioned replay's databases into this one's output tables, after its rows (partitionMerge.ts). */
  mergePartitions(parts: readonly PartitionOutput[]): MergedCounts {
    return mergePartitionOutputs(this.db, parts);
  }

  /**
   * Runs `fn` with the rollback journal in memory rather than the WAL: each page it writes is
   * written once, into the file, where the WAL writes it twice (and checkpoints it at the commit).
   * Only for a database no other connection uses, and that is discarded when `fn` or the process
   * fails (a crash can leave it corrupt): a partitioned replay's new target before it takes its name.
   */
  unjournaled<T>(fn: () => T): T {
    this.db.pragma('journal_mode = MEMORY');
    try {
      return fn();
    } finally {
      this.db.pragma('journal_mode = WAL');
    }
  }

  /** Runs `fn` in one transaction. */
  transaction<T>(fn: () => T): T {
    try {
      return this.db.transaction(() => this.ownChunks.around(fn))();
    } finally {
      // Every gathered chunk was written (or dropped) with it, a snapshot's included.
      this.snapshotInBatch = false;
    }
  }

  /** Stores a checkpoint (gzip-compressed JSON, snapshotBlob.ts). */
  saveSnapshot(runId: number, cp: ReplayCheckpoint, createdAt: string): void {
    const values = [runId, cp.batch, cp.engine.lastTick, cp.input, cp.line, cp.final ? 1 : 0, undefined, createdAt];
    // What a resume from this snapshot keeps must hold every own point before it.
    this.snapshotInBatch = true;
    storeSnapshot(this.thread?.inJob ? this.thread : this.db, values, { engine: cp.engine, driver: cp.driver });
  }

  /** The newest checkpoint, if any; with `before` (µs), the newest not final whose last tick is before it (a chart's replay starts there); `opts`: as {@link unpackSnapshot}'s (`packed` to restore an engine from). */
  latestSnapshot(before?: number, opts: UnpackOptions = {}): ReplayCheckpoint | undefined {
    const where = before === undefined ? '' : 'WHERE final = 0 AND last_tick < ?';
    const row = this.db
      .prepare(`SELECT id, batch, input, line, final, state FROM snapshots ${where} ORDER BY id DESC LIMIT 1`)
      .get(...(before === undefined ? [] : [before])) as
      | { id: number; batch: number; input: number; line: number; final: number; state: Buffer }
      | undefined;
    if (!row) return undefined;
    const { engine, driver } = unpackSnapshot(snapshotParts(this.db, row.id, row.state), opts) as Pick<
      ReplayCheckpoint,
      'engine' | 'driver'
    >;
    return { batch: row.batch, input: row.input, line: row.line, final: row.final === 1, engine, driver };
  }

  /** The newest run. */
  latestRun(): RunRow | undefined {
    return this.db.prepare(`SELECT * FROM runs ORDER BY id DESC LIMIT 1`).get() as RunRow | undefined;
  }

  /** The newest run that completed (the one whose outputs the tables hold). */
  latestCompleteRun(): RunRow | undefined {
    return this.db.prepare(`SELECT * FROM runs WHERE status = 'complete' ORDER BY id DESC LIMIT 1`).get() as RunRow | undefined;
  }

  /** Marks a run as failed, with the reason. */
  failRun(id: number, reason: string, finishedAt: string): void {
    this.db.prepare(`UPDATE runs SET status = ?, finished_at = ? WHERE id = ?`).run(`failed: ${reason}`, finishedAt, id);
  }

  private lastRateStmt: Database.Statement | undefined;

  /**
   * The newest row of one pair at or before `tick`, or undefined. Databases written before the
   * `volume` column existed answer 0 for it (they can be read, not migrated, when opened read-only).
   */
  lastRate(base: string, quote: string, tick: number): Omit<RateRow, 'tick' | 'base' | 'quote'> | undefined {
    if (!this.lastRateStmt) {
      const cols = (this.db.prepare('PRAGMA table_info(rates)').all() as { name: string }[]).map((c) => c.name);
      this.lastRateStmt = this.db.prepare(
        `SELECT rate, time, rank, used, fresh, ${cols.includes('volume') ? 'volume' : '0 AS volume'} FROM rates
         WHERE base = ? AND quote = ? AND tick <= ? ORDER BY tick DESC LIMIT 1`,
      );
    }
    return this.lastRateStmt.get(base, quote, tick) as Omit<RateRow, 'tick' | 'base' | 'quote'> | undefined;
  }

  private pairStmts: { first: Database.Statement; sameBase: Database.Statement; nextBase: Database.Statement } | undefined;

  /**
   * Every pair with rows in `rates`, sorted, by a loose index scan of rates(base, quote, tick): from
   * each pair, one seek to the next quote of its base, or else to the first pair of the next base.
   */
  ratePairs(): { base: string; quote: string }[] {
    this.pairStmts ??= {
      first: this.db.prepare('SELECT base, quote FROM rates ORDER BY base, quote LIMIT 1'),
      sameBase: this.db.prepare('SELECT base, quote FROM rates WHERE base = ? AND quote > ? ORDER BY base, quote LIMIT 1'),
      nextBase: this.db.prepare('SELECT base, quote FROM rates WHERE base > ? ORDER BY base, quote LIMIT 1'),
    };
    const { first, sameBase, nextBase } = this.pairStmts;
    type Pair = { base: string; quote: string };
    const out: Pair[] = [];
    for (let p = first.get() as Pair | undefined; p !== undefined; ) {
      out.push(p);
      p = (sameBase.get(p.base, p.quote) ?? nextBase.get(p.base)) as Pair | undefined;
    }
    return out;
  }

  private hasPeriodStmt: Database.Statement | undefined;

  /** Whether any bucket of the pair in this period is stored. */
  hasPeriod(base: string, quote: string, periodId: string): boolean {
    this.hasPeriodStmt ??= this.db.prepare('SELECT 1 FROM ohlc WHERE base = ? AND quote = ? AND period_id = ? LIMIT 1');
    return this.hasPeriodStmt.get(base, quote, periodId) !== undefined;
  }

  /** Period ids stored for a pair. */
  storedPeriods(base: string, quote: string): string[] {
    return (
      this.db.prepare(`SELECT DISTINCT period_id FROM ohlc WHERE base = ? AND quote = ?`).all(base, quote) as { period_id: string }[]
    ).map((r) => r.period_id);
  }

  private hasSeriesStmt: Database.Statement | undefined;

  /** Whether the pair's OHLC change series is stored (docs/methodology.md section 5). */
  hasSeries(base: string, quote: string): boolean {
    this.hasSeriesStmt ??= this.db.prepare('SELECT 1 FROM series WHERE base = ? AND quote = ? LIMIT 1');
    return this.hasSeriesStmt.get(base, quote) !== undefined;
  }

  private seriesStmts: RangeStatements | undefined;
  private rateRowStmts: RangeStatements | undefined;

  /** The statements of {@link fromLastBefore} over `select` (which ends with `WHERE base = ? AND quote = ?`). */
  private rangeStatements(select: string): RangeStatements {
    return {
      before: this.db.prepare(`${select} AND tick < ? ORDER BY tick DESC LIMIT 1`),
      from: this.db.prepare(`${select} AND tick >= ? AND tick < ? ORDER BY tick`),
    };
  }

  /**
   * A pair's rows, in tick order: the last one before `from` (if any), then those with tick in
   * [from, to), streamed (stop early by breaking out of the loop).
   */
  private *fromLastBefore<R>(stmts: RangeStatements, base: string, quote: string, from: number, to: number): IterableIterator<R> {
    const before = stmts.before.get(base, quote, from) as R | undefined;
    if (before) yield before;
    yield* stmts.from.iterate(base, quote, from, to) as IterableIterator<R>;
  }

  /**
   * The pair's OHLC change series as the engine reported it, from the last point before `from`
   * (if any) through the points before `to`, in tick order, streamed (stop early by breaking out
   * of the loop); NaN for no rate. Resolve it with the pair's rate changes ({@link iterateRateChanges}).
   */
  *iterateSeries(base: string, quote: string, from: number, to: number): IterableIterator<StoredSeriesPoint> {
    this.seriesStmts ??= this.rangeStatements('SELECT tick, rate, follow FROM series WHERE base = ? AND quote = ?');
    type Row = { tick: number; rate: number | null; follow: number };
    for (const r of this.fromLastBefore<Row>(this.seriesStmts, base, quote, from, to)) {
      yield { tick: r.tick, rate: r.rate ?? Number.NaN, follow: r.follow === 1 };
    }
  }

  /**
   * The pair's rate changes (tick, rate, fresh) from the last one before `from` (if any) through
   * those before `to`, in tick order, streamed; NaN for no rate.
   */
  *iterateRateChanges(base: string, quote: string, from: number, to: number): IterableIterator<RateChangePoint> {
    this.rateRowStmts ??= this.rangeStatements('SELECT tick, rate, fresh FROM rates WHERE base = ? AND quote = ?');
    type Row = { tick: number; rate: number | null; fresh: number };
    for (const r of this.fromLastBefore<Row>(this.rateRowStmts, base, quote, from, to)) {
      yield { tick: r.tick, rate: r.rate ?? Number.NaN, fresh: r.fresh === 1 };
    }
  }

  private bucketStmt: Database.Statement | undefined;

  /**
   * Stored buckets of one pair and period with start in [from, to), oldest first, streamed (stop
   * early by breaking out of the loop).
   */
  *iterateBuckets(base: string, quote: string, periodId: string, from: number, to: number): IterableIterator<OhlcBucket> {
    this.bucketStmt ??= this.db.prepare(
      `SELECT start, "end", time_open, time_close, open, high, low, close, count FROM ohlc
       WHERE base = ? AND quote = ? AND period_id = ? AND start >= ? AND start < ? ORDER BY start`,
    );
    for (const r of this.bucketStmt.iterate(base, quote, periodId, from, to) as IterableIterator<{
      start: number;
      end: number;
      time_open: number;
      time_close: number;
      open: number;
      high: number;
      low: number;
      close: number;
      count: number;
    }>) {
      yield {
        start: r.start,
        end: r.end,
        timeOpen: r.time_open,
        timeClose: r.time_close,
        open: r.open,
        high: r.high,
        low: r.low,
        close: r.close,
        count: r.count,
      };
    }
  }

  /** Stored buckets of one pair and period with start in [from, to), oldest first. */
  buckets(base: string, quote: string, periodId: string, from: number, to: number): OhlcBucket[] {
    return [...this.iterateBuckets(base, quote, periodId, from, to)];
  }

  /** Rejects, oldest first. */
  rejects(limit = 100): { input: number; source: string; line: number; reason: string; message: string; raw: string }[] {
    return this.db.prepare(`SELECT input, source, line, reason, message, raw FROM rejects ORDER BY input, line LIMIT ?`).all(limit) as {
      input: number;
      source: string;
      line: number;
      reason: string;
      message: string;
      raw: string;
    }[];
  }
}
