/**
 * The xrate engine: composes the rule modules into one deterministic reducer over an event log.
 *
 * Flow (docs/methodology.md sections 1-6): `apply(event)` first computes every pending tick
 * T < event.time, then applies the event. Quotes and exchange changes are staged and committed at
 * the start of the next tick, so the committed state is always "as of the last tick" (what
 * `explain` reads) while events of the current second wait. A tick T runs, in order: commit staged
 * changes (rule 4's immediate exclusions), the eligibility refresh if T is T0 or a multiple of 4 h
 * (rule 8), every pair rate (rules 5-7, 9, 11, 1, 13), then OHLC of tracked pairs (section 5).
 * Cross rates (rule 12) are read from the graph of pairs on demand.
 *
 * Hot state lives in typed-array columns indexed by integer ids (markets, exchanges, assets, pairs);
 * strings are interned at the edges. This module is the facade; the parts live in `./engine/`:
 * the tables (`tables/`), applying events (`apply`), the tick pipeline (`tick`, `pairCompute`),
 * provenance (`explain`; `whyNoRate` when there is no rate), OHLC tracking (`tracking`), rate
 * look-ups (`queries`) and the snapshot format (`snapshot`).
 *
 * @module
 */
import type { EngineConfig, ResolvedConfig } from './config.js';
import { applyExchange, applyQuote, applyQuoteRow, applySymbol, applyTrade, applyTradeRow, reject, unknownSymbol } from './engine/apply.js';
import { type BatchColumns, ROW_QUOTE } from './batch.js';
import type { RateGraph } from './graph.js';
import { parseSymbolId } from './symbols.js';
import { Explainer } from './engine/explain.js';
import { PairComputer } from './engine/pairCompute.js';
import { RateQueries } from './engine/queries.js';
import { checkSnapshotVersion, restoreSnapshot, takeSnapshot } from './engine/snapshot.js';
import { EngineState } from './engine/state.js';
import { TickPipeline } from './engine/tick.js';
import { Tracking } from './engine/tracking.js';
import { NoRateDiagnosis } from './engine/whyNoRate.js';
import type { ChunkSpill } from './engine/coldBins.js';
import type { SymbolFilter, SymbolRecord } from './engine/symbolRecords.js';
import type { EngineListener, EngineSnapshot, EngineStats, RateResult, RatesOptions, TrackedPair } from './engine/types.js';
import type { OhlcBucket } from './ohlc.js';
import type { PeriodRecord } from './periods.js';
import type { AccountPositions } from './positions/book.js';
import type { ConnectivityEvent } from './positions/events.js';
import { positionAssets, valuePositions, type ValuedPosition } from './positions/pnl.js';
import type { NoRateExplanation, PairExplanation, RateExplanation } from './provenance.js';
import { ceilSecond, formatTime } from './time.js';
import type { Reject, XrateEvent } from './types.js';

/** The event types the engine applies (any other is an `unknown_type` reject). */
const KNOWN_TYPES: ReadonlySet<string> = new Set([
  'quote',
  'trade',
  'exchange',
  'symbol',
  'metric',
  'metric_definition',
  'position',
  'connectivity',
]);

export type { SymbolFilter, SymbolRecord } from './engine/symbolRecords.js';
export type { ChunkSpill } from './engine/coldBins.js';
export { OWN_METRIC_IDS, OWN_METRICS, OwnMetricBatch } from './engine/ownMetrics.js';
export type { EngineListener, EngineSnapshot, EngineStats, PairRateChange, RateResult, RatesOptions, TrackedPair } from './engine/types.js';

/**
 * The engine. Create it with {@link createEngine}; feed it events in log order.
 *
 * @example
 * ```ts
 * const engine = createEngine();
 * for (const ev of events) engine.apply(ev);
 * engine.advanceTo(parseTime('2024-03-02T04:30:20Z')!);
 * engine.rate('BTC', 'USD'); // { rate: 64112.56, time: ..., kind: 'direct', ... }
 * ```
 */
export class Engine {
  /** The validated configuration. */
  readonly config: ResolvedConfig;
  private readonly state: EngineState;
  private readonly tracking: Tracking;
  private readonly ticks: TickPipeline;
  private readonly queries: RateQueries;
  private readonly explainer: Explainer;
  private readonly diagnosis: NoRateDiagnosis;

