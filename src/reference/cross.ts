/**
 * Rule 12, cross rates (docs/methodology.md section 3), option `"bfs"`, by brute force.
 *
 * @module
 */
import type { Decimal } from 'decimal.js';
import { D, type RefNum, toD } from './decimal.js';

/** A pair with a rate (fresh or carried) at the tick: an edge of the rule 12 graph. */
export interface RefEdge {
  /** asset_id_base of the pair B/Q. */
  readonly base: string;
  /** asset_id_quote of the pair B/Q. */
  readonly quote: string;
  /** rate(B/Q): the price of one B in Q. Must be > 0. */
  readonly rate: RefNum;
  /** The pair's rank (rule 9). */
  readonly rank: number;
  /** Number of markets the pair's rate used (after rule 11). */
  readonly nMarkets: number;
  /** Time of the pair's rate (any integer unit, e.g. microseconds). */
  readonly time: number;
}

/** A cross rate: rate(from -> to), the path of asset ids from `from` to `to`, and its time. */
export interface RefCrossResult {
  /** Price of one `from` in `to`. */
  readonly rate: Decimal;
  /** Asset ids from `from` to `to` inclusive; `[from]` when from = to. */
  readonly path: string[];
  /** Oldest edge time on the path; absent when from = to (the caller uses the tick). */
  readonly time?: number;
}

/** Is pair `a` preferred over pair `b` for the edge between the same two assets? (rule 12) */
function preferred(a: RefEdge, b: RefEdge): boolean {
  if (a.rank !== b.rank) return a.rank > b.rank;
  if (a.nMarkets !== b.nMarkets) return a.nMarkets > b.nMarkets;
  return a.base < b.base;
}

/** Element-by-element comparison of asset id sequences with plain `<` (UTF-16 code units). */
function lexLess(a: readonly string[], b: readonly string[]): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i] < b[i];
  }
  return a.length < b.length;
}

/** Key of the unordered pair of assets {x, y}. */
function edgeKey(x: string, y: string): string {
  return x < y ? JSON.stringify([x, y]) : JSON.stringify([y, x]);
}

/** Breadth-first distances (in hops) from `start`. */
function bfs(adj: ReadonlyMap<string, ReadonlySet<string>>, start: string): Map<string, number> {
  const dist = new Map<string, number>([[start, 0]]);
  let frontier = [start];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const u of frontier) {
      for (const v of adj.get(u) ?? []) {
        if (!dist.has(v)) {
          dist.set(v, dist.get(u)! + 1);
          next.push(v);
        }
      }
    }
    frontier = next;
  }
  return dist;
}

/**
 * Rule 12: the cross rate rate(from, to), option `"bfs"`.
 *
 * - The graph: each pair B/Q is an undirected edge, B->Q with rate r and Q->B with 1/r.
 *   If both B/Q and Q/B are given, the edge uses the one with the higher rank, then the one
 *   with more markets (nMarkets), then the one whose base sorts first (plain `<`).
 * - from = to: rate 1, path [from], no time (the methodology gives it the tick's time).
 * - Otherwise, among ALL shortest paths (fewest hops; a direct edge is the only 1-hop path)
 *   the one whose lowest edge rank is highest wins; ties go to the lexicographically
 *   smallest sequence of asset ids (element by element, plain `<`).
 * - rate = product of the edge rates along the path. It is computed as
 *   (product of the forward rates) / (product of the rates traversed backwards): exact
 *   products, one division rounded at 200 digits. time = oldest (minimum) edge time.
 * - No path (or an asset absent from the graph): `undefined`.
 *
 * Brute force on purpose: the shortest paths are enumerated with a BFS layering (distance
 * from `from` and to `to`) and a DFS; fine for the small graphs of the property tests.
 *
 * @throws RangeError if an edge has base = quote, a rate <= 0, or the same (base, quote)
 *   appears twice (the engine has one rate per pair).
 */
export function refCrossRate(edges: readonly RefEdge[], from: string, to: string): RefCrossResult | undefined {
  if (from === to) return { rate: new D(1), path: [from] };

  // The pair chosen for each unordered {B, Q}.
  const chosen = new Map<string, RefEdge>();
  const seen = new Set<string>();
  const rates = new Map<RefEdge, Decimal>();
  for (const e of edges) {
    if (e.base === e.quote) throw new RangeError(`reference: pair ${e.base}/${e.quote} has base = quote`);
    const directed = JSON.stringify([e.base, e.quote]);
    if (seen.has(directed)) throw new RangeError(`reference: pair ${e.base}/${e.quote} given twice`);
    seen.add(directed);
    const r = toD(e.rate);
    if (r.lte(0)) throw new RangeError(`reference: pair ${e.base}/${e.quote} has rate ${r.toString()} <= 0`);
    rates.set(e, r);
    const key = edgeKey(e.base, e.quote);
    const other = chosen.get(key);
    if (other === undefined || preferred(e, other)) chosen.set(key, e);
  }

  const adj = new Map<string, Set<string>>();
  const link = (x: string, y: string): void => {
    let s = adj.get(x);
    if (s === undefined) {
      s = new Set();
      adj.set(x, s);
    }
    s.add(y);
  };
  for (const e of chosen.values()) {
    link(e.base, e.quote);
    link(e.quote, e.base);
  }

  const distFrom = bfs(adj, from);
  const hops = distFrom.get(to);
  if (hops === undefined) return undefined;
  const distTo = bfs(adj, to);

  // Enumerate every shortest path: each step goes one layer further from `from` and one
  // layer closer to `to`.
  const paths: string[][] = [];
  const walk = (path: string[]): void => {
    const u = path[path.length - 1];
    if (u === to) {
      paths.push([...path]);
      return;
    }
    const du = distFrom.get(u)!;
    for (const v of adj.get(u) ?? []) {
      if (distFrom.get(v) === du + 1 && distTo.get(v) === hops - du - 1) {
        path.push(v);
        walk(path);
        path.pop();
      }
    }
  };
  walk([from]);

  const edgeOf = (x: string, y: string): RefEdge => chosen.get(edgeKey(x, y))!;
  const minRank = (path: readonly string[]): number => {
    let m = Infinity;
    for (let i = 0; i + 1 < path.length; i++) m = Math.min(m, edgeOf(path[i], path[i + 1]).rank);
    return m;
  };

  let best = paths[0];
  let bestRank = minRank(best);
  for (const p of paths.slice(1)) {
    const r = minRank(p);
    if (r > bestRank || (r === bestRank && lexLess(p, best))) {
      best = p;
      bestRank = r;
    }
  }

  let num = new D(1);
  let den = new D(1);
  let time = Infinity;
  for (let i = 0; i + 1 < best.length; i++) {
    const e = edgeOf(best[i], best[i + 1]);
    const r = rates.get(e)!;
    if (e.base === best[i]) num = num.times(r);
    else den = den.times(r);
    time = Math.min(time, e.time);
  }
  return { rate: num.div(den), path: best, time };
}
