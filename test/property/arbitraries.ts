/**
 * Shared generators and helpers of the property tests (engine, pair rate, graph, replay).
 *
 * Numbers are generated as exact decimal TEXTS (integer units and a scale of 0..8 decimals), so
 * the decimal reference (src/reference) sees exactly what the event parser keeps, and the engine
 * sees the same texts through `parseEvent`.
 */
import fc from 'fast-check';
import type { EngineListener, PairRateChange, TrackedPair } from '../../src/core/engine.js';
import { parseEvent } from '../../src/core/events.js';
import type { OhlcBucket } from '../../src/core/ohlc.js';
import type { PeriodRecord } from '../../src/core/periods.js';
import { formatTime, parseTime } from '../../src/core/time.js';
import { isReject, type XrateEvent } from '../../src/core/types.js';
import type { EngineConfig, OutlierMethod, Weighting } from '../../src/core/config.js';
import { D, type RefPairResult } from '../../src/reference/index.js';

export const US = 1_000_000;
/** 2024-01-01T00:00:00Z in µs. Logs start at START + 0.1 s so that T0 = START + 1 s. */
export const START = parseTime('2024-01-01T00:00:00Z')!;
/** Every weighting and outlier option of rules 6 and 11. */
export const WEIGHTINGS: readonly Weighting[] = ['trade_x_passive', 'trade', 'passive', 'microprice'];
export const OUTLIERS: readonly OutlierMethod[] = ['weighted_sigma', 'leave_one_out', 'mad', 'none'];

// ------------------------------------------------------------------ decimals

/** `units` x 10^-scale as a plain decimal text (trailing zeros kept: "1.50" stays "1.50"). */
export function fmtDec(units: bigint, scale: number): string {
  if (units < 0n) throw new RangeError(`fmtDec: negative ${units}`);
  const s = units.toString().padStart(scale + 1, '0');
  return scale === 0 ? s : `${s.slice(0, -scale)}.${s.slice(-scale)}`;
}

/** A positive decimal with up to 8 decimals and up to ~10 significant digits. */
export const posDecArb: fc.Arbitrary<string> = fc
  .record({ u: fc.bigInt({ min: 1n, max: 10n ** 10n }), s: fc.integer({ min: 0, max: 8 }) })
  .map(({ u, s }) => fmtDec(u, s));

/** A size: mostly positive, sometimes an exact "0" (unknown size, rule 6). */
export const sizeArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: posDecArb, weight: 8 },
  { arbitrary: fc.constantFrom('0', '0.0', '0.00000000'), weight: 1 },
);

/** One market as {@link refPairRate} sees it (all exact decimal texts). */
export interface MarketText {
  bid: string;
  ask: string;
  bidSize: string;
  askSize: string;
  volume: string;
}

/**
 * Markets of one pair around a common centre: most close to it, some far (outlier candidates),
 * some exactly at it (ties, MAD = 0), random spreads (possibly locked), sizes with exact zeros
 * (the q = 0 fall-back), volumes > 0 as for eligible markets.
 */
export function pairMarketsArb(minN: number, maxN: number): fc.Arbitrary<MarketText[]> {
  return fc
    .record({
      scale: fc.integer({ min: 0, max: 8 }),
      centre: fc.oneof(
        fc.bigInt({ min: 1n, max: 1000n }),
        fc.bigInt({ min: 1000n, max: 10n ** 7n }),
        fc.bigInt({ min: 10n ** 7n, max: 10n ** 12n }),
      ),
    })
    .chain(({ scale, centre }) => fc.array(marketTextArb(scale, centre), { minLength: minN, maxLength: maxN }));
}

