/**
 * Rules 3, 4 and 8: which markets may contribute, refreshed at the first tick and at every
 * multiple of the refresh cadence (4 h) since the epoch.
 *
 * At a refresh R a market is eligible iff it is SPOT (rule 3), its exchange is legitimate at R
 * (rule 4), its base and quote are known, and its traded volume V over (R - 24 h, R] is > 0
 * (rule 8). Between refreshes V and eligibility stay fixed. At any tick a market is used only if
 * it was eligible at the last refresh AND its exchange is legitimate at that tick (our reading of
 * rule 4: a kill switch acts at once; restoring an exchange brings back at once only the markets
 * that were eligible at the last refresh).
 *
 * @module
 */

/**
 * Whether tick T refreshes eligibility: the first tick T0, or T a multiple of the cadence.
 * @example isRefreshTick(14_400_000_000, 5_000_000, 14_400_000_000) // true (04:00 UTC)
 */
export function isRefreshTick(tickUs: number, firstTickUs: number, refreshEveryUs: number): boolean {
  return tickUs === firstTickUs || tickUs % refreshEveryUs === 0;
}

/**
 * Eligibility at a refresh (rules 3, 4, 8).
 * @example isEligible(true, true, true, 0.5) // true
 * @example isEligible(true, true, true, 0) // false: no volume in the window
 */
export function isEligible(spot: boolean, legitimate: boolean, assetsKnown: boolean, volume: number): boolean {
  return spot && legitimate && assetsKnown && volume > 0;
}

/** Reason a market is left out of its pair at a tick (provenance, docs/methodology.md section 6). */
export type ExclusionReason = 'not_spot' | 'not_legitimate' | 'not_eligible' | 'no_quote' | 'spread' | 'stale' | 'rank' | 'outlier';
