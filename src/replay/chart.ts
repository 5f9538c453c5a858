/**
 * The data of a rate chart at tick resolution (`xrate plot`, and the service's `/chart` extension
 * that the page at `/` draws, over a range of at most 7200 ticks: src/answers/chart.ts charts
 * longer ones by period): per tick in [from, to], the rate of a pair, each market's midpoint while
 * it contributes, the markets left out with their reason, each market's weight share, the
 * provenance of every point and, with a period, the OHLC candles ({@link tickChartData}).
 *
 * Where it comes from:
 * - **A log** is replayed through `to`; at each tick in the range the engine explains the pair
 *   (docs/methodology.md section 6), and the explanation gives the rate, the markets used (their
 *   price p) and the markets left out (their reason, and their midpoint from the quote).
 * - **A replay database** keeps rate changes, not quotes. When the inputs its run recorded (the
 *   `runs` row: files, format, config, reorder window, line limit) are still readable, they are
 *   replayed as a log is (from the newest snapshot the database holds from before the range, if
 *   any: what replaying from the start gives), and the rates are checked against the database's at
 *   the first, middle and last tick of the range; otherwise (or when they disagree: the files
 *   changed) the chart has the database's rate per tick only, with {@link ChartData.note} saying
 *   why there is no market detail.
 *
 * Markets are charted for a direct pair (and inverted for an inverse one); a cross rate's markets
 * belong to its legs, in other units: its chart has the rate, and the legs in each point's
 * provenance. Provenance is kept once per stretch of ticks over which it does not change (the
 * quotes' ages aside): each point names the explanation in force, as of the stretch's first tick.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { resolveConfig, type EngineConfig } from '../core/config.js';
import type { Engine } from '../core/engine.js';
import { isXrateError, XrateError } from '../core/errors.js';
import type { ExclusionReason } from '../core/eligibility.js';
import type { ExchangeRatesTimeseriesItem } from '../core/ohlc.js';
import { exchangeRatePeriod, EXCHANGE_RATE_PERIODS, type PeriodRecord } from '../core/periods.js';
import type { MarketProvenance, RateExplanation } from '../core/provenance.js';
import { ceilSecond, floorSecond, formatTime, parseTime, US_PER_SECOND } from '../core/time.js';
import { wireExplanation, wireRate } from '../core/wire.js';
import type { SourceFormat } from '../io/source.js';
import { ReplayDatabase, ReplayDatabaseError } from './database.js';
import { isDatabaseSource, queryHistory, replayTo, type QuerySource } from './query.js';
import type { ReplayCheckpoint } from '../io/store.js';

/** Most candles of a chart with a period. */
const CHART_MAX_CANDLES = 2000;

/** One market of a direct (or inverse) pair: its price at each tick while it contributes. */
export interface ChartMarket {
  symbol_id: string;
  exchange_id: string;
  /** Per tick: the market's price p (docs/methodology.md rule 5) while used, else null. */
  price: (number | null)[];
}

/** A market left out, from the tick it was left out for a reason at a midpoint. */
export interface ChartExclusion {
  /** The tick, unix seconds. */
  t: number;
  time: string;
  symbol_id: string;
  exchange_id: string;
  reason: ExclusionReason;
  detail: string | null;
  /** Midpoint of the market's quote, (bid + ask) / 2 (inverted for an inverse pair). */
  price: number;
}

/** A market's weight share along a chart (docs/methodology.md section 9, `XRATE_MARKET_WEIGHT_SHARE`). */
export interface ChartWeightShare {
  symbol_id: string;
  exchange_id: string;
  /** Per point: the share in force (after the tick; at a bucket's end), null where the market had none. */
  share: (number | null)[];
}

/** What a chart draws (see the module description). */
export interface ChartData {
  asset_id_base: string;
  asset_id_quote: string;
  time_start: string;
  time_end: string;
  period_id: string | null;
  /** `tick` (one point per tick) or the period id of the points (src/answers/chartResolution.ts). */
  resolution: string;
  /** `log`: replayed; `database`: a replay database (its run's inputs replayed when `markets_detail`). */
  source: 'log' | 'database';
  /** Whether markets, exclusions and provenance are charted (false: the rate only, see `note`). */
  markets_detail: boolean;
  /** Why some of the chart is missing, or null. */
  note: string | null;
  /** The points' times, unix seconds: the ticks, or the buckets' starts at a period resolution. */
  ticks: number[];
  /** The pair's rate after each tick (fresh or carried, as written: wireNumber), or each bucket's close; null when it has none. */
  rate: (number | null)[];
  markets: ChartMarket[];
  /** A point whenever a market is left out, or its reason or midpoint changes while it is. */
  exclusions: ChartExclusion[];
  /** With a period: the OHLC candles whose start lies in [time_start, time_end). */
  candles: ExchangeRatesTimeseriesItem[] | null;
  /** Explanations, once per stretch of ticks over which they hold (their rates as written: wireExplanation). */
  provenance: RateExplanation[];
  /** Per tick, the index of its explanation in `provenance` (-1: none). */
  point_provenance: number[];
  /** Each market of a direct (or inverse) pair, sorted by symbol_id: its weight share per point; null when unknown (see `note`). */
  weight_share: ChartWeightShare[] | null;
  /** Per point, how many markets of the pair had a share > 0; null where `weight_share` is. */
  markets_used: (number | null)[] | null;
}

