/**
 * Partitioned replays (docs/methodology.md section 12, docs/parallel.md): a replay cut in time,
 * each partition warmed up over the window its first output tick depends on, and the partitions'
 * outputs stitched into those of one serial replay. This module plans the cuts and the warm-up,
 * finds the pairs a partition must track, and merges the final engine; the partitions' output
 * tables are merged by src/io/partitionMerge.ts (its in-memory reference:
 * src/reference/partitionMerge.ts).
 *
 * @module
 */
import type { ResolvedConfig } from '../core/config.js';
import type { EngineSnapshot } from '../core/engine.js';
import { US_PER_SECOND } from '../core/time.js';

/**
 * How far before a tick T the events that decide its values can lie (section 12): a carried rate
 * is up to maxRateAge old, it was computed from quotes up to staleAfter old and from V of a
 * refresh up to refreshEvery earlier, which summed the volume window; plus one second, so that
 * the tick before T is decided too. 52 h 5 min 3 s with the default configuration.
 *
 * @example
 * ```ts
 * warmUpUs(resolveConfig({})) / 3_600_000_000; // 52.08...
 * ```
 */
export function warmUpUs(c: ResolvedConfig): number {
  return c.maxRateAgeUs + c.volumeWindowUs + c.refreshEveryUs + c.staleAfterUs + 2 * US_PER_SECOND;
}

/**
 * `n` - 1 cut ticks splitting the whole seconds after `first` through `last` (µs) into `n` spans
 * of about equal length (fewer when the span has fewer seconds). Partition k outputs the ticks
 * from cut k - 1 (the first: from the start) to before cut k.
 *
 * @example
 * ```ts
 * planCuts(0, 10_000_000, 2); // [6_000_000]
 * ```
 */
export function planCuts(first: number, last: number, n: number): number[] {
  const t0 = Math.ceil(first / US_PER_SECOND);
  const t1 = Math.ceil(last / US_PER_SECOND);
  const cuts: number[] = [];
  for (let k = 1; k < n; k++) {
    const c = t0 + Math.round(((t1 - t0) * k) / n);
    if (c > t0 && c <= t1 && (cuts.length === 0 || c * US_PER_SECOND > cuts[cuts.length - 1])) cuts.push(c * US_PER_SECOND);
  }
  return cuts;
}

/**
 * The second phase of a partitioned replay (docs/parallel.md, "Tracked pairs"): for each
 * partition, the pairs (`B/Q`) a serial replay tracks at its cut that it did not
 * (`trackedAtCut[k]`). A serial replay tracks a pair from its first rate on, so at cut k those are
 * the pairs with a rate in some row of the partitions before k (`withRate[j]`: each partition's
 * rows are a serial replay's over its span, its whole state at its cut included). Sorted; empty
 * for the first partition and for one that misses none.
 */
export function missingTracks(withRate: readonly (readonly string[])[], trackedAtCut: readonly (readonly string[])[]): string[][] {
  const tracked = new Set<string>();
  return trackedAtCut.map((atCut, k) => {
    if (k > 0) for (const p of withRate[k - 1]) tracked.add(p);
    const own = new Set(atCut);
    return [...tracked].filter((t) => !own.has(t)).sort();
  });
}

/** Fields of a market in the snapshot's symbol-record columns: quote times, and trade times and prices (SymbolRecordsJSON). */
const Q_FIELDS = 4;
const T_FIELDS = 6;
const FIRST = 0;
const CUR = 1;
const PREV = 2;
const CUR_END = 3;
const P_CUR = 4;
const P_PREV = 5;

/**
 * A market keeps its last committed quote however old (stale, it gives no rate, but `explain` shows
 * it and a symbol record without trades takes its midpoint as price), and the time of its last
 * quote discarded for its spread. A market quiet through the last partition's window has neither
 * there: both are taken from the latest earlier partition that has them.
 */
