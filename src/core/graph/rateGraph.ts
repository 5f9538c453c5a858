/**
 * {@link RateGraph}: the graph of assets over the engine's pair table (rule 12), composing the
 * topology (CSR), the per-tick edge choice, the searches and the graphology model.
 *
 * @module
 */
import { UndirectedGraph } from 'graphology';
import type { CrossMethod } from '../config.js';
import { crossAllBfs, crossAllToBfs, crossBfs, legOf, PathsTo, SearchScratch, TreesFrom } from './bfs.js';
import { EdgeData } from './edges.js';
import { layered, layeredAll } from './layered.js';
import { AssetOrder, Topology } from './topology.js';
import type { CrossResult, PairView, RateColumns } from './types.js';

/** Topologies built so far, by every graph (each build's identifier). */
let topologyBuilds = 0;

/** View of no pairs: the topology before the first {@link RateGraph.sync}. */
const NO_PAIRS: PairView = {
  count: 0,
  base: new Int32Array(0),
  quote: new Int32Array(0),
  rate: new Float64Array(0),
  time: new Float64Array(0),
  rank: new Float64Array(0),
  used: new Int32Array(0),
  volume: new Float64Array(0),
  fresh: new Uint8Array(0),
};

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
  private builds = 0;
  private readonly order: AssetOrder;
  private topo = Topology.build(NO_PAIRS, 0, new Int32Array(0));
  private readonly edgeData = new EdgeData();
  private readonly scratch = new SearchScratch();
  private readonly pathsTo = new PathsTo();
  private readonly treesFrom = new TreesFrom();
  private graphModel: UndirectedGraph | undefined;

  /** Freshness of the last {@link directRate} answer. */
  directFresh = false;

  /** @param assetName - asset id string of an integer asset id */
  constructor(private readonly assetName: (id: number) => string) {
    this.order = new AssetOrder(assetName);
  }

  /** Number of undirected edges in the current topology. */
  get edges(): number {
    return this.topo.edgeCount;
  }

  /**
   * Rebuilds the CSR snapshot when `version` (the engine's topology counter) changed; otherwise
   * only marks edge data stale so the next query re-reads ranks and rates.
   */
  sync(view: PairView, assetCount: number, version: number): void {
    if (version === this.version && assetCount === this.topo.assetCount) return;
    this.version = version;
    this.builds = ++topologyBuilds;
    this.graphModel = undefined;
    this.topo = Topology.build(view, assetCount, this.order.of(assetCount));
    this.edgeData.reset(this.topo);
    this.scratch.ensure(assetCount);
  }

  /**
   * Tells the graph that a pair's rate, time, rank, markets used or freshness changed; the next
   * query re-derives that pair's edge only. (The engine calls it; a topology change resyncs all.)
   */
  notePairChanged(pr: number): void {
    this.edgeData.notePairChanged(pr);
  }

  private refreshEdges(view: PairView, tickStamp: number): void {
    this.edgeData.refresh(this.topo, this.order.current, view, tickStamp);
  }

  /**
   * Rate from asset `from` to asset `to` (ids), or undefined when no path exists.
   * `tickStamp` identifies the tick whose pair data `view` holds (edge choices are cached per stamp).
   */
  cross(from: number, to: number, view: PairView, method: CrossMethod, tickStamp = -1): CrossResult | undefined {
    if (from === to) return { rate: 1, time: NaN, fresh: true, path: [from], legs: [], minRank: Infinity, method };
    const topo = this.topo;
    if (from >= topo.assetCount || to >= topo.assetCount || from < 0 || to < 0) return undefined;
    this.refreshEdges(view, tickStamp);
    if (method === 'layered') return layered(topo, this.edgeData, this.scratch, from, to, view);
    // A direct edge is the only 1-hop path: no search needed.
    const e = topo.edgeBetween(from, to);
    if (e !== undefined) {
      const leg = legOf(this.edgeData, view, e, from, to);
      return { rate: leg.rate, time: leg.time, fresh: leg.fresh, path: [from, to], legs: [leg], minRank: leg.rank, method: 'bfs' };
    }
    return crossBfs(topo, this.edgeData, this.scratch, from, to, view);
  }

  /**
   * Rate over the direct edge between two assets (either direction), NaN when there is none;
   * no allocation (the OHLC of tracked pairs asks this every tick). Sets {@link directFresh}.
   */
  directRate(from: number, to: number, view: PairView, tickStamp: number): number {
    const e = this.edgeOf(from, to);
    return e < 0 ? NaN : this.rateOnEdge(e, from, view, tickStamp);
  }

  /** Identifies the current topology (unique across graphs): an {@link edgeOf} answer holds while it is unchanged. */
  get topologyBuilds(): number {
    return this.builds;
  }

  /** The edge between two assets (either direction) in the current topology, -1 when there is none. */
  edgeOf(from: number, to: number): number {
    const topo = this.topo;
    if (from >= topo.assetCount || to >= topo.assetCount) return -1;
    return topo.edgeBetween(from, to) ?? -1;
  }

  /**
   * Every edge's change stamp at the tick `tickStamp` identifies (the edges' data derived first),
   * by edge: the same stamp as seen before, in the same topology ({@link topologyBuilds}), means the
   * same rate, time, rank and freshness over the edge. Read, not kept (a new topology gives another
   * array).
   */
  edgeStamps(view: PairView, tickStamp: number): Float64Array {
    this.refreshEdges(view, tickStamp);
    return this.edgeData.changeStamp;
  }

  /**
   * Edges derived so far at the tick `tickStamp` identifies, a count that runs on across
   * topologies: the same count as asked before, in the same topology ({@link topologyBuilds}),
   * means every edge has the same rate, time, rank and freshness as then.
   */
  edgeChanges(view: PairView, tickStamp: number): number {
    this.refreshEdges(view, tickStamp);
    return this.edgeData.changeCount;
  }

  /** {@link directRate} over edge e (from {@link edgeOf}) leaving asset `from`; sets {@link directFresh}. */
  rateOnEdge(e: number, from: number, view: PairView, tickStamp: number): number {
    this.refreshEdges(view, tickStamp);
    this.directFresh = this.edgeData.freshOf(this.topo, e) === 1;
    return this.edgeData.rateFrom(this.topo, e, from);
  }

  /**
   * Rate (and time, freshness) of `from` against every asset at once, into `out` (indexed by
   * asset id; NaN where there is no path). Same answers as {@link cross} for each target, in
   * O(levels x (V + E)): one restricted lexicographic BFS per distinct edge rank, resolving each
   * target at the highest rank whose restricted distance equals the unrestricted one, with
   * rates, times and freshness carried down each BFS tree. The trees of the last `from` are kept
   * while the topology and the edge ranks stay: then only the rates are carried down them again.
   */
  crossAll(from: number, view: PairView, method: CrossMethod, tickStamp: number, out: RateColumns): void {
    const n = this.topo.assetCount;
    out.rate.fill(NaN, 0, n);
    if (from < 0 || from >= n) return;
    this.refreshEdges(view, tickStamp);
    if (method === 'layered') layeredAll(this.topo, this.edgeData, this.scratch, from, view, out);
    else crossAllBfs(this.topo, this.edgeData, this.scratch, from, out, this.treesFrom);
  }

  /**
   * Rate (and time, freshness) of every asset against `to` at once, into `out` (indexed by the
   * source asset id; NaN where there is no path): the answers of {@link cross}(a, to) for every a.
   * With `bfs`, one search from `to` and a greedy walk per asset (see crossAllToBfs), kept while
   * the topology and edge ranks stay; `layered`
   * prices depend on the source's own search, so each is asked for alone.
   */
  crossAllTo(to: number, view: PairView, method: CrossMethod, tickStamp: number, out: RateColumns): void {
    const n = this.topo.assetCount;
    out.rate.fill(NaN, 0, n);
    if (to < 0 || to >= n) return;
    this.refreshEdges(view, tickStamp);
    if (method === 'bfs') {
      crossAllToBfs(this.topo, this.edgeData, this.scratch, to, out, this.pathsTo);
      return;
    }
    for (let a = 0; a < n; a++) {
      const r = this.cross(a, to, view, method, tickStamp);
      if (r === undefined) continue;
      out.rate[a] = r.rate;
      out.time[a] = r.time;
      out.fresh[a] = r.fresh ? 1 : 0;
    }
  }

  /**
   * The topology as a graphology graph (built on demand, in sorted order): nodes are asset ids,
   * each edge carries the pair ids that can serve it.
   */
  model(): UndirectedGraph {
    if (this.graphModel) return this.graphModel;
    const topo = this.topo;
    const g = new UndirectedGraph();
    const ids = Array.from({ length: topo.assetCount }, (_, i) => i).filter((a) => topo.offsets[a + 1] > topo.offsets[a]);
    const names = ids.map((i) => this.assetName(i)).sort();
    for (const name of names) g.addNode(name);
    const edges = Array.from({ length: topo.edgeCount }, (_, e) => e).map((e) => {
      const a = this.assetName(topo.edgeU[e]);
      const b = this.assetName(topo.edgeV[e]);
      return { e, a, b };
    });
    edges.sort((x, y) => (x.a < y.a ? -1 : x.a > y.a ? 1 : x.b < y.b ? -1 : x.b > y.b ? 1 : 0));
    for (const { e, a, b } of edges) {
      g.addUndirectedEdgeWithKey(`${a}~${b}`, a, b, { pairs: [topo.pairUV[e], topo.pairVU[e]].filter((p) => p >= 0) });
    }
    this.graphModel = g;
    return g;
  }
}
