/**
 * Where the rate service gets its numbers: a {@link RateProvider} answers "rate of B/Q at T",
 * "all rates of B at T", "OHLC history of B/Q" and "explain B/Q".
 *
 * - {@link DatabaseRateProvider} serves a database written by `xrate replay`. The answers are
 *   those of src/replay/database.ts, the module the CLI's `xrate rate|history|explain DB` uses
 *   too; this front end resolves asset ids case-insensitively, reads a pair's history from its
 *   inverse when only that is stored, and words what has no data as 550. It follows the file
 *   while another process replays into it ({@link ReplayDatabaseWatch}): 550 naming the replay's
 *   run until one completes, then that run's answers. A long history is read lazily
 *   ({@link RateProvider.historyBuckets}), so the service can read it a slice at a time.
 * - {@link LiveRateProvider} serves a live engine (`serve --replay LOG`, `--follow`): current rates
 *   and provenance from the engine, earlier times and history from a {@link DatabaseRateProvider}
 *   over the database the engine writes to, plus the engine's open OHLC bucket.
 *
 * Speed: the pair table of a tick, its graph and every answer computed from it are cached (an LRU
 * of tables by tick; the current tick's answers hold their JSON text), so the hot path of
 * `GET /v1/exchangerate/BTC/USD` is two Map lookups, plus, once per turn of the event loop, the
 * watch's read snapshot and `PRAGMA data_version`.
 *
 * @module
 */
import { restoreEngine, type Engine, type SymbolFilter, type SymbolRecord } from '../core/engine.js';
import { delegatingMetrics, type MetricDefinition, type MetricsSource } from '../core/metrics/source.js';
import { toTimeseriesItem, type OhlcBucket } from '../core/ohlc.js';
import { bucketEnd, bucketStartAtOrAfter, EXCHANGE_RATE_PERIODS, type PeriodRecord } from '../core/periods.js';
import type { RateExplanation } from '../core/provenance.js';
import { floorSecond, formatTime, US_PER_SECOND } from '../core/time.js';
import { wireExplanation, wireNumber } from '../core/wire.js';
import { ReplayStore } from '../io/store.js';
import { partialOutputs, ReplayDatabase, ReplayDatabaseError, ReplayDatabaseWatch, type RunInfo, type Series } from '../replay/database.js';
import { EngineSource, PairTable, type CachedRate, type ExchangeRate, type RateSource } from '../replay/rateSources.js';
import { noData } from './errors.js';

export type { CachedRate, ExchangeRate, RateSource, RunInfo };
export { EngineSource, PairTable } from '../replay/rateSources.js';

/** One entry of {@link ExchangeRates}. */
export interface ExchangeRatesRate {
  time: string;
  asset_id_quote: string;
  rate: number;
}

/** The interface's all-rates object. */
export interface ExchangeRates {
  asset_id_base: string;
  rates: ExchangeRatesRate[];
}

/** The interface's ExchangeRatesTimeseriesItem. */
export interface TimeseriesItem {
  time_period_start: string;
  time_period_end: string;
  time_open: string | null;
  time_close: string | null;
  rate_open: number | null;
  rate_high: number | null;
  rate_low: number | null;
  rate_close: number | null;
}

/** Options of {@link RateProvider.rates}. */
export interface RatesQuery {
  /** µs; undefined = current. */
  at?: number;
  /** Only these quote assets. */
  filter?: readonly string[];
  /** 1 / rate for each quote asset. */
  invert?: boolean;
}

/** Options of {@link RateProvider.history}. */
export interface HistoryQuery {
  period: PeriodRecord;
  /** µs, inclusive: buckets whose start lies in [from, to). */
  from: number;
  /** µs, exclusive; undefined = through the end of the data. */
  to?: number;
  /** At most this many items (1..100000). */
  limit: number;
}

/** What a provider serves, for the start-up banner and `/v1/...` consumers. */
export interface ProviderInfo {
  mode: 'database' | 'replay' | 'follow' | 'replica';
  /** Database path. */
  source: string;
  firstTick: number | undefined;
  lastTick: number | undefined;
  pairs: number;
}