  /**
   * @param config - partial {@link EngineConfig}; validated here (throws XrateErrors)
   * @param listener - receives rate changes, ticks and OHLC buckets
   */
  constructor(config: Partial<EngineConfig> = {}, listener: EngineListener = {}) {
    const state = new EngineState(config, listener);
    const computer = new PairComputer(state);
    this.state = state;
    this.config = state.config;
    this.tracking = new Tracking(state);
    this.queries = new RateQueries(state);
    this.ticks = new TickPipeline(state, computer, this.tracking, this.queries);
    this.diagnosis = new NoRateDiagnosis(state, computer, this.queries);
    this.explainer = new Explainer(state, computer, this.queries, this.diagnosis);
  }

  /**
   * With `true`, computes every tick in full instead of skipping the ticks at which nothing can
   * change (docs/methodology.md section 2). The outputs are the same; this is for verifying that,
   * and is slower on logs with gaps.
   */
  setTickEverySecond(on: boolean): void {
    this.state.tickEverySecond = on;
  }

  /**
   * Ticks this engine object computed in full; `stats.ticks` counts every tick, skipped or not
   * (a measure of the work done, for tests and profiling; not part of a snapshot).
   */
  get computedTicks(): number {
    return this.state.computedTicks;
  }

  /** Replaces the listener (e.g. after {@link restoreEngine}). */
  setListener(listener: EngineListener): void {
    this.state.listener = listener;
  }

  // ---------------------------------------------------------------- events

  /**
   * Applies one event: computes every pending tick before its time, then the event itself.
   * Never throws for bad data: returns a {@link Reject} (`bad_time`, `late`, `unknown_type`,
   * `unknown_symbol`), which changes nothing but the reject counters, or undefined.
   */
  apply(event: XrateEvent): Reject | undefined {
    const s = this.state;
    const t = event.time;
    if (!Number.isSafeInteger(t))
      return s.countReject(reject('bad_time', `event time ${String(t)} is not an integer number of microseconds`, 'time'));
    if (s.lastTick !== undefined && t <= s.lastTick) {
      return s.countReject(
        reject('late', `event time ${formatTime(t)} is at or before the last computed tick ${formatTime(s.lastTick)}`, 'time'),
      );
    }
    // A rejected event changes nothing, the clock included (docs/methodology.md section 2): it
    // neither starts the clock (T0) nor computes the ticks before its time.
    const type = event.type;
    // Quotes and trades, nearly every event, are known without the set look-up.
    if (type !== 'quote' && type !== 'trade' && !KNOWN_TYPES.has(type)) {
      return s.countReject(reject('unknown_type', `unknown event type ${JSON.stringify((event as { type?: unknown }).type)}`, 'type'));
    }
    // The market of a quote or trade: known (one look-up, passed on), or defined from its id's
    // pattern once the ticks before the event are computed, or none (a reject).
    let m: number | undefined;
    if (type === 'quote' || type === 'trade') {
      m = s.markets.index.get(event.symbolId);
      if (m === undefined && parseSymbolId(event.symbolId) === undefined) return unknownSymbol(s, type, event.symbolId);
    }
    if (s.t0 === undefined) {
      s.t0 = ceilSecond(t);
      s.nextTick = s.t0;
    } else {
      this.ticks.runTicks(t - 1);
    }
    // A metric changes no rate (docs/methodology.md section 9): no tick need look at it.
    if (type === 'metric') {
      s.stats.events.metric++;
      s.listener.onMetric?.(event);
      return undefined;
    }
    if (type === 'metric_definition') {
      s.stats.events.metricDefinition++;
      s.listener.onMetricDefinition?.(event);
      return undefined;
    }
    // Positions and connectivity change no rate either (docs/methodology.md section 11): the book
    // keeps them, valued on demand at the rates of the last tick.
    if (type === 'position') {
      s.stats.events.position = (s.stats.events.position ?? 0) + 1;
      const assets = positionAssets(event.symbolId, (id) => this.declaredAssets(id));
      s.positions.apply(event, assets);
      s.listener.onPosition?.(event, assets);
      return undefined;
    }
    if (type === 'connectivity') {
      s.stats.events.connectivity = (s.stats.events.connectivity ?? 0) + 1;
      s.positions.applyConnectivity(event);
      s.listener.onConnectivity?.(event);
      return undefined;
    }
    s.eventSinceTick = true;
    s.eventSinceRefresh = true;
    switch (type) {
      case 'quote':
        return applyQuote(s, event, m);
      case 'trade':
        return applyTrade(s, event, m);
      case 'exchange':
        return applyExchange(s, event);
      default:
        return applySymbol(s, event);
    }
  }

