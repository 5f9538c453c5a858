import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OhlcAggregator, type OhlcAggregatorSnapshot, rollUp, rollUpTicks, type OhlcBucket } from '../../src/core/ohlc.js';
import { EXCHANGE_RATE_PERIODS, MONTH_PERIODS, getPeriod, isRollupOf, type PeriodRecord } from '../../src/core/periods.js';

const US = 1_000_000;
const RUNS = { seed: 42, numRuns: 300 };
const SEC = getPeriod('1SEC')!;

type Tick = { t: number; rate: number };

/** Gaps from 1 µs to 10 days, biased so that ticks hit the same bucket and cross boundaries. */
const gap = (maxDays: number): fc.Arbitrary<number> =>
  fc.oneof(
    fc.integer({ min: 1, max: 1000 }),
    fc.integer({ min: 1, max: 2_000_000 }),
    fc.integer({ min: 1, max: 3600 }).map((s) => s * US),
    fc.integer({ min: 1, max: 3600 }).map((s) => s * US + 1),
    fc.integer({ min: 1, max: maxDays * 86_400 }).map((s) => s * US),
  );

const rate = fc.oneof(fc.double({ min: 1e-9, max: 1e9, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(1, 2, 100));

/** A strictly increasing tick series starting anywhere in ±68 years of the epoch. */
const ticksArb = (maxDays: number, maxLength: number): fc.Arbitrary<Tick[]> =>
  fc
    .record({
      startS: fc.integer({ min: -2_000_000_000, max: 2_000_000_000 }),
      startUs: fc.integer({ min: 0, max: US - 1 }),
      steps: fc.array(fc.tuple(gap(maxDays), rate), { minLength: 1, maxLength }),
    })
    .map(({ startS, startUs, steps }) => {
      let t = startS * US + startUs;
      return steps.map(([g, r], k) => {
        if (k > 0) t += g;
        return { t, rate: r };
      });
    });

function aggregate(periods: readonly PeriodRecord[], ticks: readonly Tick[]): OhlcBucket[][] {
  const out: OhlcBucket[][] = periods.map(() => []);
  const agg = new OhlcAggregator(periods, (i, b) => out[i].push(b));
  for (const x of ticks) agg.update(x.t, x.rate);
  agg.flush();
  return out;
}

describe('OhlcAggregator properties', () => {
  it('every bucket is well formed: low <= open, close <= high; ticks inside [start, end)', () => {
    fc.assert(
      fc.property(ticksArb(10, 120), (ticks) => {
        const periods = [...EXCHANGE_RATE_PERIODS, ...MONTH_PERIODS];
        const all = aggregate(periods, ticks);
        for (const buckets of all) {
          let n = 0;
          let prevEnd = -Infinity;
          for (const b of buckets) {
            expect(b.low).toBeLessThanOrEqual(b.open);
            expect(b.low).toBeLessThanOrEqual(b.close);
            expect(b.open).toBeLessThanOrEqual(b.high);
            expect(b.close).toBeLessThanOrEqual(b.high);
            expect(b.start).toBeLessThanOrEqual(b.timeOpen);
            expect(b.timeOpen).toBeLessThanOrEqual(b.timeClose);
            expect(b.timeClose).toBeLessThan(b.end);
            expect(b.start).toBeGreaterThanOrEqual(prevEnd);
            expect(b.count).toBeGreaterThanOrEqual(1);
            prevEnd = b.end;
            n += b.count;
          }
          expect(n).toBe(ticks.length);
        }
      }),
      RUNS,
    );
  });

  it('for each of the 33 periods: aggregator = rollUpTicks = rollUp of the 1SEC buckets', () => {
    fc.assert(
      fc.property(ticksArb(10, 150), (ticks) => {
        const all = aggregate(EXCHANGE_RATE_PERIODS, ticks);
        const secs = all[0];
        expect(EXCHANGE_RATE_PERIODS[0]).toBe(SEC);
        EXCHANGE_RATE_PERIODS.forEach((p, i) => {
          expect(all[i]).toEqual(rollUpTicks(ticks, p));
          expect(all[i]).toEqual(rollUp(secs, p));
        });
      }),
      RUNS,
    );
  });

  it('month and year periods: aggregator = rollUpTicks = rollUp of 1SEC and of 1DAY', () => {
    fc.assert(
      fc.property(ticksArb(400, 80), (ticks) => {
        const periods = [SEC, getPeriod('1DAY')!, ...MONTH_PERIODS];
        const all = aggregate(periods, ticks);
        periods.forEach((p, i) => {
          expect(all[i]).toEqual(rollUpTicks(ticks, p));
          expect(all[i]).toEqual(rollUp(all[0], p));
          if (isRollupOf(p, periods[1])) expect(all[i]).toEqual(rollUp(all[1], p));
        });
      }),
      RUNS,
    );
  });

  it('rolling 1MIN up to 1HRS equals rolling 1SEC up to 1HRS', () => {
    fc.assert(
      fc.property(ticksArb(1, 200), (ticks) => {
        const [secs, mins] = aggregate([SEC, getPeriod('1MIN')!], ticks);
        const hrs = getPeriod('1HRS')!;
        expect(rollUp(mins, hrs)).toEqual(rollUp(secs, hrs));
        expect(rollUp(rollUp(secs, getPeriod('1MIN')!), hrs)).toEqual(rollUp(secs, hrs));
      }),
      RUNS,
    );
  });

  it('any nesting pair: rolling via the finer period equals rolling 1SEC directly', () => {
    const all = [...EXCHANGE_RATE_PERIODS, ...MONTH_PERIODS];
    const pairs = all.flatMap((c) => all.filter((f) => isRollupOf(c, f)).map((f) => [c, f] as const));
    fc.assert(
      fc.property(ticksArb(40, 100), fc.constantFrom(...pairs), (ticks, [coarse, fine]) => {
        const secs = rollUpTicks(ticks, SEC);
        expect(rollUp(rollUp(secs, fine), coarse)).toEqual(rollUp(secs, coarse));
      }),
      RUNS,
    );
  });

  it('snapshot/restore at any point equals the uninterrupted run', () => {
    const periods = [...EXCHANGE_RATE_PERIODS, ...MONTH_PERIODS];
    fc.assert(
      fc.property(ticksArb(10, 100), fc.nat(), (ticks, c) => {
        const cut = c % (ticks.length + 1);
        const expected = aggregate(periods, ticks);
        const got: OhlcBucket[][] = periods.map(() => []);
        const a = new OhlcAggregator(periods, (i, b) => got[i].push(b));
        for (const x of ticks.slice(0, cut)) a.update(x.t, x.rate);
        const snap = JSON.parse(JSON.stringify(a));
        const b = OhlcAggregator.fromJSON(snap, periods, (i, bk) => got[i].push(bk));
        for (const x of ticks.slice(cut)) b.update(x.t, x.rate);
        b.flush();
        expect(got).toEqual(expected);
      }),
      RUNS,
    );
  });
});

/**
 * A rate that stays is counted, not applied, until a bucket ends or the aggregator is read: every
 * read, snapshot, run and flush between such ticks sees what feeding each tick would give.
 */
describe('OhlcAggregator: ticks at an unchanged rate', () => {
  type Op =
    | { op: 'tick'; gap: number; rate: number }
    | { op: 'run'; gap: number; seconds: number; rate: number }
    | { op: 'read' | 'snapshot' | 'flush' | 'nextClose' };
  // Few rates, so that most ticks repeat the one before; gaps within a second, a minute and beyond.
  const fewRates = fc.constantFrom(1, 2, 2.5, 0);
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    { weight: 12, arbitrary: fc.record({ op: fc.constant('tick' as const), gap: gap(2), rate: fewRates }) },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('run' as const),
        gap: fc.integer({ min: 1, max: 90 }).map((s) => s * US),
        seconds: fc.integer({ min: 0, max: 150 }),
        rate: fewRates,
      }),
    },
    { weight: 3, arbitrary: fc.constantFrom({ op: 'read' as const }, { op: 'snapshot' as const }, { op: 'nextClose' as const }) },
    { weight: 1, arbitrary: fc.constant({ op: 'flush' as const }) },
  );
  const p = (id: string): PeriodRecord => getPeriod(id) ?? MONTH_PERIODS.find((m) => m.period_id === id)!;
  // With 1SEC every tick a second on ends a bucket; without it (a replay's default), runs of them do not.
  const periodSets = [['1SEC', '10SEC', '1MIN', '1HRS', '1MTH'], ['1MIN', '1HRS', '1DAY'], ['10SEC', '1MTH'], ['2MIN']].map((ids) =>
    ids.map(p),
  );

  it('closed buckets, open buckets, snapshots and nextClose equal those of the ticks fed one by one', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...periodSets),
        fc.integer({ min: 0, max: 2_000_000_000 }),
        fc.array(opArb, { minLength: 1, maxLength: 120 }),
        (periods, startS, ops) => {
          const closed: OhlcBucket[][] = periods.map(() => []);
          const onClose = (i: number, b: OhlcBucket): void => void closed[i].push(b);
          let agg = new OhlcAggregator(periods, onClose);
          /** The reference: every bucket of the ticks fed since the last flush, and of those before. */
          const expected: OhlcBucket[][] = periods.map(() => []);
          let segment: Tick[] = [];
          let t = startS * US;
          let first = true;
          const feed = (x: Tick): void => {
            segment.push(x);
            t = x.t;
            first = false;
          };
          const refBuckets = (): OhlcBucket[][] => periods.map((p) => rollUpTicks(segment, p));
          for (const o of ops) {
            if (o.op === 'tick') {
              const x = { t: first ? t : t + o.gap, rate: o.rate };
              agg.update(x.t, x.rate);
              feed(x);
            } else if (o.op === 'run') {
              const from = first ? t : t + o.gap;
              const to = from + o.seconds * US;
              agg.updateRun(from, to, US, o.rate);
              for (let s = from; s <= to; s += US) feed({ t: s, rate: o.rate });
            } else if (o.op === 'flush') {
              agg.flush();
              for (const [i, bs] of refBuckets().entries()) expected[i].push(...bs);
              segment = [];
            } else if (o.op === 'snapshot') {
              const snap = JSON.parse(JSON.stringify(agg)) as OhlcAggregatorSnapshot;
              // Each period's open bucket as stored (8 numbers: start, end, timeOpen, timeClose, open,
              // high, low, close; its count): the reference's last bucket.
              refBuckets().forEach((bs, i) => {
                const b = bs.at(-1);
                const stored = snap.state.slice(8 * i, 8 * i + 8);
                if (b === undefined) expect(snap.counts[i]).toBe(0);
                else {
                  expect(stored).toEqual([b.start, b.end, b.timeOpen, b.timeClose, b.open, b.high, b.low, b.close]);
                  expect(snap.counts[i]).toBe(b.count);
                }
              });
              agg = OhlcAggregator.fromJSON(snap, periods, onClose);
            } else {
              const ref = refBuckets();
              // Closed so far: the reference's buckets before each period's last (open) one.
              periods.forEach((_, i) => {
                const open = ref[i].at(-1);
                expect(closed[i]).toEqual([...expected[i], ...ref[i].slice(0, -1)]);
                expect(agg.openBucket(i)).toEqual(open);
              });
              if (o.op === 'nextClose') {
                const ends = ref.map((bs) => bs.at(-1)?.end ?? Number.POSITIVE_INFINITY);
                expect(agg.nextClose()).toBe(Math.min(...ends));
              } else expect(agg.openBuckets()).toEqual(ref.map((bs) => bs.at(-1)).filter((b) => b !== undefined));
            }
          }
          agg.flush();
          for (const [i, bs] of refBuckets().entries()) expected[i].push(...bs);
          expect(closed).toEqual(expected);
        },
      ),
      RUNS,
    );
  });
});