/** A chart request (times in µs). */
export interface ChartQuery {
  base: string;
  quote: string;
  from: number;
  to: number;
  /** Candles of this exchange-rate period (`xrate periods`). */
  periodId?: string;
}

/** The whole-second ticks in [from, to] (the caller keeps them to a chart's tick resolution: src/answers/chartResolution.ts). */
function tickSpan(q: ChartQuery): { first: number; last: number; n: number } {
  if (!(q.to > q.from))
    throw new XrateError('usage', `the end (${formatTime(q.to)}) must be after the start (${formatTime(q.from)})`, { field: 'time_end' });
  const first = ceilSecond(q.from);
  const last = floorSecond(q.to);
  const n = last >= first ? (last - first) / US_PER_SECOND + 1 : 0;
  if (n === 0) throw new XrateError('usage', `no whole second lies in [${formatTime(q.from)}, ${formatTime(q.to)}]`, { field: 'time_end' });
  return { first, last, n };
}

/**
 * The exchange-rate period of a chart's `period_id`.
 * @throws {@link XrateError} `usage` naming `period_id` for an unknown one
 */
export function chartPeriod(periodId: string): PeriodRecord {
  const p = exchangeRatePeriod(periodId);
  if (!p) {
    throw new XrateError('usage', `unknown period_id "${periodId}" (one of ${EXCHANGE_RATE_PERIODS.map((x) => x.period_id).join(', ')})`, {
      field: 'period_id',
    });
  }
  return p;
}

/** Checks the period id; candles are cut at {@link CHART_MAX_CANDLES}. */
function checkPeriod(q: ChartQuery): string | undefined {
  if (q.periodId === undefined) return undefined;
  const p = chartPeriod(q.periodId);
  const len = p.length_months > 0 ? p.length_months * 28 * 86_400 : p.length_seconds;
  if ((q.to - q.from) / US_PER_SECOND / len > CHART_MAX_CANDLES) {
    throw new XrateError(
      'usage',
      `period ${p.period_id} gives more than ${CHART_MAX_CANDLES} candles over the range: choose a longer one`,
      { field: 'period_id' },
    );
  }
  return p.period_id;
}

/** The explanation without what changes at every tick (its tick, the quotes' ages): equal keys, one stretch. */
function stretchKey(e: RateExplanation): string {
  return JSON.stringify(e, (k, v) => (k === 'tick' || k === 'quote_age_seconds' ? undefined : v));
}

/** The explanation as at tick T (the engine's own when T is its last tick; else its tick and ages moved to T). */
function explainedAt(e: RateExplanation, T: number, engineTick: number | undefined): RateExplanation {
  if (engineTick === T) return e;
  const age = (m: MarketProvenance): MarketProvenance => {
    if (m.quote_time === undefined) return m;
    const tq = parseTime(m.quote_time);
    return tq === undefined ? m : { ...m, quote_age_seconds: (T - tq) / US_PER_SECOND };
  };
  return {
    ...e,
    tick: formatTime(T),
    legs: e.legs.map((l) => ({
      ...l,
      explanation: { ...l.explanation, tick: formatTime(T), used: l.explanation.used.map(age), excluded: l.explanation.excluded.map(age) },
    })),
  };
}

/** Collects a chart's series from the explanations of ticks first..last, one tick at a time. */
class Collector {
  readonly rate: (number | null)[] = [];
  readonly markets = new Map<string, ChartMarket>();
  readonly exclusions: ChartExclusion[] = [];
  readonly provenance: RateExplanation[] = [];
  readonly pointProvenance: number[] = [];
  /** Per market of the pair, its weight share per tick as the explanation gives it (used: its share; left out: 0). */
  readonly shares = new Map<string, ChartWeightShare>();
  private lastKey = '';
  /** Per market, the last exclusion charted and whether it is still left out. */
  private readonly out = new Map<string, { reason: string; price: number; tick: number }>();

