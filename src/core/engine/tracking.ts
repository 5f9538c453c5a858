/**
 * OHLC of tracked pairs (docs/methodology.md section 5): the tracked pairs with their
 * aggregators, auto-tracking of direct pairs, the per-tick update and the `tracked` part of the
 * snapshot.
 *
 * @module
 */
import type { PairView } from '../graph.js';
import { OhlcAggregator, type OhlcAggregatorSnapshot, type OhlcBucket } from '../ohlc.js';
import { EXCHANGE_RATE_PERIODS, getPeriod, type PeriodRecord } from '../periods.js';
import { US_PER_SECOND } from '../time.js';
import type { EngineState } from './state.js';
import type { EngineSnapshot, TrackedPair } from './types.js';
import { XrateError } from '../errors.js';

/**
 * A tracked pair with its aggregator, asset ids (-1 until the asset is known), and the state of
 * its change series (docs/methodology.md section 5): `follow` when the rate fed is the pair's own
 * rate whenever it is fresh (what its rate changes already say), else `last`, the rate fed (NaN:
 * none).
 */
interface Track {
  track: TrackedPair;
  agg: OhlcAggregator;
  b: number;
  q: number;
  last: number;
  follow: boolean;
  /** Id of the pair (base, quote), -1 until it exists. */
  pr: number;
  /** The graph's edge between b and q (-1: none) in its topology build `edgeBuild` (-1: not looked up). */
  edge: number;
  edgeBuild: number;
  /**
   * The rate fed at the last computed tick (NaN: none) and the change stamp of `edge` then (-1: not
   * to be relied on): while the stamp stays, so do the rate and the own pair's (see {@link Tracking.update}).
   */
  fed: number;
  edgeSeen: number;
  /**
   * With no edge between b and q (its own pair has no rate: it is fed a cross rate), the graph's
   * count of edges derived when `fed` was (-1: not to be relied on): while it stays in the same
   * topology, every edge does, and so does the cross rate (the own pair gets a rate only with a
   * new topology).
   */
  changesSeen: number;
}

/** Tracked pairs and their OHLC aggregators; buckets go to the state's current listener. */
export class Tracking {
  private readonly tracked: Track[] = [];
  private readonly keys = new Map<string, TrackedPair>();
  /** {@link updateRun}'s fresh pairs and their rates, kept from run to run (a quiet run allocates nothing). */
  private readonly runFresh: Track[] = [];
  private readonly runRates: number[] = [];
  /**
   * The edges' stamps and the graph's count of edges derived, as read at this tick (`edgesRead`):
   * once a tick, at the first pair that needs them, not one graph call a pair.
   */
  private stamps: Float64Array = new Float64Array(0);
  private changes = -1;
  private edgesRead = false;
  /** Periods of auto-tracked direct pairs ({@link trackDirectPairs}), undefined when off. */
  autoTrackPeriods: string[] | undefined;

  constructor(private readonly state: EngineState) {}

  /** Tracks rate(base, quote) for the given period ids (default: all 33); tracking twice returns the existing track. */
  track(base: string, quote: string, periodIds?: readonly string[]): TrackedPair {
    const existing = this.keys.get(`${base}/${quote}`);
    if (existing) return existing;
    const periods = periodIds
      ? periodIds.map((id) => {
          const p = getPeriod(id);
          if (!p) throw new XrateError('usage', `unknown period id "${id}"`, { field: 'periods' });
          return p;
        })
      : EXCHANGE_RATE_PERIODS;
    const track: TrackedPair = Object.freeze({ id: this.tracked.length, base, quote, periods: Object.freeze([...periods]) });
    this.add(track, undefined);
    return track;
  }

  private add(track: TrackedPair, snap: OhlcAggregatorSnapshot | undefined, last = Number.NaN, follow = false): void {
    const onClose = (i: number, b: OhlcBucket): void => this.state.listener.onBucket?.(track, track.periods[i], b);
    const agg = snap ? OhlcAggregator.fromJSON(snap, track.periods, onClose) : new OhlcAggregator(track.periods, onClose);
    this.tracked.push({
      track,
      agg,
      b: -1,
      q: -1,
      last,
      follow,
      pr: -1,
      edge: -1,
      edgeBuild: -1,
      fed: Number.NaN,
      edgeSeen: -1,
      changesSeen: -1,
    });
    this.keys.set(`${track.base}/${track.quote}`, track);
  }

