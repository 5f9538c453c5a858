/**
 * The xrate engine: composes the rule modules into one deterministic reducer over an event log.
 *
 * Flow (METHODOLOGY sections 1-6): `apply(event)` first computes every pending tick T < event.time,
 * then applies the event. Quotes and exchange changes are staged and committed at the start of the
 * next tick, so the committed state is always "as of the last tick" (what `explain` reads) while
 * events of the current second wait. A tick T runs, in order: commit staged changes (rule 4's
 * immediate exclusions), the eligibility refresh if T is T0 or a multiple of 4 h (rule 8), every
 * pair rate (rules 5-7, 9, 11, 1, 13), then OHLC of tracked pairs (section 6). Cross rates (rule 12)
 * are read from the graph of pairs on demand.
 *
 * Hot state lives in typed-array columns indexed by integer ids (markets, exchanges, assets, pairs);
 * strings are interned at the edges.
 *
 * @module
 */
import type { Decimal } from 'decimal.js';
import { resolveConfig, type EngineConfig, type ResolvedConfig } from './config.js';
import { ExactDecimal } from './decimal.js';
import { isEligible, isRefreshTick, type ExclusionReason } from './eligibility.js';
import { RateGraph, type CrossResult, type PairView } from './graph.js';
import { marketPrice, passiveVolume } from './midpoint.js';
import { OhlcAggregator, type OhlcAggregatorSnapshot, type OhlcBucket } from './ohlc.js';
import { computePairRateInto, PairScratch } from './pairRate.js';
import { EXCHANGE_RATE_PERIODS, getPeriod, type PeriodRecord } from './periods.js';
import type { MarketProvenance, PairExplanation, RateExplanation } from './provenance.js';
import { spreadAccepted, spreadOf } from './quoteFilter.js';
import { topRank, usesRank } from './ranking.js';
import { isFresh } from './staleness.js';
import { parseSymbolId } from './symbols.js';
import { formatTime, US_PER_SECOND } from './time.js';
import type { ExchangeEvent, QuoteEvent, Reject, RejectReason, SymbolEvent, SymbolType, TradeEvent, XrateEvent } from './types.js';
import { VolumeWindow, type VolumeWindowJSON } from './volumeWindow.js';

/** A pair rate that changed at a tick (emitted to {@link EngineListener.onPairRate}). */
export interface PairRateChange {
  /** Tick time, µs. */
  tick: number;
  pair: number;
  base: string;
  quote: string;
  /** New rate, or null when the carried rate expired (maxRateAge). */
  rate: number | null;
  /** Time of the rate (newest quote used), µs, or null. */
  time: number | null;
  rank: number | null;
  /** Markets used at the last computation. */
  used: number;
  /** Sum of V of the markets used (weights the layered cross method). */
  volume: number;
  /** Whether markets contributed at this tick. */
  fresh: boolean;
}

/** A pair whose OHLC buckets the engine keeps (section 6). */
export interface TrackedPair {
  readonly id: number;
  readonly base: string;
  readonly quote: string;
  readonly periods: readonly PeriodRecord[];
}

/** Receives the engine's outputs as they happen. All callbacks are optional. */
export interface EngineListener {
  /** After tick T is fully computed. */
  onTick?(tickUs: number): void;
  /** A pair's (rate, time, rank, used) changed at a tick. */
  onPairRate?(change: PairRateChange): void;
  /** An OHLC bucket of a tracked pair closed (or was flushed). */
  onBucket?(track: TrackedPair, period: PeriodRecord, bucket: OhlcBucket): void;
}

/** Result of {@link Engine.rate}. */
export interface RateResult {
  base: string;
  quote: string;
  rate: number;
  /** µs: the pair's time (direct), the oldest leg's time (cross), or the tick (identity). */
  time: number;
  kind: 'identity' | 'direct' | 'inverse' | 'cross';
  /** Every leg had contributing markets at the last tick. */
  fresh: boolean;
  /** Asset ids along the path. */
  path: string[];
}

/** Counters kept by the engine. */
export interface EngineStats {
  events: { exchange: number; symbol: number; quote: number; trade: number };
  rejects: Partial<Record<RejectReason, number>>;
  /** Quotes discarded by rule 5 (the market keeps its previous accepted quote). */
  quotesDiscarded: number;
  ticks: number;
  refreshes: number;
}

/** Options of {@link Engine.rates}. */
export interface RatesOptions {
  /** Only these quote assets (default: every asset with a rate). */
  filter?: readonly string[];
  /** Return 1 / rate for each quote asset. */
  invert?: boolean;
}

const SNAPSHOT_VERSION = 1;

class Interner {
  readonly ids = new Map<string, number>();
  readonly names: string[] = [];
  get(name: string): number | undefined {
    return this.ids.get(name);
  }
  intern(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.names.length;
      this.ids.set(name, id);
      this.names.push(name);
    }
    return id;
  }
  get size(): number {
    return this.names.length;
  }
}

function growF64(a: Float64Array<ArrayBuffer>, n: number, fill = 0): Float64Array<ArrayBuffer> {
  if (n <= a.length) return a;
  const b = new Float64Array(Math.max(n, a.length * 2, 16)).fill(fill);
  b.set(a);
  return b;
}
function growI32(a: Int32Array<ArrayBuffer>, n: number, fill = 0): Int32Array<ArrayBuffer> {
  if (n <= a.length) return a;
  const b = new Int32Array(Math.max(n, a.length * 2, 16)).fill(fill);
  b.set(a);
  return b;
}
function growU8(a: Uint8Array<ArrayBuffer>, n: number, fill = 0): Uint8Array<ArrayBuffer> {
  if (n <= a.length) return a;
  const b = new Uint8Array(Math.max(n, a.length * 2, 16)).fill(fill);
  b.set(a);
  return b;
}

function reject(reason: RejectReason, message: string, field?: string): Reject {
  return field === undefined ? { kind: 'reject', reason, message } : { kind: 'reject', reason, message, field };
}

