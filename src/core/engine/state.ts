/**
 * The engine's state shared by its parts (apply, tick pipeline, explain, tracking, queries,
 * snapshot): the clock, the counters, the asset interner, the exchange, market and pair tables and
 * the graph of pairs.
 *
 * @module
 */
import { resolveConfig, type EngineConfig, type ResolvedConfig } from '../config.js';
import { RateGraph } from '../graph.js';
import { parseSymbolId } from '../symbols.js';
import type { Reject, SymbolType } from '../types.js';
import { VolumeWindow } from '../volumeWindow.js';
import { Interner } from './interner.js';
import { ExchangeTable } from './tables/exchanges.js';
import { MarketTable } from './tables/markets.js';
import { PairTable } from './tables/pairs.js';
import { SymbolRecords } from './symbolRecords.js';
import { OwnMetrics } from './ownMetrics.js';
import { PositionBook } from '../positions/book.js';
import type { EngineListener, EngineStats } from './types.js';

/**
 * Mutable state of one engine. Its parts read and write the fields directly; only the engine
 * facade is public.
 */
export class EngineState {
  /** The validated configuration. */
  readonly config: ResolvedConfig;
  /** Receives rate changes, ticks and OHLC buckets (replaceable). */
  listener: EngineListener;
  /** First tick T0 (first accepted event time rounded up to a whole second), once known. */
  t0: number | undefined;
  /** Time of the last eligibility refresh (rule 8). */
  lastRefresh = 0;
  /** Next tick to compute, µs. */
  nextTick: number | undefined;
  /** Last computed tick, µs. */
  lastTick: number | undefined;
  /** Counts ticks; the graph caches its per-tick edge data under this stamp. */
  tickCounter = 0;
  /** Counts changes of the set of pairs with a rate (the graph rebuilds its topology when it moves). */
  topologyVersion = 0;
  /** Recompute every pair at the next tick (refresh, restore, full-state output). */
  allDirty = true;
  /** Report every pair with a rate at the next tick, changed or not. */
  forceEmit = false;
  /**
   * An event was accepted since the last computed tick: the next tick must be computed in full.
   * With the two fields below, lets the tick pipeline skip the ticks at which nothing can change
   * (docs/methodology.md section 2). Not part of a snapshot: a restored engine starts with all three
   * at their safe values.
   */
  eventSinceTick = true;
  /** An event was accepted since the last computed eligibility refresh (rule 8). */
  eventSinceRefresh = true;
  /** Earliest time-driven deadline (`nextCheck`) of any pair after the last computed tick, µs. */
  nextDeadline = -Infinity;
  /** Ticks computed in full (the rest were skipped as quiet); not part of a snapshot. */
  computedTicks = 0;
  /** Compute every tick in full, none skipped (verification; outputs are the same, only slower). */
  tickEverySecond = false;
  /** Asset ids <-> integer ids. */
  readonly assets = new Interner();
  /** Exchanges (rules 4, 9). */
  readonly exchanges = new ExchangeTable();
  /** Markets (rules 3, 5, 7, 8). */
  readonly markets: MarketTable;
  /** Direct pairs (rules 1, 13). */
  readonly pairs = new PairTable();
  /** Graph of the pairs with a rate (rule 12). */
  readonly graph: RateGraph;
  /** Symbol records: declarations and the values derived from quotes and trades (docs/methodology.md section 10). */
  readonly symbolRecords = new SymbolRecords();
  /** xrate's own metrics: what was last written, and the values of the tick being computed. */
  readonly ownMetrics = new OwnMetrics();
  /** Open positions and exchange reachability (docs/methodology.md section 11). */
  readonly positions = new PositionBook();
  /** Counters (see {@link EngineStats}). */
  readonly stats: EngineStats = {
    events: { exchange: 0, symbol: 0, quote: 0, trade: 0, metric: 0, metricDefinition: 0 },
    rejects: {},
    quotesDiscarded: 0,
    ticks: 0,
    refreshes: 0,
  };

  /**
   * @param config - partial {@link EngineConfig}; validated here (throws XrateErrors)
   * @param listener - receives rate changes, ticks and OHLC buckets
   */
  constructor(config: Partial<EngineConfig>, listener: EngineListener) {
    this.config = resolveConfig(config);
    this.listener = listener;
    this.markets = new MarketTable(new VolumeWindow(this.config.volumeWindowUs, this.config.refreshEveryUs));
    this.graph = new RateGraph((id) => this.assets.names[id]);
  }

  /** Records a reject in the counters and returns it. */
  countReject(r: Reject): Reject {
    this.stats.rejects[r.reason] = (this.stats.rejects[r.reason] ?? 0) + 1;
    return r;
  }

  /** Creates or updates a market: its exchange, assets and type, and so its pair (rule 3). */
  defineMarket(symbolId: string, exchangeId: string, type: SymbolType, base: string | undefined, quote: string | undefined): number {
    const M = this.markets;
    const m = M.intern(symbolId);
    const ex = this.exchanges.ensure(exchangeId);
    const b = base === undefined ? -1 : this.assets.intern(base);
    const q = quote === undefined ? -1 : this.assets.intern(quote);
    const oldPair = M.pair[m];
    const newPair = type === 'SPOT' && b >= 0 && q >= 0 && b !== q ? this.pairs.ensure(b, q) : -1;
    const oldEx = M.exchange[m];
    if (oldEx !== ex) {
      if (oldEx >= 0) {
        const l = this.exchanges.markets[oldEx];
        l.splice(l.indexOf(m), 1);
        this.ownMetrics.noteMarketMoved();
      }
      this.exchanges.markets[ex].push(m);
    }
    // The pair-major layout copies exchange, eligibility and pair membership: rebuilt at the next tick.
    M.invalidateLayout();
    M.exchange[m] = ex;
    M.base[m] = b;
    M.quote[m] = q;
    M.type[m] = type;
    if (oldPair !== newPair) {
      const pairMarkets = this.pairs.markets;
      if (oldPair >= 0) {
        const list = pairMarkets[oldPair];
        list.splice(list.indexOf(m), 1);
      }
      if (newPair >= 0) {
        // Keep each pair's markets sorted by symbol id: the float sums of rules 1 and 11 then
        // run in the same order whatever order the markets were first seen in.
        const list = pairMarkets[newPair];
        const names = M.index.names;
        let at = list.length;
        while (at > 0 && names[list[at - 1]] > symbolId) at--;
        list.splice(at, 0, m);
      }
      M.pair[m] = newPair;
      // A market that changes pair must qualify again at the next refresh.
      M.eligible[m] = 0;
      if (oldPair >= 0) this.pairs.dirty[oldPair] = 1;
      if (newPair >= 0) this.pairs.dirty[newPair] = 1;
    }
    return m;
  }

  /** Whether a market is known by this id or can be defined from it (its SPOT or other pattern); defines nothing. */
  canKnowMarket(symbolId: string): boolean {
    return this.markets.index.get(symbolId) !== undefined || parseSymbolId(symbolId) !== undefined;
  }

  /** The market of `symbolId`, defining it from the id's pattern when unknown; undefined when the id matches none. */
  marketFor(symbolId: string): number | undefined {
    const m = this.markets.index.get(symbolId);
    if (m !== undefined) return m;
    const info = parseSymbolId(symbolId);
    if (!info) return undefined;
    return this.defineMarket(symbolId, info.exchangeId, info.symbolType, info.assetIdBase, info.assetIdQuote);
  }
}