  /** Tracks every direct pair from the tick at which it first has a rate; pairs already tracked keep their periods. */
  trackDirectPairs(periodIds?: readonly string[]): void {
    const ids = periodIds ?? EXCHANGE_RATE_PERIODS.map((p) => p.period_id);
    for (const id of ids) if (!getPeriod(id)) throw new XrateError('usage', `unknown period id "${id}"`, { field: 'periods' });
    this.autoTrackPeriods = [...ids];
    const P = this.state.pairs;
    const names = this.state.assets.names;
    for (let pr = 0; pr < P.count; pr++) {
      if (!Number.isNaN(P.rate[pr]) && !this.keys.has(P.label(pr, names))) {
        this.track(names[P.base[pr]], names[P.quote[pr]], ids);
      }
    }
  }

  /** Auto-tracking at a tick where pair pr has a rate: tracks it once (by name, so an existing track is kept). */
  autoTrack(pr: number, periodIds: readonly string[]): void {
    const P = this.state.pairs;
    if (P.tracked[pr] !== 0) return;
    const names = this.state.assets.names;
    // track() returns the existing track when the pair was tracked by name before.
    this.track(names[P.base[pr]], names[P.quote[pr]], periodIds);
    P.tracked[pr] = 1;
  }

  /** Tracked pairs. */
  list(): TrackedPair[] {
    return this.tracked.map((t) => t.track);
  }

  /** Open buckets of a tracked pair, per period. */
  openBuckets(track: TrackedPair): { period: PeriodRecord; bucket: OhlcBucket }[] {
    const t = this.tracked[track.id];
    const out: { period: PeriodRecord; bucket: OhlcBucket }[] = [];
    t.track.periods.forEach((p, i) => {
      const b = t.agg.openBucket(i);
      if (b) out.push({ period: p, bucket: b });
    });
    return out;
  }

  /** Emits every open bucket of every tracked pair. */
  flush(): void {
    for (const { agg } of this.tracked) agg.flush();
  }

  /**
   * End of tick T (after the graph is synced): feeds each tracked pair's rate to its aggregator
   * when it is fresh (identity is always 1), and reports a change of the fed rate.
   */
  update(T: number, view: PairView): void {
    this.edgesRead = false;
    for (const t of this.tracked) {
      const r = this.fedAt(t, T, view);
      if (!Number.isNaN(r)) t.agg.update(T, r);
    }
  }

  /**
   * The rate tracked pair `t` is fed at tick T (NaN: none), a change of it reported. A pair whose
   * rate is the one fed before needs neither: a direct pair whose edge was not derived again since
   * the last tick it was fed at (nor the topology rebuilt), its own pair known (its rate over the
   * edge and its own pair's fresh rate are those of then); a pair with no edge (fed a cross rate,
   * its own pair without one) when no edge was derived again since, in the same topology.
   */
  private fedAt(t: Track, T: number, view: PairView): number {
    const s = this.state;
    const graph = s.graph;
    const bfs = s.config.crossMethod === 'bfs';
    if (bfs && t.pr >= 0 && t.edgeBuild === graph.topologyBuilds) {
      this.readEdges(view);
      if (t.edge >= 0 ? this.stamps[t.edge] === t.edgeSeen : t.changesSeen >= 0 && this.changes === t.changesSeen) return t.fed;
    }
    const r = this.freshRate(t, view);
    this.changed(t, T, r);
    t.fed = r;
    t.edgeSeen = -1;
    t.changesSeen = -1;
    if (bfs && t.edgeBuild === graph.topologyBuilds) {
      this.readEdges(view);
      if (t.edge >= 0) t.edgeSeen = this.stamps[t.edge];
      else if (t.pr >= 0) t.changesSeen = this.changes;
    }
    return r;
  }

  /** Reads the edges' stamps and count of changes at this tick, once ({@link edgesRead}). */
  private readEdges(view: PairView): void {
    if (this.edgesRead) return;
    const graph = this.state.graph;
    this.stamps = graph.edgeStamps(view, this.state.tickCounter);
    this.changes = graph.edgeChanges(view, this.state.tickCounter);
    this.edgesRead = true;
  }

  /**
   * Reports a change of what is fed from tick T on: the pair's own fresh rate (follow), or the
   * rate `r` (NaN: none) when it is not that.
   */
  private changed(t: Track, T: number, r: number): void {
    if (same(r, this.ownFreshRate(t))) {
      if (t.follow) return;
      t.follow = true;
      t.last = Number.NaN;
      this.state.listener.onSeries?.(t.track, T, Number.NaN, true);
      return;
    }
    if (!t.follow && same(r, t.last)) return;
    t.follow = false;
    t.last = r;
    this.state.listener.onSeries?.(t.track, T, r, false);
  }

  /**
   * The rate of the tracked pair's own pair (same base and quote) when it is fresh, NaN when it is
   * not or has none: what its rate changes say is fed when it follows them; undefined when there is
   * no such pair.
   */
  private ownFreshRate(t: Track): number | undefined {
    const P = this.state.pairs;
    if (t.pr < 0) {
      if (t.b < 0 || t.q < 0) return undefined;
      const pr = P.find(t.b, t.q);
      if (pr === undefined) return undefined;
      t.pr = pr;
    }
    return P.fresh[t.pr] === 1 ? P.rate[t.pr] : Number.NaN;
  }

