/**
 * Properties of the whole engine: pair rates against the decimal reference over the markets that
 * the methodology's filters (rules 3, 4, 5, 7, 8, 9) leave, and the OHLC series of tracked pairs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OutlierMethod, Weighting } from '../../src/core/config.js';
import { createEngine, type Engine } from '../../src/core/engine.js';
import { rollUp, rollUpTicks, type OhlcBucket } from '../../src/core/ohlc.js';
import { EXCHANGE_RATE_PERIODS } from '../../src/core/periods.js';
import { D, refPairRate, refSpreadOk } from '../../src/reference/index.js';
import {
  boundaryMargins,
  ev,
  logArb,
  marketTextArb,
  OUTLIERS,
  posDecArb,
  recorder,
  START,
  t,
  TRACKED,
  US,
  WEIGHTINGS,
  type MarketText,
  type Rec,
} from './arbitraries.js';

const FIRST = START + 100_000; // first event 00:00:00.1
const T0 = START + US; // first tick, and the only refresh in these logs
const STALE_US = 301 * US;

// ------------------------------------------------------------------ one pair, every filter

interface ScenarioMarket {
  x: number;
  spot: boolean;
  declare: boolean;
  trades: { at: number; size: string }[];
  /** A trade after T0: counts only at the next refresh (04:00), so never here. */
  lateTrade: string | null;
  quotes: { when: 'pre' | 'post' | 'edge' | 'edge+1'; at: number; m: MarketText; wide: boolean; exact067: boolean }[];
}

interface Scenario {
  weighting: Weighting;
  outliers: OutlierMethod;
  horizon: number;
  exchanges: { declared: boolean; legit: boolean; rank: number; flip: { at: number; legit: boolean; rank: number } | null }[];
  markets: ScenarioMarket[];
}

const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    scale: fc.integer({ min: 0, max: 8 }),
    centre: fc.oneof(fc.bigInt({ min: 10n, max: 10n ** 6n }), fc.bigInt({ min: 10n ** 6n, max: 10n ** 11n })),
  })
  .chain(({ scale, centre }) =>
    fc.record({
      weighting: fc.constantFrom(...WEIGHTINGS),
      outliers: fc.constantFrom(...OUTLIERS),
      horizon: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 400 })),
      exchanges: fc.array(
        fc.record({
          declared: fc.integer({ min: 0, max: 4 }).map((x) => x > 0),
          legit: fc.integer({ min: 0, max: 6 }).map((x) => x > 0),
          rank: fc.constantFrom(0, 0, 1, 2),
          flip: fc.option(
            fc.record({ at: fc.integer({ min: 1, max: 401 * US }), legit: fc.boolean(), rank: fc.integer({ min: 0, max: 2 }) }),
            { nil: null, freq: 4 },
          ),
        }),
        { minLength: 1, maxLength: 5 },
      ),
      markets: fc.array(
        fc.record({
          x: fc.nat(),
          spot: fc.integer({ min: 0, max: 9 }).map((x) => x > 0),
          declare: fc.boolean(),
          trades: fc
            .array(
              fc.record({
                at: fc.integer({ min: 1, max: 899_999 }),
                size: fc.oneof({ arbitrary: posDecArb, weight: 6 }, { arbitrary: fc.constant('0'), weight: 1 }),
              }),
              { minLength: 0, maxLength: 2 },
            )
            .chain((tr) =>
              tr.length === 0
                ? fc.constantFrom<{ at: number; size: string }[]>([], [{ at: 500_000, size: '1.5' }], [{ at: 500_000, size: '0.25' }])
                : fc.constant(tr),
            ),
          lateTrade: fc.option(posDecArb, { nil: null, freq: 5 }),
          quotes: fc.array(
            fc.record({
              when: fc.constantFrom('pre' as const, 'pre' as const, 'post' as const, 'post' as const, 'edge' as const, 'edge+1' as const),
              at: fc.integer({ min: 0, max: 1_000_000 }),
              m: marketTextArb(scale, centre),
              wide: fc.integer({ min: 0, max: 7 }).map((x) => x === 0),
              exact067: fc.integer({ min: 0, max: 9 }).map((x) => x === 0),
            }),
            { minLength: 1, maxLength: 3 },
          ),
        }),
        { minLength: 1, maxLength: 12 },
      ),
    }),
  )
  .map((s) => ({ ...s, markets: s.markets.map((m) => ({ ...m, x: m.x % s.exchanges.length })) }));

