/**
 * The pre-scan's plan (src/replay/prescan.ts) against a brute-force reading of the same records:
 * each partition's first record is the first in reading order of its warm-up window, the metadata
 * it carries is every metadata event read before it, its clock the latest time read before it, its
 * markets the symbol ids named before it;
 * cuts are increasing minute boundaries after the first tick, at most n - 1 of them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { XrateEvent } from '../../src/core/types.js';
import { MINUTE_US, PrescanStats, planPartitions, WARM_UP_COST } from '../../src/replay/prescan.js';

interface Rec {
  input: number;
  line: number;
  time: number | undefined;
  meta: boolean;
  symbol: string | undefined;
}

const T0 = 1_704_067_200_000_000;

/** Records of up to 3 inputs, times mostly increasing with jitter (out of order), some unreadable, some metadata. */
const recsArb = fc
  .array(
    fc.record({
      dt: fc.oneof(fc.integer({ min: 0, max: 30_000_000 }), fc.integer({ min: 0, max: 900_000_000 })),
      back: fc.oneof({ arbitrary: fc.constant(0), weight: 5 }, { arbitrary: fc.integer({ min: 0, max: 200_000_000 }), weight: 1 }),
      unreadable: fc.integer({ min: 0, max: 19 }).map((x) => x === 0),
      meta: fc.integer({ min: 0, max: 9 }).map((x) => x === 0),
      nextInput: fc.integer({ min: 0, max: 49 }).map((x) => x === 0),
      symbol: fc.option(fc.constantFrom('A_SPOT_X_Y', 'B_SPOT_X_Y', 'C_SPOT_Z_Y', 'D_SPOT_Z_X'), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 400 },
  )
  .map((xs) => {
    let t = T0 + 100_000;
    let input = 0;
    let line = 0;
    return xs.map((x): Rec => {
      if (x.nextInput && input < 2) {
        input++;
        line = 0;
      }
      line++;
      t += x.dt;
      return { input, line, time: x.unreadable ? undefined : t - x.back, meta: x.meta, symbol: x.symbol };
    });
  });

const metaEvent = (time: number): XrateEvent => ({ type: 'exchange', time, exchangeId: 'X', legitimate: true, rank: 0 });

describe('pre-scan plan', () => {
  it('gives each partition the first record of its window, the metadata and the clock before it', () => {
    fc.assert(
      fc.property(recsArb, fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 30 }), (recs, n, warmMinutes) => {
        const stats = new PrescanStats();
        for (const r of recs) stats.add(r.input, r.line, r.time, r.meta && r.time !== undefined ? metaEvent(r.time) : undefined, r.symbol);
        const H = warmMinutes * MINUTE_US + 123;
        const plan = planPartitions(stats, n, H);
        const timed = recs.filter((r) => r.time !== undefined);
        if (timed.length === 0) return;
        const cuts = plan.slice(1).map((p) => p.from!);
        expect(plan.length).toBeLessThanOrEqual(n);
        const firstTick = Math.ceil(Math.min(...timed.map((r) => r.time!)) / 1e6) * 1e6;
        cuts.forEach((c, i) => {
          expect(c % MINUTE_US).toBe(0);
          expect(c).toBeGreaterThan(i === 0 ? firstTick : cuts[i - 1]);
        });
        plan.forEach((p, k) => {
          expect(p.to).toBe(k < cuts.length ? cuts[k] - 1 : undefined);
          if (p.from === undefined) {
            expect(p.start.order).toBe(-1);
            return;
          }
          const window = Math.floor((p.from - H) / MINUTE_US) * MINUTE_US;
          const startIndex = recs.findIndex((r) => r.time !== undefined && r.time >= window);
          if (startIndex <= 0) {
            expect(p.start.order).toBe(-1);
            expect(p.metadata).toEqual([]);
            return;
          }
          expect(p.start).toEqual({ input: recs[startIndex].input, line: recs[startIndex].line, order: startIndex });
          const before = recs.slice(0, startIndex).filter((r) => r.time !== undefined);
          expect(p.clockUs).toBe(before.length > 0 ? Math.max(...before.map((r) => r.time!)) : undefined);
          expect(p.metadata.map((m) => m.at.order)).toEqual(
            recs.flatMap((r, i) => (i < startIndex && r.meta && r.time !== undefined ? [i] : [])),
          );
          // The symbols named by readable records before the start, in order of first sight.
          const named = recs.slice(0, startIndex).flatMap((r) => (r.time !== undefined && r.symbol !== undefined ? [r.symbol] : []));
          expect(p.markets).toEqual([...new Set(named)]);
        });
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it('balances the partitions by cost (span events, and warm-up ones at WARM_UP_COST): no other cut gives a smaller largest cost', () => {
    fc.assert(
      fc.property(recsArb, fc.integer({ min: 2, max: 3 }), fc.integer({ min: 1, max: 20 }), (recs, n, warmMinutes) => {
        const stats = new PrescanStats();
        for (const r of recs) stats.add(r.input, r.line, r.time);
        const H = warmMinutes * MINUTE_US;
        const lastH = 2 * H;
        const plan = planPartitions(stats, n, H, lastH);
        const times = recs.flatMap((r) => (r.time === undefined ? [] : [r.time]));
        if (times.length === 0) return;
        const firstTick = Math.ceil(Math.min(...times) / 1e6) * 1e6;
        // A partition reads its span and its window (from the start of the window's minute).
        const cost = (cuts: number[]): number =>
          Math.max(
            ...[undefined, ...cuts].map((from, k) => {
              const to = k < cuts.length ? cuts[k] : Number.POSITIVE_INFINITY;
              const w =
                from === undefined
                  ? Number.NEGATIVE_INFINITY
                  : Math.floor((from - (k === cuts.length ? lastH : H)) / MINUTE_US) * MINUTE_US;
              const span = times.filter((t) => t >= (from ?? Number.NEGATIVE_INFINITY) && t < to).length;
              return span + WARM_UP_COST * times.filter((t) => t >= w && t < (from ?? Number.NEGATIVE_INFINITY)).length;
            }),
          );
        const candidates = [...new Set(times.map((t) => Math.floor(t / MINUTE_US) * MINUTE_US))]
          .filter((c) => c > firstTick)
          .sort((a, b) => a - b);
        let best = cost([]);
        for (const a of candidates) {
          best = Math.min(best, cost([a]));
          if (n === 3) for (const b of candidates) if (b > a) best = Math.min(best, cost([a, b]));
        }
        expect(cost(plan.slice(1).map((p) => p.from!))).toBe(best);
      }),
      { seed: 42, numRuns: 150 },
    );
  });
});
