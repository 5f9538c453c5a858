/**
 * {@link DatabaseRateProvider}: the answers of a database written by `xrate replay`. They are
 * those of src/replay/database.ts, the module the CLI's `xrate rate|history|explain DB` uses too;
 * this front end resolves asset ids case-insensitively (assets.ts), reads a pair's history from its
 * inverse when only that is stored, and says what has no data ({@link noDataError}). It follows
 * the file while another process replays into it ({@link ReplayDatabaseWatch}): no data, naming
 * the replay's run, until one completes, then that run's answers. A long history is read lazily
 * ({@link RateProvider.historyBuckets}), so the service can read it a slice at a time.
 *
 * Speed: the pair table of a tick, its graph and every answer computed from it are cached (an LRU
 * of tables by tick; the current tick's answers hold their JSON text), so the hot path of
 * `GET /v1/exchangerate/BTC/USD` is two Map lookups, plus, once per turn of the event loop, the
 * watch's read snapshot and `PRAGMA data_version`.
 *
 * @module
 */
import { XrateError } from '../core/errors.js';
import type { Engine, SymbolFilter, SymbolRecord } from '../core/engine.js';
import { delegatingMetrics, type MetricDefinition, type MetricsSource } from '../core/metrics/source.js';
import type { OhlcBucket } from '../core/ohlc.js';
import { bucketEnd, bucketStartAtOrAfter, EXCHANGE_RATE_PERIODS, type PeriodRecord } from '../core/periods.js';
import type { RateExplanation } from '../core/provenance.js';
import { floorSecond, formatTime } from '../core/time.js';
import { ReplayStore } from '../io/store.js';
import { partialOutputs, ReplayDatabase, ReplayDatabaseError, ReplayDatabaseWatch, type RunInfo, type Series } from '../replay/database.js';
import { EngineSource } from '../replay/rateSources.js';
import { AssetResolver } from './assets.js';
import { explainWith } from './explain.js';
import { noDataError } from './noData.js';
import { rateFrom, ratesFrom } from './rates.js';
import {
  invertBucket,
  timeseriesItem,
  type CachedRate,
  type ExchangeRates,
  type HistoryQuery,
  type ProviderInfo,
  type RateProvider,
  type RateSource,
  type RatesQuery,
  type TimeseriesItem,
} from './types.js';

/** Work per read of {@link DatabaseRateProvider.historyBuckets}, ms (the number of buckets read at once follows it). */
const HISTORY_CHUNK_MS = 0.25;

/** What a history query reads: the series, the buckets asked for, and the database they come from. */
interface HistoryRead {
  db: ReplayDatabase;
  src: Series;
  period: PeriodRecord;
  first: number;
  end: number;
  lastEnd: number;
  limit: number;
  open: OhlcBucket | undefined;
  lastTick: number | undefined;
}

/** Options of {@link DatabaseRateProvider}. */
export interface DatabaseProviderOptions {
  /** Pair tables kept in the LRU cache (default 256). */
  cacheTables?: number;
  /** The run to serve (default: the newest complete run of the database). */
  run?: RunInfo;
  /** First and last tick now (default: the run's); a live engine's move on. */
  ticks?: () => { first: number | undefined; last: number | undefined };
  /** The open OHLC bucket of a stored series, if any (a live engine's, not yet flushed). */
  openBucket?: (series: Series) => OhlcBucket | undefined;
  /** Whether times after the last tick are answered by advancing the final engine (default true). */
  extrapolate?: boolean;
  /**
   * Whether to follow the database as another process writes into it (default true, unless `run`
   * is given): while a replay into the file has not completed, answers are 550 naming its run;
   * once one completes, its outputs are served ({@link ReplayDatabaseWatch}). Needs a store that
   * writes nothing; a live engine's provider reads the database it writes, without.
   */
  watch?: boolean;
}

/**
 * Serves a database written by `xrate replay` (see the module description). Keeps the database
 * open; pair tables are cached per tick.
 *
 * @example
 * ```ts
 * const p = await DatabaseRateProvider.open('out/xrate.sqlite');
 * p.rate('BTC', 'USD').value; // { time: '2024-03-01T05:53:52.2753720Z', asset_id_base: 'BTC', ... }
 * ```
 */
export class DatabaseRateProvider implements RateProvider {
  private readonly watch: ReplayDatabaseWatch | undefined;
  /** The database answered from last; the engines below belong to it. */
  private served: ReplayDatabase;
  private readonly ticks: () => { first: number | undefined; last: number | undefined };
  private readonly opts: DatabaseProviderOptions;
  private finalEngine: Engine | undefined;
  private extrapolatedSource: EngineSource | undefined;
  /** The final engine advanced past the end to its tick, kept for the next question about that tick. */
  private extrapolated: Engine | undefined;
  /** The resolver of the known pairs' assets, for the database and number of pairs it was made of. */
  private assets: { db: ReplayDatabase; pairs: number; resolver: AssetResolver } | undefined;

