/**
 * Rule 7, staleness: a market contributes at tick T only if T - t_quote <= staleAfter, where
 * t_quote is the time of its latest accepted quote. Times are integer microseconds, so the
 * boundary is exact: age exactly 301 s counts, 301.000001 s does not.
 *
 * @module
 */

/**
 * Whether a quote received at `quoteTimeUs` is still fresh at tick `tickUs`.
 * @example isFresh(301_000_000, 0, 301_000_000) // true (exactly 301 s)
 * @example isFresh(301_000_001, 0, 301_000_000) // false
 */
export function isFresh(tickUs: number, quoteTimeUs: number, staleAfterUs: number): boolean {
  return tickUs - quoteTimeUs <= staleAfterUs;
}
