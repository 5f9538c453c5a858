/**
 * Breadth-first searches of rule 12 over a {@link Topology} and its {@link EdgeData}:
 *
 * - the highest possible lowest-rank is found by BFS restricted to edges of rank >= rho, for the
 *   distinct edge ranks rho in decreasing order: the first rho whose restricted distance equals the
 *   unrestricted one is the answer;
 * - in that restricted graph a BFS that visits neighbours in ascending asset-id order discovers
 *   every vertex first along its lexicographically smallest shortest path (a layer's vertices are
 *   dequeued in the order of their paths), so the parent pointers give the tie-break directly.
 *
 * @module
 */
import type { CrossMethod } from '../config.js';
import type { EdgeData } from './edges.js';
import type { Topology } from './topology.js';
import type { CrossLeg, CrossResult, PairView, RateColumns } from './types.js';

/** Per-asset scratch of the searches, reused across queries (no allocation per query). */
export class SearchScratch {
  /** Unrestricted BFS distances (-1: unreachable). */
  dist0 = new Int32Array(0);
  /** Restricted BFS distances. */
  dist = new Int32Array(0);
  /** CSR slot through which each asset was discovered. */
  parent = new Int32Array(0);
  /** BFS queue; after a full search, the reached assets in order of depth. */
  queue = new Int32Array(0);
  /** Rate, oldest time and freshness carried down a BFS tree. */
  treeRate = new Float64Array(0);
  treeTime = new Float64Array(0);
  treeFresh = new Uint8Array(0);
  /** Assets already answered by a higher rank level (all-targets search). */
  resolved = new Uint8Array(0);
  /** Highest lowest-rank over the shortest paths from each asset to the target (all-sources search). */
  best = new Float64Array(0);

  /** Makes room for `assetCount` assets (never shrinks). */
  ensure(assetCount: number): void {
    if (this.dist.length >= assetCount) return;
    this.dist0 = new Int32Array(assetCount);
    this.dist = new Int32Array(assetCount);
    this.parent = new Int32Array(assetCount);
    this.queue = new Int32Array(assetCount);
    this.treeRate = new Float64Array(assetCount);
    this.treeTime = new Float64Array(assetCount);
    this.treeFresh = new Uint8Array(assetCount);
    this.resolved = new Uint8Array(assetCount);
    this.best = new Float64Array(assetCount);
  }
}

/**
 * BFS from `src` over edges of rank >= threshold, neighbours in id order; fills `dist` and
 * `scratch.parent` (CSR slot). Stops when `stopAt` is discovered or past depth `stopDepth`.
 */
export function bfs(
  topo: Topology,
  edges: EdgeData,
  scratch: SearchScratch,
  src: number,
  threshold: number,
  dist: Int32Array,
  stopAt: number,
  stopDepth: number,
): void {
  dist.fill(-1, 0, topo.assetCount);
  const q = scratch.queue;
  const parent = scratch.parent;
  const offsets = topo.offsets;
  const adjEdge = topo.adjEdge;
  const nbr = topo.nbr;
  const edgeRank = edges.rank;
  let head = 0;
  let tail = 0;
  dist[src] = 0;
  q[tail++] = src;
  while (head < tail) {
    const u = q[head++];
    const du = dist[u];
    if (du >= stopDepth) break;
    for (let k = offsets[u], end = offsets[u + 1]; k < end; k++) {
      const e = adjEdge[k];
      if (edgeRank[e] < threshold) continue;
      const v = nbr[k];
      if (dist[v] >= 0) continue;
      dist[v] = du + 1;
      parent[v] = k;
      if (v === stopAt) return;
      q[tail++] = v;
    }
  }
}