/** One market around centre `c` (units of 10^-scale); see {@link pairMarketsArb}. */
export function marketTextArb(scale: number, c: bigint): fc.Arbitrary<MarketText> {
  return fc
    .record({
      off: fc.oneof(
        { arbitrary: fc.constant(0n), weight: 2 },
        { arbitrary: fc.bigInt({ min: -c / 100n, max: c / 100n }), weight: 5 },
        { arbitrary: fc.bigInt({ min: -c / 2n, max: c }), weight: 1 },
      ),
      h: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: c / 20n })),
      skew: fc.bigInt({ min: 0n, max: 1n }),
      zeroQ: fc.integer({ min: 0, max: 24 }).map((x) => x === 0),
      bidSize: sizeArb,
      askSize: sizeArb,
      volume: posDecArb,
    })
    .map(({ off, h, skew, zeroQ, bidSize, askSize, volume }) => {
      let bid = c + off - h;
      if (bid < 1n) bid = 1n;
      const ask = c + off + h + skew;
      return {
        bid: fmtDec(bid, scale),
        ask: fmtDec(ask, scale),
        bidSize: zeroQ ? '0' : bidSize,
        askSize: zeroQ ? '0' : askSize,
        volume,
      };
    });
}

// ------------------------------------------------------------------ numbers

export type Dec = InstanceType<typeof D>;

/**
 * Exact distance of each market from its rule-11 threshold, |p - centre| - k * scale (0 = exactly
 * on the boundary), from the reference's own prices and weights; undefined when the rule did not run.
 */
export function boundaryMargins(ref: RefPairResult, outliers: OutlierMethod, n: number, k = 3): Dec[] | undefined {
  if (n < 3 || outliers === 'none') return undefined;
  const { prices, weights } = ref;
  if (outliers === 'weighted_sigma' || outliers === 'mad') {
    return prices.map((p) => p.minus(ref.mu!).abs().minus(ref.sigma!.times(k)));
  }
  return prices.map((p, i) => {
    let W = new D(0);
    let S = new D(0);
    let Q = new D(0);
    prices.forEach((pj, j) => {
      if (j === i) return;
      W = W.plus(weights[j]);
      S = S.plus(weights[j].times(pj));
      Q = Q.plus(weights[j].times(pj).times(pj));
    });
    if (W.isZero()) return new D(-1); // kept, far from any boundary
    const mu = S.div(W);
    const sigma = W.times(Q).minus(S.times(S)).sqrt().div(W);
    return p.minus(mu).abs().minus(sigma.times(k));
  });
}

/** |a - b| <= rel * max(|a|, |b|). */
export function relClose(a: number, b: number, rel: number): boolean {
  if (a === b) return true;
  return Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b));
}

// ------------------------------------------------------------------ event logs

/** A snake_case event record, as read from NDJSON / CSV. */
export type Rec = Record<string, unknown> & { type: string; time: string };

/** Parses a record with {@link parseEvent}; throws on a reject (generators only make valid events). */
export function ev(r: Rec): XrateEvent {
  const e = parseEvent(r);
  if (isReject(e)) throw new Error(`generator made a bad event ${JSON.stringify(r)}: ${e.message}`);
  return e;
}

export const t = (us: number): string => formatTime(us);

/** A pair of the multi-pair logs: its centre price in units of 10^-scale. */
export interface PairSpec {
  base: string;
  quote: string;
  centre: bigint;
  scale: number;
}

export const PAIR_SPECS: readonly PairSpec[] = [
  { base: 'BTC', quote: 'USD', centre: 4_000_000n, scale: 2 },
  { base: 'ETH', quote: 'USD', centre: 200_000n, scale: 2 },
  { base: 'ETH', quote: 'BTC', centre: 50_000n, scale: 6 },
  { base: 'BTC', quote: 'EUR', centre: 3_700_000n, scale: 2 },
  { base: 'EUR', quote: 'USD', centre: 108_000n, scale: 5 },
  // the reverse of BTC/USD: when both have a rate, rule 12 picks one edge
  { base: 'USD', quote: 'BTC', centre: 2_500n, scale: 8 },
];
export const EXCHANGES = ['EXA', 'EXB', 'EXC'] as const;

/** One step of a generated log after the pre-T0 block. */
type Step =
  | { dt: number; kind: 'quote'; m: number; off: number; h: number; wide: boolean }
  | { dt: number; kind: 'trade'; m: number; size: string }
  | { dt: number; kind: 'exchange'; x: number; legit: boolean; rank: number };