  constructor(
    private readonly first: number,
    private readonly n: number,
  ) {}

  add(T: number, e: RateExplanation, engineTick: number | undefined): void {
    const i = (T - this.first) / US_PER_SECOND;
    // Ticks of the span before the engine's first one have no rate.
    while (this.rate.length < i) {
      this.rate.push(null);
      this.pointProvenance.push(-1);
    }
    this.rate.push(e.rate);
    if (e.kind === 'none' || e.kind === 'identity') {
      this.pointProvenance.push(e.kind === 'none' ? -1 : this.keep(T, e, engineTick));
      return;
    }
    this.pointProvenance.push(this.keep(T, e, engineTick));
    if (e.legs.length !== 1) return; // a cross rate: its markets are its legs'
    const leg = e.legs[0];
    const inv = (p: number): number => (leg.inverted ? 1 / p : p);
    for (const m of leg.explanation.used) {
      if (m.weight_share !== undefined) this.share(m).share[i] = m.weight_share;
      if (m.price === undefined) continue;
      this.market(m).price[i] = inv(m.price);
      this.out.delete(m.symbol_id);
    }
    const left = new Set<string>();
    for (const m of leg.explanation.excluded) {
      // A market of the pair left out has a share of 0 (docs/methodology.md section 9); one not SPOT is in no pair.
      if (m.reason !== 'not_spot') this.share(m).share[i] = 0;
      if (m.reason === undefined || m.bid_price === undefined || m.ask_price === undefined) continue;
      const price = inv((m.bid_price + m.ask_price) / 2);
      left.add(m.symbol_id);
      const prev = this.out.get(m.symbol_id);
      if (prev && prev.reason === m.reason && prev.price === price && prev.tick === T - US_PER_SECOND) {
        prev.tick = T;
        continue;
      }
      this.out.set(m.symbol_id, { reason: m.reason, price, tick: T });
      this.exclusions.push({
        t: T / US_PER_SECOND,
        time: formatTime(T),
        symbol_id: m.symbol_id,
        exchange_id: m.exchange_id,
        reason: m.reason,
        detail: m.detail ?? null,
        price,
      });
    }
    for (const id of [...this.out.keys()]) if (!left.has(id)) this.out.delete(id);
  }

  private share(m: MarketProvenance): ChartWeightShare {
    let c = this.shares.get(m.symbol_id);
    if (!c) {
      c = { symbol_id: m.symbol_id, exchange_id: m.exchange_id, share: new Array<number | null>(this.n).fill(null) };
      this.shares.set(m.symbol_id, c);
    }
    return c;
  }

  private market(m: MarketProvenance): ChartMarket {
    let c = this.markets.get(m.symbol_id);
    if (!c) {
      c = { symbol_id: m.symbol_id, exchange_id: m.exchange_id, price: new Array<number | null>(this.n).fill(null) };
      this.markets.set(m.symbol_id, c);
    }
    return c;
  }

  private keep(T: number, e: RateExplanation, engineTick: number | undefined): number {
    const key = stretchKey(e);
    if (key !== this.lastKey || this.provenance.length === 0) {
      this.lastKey = key;
      this.provenance.push(explainedAt(e, T, engineTick));
    }
    return this.provenance.length - 1;
  }
}

/**
 * Replays `src` through the last tick and collects the explanation of every tick of the span;
 * from `resumeFrom` on, a snapshot of a replay of the same inputs taken before the span (what an
 * uninterrupted replay gives: docs/methodology.md section 7), else from the start.
 */
async function collectFromLog(
  src: QuerySource,
  q: ChartQuery,
  span: { first: number; last: number; n: number },
  resumeFrom?: ReplayCheckpoint,
): Promise<Collector> {
  resolveConfig(src.config ?? {}); // fail fast on a bad config
  const c = new Collector(span.first, span.n);
  let engine: Engine | undefined;
  await replayTo(src, span.last, {
    resumeFrom,
    onEngine: (e) => {
      engine = e;
    },
    listener: {
      onTick: (T) => {
        if (T >= span.first && T <= span.last) c.add(T, engine!.explain(q.base, q.quote), engine!.lastTickTime);
      },
    },
  });
  return c;
}