/** Plain-JSON state of an engine (see {@link Engine.snapshot}). */
export interface EngineSnapshot {
  version: number;
  config: EngineConfig;
  t0: number | null;
  lastRefresh: number;
  nextTick: number | null;
  lastTick: number | null;
  stats: EngineStats;
  assets: string[];
  exchanges: { names: string[]; legit: number[]; rank: number[]; stagedLegit: number[]; stagedRank: number[]; staged: number[] };
  markets: {
    names: string[];
    exchange: number[];
    base: number[];
    quote: number[];
    type: string[];
    pair: number[];
    quote_state: (number | null)[][];
    quote_text: (string[] | null)[];
    staged: number[];
    staged_quotes: QuoteEvent[];
    eligible: number[];
    why_not: number[];
    volume: number[];
    discarded_at: (number | null)[];
  };
  volume: VolumeWindowJSON;
  pairs: { base: number[]; quote: number[]; markets: number[][]; rate: (number | null)[]; time: (number | null)[]; rank: (number | null)[]; used: number[]; volume: number[]; fresh: number[] };
  tracked: { base: string; quote: string; periods: string[]; ohlc: OhlcAggregatorSnapshot }[];
  autoTrack: string[] | null;
  forceEmit: boolean;
}

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
  readonly config: ResolvedConfig;
  private listener: EngineListener;

  private t0: number | undefined;
  /** Time of the last eligibility refresh (rule 8). */
  private lastRefresh = 0;
  private nextTick: number | undefined;
  private lastTick: number | undefined;
  private tickCounter = 0;

  private readonly assets = new Interner();
  private readonly exchanges = new Interner();
  private exLegit = new Uint8Array(0);
  private exRank = new Float64Array(0);
  private exStagedLegit = new Uint8Array(0);
  private exStagedRank = new Float64Array(0);
  private exStaged = new Uint8Array(0);
  private exStagedList: number[] = [];

  private readonly markets = new Interner();
  private mExchange = new Int32Array(0);
  private mBase = new Int32Array(0);
  private mQuote = new Int32Array(0);
  private mType: SymbolType[] = [];
  private mPair = new Int32Array(0);
  // committed quote (as of the last tick)
  private mBid = new Float64Array(0);
  private mAsk = new Float64Array(0);
  private mBidSize = new Float64Array(0);
  private mAskSize = new Float64Array(0);
  private mTq = new Float64Array(0);
  /**
   * Exact texts [bid, ask, bid_size, ask_size] of the committed quote, kept only when one of them
   * is longer than 15 characters: a decimal of at most 15 significant digits round-trips through
   * float64, so its exact value is the float's shortest representation (see {@link exactTexts}).
   */
  private mText: (string[] | undefined)[] = [];
  /** Quote received after the last tick, per market (the last one read wins); committed at the next tick. */
  private sQuote: (QuoteEvent | undefined)[] = [];
  private mStaged = new Uint8Array(0);
  private stagedList: number[] = [];
  private mDiscardedAt = new Float64Array(0);
  private mEligible = new Uint8Array(0);
  /** Why a market was not eligible at the last refresh: 0 eligible / not yet refreshed, 1 not SPOT, 2 assets unknown, 3 exchange not legitimate, 4 no traded volume. */
  private mWhyNot = new Uint8Array(0);
  private mVolume = new Float64Array(0);
  private readonly volume: VolumeWindow;

  private readonly pairIds = new Map<number, number>();
  private pairMarkets: number[][] = [];
  private pairCount = 0;
  private pBase = new Int32Array(0);
  private pQuote = new Int32Array(0);
  private pRate = new Float64Array(0);
  private pTime = new Float64Array(0);
  private pRank = new Float64Array(0);
  private pUsed = new Int32Array(0);
  private pVolume = new Float64Array(0);
  private pFresh = new Uint8Array(0);
  /** The pair is known to be tracked (auto-tracking checks this instead of its name). */
  private pTracked = new Uint8Array(0);
  /** A pair changed at this tick and is to be reported (pass 2 of a tick). */
  private pChanged = new Uint8Array(0);
  /** A pair must be recomputed at the next tick (an input changed). */
  private pDirty = new Uint8Array(0);
  /** First tick at which time alone can change the pair (a candidate goes stale, or the carried rate expires). */
  private pNextCheck = new Float64Array(0);
  /** Recompute every pair at the next tick (refresh, restore, full-state output). */
  private allDirty = true;
  /** Set by computePair: earliest staleness deadline of the candidates at the rank used. */
  private candidateDeadline = Infinity;
  /** Pair ids sorted by (base, quote) asset id: the order changes are reported in within a tick. */
  private pairOrder: Int32Array | undefined;
  /** Markets of each exchange (a legitimacy or rank change dirties their pairs). */
  private exMarkets: number[][] = [];
  private topologyVersion = 0;

  private readonly graph: RateGraph;
  private readonly scratch = new PairScratch();
  /** Tracked pairs with their aggregators and asset ids (-1 until the asset is known). */
  private readonly tracked: { track: TrackedPair; agg: OhlcAggregator; b: number; q: number }[] = [];
  private readonly trackedKeys = new Map<string, TrackedPair>();
  private readonly stats: EngineStats = {
    events: { exchange: 0, symbol: 0, quote: 0, trade: 0 },
    rejects: {},
    quotesDiscarded: 0,
    ticks: 0,
    refreshes: 0,
  };

  /**
   * @param config - partial {@link EngineConfig}; validated here (throws `xrate:` errors)
   * @param listener - receives rate changes, ticks and OHLC buckets
   */
  constructor(config: Partial<EngineConfig> = {}, listener: EngineListener = {}) {
    this.config = resolveConfig(config);
    this.listener = listener;
    this.volume = new VolumeWindow(this.config.volumeWindowUs, this.config.refreshEveryUs);
    this.graph = new RateGraph((id) => this.assets.names[id]);
  }

  /** Replaces the listener (e.g. after {@link restoreEngine}). */
  setListener(listener: EngineListener): void {
    this.listener = listener;
  }

  // ---------------------------------------------------------------- events

  /**
   * Applies one event: computes every pending tick before its time, then the event itself.
   * Never throws for bad data: returns a {@link Reject} (`late`, `unknown_symbol`) or undefined.
   */
  apply(event: XrateEvent): Reject | undefined {
    const t = event.time;
    if (!Number.isSafeInteger(t)) return this.countReject(reject('bad_time', `event time ${String(t)} is not an integer number of microseconds`, 'time'));
    if (this.lastTick !== undefined && t <= this.lastTick) {
      return this.countReject(
        reject('late', `event time ${formatTime(t)} is at or before the last computed tick ${formatTime(this.lastTick)}`, 'time'),
      );
    }
    if (this.t0 === undefined) {
      // T0 comes from the first event the engine accepts: a quote or trade for an unknown symbol
      // is rejected without starting the clock.
      if ((event.type === 'quote' || event.type === 'trade') && this.marketFor(event.symbolId) === undefined) {
        return event.type === 'quote' ? this.applyQuote(event) : this.applyTrade(event);
      }
      this.t0 = Math.ceil(t / US_PER_SECOND) * US_PER_SECOND;
      this.nextTick = this.t0;
    } else {
      this.runTicks(t - 1);
    }
    switch (event.type) {
      case 'quote':
        return this.applyQuote(event);
      case 'trade':
        return this.applyTrade(event);
      case 'exchange':
        return this.applyExchange(event);
      case 'symbol':
        return this.applySymbol(event);
      default:
        return this.countReject(reject('unknown_type', `unknown event type ${JSON.stringify((event as { type?: unknown }).type)}`, 'type'));
    }
  }

  /** Records a reject produced outside the engine (e.g. by the parser) in the engine's counters. */
  countReject(r: Reject): Reject {
    this.stats.rejects[r.reason] = (this.stats.rejects[r.reason] ?? 0) + 1;
    return r;
  }

  /** Computes every tick T <= timeUs not yet computed (ticks through the last whole second <= timeUs). */
  advanceTo(timeUs: number): void {
    if (this.t0 === undefined) return;
    this.runTicks(timeUs);
  }

  /** Time of the last computed tick, µs, or undefined before the first. */
  get lastTickTime(): number | undefined {
    return this.lastTick;
  }

  /** The first tick T0 (first event time rounded up to a whole second), once known. */
  get firstTickTime(): number | undefined {
    return this.t0;
  }

  /** A copy of the counters. */
  getStats(): EngineStats {
    return structuredClone(this.stats);
  }

  private ensureExchange(name: string): number {
    const id = this.exchanges.intern(name);
    while (this.exMarkets.length <= id) this.exMarkets.push([]);
    const n = this.exchanges.size;
    if (n > this.exLegit.length) {
      this.exLegit = growU8(this.exLegit, n, 1);
      this.exRank = growF64(this.exRank, n, 0);
      this.exStagedLegit = growU8(this.exStagedLegit, n, 1);
      this.exStagedRank = growF64(this.exStagedRank, n, 0);
      this.exStaged = growU8(this.exStaged, n, 0);
    }
    return id;
  }

  private ensurePair(base: number, quote: number): number {
    const key = base * 0x200000 + quote;
    let id = this.pairIds.get(key);
    if (id !== undefined) return id;
    id = this.pairCount++;
    this.pairIds.set(key, id);
    this.pairMarkets.push([]);
    const n = this.pairCount;
    this.pBase = growI32(this.pBase, n);
    this.pQuote = growI32(this.pQuote, n);
    this.pRate = growF64(this.pRate, n, NaN);
    this.pTime = growF64(this.pTime, n, NaN);
    this.pRank = growF64(this.pRank, n, NaN);
    this.pUsed = growI32(this.pUsed, n);
    this.pVolume = growF64(this.pVolume, n);
    this.pFresh = growU8(this.pFresh, n);
    this.pDirty = growU8(this.pDirty, n);
    this.pChanged = growU8(this.pChanged, n);
    this.pTracked = growU8(this.pTracked, n);
    this.pNextCheck = growF64(this.pNextCheck, n, Infinity);
    this.pDirty[id] = 1;
    this.pairOrder = undefined;
    this.pBase[id] = base;
    this.pQuote[id] = quote;
    return id;
  }

  /** Creates or updates a market. */
  private defineMarket(symbolId: string, exchangeId: string, type: SymbolType, base: string | undefined, quote: string | undefined): number {
    const m = this.markets.intern(symbolId);
    const n = this.markets.size;
    if (n > this.mExchange.length) {
      this.mExchange = growI32(this.mExchange, n, -1);
      this.mBase = growI32(this.mBase, n, -1);
      this.mQuote = growI32(this.mQuote, n, -1);
      this.mPair = growI32(this.mPair, n, -1);
      this.mBid = growF64(this.mBid, n);
      this.mAsk = growF64(this.mAsk, n);
      this.mBidSize = growF64(this.mBidSize, n);
      this.mAskSize = growF64(this.mAskSize, n);
      this.mTq = growF64(this.mTq, n, NaN);
      this.mStaged = growU8(this.mStaged, n);
      this.mDiscardedAt = growF64(this.mDiscardedAt, n, NaN);
      this.mEligible = growU8(this.mEligible, n);
      this.mWhyNot = growU8(this.mWhyNot, n);
      this.mVolume = growF64(this.mVolume, n);
      this.volume.ensure(n);
    }
    while (this.mType.length < n) {
      this.mType.push('SPOT');
      this.mText.push(undefined);
      this.sQuote.push(undefined);
    }
    const ex = this.ensureExchange(exchangeId);
    const b = base === undefined ? -1 : this.assets.intern(base);
    const q = quote === undefined ? -1 : this.assets.intern(quote);
    const oldPair = this.mPair[m];
    const newPair = type === 'SPOT' && b >= 0 && q >= 0 && b !== q ? this.ensurePair(b, q) : -1;
    const oldEx = this.mExchange[m];
    if (oldEx !== ex) {
      if (oldEx >= 0) {
        const l = this.exMarkets[oldEx];
        l.splice(l.indexOf(m), 1);
      }
      this.exMarkets[ex].push(m);
    }
    this.mExchange[m] = ex;
    this.mBase[m] = b;
    this.mQuote[m] = q;
    this.mType[m] = type;
    if (oldPair !== newPair) {
      if (oldPair >= 0) {
        const list = this.pairMarkets[oldPair];
        list.splice(list.indexOf(m), 1);
      }
      if (newPair >= 0) {
        // Keep each pair's markets sorted by symbol id: the float sums of rules 1 and 11 then
        // run in the same order whatever order the markets were first seen in.
        const list = this.pairMarkets[newPair];
        let at = list.length;
        while (at > 0 && this.markets.names[list[at - 1]] > symbolId) at--;
        list.splice(at, 0, m);
      }
      this.mPair[m] = newPair;
      // A market that changes pair must qualify again at the next refresh.
      this.mEligible[m] = 0;
      if (oldPair >= 0) this.pDirty[oldPair] = 1;
      if (newPair >= 0) this.pDirty[newPair] = 1;
    }
    return m;
  }

  private marketFor(symbolId: string): number | undefined {
    const m = this.markets.get(symbolId);
    if (m !== undefined) return m;
    const info = parseSymbolId(symbolId);
    if (!info) return undefined;
    return this.defineMarket(symbolId, info.exchangeId, info.symbolType, info.assetIdBase, info.assetIdQuote);
  }

  private applySymbol(e: SymbolEvent): undefined {
    this.stats.events.symbol++;
    this.defineMarket(e.symbolId, e.exchangeId, e.symbolType, e.assetIdBase, e.assetIdQuote);
    return undefined;
  }

  private applyExchange(e: ExchangeEvent): undefined {
    this.stats.events.exchange++;
    const x = this.ensureExchange(e.exchangeId);
    this.exStagedLegit[x] = e.legitimate ? 1 : 0;
    this.exStagedRank[x] = e.rank;
    if (!this.exStaged[x]) {
      this.exStaged[x] = 1;
      this.exStagedList.push(x);
    }
    return undefined;
  }

  private applyQuote(e: QuoteEvent): Reject | undefined {
    const m = this.marketFor(e.symbolId);
    if (m === undefined) {
      return this.countReject(reject('unknown_symbol', `quote for unknown symbol "${e.symbolId}" (no symbol event, and the id matches no known pattern)`, 'symbol_id'));
    }
    this.stats.events.quote++;
    if (!spreadAccepted(e.bidPrice, e.askPrice, this.config.maxSpreadText, this.config.maxSpreadValue)) {
      this.stats.quotesDiscarded++;
      this.mDiscardedAt[m] = e.time;
      return undefined;
    }
    this.sQuote[m] = e;
    if (!this.mStaged[m]) {
      this.mStaged[m] = 1;
      this.stagedList.push(m);
    }
    return undefined;
  }

  private applyTrade(e: TradeEvent): Reject | undefined {
    const m = this.marketFor(e.symbolId);
    if (m === undefined) {
      return this.countReject(reject('unknown_symbol', `trade for unknown symbol "${e.symbolId}" (no symbol event, and the id matches no known pattern)`, 'symbol_id'));
    }
    this.stats.events.trade++;
    // A trade at or before T0 - window (possible only before the first tick, in a log out of order
    // by more than the window) lies outside every refresh window (R >= T0): leaving it out keeps
    // V exact at the unaligned T0 (whose first bucket straddles T0 - window) and stops an old
    // bucket from evicting a newer one in the ring.
    if (e.time > this.t0! - this.config.volumeWindowUs) this.volume.add(m, e.time, e.size.value, e.size.text);
    return undefined;
  }

  // ---------------------------------------------------------------- ticks

  private runTicks(upTo: number): void {
    let T = this.nextTick!;
    while (T <= upTo) {
      this.tick(T);
      T += US_PER_SECOND;
      this.nextTick = T;
    }
  }

  private commitStaged(): void {
    for (const x of this.exStagedList) {
      if (this.exLegit[x] !== this.exStagedLegit[x] || this.exRank[x] !== this.exStagedRank[x]) {
        for (const m of this.exMarkets[x]) if (this.mPair[m] >= 0) this.pDirty[this.mPair[m]] = 1;
      }
      this.exLegit[x] = this.exStagedLegit[x];
      this.exRank[x] = this.exStagedRank[x];
      this.exStaged[x] = 0;
    }
    this.exStagedList.length = 0;
    for (const m of this.stagedList) {
      const q = this.sQuote[m]!;
      this.sQuote[m] = undefined;
      this.mBid[m] = q.bidPrice.value;
      this.mAsk[m] = q.askPrice.value;
      this.mBidSize[m] = q.bidSize.value;
      this.mAskSize[m] = q.askSize.value;
      this.mTq[m] = q.time;
      const long = q.bidPrice.text.length > 15 || q.askPrice.text.length > 15 || q.bidSize.text.length > 15 || q.askSize.text.length > 15;
      this.mText[m] = long ? [q.bidPrice.text, q.askPrice.text, q.bidSize.text, q.askSize.text] : undefined;
      this.mStaged[m] = 0;
      if (this.mPair[m] >= 0) this.pDirty[this.mPair[m]] = 1;
    }
    this.stagedList.length = 0;
  }

  private refresh(T: number): void {
    this.stats.refreshes++;
    this.lastRefresh = T;
    this.allDirty = true;
    const n = this.markets.size;
    for (let m = 0; m < n; m++) {
      const V = this.volume.sum(m, T);
      this.mVolume[m] = V;
      const spot = this.mType[m] === 'SPOT';
      const known = this.mBase[m] >= 0 && this.mQuote[m] >= 0;
      const legit = this.exLegit[this.mExchange[m]] === 1;
      this.mEligible[m] = isEligible(spot, legit, known, V) ? 1 : 0;
      this.mWhyNot[m] = !spot ? 1 : !known ? 2 : !legit ? 3 : V > 0 ? 0 : 4;
    }
  }

  private tick(T: number): void {
    this.commitStaged();
    if (isRefreshTick(T, this.t0!, this.config.refreshEveryUs)) this.refresh(T);
    let topologyChanged = false;
    const onPairRate = this.listener.onPairRate;
    // Only pairs whose inputs changed, or whose next time-driven change is due, are recomputed:
    // a pair's result depends on its markets' committed quotes, eligibility and V, its exchanges'
    // legitimacy and rank (all of which mark it dirty), and on T only through staleness and
    // expiry (pNextCheck). Recomputing any other pair would give the same result.
    const all = this.allDirty || this.forceEmit;
    this.allDirty = false;
    const S = US_PER_SECOND;
    // Pass 1, in pair-id order (markets first seen together sit together in memory): recompute.
    const report = onPairRate !== undefined || this.autoTrackPeriods !== undefined;
    let changed = 0;
    for (let pr = 0; pr < this.pairCount; pr++) {
      if (!all && this.pDirty[pr] === 0 && this.pNextCheck[pr] > T) continue;
      this.pDirty[pr] = 0;
      const oldRate = this.pRate[pr];
      const oldTime = this.pTime[pr];
      const oldRank = this.pRank[pr];
      const oldUsed = this.pUsed[pr];
      const oldFresh = this.pFresh[pr];
      const oldVolume = this.pVolume[pr];
      const res = this.computePair(pr, T, undefined);
      if (res) {
        const sc = this.scratch;
        this.pRate[pr] = sc.rate;
        this.pTime[pr] = sc.time;
        this.pRank[pr] = this.cpRank;
        this.pUsed[pr] = sc.used;
        this.pVolume[pr] = sc.volume;
        this.pFresh[pr] = 1;
      } else {
        this.pFresh[pr] = 0;
        if (!Number.isNaN(oldRate) && T - oldTime > this.config.maxRateAgeUs) {
          this.pRate[pr] = NaN;
          this.pTime[pr] = NaN;
          this.pRank[pr] = NaN;
          this.pUsed[pr] = 0;
          this.pVolume[pr] = 0;
        }
      }
      let next = this.candidateDeadline;
      if (!res && !Number.isNaN(this.pRate[pr])) {
        const expiry = (Math.floor((this.pTime[pr] + this.config.maxRateAgeUs) / S) + 1) * S;
        if (expiry < next) next = expiry;
      }
      this.pNextCheck[pr] = next;
      const newRate = this.pRate[pr];
      if (Number.isNaN(oldRate) !== Number.isNaN(newRate)) topologyChanged = true;
      const edgeSame =
        Object.is(oldRate, newRate) &&
        Object.is(oldTime, this.pTime[pr]) &&
        Object.is(oldRank, this.pRank[pr]) &&
        oldUsed === this.pUsed[pr] &&
        oldFresh === this.pFresh[pr];
      if (!edgeSame) this.graph.notePairChanged(pr);
      if (report && !(!(this.forceEmit && !Number.isNaN(newRate)) && edgeSame && oldVolume === this.pVolume[pr])) {
        this.pChanged[pr] = 1;
        changed++;
      }
    }
    // Pass 2, in (base, quote) order: start tracking new pairs and report changes, so the output
    // does not depend on which market was seen first.
    if (changed > 0) {
      const order = (this.pairOrder ??= this.sortedPairs());
      for (let i = 0; i < order.length && changed > 0; i++) {
        const pr = order[i];
        if (this.pChanged[pr] === 0) continue;
        this.pChanged[pr] = 0;
        changed--;
        const rate = this.pRate[pr];
        const nan = Number.isNaN(rate);
        if (this.autoTrackPeriods && !nan && this.pTracked[pr] === 0) {
          // track() returns the existing track when the pair was tracked by name before.
          this.track(this.assets.names[this.pBase[pr]], this.assets.names[this.pQuote[pr]], this.autoTrackPeriods);
          this.pTracked[pr] = 1;
        }
        onPairRate?.({
          tick: T,
          pair: pr,
          base: this.assets.names[this.pBase[pr]],
          quote: this.assets.names[this.pQuote[pr]],
          rate: nan ? null : rate,
          time: nan ? null : this.pTime[pr],
          rank: nan ? null : this.pRank[pr],
          used: this.pUsed[pr],
          volume: this.pVolume[pr],
          fresh: this.pFresh[pr] === 1,
        });
      }
    }
    this.forceEmit = false;
    if (topologyChanged) this.topologyVersion++;
    this.lastTick = T;
    this.tickCounter++;
    this.stats.ticks++;
    const view = this.view();
    this.graph.sync(view, this.assets.size, this.topologyVersion);
    for (const t of this.tracked) {
      if (t.b < 0) t.b = this.assets.get(t.track.base) ?? -1;
      if (t.q < 0) t.q = this.assets.get(t.track.quote) ?? -1;
      if (t.b < 0 || t.q < 0) {
        if (t.track.base === t.track.quote) t.agg.update(T, 1);
        continue;
      }
      if (t.b === t.q) {
        t.agg.update(T, 1);
        continue;
      }
      if (this.config.crossMethod === 'bfs') {
        const r = this.graph.directRate(t.b, t.q, view, this.tickCounter);
        if (r === r) {
          if (this.graph.directFresh) t.agg.update(T, r);
          continue;
        }
      }
      const r = this.graph.cross(t.b, t.q, view, this.config.crossMethod, this.tickCounter);
      if (r && r.fresh) t.agg.update(T, r.rate);
    }
    this.listener.onTick?.(T);
  }

  private sortedPairs(): Int32Array {
    const names = this.assets.names;
    const ids = Array.from({ length: this.pairCount }, (_, i) => i);
    ids.sort((a, b) => {
      const ba = names[this.pBase[a]];
      const bb = names[this.pBase[b]];
      if (ba !== bb) return ba < bb ? -1 : 1;
      const qa = names[this.pQuote[a]];
      const qb = names[this.pQuote[b]];
      return qa < qb ? -1 : qa > qb ? 1 : 0;
    });
    return Int32Array.from(ids);
  }

  /**
   * Rules 3-9, 11, 1 for pair `pr` at tick T on the committed state. With `collect`, also fills
   * provenance (used by {@link explain}; the tick path passes undefined and allocates nothing
   * per market).
   */
  private computePair(
    pr: number,
    T: number,
    collect: { used: MarketProvenance[]; excluded: MarketProvenance[] } | undefined,
  ): boolean {
    const list = this.pairMarkets[pr];
    const s = this.scratch;
    s.ensure(list.length);
    const cfg = this.config;
    let n = 0;
    this.candidateDeadline = Infinity;
    for (let i = 0; i < list.length; i++) {
      const m = list[i];
      const x = this.mExchange[m];
      let reason: ExclusionReason | undefined;
      let detail = '';
      if (!this.mEligible[m]) {
        reason = 'not_eligible';
        if (collect) detail = this.ineligibleDetail(m);
      } else if (!this.exLegit[x]) {
        reason = 'not_legitimate';
        if (collect) detail = `exchange ${this.exchanges.names[x]} is not legitimate`;
      } else if (Number.isNaN(this.mTq[m])) {
        reason = Number.isNaN(this.mDiscardedAt[m]) ? 'no_quote' : 'spread';
        if (collect) detail = reason === 'spread' ? 'every quote so far had a spread outside [0, maxSpread]' : 'no quote yet';
      } else if (!isFresh(T, this.mTq[m], cfg.staleAfterUs)) {
        reason = 'stale';
        if (collect) detail = `quote age ${(T - this.mTq[m]) / US_PER_SECOND} s > ${cfg.staleAfterSeconds} s`;
      }
      if (reason) {
        if (collect) collect.excluded.push({ ...this.marketProv(m, T), reason, detail });
        continue;
      }
      s.rank[n] = this.exRank[x];
      s.market[n++] = m;
    }
    // Rule 9: only the highest rank among the fresh eligible markets.
    const maxRank = topRank(s.rank, n);
    let k = 0;
    for (let j = 0; j < n; j++) {
      const m = s.market[j];
      if (!usesRank(s.rank[j], maxRank)) {
        if (collect) collect.excluded.push({ ...this.marketProv(m, T), reason: 'rank', detail: `rank ${s.rank[j]} < ${maxRank}` });
        continue;
      }
      // First tick at which this candidate is stale: T > t_quote + staleAfter.
      const deadline = (Math.floor((this.mTq[m] + cfg.staleAfterUs) / US_PER_SECOND) + 1) * US_PER_SECOND;
      if (deadline < this.candidateDeadline) this.candidateDeadline = deadline;
      s.market[k] = m;
      s.p[k] = marketPrice(cfg.weighting, this.mBid[m], this.mAsk[m], this.mBidSize[m], this.mAskSize[m]);
      s.q[k] = passiveVolume(this.mBidSize[m], this.mAskSize[m]);
      s.v[k] = this.mVolume[m];
      s.t[k] = this.mTq[m];
      k++;
    }
    this.cpRank = maxRank;
    if (k === 0) return false;
    if (!computePairRateInto(s, k, cfg, this.exactFor)) return false;
    if (collect) {
      let W = 0;
      for (let j = 0; j < k; j++) if (s.keep[j]) W += s.w[j];
      for (let j = 0; j < k; j++) {
        const prov: MarketProvenance = { ...this.marketProv(s.market[j], T), price: s.p[j], q: s.q[j], volume: s.v[j], weight: s.w[j] };
        if (s.keep[j]) collect.used.push({ ...prov, weight_share: s.w[j] / W });
        else {
          const st = s.stats!;
          const detail =
            st.method === 'leave_one_out'
              ? `|p - mean of the others| > ${cfg.outlierSigmas} x sigma of the others (leave_one_out)`
              : `|p - ${st.method === 'mad' ? 'median' : 'mean'}| = ${Math.abs(s.p[j] - st.centre)} > ${cfg.outlierSigmas} x ${st.scale}`;
          collect.excluded.push({ ...prov, reason: 'outlier', detail });
        }
      }
    }
    return true;
  }

  /** Rank used by the last {@link computePair}. */
  private cpRank = -Infinity;
  /** Exact inputs of the j-th scratch slot, for rule 11's boundary fall-back (bound once). */
  private readonly exactFor = (j: number): { p: Decimal; w: Decimal } => this.exactPriceWeight(this.scratch.market[j], this.scratch.useVolume);

  /** Exact p and w of market m for the outlier boundary fall-back. `useVolume`: the weight is V. */
  private exactPriceWeight(m: number, useVolume: boolean): { p: Decimal; w: Decimal } {
    const [bt, at, bst, ast] = this.exactTexts(m);
    const bid = new ExactDecimal(bt);
    const ask = new ExactDecimal(at);
    const bs = new ExactDecimal(bst);
    const as = new ExactDecimal(ast);
    const q = bs.plus(as);
    const V = new ExactDecimal(this.volume.exactSum(m, this.lastRefresh));
    const p =
      this.config.weighting === 'microprice' && q.gt(0) ? bid.times(as).plus(ask.times(bs)).div(q) : bid.plus(ask).div(2);
    let w: Decimal;
    if (useVolume || this.config.weighting === 'trade' || this.config.weighting === 'microprice') w = V;
    else if (this.config.weighting === 'passive') w = q;
    else w = V.times(q);
    return { p, w };
  }

  private ineligibleDetail(m: number): string {
    switch (this.mWhyNot[m]) {
      case 3:
        return 'its exchange was not legitimate at the last eligibility refresh';
      case 4:
        return `no traded volume in the 24 h before the last eligibility refresh (V = 0)`;
      case 2:
        return 'base or quote asset unknown';
      default:
        return 'listed after the last eligibility refresh: eligible from the next refresh if it trades';
    }
  }

  /** Exact decimal texts of market m's committed quote (see {@link mText}). */
  private exactTexts(m: number): string[] {
    return this.mText[m] ?? [String(this.mBid[m]), String(this.mAsk[m]), String(this.mBidSize[m]), String(this.mAskSize[m])];
  }

  private marketProv(m: number, T: number): MarketProvenance {
    const x = this.mExchange[m];
    const prov: MarketProvenance = {
      symbol_id: this.markets.names[m],
      exchange_id: this.exchanges.names[x],
      rank: this.exRank[x],
    };
    if (!Number.isNaN(this.mTq[m])) {
      prov.bid_price = this.mBid[m];
      prov.ask_price = this.mAsk[m];
      prov.bid_size = this.mBidSize[m];
      prov.ask_size = this.mAskSize[m];
      prov.quote_time = formatTime(this.mTq[m]);
      prov.quote_age_seconds = (T - this.mTq[m]) / US_PER_SECOND;
      prov.volume = this.mVolume[m];
    }
    return prov;
  }

  private viewCache: PairView | undefined;

  /** The pair columns as a {@link PairView} (cached; rebuilt when a column is reallocated). */
  private view(): PairView {
    if (this.viewCache && this.viewCache.count === this.pairCount && this.viewCache.rate === this.pRate) return this.viewCache;
    return (this.viewCache = {
      count: this.pairCount,
      base: this.pBase,
      quote: this.pQuote,
      rate: this.pRate,
      time: this.pTime,
      rank: this.pRank,
      used: this.pUsed,
      volume: this.pVolume,
      fresh: this.pFresh,
    });
  }

  // ---------------------------------------------------------------- queries

  private crossIds(base: string, quote: string): CrossResult | undefined {
    if (this.lastTick === undefined) return undefined;
    if (base === quote) return { rate: 1, time: this.lastTick, fresh: true, path: [], legs: [], minRank: Infinity, method: this.config.crossMethod };
    const b = this.assets.get(base);
    const q = this.assets.get(quote);
    if (b === undefined || q === undefined) return undefined;
    return this.graph.cross(b, q, this.view(), this.config.crossMethod, this.tickCounter);
  }

  /**
   * rate(base, quote) as of the last tick (rules 1, 12, 13): identity, the direct pair (or its
   * inverse), or a cross rate through the graph. Undefined when there is none.
   */
  rate(base: string, quote: string): RateResult | undefined {
    const r = this.crossIds(base, quote);
    if (!r) return undefined;
    if (base === quote) return { base, quote, rate: 1, time: this.lastTick!, kind: 'identity', fresh: true, path: [base] };
    const direct = r.legs.length === 1 && r.legs[0].from === r.path[0];
    const kind = direct ? (r.legs[0].inverted ? 'inverse' : 'direct') : 'cross';
    return { base, quote, rate: r.rate, time: r.time, kind, fresh: r.fresh, path: r.path.map((a) => this.assets.names[a]) };
  }

  private allOut = { rate: new Float64Array(0), time: new Float64Array(0), fresh: new Uint8Array(0) };

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
    const b = this.assets.get(base);
    if (b === undefined || this.lastTick === undefined) return undefined;
    const n = this.assets.size;
    if (this.allOut.rate.length !== n) this.allOut = { rate: new Float64Array(n), time: new Float64Array(n), fresh: new Uint8Array(n) };
    this.graph.crossAll(b, this.view(), this.config.crossMethod, this.tickCounter, this.allOut);
    this.allOut.time[b] = this.lastTick;
    return this.allOut;
  }

  /** Asset id of an integer asset index (as used by {@link ratesFrom}). */
  assetName(index: number): string {
    return this.assets.names[index];
  }

  /**
   * Rates of `base` against every asset it reaches (or the `filter` list), sorted by asset id;
   * `invert` gives 1 / rate. Assets without a rate are left out. `path` is filled for direct and
   * inverse pairs and left empty for cross rates (ask {@link rate} for a cross rate's path).
   */
  rates(base: string, opts: RatesOptions = {}): RateResult[] {
    const all = this.ratesFrom(base);
    if (!all) return opts.filter?.includes(base) && this.lastTick !== undefined ? [this.rate(base, base)!] : [];
    const targets = opts.filter ? [...new Set(opts.filter)] : [...this.assets.names].filter((a) => a !== base);
    targets.sort();
    const out: RateResult[] = [];
    for (const q of targets) {
      const qi = this.assets.get(q);
      if (qi === undefined || Number.isNaN(all.rate[qi])) continue;
      let kind: RateResult['kind'] = q === base ? 'identity' : 'cross';
      if (kind === 'cross') {
        const direct = this.pairIds.get(this.assets.get(base)! * 0x200000 + qi);
        const inverse = this.pairIds.get(qi * 0x200000 + this.assets.get(base)!);
        if ((direct !== undefined && !Number.isNaN(this.pRate[direct])) || (inverse !== undefined && !Number.isNaN(this.pRate[inverse]))) {
          kind = this.rate(base, q)!.kind;
        }
      }
      const rate = opts.invert ? 1 / all.rate[qi] : all.rate[qi];
      out.push({ base, quote: q, rate, time: all.time[qi], kind, fresh: all.fresh[qi] === 1, path: kind === 'cross' ? [] : kind === 'identity' ? [base] : [base, q] });
    }
    return out;
  }

  /** Known asset ids, sorted. */
  assetIds(): string[] {
    return [...this.assets.names].sort();
  }

  /** Direct pairs with a rate at the last tick, as `{base, quote, rate, time, rank, used, fresh}`. */
  pairs(): { base: string; quote: string; rate: number; time: number; rank: number; used: number; fresh: boolean }[] {
    const out = [];
    for (let pr = 0; pr < this.pairCount; pr++) {
      if (Number.isNaN(this.pRate[pr])) continue;
      out.push({
        base: this.assets.names[this.pBase[pr]],
        quote: this.assets.names[this.pQuote[pr]],
        rate: this.pRate[pr],
        time: this.pTime[pr],
        rank: this.pRank[pr],
        used: this.pUsed[pr],
        fresh: this.pFresh[pr] === 1,
      });
    }
    return out.sort((a, b) => (a.base + '/' + a.quote < b.base + '/' + b.quote ? -1 : 1));
  }

  /** Every declared direct SPOT pair (with or without a rate), as `BASE/QUOTE` strings. */
  listedPairs(): string[] {
    const out: string[] = [];
    for (let pr = 0; pr < this.pairCount; pr++) out.push(`${this.assets.names[this.pBase[pr]]}/${this.assets.names[this.pQuote[pr]]}`);
    return out.sort();
  }

  /** The graph of assets as a graphology graph (sorted, for inspection and export). */
  graphModel() {
    return this.graph.model();
  }

  /** Explains one direct pair at the last tick: markets used and left out, weights, outliers. */
  explainPair(base: string, quote: string): PairExplanation | undefined {
    const b = this.assets.get(base);
    const q = this.assets.get(quote);
    if (b === undefined || q === undefined || this.lastTick === undefined) return undefined;
    const pr = this.pairIds.get(b * 0x200000 + q);
    if (pr === undefined) return undefined;
    return this.explainPairId(pr);
  }

  private explainPairId(pr: number): PairExplanation {
    const T = this.lastTick!;
    const collect = { used: [] as MarketProvenance[], excluded: [] as MarketProvenance[] };
    const res = this.computePair(pr, T, collect);
    const base = this.assets.names[this.pBase[pr]];
    const quote = this.assets.names[this.pQuote[pr]];
    // Non-SPOT markets of the same assets, for completeness.
    for (let m = 0; m < this.markets.size; m++) {
      if (this.mType[m] !== 'SPOT' && this.mBase[m] === this.pBase[pr] && this.mQuote[m] === this.pQuote[pr]) {
        collect.excluded.push({ ...this.marketProv(m, T), reason: 'not_spot', detail: `symbol type ${this.mType[m]}` });
      }
    }
    const st = res ? this.scratch.stats : undefined;
    const rate = this.pRate[pr];
    return {
      asset_id_base: base,
      asset_id_quote: quote,
      tick: formatTime(T),
      rate: Number.isNaN(rate) ? null : rate,
      time: Number.isNaN(rate) ? null : formatTime(this.pTime[pr]),
      fresh: this.pFresh[pr] === 1,
      rank: res ? this.cpRank : Number.isNaN(this.pRank[pr]) ? null : this.pRank[pr],
      weighting: this.config.weighting,
      passive_fallback: res ? this.scratch.fallback : false,
      outliers: st
        ? {
            method: st.method,
            centre: Number.isNaN(st.centre) ? null : st.centre,
            scale: Number.isNaN(st.scale) ? null : st.scale,
            sigmas: this.config.outlierSigmas,
            dropped: st.dropped,
            exact: st.exact,
          }
        : null,
      used: collect.used,
      excluded: collect.excluded,
    };
  }

  /** Explains rate(base, quote) at the last tick: the path and, per leg, its pair explanation. */
  explain(base: string, quote: string): RateExplanation {
    const T = this.lastTick;
    const none = (message: string): RateExplanation => ({
      asset_id_base: base,
      asset_id_quote: quote,
      tick: T === undefined ? null : formatTime(T),
      kind: 'none',
      rate: null,
      time: null,
      fresh: false,
      method: this.config.crossMethod,
      path: [],
      legs: [],
      message,
    });
    if (T === undefined) return none('no tick has been computed yet');
    const r = this.rate(base, quote);
    if (!r) {
      if (this.assets.get(base) === undefined) return none(`unknown asset "${base}"`);
      if (this.assets.get(quote) === undefined) return none(`unknown asset "${quote}"`);
      return none(`no path from ${base} to ${quote} in the graph of pairs with a rate`);
    }
    const cr = this.crossIds(base, quote)!;
    return {
      asset_id_base: base,
      asset_id_quote: quote,
      tick: formatTime(T),
      kind: r.kind,
      rate: r.rate,
      time: formatTime(r.time),
      fresh: r.fresh,
      method: cr.method,
      path: r.path,
      legs: cr.legs.map((l) => ({
        pair: `${this.assets.names[this.pBase[l.pair]]}/${this.assets.names[this.pQuote[l.pair]]}`,
        from: this.assets.names[l.from],
        to: this.assets.names[l.to],
        inverted: l.inverted,
        rate: l.rate,
        time: formatTime(l.time),
        rank: l.rank,
        fresh: l.fresh,
        explanation: this.explainPairId(l.pair),
      })),
    };
  }

  // ---------------------------------------------------------------- OHLC

  /**
   * Keeps OHLC buckets of rate(base, quote) (direct, inverse or cross) from the next tick on, for
   * the given period ids (default: all 33). Buckets are emitted to the listener as they close;
   * {@link flush} emits the open ones. Tracking the same pair twice returns the existing track.
   */
  track(base: string, quote: string, periodIds?: readonly string[]): TrackedPair {
    const key = `${base}/${quote}`;
    const existing = this.trackedKeys.get(key);
    if (existing) return existing;
    const periods = periodIds
      ? periodIds.map((id) => {
          const p = getPeriod(id);
          if (!p) throw new Error(`xrate: unknown period id "${id}"`);
          return p;
        })
      : EXCHANGE_RATE_PERIODS;
    const track: TrackedPair = Object.freeze({ id: this.tracked.length, base, quote, periods: Object.freeze([...periods]) });
    this.addTrack(track, undefined);
    return track;
  }

  private addTrack(track: TrackedPair, snap: OhlcAggregatorSnapshot | undefined): void {
    const onClose = (i: number, b: OhlcBucket): void => this.listener.onBucket?.(track, track.periods[i], b);
    const agg = snap ? OhlcAggregator.fromJSON(snap, track.periods, onClose) : new OhlcAggregator(track.periods, onClose);
    this.tracked.push({ track, agg, b: -1, q: -1 });
    this.trackedKeys.set(`${track.base}/${track.quote}`, track);
  }

  /**
   * Tracks every direct pair (as listed, B/Q) from the tick at which it first has a rate, with the
   * given period ids (default: all 33). Pairs already tracked keep their periods.
   */
  trackDirectPairs(periodIds?: readonly string[]): void {
    const ids = periodIds ?? EXCHANGE_RATE_PERIODS.map((p) => p.period_id);
    for (const id of ids) if (!getPeriod(id)) throw new Error(`xrate: unknown period id "${id}"`);
    this.autoTrackPeriods = [...ids];
    for (let pr = 0; pr < this.pairCount; pr++) {
      if (!Number.isNaN(this.pRate[pr]) && !this.trackedKeys.has(this.pairKey(pr))) {
        this.track(this.assets.names[this.pBase[pr]], this.assets.names[this.pQuote[pr]], ids);
      }
    }
  }

  private autoTrackPeriods: string[] | undefined;
  private forceEmit = false;

  /**
   * Makes the next tick report every pair that has a rate to {@link EngineListener.onPairRate},
   * changed or not: the full state at the start of an output window (after a warm-up).
   */
  emitAllAtNextTick(): void {
    this.forceEmit = true;
  }

  private pairKey(pr: number): string {
    return `${this.assets.names[this.pBase[pr]]}/${this.assets.names[this.pQuote[pr]]}`;
  }

  /** Tracked pairs. */
  trackedPairs(): TrackedPair[] {
    return this.tracked.map((t) => t.track);
  }

  /** Open (not yet closed) buckets of a tracked pair, per period. */
  openBuckets(track: TrackedPair): { period: PeriodRecord; bucket: OhlcBucket }[] {
    const t = this.tracked[track.id];
    const out: { period: PeriodRecord; bucket: OhlcBucket }[] = [];
    t.track.periods.forEach((p, i) => {
      const b = t.agg.openBucket(i);
      if (b) out.push({ period: p, bucket: b });
    });
    return out;
  }

  /** Emits every open bucket of every tracked pair (end of a replay). Further ticks start new buckets. */
  flush(): void {
    for (const { agg } of this.tracked) agg.flush();
  }

  // ---------------------------------------------------------------- snapshots

  /**
   * The whole state as plain JSON: restoring it and continuing gives exactly the outputs of an
   * uninterrupted run (prefix-then-rest equals the whole log).
   */
  snapshot(): EngineSnapshot {
    const nm = this.markets.size;
    const ne = this.exchanges.size;
    const np = this.pairCount;
    const num = (a: Float64Array, n: number) => Array.from(a.subarray(0, n), (v) => (Number.isNaN(v) ? null : v));
    const cfg: EngineConfig = {
      maxSpread: this.config.maxSpread,
      staleAfterSeconds: this.config.staleAfterSeconds,
      volumeWindowSeconds: this.config.volumeWindowSeconds,
      refreshEverySeconds: this.config.refreshEverySeconds,
      weighting: this.config.weighting,
      outliers: this.config.outliers,
      outlierSigmas: this.config.outlierSigmas,
      outlierMinMarkets: this.config.outlierMinMarkets,
      maxRateAgeSeconds: this.config.maxRateAgeSeconds,
      crossMethod: this.config.crossMethod,
    };
    return {
      version: SNAPSHOT_VERSION,
      config: cfg,
      t0: this.t0 ?? null,
      lastRefresh: this.lastRefresh,
      nextTick: this.nextTick ?? null,
      lastTick: this.lastTick ?? null,
      stats: this.getStats(),
      assets: [...this.assets.names],
      exchanges: {
        names: [...this.exchanges.names],
        legit: Array.from(this.exLegit.subarray(0, ne)),
        rank: Array.from(this.exRank.subarray(0, ne)),
        stagedLegit: Array.from(this.exStagedLegit.subarray(0, ne)),
        stagedRank: Array.from(this.exStagedRank.subarray(0, ne)),
        staged: [...this.exStagedList],
      },
      markets: {
        names: [...this.markets.names],
        exchange: Array.from(this.mExchange.subarray(0, nm)),
        base: Array.from(this.mBase.subarray(0, nm)),
        quote: Array.from(this.mQuote.subarray(0, nm)),
        type: this.mType.slice(0, nm),
        pair: Array.from(this.mPair.subarray(0, nm)),
        quote_state: [num(this.mBid, nm), num(this.mAsk, nm), num(this.mBidSize, nm), num(this.mAskSize, nm), num(this.mTq, nm)],
        quote_text: this.mText.slice(0, nm).map((t) => (t ? [...t] : null)),
        staged: [...this.stagedList],
        staged_quotes: this.stagedList.map((m) => structuredClone(this.sQuote[m]!)),
        eligible: Array.from(this.mEligible.subarray(0, nm)),
        why_not: Array.from(this.mWhyNot.subarray(0, nm)),
        volume: num(this.mVolume, nm) as number[],
        discarded_at: num(this.mDiscardedAt, nm),
      },
      volume: this.volume.toJSON(),
      pairs: {
        base: Array.from(this.pBase.subarray(0, np)),
        quote: Array.from(this.pQuote.subarray(0, np)),
        markets: this.pairMarkets.map((l) => [...l]),
        rate: num(this.pRate, np),
        time: num(this.pTime, np),
        rank: num(this.pRank, np),
        used: Array.from(this.pUsed.subarray(0, np)),
        volume: Array.from(this.pVolume.subarray(0, np)),
        fresh: Array.from(this.pFresh.subarray(0, np)),
      },
      tracked: this.tracked.map(({ track, agg }) => ({
        base: track.base,
        quote: track.quote,
        periods: track.periods.map((p) => p.period_id),
        ohlc: agg.toJSON(),
      })),
      autoTrack: this.autoTrackPeriods ? [...this.autoTrackPeriods] : null,
      forceEmit: this.forceEmit,
    };
  }

  /** Rebuilds an engine from {@link snapshot} output. @throws `xrate:` error on a malformed snapshot. */
  static restore(snap: EngineSnapshot, listener: EngineListener = {}): Engine {
    if (!snap || snap.version !== SNAPSHOT_VERSION) {
      throw new Error(`xrate: unsupported engine snapshot version ${JSON.stringify(snap?.version)} (expected ${SNAPSHOT_VERSION})`);
    }
    const e = new Engine(snap.config, listener);
    const f = (a: (number | null)[]) => Float64Array.from(a, (v) => (v === null ? NaN : v));
    e.t0 = snap.t0 ?? undefined;
    e.lastRefresh = snap.lastRefresh;
    e.nextTick = snap.nextTick ?? undefined;
    e.lastTick = snap.lastTick ?? undefined;
    Object.assign(e.stats, structuredClone(snap.stats));
    for (const a of snap.assets) e.assets.intern(a);
    for (const x of snap.exchanges.names) e.ensureExchange(x);
    const ne = snap.exchanges.names.length;
    for (let x = 0; x < ne; x++) {
      e.exLegit[x] = snap.exchanges.legit[x];
      e.exRank[x] = snap.exchanges.rank[x];
      e.exStagedLegit[x] = snap.exchanges.stagedLegit[x];
      e.exStagedRank[x] = snap.exchanges.stagedRank[x];
    }
    for (const x of snap.exchanges.staged) {
      e.exStaged[x] = 1;
      e.exStagedList.push(x);
    }
    const np = snap.pairs.base.length;
    for (let pr = 0; pr < np; pr++) e.ensurePair(snap.pairs.base[pr], snap.pairs.quote[pr]);
    const M = snap.markets;
    const nm = M.names.length;
    for (let m = 0; m < nm; m++) {
      const b = M.base[m];
      const q = M.quote[m];
      e.defineMarket(M.names[m], e.exchanges.names[M.exchange[m]], M.type[m] as SymbolType, b >= 0 ? e.assets.names[b] : undefined, q >= 0 ? e.assets.names[q] : undefined);
    }
    for (let pr = 0; pr < np; pr++) e.pairMarkets[pr] = [...snap.pairs.markets[pr]];
    for (let m = 0; m < nm; m++) e.mPair[m] = M.pair[m];
    const [bid, ask, bs, as, tq] = M.quote_state.map(f);
    e.mBid.set(bid);
    e.mAsk.set(ask);
    e.mBidSize.set(bs);
    e.mAskSize.set(as);
    e.mTq.set(tq);
    for (let m = 0; m < nm; m++) {
      const txt = M.quote_text[m];
      e.mText[m] = txt ? [...txt] : undefined;
      e.mEligible[m] = M.eligible[m];
      e.mWhyNot[m] = M.why_not[m];
    }
    e.mVolume.set(f(M.volume));
    e.mDiscardedAt.set(f(M.discarded_at));
    M.staged.forEach((m, i) => {
      e.mStaged[m] = 1;
      e.stagedList.push(m);
      e.sQuote[m] = M.staged_quotes[i];
    });
    (e as unknown as { volume: VolumeWindow }).volume = VolumeWindow.fromJSON(snap.volume);
    e.volume.ensure(nm);
    const P = snap.pairs;
    e.pRate.set(f(P.rate));
    e.pTime.set(f(P.time));
    e.pRank.set(f(P.rank));
    e.pUsed.set(P.used);
    e.pVolume.set(P.volume);
    e.pFresh.set(P.fresh);
    e.topologyVersion = 1;
    e.tickCounter = 1;
    e.allDirty = true;
    e.graph.sync(e.view(), e.assets.size, e.topologyVersion);
    for (const t of snap.tracked) {
      const periods = t.periods.map((id) => {
        const p = getPeriod(id);
        if (!p) throw new Error(`xrate: snapshot tracks unknown period "${id}"`);
        return p;
      });
      const track: TrackedPair = Object.freeze({ id: e.tracked.length, base: t.base, quote: t.quote, periods: Object.freeze(periods) });
      e.addTrack(track, t.ohlc);
    }
    e.autoTrackPeriods = snap.autoTrack ? [...snap.autoTrack] : undefined;
    e.forceEmit = snap.forceEmit === true;
    return e;
  }
}

/**
 * Creates an engine; the config is validated at once (throws `xrate:` errors naming the field).
 *
 * @example
 * ```ts
 * const engine = createEngine({ outliers: 'mad' }, { onPairRate: (c) => console.log(c) });
 * ```
 */
export function createEngine(config: Partial<EngineConfig> = {}, listener: EngineListener = {}): Engine {
  return new Engine(config, listener);
}

/** Restores an engine from a snapshot (see {@link Engine.snapshot}). */
export function restoreEngine(snapshot: EngineSnapshot, listener: EngineListener = {}): Engine {
  return Engine.restore(snapshot, listener);
}
