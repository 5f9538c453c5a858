/**
 * Rule 9, ranking: among a pair's markets that may contribute at a tick (eligible at the last
 * refresh, exchange legitimate now, fresh accepted quote), only those whose exchange has the
 * highest rank among them are used. Because stale markets are not candidates, when every
 * top-ranked market is stale the next rank down is used. The rank used is the pair's rank and
 * carries to the graph (rule 12's edge choice and path tie-break).
 *
 * @module
 */

/**
 * The rank a pair uses: the highest of its candidates' ranks; -Infinity when there is none.
 *
 * @example topRank(Float64Array.of(1, 2, 2, 0), 4) // 2
 * @example topRank(Float64Array.of(1, 2), 1)       // 1: only the first candidate counts
 */
export function topRank(ranks: ArrayLike<number>, n: number): number {
  let top = -Infinity;
  for (let j = 0; j < n; j++) if (ranks[j] > top) top = ranks[j];
  return top;
}

/**
 * Whether a candidate of rank `rank` is used when the pair's rank is `top`.
 *
 * @example usesRank(2, 2) // true
 * @example usesRank(1, 2) // false: left out with reason "rank"
 */
export function usesRank(rank: number, top: number): boolean {
  return rank === top;
}
