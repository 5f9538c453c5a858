/**
 * Provenance (docs/methodology.md section 6): every rate can explain itself.
 *
 * A pair rate lists the markets used (price, q, V, weight, quote age) and every market left out at
 * that tick with its reason; a cross rate lists its path and each leg with the leg's own pair
 * explanation. Shapes are plain JSON (snake_case, times as ISO strings with 7 fractional digits),
 * ready for the CLI's `explain` and the service's `/explain` extension.
 *
 * @module
 */
import type { ExclusionReason } from './eligibility.js';

/** One market's part in a pair rate at a tick. */
export interface MarketProvenance {
  symbol_id: string;
  exchange_id: string;
  /** Exchange rank read at the tick (rule 9). */
  rank: number;
  /** Present when the market was left out. */
  reason?: ExclusionReason;
  /** Human detail for the reason, e.g. "quote age 312.5 s > 301 s". */
  detail?: string;
  bid_price?: number;
  ask_price?: number;
  bid_size?: number;
  ask_size?: number;
  /** Market price p (midpoint, or microprice). */
  price?: number;
  /** Passive volume q = bid_size + ask_size. */
  q?: number;
  /** Traded volume V at the last eligibility refresh. */
  volume?: number;
  /** Weight w used (after the q = 0 fall-back). */
  weight?: number;
  /** Share of the total weight of the markets used. */
  weight_share?: number;
  quote_time?: string;
  quote_age_seconds?: number;
}

/** Outlier statistics of a pair at a tick (rule 11). */
export interface OutlierProvenance {
  method: string;
  /** Weighted mean (weighted_sigma) or median (mad). */
  centre: number | null;
  /** Weighted sigma, or 1.4826 * MAD. */
  scale: number | null;
  sigmas: number;
  dropped: number;
  /** Whether a boundary case was decided on exact decimals. */
  exact: boolean;
}

/** Why a pair has the rate it has at a tick. */
export interface PairExplanation {
  asset_id_base: string;
  asset_id_quote: string;
  /** The tick explained. */
  tick: string;
  /** The pair's rate after the tick (fresh or carried); null when it has none. */
  rate: number | null;
  time: string | null;
  /** True when markets contributed at this tick; false when the rate is carried (rule 13). */
  fresh: boolean;
  /** Rank used (rule 9), null when no market contributed. */
  rank: number | null;
  weighting: string;
  /** True when some market had q = 0 and the pair used w = V (rule 6). */
  passive_fallback: boolean;
  outliers: OutlierProvenance | null;
  used: MarketProvenance[];
  excluded: MarketProvenance[];
}

/** One hop of an explained rate. */
export interface LegExplanation {
  pair: string;
  from: string;
  to: string;
  inverted: boolean;
  rate: number;
  time: string;
  rank: number;
  fresh: boolean;
  explanation: PairExplanation;
}

/**
 * Why `rate(base, quote)` has no value at the last tick, checked in this order (the first that
 * holds is the reason; docs/methodology.md section 6):
 *
 * - `no_tick`: no tick has been computed yet (no event applied);
 * - `unknown_asset`: no event named the asset;
 * - then, for the pairs without a rate that would give it (the direct pair, both ways, or those
 *   on the path with the fewest hops through the listed pairs), the first check their markets fail:
 *   `not_eligible` (rule 8: no market eligible at the last eligibility refresh; a market is used
 *   only after a refresh that saw its trades), `not_legitimate` (rule 4: the exchanges of the
 *   eligible ones are not legitimate now), `stale` (rule 7: their accepted quotes are too old),
 *   `spread` (rule 5: every quote so far was discarded), `no_quote` (none quoted yet), `rank`
 *   (rule 9: the top rank's markets give no weight and the lower ranks are left out),
 *   `zero_weight` (rule 6: the weights of the fresh markets sum to 0);
 * - `no_path` (rule 12): no listed pair links the two assets, directly or through others.
 */
export type NoRateReason =
  | 'no_tick'
  | 'unknown_asset'
  | 'not_eligible'
  | 'not_legitimate'
  | 'stale'
  | 'spread'
  | 'no_quote'
  | 'rank'
  | 'zero_weight'
  | 'no_path';

/** Why there is no rate: the first reason (see {@link NoRateReason}), in words and fields. */
export interface NoRateExplanation {
  reason: NoRateReason;
  /** The listed pair the reason is about (`BASE/QUOTE`), when it is about one. */
  pair?: string;
  /** `not_eligible`: the time of the next eligibility refresh, the first that can make a market eligible. */
  next_refresh?: string;
  /** The reason in words: what failed, for which markets, and (rule 8) when the next refresh is. */
  message: string;
}

/** The explanation of `rate(base, quote)` at the last tick. */
export interface RateExplanation {
  asset_id_base: string;
  asset_id_quote: string;
  tick: string | null;
  kind: 'identity' | 'direct' | 'inverse' | 'cross' | 'none';
  rate: number | null;
  time: string | null;
  fresh: boolean;
  method: string;
  /** Asset ids along the path, base first. */
  path: string[];
  legs: LegExplanation[];
  /** Why there is no rate, when kind is `none` (the fields of {@link NoRateExplanation}). */
  reason?: NoRateReason;
  pair?: string;
  next_refresh?: string;
  message?: string;
}
