/**
 * Answers from a replay database: the one place that knows how a database written by
 * `xrate replay` answers as its log would. The CLI (`xrate rate|history|explain DB`, query.ts) and
 * the service (src/answers/databaseProvider.ts) are thin front ends over it; they only word its failures (an
 * {@link XrateError} and exit 1, or HTTP 550 with a `message`).
 *
 * - Coverage: the newest complete run, its config, first and last tick, its `--from` and whether
 *   it stopped at `--to`. Times before the `--from` or, for a stopped run, after its last tick are
 *   not covered (the log could answer them, the database cannot).
 * - Rates at a tick T within the replay: the newest `rates` row of every pair at or before T (a row
 *   is written whenever a pair's rate, time, rank, markets used, volume or freshness changes, plus
 *   a full-state row at the start of the output), searched by the engine's graph with the run's
 *   cross method (docs/methodology.md rule 12). Tables are cached per tick (LRU).
 * - After the last tick: the engine of the final snapshot advanced to T with no further events,
 *   which is what replaying the log to T gives. Once T is more than `maxRateAge` past the last
 *   tick every carried rate has expired (rule 13).
 * - History: the stored buckets of the largest stored period that nests in the one asked for
 *   (1SEC, 1MIN, 1HRS and 1DAY by default), rolled up (docs/methodology.md section 5), read from
 *   the pair or, where allowed, its inverse; streamed and cut at the limit.
 *
 * @module
 */
import { resolveConfig, type EngineConfig, type ResolvedConfig } from '../core/config.js';
import { restoreEngine, type Engine } from '../core/engine.js';
import { FileSpill } from '../io/binSpill.js';
import { rollUp, type OhlcBucket } from '../core/ohlc.js';
import { bucketsFromSeries, resolveSeries } from '../core/ohlcSeries.js';
import { bucketStart, EXCHANGE_RATE_PERIODS, getPeriod, isRollupOf, type PeriodRecord } from '../core/periods.js';
import { floorSecond, US_PER_SECOND } from '../core/time.js';
import { type ErrorCode, XrateError } from '../core/errors.js';
import { ReplayStore, type RunRow } from '../io/store.js';
import { runIsDead } from '../io/storeSchema.js';
import { PairTable, type PairRow } from './rateSources.js';

/** What is read of a `runs` row. */
export interface RunInfo {
  config: string;
  options: string;
  first_tick: number | null;
  last_tick: number | null;
  /** 1 when the replay stopped at its --to before the end of its input (absent: 0). */
  stopped?: number;
}

/** What a replay database covers. */
export interface Coverage {
  /** The engine configuration of the run. */
  config: ResolvedConfig;
  /** First and last computed tick (µs), undefined when the run computed none. */
  firstTick: number | undefined;
  lastTick: number | undefined;
  /** The run's `--from` (start of output), if given. */
  from: number | undefined;
  /** Whether the run stopped at its `--to` before the end of its log. */
  stopped: boolean;
}

/** Why a time span is not covered by the database. */
export type NotCovered = { kind: 'before-from'; from: number } | { kind: 'after-stop'; last: number };

/** A failure of the database itself (each front end words it). */
export type DatabaseFailure =
  | { kind: 'no-complete-run'; path: string }
  | { kind: 'partial-outputs'; path: string; runId: number; status: string }
  | { kind: 'no-engine-state'; path: string }
  | { kind: 'restore-failed'; path: string; cause: Error };

/** The code of each {@link DatabaseFailure} kind. */
const FAILURE_CODES: Record<DatabaseFailure['kind'], ErrorCode> = {
  'no-complete-run': 'no_data',
  'partial-outputs': 'unavailable',
  'no-engine-state': 'no_data',
  'restore-failed': 'input',
};

/** Thrown for a {@link DatabaseFailure} (its code by the failure's kind: no data, partial outputs unavailable now). */
export class ReplayDatabaseError extends XrateError {
  constructor(readonly failure: DatabaseFailure) {
    super(FAILURE_CODES[failure.kind], `database "${failure.path}": ${failure.kind}`);
    this.name = 'ReplayDatabaseError';
  }
}

/** Why a database whose newest replay did not complete answers nothing (the CLI's and the service's wording). */
export function partialOutputs(path: string, runId: number, status: string): string {
  return (
    `database "${path}" holds the partial outputs of replay run ${runId}, which did not complete (status "${status}": ` +
    'it failed, was killed, or is still running): replay again, or continue it with --resume if it took snapshots'
  );
}

/** A run's status as the refusals word it: `killed (its process N is gone)` for a run whose process died while running. */
function runStatus(run: RunRow): string {
  return runIsDead(run) ? `killed (its process ${run.pid} is gone)` : run.status;
}