/** The chart's series once collected: ticks with no rate at the end of the log are filled with null. */
function finish(
  c: Collector,
  span: { first: number; n: number },
): Pick<ChartData, 'ticks' | 'rate' | 'markets' | 'exclusions' | 'provenance' | 'point_provenance' | 'weight_share' | 'markets_used'> {
  while (c.rate.length < span.n) {
    c.rate.push(null);
    c.pointProvenance.push(-1);
  }
  const ticks = Array.from({ length: span.n }, (_, i) => span.first / US_PER_SECOND + i);
  const markets = [...c.markets.values()].sort(bySymbol);
  const shares = c.shares.size > 0 ? [...c.shares.values()].sort(bySymbol) : null;
  return {
    ticks,
    rate: c.rate,
    markets,
    exclusions: c.exclusions,
    provenance: c.provenance,
    point_provenance: c.pointProvenance,
    weight_share: shares,
    markets_used: shares && marketsUsed(shares, span.n),
  };
}

/** Order of markets in a chart: by symbol_id, in code-unit order. */
function bySymbol(a: { symbol_id: string }, b: { symbol_id: string }): number {
  return a.symbol_id < b.symbol_id ? -1 : a.symbol_id > b.symbol_id ? 1 : 0;
}

/**
 * Per point, how many of the markets had a share > 0; null at a point where none had a share.
 *
 * @example
 * ```ts
 * marketsUsed([{ symbol_id: 'A', exchange_id: 'X', share: [1, 0.5, null] }, { symbol_id: 'B', exchange_id: 'Y', share: [0, 0.5, null] }], 3);
 * // [1, 2, null]
 * ```
 */
export function marketsUsed(shares: readonly ChartWeightShare[], n: number): (number | null)[] {
  const out = new Array<number | null>(n).fill(null);
  for (const m of shares) {
    for (let i = 0; i < n; i++) {
      const v = m.share[i];
      if (v === null) continue;
      out[i] = (out[i] ?? 0) + (v > 0 ? 1 : 0);
    }
  }
  return out;
}

/** What a replay database's run recorded of its inputs. */
interface RecordedRun {
  inputs: string[];
  options: { format?: SourceFormat; reorderWindowUs?: number; maxLineBytes?: number };
  config: Partial<EngineConfig>;
}

/** Words a failure of the database module as a chart reports it. */
export function chartDatabaseError(e: unknown): unknown {
  if (!(e instanceof ReplayDatabaseError)) return e;
  const f = e.failure;
  if (f.kind === 'partial-outputs')
    return new XrateError('no_data', `the database "${f.path}" holds the partial outputs of replay run ${f.runId} (status "${f.status}")`);
  if (f.kind === 'restore-failed') return f.cause;
  return new XrateError('no_data', `the database "${f.path}" holds no complete replay run`);
}

/** Opens the replay database a chart reads, its failures worded as {@link chartDatabaseError} words them. */
export function openChartDatabase(path: string): ReplayDatabase {
  try {
    return ReplayDatabase.open(path);
  } catch (e) {
    throw chartDatabaseError(e);
  }
}

/** The rate per tick of the span from the database's rate changes (and cross rates by its graph search). */
function databaseRates(db: ReplayDatabase, q: ChartQuery, span: { first: number; n: number }): (number | null)[] {
  const last = db.coverage.lastTick;
  const firstTick = db.coverage.firstTick;
  const out: (number | null)[] = [];
  for (let i = 0; i < span.n; i++) {
    const T = span.first + i * US_PER_SECOND;
    if (firstTick === undefined || last === undefined || T < firstTick || T > last) out.push(null);
    else out.push(db.pairTableAt(T).rate(q.base, q.quote)?.raw ?? null);
  }
  return out;
}

/**
 * The chart of rate(base, quote) over [from, to] at tick resolution, from a log or a replay
 * database (see the module description): what src/answers/chart.ts answers for a range of at most
 * 7200 ticks. Its weight shares are the explanations' (the shares `XRATE_MARKET_WEIGHT_SHARE`
 * stores, docs/methodology.md section 9); null for a cross pair, and with the rate only.
 *
 * @throws {@link XrateError} `usage` for a bad range or period (its `field` the service's parameter at fault,
 *   `time_end` or `period_id`), `no_data` for a pair with no rate in the range
 *
 * @example
 * ```ts
 * const c = await tickChartData({ inputs: ['log.ndjson'] }, { base: 'BTC', quote: 'USD', from, to, periodId: '5MIN' });
 * c.rate.length === c.ticks.length; // true
 * ```
 */