  /**
   * @param store - an open replay database (read-only, unless `opts.watch` is false)
   * @throws {@link XrateError} when the database holds no complete replay run (`no_data`) or the
   *   partial outputs of a run that did not complete (`unavailable`)
   */
  constructor(store: ReplayStore, opts: DatabaseProviderOptions = {}) {
    try {
      if (opts.watch !== false && !opts.run) {
        this.watch = new ReplayDatabaseWatch(store, { cacheTables: opts.cacheTables });
        this.served = this.watch.current();
      } else this.served = new ReplayDatabase(store, { cacheTables: opts.cacheTables, run: opts.run });
    } catch (e) {
      if (e instanceof ReplayDatabaseError && e.failure.kind === 'partial-outputs') {
        throw new XrateError('unavailable', partialOutputs(store.path, e.failure.runId, e.failure.status));
      }
      if (e instanceof ReplayDatabaseError) {
        throw noDataError(
          `database "${store.path}" holds no complete replay run (run "xrate replay LOG --db ${store.path}" or "npm start" first)`,
        );
      }
      throw e;
    }
    this.ticks =
      opts.ticks ??
      (() => {
        const c = this.db.coverage;
        return { first: c.firstTick, last: c.lastTick };
      });
    this.opts = opts;
  }

  /** {@link current}. */
  private get db(): ReplayDatabase {
    return this.current();
  }

  /**
   * The database to answer from now: while another process writes into the file, a 550 naming
   * the replay run that owns its outputs; after a run completed there, that run's (the engines
   * kept for the previous one are dropped).
   */
  private current(): ReplayDatabase {
    if (!this.watch) return this.served;
    let db: ReplayDatabase;
    try {
      db = this.watch.current();
    } catch (e) {
      if (!(e instanceof ReplayDatabaseError)) throw e;
      const f = e.failure;
      if (f.kind === 'partial-outputs') {
        throw noDataError(
          `the database "${f.path}" holds the partial outputs of replay run ${f.runId}, which has not completed ` +
            `(status "${f.status}"): answers resume once a replay into it completes`,
        );
      }
      throw noDataError(`the database "${f.path}" holds no complete replay run`);
    }
    if (db !== this.served) {
      this.served = db;
      this.finalEngine = undefined;
      this.extrapolatedSource = undefined;
      this.extrapolated = undefined;
    }
    return db;
  }

  /**
   * The stored metrics of the run served now, read in the same snapshot as the rates; while a
   * replay into the file has not completed, every call is the same 550 as a rate's.
   */
  metrics(own: readonly MetricDefinition[]): MetricsSource {
    let of: { db: ReplayDatabase; source: MetricsSource } | undefined;
    return delegatingMetrics(() => {
      const db = this.current();
      if (of?.db !== db) of = { db, source: db.store.metrics(own) };
      return of.source;
    });
  }

  /** Opens `path` read-only and serves it. */
  static async open(path: string, opts: DatabaseProviderOptions = {}): Promise<DatabaseRateProvider> {
    const store = ReplayStore.open(path, { readonly: true });
    try {
      return new DatabaseRateProvider(store, opts);
    } catch (e) {
      store.close();
      throw e;
    }
  }

  /** Records a pair that has rows in `rates` (live feeds call it as pairs appear). */
  notePair(base: string, quote: string): void {
    this.served.notePair(base, quote);
  }

  /** Why no data request can be answered now (a replay writing into the file: a {@link noDataError}), or undefined when they can. */
  unavailable(): Error | undefined {
    try {
      this.current();
      return undefined;
    } catch (e) {
      return e as Error;
    }
  }

  info(): ProviderInfo {
    try {
      this.current(); // the newest complete run, if the database changed
    } catch {
      // a replay is writing into it: the run served last
    }
    const c = this.served.coverage;
    const { first, last } = this.opts.ticks ? this.opts.ticks() : { first: c.firstTick, last: c.lastTick };
    return { mode: 'database', source: this.served.path, firstTick: first, lastTick: last, pairs: this.served.pairCount };
  }

  /** The engine at the end of the served run, restored once. */
  private final(): Engine {
    this.finalEngine ??= this.engineOr550(() => this.db.restoreFinalEngine());
    return this.finalEngine;
  }