/** A stored OHLC series that gives a period of a pair: the pair's own, or its inverse's. */
export interface Series {
  base: string;
  quote: string;
  /** The stored period read (equal to or nesting in the one asked for), or the one asked for when `changes`. */
  period: PeriodRecord;
  /** True when the series is of quote/base (buckets to be inverted). */
  inverted: boolean;
  /**
   * True when no stored period nests in the one asked for and the buckets are made from the
   * pair's OHLC change series (docs/methodology.md section 5, "Buckets from changes").
   */
  changes?: boolean;
}

/** Options of {@link ReplayDatabase}. */
export interface ReplayDatabaseOptions {
  /** Pair tables kept in the LRU cache (default 256). */
  cacheTables?: number;
  /** The run to answer for (default: the newest complete run). */
  run?: RunInfo;
}

function periodLength(p: PeriodRecord): number {
  return p.length_months > 0 ? p.length_months * 31 * 86_400 : p.length_seconds;
}

/**
 * A replay database and the answers it gives (see the module description).
 *
 * @example
 * ```ts
 * const db = ReplayDatabase.open('out/xrate.sqlite');
 * db.pairTableAt(db.coverage.lastTick!).rate('BTC', 'USD')?.value.rate;
 * db.close();
 * ```
 */
export class ReplayDatabase {
  /** What the database covers (the run's values). */
  readonly coverage: Coverage;
  private readonly pairs = new Map<string, [string, string]>();
  private readonly tables = new Map<number, PairTable>();
  private readonly maxTables: number;
  private extrapolated: Engine | undefined;

  /**
   * @param store - an open replay database (read-only is enough); closed by {@link close}
   * @throws {@link ReplayDatabaseError} `no-complete-run` when no run completed, `partial-outputs`
   *   when the newest replay into it failed or was killed after it began writing
   */
  constructor(
    readonly store: ReplayStore,
    opts: ReplayDatabaseOptions = {},
  ) {
    if (!opts.run) {
      // A replay that failed or was killed after it began writing leaves partial tables: they are
      // not the previous complete run's any more, and not a run's whole output either.
      const owner = store.outputsRun();
      if (owner && owner.status !== 'complete') {
        throw new ReplayDatabaseError({ kind: 'partial-outputs', path: store.path, runId: owner.id, status: runStatus(owner) });
      }
    }
    const run: RunInfo | undefined = opts.run ?? store.latestCompleteRun();
    if (!run) throw new ReplayDatabaseError({ kind: 'no-complete-run', path: store.path });
    this.coverage = {
      config: resolveConfig(JSON.parse(run.config) as Partial<EngineConfig>),
      firstTick: run.first_tick ?? undefined,
      lastTick: run.last_tick ?? undefined,
      from: (JSON.parse(run.options) as { from?: number }).from,
      stopped: run.stopped === 1,
    };
    this.maxTables = opts.cacheTables ?? 256;
    for (const r of store.ratePairs()) this.notePair(r.base, r.quote);
  }

  /**
   * Opens `path` read-only.
   * @throws {@link XrateError} `input` when it cannot be opened or is not a replay database; {@link ReplayDatabaseError}
   */
  static open(path: string, opts: ReplayDatabaseOptions = {}): ReplayDatabase {
    const store = ReplayStore.open(path, { readonly: true });
    try {
      return new ReplayDatabase(store, opts);
    } catch (e) {
      store.close();
      throw e;
    }
  }

  /** The database file. */
  get path(): string {
    return this.store.path;
  }

  /**
   * Why [start, end] (µs) is not covered, or undefined when it is: before the run's `--from`, or
   * after the last tick of a run that stopped at `--to`.
   */
  notCovered(start: number, end: number, lastTick = this.coverage.lastTick): NotCovered | undefined {
    const c = this.coverage;
    if (c.from !== undefined && start < c.from) return { kind: 'before-from', from: c.from };
    if (c.stopped && lastTick !== undefined && end > lastTick) return { kind: 'after-stop', last: lastTick };
    return undefined;
  }

  /** Pairs with rows in `rates`, as [base, quote]: those found when opened, and those noted since. */
  knownPairs(): IterableIterator<[string, string]> {
    return this.pairs.values();
  }

  /** Number of {@link knownPairs}. */
  get pairCount(): number {
    return this.pairs.size;
  }

  /** Records a pair that has rows in `rates` (a live feed calls it as pairs appear). */
  notePair(base: string, quote: string): void {
    const k = `${base}/${quote}`;
    if (!this.pairs.has(k)) this.pairs.set(k, [base, quote]);
  }

  private cached(T: number, make: () => PairTable): PairTable {
    const hit = this.tables.get(T);
    if (hit) {
      this.tables.delete(T); // refresh its place in the LRU order
      this.tables.set(T, hit);
      return hit;
    }
    const t = make();
    this.tables.set(T, t);
    if (this.tables.size > this.maxTables) this.tables.delete(this.tables.keys().next().value as number);
    return t;
  }

