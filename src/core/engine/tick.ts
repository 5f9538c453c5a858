/**
 * The tick pipeline (docs/methodology.md sections 2-6). A tick T runs, in order: commit the
 * staged exchange changes and quotes (rule 4's immediate exclusions), the eligibility refresh if T
 * is T0 or a multiple of 4 h (rule 8), every pair rate that can have changed (rules 5-7, 9, 11, 1,
 * 13), the report of changed pairs in (base, quote) order, then the OHLC of tracked pairs
 * (section 5). Cross rates (rule 12) are read from the graph on demand.
 *
 * @module
 */
import { isRefreshTick } from '../eligibility.js';
import { US_PER_SECOND } from '../time.js';
import { firstTickAfter, type PairComputer } from './pairCompute.js';
import type { EngineState } from './state.js';
import type { RateQueries } from './queries.js';
import type { Tracking } from './tracking.js';
import type { OwnMetricBatch, OwnMetrics, UsdRates } from './ownMetrics.js';
import type { EngineListener } from './types.js';

/** The asset XRATE_ASSET_USD_RATE prices in. */
const USD = 'USD';

/** Computes ticks on the state, reporting to the state's listener. */
export class TickPipeline {
  /** Set by {@link recompute}: a pair gained or lost its rate (the graph topology changed). */
  private topologyChanged = false;
  /** Whether the own metrics were computed at the last computed tick. */
  private ownActive = false;
  /**
   * The graph the own metrics' USD rates were last written from (its {@link RateGraph.topologyBuilds}
   * and {@link RateGraph.edgeChanges}; -1: none since the own metrics were switched on or rewritten).
   */
  private usdBuild = -1;
  private usdChanges = -1;

  constructor(
    private readonly state: EngineState,
    private readonly computer: PairComputer,
    private readonly tracking: Tracking,
    private readonly queries: RateQueries,
  ) {}

  /**
   * Computes every tick from the next one through `upTo` (µs). A run of ticks at which nothing
   * can change is taken in one step ({@link quietThrough}, {@link skip}): the cost of a replay
   * follows its events and deadlines, not the seconds it spans.
   */
  runTicks(upTo: number): void {
    const s = this.state;
    let T = s.nextTick!;
    while (T <= upTo) {
      const last = this.quietThrough(T, upTo);
      if (last >= T) {
        this.skip(T, last);
        T = last + US_PER_SECOND;
      } else {
        this.tick(T);
        T += US_PER_SECOND;
      }
      s.nextTick = T;
    }
  }

  /**
   * The last tick of the run of quiet ticks that starts at T (at most `upTo`), or -Infinity when
   * T is not quiet. A tick is quiet when no event was accepted since the last tick (nothing is
   * staged, no pair is dirty), no full recompute or report is due, no pair's time-driven deadline
   * (staleness, rule 13 expiry) has come, and it is not an eligibility refresh (rule 8) — unless
   * that refresh cannot change anything: no event since the last one and no trade left in any
   * window (every V is 0 then and stays 0), so every market's eligibility comes out the same.
   */
  private quietThrough(T: number, upTo: number): number {
    const s = this.state;
    if (s.eventSinceTick || s.allDirty || s.forceEmit || s.tickEverySecond) return -Infinity;
    let end = Math.min(s.nextDeadline, upTo + 1); // exclusive
    if (!this.refreshesAreNoOps()) end = Math.min(end, nextRefreshAtOrAfter(T, s.config.refreshEveryUs));
    if (T >= end) return -Infinity;
    return T + Math.floor((end - 1 - T) / US_PER_SECOND) * US_PER_SECOND;
  }

  /** Whether an eligibility refresh now would give every market the eligibility and V it has. */
  private refreshesAreNoOps(): boolean {
    const s = this.state;
    return !s.eventSinceRefresh && s.markets.window.emptyFrom(s.lastRefresh);
  }

  /**
   * Takes the quiet ticks `from` through `last` (see {@link quietThrough}) as computing each of
   * them would: the counters, the refreshes that changed nothing, the OHLC of tracked pairs (their
   * rates are the same at every one of them) and the listener's `onTick` in order.
   */
  private skip(from: number, last: number): void {
    const s = this.state;
    const n = (last - from) / US_PER_SECOND + 1;
    const every = s.config.refreshEveryUs;
    const firstRefresh = nextRefreshAtOrAfter(from, every);
    if (firstRefresh <= last) {
      // Only no-op refreshes are skipped (quietThrough stops before any other).
      const k = Math.floor((last - firstRefresh) / every) + 1;
      s.stats.refreshes += k;
      s.lastRefresh = firstRefresh + (k - 1) * every;
    }
    s.lastTick = last;
    s.tickCounter += n;
    s.stats.ticks += n;
    const view = s.pairs.view();
    const onTick = s.listener.onTick;
    if (onTick === undefined) {
      this.tracking.updateRun(from, last, view);
    } else {
      // The listener sees each tick after its buckets, as when each is computed.
      for (let T = from; T <= last; T += US_PER_SECOND) {
        this.tracking.update(T, view);
        onTick(T);
      }
    }
  }