  /**
   * The final engine advanced, with no further events, to tick T past the end; the one made for the
   * last such question is reused (a rate source, explain and symbols at one time share it).
   */
  private engineAfterEnd(T: number): Engine {
    if (this.extrapolated?.lastTickTime !== T) this.extrapolated = this.engineOr550(() => this.db.engineAfterEnd(T));
    return this.extrapolated;
  }

  /** The engine at the end of the replay, or a 550 naming why it cannot be had. */
  private engineOr550<T>(get: () => T): T {
    if (this.opts.extrapolate === false) throw noDataError('times after the last tick of a followed log are not known yet');
    try {
      return get();
    } catch (e) {
      if (!(e instanceof ReplayDatabaseError)) throw e;
      const f = e.failure;
      if (f.kind === 'restore-failed') {
        throw noDataError(
          `the engine state stored in the database cannot be restored by this version of xrate (${f.cause.message}): replay the log again`,
        );
      }
      throw noDataError(`the database "${f.path}" holds no engine state`);
    }
  }

  /** Where to answer "as of `at`" from (a pair table, or the final engine advanced), or a 550 naming why there is none. */
  sourceFor(at: number | undefined, what: string): RateSource {
    const { first, last } = this.ticks();
    const c = this.db.coverage;
    if (last === undefined || first === undefined) throw noDataError(`${what}: the database holds no computed tick`);
    const T = at === undefined ? last : floorSecond(at);
    if (c.from !== undefined && T < c.from)
      throw noDataError(`${what}: the database has output from ${formatTime(c.from)} on (the replay's --from)`);
    if (T < first) throw noDataError(`${what}: no data before the first tick ${formatTime(first)}`);
    if (T <= last) return this.db.pairTableAt(T);
    if (c.stopped) throw noDataError(`${what}: the database covers its log only up to ${formatTime(last)} (the replay stopped at --to)`);
    // Past the last tick every carried rate has expired once it is older than maxRateAge.
    if (this.db.allExpiredAt(T, last)) return this.db.emptyTableAt(T);
    // The extrapolated engine moves on to later times: only its state at T answers for T.
    if (!this.extrapolatedSource || this.extrapolatedSource.tick !== T) {
      this.extrapolatedSource = new EngineSource(this.engineAfterEnd(T));
    }
    return this.extrapolatedSource;
  }

  rate(base: string, quote: string, at?: number): CachedRate {
    return rateFrom(this.sourceFor(at, `no rate for ${base}/${quote}`), base, quote);
  }

  rates(base: string, q: RatesQuery): ExchangeRates {
    return ratesFrom(this.sourceFor(q.at, `no rates of ${base}`), base, q);
  }

  /** The resolver of the assets of the known pairs, in their order (made again when a pair was noted or another run is served). */
  private knownAssets(): AssetResolver {
    const db = this.db;
    const k = this.assets;
    if (k?.db === db && k.pairs === db.pairCount) return k.resolver;
    const ids = function* (): Generator<string> {
      for (const [b, q] of db.knownPairs()) {
        yield b;
        yield q;
      }
    };
    this.assets = { db, pairs: db.pairCount, resolver: new AssetResolver(ids()) };
    return this.assets.resolver;
  }

  /** The stored series that gives `period` for base/quote: direct, or the inverse pair's; else a 550. */
  private historySource(base: string, quote: string, period: PeriodRecord): Series {
    const assets = this.knownAssets();
    const rb = assets.resolveFirst(base);
    const rq = assets.resolveFirst(quote);
    if (rb === undefined) throw noDataError(`no history for ${base}/${quote}: unknown asset "${base}"`);
    if (rq === undefined) throw noDataError(`no history for ${base}/${quote}: unknown asset "${quote}"`);
    const series = this.db.seriesFor(rb, rq, period, true);
    if (series) return series;
    const ids = new Set([...this.db.storedPeriods(rb, rq), ...this.db.storedPeriods(rq, rb)].map((p) => p.period_id));
    const stored = EXCHANGE_RATE_PERIODS.filter((p) => ids.has(p.period_id));
    if (stored.length > 0) {
      throw noDataError(
        `no history for ${rb}/${rq} in period ${period.period_id}: it cannot be rolled up from the stored periods ${stored.map((p) => p.period_id).join(', ')}`,
      );
    }
    throw noDataError(
      `no history for ${rb}/${rq}: the database keeps OHLC of the pairs tracked during the replay (direct pairs by default; ` +
        `a cross rate needs "xrate replay --track ${rb}/${rq}")`,
    );
  }