  /** The pair table as of the last tick <= T (T a whole second within the replay), cached. */
  pairTableAt(T: number): PairTable {
    return this.cached(T, () => {
      const rows: PairRow[] = [];
      for (const [base, quote] of this.knownPairs()) {
        const r = this.store.lastRate(base, quote, T);
        if (!r || r.rate === null || r.time === null) continue;
        rows.push({ base, quote, rate: r.rate, time: r.time, rank: r.rank, used: r.used, fresh: r.fresh, volume: r.volume ?? 0 });
      }
      rows.sort((a, b) => (a.base === b.base ? (a.quote < b.quote ? -1 : 1) : a.base < b.base ? -1 : 1));
      return new PairTable(T, rows, this.coverage.config.crossMethod);
    });
  }

  /** An empty pair table at T (no rate anywhere), cached like the others. */
  emptyTableAt(T: number): PairTable {
    return this.cached(T, () => new PairTable(T, [], this.coverage.config.crossMethod));
  }

  /** Whether at T (> the last tick) every carried rate has expired (rule 13's `maxRateAge`). */
  allExpiredAt(T: number, lastTick = this.coverage.lastTick): boolean {
    return lastTick !== undefined && T - lastTick > this.coverage.config.maxRateAgeUs + US_PER_SECOND;
  }

  /**
   * The engine at the end of the replay, restored from the final snapshot.
   * @throws {@link ReplayDatabaseError} `no-engine-state`, `restore-failed`
   */
  restoreFinalEngine(): Engine {
    // The snapshot's trade bins read into temporary files, and restored from them.
    const binsOnDisk = new FileSpill();
    try {
      const cp = this.store.latestSnapshot(undefined, { packed: true, store: binsOnDisk });
      if (!cp) throw new ReplayDatabaseError({ kind: 'no-engine-state', path: this.path });
      try {
        // Held as long as the database is served: its older trade bins on disk (src/io/binSpill.ts),
        // as they are restored.
        return restoreEngine(cp.engine, {}, { spill: new FileSpill() });
      } catch (e) {
        throw new ReplayDatabaseError({ kind: 'restore-failed', path: this.path, cause: e as Error });
      }
    } finally {
      binsOnDisk.close();
    }
  }

  /**
   * The final engine advanced to `at` with no further events (what replaying the log to `at`
   * gives); kept and advanced further for later times, restored again for an earlier one.
   */
  engineAfterEnd(at: number): Engine {
    if (!this.extrapolated || (this.extrapolated.lastTickTime ?? -Infinity) > floorSecond(at))
      this.extrapolated = this.restoreFinalEngine();
    this.extrapolated.advanceTo(at);
    return this.extrapolated;
  }

  /** The periods stored for base/quote, in the database's order. */
  storedPeriods(base: string, quote: string): PeriodRecord[] {
    return this.store
      .storedPeriods(base, quote)
      .map((id) => getPeriod(id))
      .filter((p): p is PeriodRecord => !!p);
  }

  /**
   * The stored series that gives `period` for base/quote: the largest stored period equal to it
   * or nesting in it, of the pair, else (with `inverse`) of quote/base; undefined when none.
   */
  seriesFor(base: string, quote: string, period: PeriodRecord, inverse: boolean): Series | undefined {
    const usable = EXCHANGE_RATE_PERIODS.filter((p) => p.period_id === period.period_id || isRollupOf(period, p)).sort(
      (x, y) => periodLength(y) - periodLength(x),
    );
    const sides: [string, string, boolean][] = inverse
      ? [
          [base, quote, false],
          [quote, base, true],
        ]
      : [[base, quote, false]];
    for (const [b, q, inverted] of sides) {
      for (const p of usable) if (this.store.hasPeriod(b, q, p.period_id)) return { base: b, quote: q, period: p, inverted };
    }
    for (const [b, q, inverted] of sides) if (this.store.hasSeries(b, q)) return { base: b, quote: q, period, inverted, changes: true };
    return undefined;
  }