/**
 * The rate service's data source. Methods throw a 550 {@link noData} error when the requested item
 * has no data, and return plain wire objects otherwise.
 */
export interface RateProvider {
  info(): ProviderInfo;
  /** rate(base, quote) as of the last tick at or before `at` (µs), or the current rate. */
  rate(base: string, quote: string, at?: number): CachedRate;
  /** Every rate of `base` (sorted by quote asset), as of `q.at` or now. */
  rates(base: string, q: RatesQuery): ExchangeRates;
  /** OHLC timeseries of rate(base, quote). */
  history(base: string, quote: string, q: HistoryQuery): TimeseriesItem[] | Promise<TimeseriesItem[]>;
  /**
   * The buckets of {@link history}, inverted as its items are ({@link timeseriesItem} of each is
   * the item), read as they are consumed: the service takes them a slice at a time, with a turn
   * of the event loop in between. Checks and their 550s happen at the call.
   */
  historyBuckets?(base: string, quote: string, q: HistoryQuery): Iterator<OhlcBucket>;
  /** Provenance of rate(base, quote) (current, or at `at` when the provider keeps that state). */
  explain(base: string, quote: string, at?: number): RateExplanation | Promise<RateExplanation>;
  /**
   * The symbol records passing `filter` as of the last tick at or before `at` (or the last tick):
   * the engine's (docs/methodology.md section 10); a 550 for a time whose records the provider
   * cannot know exactly.
   */
  symbols(at: number | undefined, filter: SymbolFilter): SymbolRecord[];
  /** Releases the database (and stops a live feed). */
  close(): void | Promise<void>;
}

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

/** Buckets of rate(quote, base) from those of rate(base, quote): 1/x is decreasing, so high and low swap. */
function invertBucket(b: OhlcBucket): OhlcBucket {
  return { ...b, open: 1 / b.open, high: 1 / b.low, low: 1 / b.high, close: 1 / b.close };
}

/** The wire item of a bucket (times with 7 fractional digits, rates as written: core/ohlc.ts). */
export function timeseriesItem(b: OhlcBucket): TimeseriesItem {
  return toTimeseriesItem(b, formatTime);
}

function missing(src: RateSource, base: string, quote: string, rb: string | undefined, rq: string | undefined): string {
  const at = formatTime(src.tick);
  // Why there is none is the explain route's answer (engine.whyNoRate): rule 8's warm-up, staleness, ...
  const why = `the explain route, /v1/exchangerate/${base}/${quote}/explain, names the first reason: not yet eligible, stale, spread, rank or no path`;
  if (rb === undefined) return `no rate for ${base}/${quote} at ${at}: unknown asset "${base}" (no pair with a rate involves it; ${why})`;
  if (rq === undefined) return `no rate for ${base}/${quote} at ${at}: unknown asset "${quote}" (no pair with a rate involves it; ${why})`;
  return `no rate for ${base}/${quote} at ${at}: no path from ${rb} to ${rq} in the graph of pairs with a rate (${why})`;
}

/** rate(base, quote) from a rate source, or a 550 naming why there is none. */
function rateFrom(src: RateSource, base: string, quote: string): CachedRate {
  const rb = src.resolve(base);
  const rq = src.resolve(quote);
  const r = rb !== undefined && rq !== undefined ? src.rate(rb, rq) : undefined;
  if (!r) throw noData(missing(src, base, quote, rb, rq));
  return r;
}