interface Built {
  events: ReturnType<typeof ev>[];
  end: number;
  ids: string[];
  quotes: { time: number; market: number; m: MarketText; accepted: boolean }[];
}

function quoteTime(q: ScenarioMarket['quotes'][number], end: number): number | undefined {
  switch (q.when) {
    case 'pre':
      return FIRST + 1 + Math.floor((q.at / 1_000_001) * 899_998); // (first, T0)
    case 'post':
      return T0 + Math.floor((q.at / 1_000_000) * (end - T0)); // [T0, end]
    case 'edge': // age exactly 301 s at the end: still fresh
      return end - STALE_US > FIRST ? end - STALE_US : undefined;
    case 'edge+1': // 1 µs older: stale
      return end - STALE_US - 1 > FIRST ? end - STALE_US - 1 : undefined;
  }
}

function build(s: Scenario): Built {
  const end = T0 + s.horizon * US;
  const recs: { time: number; r: Rec; quote?: { market: number; m: MarketText } }[] = [];
  recs.push({ time: FIRST, r: { type: 'exchange', time: t(FIRST), exchange_id: 'ANCHOR', legitimate: true, rank: 9 } });
  s.exchanges.forEach((x, i) => {
    if (x.declared)
      recs.push({ time: FIRST, r: { type: 'exchange', time: t(FIRST), exchange_id: `X${i}`, legitimate: x.legit, rank: x.rank } });
    if (x.flip && FIRST + x.flip.at <= end) {
      const at = FIRST + x.flip.at;
      recs.push({ time: at, r: { type: 'exchange', time: t(at), exchange_id: `X${i}`, legitimate: x.flip.legit, rank: x.flip.rank } });
    }
  });
  const ids = s.markets.map((m, i) =>
    m.spot ? (m.declare ? `M${i}` : `X${m.x}_SPOT_BTC_USD_${i}`) : `X${m.x}_FTS_BTC_USD_24062${i % 10}`,
  );
  s.markets.forEach((m, i) => {
    const id = ids[i];
    if (m.declare || !m.spot) {
      recs.push({
        time: FIRST,
        r: {
          type: 'symbol',
          time: t(FIRST),
          symbol_id: id,
          exchange_id: `X${m.x}`,
          symbol_type: m.spot ? 'SPOT' : 'FUTURES',
          asset_id_base: 'BTC',
          asset_id_quote: 'USD',
        },
      });
    }
    for (const tr of m.trades)
      recs.push({ time: FIRST + tr.at, r: { type: 'trade', time: t(FIRST + tr.at), symbol_id: id, price: '1', size: tr.size } });
    if (m.lateTrade !== null && end > T0)
      recs.push({ time: end, r: { type: 'trade', time: t(end), symbol_id: id, price: '1', size: m.lateTrade } });
    for (const q of m.quotes) {
      const time = quoteTime(q, end);
      if (time === undefined) continue;
      let qm = q.m;
      if (q.wide)
        qm = { ...qm, bid: qm.bid, ask: new D(qm.ask).times(3).plus(1).toFixed() }; // spread > 0.67
      else if (q.exact067) {
        const b = new D(qm.bid);
        qm = { ...qm, bid: b.times(133).toFixed(), ask: b.times(267).toFixed() }; // spread exactly 0.67: kept
      }
      recs.push({
        time,
        r: {
          type: 'quote',
          time: t(time),
          symbol_id: id,
          bid_price: qm.bid,
          bid_size: qm.bidSize,
          ask_price: qm.ask,
          ask_size: qm.askSize,
        },
        quote: { market: i, m: qm },
      });
    }
  });
  // Log order: by time, generation order within a time (a stable sort).
  const order = recs.map((r, i) => ({ r, i })).sort((a, b) => a.r.time - b.r.time || a.i - b.i);
  return {
    events: order.map(({ r }) => ev(r.r)),
    end,
    ids,
    quotes: order
      .filter(({ r }) => r.quote)
      .map(({ r }) => ({ time: r.time, market: r.quote!.market, m: r.quote!.m, accepted: refSpreadOk(r.quote!.m.bid, r.quote!.m.ask) })),
  };
}