export async function tickChartData(src: QuerySource, q: ChartQuery): Promise<ChartData> {
  const span = tickSpan(q);
  const periodId = checkPeriod(q);
  const head = {
    asset_id_base: q.base,
    asset_id_quote: q.quote,
    time_start: formatTime(q.from),
    time_end: formatTime(q.to),
    period_id: periodId ?? null,
    resolution: 'tick',
  };
  let body: Omit<ChartData, keyof typeof head | 'candles'>;
  if (isDatabaseSource(src)) body = await fromDatabase(src.inputs[0], q, span);
  else {
    const c = await collectFromLog(src, q, span);
    body = { source: 'log', markets_detail: true, note: null, ...finish(c, span) };
  }
  if (body.rate.every((r) => r === null)) {
    throw new XrateError('no_data', `no rate for ${q.base}/${q.quote} between ${head.time_start} and ${head.time_end}`);
  }
  let candles: ExchangeRatesTimeseriesItem[] | null = null;
  if (periodId !== undefined) {
    try {
      candles = await queryHistory(src, [q.base, q.quote], periodId, q.from, q.to, CHART_MAX_CANDLES);
    } catch (e) {
      // A database keeps the OHLC of the pairs tracked during the replay only.
      if (!isXrateError(e)) throw e;
      body.note = [body.note, `no candles: ${e.message}`].filter(Boolean).join('; ');
    }
  }
  // The rates as written (docs/methodology.md section 7); the candles are (queryHistory).
  return { ...head, ...body, rate: body.rate.map(wireRate), provenance: body.provenance.map(wireExplanation), candles };
}

async function fromDatabase(
  path: string,
  q: ChartQuery,
  span: { first: number; last: number; n: number },
): Promise<Omit<ChartData, 'asset_id_base' | 'asset_id_quote' | 'time_start' | 'time_end' | 'period_id' | 'resolution' | 'candles'>> {
  const db = openChartDatabase(path);
  try {
    const nc = db.notCovered(span.first, span.last);
    if (nc?.kind === 'before-from')
      throw new XrateError('no_data', `the database has output from ${formatTime(nc.from)} on (the replay's --from)`);
    if (nc?.kind === 'after-stop')
      throw new XrateError('no_data', `the database covers its log only up to ${formatTime(nc.last)} (the replay stopped at --to)`);
    const rates = databaseRates(db, q, span);
    const run = db.store.latestCompleteRun();
    const recorded: RecordedRun | undefined = run && {
      inputs: JSON.parse(run.inputs) as string[],
      options: JSON.parse(run.options) as RecordedRun['options'],
      config: JSON.parse(run.config) as Partial<EngineConfig>,
    };
    const rateOnly = (why: string) => ({
      source: 'database' as const,
      markets_detail: false,
      note: `the rate only, from the database's rate changes: ${why}`,
      ...finish(new Collector(span.first, span.n), span),
      rate: rates,
      weight_share: null,
      markets_used: null,
    });
    if (!recorded || recorded.inputs.length === 0) return rateOnly('the database keeps no quotes and its run recorded no inputs');
    const absent = recorded.inputs.find((f) => !existsSync(f));
    if (absent !== undefined) {
      return rateOnly(
        `the database keeps no quotes, and the log its run read, "${absent}", is not found (from the current directory) to replay`,
      );
    }
    const c = await collectFromLog(
      {
        inputs: recorded.inputs,
        format: recorded.options.format,
        config: recorded.config,
        reorderWindowUs: recorded.options.reorderWindowUs,
        maxLineBytes: recorded.options.maxLineBytes,
      },
      q,
      span,
      // A short range near the end of a long log: from the newest snapshot before it (written with --snapshot-every).
      db.store.latestSnapshot(span.first, { packed: true }),
    );
    const got = finish(c, span);
    // Checked where the database has ticks: after its last one, both are the final engine advanced.
    const { firstTick, lastTick } = db.coverage;
    const lo = firstTick === undefined ? span.n : Math.max(0, Math.ceil((firstTick - span.first) / US_PER_SECOND));
    const hi = lastTick === undefined ? -1 : Math.min(span.n - 1, Math.floor((lastTick - span.first) / US_PER_SECOND));
    for (const i of lo <= hi ? [lo, (lo + hi) >> 1, hi] : []) {
      if (got.rate[i] !== rates[i]) {
        return rateOnly(
          `the database keeps no quotes, and the log its run read, replayed again, no longer gives its rates ` +
            `(at ${formatTime(span.first + i * US_PER_SECOND)}: ${got.rate[i]} against ${rates[i]}): the files changed`,
        );
      }
    }
    return { source: 'database', markets_detail: true, note: null, ...got };
  } finally {
    db.close();
  }
}