/** Every rate of `base` from a rate source (see {@link RateProvider.rates}). */
function ratesFrom(src: RateSource, base: string, q: RatesQuery): ExchangeRates {
  const rb = src.resolve(base);
  if (rb === undefined)
    throw noData(`no rates of ${base} at ${formatTime(src.tick)}: unknown asset "${base}" (no pair with a rate involves it)`);
  let targets: string[];
  if (q.filter && q.filter.length > 0) {
    const set = new Set<string>();
    for (const f of q.filter) {
      const r = src.resolve(f);
      if (r !== undefined) set.add(r);
    }
    targets = [...set].sort();
  } else targets = src.assets().filter((a) => a !== rb);
  const rates: ExchangeRatesRate[] = [];
  for (const t of targets) {
    const r = src.rate(rb, t);
    if (!r) continue;
    rates.push({ time: r.value.time, asset_id_quote: t, rate: q.invert ? wireNumber(1 / r.raw) : r.value.rate });
  }
  return { asset_id_base: rb, rates };
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

  /**
   * @param store - an open replay database (read-only, unless `opts.watch` is false)
   * @throws `xrate:` error when the database holds no complete replay run
   */
  constructor(store: ReplayStore, opts: DatabaseProviderOptions = {}) {
    try {
      if (opts.watch !== false && !opts.run) {
        this.watch = new ReplayDatabaseWatch(store, { cacheTables: opts.cacheTables });
        this.served = this.watch.current();
      } else this.served = new ReplayDatabase(store, { cacheTables: opts.cacheTables, run: opts.run });
    } catch (e) {
      if (e instanceof ReplayDatabaseError && e.failure.kind === 'partial-outputs') {
        throw new Error(partialOutputs(store.path, e.failure.runId, e.failure.status));
      }
      if (e instanceof ReplayDatabaseError) {
        throw new Error(
          `xrate: database "${store.path}" holds no complete replay run (run "xrate replay LOG --db ${store.path}" or "npm start" first)`,
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
        throw noData(
          `the database "${f.path}" holds the partial outputs of replay run ${f.runId}, which has not completed ` +
            `(status "${f.status}"): answers resume once a replay into it completes`,
        );
      }
      throw noData(`the database "${f.path}" holds no complete replay run`);
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

  /** Why no data request can be answered now (a replay writing into the file), or undefined when they can. */
  unavailable(): string | undefined {
    try {
      this.current();
      return undefined;
    } catch (e) {
      return (e as Error).message;
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
    if (this.opts.extrapolate === false) throw noData('times after the last tick of a followed log are not known yet');
    try {
      return get();
    } catch (e) {
      if (!(e instanceof ReplayDatabaseError)) throw e;
      const f = e.failure;
      if (f.kind === 'restore-failed') {
        throw noData(
          `the engine state stored in the database cannot be restored by this version of xrate (${f.cause.message}): replay the log again`,
        );
      }
      throw noData(`the database "${f.path}" holds no engine state`);
    }
  }

  /** Where to answer "as of `at`" from (a pair table, or the final engine advanced), or a 550 naming why there is none. */
  sourceFor(at: number | undefined, what: string): RateSource {
    const { first, last } = this.ticks();
    const c = this.db.coverage;
    if (last === undefined || first === undefined) throw noData(`${what}: the database holds no computed tick`);
    const T = at === undefined ? last : floorSecond(at);
    if (c.from !== undefined && T < c.from)
      throw noData(`${what}: the database has output from ${formatTime(c.from)} on (the replay's --from)`);
    if (T < first) throw noData(`${what}: no data before the first tick ${formatTime(first)}`);
    if (T <= last) return this.db.pairTableAt(T);
    if (c.stopped) throw noData(`${what}: the database covers its log only up to ${formatTime(last)} (the replay stopped at --to)`);
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

  /** Resolves an asset id against the known pairs (exact, else case-insensitive). */
  private resolveAsset(asset: string): string | undefined {
    let ci: string | undefined;
    const u = asset.toUpperCase();
    for (const [b, q] of this.db.knownPairs()) {
      if (b === asset || q === asset) return asset;
      if (ci === undefined) {
        if (b.toUpperCase() === u) ci = b;
        else if (q.toUpperCase() === u) ci = q;
      }
    }
    return ci;
  }

  /** The stored series that gives `period` for base/quote: direct, or the inverse pair's; else a 550. */
  private historySource(base: string, quote: string, period: PeriodRecord): Series {
    const rb = this.resolveAsset(base);
    const rq = this.resolveAsset(quote);
    if (rb === undefined) throw noData(`no history for ${base}/${quote}: unknown asset "${base}"`);
    if (rq === undefined) throw noData(`no history for ${base}/${quote}: unknown asset "${quote}"`);
    const series = this.db.seriesFor(rb, rq, period, true);
    if (series) return series;
    const ids = new Set([...this.db.storedPeriods(rb, rq), ...this.db.storedPeriods(rq, rb)].map((p) => p.period_id));
    const stored = EXCHANGE_RATE_PERIODS.filter((p) => ids.has(p.period_id));
    if (stored.length > 0) {
      throw noData(
        `no history for ${rb}/${rq} in period ${period.period_id}: it cannot be rolled up from the stored periods ${stored.map((p) => p.period_id).join(', ')}`,
      );
    }
    throw noData(
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
      throw noData(
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
        throw noData('the database began serving another replay run while this answer was read: ask again');
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
      throw noData(
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
    if (last === undefined) throw noData('no symbol records: the database holds no computed tick');
    const T = at === undefined ? last : floorSecond(at);
    if (T < last) {
      throw noData(
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

/** Explains with an engine's current state (its rates as written); 550 when it has no rate or `at` is before its last tick. */
export function explainWith(engine: Engine, base: string, quote: string, at: number | undefined): RateExplanation {
  const last = engine.lastTickTime;
  if (at !== undefined && last !== undefined && floorSecond(at) < last) {
    throw noData(
      `provenance is kept for the latest tick ${formatTime(last)} only, not for ${formatTime(at)} (use "xrate explain LOG --at TIME")`,
    );
  }
  const ids = engine.assetIds();
  const resolve = (a: string): string => {
    if (ids.includes(a)) return a;
    const u = a.toUpperCase();
    const m = ids.filter((x) => x.toUpperCase() === u);
    return m.length === 1 ? m[0] : a;
  };
  const e = engine.explain(resolve(base), resolve(quote));
  if (e.kind === 'none') throw noData(`no rate for ${base}/${quote}${e.tick ? ` at ${e.tick}` : ''}: ${e.message ?? 'none'}`);
  return wireExplanation(e);
}

/**
 * A live engine over the database it writes to (`serve --replay LOG`, `serve --replay LOG
 * --follow`): rates at the engine's last tick from the engine, earlier times and history from a
 * {@link DatabaseRateProvider} over that database (plus the engine's open OHLC bucket),
 * provenance from the engine. After a replay (static engine) later times are answered as from
 * the database (engine advanced with no events); while following, a later time is answered with
 * the current state (the log may still grow).
 */
export class LiveRateProvider implements RateProvider {
  private readonly db: DatabaseRateProvider;
  private readonly store: ReplayStore;
  private current: EngineSource | undefined;
  private stopFeed: (() => void | Promise<void>) | undefined;
  /** A replica's engine advanced past its last tick, for the engine state `version` it was copied from. */
  private ahead: { version: number; engine: Engine; source?: EngineSource } | undefined;

  /**
   * @param engine - the live engine (its listener writes to `store`)
   * @param store - the database the engine writes to (read here on the same connection)
   * @param mode - `replay` (static after the replay), `follow` (a followed log) or `replica` (a
   * stream, src/distributed/replica.ts): past its last tick, a replay's and a replica's engine is
   * advanced with no more events (what a replay of what they read gives), while a followed log,
   * whose ticks follow the wall clock, answers as of its last tick
   * @param version - replica: a number that changes whenever the engine applies something (its
   * stream position), so that the engine advanced past the last tick is made again
   */
  constructor(
    readonly engine: Engine,
    store: ReplayStore,
    private readonly mode: 'replay' | 'follow' | 'replica',
    opts: DatabaseProviderOptions = {},
    private readonly version: () => number = () => 0,
  ) {
    this.store = store;
    this.db = new DatabaseRateProvider(store, {
      ...opts,
      ticks: () => ({ first: engine.firstTickTime, last: engine.lastTickTime }),
      openBucket: (series) => this.openBucket(series),
      extrapolate: mode === 'replay',
      watch: false,
    });
  }

  /** Records a pair that has rows in `rates` (the feed calls it as pairs appear). */
  notePair(base: string, quote: string): void {
    this.db.notePair(base, quote);
  }

  /** Called by {@link close} (stops the feed that drives the engine). */
  onClose(stop: () => void | Promise<void>): void {
    this.stopFeed = stop;
  }

  info(): ProviderInfo {
    return {
      mode: this.mode,
      source: this.store.path,
      firstTick: this.engine.firstTickTime,
      lastTick: this.engine.lastTickTime,
      pairs: this.engine.pairs().length,
    };
  }

  private sourceFor(at: number | undefined, what: string): RateSource {
    const last = this.engine.lastTickTime;
    if (last === undefined) throw noData(`${what}: no tick has been computed yet`);
    const T = at === undefined ? last : floorSecond(at);
    if (T < last || (T > last && this.mode === 'replay')) return this.db.sourceFor(at, what);
    if (T > last && this.mode === 'replica') {
      // As a replay database answers (database.ts): once every carried rate has expired, no pair.
      const c = this.engine.config;
      if (T - last > c.maxRateAgeUs + US_PER_SECOND) return new PairTable(T, [], c.crossMethod);
      const x = this.advanced(T);
      x.source ??= new EngineSource(x.engine);
      return x.source;
    }
    if (!this.current || this.current.tick !== last) this.current = new EngineSource(this.engine);
    return this.current;
  }

  /**
   * A replica's engine copied and advanced with no further events to tick T past its last, as a
   * replay of what it has read gives at T; reused while the replica has applied nothing new.
   */
  private advanced(T: number): { engine: Engine; source?: EngineSource } {
    const v = this.version();
    let x = this.ahead;
    if (!x || x.version !== v || (x.engine.lastTickTime ?? Number.NEGATIVE_INFINITY) > T) {
      x = { version: v, engine: restoreEngine(this.engine.snapshot(), {}) };
      this.ahead = x;
    }
    if (x.engine.lastTickTime !== T) {
      x.engine.advanceTo(T);
      x.source = undefined;
    }
    return x;
  }

  private openBucket(series: Series): OhlcBucket | undefined {
    const track = this.engine.trackedPairs().find((t) => t.base === series.base && t.quote === series.quote);
    if (!track) return undefined;
    return this.engine.openBuckets(track).find((o) => o.period.period_id === series.period.period_id)?.bucket;
  }

  rate(base: string, quote: string, at?: number): CachedRate {
    return rateFrom(this.sourceFor(at, `no rate for ${base}/${quote}`), base, quote);
  }

  rates(base: string, q: RatesQuery): ExchangeRates {
    return ratesFrom(this.sourceFor(q.at, `no rates of ${base}`), base, q);
  }

  history(base: string, quote: string, q: HistoryQuery): TimeseriesItem[] {
    return this.db.history(base, quote, q);
  }

  historyBuckets(base: string, quote: string, q: HistoryQuery): IterableIterator<OhlcBucket> {
    return this.db.historyBuckets(base, quote, q);
  }

  explain(base: string, quote: string, at?: number): RateExplanation {
    const last = this.engine.lastTickTime;
    if (this.mode === 'replay' && at !== undefined && last !== undefined && floorSecond(at) > last) return this.db.explain(base, quote, at);
    if (this.mode === 'replica' && at !== undefined && last !== undefined && floorSecond(at) > last)
      return explainWith(this.advanced(floorSecond(at)).engine, base, quote, at);
    return explainWith(this.engine, base, quote, at === undefined || last === undefined ? at : Math.min(at, last));
  }

  /** The engine's records at its last tick; earlier times from the database, later ones (replay, replica) from the engine advanced. */
  symbols(at: number | undefined, filter: SymbolFilter): SymbolRecord[] {
    const last = this.engine.lastTickTime;
    if (last === undefined) throw noData('no symbol records: no tick has been computed yet');
    const T = at === undefined ? last : floorSecond(at);
    if (T < last || (T > last && this.mode === 'replay')) return this.db.symbols(at, filter);
    if (T > last && this.mode === 'replica') return this.advanced(T).engine.symbols(filter);
    return this.engine.symbols(filter);
  }

  async close(): Promise<void> {
    if (this.stopFeed) await this.stopFeed();
    await this.db.close();
  }
}
