/**
 * Where the rate service gets its numbers: a {@link RateProvider} answers "rate of B/Q at T",
 * "all rates of B at T", "OHLC history of B/Q" and "explain B/Q".
 *
 * - {@link DatabaseRateProvider} reads a database written by `xrate replay` and answers as
 *   `xrate rate --at` / `xrate history` / `xrate explain` do from it (src/replay/query.ts): within
 *   the replay, the pair table as of a tick is the newest `rates` row of every pair at or before
 *   it, with cross rates by the engine's graph search (the run's cross method); after the last
 *   tick, the engine of the final snapshot advanced to that time with no further events; history
 *   from the stored OHLC buckets, rolled up from the largest stored period that nests; times the
 *   database does not cover (before the replay's `--from`, after the `--to` it stopped at) are
 *   550.
 * - {@link LiveRateProvider} serves a live engine (`serve --replay LOG`, `--follow`): current rates
 *   and provenance from the engine, earlier times and history from the database the engine writes
 *   to, plus the engine's open OHLC bucket.
 *
 * Speed: the pair table of a tick, its graph and every answer computed from it are cached (an LRU
 * of tables by tick; the current tick's answers hold their JSON text), so the hot path of
 * `GET /v1/exchangerate/BTC/USD` is two Map lookups.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { resolveConfig, type CrossMethod, type EngineConfig, type ResolvedConfig } from '../core/config.js';
import { restoreEngine, type Engine } from '../core/engine.js';
import { RateGraph, type PairView } from '../core/graph.js';
import { rollUp, type OhlcBucket } from '../core/ohlc.js';
import { bucketEnd, bucketStart, EXCHANGE_RATE_PERIODS, getPeriod, isRollupOf, type PeriodRecord } from '../core/periods.js';
import type { RateExplanation } from '../core/provenance.js';
import { formatTime, US_PER_SECOND } from '../core/time.js';
import { ReplayStore } from '../io/store.js';
import { noData } from './errors.js';

/** The interface's ExchangeRate (field order of the schema). */
export interface ExchangeRate {
  time: string;
  asset_id_base: string;
  asset_id_quote: string;
  rate: number;
}

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

/** A rate answer with its JSON text, cached per tick. */
export interface CachedRate {
  readonly value: ExchangeRate;
  /** `JSON.stringify(value)`, computed once. */
  readonly json: string;
  /** µs time of the rate (unformatted). */
  readonly timeUs: number;
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
  mode: 'database' | 'replay' | 'follow';
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
  /** Provenance of rate(base, quote) (current, or at `at` when the provider keeps that state). */
  explain(base: string, quote: string, at?: number): RateExplanation | Promise<RateExplanation>;
  /** Releases the database (and stops a live feed). */
  close(): void | Promise<void>;
}

function floorSecond(t: number): number {
  return Math.floor(t / US_PER_SECOND) * US_PER_SECOND;
}

function makeRate(base: string, quote: string, rate: number, timeUs: number): CachedRate {
  const value: ExchangeRate = { time: formatTime(timeUs), asset_id_base: base, asset_id_quote: quote, rate };
  return { value, json: JSON.stringify(value), timeUs };
}

/** Row of a pair's state at a tick (the `rates` table's columns). */
export interface PairRow {
  base: string;
  quote: string;
  rate: number;
  time: number;
  rank: number | null;
  used: number;
  fresh: number;
  /** Sum of V of the markets used (the layered cross method weighs by it). */
  volume: number;
}

/**
 * The pair table as of one tick with its graph: rates between any two assets by the engine's
 * BFS search (rule 12), answers cached.
 */
export class PairTable {
  private readonly names: string[] = [];
  private readonly ids = new Map<string, number>();
  private readonly upper = new Map<string, string | null>();
  private readonly view: PairView;
  private readonly graph: RateGraph;
  private readonly cache = new Map<string, CachedRate | null>();
  private sortedAssets: string[] | undefined;