  /** The batch whose symbols {@link rowMarkets} resolves. */
  private rowBatch: BatchColumns | undefined;
  /** Market id of each symbol of {@link rowBatch} once known (-1 until then). */
  private rowMarkets: Int32Array = new Int32Array(0);
  /** The same of every batch seen, while it lives: a merge's rows come from many batches in turn. */
  private readonly batchMarkets = new WeakMap<BatchColumns, Int32Array>();

  /**
   * The market of row i's symbol if it is known, else -1. Resolved per batch and kept once known (a
   * market id never changes); an unknown one is looked up again at each row, since a row before
   * may define it (a quote of its pattern, a `symbol` event).
   */
  private rowMarket(b: BatchColumns, i: number): number {
    if (b !== this.rowBatch) {
      this.rowBatch = b;
      let markets = this.batchMarkets.get(b);
      if (markets === undefined) {
        markets = new Int32Array(b.symbols.length).fill(-1);
        this.batchMarkets.set(b, markets);
      }
      this.rowMarkets = markets;
    }
    const k = b.symbol[i];
    let m = this.rowMarkets[k];
    if (m < 0) {
      m = this.state.markets.index.get(b.symbols[k]) ?? -1;
      this.rowMarkets[k] = m;
    }
    return m;
  }

  /**
   * {@link apply} for quote or trade row i of a columnar batch (src/core/batch.ts): the same
   * checks, ticks and state as applying `eventAt(b, i)`, from the columns.
   */
  applyRow(b: BatchColumns, i: number): Reject | undefined {
    const s = this.state;
    const t = b.time[i];
    if (!Number.isSafeInteger(t))
      return s.countReject(reject('bad_time', `event time ${String(t)} is not an integer number of microseconds`, 'time'));
    if (s.lastTick !== undefined && t <= s.lastTick) {
      return s.countReject(
        reject('late', `event time ${formatTime(t)} is at or before the last computed tick ${formatTime(s.lastTick)}`, 'time'),
      );
    }
    const quote = b.kind[i] === ROW_QUOTE;
    const m = this.rowMarket(b, i);
    if (m < 0) {
      const symbolId = b.symbols[b.symbol[i]];
      if (parseSymbolId(symbolId) === undefined) return unknownSymbol(s, quote ? 'quote' : 'trade', symbolId);
    }
    if (s.t0 === undefined) {
      s.t0 = ceilSecond(t);
      s.nextTick = s.t0;
    } else {
      this.ticks.runTicks(t - 1);
    }
    s.eventSinceTick = true;
    s.eventSinceRefresh = true;
    const known = m < 0 ? undefined : m;
    return quote ? applyQuoteRow(s, b, i, known) : applyTradeRow(s, b, i, known);
  }

  /** {@link accepts} for quote or trade row i of a columnar batch. */
  acceptsRow(b: BatchColumns, i: number): boolean {
    const s = this.state;
    const t = b.time[i];
    if (!Number.isSafeInteger(t) || (s.lastTick !== undefined && t <= s.lastTick)) return false;
    return this.rowMarket(b, i) >= 0 || s.canKnowMarket(b.symbols[b.symbol[i]]);
  }

  /**
   * Whether {@link apply} would accept `event` now (rule of docs/methodology.md section 2: only an
   * accepted event moves the clock). False for a time that is not whole µs, a late event, an
   * unknown type, and a quote or trade for a market that is not known and whose id matches no
   * pattern. A quote the spread filter discards is accepted. Changes nothing.
   */
  accepts(event: XrateEvent): boolean {
    const s = this.state;
    const t = event.time;
    if (!Number.isSafeInteger(t) || (s.lastTick !== undefined && t <= s.lastTick)) return false;
    const type = event.type;
    if (type === 'quote' || type === 'trade') return s.canKnowMarket(event.symbolId);
    return KNOWN_TYPES.has(type);
  }

