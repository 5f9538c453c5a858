/**
 * Rule 12, cross rates over the graph of assets.
 *
 * Vertices are assets; every pair B/Q with a rate (fresh or carried) is an edge usable both ways
 * (B->Q at r, Q->B at 1/r) carrying the pair's rank and time. When both B/Q and Q/B have a rate the
 * edge uses the one with the higher rank, then the one that used more markets, then the one whose
 * base sorts first. rate(X, X) = 1. Otherwise breadth-first search from X: fewest hops wins; among
 * those, the path whose lowest edge rank is highest; then the lexicographically smallest sequence of
 * asset ids. The rate is the product of the edge rates, its time the oldest edge time on the path.
 *
 * The graph's model is a graphology `UndirectedGraph` built in sorted order (assets by id, edges by
 * their end points), used for inspection and export. Searches run on a CSR snapshot in typed arrays
 * rebuilt only when the topology (the set of pairs with a rate) changes:
 *
 * - the highest possible lowest-rank is found by BFS restricted to edges of rank >= rho, for the
 *   distinct edge ranks rho in decreasing order: the first rho whose restricted distance equals the
 *   unrestricted one is the answer;
 * - in that restricted graph a BFS that visits neighbours in ascending asset-id order discovers
 *   every vertex first along its lexicographically smallest shortest path (a layer's vertices are
 *   dequeued in the order of their paths), so the parent pointers give the tie-break directly.
 *
 * The `layered` option prices each asset at BFS depth k as the volume-weighted mean, over its edges
 * to depth k - 1, of (price of the neighbour) x (edge rate), as in published VWAP index methods.
 *
 * @module
 */
import { UndirectedGraph } from 'graphology';
import type { CrossMethod } from './config.js';

/** Read-only columns of the engine's pair table, indexed by pair id. `rate` is NaN when none. */
export interface PairView {
  readonly count: number;
  readonly base: Int32Array;
  readonly quote: Int32Array;
  readonly rate: Float64Array;
  readonly time: Float64Array;
  readonly rank: Float64Array;
  readonly used: Int32Array;
  readonly volume: Float64Array;
  readonly fresh: Uint8Array;
}

/** One hop of a cross rate. */
export interface CrossLeg {
  /** Pair id whose rate the hop uses. */
  readonly pair: number;
  readonly from: number;
  readonly to: number;
  /** True when the hop goes quote -> base (rate = 1 / pair rate). */
  readonly inverted: boolean;
  readonly rate: number;
  readonly time: number;
  readonly rank: number;
  readonly fresh: boolean;
}

/** A rate between two assets found on the graph. */
export interface CrossResult {
  readonly rate: number;
  /** Oldest edge time on the path (for identity: NaN, the caller uses the tick). */
  readonly time: number;
  /** Every leg fresh at the last tick (OHLC counts only fresh rates). */
  readonly fresh: boolean;
  /** Asset ids along the path, source first. */
  readonly path: readonly number[];
  readonly legs: readonly CrossLeg[];
  /** Lowest edge rank on the path. */
  readonly minRank: number;
  readonly method: CrossMethod;
}

/**
 * Graph of assets over a {@link PairView}. Call {@link sync} after each tick; queries then read
 * the pair columns directly.
 *
 * @example
 * ```ts
 * const g = new RateGraph((id) => names[id]);
 * g.sync(view, names.length, topologyVersion);
 * g.cross(btc, eur, view, 'bfs')?.rate;
 * ```
 */