/** What the methodology says about each market at the end tick, from the generator's own view. */
function expected(s: Scenario, b: Built) {
  const exAt = (x: number, time: number) => {
    const e = s.exchanges[x];
    let legit = e.declared ? e.legit : true;
    let rank = e.declared ? e.rank : 0;
    if (e.flip && FIRST + e.flip.at <= time) {
      legit = e.flip.legit;
      rank = e.flip.rank;
    }
    return { legit, rank };
  };
  const T = b.end;
  const reason: (string | undefined)[] = [];
  const cand: number[] = [];
  const lastQuote: ({ time: number; m: MarketText } | undefined)[] = [];
  s.markets.forEach((m, i) => {
    let last: { time: number; m: MarketText } | undefined;
    let discarded = false;
    for (const q of b.quotes) {
      if (q.market !== i || q.time > T) continue;
      if (q.accepted) last = { time: q.time, m: q.m };
      else discarded = true;
    }
    lastQuote.push(last);
    const V = m.trades.reduce((acc, tr) => acc.plus(tr.size), new D(0));
    if (!m.spot) reason.push('not_spot');
    else if (!(exAt(m.x, T0).legit && V.gt(0))) reason.push('not_eligible');
    else if (!exAt(m.x, T).legit) reason.push('not_legitimate');
    else if (!last) reason.push(discarded ? 'spread' : 'no_quote');
    else if (T - last.time > STALE_US) reason.push('stale');
    else {
      reason.push(undefined);
      cand.push(i);
    }
  });
  const top = cand.length ? Math.max(...cand.map((i) => exAt(s.markets[i].x, T).rank)) : undefined;
  const used: number[] = [];
  for (const i of cand) {
    if (exAt(s.markets[i].x, T).rank !== top) reason[i] = 'rank';
    else used.push(i);
  }
  const volume = (i: number) => s.markets[i].trades.reduce((acc, tr) => acc.plus(tr.size), new D(0)).toFixed();
  const ref = used.length
    ? refPairRate(
        used.map((i) => ({ ...lastQuote[i]!.m, volume: volume(i) })),
        { weighting: s.weighting, outliers: s.outliers },
      )
    : undefined;
  return { reason, used, top, ref, lastQuote };
}

function runScenario(s: Scenario): { engine: Engine; b: Built } {
  const b = build(s);
  const engine = createEngine({ weighting: s.weighting, outliers: s.outliers });
  for (const e of b.events) expect(engine.apply(e)).toBeUndefined();
  engine.advanceTo(b.end);
  expect(engine.lastTickTime).toBe(b.end);
  return { engine, b };
}