  private tick(T: number): void {
    const s = this.state;
    const onMetrics = s.listener.onOwnMetrics;
    const own = onMetrics === undefined ? undefined : s.ownMetrics;
    // Own metrics switched on: every pair is computed once, so every market's share is known.
    if (own !== undefined && !this.ownActive) {
      s.allDirty = true;
      this.usdBuild = -1;
    }
    this.ownActive = own !== undefined;
    s.exchanges.commitStaged(s.markets.pair, s.pairs.dirty);
    s.markets.commitStaged(s.pairs.dirty);
    if (isRefreshTick(T, s.t0!, s.config.refreshEveryUs)) {
      s.stats.refreshes++;
      s.lastRefresh = T;
      s.eventSinceRefresh = false;
      s.allDirty = true;
      s.markets.refreshEligibility(T, s.exchanges.legit);
      if (own !== undefined) this.volumesRefreshed(T, own);
    }
    own?.beginTick(s.markets.index.size, s.exchanges.index.size);
    if (s.forceEmit && own !== undefined) {
      own.rewriteAll();
      this.usdBuild = -1;
    }
    const onPairRate = s.listener.onPairRate;
    const report = onPairRate !== undefined || this.tracking.autoTrackPeriods !== undefined;
    const changed = this.recompute(T, report, own);
    if (changed > 0) this.report(T, changed, onPairRate);
    s.forceEmit = false;
    s.eventSinceTick = false;
    if (this.topologyChanged) s.topologyVersion++;
    s.lastTick = T;
    s.tickCounter++;
    s.stats.ticks++;
    s.computedTicks++;
    const view = s.pairs.view();
    s.graph.sync(view, s.assets.size, s.topologyVersion);
    this.tracking.update(T, view);
    if (own !== undefined && onMetrics !== undefined) this.emitOwn(T, own, onMetrics);
    s.listener.onTick?.(T);
  }

  /** Own metrics: every market's V at the refresh of tick T, exactly. */
  private volumesRefreshed(T: number, own: OwnMetrics): void {
    const M = this.state.markets;
    for (let m = 0, n = M.index.size; m < n; m++) own.refreshed(m, M.window.exactSum(m, T));
  }

  /** Own metrics: writes the series that changed at tick T. */
  private emitOwn(T: number, own: OwnMetrics, onMetrics: (batch: OwnMetricBatch) => void): void {
    const s = this.state;
    const names = {
      marketNames: s.markets.index.names,
      marketExchange: s.markets.exchange,
      exchangeNames: s.exchanges.index.names,
      assetNames: s.assets.names,
    };
    // rate(asset, USD) depends on the graph alone: with the same topology and no edge derived
    // again since they were last written, every one is what was written then (nothing to write).
    const graph = s.graph;
    const bfs = s.config.crossMethod === 'bfs';
    const changes = bfs ? graph.edgeChanges(s.pairs.view(), s.tickCounter) : -1;
    let usd: UsdRates | undefined;
    if (!bfs || changes !== this.usdChanges || graph.topologyBuilds !== this.usdBuild) {
      const toUsd = this.queries.ratesTo(USD);
      usd = toUsd === undefined ? undefined : { rate: toUsd.rate, fresh: toUsd.fresh, usd: s.assets.get(USD)! };
      this.usdChanges = changes;
      this.usdBuild = bfs ? graph.topologyBuilds : -1;
    }
    own.emit(T, names, s.exchanges.rank, s.exchanges.index.size, usd, onMetrics);
  }

