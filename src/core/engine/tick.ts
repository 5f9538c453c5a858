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
import type { Tracking } from './tracking.js';
import type { EngineListener } from './types.js';

/** Computes ticks on the state, reporting to the state's listener. */
export class TickPipeline {
  /** Set by {@link recompute}: a pair gained or lost its rate (the graph topology changed). */
  private topologyChanged = false;

  constructor(
    private readonly state: EngineState,
    private readonly computer: PairComputer,
    private readonly tracking: Tracking,
  ) {}

  /** Computes every tick from the next one through `upTo` (µs). */
  runTicks(upTo: number): void {
    const s = this.state;
    let T = s.nextTick!;
    while (T <= upTo) {
      this.tick(T);
      T += US_PER_SECOND;
      s.nextTick = T;
    }
  }

  private tick(T: number): void {
    const s = this.state;
    s.exchanges.commitStaged(s.markets.pair, s.pairs.dirty);
    s.markets.commitStaged(s.pairs.dirty);
    if (isRefreshTick(T, s.t0!, s.config.refreshEveryUs)) {
      s.stats.refreshes++;
      s.lastRefresh = T;
      s.allDirty = true;
      s.markets.refreshEligibility(T, s.exchanges.legit);
    }
    const onPairRate = s.listener.onPairRate;
    const report = onPairRate !== undefined || this.tracking.autoTrackPeriods !== undefined;
    const changed = this.recompute(T, report);
    if (changed > 0) this.report(T, changed, onPairRate);
    s.forceEmit = false;
    if (this.topologyChanged) s.topologyVersion++;
    s.lastTick = T;
    s.tickCounter++;
    s.stats.ticks++;
    const view = s.pairs.view();
    s.graph.sync(view, s.assets.size, s.topologyVersion);
    this.tracking.update(T, view);
    s.listener.onTick?.(T);
  }

  /**
   * Pass 1, in pair-id order (markets first seen together sit together in memory): recomputes the
   * pairs that can have changed and, when `report`, flags the ones to report. Returns their count.
   */
  private recompute(T: number, report: boolean): number {
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
    for (let pr = 0, count = P.count; pr < count; pr++) {
      if (!all && dirty[pr] === 0 && nextCheck[pr] > T) continue;
      dirty[pr] = 0;
      const oldRate = rate[pr];
      const oldTime = time[pr];
      const oldRank = rank[pr];
      const oldUsed = used[pr];
      const oldFresh = fresh[pr];
      const oldVolume = volume[pr];
      const res = computer.compute(pr, T, undefined);
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