  /**
   * @param tick - the tick (µs) the rows describe; identity rates carry it as their time
   * @param rows - one row per pair with a rate (not expired)
   * @param method - the cross-rate method of the run (rule 12)
   */
  constructor(
    readonly tick: number,
    rows: readonly PairRow[],
    private readonly method: CrossMethod = 'bfs',
  ) {
    const id = (a: string): number => {
      let i = this.ids.get(a);
      if (i === undefined) {
        i = this.names.length;
        this.ids.set(a, i);
        this.names.push(a);
        const u = a.toUpperCase();
        this.upper.set(u, this.upper.has(u) && this.upper.get(u) !== a ? null : a);
      }
      return i;
    };
    const n = rows.length;
    this.view = {
      count: n,
      base: Int32Array.from(rows, (r) => id(r.base)),
      quote: Int32Array.from(rows, (r) => id(r.quote)),
      rate: Float64Array.from(rows, (r) => r.rate),
      time: Float64Array.from(rows, (r) => r.time),
      rank: Float64Array.from(rows, (r) => r.rank ?? 0),
      used: Int32Array.from(rows, (r) => r.used),
      volume: Float64Array.from(rows, (r) => r.volume),
      fresh: Uint8Array.from(rows, (r) => r.fresh),
    };
    this.graph = new RateGraph((i) => this.names[i]);
    this.graph.sync(this.view, this.names.length, 1);
  }

  /** The asset's id as stored (exact, else case-insensitive when unambiguous), or undefined. */
  resolve(asset: string): string | undefined {
    if (this.ids.has(asset)) return asset;
    return this.upper.get(asset.toUpperCase()) ?? undefined;
  }

  /** Assets with at least one rate at this tick, sorted. */
  assets(): string[] {
    if (!this.sortedAssets) this.sortedAssets = [...this.names].sort();
    return this.sortedAssets;
  }

  /** rate(base, quote) for resolved asset ids, or undefined when there is no path. */
  rate(base: string, quote: string): CachedRate | undefined {
    const key = `${base}/${quote}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit ?? undefined;
    let out: CachedRate | null = null;
    if (base === quote) out = makeRate(base, quote, 1, this.tick);
    else {
      const b = this.ids.get(base);
      const q = this.ids.get(quote);
      if (b !== undefined && q !== undefined) {
        const r = this.graph.cross(b, q, this.view, this.method, 1);
        if (r) out = makeRate(base, quote, r.rate, r.time);
      }
    }
    this.cache.set(key, out);
    return out ?? undefined;
  }
}

/** Buckets of rate(quote, base) from those of rate(base, quote): 1/x is decreasing, so high and low swap. */
function invertBucket(b: OhlcBucket): OhlcBucket {
  return { ...b, open: 1 / b.open, high: 1 / b.low, low: 1 / b.high, close: 1 / b.close };
}

function toItem(b: OhlcBucket): TimeseriesItem {
  return {
    time_period_start: formatTime(b.start),
    time_period_end: formatTime(b.end),
    time_open: formatTime(b.timeOpen),
    time_close: formatTime(b.timeClose),
    rate_open: b.open,
    rate_high: b.high,
    rate_low: b.low,
    rate_close: b.close,
  };
}

function periodLength(p: PeriodRecord): number {
  return p.length_months > 0 ? p.length_months * 31 * 86_400 : p.length_seconds;
}

/** Where a pair's history is stored. */
interface HistorySource {
  base: string;
  quote: string;
  period: PeriodRecord;
  inverted: boolean;
}

/** Options of {@link DatabaseRateProvider}. */
export interface DatabaseProviderOptions {
  /** Pair tables kept in the LRU cache (default 256). */
  cacheTables?: number;
  /** The run to serve (default: the newest complete run of the database). */
  run?: RunInfo;
}

/** Rates between any two assets at one tick: a {@link PairTable}, or an engine's state. */
export interface RateSource {
  readonly tick: number;
  /** The asset's id as known here (exact, else case-insensitive when unambiguous). */
  resolve(asset: string): string | undefined;
  /** rate(base, quote) of resolved ids, or undefined when there is no path. */
  rate(base: string, quote: string): CachedRate | undefined;
  /** Candidate quote assets of "all rates", sorted. */
  assets(): string[];
}

/** An engine's state at its last tick as a {@link RateSource} (answers cached). */
export class EngineSource implements RateSource {
  readonly tick: number;
  private readonly exact: Set<string>;
  private readonly upper = new Map<string, string | null>();
  private readonly sorted: string[];
  private readonly cache = new Map<string, CachedRate | null>();

  constructor(private readonly engine: Engine) {
    this.tick = engine.lastTickTime!;
    this.sorted = engine.assetIds();
    this.exact = new Set(this.sorted);
    for (const a of this.sorted) {
      const u = a.toUpperCase();
      this.upper.set(u, this.upper.has(u) && this.upper.get(u) !== a ? null : a);
    }
  }

  resolve(asset: string): string | undefined {
    if (this.exact.has(asset)) return asset;
    return this.upper.get(asset.toUpperCase()) ?? undefined;
  }

  rate(base: string, quote: string): CachedRate | undefined {
    const key = `${base}/${quote}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit ?? undefined;
    const r = this.engine.rate(base, quote);
    const out = r ? makeRate(r.base, r.quote, r.rate, r.time) : null;
    this.cache.set(key, out);
    return out ?? undefined;
  }