  /**
   * Pass 1, in pair-id order (markets first seen together sit together in memory): recomputes the
   * pairs that can have changed and, when `report`, flags the ones to report. Returns their count.
   */
  private recompute(T: number, report: boolean, own: OwnMetrics | undefined): number {
    const s = this.state;
    const P = s.pairs;
    const graph = s.graph;
    const computer = this.computer;
    const sc = computer.scratch;
    const maxRateAgeUs = s.config.maxRateAgeUs;
    const { dirty, nextCheck, rate, time, rank, used, volume, fresh, changed: changedFlag } = P;
    // Only pairs whose inputs changed, or whose next time-driven change is due, are recomputed:
    // a pair's result depends on its markets' committed quotes, eligibility and V, its exchanges'
    // legitimacy and rank (all of which mark it dirty), and on T only through staleness and
    // expiry (nextCheck). Recomputing any other pair would give the same result.
    const forceEmit = s.forceEmit;
    const all = s.allDirty || forceEmit;
    s.allDirty = false;
    let topologyChanged = false;
    let changed = 0;
    let deadline = Infinity;
    for (let pr = 0, count = P.count; pr < count; pr++) {
      if (!all && dirty[pr] === 0 && nextCheck[pr] > T) {
        if (nextCheck[pr] < deadline) deadline = nextCheck[pr];
        continue;
      }
      dirty[pr] = 0;
      const oldRate = rate[pr];
      const oldTime = time[pr];
      const oldRank = rank[pr];
      const oldUsed = used[pr];
      const oldFresh = fresh[pr];
      const oldVolume = volume[pr];
      const res = computer.computeTick(pr, T);
      // computeTick() made the pair-major layout valid.
      if (own !== undefined) own.pairComputed(s.markets, pr, res, sc, computer.candidates, computer.slots);
      if (res) {
        rate[pr] = sc.rate;
        time[pr] = sc.time;
        rank[pr] = computer.rank;
        used[pr] = sc.used;
        volume[pr] = sc.volume;
        fresh[pr] = 1;
      } else {
        fresh[pr] = 0;
        if (!Number.isNaN(oldRate) && T - oldTime > maxRateAgeUs) {
          rate[pr] = NaN;
          time[pr] = NaN;
          rank[pr] = NaN;
          used[pr] = 0;
          volume[pr] = 0;
        }
      }
      let next = computer.candidateDeadline;
      if (!res && !Number.isNaN(rate[pr])) {
        // Rule 13: the carried rate expires at the first tick after time + maxRateAge.
        const expiry = firstTickAfter(time[pr] + maxRateAgeUs);
        if (expiry < next) next = expiry;
      }
      nextCheck[pr] = next;
      if (next < deadline) deadline = next;
      const newRate = rate[pr];
      if (Number.isNaN(oldRate) !== Number.isNaN(newRate)) topologyChanged = true;
      const edgeSame =
        Object.is(oldRate, newRate) &&
        Object.is(oldTime, time[pr]) &&
        Object.is(oldRank, rank[pr]) &&
        oldUsed === used[pr] &&
        oldFresh === fresh[pr];
      if (!edgeSame) graph.notePairChanged(pr);
      if (report && !(!(forceEmit && !Number.isNaN(newRate)) && edgeSame && oldVolume === volume[pr])) {
        changedFlag[pr] = 1;
        changed++;
      }
    }
    this.topologyChanged = topologyChanged;
    s.nextDeadline = deadline;
    return changed;
  }

  /**
   * Pass 2, in (base, quote) order: starts tracking new pairs and reports the `changed` flagged
   * pairs, so the output does not depend on which market was seen first.
   */
  private report(T: number, changed: number, onPairRate: EngineListener['onPairRate']): void {
    const s = this.state;
    const P = s.pairs;
    const names = s.assets.names;
    const order = P.sorted(names);
    for (let i = 0; i < order.length && changed > 0; i++) {
      const pr = order[i];
      if (P.changed[pr] === 0) continue;
      P.changed[pr] = 0;
      changed--;
      const rate = P.rate[pr];
      const nan = Number.isNaN(rate);
      const autoTrack = this.tracking.autoTrackPeriods;
      if (autoTrack && !nan) this.tracking.autoTrack(pr, autoTrack);
      onPairRate?.({
        tick: T,
        pair: pr,
        base: names[P.base[pr]],
        quote: names[P.quote[pr]],
        rate: nan ? null : rate,
        time: nan ? null : P.time[pr],
        rank: nan ? null : P.rank[pr],
        used: P.used[pr],
        volume: P.volume[pr],
        fresh: P.fresh[pr] === 1,
      });
    }
  }
}

/** The first eligibility refresh at or after tick T: the next multiple of the cadence (rule 8). */
function nextRefreshAtOrAfter(T: number, refreshEveryUs: number): number {
  return Math.ceil(T / refreshEveryUs) * refreshEveryUs;
}