export class RateGraph {
  private version = -1;
  private assetCount = 0;
  /** Edge e joins edgeU[e] < edgeV[e] (by id order); pairUV/pairVU are pair ids or -1. */
  private edgeU = new Int32Array(0);
  private edgeV = new Int32Array(0);
  private pairUV = new Int32Array(0);
  private pairVU = new Int32Array(0);
  private edgeCount = 0;
  private offsets = new Int32Array(1);
  private nbr = new Int32Array(0);
  private adjEdge = new Int32Array(0);
  // per-query scratch
  private edgeRank = new Float64Array(0);
  private edgeChoice = new Int32Array(0);
  /** Per edge, for the current tick: rate u->v and v->u, time, freshness of the chosen pair. */
  private edgeRateUV = new Float64Array(0);
  private edgeRateVU = new Float64Array(0);
  private edgeTime = new Float64Array(0);
  private edgeFresh = new Uint8Array(0);
  /** Per CSR slot (u's k-th neighbour), for the current tick: rank, rate u->nbr, time, freshness. */
  private slotRank = new Float64Array(0);
  private slotRate = new Float64Array(0);
  private slotTime = new Float64Array(0);
  private slotFresh = new Uint8Array(0);
  /** CSR slot of edge e in the adjacency of edgeU[e] (slotOfU) and of edgeV[e] (slotOfV). */
  private slotOfU = new Int32Array(0);
  private slotOfV = new Int32Array(0);
  /** Edge serving each pair id (-1: none). */
  private pairEdge = new Int32Array(0);
  /** (u * assetCount + v) -> edge, for both orders. */
  private direct = new Map<number, number>();
  // all-targets scratch
  private treeRate = new Float64Array(0);
  private treeTime = new Float64Array(0);
  private treeFresh = new Uint8Array(0);
  private treeMinRank = new Float64Array(0);
  private resolved = new Uint8Array(0);
  private stamp = -1;
  private dist0 = new Int32Array(0);
  private dist = new Int32Array(0);
  private parent = new Int32Array(0);
  private queue = new Int32Array(0);
  private levels: number[] = [];
  private graphModel: UndirectedGraph | undefined;

  constructor(private readonly assetName: (id: number) => string) {}

  /** Number of undirected edges in the current topology. */
  get edges(): number {
    return this.edgeCount;
  }