  assets(): string[] {
    return this.sorted;
  }
}

function missing(src: RateSource, base: string, quote: string, rb: string | undefined, rq: string | undefined): string {
  const at = formatTime(src.tick);
  if (rb === undefined) return `no rate for ${base}/${quote} at ${at}: unknown asset "${base}" (no pair with a rate involves it)`;
  if (rq === undefined) return `no rate for ${base}/${quote} at ${at}: unknown asset "${quote}" (no pair with a rate involves it)`;
  return `no rate for ${base}/${quote} at ${at}: no path from ${rb} to ${rq} in the graph of pairs with a rate`;
}

/** What the provider reads of a `runs` row. */
export interface RunInfo {
  config: string;
  options: string;
  first_tick: number | null;
  last_tick: number | null;
  /** 1 when the replay stopped at its --to before the end of its input (absent: 0). */
  stopped?: number;
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
  protected readonly db: Database.Database;
  protected readonly config: ResolvedConfig;
  protected firstTick: number | undefined;
  protected lastTick: number | undefined;
  /** Start of output of the replay (`--from`), when given. */
  protected readonly outputFrom: number | undefined;
  /** Whether the replay stopped at `--to` before the end of its log. */
  protected readonly stoppedEarly: boolean;
  protected readonly pairs = new Map<string, [string, string]>();
  private readonly tables = new Map<number, RateSource>();
  private readonly maxTables: number;
  private readonly lastRow: Database.Statement;
  private readonly hasPeriod: Database.Statement;
  private finalEngine: Engine | undefined;
  private extrapolated: Engine | undefined;
  private extrapolatedSource: EngineSource | undefined;

  /**
   * @param store - an open replay database (read-only is enough)
   * @throws `xrate:` error when the database holds no complete replay run
   */
  constructor(
    protected readonly store: ReplayStore,
    opts: DatabaseProviderOptions = {},
  ) {
    this.db = store.db;
    const run =
      opts.run ??
      (this.db.prepare(`SELECT * FROM runs WHERE status = 'complete' ORDER BY id DESC LIMIT 1`).get() as RunInfo | undefined);
    if (!run) throw new Error(`xrate: database "${store.path}" holds no complete replay run (run "xrate replay LOG --db ${store.path}" or "npm start" first)`);
    this.config = resolveConfig(JSON.parse(run.config) as Partial<EngineConfig>);
    this.firstTick = run.first_tick ?? undefined;
    this.lastTick = run.last_tick ?? undefined;
    this.outputFrom = (JSON.parse(run.options) as { from?: number }).from;
    this.stoppedEarly = run.stopped === 1;
    this.maxTables = opts.cacheTables ?? 256;
    const cols = (this.db.prepare(`PRAGMA table_info(rates)`).all() as { name: string }[]).map((c) => c.name);
    this.lastRow = this.db.prepare(
      `SELECT rate, time, rank, used, fresh, ${cols.includes('volume') ? 'volume' : '0 AS volume'} FROM rates
       WHERE base = ? AND quote = ? AND tick <= ? ORDER BY tick DESC LIMIT 1`,
    );
    this.hasPeriod = this.db.prepare(`SELECT 1 FROM ohlc WHERE base = ? AND quote = ? AND period_id = ? LIMIT 1`);
    // Distinct pairs by a loose index scan of rates(base, quote, tick): one seek per pair.
    const distinct = this.db.prepare(
      `WITH RECURSIVE p(base, quote) AS (
         SELECT base, quote FROM (SELECT base, quote FROM rates ORDER BY base, quote LIMIT 1)
         UNION ALL
         SELECT (SELECT r.base FROM rates r WHERE (r.base, r.quote) > (p.base, p.quote) ORDER BY r.base, r.quote LIMIT 1),
                (SELECT r.quote FROM rates r WHERE (r.base, r.quote) > (p.base, p.quote) ORDER BY r.base, r.quote LIMIT 1)
         FROM p WHERE p.base IS NOT NULL)
       SELECT base, quote FROM p WHERE base IS NOT NULL`,
    );
    for (const r of distinct.all() as { base: string; quote: string }[]) this.notePair(r.base, r.quote);
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
    const k = `${base}/${quote}`;
    if (!this.pairs.has(k)) this.pairs.set(k, [base, quote]);
  }