  /** Records a reject produced outside the engine (e.g. by the parser) in the engine's counters. */
  countReject(r: Reject): Reject {
    return this.state.countReject(r);
  }

  /** Computes every tick T <= timeUs not yet computed (ticks through the last whole second <= timeUs). */
  advanceTo(timeUs: number): void {
    if (this.state.t0 === undefined) return;
    this.ticks.runTicks(timeUs);
  }

  /** Time of the last computed tick, µs, or undefined before the first. */
  get lastTickTime(): number | undefined {
    return this.state.lastTick;
  }

  /** The first tick T0 (first event time rounded up to a whole second), once known. */
  get firstTickTime(): number | undefined {
    return this.state.t0;
  }

  /** A copy of the counters. */
  getStats(): EngineStats {
    return structuredClone(this.state.stats);
  }

  // ---------------------------------------------------------------- queries

  /**
   * rate(base, quote) as of the last tick (rules 1, 12, 13): identity, the direct pair (or its
   * inverse), or a cross rate through the graph. Undefined when there is none.
   */
  rate(base: string, quote: string): RateResult | undefined {
    return this.queries.rate(base, quote);
  }

  /**
   * Cross rates of `base` against every asset at once (one search over the graph, rule 12), as
   * columns indexed by asset id (see {@link assetName}); `rate` is NaN where there is none. The
   * arrays are reused by the next call. Undefined when `base` is unknown or before the first tick.
   *
   * @example
   * ```ts
   * const all = engine.ratesFrom('USD');
   * for (let a = 0; a < all.rate.length; a++) if (!Number.isNaN(all.rate[a])) use(engine.assetName(a), all.rate[a]);
   * ```
   */
  ratesFrom(base: string): { rate: Float64Array; time: Float64Array; fresh: Uint8Array } | undefined {
    return this.queries.ratesFrom(base);
  }

  /**
   * rate(asset, `quote`) of every asset at once, as columns indexed by asset id like
   * {@link ratesFrom} (the answers of {@link rate}(asset, quote) for each: one search from `quote`
   * and a walk per asset under the default `bfs` cross method). Reused by the next call; undefined
   * when `quote` is unknown or before the first tick.
   *
   * @example
   * ```ts
   * const usd = engine.ratesTo('USD');
   * usd?.rate[btcIndex]; // rate(BTC, USD)
   * ```
   */
  ratesTo(quote: string): { rate: Float64Array; time: Float64Array; fresh: Uint8Array } | undefined {
    return this.queries.ratesTo(quote);
  }

  /**
   * Knows the market `symbolId` as a quote or trade of it would make it known (from its id's
   * pattern, when no `symbol` event defined it), without one: what a partition of a replay does
   * for the markets named before its window (docs/parallel.md). False when the id matches no
   * pattern and no `symbol` event defined it. Changes no rate.
   */
  knowMarket(symbolId: string): boolean {
    return this.state.marketFor(symbolId) !== undefined;
  }

  /** The symbol ids of the markets known, in the order they became known. */
  marketIds(): string[] {
    return [...this.state.markets.index.names];
  }

  /** Asset id of an integer asset index (as used by {@link ratesFrom}, {@link ratesTo}). */
  assetName(index: number): string {
    return this.state.assets.names[index];
  }

  /**
   * Rates of `base` against every asset it reaches (or the `filter` list), sorted by asset id;
   * `invert` gives 1 / rate. Assets without a rate are left out. `path` is filled for direct and
   * inverse pairs and left empty for cross rates (ask {@link rate} for a cross rate's path).
   */
  rates(base: string, opts: RatesOptions = {}): RateResult[] {
    return this.queries.rates(base, opts);
  }

  /**
   * The symbol records at the last tick T that pass `filter`, sorted by symbol id: every market
   * with an accepted event at or before T, its `symbol` events' fields and the values derived at T
   * (docs/methodology.md section 10). Empty before the first tick.
   *
   * @example
   * ```ts
   * engine.symbols({ exchangeIds: ['KRAKEN'], activeOnly: true })[0].volume1day; // '12.5'
   * ```
   */
  symbols(filter: SymbolFilter = {}): SymbolRecord[] {
    const s = this.state;
    const toUsd = this.queries.ratesTo('USD');
    const usdRate = (asset: string) => {
      const a = s.assets.get(asset);
      const r = a === undefined || toUsd === undefined ? Number.NaN : toUsd.rate[a];
      return Number.isNaN(r) ? undefined : r;
    };
    return s.symbolRecords.records(s, s.lastTick, filter, usdRate);
  }

