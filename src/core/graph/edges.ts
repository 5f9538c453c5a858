/**
 * Edge choice for the current tick (rule 12): when both B/Q and Q/B have a rate, the edge uses the
 * one with the higher rank, then the one that used more markets, then the one whose base sorts
 * first. Per edge and per CSR slot, typed arrays hold the chosen pair's rank, rate in each
 * direction, time and freshness; only the edges of pairs that changed are re-derived.
 *
 * @module
 */
import type { Topology } from './topology.js';
import type { PairView } from './types.js';

/** Smallest length of the pending-pair flags when they first grow. */
const MIN_PENDING_FLAGS = 64;

/** Per-edge and per-slot data of one {@link Topology} for the current tick. */
export class EdgeData {
  /** Rank of the chosen pair, -Infinity when neither pair has a rate. */
  rank = new Float64Array(0);
  /** Chosen pair id, -1 when none. */
  choice = new Int32Array(0);
  /**
   * Per CSR slot (u's k-th neighbour): rank, rate u -> neighbour, time, freshness of the edge's
   * chosen pair (an edge's two slots, `slotOfU` and `slotOfV`, hold its rate in each direction;
   * with no pair chosen, rank -Infinity and the rest as last chosen).
   */
  slotRank = new Float64Array(0);
  slotRate = new Float64Array(0);
  slotTime = new Float64Array(0);
  slotFresh = new Uint8Array(0);
  /**
   * Per edge: a stamp set anew whenever the edge is re-derived (its pair's data may have changed),
   * from a count that runs on across topologies: an edge whose stamp is the one seen before has the
   * same rate, time, rank and freshness.
   */
  changeStamp = new Float64Array(0);
  private changes = 0;

  /** Edges derived so far, across topologies: the same count as before means no edge changed since. */
  get changeCount(): number {
    return this.changes;
  }
  /** The distinct edge ranks, highest first (the levels of the max-min rank search). */
  levels: number[] = [];
  /** Changes whenever an edge's rank may have changed (what the searches' choices depend on). */
  rankEpoch = 0;
  /** Tick stamp the data was derived for (-1: never). */
  private stamp = -1;
  /** Pairs changed since the last refresh: the first `pendingCount` (the array keeps its room). */
  private readonly pending: number[] = [];
  private pendingCount = 0;
  private pendingFlag = new Uint8Array(0);
  private fullRefresh = true;

  /** Resets for a new topology: every edge is re-derived at the next {@link refresh}. */
  reset(topo: Topology): void {
    const E = topo.edgeCount;
    this.stamp = -1;
    this.fullRefresh = true;
    this.pendingClear();
    this.rank = new Float64Array(E);
    this.choice = new Int32Array(E);
    this.slotRank = new Float64Array(2 * E);
    this.slotRate = new Float64Array(2 * E);
    this.slotTime = new Float64Array(2 * E);
    this.slotFresh = new Uint8Array(2 * E);
    this.changeStamp = new Float64Array(E);
  }

  /** Chooses each edge's pair and rank for the current tick (once per tick stamp). */
  refresh(topo: Topology, order: Int32Array, view: PairView, tickStamp: number): void {
    if (this.stamp === tickStamp && tickStamp >= 0) return;
    this.stamp = tickStamp;
    if (this.fullRefresh) {
      this.fullRefresh = false;
      this.pendingClear();
      for (let e = 0; e < topo.edgeCount; e++) this.updateEdge(topo, order, e, view);
      this.recomputeLevels(topo.edgeCount);
      return;
    }
    // Only the edges of pairs that changed since the last refresh (see notePairChanged).
    let ranksMoved = false;
    const pairEdge = topo.pairEdge;
    for (let i = 0; i < this.pendingCount; i++) {
      const pr = this.pending[i];
      const e = pr < pairEdge.length ? pairEdge[pr] : -1;
      if (e >= 0 && this.updateEdge(topo, order, e, view)) ranksMoved = true;
    }
    this.pendingClear();
    if (ranksMoved) this.recomputeLevels(topo.edgeCount);
  }

  /** Records that pair pr changed; its edge is re-derived at the next refresh. */
  notePairChanged(pr: number): void {
    if (this.fullRefresh) return;
    if (pr >= this.pendingFlag.length) {
      const f = new Uint8Array(Math.max(pr + 1, this.pendingFlag.length * 2, MIN_PENDING_FLAGS));
      f.set(this.pendingFlag);
      this.pendingFlag = f;
    }
    if (this.pendingFlag[pr]) return;
    this.pendingFlag[pr] = 1;
    this.pending[this.pendingCount++] = pr;
  }

  private pendingClear(): void {
    // Not `length = 0`: V8 would free the array's room, to allocate it again at the next change.
    for (let i = 0; i < this.pendingCount; i++) this.pendingFlag[this.pending[i]] = 0;
    this.pendingCount = 0;
  }

  /** Chooses edge e's pair for the current data and writes its two CSR slots; true when its rank changed. */
  private updateEdge(topo: Topology, order: Int32Array, e: number, view: PairView): boolean {
    const a = topo.pairUV[e];
    const b = topo.pairVU[e];
    const aOk = a >= 0 && !Number.isNaN(view.rate[a]);
    const bOk = b >= 0 && !Number.isNaN(view.rate[b]);
    let c: number;
    if (aOk && bOk) {
      if (view.rank[a] !== view.rank[b]) c = view.rank[a] > view.rank[b] ? a : b;
      else if (view.used[a] !== view.used[b]) c = view.used[a] > view.used[b] ? a : b;
      else c = order[view.base[a]] < order[view.base[b]] ? a : b;
    } else c = aOk ? a : bOk ? b : -1;
    const oldRank = this.rank[e];
    const rank = c >= 0 ? view.rank[c] : -Infinity;
    this.changeStamp[e] = ++this.changes;
    this.choice[e] = c;
    this.rank[e] = rank;
    const ku = topo.slotOfU[e];
    const kv = topo.slotOfV[e];
    this.slotRank[ku] = this.slotRank[kv] = rank;
    if (c >= 0) {
      const r = view.rate[c];
      const forward = view.base[c] === topo.edgeU[e];
      this.slotRate[ku] = forward ? r : 1 / r;
      this.slotRate[kv] = forward ? 1 / r : r;
      this.slotTime[ku] = this.slotTime[kv] = view.time[c];
      this.slotFresh[ku] = this.slotFresh[kv] = view.fresh[c];
    }
    return oldRank !== rank;
  }

  private recomputeLevels(edgeCount: number): void {
    this.rankEpoch++;
    const levels = new Set<number>();
    for (let e = 0; e < edgeCount; e++) if (this.choice[e] >= 0) levels.add(this.rank[e]);
    this.levels = [...levels].sort((x, y) => y - x);
  }

  /** Rate over edge e leaving asset u. */
  rateFrom(topo: Topology, e: number, u: number): number {
    return this.slotRate[topo.edgeU[e] === u ? topo.slotOfU[e] : topo.slotOfV[e]];
  }

  /** Freshness (1/0) of edge e's chosen pair. */
  freshOf(topo: Topology, e: number): number {
    return this.slotFresh[topo.slotOfU[e]];
  }
}