  /**
   * The ticks `from`, `from + 1 s`, ... `to` at which nothing changed (docs/methodology.md
   * section 2): each tracked pair's rate is the same at all of them. Gives exactly the buckets
   * of {@link update} at each tick, in the same order: the ticks at which some bucket closes are
   * fed one by one, pair after pair; the ticks between them, where no bucket closes, are taken by
   * each aggregator as one run.
   */
  updateRun(from: number, to: number, view: PairView): void {
    const fresh = this.runFresh;
    const rates = this.runRates;
    let n = 0;
    this.edgesRead = false;
    for (const t of this.tracked) {
      // What `update` would feed at the run's first tick (its edge's stamp unchanged: the rate fed
      // before, and no change to report); at the run's other ticks, the same.
      const r = this.fedAt(t, from, view);
      // A pair whose open buckets hold every tick of the run at the rate they last had closes
      // none in it: counted, and out of the loop below (whose order the others keep).
      if (Number.isNaN(r) || t.agg.holdRun(from, to, US_PER_SECOND, r)) continue;
      fresh[n] = t;
      rates[n++] = r;
    }
    let T = from;
    while (n > 0 && T <= to) {
      let closes = Infinity;
      for (let i = 0; i < n; i++) {
        fresh[i].agg.update(T, rates[i]);
        const end = fresh[i].agg.nextClose();
        if (end < closes) closes = end;
      }
      // The last tick before the first bucket end ahead: no bucket closes up to it.
      const quietEnd = Math.min(to, T + Math.floor((closes - 1 - T) / US_PER_SECOND) * US_PER_SECOND);
      if (quietEnd > T) for (let i = 0; i < n; i++) fresh[i].agg.updateRun(T + US_PER_SECOND, quietEnd, US_PER_SECOND, rates[i]);
      T = quietEnd + US_PER_SECOND;
    }
  }

  /** The fresh rate of a tracked pair at the last tick (1 for identity), NaN when it has none. */
  private freshRate(t: Track, view: PairView): number {
    const s = this.state;
    if (t.b < 0) t.b = s.assets.get(t.track.base) ?? -1;
    if (t.q < 0) t.q = s.assets.get(t.track.quote) ?? -1;
    if (t.b < 0 || t.q < 0) return t.track.base === t.track.quote ? 1 : NaN;
    if (t.b === t.q) return 1;
    const graph = s.graph;
    const method = s.config.crossMethod;
    if (method === 'bfs') {
      // graph.directRate, with the edge looked up once per topology.
      if (t.edgeBuild !== graph.topologyBuilds) {
        t.edge = graph.edgeOf(t.b, t.q);
        t.edgeBuild = graph.topologyBuilds;
      }
      const r = t.edge < 0 ? NaN : graph.rateOnEdge(t.edge, t.b, view, s.tickCounter);
      if (!Number.isNaN(r)) return graph.directFresh ? r : NaN;
    }
    const r = graph.cross(t.b, t.q, view, method, s.tickCounter);
    return r?.fresh ? r.rate : NaN;
  }

  /** The `tracked` part of the snapshot. */
  toJSON(): EngineSnapshot['tracked'] {
    return this.tracked.map(({ track, agg, last, follow }) => ({
      base: track.base,
      quote: track.quote,
      periods: track.periods.map((p) => p.period_id),
      ohlc: agg.toJSON(),
      last: Number.isNaN(last) ? null : last,
      follow,
    }));
  }

  /** Loads the `tracked` and `autoTrack` parts of a snapshot into this (empty) set. */
  restore(tracked: EngineSnapshot['tracked'], autoTrack: readonly string[] | null): void {
    for (const t of tracked) {
      const periods = t.periods.map((id) => {
        const p = getPeriod(id);
        if (!p) throw new XrateError('input', `snapshot tracks unknown period "${id}"`);
        return p;
      });
      const track: TrackedPair = Object.freeze({ id: this.tracked.length, base: t.base, quote: t.quote, periods: Object.freeze(periods) });
      // A snapshot written before the series state was kept reports it again at the next tick (harmless).
      this.add(track, t.ohlc, t.last ?? Number.NaN, t.follow ?? false);
    }
    this.autoTrackPeriods = autoTrack ? [...autoTrack] : undefined;
  }
}

/** Equal rates, NaN (none) equal to NaN; undefined (no own pair) equal to nothing. */
function same(a: number, b: number | undefined): boolean {
  return a === b || (b !== undefined && Number.isNaN(a) && Number.isNaN(b));
}
