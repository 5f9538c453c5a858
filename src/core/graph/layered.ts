/**
 * The `layered` cross method (rule 12 option): each asset at BFS depth k is priced as the
 * volume-weighted mean, over its edges to depth k - 1, of (price of the neighbour) x (edge rate),
 * as in published VWAP index methods.
 *
 * @module
 */
import { bfs, legOf, type SearchScratch } from './bfs.js';
import type { EdgeData } from './edges.js';
import type { Topology } from './topology.js';
import type { CrossLeg, CrossResult, PairView, RateColumns } from './types.js';

/**
 * Layered prices of every asset reachable from `from` into `out`: the asset at BFS depth k is the
 * volume-weighted mean over its edges to depth k - 1 of (neighbour price) x (edge rate); equal
 * weights when the edges carry no volume. Time: oldest contributing edge or neighbour time; fresh
 * when every contribution is. With `stopAt`, stops there and returns its legs.
 */
export function layeredAll(
  topo: Topology,
  edges: EdgeData,
  scratch: SearchScratch,
  from: number,
  view: PairView,
  out: RateColumns,
  stopAt = -1,
): CrossLeg[] {
  const n = topo.assetCount;
  bfs(topo, edges, scratch, from, -Infinity, scratch.dist0, -1, Infinity);
  const depth = scratch.dist0;
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
    const y = scratch.queue[i];
    let W = 0;
    let S = 0;
    let Sx = 0;
    let count = 0;
    let t = Infinity;
    let f = 1;
    const legs: CrossLeg[] = [];
    for (let k = topo.offsets[y]; k < topo.offsets[y + 1]; k++) {
      const u = topo.nbr[k];
      if (depth[u] !== depth[y] - 1) continue;
      const e = topo.adjEdge[k];
      const r = edges.rateFrom(topo, e, u);
      const w = view.volume[edges.choice[e]];
      const px = price[u] * r;
      W += w;
      S += w * px;
      Sx += px;
      count++;
      // Slot k of y's adjacency holds edge e's time and freshness (as both of its slots do).
      if (edges.slotTime[k] < t) t = edges.slotTime[k];
      if (out.time[u] < t) t = out.time[u];
      if (!edges.slotFresh[k] || !out.fresh[u]) f = 0;
      if (y === stopAt) legs.push(legOf(edges, view, e, u, y));
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

/** Layered rate from `from` to `to`, or undefined when `to` is unreachable. */
export function layered(
  topo: Topology,
  edges: EdgeData,
  scratch: SearchScratch,
  from: number,
  to: number,
  view: PairView,
): CrossResult | undefined {
  const n = topo.assetCount;
  const out = { rate: new Float64Array(n), time: new Float64Array(n), fresh: new Uint8Array(n) };
  const legs = layeredAll(topo, edges, scratch, from, view, out, to);
  if (Number.isNaN(out.rate[to])) return undefined;
  const minRank = legs.reduce((m, l) => Math.min(m, l.rank), Infinity);
  return { rate: out.rate[to], time: out.time[to], fresh: out.fresh[to] === 1, path: [from, to], legs, minRank, method: 'layered' };
}
