/**
 * The pieces of a partitioned replay (src/replay/partition.ts) on hand-made cases: the warm-up
 * window, the cuts, and the merge of the state a partition writes at its cut (its in-memory
 * reference, src/reference/partitionMerge.ts).
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../src/core/config.js';
import type { PairRateChange } from '../../../src/core/engine.js';
import { missingTracks, planCuts, warmUpUs } from '../../../src/replay/partition.js';
import { mergeRateChanges } from '../../../src/reference/index.js';

const S = 1_000_000;
const row = (tick: number, base: string, quote: string, rate: number | null, extra: Partial<PairRateChange> = {}): PairRateChange => ({
  tick,
  pair: 7,
  base,
  quote,
  rate,
  time: rate === null ? null : tick - S,
  rank: rate === null ? null : 1,
  used: rate === null ? 0 : 2,
  volume: rate === null ? 0 : 10,
  fresh: rate !== null,
  ...extra,
});

describe('warmUpUs', () => {
  it('is maxRateAge + volume window + refresh interval + staleAfter + 2 s: 52 h 5 min 3 s by default', () => {
    expect(warmUpUs(resolveConfig({}))).toBe((86_400 + 86_400 + 14_400 + 301 + 2) * S);
    expect(
      warmUpUs(resolveConfig({ maxRateAgeSeconds: 60, volumeWindowSeconds: 120, refreshEverySeconds: 30, staleAfterSeconds: 10 })),
    ).toBe(222 * S);
  });
});

describe('planCuts', () => {
  it('splits the ticks into spans of about equal length, at whole seconds', () => {
    expect(planCuts(0, 10 * S, 2)).toEqual([5 * S]);
    expect(planCuts(0.5 * S, 9.5 * S, 3)).toEqual([4 * S, 7 * S]);
  });
  it('gives fewer cuts than asked when the log has fewer seconds, none for one partition', () => {
    expect(planCuts(0, 2 * S, 5)).toEqual([1 * S, 2 * S]);
    expect(planCuts(0, 100 * S, 1)).toEqual([]);
  });
});

describe('mergeRateChanges', () => {
  it('keeps from the state written at a cut only what differs from the last row before it', () => {
    const merged = mergeRateChanges([
      { from: 0, dumpsState: false, changes: [row(1 * S, 'BTC', 'USD', 100), row(1 * S, 'ETH', 'USD', 5)] },
      {
        from: 10 * S,
        dumpsState: true,
        changes: [
          row(10 * S, 'BTC', 'USD', 100, { time: 0 }), // same as before the cut: not written
          row(10 * S, 'ETH', 'USD', 6), // changed at the cut: written
          row(10 * S, 'SOL', 'USD', 1), // a rate first seen at the cut: written
          row(11 * S, 'BTC', 'USD', 101), // after the cut: as it is
        ],
      },
    ]);
    expect(merged.map((c) => [c.tick / S, `${c.base}/${c.quote}`, c.rate])).toEqual([
      [1, 'BTC/USD', 100],
      [1, 'ETH/USD', 5],
      [10, 'ETH/USD', 6],
      [10, 'SOL/USD', 1],
      [11, 'BTC/USD', 101],
    ]);
    expect(merged.every((c) => c.pair === -1)).toBe(true);
  });

  it('writes the expiry of a rate held before the cut that the partition does not hold at it, in pair order', () => {
    const merged = mergeRateChanges([
      { from: 0, dumpsState: false, changes: [row(1 * S, 'ETH', 'USD', 5), row(1 * S, 'ADA', 'USD', 0.5), row(2 * S, 'XRP', 'USD', null)] },
      { from: 10 * S, dumpsState: true, changes: [row(10 * S, 'ETH', 'USD', 5, { time: 0 })] },
    ]);
    expect(merged.slice(3)).toEqual([{ ...row(10 * S, 'ADA', 'USD', null), pair: -1 }]);
  });

  it('takes the first partition as it is, dump or not', () => {
    const changes = [row(1 * S, 'BTC', 'USD', 100), row(1 * S, 'BTC', 'USD', 100)];
    expect(mergeRateChanges([{ from: S, dumpsState: true, changes }])).toHaveLength(2);
  });
});

describe('missingTracks', () => {
  it('gives each partition the pairs with a rate in the partitions before it that it did not track at its cut', () => {
    const withRate = [['BTC/USD', 'ETH/USD'], ['SOL/USD'], ['XRP/USD']];
    const atCut = [[], ['BTC/USD'], ['SOL/USD', 'BTC/USD', 'ETH/USD']];
    expect(missingTracks(withRate, atCut)).toEqual([[], ['ETH/USD'], []]);
    expect(missingTracks([['B/Q'], ['C/Q'], []], [[], [], []])).toEqual([[], ['B/Q'], ['B/Q', 'C/Q']]);
  });
});