  info(): ProviderInfo {
    return { mode: 'database', source: this.store.path, firstTick: this.firstTick, lastTick: this.lastTick, pairs: this.pairs.size };
  }

  private cached(T: number, make: () => RateSource): RateSource {
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
  protected tableAt(T: number): RateSource {
    return this.cached(T, () => {
      const rows: PairRow[] = [];
      for (const [base, quote] of this.pairs.values()) {
        const r = this.lastRow.get(base, quote, T) as Omit<PairRow, 'base' | 'quote' | 'rate' | 'time'> & { rate: number | null; time: number | null } | undefined;
        if (!r || r.rate === null || r.time === null) continue;
        rows.push({ base, quote, rate: r.rate, time: r.time, rank: r.rank, used: r.used, fresh: r.fresh, volume: r.volume ?? 0 });
      }
      rows.sort((a, b) => (a.base === b.base ? (a.quote < b.quote ? -1 : 1) : a.base < b.base ? -1 : 1));
      return new PairTable(T, rows, this.config.crossMethod);
    });
  }

  /** The engine at the end of the replay (restored once from the final snapshot). */
  protected restoredEngine(): Engine {
    const cp = this.store.latestSnapshot();
    if (!cp) throw noData(`the database "${this.store.path}" holds no engine state`);
    try {
      return restoreEngine(cp.engine);
    } catch (e) {
      throw noData(`the engine state stored in the database cannot be restored by this version of xrate (${(e as Error).message}): replay the log again`);
    }
  }

  /**
   * The engine's final state advanced to T (> last tick) with no further events, as replaying the
   * log to T would give; kept and advanced further for later times.
   */
  protected engineAfterEnd(T: number): Engine {
    if (!this.extrapolated || (this.extrapolated.lastTickTime ?? -Infinity) > T) this.extrapolated = this.restoredEngine();
    this.extrapolated.advanceTo(T);
    return this.extrapolated;
  }

  /** Where to answer "as of `at`" from, or a 550 naming why there is none. */
  protected sourceFor(at: number | undefined, what: string): RateSource {
    if (this.lastTick === undefined || this.firstTick === undefined) throw noData(`${what}: the database holds no computed tick`);
    const T = at === undefined ? this.lastTick : floorSecond(at);
    if (this.outputFrom !== undefined && T < this.outputFrom) {
      throw noData(`${what}: the database has output from ${formatTime(this.outputFrom)} on (the replay's --from)`);
    }
    if (T < this.firstTick) throw noData(`${what}: no data before the first tick ${formatTime(this.firstTick)}`);
    if (T <= this.lastTick) return this.tableAt(T);
    if (this.stoppedEarly) throw noData(`${what}: the database covers its log only up to ${formatTime(this.lastTick)} (the replay stopped at --to)`);
    // Past the last tick every carried rate has expired once it is older than maxRateAge.
    if (T - this.lastTick > this.config.maxRateAgeUs + US_PER_SECOND) return this.cached(T, () => new PairTable(T, [], this.config.crossMethod));
    // The extrapolated engine moves on to later times: only its state at T answers for T.
    if (!this.extrapolatedSource || this.extrapolatedSource.tick !== T) this.extrapolatedSource = new EngineSource(this.engineAfterEnd(T));
    return this.extrapolatedSource;
  }

  rate(base: string, quote: string, at?: number): CachedRate {
    const src = this.sourceFor(at, `no rate for ${base}/${quote}`);
    const rb = src.resolve(base);
    const rq = src.resolve(quote);
    const r = rb !== undefined && rq !== undefined ? src.rate(rb, rq) : undefined;
    if (!r) throw noData(missing(src, base, quote, rb, rq));
    return r;
  }

  rates(base: string, q: RatesQuery): ExchangeRates {
    const src = this.sourceFor(q.at, `no rates of ${base}`);
    const rb = src.resolve(base);
    if (rb === undefined) throw noData(`no rates of ${base} at ${formatTime(src.tick)}: unknown asset "${base}" (no pair with a rate involves it)`);
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
      rates.push({ time: r.value.time, asset_id_quote: t, rate: q.invert ? 1 / r.value.rate : r.value.rate });
    }
    return { asset_id_base: rb, rates };
  }