describe('engine: pair rates against the decimal reference', () => {
  it('fast path equals the decimal reference within 1e-9 relative through the whole engine (filters of rules 3, 4, 5, 7, 8, 9 included)', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const { engine, b } = runScenario(s);
        const exp = expected(s, b);
        const pair = engine.pairs().find((p) => p.base === 'BTC' && p.quote === 'USD');
        const ex = engine.explainPair('BTC', 'USD');
        const mentioned = (id: string) => b.events.some((e) => 'symbolId' in e && e.symbolId === id);
        if (!ex) {
          // no SPOT market was ever mentioned, so the pair does not exist
          expect(s.markets.every((m, i) => !m.spot || !mentioned(b.ids[i]))).toBe(true);
          expect(exp.ref).toBeUndefined();
          return;
        }
        // Every market left out for the reason the methodology gives (outliers aside).
        const reasons = new Map<string, string>();
        for (const m of ex.excluded) reasons.set(m.symbol_id, m.reason as string);
        b.ids.forEach((id, i) => {
          if (!mentioned(id)) return; // the engine never heard of it
          const want = exp.reason[i];
          if (want !== undefined) expect(reasons.get(id), `${id}`).toBe(want);
          else expect(reasons.get(id) === undefined || reasons.get(id) === 'outlier', `${id}: ${reasons.get(id)}`).toBe(true);
        });
        if (!exp.ref) {
          expect(pair === undefined || !pair.fresh).toBe(true);
          return;
        }
        expect(pair?.fresh).toBe(true);
        expect(pair!.rank).toBe(exp.top);
        // kept set = the reference's exactly (a mismatch is reported with its exact distance to the
        // rule-11 boundary, see pairRate.prop.test.ts)
        const margins = boundaryMargins(exp.ref, s.outliers, exp.used.length);
        const usedIds = new Set(ex.used.map((m) => m.symbol_id));
        exp.used.forEach((i, k) => {
          const refKept = exp.ref!.used.includes(k);
          expect(usedIds.has(b.ids[i]), `${b.ids[i]}: reference kept=${refKept}, boundary margin ${margins?.[k].toString()}`).toBe(refKept);
        });
        expect(pair!.used).toBe(usedIds.size);
        const rate = engine.rate('BTC', 'USD')!;
        expect(rate.kind).toBe('direct');
        expect(rate.rate).toBe(pair!.rate);
        expect(
          new D(pair!.rate).minus(exp.ref.rate).abs().lte(exp.ref.rate.times('1e-9')),
          `${pair!.rate} vs ${exp.ref.rate.toString()}`,
        ).toBe(true);
        // time = newest quote among the markets used
        const newest = Math.max(...exp.used.filter((i) => usedIds.has(b.ids[i])).map((i) => exp.lastQuote[i]!.time));
        expect(pair!.time).toBe(newest);
      }),
      { seed: 42, numRuns: 400 },
    );
  });

  it('the rate lies between the smallest and largest price used (engine, from explainPair)', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const { engine } = runScenario(s);
        const ex = engine.explainPair('BTC', 'USD');
        if (!ex?.fresh || ex.rate === null) return;
        const prices = ex.used.map((m) => m.price!);
        expect(prices.length).toBeGreaterThan(0);
        const lo = Math.min(...prices);
        const hi = Math.max(...prices);
        const tol = 4 * Number.EPSILON * hi; // float S / W, see pairRate.prop.test.ts
        expect(ex.rate).toBeGreaterThanOrEqual(lo - tol);
        expect(ex.rate).toBeLessThanOrEqual(hi + tol);
      }),
      { seed: 42, numRuns: 200 },
    );
  });
});

// ------------------------------------------------------------------ OHLC

describe('engine: OHLC of tracked pairs', () => {
  it('OHLC: every bucket has low <= open, close <= high, and every period equals rollUp of the engine 1SEC buckets', () => {
    fc.assert(
      fc.property(logArb(), (log) => {
        const { rec, listener } = recorder();
        const fresh = new Map<string, { t: number; rate: number }[]>();
        let engine: Engine | undefined;
        listener.onTick = (T) => {
          for (const [b, q] of TRACKED) {
            const r = engine!.rate(b, q);
            if (r?.fresh) {
              const key = `${b}/${q}`;
              if (!fresh.has(key)) fresh.set(key, []);
              fresh.get(key)!.push({ t: T, rate: r.rate });
            }
          }
        };
        engine = createEngine(log.config, listener);
        for (const [b, q] of TRACKED) engine.track(b, q); // all 33 periods
        for (const e of log.events) engine.apply(e);
        engine.advanceTo(log.end);
        engine.flush();

        for (const [b, q] of TRACKED) {
          const key = `${b}/${q}`;
          const of = (period: string): OhlcBucket[] =>
            rec.buckets.filter((x) => x.track === key && x.period === period).map((x) => x.bucket);
          const secs = of('1SEC');
          // the 1SEC series is the fresh-tick series of rate(b, q) (carried rates do not count)
          expect(secs).toEqual(rollUpTicks(fresh.get(key) ?? [], EXCHANGE_RATE_PERIODS[0]));
          for (const p of EXCHANGE_RATE_PERIODS) {
            const buckets = of(p.period_id);
            const bad = buckets.filter(
              (k) =>
                !(
                  k.low <= k.open &&
                  k.low <= k.close &&
                  k.open <= k.high &&
                  k.close <= k.high &&
                  k.start <= k.timeOpen &&
                  k.timeOpen <= k.timeClose &&
                  k.timeClose < k.end &&
                  k.timeOpen % US === 0 && // ticks are whole seconds
                  k.timeClose % US === 0
                ),
            );
            expect(bad, `${key} ${p.period_id}`).toEqual([]);
            expect(buckets, `${key} ${p.period_id}`).toEqual(rollUp(secs, p));
          }
        }
      }),
      { seed: 42, numRuns: 80 },
    );
  });
});