  /**
   * Buckets of `period` from a stored series, of the buckets whose start lies in [first, end),
   * oldest first, at most `limit`, as stored (not inverted). Rows are read up to `lastEnd` (the
   * end of the last bucket asked for). An `open` bucket (a live engine's, not yet flushed)
   * replaces what was stored from its start on. A series of `changes` is read through
   * `lastTick` (default: the run's last tick; a live engine's last tick).
   */
  buckets(
    series: Series,
    period: PeriodRecord,
    first: number,
    end: number,
    lastEnd: number,
    limit: number,
    open?: OhlcBucket,
    lastTick = this.coverage.lastTick,
  ): OhlcBucket[] {
    if (series.changes) {
      if (lastTick === undefined) return [];
      const to = Math.min(lastEnd, lastTick + US_PER_SECOND);
      const points = resolveSeries(
        this.store.iterateSeries(series.base, series.quote, first, to),
        this.store.iterateRateChanges(series.base, series.quote, first, to),
      );
      return bucketsFromSeries(points, { period, first, end, lastTick, limit });
    }
    const out: OhlcBucket[] = [];
    const same = series.period.period_id === period.period_id;
    let group: OhlcBucket[] = [];
    let groupStart = Number.NaN;
    const emit = (): void => {
      if (group.length === 0) return;
      out.push(same ? group[0] : rollUp(group, period)[0]);
      group = [];
    };
    const take = (b: OhlcBucket): boolean => {
      const s = same ? b.start : bucketStart(b.start, period);
      if (s !== groupStart) {
        emit();
        if (out.length >= limit || s >= end) return false;
        groupStart = s;
      }
      group.push(b);
      return true;
    };
    let stopped = false;
    for (const row of this.store.iterateBuckets(series.base, series.quote, series.period.period_id, first, lastEnd)) {
      if (open && row.start >= open.start) break;
      if (!take(row)) {
        stopped = true;
        break;
      }
    }
    if (!stopped && open && open.start >= first && open.start < lastEnd) take({ ...open });
    if (out.length < limit) emit();
    return out.slice(0, limit);
  }

  close(): void {
    this.store.close();
  }
}

/**
 * A replay database served while other processes may write into it (`xrate serve --db FILE`
 * while `xrate replay LOG --db FILE` runs). {@link current} gives the {@link ReplayDatabase} to
 * answer from. Its first call in a turn of the event loop opens a read snapshot that lasts until
 * the next `setImmediate`, so every answer of the turn reads one state of the file, and compares
 * `PRAGMA data_version` with the last one seen: when another connection has committed since, the
 * run that owns the outputs is read again. While that run is not complete (a replay is writing,
 * failed, or was killed), `current` throws `partial-outputs`; once another run is complete, a new
 * {@link ReplayDatabase} is opened over it (its config, coverage, pairs, empty caches).
 *
 * The store must be one that writes nothing (opened read-only): the snapshot is a transaction on
 * its connection.
 *
 * @example
 * ```ts
 * const watch = new ReplayDatabaseWatch(ReplayStore.open('out/xrate.sqlite', { readonly: true }));
 * watch.current().pairTableAt(watch.current().coverage.lastTick!); // throws while a replay writes
 * ```
 */
export class ReplayDatabaseWatch {
  private db: ReplayDatabase;
  private runId: number | undefined;
  private version: number | undefined;
  private partial: RunRow | undefined;
  private inTurn = false;
  private readonly endTurn = (): void => {
    this.inTurn = false;
    this.store.endRead();
  };

  /**
   * @param store - a replay database opened read-only; closed by {@link close}
   * @throws {@link ReplayDatabaseError} as {@link ReplayDatabase} when the outputs cannot be served now
   */
  constructor(
    readonly store: ReplayStore,
    private readonly opts: Pick<ReplayDatabaseOptions, 'cacheTables'> = {},
  ) {
    this.db = new ReplayDatabase(store, opts);
    this.runId = ReplayDatabaseWatch.servedRun(store);
  }

  /** The complete run whose outputs the tables hold (or, in a database that does not record it, the newest complete run). */
  private static servedRun(store: ReplayStore): number | undefined {
    const owner = store.outputsRun();
    return owner?.status === 'complete' ? owner.id : store.latestCompleteRun()?.id;
  }

  /**
   * The database to answer from in this turn of the event loop: the same object as long as the
   * outputs belong to the same complete run.
   * @throws {@link ReplayDatabaseError} `partial-outputs` (naming the run and its status) while the
   *   outputs belong to a run that is not complete
   */
  current(): ReplayDatabase {
    if (!this.inTurn && this.store.isOpen) {
      this.inTurn = true;
      setImmediate(this.endTurn);
      const v = this.store.beginRead();
      if (v !== this.version) {
        this.refresh();
        this.version = v;
      }
    }
    const p = this.partial;
    if (p) throw new ReplayDatabaseError({ kind: 'partial-outputs', path: this.store.path, runId: p.id, status: runStatus(p) });
    return this.db;
  }

  private refresh(): void {
    const owner = this.store.outputsRun();
    if (owner && owner.status !== 'complete') {
      this.partial = owner;
      return;
    }
    this.partial = undefined;
    const id = owner ? owner.id : this.store.latestCompleteRun()?.id;
    if (id !== this.runId) {
      this.db = new ReplayDatabase(this.store, this.opts);
      this.runId = id;
    }
  }

  close(): void {
    this.store.close();
  }
}
