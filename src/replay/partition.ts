/**
 * Partitioned replays (docs/methodology.md section 12, docs/parallel.md): a replay cut in time,
 * each partition warmed up over the window its first output tick depends on, and the partitions'
 * outputs stitched into those of one serial replay.
 *
 * A partition's values at its ticks are a serial replay's (section 12), but what a serial replay
 * *writes* at a tick also depends on what it wrote before (rate changes are written on change),
 * which the partition cannot know. So at its first output tick a partition writes its whole state
 * (every pair with a rate), and the merge keeps from it exactly the rows the serial replay writes
 * there: those that differ from the last row before the cut, plus a row with no rate for a pair
 * whose rate the serial replay held just before the cut and the partition does not hold at it.
 *
 * @module
 */
import type { ResolvedConfig } from '../core/config.js';
import type { EngineSnapshot, PairRateChange } from '../core/engine.js';
import type { MetricEvent } from '../core/metrics/events.js';
import { byCodeUnit } from '../core/metrics/source.js';
import type { OhlcBucket } from '../core/ohlc.js';
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

/** The fields of a rate change that a serial replay compares to decide whether to write it. */
type RateState = Pick<PairRateChange, 'rate' | 'time' | 'rank' | 'used' | 'volume' | 'fresh'>;

/** What a pair is before it ever had a rate (the engine's initial columns). */
const NO_RATE: RateState = { rate: null, time: null, rank: null, used: 0, volume: 0, fresh: false };

function sameState(a: RateState, b: RateState): boolean {
  return (
    Object.is(a.rate, b.rate) &&
    Object.is(a.time, b.time) &&
    Object.is(a.rank, b.rank) &&
    a.used === b.used &&
    a.volume === b.volume &&
    a.fresh === b.fresh
  );
}

/** One partition's rate changes: those of its ticks from `from` (its cut) on, the first tick's being its whole state. */
export interface PartitionChanges {
  /** The partition's first output tick (its cut; the first partition: its first tick). */
  from: number;
  /** Whether the changes at `from` are the partition's whole state (every pair with a rate). */
  dumpsState: boolean;
  changes: readonly PairRateChange[];
}

const pairKey = (c: { base: string; quote: string }): string => `${c.base}/${c.quote}`;

/** The engine's report order of a tick's changes: by base, then quote. */
function byPair(a: PairRateChange, b: PairRateChange): number {
  if (a.base !== b.base) return a.base < b.base ? -1 : 1;
  return a.quote < b.quote ? -1 : a.quote > b.quote ? 1 : 0;
}

/**
 * The rate changes of a serial replay from those of its partitions, in order (see the module
 * description). A change's `pair` is the engine's id of the pair, which differs from partition to
 * partition: the merged changes carry -1 (name pairs by base and quote).
 */
export function mergeRateChanges(parts: readonly PartitionChanges[]): PairRateChange[] {
  const out: PairRateChange[] = [];
  const last = new Map<string, PairRateChange>();
  const push = (c: PairRateChange): void => {
    const row = { ...c, pair: -1 };
    out.push(row);
    last.set(pairKey(c), row);
  };
  parts.forEach((p, k) => {
    let i = 0;
    if (p.dumpsState && k > 0) {
      while (i < p.changes.length && p.changes[i].tick === p.from) i++;
      for (const c of trimRateDump(p.from, p.changes.slice(0, i), [...last.values()])) push(c);
    }
    for (; i < p.changes.length; i++) push(p.changes[i]);
  });
  return out;
}

/**
 * The rows a serial replay writes at cut `cut`, from the whole state a partition wrote there
 * (`dump`) and the last row before the cut of every pair (`last`): the dumped rows that differ
 * from their pair's last row, and a row with no rate for a pair whose last row had one and that
 * the partition does not hold at the cut; in the engine's order (base, then quote).
 */
