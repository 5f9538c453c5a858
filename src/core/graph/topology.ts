/**
 * The graph's topology as a CSR (compressed sparse row) snapshot in typed arrays: one undirected
 * edge per pair of assets with at least one pair with a rate, adjacency lists in ascending asset-id
 * order (the lexicographic tie-break of rule 12 relies on it). Rebuilt only when the set of pairs
 * with a rate changes.
 *
 * @module
 */
import type { PairView } from './types.js';

/**
 * Position of each asset id in the order of the id strings (`order[id]`), so ids compare as their
 * strings do. Cached while the number of assets is unchanged (ids are never renamed).
 */
export class AssetOrder {
  private cache: Int32Array = new Int32Array(0);

  constructor(private readonly assetName: (id: number) => string) {}

  /** The order of the first `assetCount` ids (the last one computed, see {@link of}). */
  get current(): Int32Array {
    return this.cache;
  }

  /** The order of the first `assetCount` ids. */
  of(assetCount: number): Int32Array {
    if (this.cache.length === assetCount) return this.cache;
    const ids = Array.from({ length: assetCount }, (_, i) => i);
    const names = ids.map((i) => this.assetName(i));
    ids.sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : 0));
    const order = new Int32Array(assetCount);
    for (let pos = 0; pos < assetCount; pos++) order[ids[pos]] = pos;
    this.cache = order;
    return order;
  }
}

/**
 * Edges and adjacency of one topology. Edge e joins `edgeU[e]` and `edgeV[e]`, u before v in asset
 * id order; `pairUV[e]` / `pairVU[e]` are the pair ids u/v and v/u, or -1.
 */
export class Topology {
  /** Number of undirected edges. */
  readonly edgeCount: number;
  /** CSR offsets: the neighbours of asset a are slots offsets[a] .. offsets[a + 1] - 1. */
  readonly offsets: Int32Array;
  /** Neighbour asset of each CSR slot. */
  readonly nbr: Int32Array;
  /** Edge of each CSR slot. */
  readonly adjEdge: Int32Array;
  /** CSR slot of edge e in the adjacency of edgeU[e]. */
  readonly slotOfU: Int32Array;
  /** CSR slot of edge e in the adjacency of edgeV[e]. */
  readonly slotOfV: Int32Array;
  /** Edge serving each pair id (-1: none). */
  readonly pairEdge: Int32Array;
  /** (u * assetCount + v) -> edge, for both orders. */
  private readonly direct = new Map<number, number>();

  private constructor(
    /** Number of assets (vertices). */
    readonly assetCount: number,
    readonly edgeU: Int32Array,
    readonly edgeV: Int32Array,
    readonly pairUV: Int32Array,
    readonly pairVU: Int32Array,
    pairCount: number,
  ) {
    const E = edgeU.length;
    this.edgeCount = E;
    // CSR with neighbours in ascending asset-id order: filled in edge order, then sorted per asset.
    const deg = new Int32Array(assetCount + 1);
    for (let e = 0; e < E; e++) {
      deg[edgeU[e] + 1]++;
      deg[edgeV[e] + 1]++;
    }
    for (let i = 0; i < assetCount; i++) deg[i + 1] += deg[i];
    this.offsets = deg;
    this.nbr = new Int32Array(2 * E);
    this.adjEdge = new Int32Array(2 * E);
    this.slotOfU = new Int32Array(E);
    this.slotOfV = new Int32Array(E);
    this.pairEdge = new Int32Array(pairCount).fill(-1);
  }

  /** Builds the topology of the pairs of `view` that have a rate; `order` is the {@link AssetOrder} of the ids. */
  static build(view: PairView, assetCount: number, order: Int32Array): Topology {
    // Sorted edge list: key = u * assetCount + v with u, v compared by asset id string.
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
    const t = new Topology(assetCount, Int32Array.from(us), Int32Array.from(vs), Int32Array.from(uv), Int32Array.from(vu), view.count);
    t.fillAdjacency(order);
    return t;
  }

  private fillAdjacency(order: Int32Array): void {
    const { assetCount, edgeCount: E, edgeU: us, edgeV: vs, offsets, nbr, adjEdge } = this;
    const fill = offsets.slice(0, assetCount);
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
    // Where each edge sits in its two adjacency lists, and which edge serves each pair.
    for (let a = 0; a < assetCount; a++) {
      for (let k = offsets[a]; k < offsets[a + 1]; k++) {
        const e = adjEdge[k];
        if (us[e] === a) this.slotOfU[e] = k;
        else this.slotOfV[e] = k;
      }
    }
    for (let e = 0; e < E; e++) {
      if (this.pairUV[e] >= 0) this.pairEdge[this.pairUV[e]] = e;
      if (this.pairVU[e] >= 0) this.pairEdge[this.pairVU[e]] = e;
    }
    for (let e = 0; e < E; e++) {
      this.direct.set(us[e] * assetCount + vs[e], e);
      this.direct.set(vs[e] * assetCount + us[e], e);
    }
  }

  /** The edge between assets `from` and `to` (either order), or undefined. */
  edgeBetween(from: number, to: number): number | undefined {
    return this.direct.get(from * this.assetCount + to);
  }

  /** The end of edge e that is not asset a. */
  otherEnd(e: number, a: number): number {
    return this.edgeU[e] === a ? this.edgeV[e] : this.edgeU[e];
  }
}