export interface Market {
  id: string;
  pair: PairSpec;
  exchange: string;
}

/** A generated multi-pair log: typed events in log order, plus what generated them. */
export interface Log {
  /** Time of the first event (START + 0.1 s, or just before 04:00 to cross a refresh). */
  first: number;
  /** Events in log order (non-decreasing times). */
  events: XrateEvent[];
  /** Grouping key of each event: one per market (quote, trade, symbol) or exchange. */
  keys: string[];
  /** Index of the first event after the declaration block (symbol and exchange events at `first`). */
  afterDeclarations: number;
  markets: Market[];
  config: Partial<EngineConfig>;
  /** Time to advance to after the last event (end of the replay). */
  end: number;
}

const dtArb: fc.Arbitrary<number> = fc.oneof(
  { arbitrary: fc.constant(0), weight: 4 }, // same time as the previous event
  { arbitrary: fc.integer({ min: 1, max: 999_999 }), weight: 3 },
  { arbitrary: fc.integer({ min: 1, max: 20 }).map((s) => s * US), weight: 3 }, // whole seconds
  { arbitrary: fc.integer({ min: 1, max: 20 }).map((s) => s * US + 1), weight: 1 },
  { arbitrary: fc.integer({ min: 200, max: 400 }).map((s) => s * US), weight: 1 }, // staleness
);

/**
 * A multi-pair log over several minutes: exchanges (ranks, legitimacy flips), markets of up to
 * six pairs on three exchanges (SPOT by pattern, plus non-SPOT decoys), trades before T0 (and
 * after, counting only at the next refresh), quotes with random spreads, some beyond 0.67,
 * same-time bursts, whole-second times and long gaps. Optionally starts 90 s before 04:00 so a
 * 4-hour refresh happens inside the log.
 *
 * @param declare - emit a `symbol` event for every market in the declaration block at `first`,
 *   so that interning order (market, asset and pair ids) does not depend on later events.
 */
export function logArb(opts: { declare?: boolean; maxSteps?: number } = {}): fc.Arbitrary<Log> {
  const maxSteps = opts.maxSteps ?? 120;
  return fc
    .record({
      nearRefresh: fc.boolean(),
      pairMask: fc.array(
        fc.integer({ min: 0, max: 2 }).map((x) => x > 0),
        { minLength: PAIR_SPECS.length, maxLength: PAIR_SPECS.length },
      ),
      venues: fc.array(fc.subarray([0, 1, 2], { minLength: 1 }), { minLength: PAIR_SPECS.length, maxLength: PAIR_SPECS.length }),
      exchanges: fc.array(
        fc.record({
          declared: fc.boolean(),
          legit: fc.integer({ min: 0, max: 5 }).map((x) => x > 0),
          rank: fc.integer({ min: 0, max: 2 }),
        }),
        {
          minLength: 3,
          maxLength: 3,
        },
      ),
      decoy: fc.boolean(),
      config: fc.record({
        weighting: fc.constantFrom(...WEIGHTINGS),
        outliers: fc.constantFrom(...OUTLIERS),
        crossMethod: fc.constantFrom('bfs' as const, 'layered' as const),
      }),
      preTimes: fc.constantFrom<number[]>([200_000, 500_000, 500_000, 900_000], [500_000], [300_000, 600_000, 999_999]),
      seed: fc.integer(),
    })
    .chain((g) => {
      const pairs = PAIR_SPECS.filter((_, i) => i === 0 || g.pairMask[i]);
      const markets: Market[] = [];
      pairs.forEach((p) => {
        const pi = PAIR_SPECS.indexOf(p);
        for (const x of g.venues[pi]) markets.push({ id: `${EXCHANGES[x]}_SPOT_${p.base}_${p.quote}`, pair: p, exchange: EXCHANGES[x] });
      });
      const nm = markets.length;
      const pre = fc.array(
        fc.record({
          m: fc.integer({ min: 0, max: nm - 1 }),
          at: fc.constantFrom(...g.preTimes),
          trade: fc.option(fc.oneof(posDecArb, fc.constant('0')), { nil: undefined, freq: 3 }),
          off: fc.integer({ min: -300, max: 300 }),
          h: fc.integer({ min: 0, max: 200 }),
        }),
        { minLength: nm, maxLength: 3 * nm },
      );
      const step: fc.Arbitrary<Step> = fc.oneof(
        {
          arbitrary: fc.record({
            dt: dtArb,
            kind: fc.constant('quote' as const),
            m: fc.integer({ min: 0, max: nm - 1 }),
            off: fc.integer({ min: -300, max: 300 }),
            h: fc.integer({ min: 0, max: 200 }),
            wide: fc.integer({ min: 0, max: 12 }).map((x) => x === 0),
          }),
          weight: 10,
        },
        {
          arbitrary: fc.record({ dt: dtArb, kind: fc.constant('trade' as const), m: fc.integer({ min: 0, max: nm - 1 }), size: posDecArb }),
          weight: 2,
        },
        {
          arbitrary: fc.record({
            dt: dtArb,
            kind: fc.constant('exchange' as const),
            x: fc.integer({ min: 0, max: 2 }),
            legit: fc.integer({ min: 0, max: 2 }).map((x) => x > 0),
            rank: fc.integer({ min: 0, max: 2 }),
          }),
          weight: 1,
        },
      );
      return fc.tuple(
        fc.constant(g),
        fc.constant(markets),
        pre,
        fc.array(step, { minLength: 5, maxLength: maxSteps, size: 'medium' }),
        fc.integer({ min: 0, max: 5 }),
      );
    })
    .map(([g, markets, pre, steps, tail]) => buildLog(g, markets, pre, steps, tail, opts.declare ?? false));
}