function keepLastQuotes(
  markets: EngineSnapshot['markets'],
  earlier: readonly EngineSnapshot[],
  index: readonly Map<string, number>[],
): void {
  const TQ = 4;
  for (let m = 0; m < markets.names.length; m++) {
    const needQuote = markets.quote_state[TQ][m] === null;
    const needDiscarded = markets.discarded_at[m] === null;
    if (!needQuote && !needDiscarded) continue;
    let quoteDone = !needQuote;
    let discardedDone = !needDiscarded;
    for (let k = earlier.length - 1; k >= 0 && !(quoteDone && discardedDone); k--) {
      const j = index[k].get(markets.names[m]);
      if (j === undefined) continue;
      const from = earlier[k].markets;
      if (!quoteDone && from.quote_state[TQ][j] !== null) {
        for (let c = 0; c < markets.quote_state.length; c++) markets.quote_state[c][m] = from.quote_state[c][j];
        markets.quote_text[m] = from.quote_text[j] ? [...from.quote_text[j]!] : null;
        quoteDone = true;
      }
      if (!discardedDone && from.discarded_at[j] !== null) {
        markets.discarded_at[m] = from.discarded_at[j];
        discardedDone = true;
      }
    }
  }
}

/** Trade bins of no bin (what the merge keeps of the partitions' before the last: they are not merged). */
export const NO_BINS = { hot: '', cold: '' };

/**
 * The final engine of a partitioned replay: the last partition's (`last`), whose symbol records
 * only saw its own window, completed from the partitions before it (in order): each market's
 * first quote and trade times are the earliest any partition saw, and a market the last
 * partition saw no quote or trade of takes them (latest times, last price) from the latest
 * partition that did. Its markets must include every market named before its window (a
 * partition knows them: `knowMarket`).
 */
export function mergeFinalSnapshot(last: EngineSnapshot, earlier: readonly EngineSnapshot[]): EngineSnapshot {
  // Its trade bins as they are, not cloned (a day of a dense log's: tens of megabytes; the merge
  // does not change them, and a clone of their PackedBytes would be a plain object).
  const bins = last.symbols?.bins;
  const out = structuredClone(last.symbols === undefined ? last : { ...last, symbols: { ...last.symbols, bins: NO_BINS } });
  if (out.symbols !== undefined && bins !== undefined) out.symbols.bins = bins;
  const names = out.markets.names;
  const index = earlier.map((s) => new Map(s.markets.names.map((n, m) => [n, m])));
  keepLastQuotes(out.markets, earlier, index);
  const sym = out.symbols;
  if (sym === undefined) return out;
  const longPrices = new Map(sym.long_prices);
  for (let m = 0; m < names.length; m++) {
    for (const [col, stride, prices] of [
      [sym.quote, Q_FIELDS, false],
      [sym.trade, T_FIELDS, true],
    ] as const) {
      const o = stride * m;
      earlier.forEach((s, k) => {
        const j = index[k].get(names[m]);
        const from = s.symbols === undefined || j === undefined ? undefined : prices ? s.symbols.trade : s.symbols.quote;
        if (from === undefined || j === undefined) return;
        const p = stride * j;
        const first = from[p + FIRST];
        if (first !== null && (col[o + FIRST] === null || first < (col[o + FIRST] as number))) col[o + FIRST] = first;
      });
      if (col[o + CUR] !== null) continue;
      // No quote (trade) in the last partition: the latest partition that saw one has the latest.
      for (let k = earlier.length - 1; k >= 0; k--) {
        const s = earlier[k];
        const j = index[k].get(names[m]);
        const from = s.symbols === undefined || j === undefined ? undefined : prices ? s.symbols.trade : s.symbols.quote;
        if (from === undefined || j === undefined || from[stride * j + CUR] === null) continue;
        const p = stride * j;
        for (const f of prices ? [CUR, PREV, CUR_END, P_CUR, P_PREV] : [CUR, PREV, CUR_END]) col[o + f] = from[p + f];
        if (prices) {
          const theirs = new Map(s.symbols!.long_prices);
          for (const w of [0, 1]) {
            const text = theirs.get(2 * j + w);
            if (text === undefined) longPrices.delete(2 * m + w);
            else longPrices.set(2 * m + w, text);
          }
        }
        break;
      }
    }
  }
  sym.long_prices = [...longPrices].sort((a, b) => a[0] - b[0]);
  return out;
}