  /** Resolves an asset id against the known pairs (exact, else case-insensitive). */
  protected resolveAsset(asset: string): string | undefined {
    let ci: string | undefined;
    const u = asset.toUpperCase();
    for (const [b, q] of this.pairs.values()) {
      if (b === asset || q === asset) return asset;
      if (ci === undefined) {
        if (b.toUpperCase() === u) ci = b;
        else if (q.toUpperCase() === u) ci = q;
      }
    }
    return ci;
  }

  /** The stored series that gives `period` for base/quote: direct, or the inverse pair's. */
  protected historySource(base: string, quote: string, period: PeriodRecord): HistorySource {
    const rb = this.resolveAsset(base);
    const rq = this.resolveAsset(quote);
    if (rb === undefined) throw noData(`no history for ${base}/${quote}: unknown asset "${base}"`);
    if (rq === undefined) throw noData(`no history for ${base}/${quote}: unknown asset "${quote}"`);
    const usable = EXCHANGE_RATE_PERIODS.filter((p) => p.period_id === period.period_id || isRollupOf(period, p)).sort(
      (x, y) => periodLength(y) - periodLength(x),
    );
    for (const [b, q, inverted] of [
      [rb, rq, false],
      [rq, rb, true],
    ] as const) {
      for (const p of usable) if (this.hasPeriod.get(b, q, p.period_id)) return { base: b, quote: q, period: p, inverted };
    }
    const stored = EXCHANGE_RATE_PERIODS.filter((p) => this.hasPeriod.get(rb, rq, p.period_id) || this.hasPeriod.get(rq, rb, p.period_id));
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

  /** The engine's open bucket of a stored series, if any (live providers). */
  protected openBucket(_src: HistorySource): OhlcBucket | undefined {
    return undefined;
  }

  history(base: string, quote: string, q: HistoryQuery): TimeseriesItem[] {
    const period = q.period;
    const first = bucketStart(q.from, period) === q.from ? q.from : bucketEnd(q.from, period);
    const end = q.to ?? Number.MAX_SAFE_INTEGER;
    if (this.outputFrom !== undefined && first < this.outputFrom) {
      throw noData(`no history for ${base}/${quote} from ${formatTime(first)}: the database has output from ${formatTime(this.outputFrom)} on (the replay's --from)`);
    }
    const src = this.historySource(base, quote, period);
    if (first >= end) return [];
    const lastEnd = q.to === undefined ? Number.MAX_SAFE_INTEGER : bucketEnd(q.to - 1, period);
    const out: OhlcBucket[] = [];
    const same = src.period.period_id === period.period_id;
    let group: OhlcBucket[] = [];
    let groupStart = NaN;
    const emit = (): void => {
      if (group.length === 0) return;
      const b = same ? group[0] : rollUp(group, period)[0];
      out.push(src.inverted ? invertBucket(b) : b);
      group = [];
    };
    const take = (b: OhlcBucket): boolean => {
      const s = same ? b.start : bucketStart(b.start, period);
      if (s !== groupStart) {
        emit();
        if (out.length >= q.limit || s >= end) return false;
        groupStart = s;
      }
      group.push(b);
      return true;
    };
    const open = this.openBucket(src);
    let stopped = false;
    for (const row of this.store.iterateBuckets(src.base, src.quote, src.period.period_id, first, lastEnd)) {
      if (open && row.start >= open.start) break; // the engine's open bucket replaces what was flushed
      if (!take(row)) {
        stopped = true;
        break;
      }
    }
    if (!stopped && open && open.start >= first && open.start < lastEnd) take({ ...open });
    if (out.length < q.limit) emit();
    return out.slice(0, q.limit).map(toItem);
  }

  explain(base: string, quote: string, at?: number): RateExplanation {
    const last = this.lastTick;
    if (at === undefined || last === undefined || floorSecond(at) <= last) {
      if (!this.finalEngine) this.finalEngine = this.restoredEngine();
      return explainWith(this.finalEngine, base, quote, at);
    }
    const T = floorSecond(at);
    this.sourceFor(at, `no provenance of ${base}/${quote}`); // coverage checks
    if (T - last > this.config.maxRateAgeUs + US_PER_SECOND) {
      throw noData(`no rate for ${base}/${quote} at ${formatTime(T)}: every rate expired (maxRateAge) after the data ended at ${formatTime(last)}`);
    }
    return explainWith(this.engineAfterEnd(T), base, quote, at);
  }

  close(): void | Promise<void> {
    this.store.close();
  }
}

/** Explains with an engine's current state; 550 when it has no rate or `at` is before its last tick. */
export function explainWith(engine: Engine, base: string, quote: string, at: number | undefined): RateExplanation {
  const last = engine.lastTickTime;
  if (at !== undefined && last !== undefined && floorSecond(at) < last) {
    throw noData(`provenance is kept for the latest tick ${formatTime(last)} only, not for ${formatTime(at)} (use "xrate explain LOG --at TIME")`);
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
  return e;
}

/**
 * A live engine over the database it writes to (`serve --replay LOG`, `serve --replay LOG
 * --follow`): rates at the engine's last tick from the engine, earlier times and history from the
 * database (plus the engine's open OHLC bucket), provenance from the engine. After a replay
 * (static engine) later times are answered as from the database (engine advanced with no
 * events); while following, a later time is answered with the current state (the log may still
 * grow).
 */
export class LiveRateProvider extends DatabaseRateProvider {
  private current: EngineSource | undefined;
  private stopFeed: (() => void | Promise<void>) | undefined;

  /**
   * @param engine - the live engine (its listener writes to `store`)
   * @param store - the database the engine writes to (read here on the same connection)
   * @param mode - `replay` (static after the replay) or `follow`
   */
  constructor(
    readonly engine: Engine,
    store: ReplayStore,
    private readonly mode: 'replay' | 'follow',
    opts: DatabaseProviderOptions = {},
  ) {
    super(store, opts);
    this.sync();
  }

  /** Called by {@link close} (stops the feed that drives the engine). */
  onClose(stop: () => void | Promise<void>): void {
    this.stopFeed = stop;
  }

  override info(): ProviderInfo {
    this.sync();
    return { mode: this.mode, source: this.store.path, firstTick: this.firstTick, lastTick: this.lastTick, pairs: this.engine.pairs().length };
  }

  private sync(): void {
    this.firstTick = this.engine.firstTickTime;
    this.lastTick = this.engine.lastTickTime;
  }

  protected override sourceFor(at: number | undefined, what: string): RateSource {
    this.sync();
    const last = this.lastTick;
    if (last === undefined) throw noData(`${what}: no tick has been computed yet`);
    const T = at === undefined ? last : floorSecond(at);
    if (T < last || (T > last && this.mode === 'replay')) return super.sourceFor(at, what);
    if (!this.current || this.current.tick !== last) this.current = new EngineSource(this.engine);
    return this.current;
  }

  protected override restoredEngine(): Engine {
    if (this.mode === 'replay') return super.restoredEngine();
    throw noData('times after the last tick of a followed log are not known yet');
  }

  protected override openBucket(src: HistorySource): OhlcBucket | undefined {
    const track = this.engine.trackedPairs().find((t) => t.base === src.base && t.quote === src.quote);
    if (!track) return undefined;
    return this.engine.openBuckets(track).find((o) => o.period.period_id === src.period.period_id)?.bucket;
  }

  override explain(base: string, quote: string, at?: number): RateExplanation {
    this.sync();
    if (this.mode === 'replay' && at !== undefined && this.lastTick !== undefined && floorSecond(at) > this.lastTick) return super.explain(base, quote, at);
    return explainWith(this.engine, base, quote, at === undefined || this.lastTick === undefined ? at : Math.min(at, this.lastTick));
  }

  override async close(): Promise<void> {
    if (this.stopFeed) await this.stopFeed();
    await super.close();
  }
}

/** The period record of an exchange-rate `period_id` (case-insensitive), or undefined. */
export function exchangeRatePeriod(id: string): PeriodRecord | undefined {
  const p = getPeriod(id.toUpperCase());
  return p && EXCHANGE_RATE_PERIODS.includes(p) ? p : undefined;
}