/** Quote record of market `m` at `time` around its pair's centre (0.1 % steps per `off` unit / 100). */
function quoteRec(m: Market, time: number, off: number, h: number, wide: boolean): Rec {
  const c = m.pair.centre;
  const mid = c + (c * BigInt(off)) / 10_000n; // +-3 %
  const half = wide ? (mid * 9n) / 10n : (c * BigInt(h)) / 100_000n; // wide: spread 1.8 > 0.67
  const bid = mid - half < 1n ? 1n : mid - half;
  const ask = mid + half;
  const zeroQ = (off & 15) === 5; // sizes unknown: the pair's q = 0 fall-back (rule 6)
  return {
    type: 'quote',
    time: t(time),
    symbol_id: m.id,
    bid_price: fmtDec(bid, m.pair.scale),
    bid_size: zeroQ ? '0' : fmtDec(BigInt(1 + ((off * 7 + h * 13) & 1023)), 3),
    ask_price: fmtDec(ask, m.pair.scale),
    ask_size: zeroQ ? '0' : fmtDec(BigInt(1 + ((off * 11 + h * 5) & 2047)), 3),
  };
}

function buildLog(
  g: {
    nearRefresh: boolean;
    exchanges: { declared: boolean; legit: boolean; rank: number }[];
    decoy: boolean;
    config: Partial<EngineConfig>;
  },
  markets: Market[],
  pre: { m: number; at: number; trade: string | undefined; off: number; h: number }[],
  steps: Step[],
  tail: number,
  declare: boolean,
): Log {
  const first = START + (g.nearRefresh ? 4 * 3600 * US - 90 * US : 0) + 100_000;
  const recs: { r: Rec; key: string }[] = [];
  // Declaration block, all at `first`.
  g.exchanges.forEach((x, i) => {
    if (x.declared)
      recs.push({
        r: { type: 'exchange', time: t(first), exchange_id: EXCHANGES[i], legitimate: x.legit, rank: x.rank },
        key: `x:${EXCHANGES[i]}`,
      });
  });
  if (declare) {
    for (const m of markets) {
      recs.push({
        r: {
          type: 'symbol',
          time: t(first),
          symbol_id: m.id,
          exchange_id: m.exchange,
          symbol_type: 'SPOT',
          asset_id_base: m.pair.base,
          asset_id_quote: m.pair.quote,
        },
        key: m.id,
      });
    }
  }
  if (g.decoy) {
    // A non-SPOT market with the assets of BTC/USD: never used (rule 3).
    recs.push({
      r: {
        type: 'symbol',
        time: t(first),
        symbol_id: 'EXA_PERP_BTC_USD',
        exchange_id: 'EXA',
        symbol_type: 'PERPETUAL',
        asset_id_base: 'BTC',
        asset_id_quote: 'USD',
      },
      key: 'EXA_PERP_BTC_USD',
    });
  }
  const afterDeclarations = recs.length;
  // Pre-T0 block: trades (volume for the first refresh) and quotes, sorted by time (stable).
  const preRecs: { at: number; r: Rec; key: string }[] = [];
  for (const p of pre) {
    const m = markets[p.m];
    const at = first - 100_000 + p.at;
    if (p.trade !== undefined)
      preRecs.push({ at, key: m.id, r: { type: 'trade', time: t(at), symbol_id: m.id, price: '1', size: p.trade, taker_side: 'BUY' } });
    preRecs.push({ at, key: m.id, r: quoteRec(m, at, p.off, p.h, false) });
  }
  if (g.decoy) {
    preRecs.push({
      at: first + 1,
      key: 'EXA_PERP_BTC_USD',
      r: { type: 'trade', time: t(first + 1), symbol_id: 'EXA_PERP_BTC_USD', price: '1', size: '5' },
    });
    preRecs.push({
      at: first + 1,
      key: 'EXA_PERP_BTC_USD',
      r: {
        type: 'quote',
        time: t(first + 1),
        symbol_id: 'EXA_PERP_BTC_USD',
        bid_price: '1',
        bid_size: '1',
        ask_price: '1.1',
        ask_size: '1',
      },
    });
  }
  preRecs.sort((a, b) => a.at - b.at);
  for (const p of preRecs) recs.push({ r: p.r, key: p.key });
  // Steps after T0 (T0 = first rounded up to a second).
  let now = first - 100_000 + US;
  for (const s of steps) {
    now += s.dt;
    if (s.kind === 'quote') recs.push({ r: quoteRec(markets[s.m], now, s.off, s.h, s.wide), key: markets[s.m].id });
    else if (s.kind === 'trade')
      recs.push({ r: { type: 'trade', time: t(now), symbol_id: markets[s.m].id, price: '1', size: s.size }, key: markets[s.m].id });
    else
      recs.push({
        r: { type: 'exchange', time: t(now), exchange_id: EXCHANGES[s.x], legitimate: s.legit, rank: s.rank },
        key: `x:${EXCHANGES[s.x]}`,
      });
  }
  return {
    first,
    events: recs.map((x) => ev(x.r)),
    keys: recs.map((x) => x.key),
    afterDeclarations,
    markets,
    config: g.config,
    end: now + tail * US,
  };
}

// ------------------------------------------------------------------ recording outputs

/** Everything an engine emits, in order, as plain data. */
export interface Recording {
  changes: PairRateChange[];
  buckets: { track: string; period: string; bucket: OhlcBucket }[];
}

export function recorder(): { rec: Recording; listener: EngineListener } {
  const rec: Recording = { changes: [], buckets: [] };
  const listener: EngineListener = {
    onPairRate: (c) => rec.changes.push({ ...c }),
    onBucket: (track: TrackedPair, period: PeriodRecord, bucket: OhlcBucket) =>
      rec.buckets.push({ track: `${track.base}/${track.quote}`, period: period.period_id, bucket: { ...bucket } }),
  };
  return { rec, listener };
}

/** Pairs tracked by the log tests: direct, inverse and cross. */
export const TRACKED: readonly [string, string][] = [
  ['BTC', 'USD'],
  ['USD', 'BTC'],
  ['ETH', 'EUR'],
];

// ------------------------------------------------------------------ small PRNG

/** mulberry32: a deterministic PRNG for shuffles driven by a generated seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