export function trimRateDump(cut: number, dump: readonly PairRateChange[], last: readonly PairRateChange[]): PairRateChange[] {
  const before = new Map(last.map((c) => [pairKey(c), c]));
  const dumped = new Set(dump.map(pairKey));
  const atCut = dump.filter((c) => !sameState(c, before.get(pairKey(c)) ?? NO_RATE));
  for (const [key, prev] of before) {
    if (dumped.has(key) || prev.rate === null) continue;
    atCut.push({ ...prev, tick: cut, ...NO_RATE });
  }
  return atCut.sort(byPair);
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

/** A closed (or flushed) OHLC bucket of a tracked pair and period, as a partition reports it. */
export interface PartitionBucket {
  /** The tracked pair, `BASE/QUOTE`. */
  track: string;
  period: string;
  bucket: OhlcBucket;
}

/**
 * The OHLC buckets of a serial replay from its partitions' (each fed only its own ticks, its open
 * buckets flushed at its end), in partition order: a bucket that straddles cuts is reported by
 * each partition that has ticks in it, and is merged (open and time_open from the first, close and
 * time_close from the last, high and low the extremes, counts added). Sorted by track, period and
 * start, like the replay database's key.
 */
export function mergeBuckets(parts: readonly (readonly PartitionBucket[])[]): PartitionBucket[] {
  const byKey = new Map<string, PartitionBucket>();
  for (const part of parts) {
    for (const b of part) {
      const key = `${b.track}|${b.period}|${b.bucket.start}`;
      const prev = byKey.get(key);
      byKey.set(key, prev === undefined ? { ...b, bucket: { ...b.bucket } } : { ...prev, bucket: joinBuckets(prev.bucket, b.bucket) });
    }
  }
  return [...byKey.values()].sort(
    (a, b) => byCodeUnit(a.track, b.track) || byCodeUnit(a.period, b.period) || a.bucket.start - b.bucket.start,
  );
}

/** Bucket `a` followed by bucket `b` of the same interval (a's ticks all before b's). */
function joinBuckets(a: OhlcBucket, b: OhlcBucket): OhlcBucket {
  return {
    start: a.start,
    end: a.end,
    timeOpen: a.timeOpen,
    timeClose: b.timeClose,
    open: a.open,
    high: Math.max(a.high, b.high),
    low: Math.min(a.low, b.low),
    close: b.close,
    count: a.count + b.count,
  };
}

/** One partition's own-metric points (docs/methodology.md section 9) from its first output tick on, the first tick's being its whole state. */
export interface PartitionPoints {
  points: readonly MetricEvent[];
}

const seriesKey = (p: MetricEvent): string => `${p.metricId}|${p.exchangeId}|${p.symbolId ?? ''}|${p.assetId ?? ''}`;

/** A point's value as text (the exact decimal, or the text or time value). */
function valueText(p: MetricEvent): string {
  const v = p.value;
  return v.kind === 'decimal' ? v.dec.text : v.kind === 'text' ? `t:${v.text}` : `us:${v.us}`;
}

/**
 * The rows of an output written on change (per series: a value is written when it differs from
 * the last one written) of a serial replay, from its partitions' rows in order. A partition does
 * not know what the serial replay last wrote for a series, so the first row it writes for each
 * series (at its cut, where it writes its whole state, or later, for a series it did not know at
 * the cut: a market quiet for longer than the warm-up) is kept only if its value differs from the
 * series' last merged row. Its later rows follow its own change detection, exact by then.
 *
 * @param seriesOf - the series a row belongs to
 * @param textOf - the row's value, as text (compared)
 */
export function trimFirstPerSeries<T>(parts: readonly (readonly T[])[], seriesOf: (row: T) => string, textOf: (row: T) => string): T[] {
  const out: T[] = [];
  const last = new Map<string, string>();
  parts.forEach((rows, k) => {
    const seen = new Set<string>();
    for (const row of rows) {
      const key = seriesOf(row);
      const value = textOf(row);
      const first = !seen.has(key);
      seen.add(key);
      if (k > 0 && first && last.get(key) === value) continue;
      out.push(row);
      last.set(key, value);
    }
  });
  return out;
}

/**
 * xrate's own-metric points of a serial replay from its partitions' ({@link trimFirstPerSeries}:
 * a series is written when its value changes). Own metrics never lose a value by a point, so
 * nothing needs adding.
 */
export function mergeOwnMetricPoints(parts: readonly PartitionPoints[]): MetricEvent[] {
  return trimFirstPerSeries(
    parts.map((p) => p.points),
    seriesKey,
    valueText,
  );
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

/**
 * The final engine of a partitioned replay: the last partition's (`last`), whose symbol records
 * only saw its own window, completed from the partitions before it (in order): each market's
 * first quote and trade times are the earliest any partition saw, and a market the last
 * partition saw no quote or trade of takes them (latest times, last price) from the latest
 * partition that did. Its markets must include every market named before its window (a
 * partition knows them: `knowMarket`).
 */
export function mergeFinalSnapshot(last: EngineSnapshot, earlier: readonly EngineSnapshot[]): EngineSnapshot {
  const out = structuredClone(last);
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