  /**
   * Rebuilds the CSR snapshot when `version` (the engine's topology counter) changed; otherwise
   * only marks edge data stale so the next query re-reads ranks and rates.
   */
  sync(view: PairView, assetCount: number, version: number): void {
    if (version === this.version && assetCount === this.assetCount) return;
    this.version = version;
    this.assetCount = assetCount;
    this.graphModel = undefined;
    this.stamp = -1;
    // Sorted edge list: key = u * assetCount + v with u, v compared by asset id string.
    const order = this.nameOrder(assetCount);
    const keyToEdge = new Map<number, number>();
    const us: number[] = [];
    const vs: number[] = [];
    const uv: number[] = [];
    const vu: number[] = [];
    for (let pr = 0; pr < view.count; pr++) {
      if (Number.isNaN(view.rate[pr])) continue;
      const b = view.base[pr];
      const q = view.quote[pr];
      const forward = order[b] < order[q];
      const u = forward ? b : q;
      const v = forward ? q : b;
      const key = u * assetCount + v;
      let e = keyToEdge.get(key);
      if (e === undefined) {
        e = us.length;
        keyToEdge.set(key, e);
        us.push(u);
        vs.push(v);
        uv.push(-1);
        vu.push(-1);
      }
      if (forward) uv[e] = pr;
      else vu[e] = pr;
    }
    const E = us.length;
    this.edgeCount = E;
    this.edgeU = Int32Array.from(us);
    this.edgeV = Int32Array.from(vs);
    this.pairUV = Int32Array.from(uv);
    this.pairVU = Int32Array.from(vu);
    // CSR with neighbours in ascending asset-id order.
    const deg = new Int32Array(assetCount + 1);
    for (let e = 0; e < E; e++) {
      deg[us[e] + 1]++;
      deg[vs[e] + 1]++;
    }
    for (let i = 0; i < assetCount; i++) deg[i + 1] += deg[i];
    const offsets = deg;
    const fill = offsets.slice(0, assetCount);
    const nbr = new Int32Array(2 * E);
    const adjEdge = new Int32Array(2 * E);
    for (let e = 0; e < E; e++) {
      let k = fill[us[e]]++;
      nbr[k] = vs[e];
      adjEdge[k] = e;
      k = fill[vs[e]]++;
      nbr[k] = us[e];
      adjEdge[k] = e;
    }
    for (let a = 0; a < assetCount; a++) {
      const lo = offsets[a];
      const hi = offsets[a + 1];
      if (hi - lo < 2) continue;
      const idx = Array.from({ length: hi - lo }, (_, i) => lo + i).sort((x, y) => order[nbr[x]] - order[nbr[y]]);
      const n2 = idx.map((k) => nbr[k]);
      const e2 = idx.map((k) => adjEdge[k]);
      nbr.set(n2, lo);
      adjEdge.set(e2, lo);
    }
    this.offsets = offsets;
    this.nbr = nbr;
    this.adjEdge = adjEdge;
    // Where each edge sits in its two adjacency lists, and which edge serves each pair.
    this.slotOfU = new Int32Array(E);
    this.slotOfV = new Int32Array(E);
    for (let a = 0; a < assetCount; a++) {
      for (let k = offsets[a]; k < offsets[a + 1]; k++) {
        const e = adjEdge[k];
        if (us[e] === a) this.slotOfU[e] = k;
        else this.slotOfV[e] = k;
      }
    }
    this.pairEdge = new Int32Array(view.count).fill(-1);
    for (let e = 0; e < E; e++) {
      if (uv[e] >= 0) this.pairEdge[uv[e]] = e;
      if (vu[e] >= 0) this.pairEdge[vu[e]] = e;
    }
    this.fullRefresh = true;
    this.pendingClear();
    this.edgeRank = new Float64Array(E);
    this.edgeChoice = new Int32Array(E);
    this.edgeRateUV = new Float64Array(E);
    this.edgeRateVU = new Float64Array(E);
    this.edgeTime = new Float64Array(E);
    this.edgeFresh = new Uint8Array(E);
    this.slotRank = new Float64Array(2 * E);
    this.slotRate = new Float64Array(2 * E);
    this.slotTime = new Float64Array(2 * E);
    this.slotFresh = new Uint8Array(2 * E);
    this.direct = new Map();
    for (let e = 0; e < E; e++) {
      this.direct.set(us[e] * assetCount + vs[e], e);
      this.direct.set(vs[e] * assetCount + us[e], e);
    }
    if (this.dist.length < assetCount) {
      this.dist0 = new Int32Array(assetCount);
      this.dist = new Int32Array(assetCount);
      this.parent = new Int32Array(assetCount);
      this.queue = new Int32Array(assetCount);
      this.treeRate = new Float64Array(assetCount);
      this.treeTime = new Float64Array(assetCount);
      this.treeFresh = new Uint8Array(assetCount);
      this.treeMinRank = new Float64Array(assetCount);
      this.resolved = new Uint8Array(assetCount);
    }
  }

