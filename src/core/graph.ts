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
 * rebuilt only when the topology (the set of pairs with a rate) changes.
 *
 * This module is the public entry; the parts live in `./graph/`: the CSR topology (`topology`),
 * the per-tick edge choice (`edges`), the breadth-first searches (`bfs`), the `layered` method
 * (`layered`) and the class composing them (`rateGraph`).
 *
 * @module
 */
export { RateGraph } from './graph/rateGraph.js';
export type { CrossLeg, CrossResult, PairView } from './graph/types.js';
