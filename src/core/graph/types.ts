/**
 * Types shared by the graph modules and its callers (rule 12).
 *
 * @module
 */
import type { CrossMethod } from '../config.js';

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

/** Output columns of an all-targets search, indexed by asset id (`rate` NaN where there is no path). */
export interface RateColumns {
  rate: Float64Array;
  time: Float64Array;
  fresh: Uint8Array;
}