  /**
   * Puts the symbol records' trade bins older than an hour in `spill` but for a few chunks
   * (src/core/engine/coldBins.ts): a day of them then takes a few hundred KiB of memory, where
   * it took tens of megabytes at a busy venue's density. No output changes.
   */
  spillBins(spill: ChunkSpill): void {
    this.state.symbolRecords.spillBins(spill);
  }

  /** Known asset ids, sorted. */
  assetIds(): string[] {
    return [...this.state.assets.names].sort();
  }

  /** Direct pairs with a rate at the last tick, as `{base, quote, rate, time, rank, used, fresh}`. */
  pairs(): { base: string; quote: string; rate: number; time: number; rank: number; used: number; fresh: boolean }[] {
    return this.queries.pairs();
  }

  /** Every declared direct SPOT pair (with or without a rate), as `BASE/QUOTE` strings. */
  listedPairs(): string[] {
    return this.queries.listedPairs();
  }

  /** The graph of assets as a graphology graph (sorted, for inspection and export). */
  graphModel(): ReturnType<RateGraph['model']> {
    return this.state.graph.model();
  }

  /** Explains one direct pair at the last tick: markets used and left out, weights, outliers. */
  explainPair(base: string, quote: string): PairExplanation | undefined {
    return this.explainer.explainPair(base, quote);
  }

  /**
   * Explains rate(base, quote) at the last tick: the path and, per leg, its pair explanation; with
   * no rate, kind `none` and the fields of {@link whyNoRate}.
   */
  explain(base: string, quote: string): RateExplanation {
    return this.explainer.explain(base, quote);
  }

  /**
   * Why {@link rate}(base, quote) is undefined at the last tick: the first reason in the order of
   * the checks (`no_tick`, `unknown_asset`; then, for the pairs that would give the rate:
   * `not_eligible` (rule 8, with the next refresh), `not_legitimate`, `stale`, `spread`,
   * `no_quote`, `rank`, `zero_weight`; else `no_path`), with a message naming the pair and its
   * markets. Undefined when there is a rate. Changes nothing.
   *
   * @example
   * ```ts
   * engine.rate('BTC', 'USD'); // undefined: its only market traded after the first tick
   * engine.whyNoRate('BTC', 'USD');
   * // { reason: 'not_eligible', pair: 'BTC/USD', next_refresh: '2024-03-01T04:00:00.0000000Z',
   * //   message: 'BTC/USD has no eligible market yet (rule 8: ...' }
   * ```
   */
  whyNoRate(base: string, quote: string): NoRateExplanation | undefined {
    return this.diagnosis.why(base, quote);
  }

  // ---------------------------------------------------------------- positions

  /** The base and quote a `symbol` event (or an earlier quote or trade's id) gave market `symbolId`, if any. */
  private declaredAssets(symbolId: string): { base: string; quote: string } | undefined {
    const s = this.state;
    const m = s.markets.index.get(symbolId);
    if (m === undefined) return undefined;
    const b = s.markets.base[m];
    const q = s.markets.quote[m];
    return b >= 0 && q >= 0 ? { base: s.assets.names[b], quote: s.assets.names[q] } : undefined;
  }

  /**
   * The open positions (docs/methodology.md section 11) of the accounts `exchangeId` selects (an
   * account id exactly, or a bare exchange id: all its accounts; every account without it), sorted
   * by account and symbol_id_exchange, with every position applied so far.
   *
   * @example
   * ```ts
   * engine.positions('BINANCE')[0].account; // 'BINANCE~hedge'
   * ```
   */
  positions(exchangeId?: string): AccountPositions[] {
    return this.state.positions.open(exchangeId);
  }