/** The hop from `from` to `to` over edge e, with the edge's chosen pair. */
export function legOf(edges: EdgeData, view: PairView, e: number, from: number, to: number): CrossLeg {
  const pr = edges.choice[e];
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

/** Rate from `from` to `to` over the max-min-rank, lexicographically smallest shortest path; undefined when none. */
export function crossBfs(
  topo: Topology,
  edges: EdgeData,
  scratch: SearchScratch,
  from: number,
  to: number,
  view: PairView,
): CrossResult | undefined {
  bfs(topo, edges, scratch, from, -Infinity, scratch.dist0, to, Infinity);
  const d = scratch.dist0[to];
  if (d < 0) return undefined;
  for (const rho of edges.levels) {
    bfs(topo, edges, scratch, from, rho, scratch.dist, to, d);
    if (scratch.dist[to] === d) return walk(topo, edges, scratch, from, to, view, 'bfs');
  }
  return undefined; // unreachable: the lowest level equals the unrestricted search
}

/** The path to `to` found by the last {@link bfs} (parent pointers), as a cross result. */
function walk(
  topo: Topology,
  edges: EdgeData,
  scratch: SearchScratch,
  from: number,
  to: number,
  view: PairView,
  method: CrossMethod,
): CrossResult {
  const legs: CrossLeg[] = [];
  let v = to;
  while (v !== from) {
    const k = scratch.parent[v];
    const e = topo.adjEdge[k];
    const u = topo.otherEnd(e, v);
    legs.push(legOf(edges, view, e, u, v));
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

/**
 * {@link crossBfs} from `from` to every asset at once, into `out`, in O(levels x (V + E)): one
 * restricted lexicographic BFS per distinct edge rank, resolving each target at the highest rank
 * whose restricted distance equals the unrestricted one. The searches' trees depend only on the
 * topology and the edge ranks: with `trees`, they are recorded, and while they stay valid the
 * next call only carries the current rates, times and freshness down them (same operations, same
 * order, so the same answers).
 */
export function crossAllBfs(
  topo: Topology,
  edges: EdgeData,
  scratch: SearchScratch,
  from: number,
  out: RateColumns,
  trees?: TreesFrom,
): void {
  const n = topo.assetCount;
  const levels = edges.levels;
  if (levels.length === 0) {
    out.rate[from] = 1;
    out.time[from] = NaN;
    out.fresh[from] = 1;
    return;
  }
  if (trees?.valid(topo, from, edges.rankEpoch)) {
    trees.ratesInto(edges, scratch, out);
  } else {
    trees?.begin(topo, from, edges.rankEpoch);
    // The lowest level admits every edge: its search is the unrestricted one. It gives dist0 and
    // a provisional answer for every reachable asset; each higher level (highest first) then
    // takes over the assets it reaches at the same distance, which it cannot have done worse.
    const dist0 = scratch.dist0;
    const resolved = scratch.resolved;
    resolved.fill(0, 0, n);
    lexTree(topo, edges, scratch, from, levels[levels.length - 1], dist0, out, undefined, Infinity, trees);
    let remaining = 0;
    for (let a = 0; a < n; a++) if (dist0[a] > 0) remaining++;
    for (let li = 0; li < levels.length - 1 && remaining > 0; li++) {
      // No asset still open lies deeper than maxDepth: the search can stop there.
      let maxDepth = 0;
      for (let a = 0; a < n; a++) if (resolved[a] === 0 && dist0[a] > maxDepth) maxDepth = dist0[a];
      remaining -= lexTree(topo, edges, scratch, from, levels[li], scratch.dist, out, dist0, maxDepth, trees);
    }
  }
  out.rate[from] = 1;
  out.time[from] = NaN;
  out.fresh[from] = 1;
}

/**
 * Lexicographic BFS from `from` over the edges of rank >= rho, carrying rate, oldest time and
 * freshness down the tree (per-slot arrays of {@link EdgeData}). With `dist0`, writes to `out`
 * only the assets not yet resolved that it reaches at their unrestricted distance, marks them,
 * and returns how many; without, writes every asset it reaches. With `trees`, records the tree.
 */
function lexTree(
  topo: Topology,
  edges: EdgeData,
  scratch: SearchScratch,
  from: number,
  rho: number,
  dist: Int32Array,
  out: RateColumns,
  dist0: Int32Array | undefined,
  maxDepth: number,
  trees: TreesFrom | undefined,
): number {
  const n = topo.assetCount;
  const resolved = scratch.resolved;
  const tr = scratch.treeRate;
  const tt = scratch.treeTime;
  const tf = scratch.treeFresh;
  const q = scratch.queue;
  const offsets = topo.offsets;
  const nbr = topo.nbr;
  const slotRank = edges.slotRank;
  const slotRate = edges.slotRate;
  const slotTime = edges.slotTime;
  const slotFresh = edges.slotFresh;
  dist.fill(-1, 0, n);
  trees?.level(n);
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
      let write = dist0 === undefined;
      if (!write && resolved[v] === 0 && du === dist0![v]) {
        resolved[v] = 1;
        taken++;
        write = true;
      }
      if (write) {
        out.rate[v] = rv;
        out.time[v] = tv;
        out.fresh[v] = fv;
      }
      trees?.add(u, v, k, write);
    }
  }
  return taken;
}

/**
 * The search trees of {@link crossAllBfs} from one asset, kept while the topology and the edge
 * ranks stay the same: per level searched, in discovery order, each asset reached with its
 * parent, the CSR slot it was reached through and whether that level wrote its answer.
 */
export class TreesFrom {
  private topo: Topology | undefined;
  private from = -1;
  private epoch = -1;
  /** Entries: parent, asset, slot (negative, -1 - slot, when the answer was written). */
  private parent: Int32Array = new Int32Array(0);
  private child: Int32Array = new Int32Array(0);
  private slot: Int32Array = new Int32Array(0);
  private count = 0;
  /** Index of the first entry of each level searched. */
  private levelStart: number[] = [];

  /** Whether the kept trees are those of `from` over `topo` at rank epoch `epoch`. */
  valid(topo: Topology, from: number, epoch: number): boolean {
    return this.topo === topo && this.from === from && this.epoch === epoch;
  }

  /** Starts recording the trees of `from` over `topo` at rank epoch `epoch`. */
  begin(topo: Topology, from: number, epoch: number): void {
    this.topo = topo;
    this.from = from;
    this.epoch = epoch;
    this.count = 0;
    this.levelStart.length = 0;
  }

  /** Starts a level's search (at most `assetCount` entries follow). */
  level(assetCount: number): void {
    this.levelStart.push(this.count);
    const need = this.count + assetCount;
    if (this.parent.length >= need) return;
    const cap = Math.max(need, 2 * this.parent.length);
    const grow = (a: Int32Array): Int32Array => {
      const b = new Int32Array(cap);
      b.set(a.subarray(0, this.count));
      return b;
    };
    this.parent = grow(this.parent);
    this.child = grow(this.child);
    this.slot = grow(this.slot);
  }

  /** Records that the current level reached v from u through slot k. */
  add(u: number, v: number, k: number, write: boolean): void {
    const i = this.count++;
    this.parent[i] = u;
    this.child[i] = v;
    this.slot[i] = write ? -1 - k : k;
  }

  /** Carries the current slot data down the kept trees into `out`, as the searches did. */
  ratesInto(edges: EdgeData, scratch: SearchScratch, out: RateColumns): void {
    const tr = scratch.treeRate;
    const tt = scratch.treeTime;
    const tf = scratch.treeFresh;
    const { slotRate, slotTime, slotFresh } = edges;
    const { parent, child, slot, levelStart } = this;
    const outRate = out.rate;
    const outTime = out.time;
    const outFresh = out.fresh;
    const from = this.from;
    for (let l = 0; l < levelStart.length; l++) {
      const end = l + 1 < levelStart.length ? levelStart[l + 1] : this.count;
      tr[from] = 1;
      tt[from] = Infinity;
      tf[from] = 1;
      for (let i = levelStart[l]; i < end; i++) {
        const u = parent[i];
        const v = child[i];
        const s = slot[i];
        const k = s < 0 ? -1 - s : s;
        const rv = tr[u] * slotRate[k];
        const et = slotTime[k];
        const tu = tt[u];
        const tv = et < tu ? et : tu;
        const fv = tf[u] & slotFresh[k];
        tr[v] = rv;
        tt[v] = tv;
        tf[v] = fv;
        if (s < 0) {
          outRate[v] = rv;
          outTime[v] = tv;
          outFresh[v] = fv;
        }
      }
    }
  }
}

/**
 * The paths of {@link crossAllToBfs} to one target, kept while the topology and the edge ranks
 * stay the same (rates, times and freshness change every tick; the paths only with those).
 */
export class PathsTo {
  private topo: Topology | undefined;
  private to = -1;
  private epoch = -1;
  /** Assets with a path (the target first), and each one's path as CSR slots in `slots[start[a] ..)`. */
  private sources = new Int32Array(0);
  private reached = 0;
  private start = new Int32Array(0);
  private slots = new Int32Array(0);
  /** Length of each source's path. */
  private dist = new Int32Array(0);

  /** Whether the kept paths are those of `to` over `topo` at rank epoch `epoch`. */
  valid(topo: Topology, to: number, epoch: number): boolean {
    return this.topo === topo && this.to === to && this.epoch === epoch;
  }

  /** Rate, oldest time and freshness along each kept path, into `out` (by source). */
  ratesInto(edges: EdgeData, out: RateColumns): void {
    const { slotRate, slotTime, slotFresh } = edges;
    const { sources, start, slots } = this;
    const dist = this.dist;
    for (let i = 1; i < this.reached; i++) {
      const a = sources[i];
      let rate = 1;
      let time = Infinity;
      let fresh = 1;
      for (let k = start[a], end = k + dist[a]; k < end; k++) {
        const sl = slots[k];
        rate *= slotRate[sl];
        if (slotTime[sl] < time) time = slotTime[sl];
        fresh &= slotFresh[sl];
      }
      out.rate[a] = rate;
      out.time[a] = time;
      out.fresh[a] = fresh;
    }
    const to = this.to;
    out.rate[to] = 1;
    out.time[to] = Number.NaN;
    out.fresh[to] = 1;
  }

  /**
   * Finds every asset's path to `to` (see {@link crossAllToBfs}): a search from `to` gives each
   * asset's distance and, in order of distance, `best`, the highest lowest-rank of its shortest
   * paths; then each asset's path is walked greedily from the asset.
   */
  find(topo: Topology, edges: EdgeData, scratch: SearchScratch, to: number, epoch: number): void {
    const n = topo.assetCount;
    const dist = scratch.dist0;
    bfs(topo, edges, scratch, to, -Infinity, dist, -1, Infinity);
    const q = scratch.queue;
    const best = scratch.best;
    const { offsets, nbr } = topo;
    const slotRank = edges.slotRank;
    let reached = 0;
    for (let a = 0; a < n; a++) if (dist[a] >= 0) reached++;
    best[to] = Infinity;
    // The BFS queue holds the reached assets in order of distance.
    let total = 0;
    for (let i = 1; i < reached; i++) {
      const v = q[i];
      total += dist[v];
      const closer = dist[v] - 1;
      let b = -Infinity;
      for (let k = offsets[v], end = offsets[v + 1]; k < end; k++) {
        const u = nbr[k];
        if (dist[u] !== closer) continue;
        const r = slotRank[k] < best[u] ? slotRank[k] : best[u];
        if (r > b) b = r;
      }
      best[v] = b;
    }
    if (this.start.length < n) {
      this.start = new Int32Array(n);
      this.dist = new Int32Array(n);
    }
    if (this.sources.length < reached) this.sources = new Int32Array(reached);
    if (this.slots.length < total) this.slots = new Int32Array(total);
    this.sources.set(q.subarray(0, reached));
    let at = 0;
    for (let i = 1; i < reached; i++) {
      const a = q[i];
      this.start[a] = at;
      this.dist[a] = dist[a];
      at = this.walk(topo, edges, scratch, a, to, at);
    }
    this.reached = reached;
    this.topo = topo;
    this.to = to;
    this.epoch = epoch;
  }

  /**
   * The greedy walk from `from`: at each step the first neighbour (in asset-id order) one hop
   * closer whose edge rank and best both reach `from`'s best; its slots written from `at`.
   */
  private walk(topo: Topology, edges: EdgeData, scratch: SearchScratch, from: number, to: number, at: number): number {
    const dist = scratch.dist0;
    const best = scratch.best;
    const need = best[from];
    const { offsets, nbr } = topo;
    const slotRank = edges.slotRank;
    let v = from;
    while (v !== to) {
      const closer = dist[v] - 1;
      let k = offsets[v];
      for (const end = offsets[v + 1]; k < end; k++) {
        const u = nbr[k];
        if (dist[u] === closer && slotRank[k] >= need && best[u] >= need) break;
      }
      this.slots[at++] = k;
      v = nbr[k];
    }
    return at;
  }
}

/**
 * {@link crossBfs} from every asset to `to` at once, into `out` (indexed by the source asset; NaN
 * where there is no path). Rule 12's tie-breaks depend on the source, so a search from `to` does
 * not give them directly; instead it gives each asset's distance to `to` and, in order of
 * distance, the highest lowest-rank `best` of its shortest paths (the max over its neighbours one
 * hop closer of min(edge rank, their best)). The path of rule 12 from an asset is then walked
 * greedily: at each step, the first neighbour (in asset-id order) one hop closer whose edge and
 * best both reach the source's best. Each choice can be completed at that rank, so the walk has
 * the fewest hops, the highest lowest rank and, choosing the smallest neighbour each time, the
 * lexicographically smallest sequence: the path {@link crossBfs} finds. The paths are kept in
 * `paths` while the topology and the ranks (`epoch`) stay; rates multiply from the source, as there.
 */
export function crossAllToBfs(topo: Topology, edges: EdgeData, scratch: SearchScratch, to: number, out: RateColumns, paths: PathsTo): void {
  if (!paths.valid(topo, to, edges.rankEpoch)) paths.find(topo, edges, scratch, to, edges.rankEpoch);
  paths.ratesInto(edges, out);
}