  /** What a history query reads (a 550 naming why there is nothing); undefined when it asks for no bucket. */
  private historyRead(base: string, quote: string, q: HistoryQuery): HistoryRead | undefined {
    const db = this.db;
    const period = q.period;
    const first = bucketStartAtOrAfter(q.from, period);
    const end = q.to ?? Number.MAX_SAFE_INTEGER;
    const from = db.coverage.from;
    if (from !== undefined && first < from) {
      throw noDataError(
        `no history for ${base}/${quote} from ${formatTime(first)}: the database has output from ${formatTime(from)} on (the replay's --from)`,
      );
    }
    const src = this.historySource(base, quote, period);
    if (first >= end) return undefined;
    const lastEnd = q.to === undefined ? Number.MAX_SAFE_INTEGER : bucketEnd(q.to - 1, period);
    return { db, src, period, first, end, lastEnd, limit: q.limit, open: this.opts.openBucket?.(src), lastTick: this.ticks().last };
  }

  history(base: string, quote: string, q: HistoryQuery): TimeseriesItem[] {
    const r = this.historyRead(base, quote, q);
    if (!r) return [];
    const buckets = r.db.buckets(r.src, r.period, r.first, r.end, r.lastEnd, r.limit, r.open, r.lastTick);
    return buckets.map((b) => timeseriesItem(r.src.inverted ? invertBucket(b) : b));
  }

  /**
   * The buckets of {@link history} (inverted for an inverse pair), read as the sequence is
   * consumed: a run of consecutive buckets at a time, sized to about {@link HISTORY_CHUNK_MS} of
   * work. The checks (and their 550s) happen at the call. Every later read first checks that the
   * database still serves the same run, else throws a 550 (a replay into the file began or
   * completed meanwhile).
   */
  historyBuckets(base: string, quote: string, q: HistoryQuery): IterableIterator<OhlcBucket> {
    const r = this.historyRead(base, quote, q);
    return r ? this.readHistory(r) : [][Symbol.iterator]();
  }

  /**
   * Reads `r` run by run: buckets of the same period start at period boundaries, so the buckets
   * from the end of the last one read on are the rest of the answer (a roll-up's groups and a
   * change series' carried rate never straddle a boundary).
   */
  private *readHistory(r: HistoryRead): Generator<OhlcBucket> {
    let cursor = r.first;
    let left = r.limit;
    let n = 64;
    while (left > 0 && cursor < r.end) {
      if (this.db !== r.db) {
        throw noDataError('the database began serving another replay run while this answer was read: ask again');
      }
      const ask = Math.min(n, left);
      const t0 = performance.now();
      const got = r.db.buckets(r.src, r.period, cursor, r.end, r.lastEnd, ask, r.open, r.lastTick);
      const ms = performance.now() - t0;
      for (const b of got) yield r.src.inverted ? invertBucket(b) : b;
      if (got.length < ask) return;
      left -= got.length;
      cursor = bucketEnd(got[got.length - 1].start, r.period);
      if (ms < HISTORY_CHUNK_MS / 2) n = Math.min(n * 2, 4096);
      else if (ms > HISTORY_CHUNK_MS * 2) n = Math.max(n >> 1, 8);
    }
  }

  explain(base: string, quote: string, at?: number): RateExplanation {
    const last = this.ticks().last;
    if (at === undefined || last === undefined || floorSecond(at) <= last) {
      return explainWith(this.final(), base, quote, at);
    }
    const T = floorSecond(at);
    this.sourceFor(at, `no provenance of ${base}/${quote}`); // coverage checks
    if (this.db.allExpiredAt(T, last)) {
      throw noDataError(
        `no rate for ${base}/${quote} at ${formatTime(T)}: every rate expired (maxRateAge) after the data ended at ${formatTime(last)}`,
      );
    }
    return explainWith(this.engineAfterEnd(T), base, quote, at);
  }

  /**
   * The symbol records at the replay's last tick (from its final engine) or, after it, from that
   * engine advanced to `at`. An earlier time is a 550: the records' derived values need every
   * event up to it, which the database does not keep (the log does: `xrate symbols LOG`).
   */
  symbols(at: number | undefined, filter: SymbolFilter): SymbolRecord[] {
    const { last } = this.ticks();
    if (last === undefined) throw noDataError('no symbol records: the database holds no computed tick');
    const T = at === undefined ? last : floorSecond(at);
    if (T < last) {
      throw noDataError(
        `no symbol records at ${formatTime(T)}: the database keeps them as of its last tick ${formatTime(last)} (and later) only, ` +
          `since their volumes, times and prices need every event up to the time asked for: ask the log ("xrate symbols LOG ROUTE time=${formatTime(T)}")`,
      );
    }
    if (T === last) {
      return this.final().symbols(filter);
    }
    this.sourceFor(at, 'no symbol records'); // coverage checks (a replay stopped at --to)
    return this.engineAfterEnd(T).symbols(filter);
  }

  close(): void | Promise<void> {
    this.served.close();
  }
}