  /**
   * {@link positions} valued at the last tick: unrealized P&L at rate(base, quote) of each
   * position's symbol ({@link rate}: direct, inverse or cross, fresh or carried); none where there
   * is no rate.
   *
   * @example
   * ```ts
   * engine.valuedPositions()[0].positions[0].unrealizedPnl; // 1000
   * ```
   */
  valuedPositions(exchangeId?: string): { account: string; exchangeId: string; positions: ValuedPosition[] }[] {
    return valuePositions(this.positions(exchangeId), (b, q) => this.rate(b, q)?.rate);
  }

  /** The exchanges whose latest `connectivity` event says unreachable, sorted. */
  unreachableExchanges(): string[] {
    return this.state.positions.unreachable();
  }

  /** The latest `connectivity` event of every exchange that had one, in exchange order. */
  connectivity(): ConnectivityEvent[] {
    return this.state.positions.connectivity();
  }

  // ---------------------------------------------------------------- OHLC

  /**
   * Keeps OHLC buckets of rate(base, quote) (direct, inverse or cross) from the next tick on, for
   * the given period ids (default: all 33). Buckets are emitted to the listener as they close;
   * {@link flush} emits the open ones. Tracking the same pair twice returns the existing track.
   */
  track(base: string, quote: string, periodIds?: readonly string[]): TrackedPair {
    return this.tracking.track(base, quote, periodIds);
  }

  /**
   * Tracks every direct pair (as listed, B/Q) from the tick at which it first has a rate, with the
   * given period ids (default: all 33). Pairs already tracked keep their periods.
   */
  trackDirectPairs(periodIds?: readonly string[]): void {
    this.tracking.trackDirectPairs(periodIds);
  }

  /**
   * Makes the next tick report every pair that has a rate to {@link EngineListener.onPairRate},
   * changed or not, and write every own-metric series that has a value (`onOwnMetrics`): the full
   * state at the start of an output window (after a warm-up, or at a partition's cut).
   */
  emitAllAtNextTick(): void {
    this.state.forceEmit = true;
  }

  /** Tracked pairs. */
  trackedPairs(): TrackedPair[] {
    return this.tracking.list();
  }

  /** Open (not yet closed) buckets of a tracked pair, per period. */
  openBuckets(track: TrackedPair): { period: PeriodRecord; bucket: OhlcBucket }[] {
    return this.tracking.openBuckets(track);
  }

  /** Emits every open bucket of every tracked pair (end of a replay). Further ticks start new buckets. */
  flush(): void {
    this.tracking.flush();
  }

  // ---------------------------------------------------------------- snapshots

  /**
   * The whole state as plain JSON: restoring it and continuing gives exactly the outputs of an
   * uninterrupted run (prefix-then-rest equals the whole log). With `packed`, the symbol
   * records' packed trade bins are `PackedBytes` (src/core/packedBytes.ts: views of this engine's
   * state, valid until it changes) rather than base64 text: for a writer that encodes them
   * itself, as the replay database's does (src/io/snapshotBlob.ts); it restores the same.
   */
  snapshot(opts: { packed?: boolean } = {}): EngineSnapshot {
    return takeSnapshot(this.state, this.tracking, opts.packed === true);
  }

  /** Rebuilds an engine from {@link snapshot} output. @throws XrateError on a malformed snapshot. */
  static restore(snap: EngineSnapshot, listener: EngineListener = {}, spill?: ChunkSpill): Engine {
    checkSnapshotVersion(snap);
    const e = new Engine(snap.config, listener);
    // Given first, the restored bins' chunks go to it as they are made.
    if (spill) e.spillBins(spill);
    restoreSnapshot(e.state, e.tracking, snap);
    return e;
  }
}

/**
 * Creates an engine; the config is validated at once (throws XrateErrors naming the field).
 *
 * @example
 * ```ts
 * const engine = createEngine({ outliers: 'mad' }, { onPairRate: (c) => console.log(c) });
 * ```
 */
export function createEngine(config: Partial<EngineConfig> = {}, listener: EngineListener = {}): Engine {
  return new Engine(config, listener);
}

/**
 * Restores an engine from a snapshot (see {@link Engine.snapshot}); with `spill`, its older trade
 * bins go there as they are restored (see {@link Engine.spillBins}).
 */
export function restoreEngine(snapshot: EngineSnapshot, listener: EngineListener = {}, opts: { spill?: ChunkSpill } = {}): Engine {
  return Engine.restore(snapshot, listener, opts.spill);
}
