/**
 * The merge of a partitioned replay's outputs (docs/parallel.md, docs/methodology.md section 12),
 * in memory: the reference the SQL merge of the replay databases (src/io/partitionMerge.ts) is
 * held to by a property test, written for clarity rather than speed.
 *
 * A partition's values at its ticks are a serial replay's (section 12), but what a serial replay
 * *writes* at a tick also depends on what it wrote before (rate changes are written on change),
 * which the partition cannot know. So at its first output tick a partition writes its whole state
 * (every pair with a rate), and the merge keeps from it exactly the rows the serial replay writes
 * there: those that differ from the last row before the cut, plus a row with no rate for a pair
 * whose rate the serial replay held just before the cut and the partition does not hold at it.
 * Outputs written on change per series (the OHLC change series, xrate's own metrics) keep each
 * series' first row of a partition only when it differs from the series' last merged row; OHLC
 * buckets that straddle a cut are joined.
 *
 * @module
 */
import type { PairRateChange } from '../core/engine.js';
import type { MetricEvent } from '../core/metrics/events.js';
import { byCodeUnit } from '../core/metrics/source.js';
import type { OhlcBucket } from '../core/ohlc.js';

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
function trimRateDump(cut: number, dump: readonly PairRateChange[], last: readonly PairRateChange[]): PairRateChange[] {
  const before = new Map(last.map((c) => [pairKey(c), c]));
  const dumped = new Set(dump.map(pairKey));
  const atCut = dump.filter((c) => !sameState(c, before.get(pairKey(c)) ?? NO_RATE));
  for (const [key, prev] of before) {
    if (dumped.has(key) || prev.rate === null) continue;
    atCut.push({ ...prev, tick: cut, ...NO_RATE });
  }
  return atCut.sort(byPair);
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
