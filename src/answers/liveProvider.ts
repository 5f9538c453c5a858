/**
 * A live engine over the database it writes to (`serve --replay LOG`, `serve --replay LOG
 * --follow`, a replica of a stream): rates at the engine's last tick from the engine, earlier
 * times and history from a {@link DatabaseRateProvider} over that database (plus the engine's
 * open OHLC bucket), provenance from the engine; later times as the feed's
 * {@link AfterLastTick} strategy answers them.
 *
 * @module
 */
import type { Engine, SymbolFilter, SymbolRecord } from '../core/engine.js';
import type { OhlcBucket } from '../core/ohlc.js';
import type { RateExplanation } from '../core/provenance.js';
import type { ReplayStore } from '../io/store.js';
import type { Series } from '../replay/database.js';
import { EngineSource } from '../replay/rateSources.js';
import { AFTER_LAST_TICK, type AfterLastTick, type LiveMode } from './afterLastTick.js';
import { DatabaseRateProvider, type DatabaseProviderOptions } from './databaseProvider.js';
import { explainWith } from './explain.js';
import { floorSecond } from '../core/time.js';
import { noDataError } from './noData.js';
import { rateFrom, ratesFrom } from './rates.js';
import type {
  CachedRate,
  ExchangeRates,
  HistoryQuery,
  ProviderInfo,
  RateProvider,
  RateSource,
  RatesQuery,
  TimeseriesItem,
} from './types.js';

/** See the module description. */
export class LiveRateProvider implements RateProvider {
  private readonly db: DatabaseRateProvider;
  private readonly store: ReplayStore;
  private current: EngineSource | undefined;
  private stopFeed: (() => void | Promise<void>) | undefined;
  /** How times after the engine's last tick are answered (chosen from `mode`). */
  private readonly after: AfterLastTick;

  /**
   * @param engine - the live engine (its listener writes to `store`)
   * @param store - the database the engine writes to (read here on the same connection)
   * @param mode - `replay` (static after the replay), `follow` (a followed log) or `replica` (a
   * stream, src/distributed/replica.ts): past its last tick, a replay's and a replica's engine is
   * advanced with no more events (what a replay of what they read gives), while a followed log,
   * whose ticks follow the wall clock, answers as of its last tick ({@link AFTER_LAST_TICK})
   * @param version - replica: a number that changes whenever the engine applies something (its
   * stream position), so that the engine advanced past the last tick is made again
   */
  constructor(
    readonly engine: Engine,
    store: ReplayStore,
    private readonly mode: LiveMode,
    opts: DatabaseProviderOptions = {},
    version: () => number = () => 0,
  ) {
    this.store = store;
    this.db = new DatabaseRateProvider(store, {
      ...opts,
      ticks: () => ({ first: engine.firstTickTime, last: engine.lastTickTime }),
      openBucket: (series) => this.openBucket(series),
      extrapolate: mode === 'replay',
      watch: false,
    });
    this.after = AFTER_LAST_TICK[mode]({ engine, db: this.db, current: () => this.lastTickSource(), version });
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

  /** The engine's rates at its last tick. */
  private lastTickSource(): RateSource {
    const last = this.engine.lastTickTime;
    if (!this.current || this.current.tick !== last) this.current = new EngineSource(this.engine);
    return this.current;
  }

  private sourceFor(at: number | undefined, what: string): RateSource {
    const last = this.engine.lastTickTime;
    if (last === undefined) throw noDataError(`${what}: no tick has been computed yet`);
    const T = at === undefined ? last : floorSecond(at);
    if (T < last) return this.db.sourceFor(at, what);
    if (T > last) return this.after.source(T, at!, what);
    return this.lastTickSource();
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
    if (at !== undefined && last !== undefined && floorSecond(at) > last) return this.after.explain(base, quote, at, floorSecond(at));
    return explainWith(this.engine, base, quote, at === undefined || last === undefined ? at : Math.min(at, last));
  }

  /** The engine's records at its last tick; earlier times from the database, later ones as {@link AFTER_LAST_TICK} says. */
  symbols(at: number | undefined, filter: SymbolFilter): SymbolRecord[] {
    const last = this.engine.lastTickTime;
    if (last === undefined) throw noDataError('no symbol records: no tick has been computed yet');
    const T = at === undefined ? last : floorSecond(at);
    if (T < last) return this.db.symbols(at, filter);
    if (T > last) return this.after.symbols(at!, T, filter);
    return this.engine.symbols(filter);
  }

  async close(): Promise<void> {
    if (this.stopFeed) await this.stopFeed();
    await this.db.close();
  }
}