  private nameOrderCache: Int32Array = new Int32Array(0);
  private nameOrder(assetCount: number): Int32Array {
    if (this.nameOrderCache.length === assetCount) return this.nameOrderCache;
    const ids = Array.from({ length: assetCount }, (_, i) => i);
    const names = ids.map((i) => this.assetName(i));
    ids.sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : 0));
    const order = new Int32Array(assetCount);
    ids.forEach((id, pos) => (order[id] = pos));
    this.nameOrderCache = order;
    return order;
  }

  /** Chooses each edge's pair and rank for the current tick (once per tick stamp). */
  private refreshEdges(view: PairView, tickStamp: number): void {
    if (this.stamp === tickStamp && tickStamp >= 0) return;
    this.stamp = tickStamp;
    if (this.fullRefresh) {
      this.fullRefresh = false;
      this.pendingClear();
      for (let e = 0; e < this.edgeCount; e++) this.updateEdge(e, view);
      this.recomputeLevels();
      return;
    }
    // Only the edges of pairs that changed since the last refresh (see notePairChanged).
    let ranksMoved = false;
    for (const pr of this.pending) {
      const e = pr < this.pairEdge.length ? this.pairEdge[pr] : -1;
      if (e >= 0 && this.updateEdge(e, view)) ranksMoved = true;
    }
    this.pendingClear();
    if (ranksMoved) this.recomputeLevels();
  }

  /**
   * Tells the graph that a pair's rate, time, rank, markets used or freshness changed; the next
   * query re-derives that pair's edge only. (The engine calls it; a topology change resyncs all.)
   */
  notePairChanged(pr: number): void {
    if (this.fullRefresh) return;
    if (pr >= this.pendingFlag.length) {
      const f = new Uint8Array(Math.max(pr + 1, this.pendingFlag.length * 2, 64));
      f.set(this.pendingFlag);
      this.pendingFlag = f;
    }
    if (this.pendingFlag[pr]) return;
    this.pendingFlag[pr] = 1;
    this.pending.push(pr);
  }

  private pending: number[] = [];
  private pendingFlag = new Uint8Array(0);
  private fullRefresh = true;

  private pendingClear(): void {
    for (const pr of this.pending) this.pendingFlag[pr] = 0;
    this.pending.length = 0;
  }

  /** Chooses edge e's pair for the current data and writes its two CSR slots; true when its rank changed. */
  private updateEdge(e: number, view: PairView): boolean {
    const order = this.nameOrderCache;
    const a = this.pairUV[e];
    const b = this.pairVU[e];
    const aOk = a >= 0 && !Number.isNaN(view.rate[a]);
    const bOk = b >= 0 && !Number.isNaN(view.rate[b]);
    let c: number;
    if (aOk && bOk) {
      if (view.rank[a] !== view.rank[b]) c = view.rank[a] > view.rank[b] ? a : b;
      else if (view.used[a] !== view.used[b]) c = view.used[a] > view.used[b] ? a : b;
      else c = order[view.base[a]] < order[view.base[b]] ? a : b;
    } else c = aOk ? a : bOk ? b : -1;
    const oldRank = this.edgeRank[e];
    this.edgeChoice[e] = c;
    this.edgeRank[e] = c >= 0 ? view.rank[c] : -Infinity;
    if (c >= 0) {
      const r = view.rate[c];
      const forward = view.base[c] === this.edgeU[e];
      this.edgeRateUV[e] = forward ? r : 1 / r;
      this.edgeRateVU[e] = forward ? 1 / r : r;
      this.edgeTime[e] = view.time[c];
      this.edgeFresh[e] = view.fresh[c];
    }
    const ku = this.slotOfU[e];
    const kv = this.slotOfV[e];
    this.slotRank[ku] = this.slotRank[kv] = this.edgeRank[e];
    this.slotRate[ku] = this.edgeRateUV[e];
    this.slotRate[kv] = this.edgeRateVU[e];
    this.slotTime[ku] = this.slotTime[kv] = this.edgeTime[e];
    this.slotFresh[ku] = this.slotFresh[kv] = this.edgeFresh[e];
    return oldRank !== this.edgeRank[e];
  }

  /** The distinct edge ranks, highest first (the levels of the max-min rank search). */
  private recomputeLevels(): void {
    const levels = new Set<number>();
    for (let e = 0; e < this.edgeCount; e++) if (this.edgeChoice[e] >= 0) levels.add(this.edgeRank[e]);
    this.levels = [...levels].sort((x, y) => y - x);
  }

  /** BFS from `src` over edges of rank >= threshold, neighbours in id order; fills dist and parent (CSR slot). */
  private bfs(src: number, threshold: number, dist: Int32Array, stopAt: number, stopDepth: number): void {
    dist.fill(-1, 0, this.assetCount);
    const q = this.queue;
    let head = 0;
    let tail = 0;
    dist[src] = 0;
    q[tail++] = src;
    while (head < tail) {
      const u = q[head++];
      const du = dist[u];
      if (du >= stopDepth) break;
      for (let k = this.offsets[u], end = this.offsets[u + 1]; k < end; k++) {
        const e = this.adjEdge[k];
        if (this.edgeRank[e] < threshold) continue;
        const v = this.nbr[k];
        if (dist[v] >= 0) continue;
        dist[v] = du + 1;
        this.parent[v] = k;
        if (v === stopAt) return;
        q[tail++] = v;
      }
    }
  }

  private otherEnd(e: number, a: number): number {
    return this.edgeU[e] === a ? this.edgeV[e] : this.edgeU[e];
  }

  /**
   * Rate from asset `from` to asset `to` (ids), or undefined when no path exists.
   * `tickStamp` identifies the tick whose pair data `view` holds (edge choices are cached per stamp).
   */
  cross(from: number, to: number, view: PairView, method: CrossMethod, tickStamp = -1): CrossResult | undefined {
    if (from === to) return { rate: 1, time: NaN, fresh: true, path: [from], legs: [], minRank: Infinity, method };
    if (from >= this.assetCount || to >= this.assetCount || from < 0 || to < 0) return undefined;
    this.refreshEdges(view, tickStamp);
    if (method === 'layered') return this.layered(from, to, view);
    // A direct edge is the only 1-hop path: no search needed.
    const e = this.direct.get(from * this.assetCount + to);
    if (e !== undefined) {
      const leg = this.legOf(view, e, from, to);
      return { rate: leg.rate, time: leg.time, fresh: leg.fresh, path: [from, to], legs: [leg], minRank: leg.rank, method: 'bfs' };
    }
    this.bfs(from, -Infinity, this.dist0, to, Infinity);
    const d = this.dist0[to];
    if (d < 0) return undefined;
    for (const rho of this.levels) {
      this.bfs(from, rho, this.dist, to, d);
      if (this.dist[to] === d) return this.walk(from, to, view, 'bfs');
    }
    return undefined; // unreachable: the lowest level equals the unrestricted search
  }

  /** Freshness of the last {@link directRate} answer. */
  directFresh = false;

  /**
   * Rate over the direct edge between two assets (either direction), NaN when there is none;
   * no allocation (the OHLC of tracked pairs asks this every tick). Sets {@link directFresh}.
   */
  directRate(from: number, to: number, view: PairView, tickStamp: number): number {
    if (from >= this.assetCount || to >= this.assetCount) return NaN;
    const e = this.direct.get(from * this.assetCount + to);
    if (e === undefined) return NaN;
    this.refreshEdges(view, tickStamp);
    this.directFresh = this.edgeFresh[e] === 1;
    return this.edgeU[e] === from ? this.edgeRateUV[e] : this.edgeRateVU[e];
  }

  /**
   * Rate (and time, freshness) of `from` against every asset at once, into `out` (indexed by
   * asset id; NaN where there is no path). Same answers as {@link cross} for each target, in
   * O(levels x (V + E)): one restricted lexicographic BFS per distinct edge rank, resolving each
   * target at the highest rank whose restricted distance equals the unrestricted one, with
   * rates, times and freshness carried down each BFS tree.
   */
  crossAll(
    from: number,
    view: PairView,
    method: CrossMethod,
    tickStamp: number,
    out: { rate: Float64Array; time: Float64Array; fresh: Uint8Array },
  ): void {
    const n = this.assetCount;
    out.rate.fill(NaN, 0, n);
    if (from < 0 || from >= n) return;
    this.refreshEdges(view, tickStamp);
    if (method === 'layered') {
      this.layeredAll(from, view, out);
      return;
    }
    const levels = this.levels;
    if (levels.length === 0) {
      out.rate[from] = 1;
      out.time[from] = NaN;
      out.fresh[from] = 1;
      return;
    }
    // The lowest level admits every edge: its search is the unrestricted one. It gives dist0 and
    // a provisional answer for every reachable asset; each higher level (highest first) then
    // takes over the assets it reaches at the same distance, which it cannot have done worse.
    const dist0 = this.dist0;
    const resolved = this.resolved;
    resolved.fill(0, 0, n);
    this.lexTree(from, levels[levels.length - 1], dist0, out, undefined, resolved);
    let remaining = 0;
    for (let a = 0; a < n; a++) if (dist0[a] > 0) remaining++;
    for (let li = 0; li < levels.length - 1 && remaining > 0; li++) {
      // No asset still open lies deeper than maxDepth: the search can stop there.
      let maxDepth = 0;
      for (let a = 0; a < n; a++) if (resolved[a] === 0 && dist0[a] > maxDepth) maxDepth = dist0[a];
      remaining -= this.lexTree(from, levels[li], this.dist, out, dist0, resolved, maxDepth);
    }
    out.rate[from] = 1;
    out.time[from] = NaN;
    out.fresh[from] = 1;
  }

  /**
   * Lexicographic BFS from `from` over the edges of rank >= rho, carrying rate, oldest time and
   * freshness down the tree (per-slot arrays, filled by refreshEdges). With `dist0`, writes to
   * `out` only the assets not yet `resolved` that it reaches at their unrestricted distance, marks
   * them, and returns how many; without, writes every asset it reaches.
   */
  private lexTree(
    from: number,
    rho: number,
    dist: Int32Array,
    out: { rate: Float64Array; time: Float64Array; fresh: Uint8Array },
    dist0: Int32Array | undefined,
    resolved: Uint8Array,
    maxDepth = Infinity,
  ): number {
    const n = this.assetCount;
    const tr = this.treeRate;
    const tt = this.treeTime;
    const tf = this.treeFresh;
    const q = this.queue;
    const offsets = this.offsets;
    const nbr = this.nbr;
    const slotRank = this.slotRank;
    const slotRate = this.slotRate;
    const slotTime = this.slotTime;
    const slotFresh = this.slotFresh;
    dist.fill(-1, 0, n);
    let head = 0;
    let tail = 0;
    let taken = 0;
    dist[from] = 0;
    tr[from] = 1;
    tt[from] = Infinity;
    tf[from] = 1;
    q[tail++] = from;
    while (head < tail) {
      const u = q[head++];
      const du = dist[u] + 1;
      if (du > maxDepth) break;
      const ru = tr[u];
      const tu = tt[u];
      const fu = tf[u];
      for (let k = offsets[u], end = offsets[u + 1]; k < end; k++) {
        if (slotRank[k] < rho) continue;
        const v = nbr[k];
        if (dist[v] >= 0) continue;
        dist[v] = du;
        const rv = ru * slotRate[k];
        const et = slotTime[k];
        const tv = et < tu ? et : tu;
        const fv = fu & slotFresh[k];
        tr[v] = rv;
        tt[v] = tv;
        tf[v] = fv;
        q[tail++] = v;
        if (dist0 === undefined) {
          out.rate[v] = rv;
          out.time[v] = tv;
          out.fresh[v] = fv;
        } else if (resolved[v] === 0 && du === dist0[v]) {
          resolved[v] = 1;
          taken++;
          out.rate[v] = rv;
          out.time[v] = tv;
          out.fresh[v] = fv;
        }
      }
    }
    return taken;
  }

  private walk(from: number, to: number, view: PairView, method: CrossMethod): CrossResult {
    const legs: CrossLeg[] = [];
    let v = to;
    while (v !== from) {
      const k = this.parent[v];
      const e = this.adjEdge[k];
      const u = this.otherEnd(e, v);
      legs.push(this.legOf(view, e, u, v));
      v = u;
    }
    legs.reverse();
    let rate = 1;
    let time = Infinity;
    let fresh = true;
    let minRank = Infinity;
    const path = [from];
    for (const l of legs) {
      rate *= l.rate;
      if (l.time < time) time = l.time;
      fresh = fresh && l.fresh;
      if (l.rank < minRank) minRank = l.rank;
      path.push(l.to);
    }
    return { rate, time, fresh, path, legs, minRank, method };
  }

  private legOf(view: PairView, e: number, from: number, to: number): CrossLeg {
    const pr = this.edgeChoice[e];
    const inverted = view.base[pr] !== from;
    return {
      pair: pr,
      from,
      to,
      inverted,
      rate: inverted ? 1 / view.rate[pr] : view.rate[pr],
      time: view.time[pr],
      rank: view.rank[pr],
      fresh: view.fresh[pr] === 1,
    };
  }

  /**
   * Layered prices of every asset reachable from `from` (rule 12 option): the asset at BFS depth
   * k is the volume-weighted mean over its edges to depth k - 1 of (neighbour price) x (edge
   * rate); equal weights when the edges carry no volume. Time: oldest contributing edge or
   * neighbour time; fresh when every contribution is.
   */
  private layeredAll(from: number, view: PairView, out: { rate: Float64Array; time: Float64Array; fresh: Uint8Array }, stopAt = -1): CrossLeg[] {
    const n = this.assetCount;
    this.bfs(from, -Infinity, this.dist0, -1, Infinity);
    const depth = this.dist0;
    const price = out.rate;
    price.fill(NaN, 0, n);
    price[from] = 1;
    out.time[from] = Infinity;
    out.fresh[from] = 1;
    let lastLegs: CrossLeg[] = [];
    // The BFS queue holds the reachable assets in order of depth.
    let reached = 0;
    for (let a = 0; a < n; a++) if (depth[a] >= 0) reached++;
    for (let i = 1; i < reached; i++) {
      const y = this.queue[i];
      let W = 0;
      let S = 0;
      let Sx = 0;
      let count = 0;
      let t = Infinity;
      let f = 1;
      const legs: CrossLeg[] = [];
      for (let k = this.offsets[y]; k < this.offsets[y + 1]; k++) {
        const u = this.nbr[k];
        if (depth[u] !== depth[y] - 1) continue;
        const e = this.adjEdge[k];
        const r = this.edgeU[e] === u ? this.edgeRateUV[e] : this.edgeRateVU[e];
        const w = view.volume[this.edgeChoice[e]];
        const px = price[u] * r;
        W += w;
        S += w * px;
        Sx += px;
        count++;
        if (this.edgeTime[e] < t) t = this.edgeTime[e];
        if (out.time[u] < t) t = out.time[u];
        if (!this.edgeFresh[e] || !out.fresh[u]) f = 0;
        if (y === stopAt) legs.push(this.legOf(view, e, u, y));
      }
      price[y] = W > 0 ? S / W : Sx / count;
      out.time[y] = t;
      out.fresh[y] = f;
      if (y === stopAt) {
        lastLegs = legs;
        break;
      }
    }
    out.time[from] = NaN;
    return lastLegs;
  }

  private layered(from: number, to: number, view: PairView): CrossResult | undefined {
    const n = this.assetCount;
    const out = { rate: new Float64Array(n), time: new Float64Array(n), fresh: new Uint8Array(n) };
    const legs = this.layeredAll(from, view, out, to);
    if (Number.isNaN(out.rate[to])) return undefined;
    const minRank = legs.reduce((m, l) => Math.min(m, l.rank), Infinity);
    return { rate: out.rate[to], time: out.time[to], fresh: out.fresh[to] === 1, path: [from, to], legs, minRank, method: 'layered' };
  }

  /**
   * The topology as a graphology graph (built on demand, in sorted order): nodes are asset ids,
   * each edge carries the pair ids that can serve it.
   */
  model(): UndirectedGraph {
    if (this.graphModel) return this.graphModel;
    const g = new UndirectedGraph();
    const ids = Array.from({ length: this.assetCount }, (_, i) => i).filter((a) => this.offsets[a + 1] > this.offsets[a]);
    const names = ids.map((i) => this.assetName(i)).sort();
    for (const name of names) g.addNode(name);
    const edges = Array.from({ length: this.edgeCount }, (_, e) => e).map((e) => {
      const a = this.assetName(this.edgeU[e]);
      const b = this.assetName(this.edgeV[e]);
      return { e, a, b };
    });
    edges.sort((x, y) => (x.a < y.a ? -1 : x.a > y.a ? 1 : x.b < y.b ? -1 : x.b > y.b ? 1 : 0));
    for (const { e, a, b } of edges) {
      g.addUndirectedEdgeWithKey(`${a}~${b}`, a, b, { pairs: [this.pairUV[e], this.pairVU[e]].filter((p) => p >= 0) });
    }
    this.graphModel = g;
    return g;
  }
}
