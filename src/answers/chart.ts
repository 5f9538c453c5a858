/**
 * The data of a rate chart at any range (`xrate plot`, and the service's `/chart` extension that
 * the page at `/` draws): one function, {@link chartData}, shared by the command and the service.
 *
 * The resolution is chartResolution.ts's: at most 7200 ticks are charted tick by tick with the
 * markets' detail (src/replay/chart.ts, which replays the logs); a longer range by the buckets of
 * one exchange-rate period, each point a bucket's close:
 *
 * - **From a replay database**, the buckets are those the history route answers (stored OHLC,
 *   rolled up, or made from the pair's change series: `ReplayDatabase.buckets`); a pair with no
 *   stored series (a cross pair not tracked) has the rate in force at each bucket's last tick, and
 *   no candles. Each market's `XRATE_MARKET_WEIGHT_SHARE` (stored by a replay unless `--no-own-metrics`) is read at
 *   each point, one index seek per point and market (`DatabaseMetrics.valuesAt`), never by loading
 *   the points in between; its markets are those of the pair in the final engine.
 * - **From a log**, the log is replayed once with the pair tracked at the period and xrate's own
 *   metrics computed; the weight shares are those the replay computed, in force at each point.
 *
 * A weight share is the one in force at the point: after the tick, or at the end of the bucket
 * (its last tick). `markets_used` counts the markets with a share > 0 there. At tick resolution
 * with the markets' detail, the shares are those of the replay's explanations (the very values
 * the own metric stores, so a database without own metrics has them too); with the rate only, the
 * stored ones.
 *
 * @module
 */
import type { Engine } from '../core/engine.js';
import { XrateError } from '../core/errors.js';
import { type OhlcBucket, toTimeseriesItem } from '../core/ohlc.js';
import { bucketEnd, bucketStartAtOrAfter, EXCHANGE_RATE_PERIODS, type PeriodRecord } from '../core/periods.js';
import type { PairExplanation } from '../core/provenance.js';
import { formatTime, US_PER_SECOND } from '../core/time.js';
import { wireRate } from '../core/wire.js';
import type { StoredMetrics } from '../io/storeTypes.js';
import {
  openChartDatabase,
  chartPeriod,
  type ChartData,
  type ChartQuery,
  type ChartWeightShare,
  marketsUsed,
  tickChartData,
} from '../replay/chart.js';
import type { ReplayDatabase } from '../replay/database.js';
import { isDatabaseSource, logOptions, type QuerySource, replayModule } from '../replay/query.js';
import {
  bucketsIn,
  CHART_MAX_TICKS,
  CHART_POINTS,
  type ChartResolution,
  chartResolution,
  checkPoints,
  ticksIn,
} from './chartResolution.js';
import { invertBucket } from './types.js';

/** The metric of a market's weight share (docs/methodology.md section 9). */
const WEIGHT_SHARE = 'XRATE_MARKET_WEIGHT_SHARE';

/** A chart request: {@link ChartQuery} and the points the client can draw. */
export interface ChartRequest extends ChartQuery {
  /** Points the client can draw (50..5000, default 2000): the resolution's bound (chartResolution.ts). */
  points?: number;
}

/** A period resolution's points: the buckets' starts in [from, to). */
interface Grid {
  period: PeriodRecord;
  /** The buckets' starts, µs. */
  starts: number[];
  /** Where a value is read for each point: the bucket's last tick (its end - 1 µs: values at or before). */
  at: number[];
}

function gridOf(period: PeriodRecord, from: number, to: number): Grid {
  const starts: number[] = [];
  for (let s = bucketStartAtOrAfter(from, period); s < to; s = bucketEnd(s, period)) starts.push(s);
  return { period, starts, at: starts.map((s) => bucketEnd(s, period) - 1) };
}

/** What a period resolution reads of the rate: each point's close, the candles (null: none), and why some is missing. */
interface PeriodRates {
  rate: (number | null)[];
  candles: ChartData['candles'];
  notes: string[];
}

/** Each point's close from the buckets (by start), and the buckets as the history route words them. */
function fromBuckets(grid: Grid, buckets: readonly OhlcBucket[]): PeriodRates {
  const close = new Map(buckets.map((b) => [b.start, b.close]));
  return { rate: grid.starts.map((s) => close.get(s) ?? null), candles: buckets.map((b) => toTimeseriesItem(b, formatTime)), notes: [] };
}

/** The markets of a direct (or inverse) pair in `engine` (used and left out), sorted by symbol_id; undefined for a cross pair. */
function pairMarkets(engine: Engine, base: string, quote: string): { symbol_id: string; exchange_id: string }[] | undefined {
  const e: PairExplanation | undefined = engine.explainPair(base, quote) ?? engine.explainPair(quote, base);
  if (!e) return undefined;
  const all = [...e.used, ...e.excluded.filter((m) => m.reason !== 'not_spot')].map((m) => ({
    symbol_id: m.symbol_id,
    exchange_id: m.exchange_id,
  }));
  return all.sort((a, b) => (a.symbol_id < b.symbol_id ? -1 : a.symbol_id > b.symbol_id ? 1 : 0));
}

/** The weight shares and the count of markets used, or null with the reason. */
type Shares =
  | { weight_share: ChartWeightShare[]; markets_used: (number | null)[] }
  | { weight_share: null; markets_used: null; why: string };

const CROSS = 'a cross rate: its markets are its legs';

function withCounts(shares: ChartWeightShare[], n: number): Shares {
  return { weight_share: shares, markets_used: marketsUsed(shares, n) };
}

/** The stored weight shares of the pair's markets at `times` (µs, values at or before each). */
function storedShares(db: ReplayDatabase, base: string, quote: string, times: readonly number[]): Shares {
  let engine: Engine;
  try {
    engine = db.restoreFinalEngine();
  } catch (e) {
    if (!(e instanceof XrateError)) throw e;
    return { weight_share: null, markets_used: null, why: 'the database holds no engine state to list the pair’s markets' };
  }
  const markets = pairMarkets(engine, base, quote);
  if (!markets) return { weight_share: null, markets_used: null, why: CROSS };
  const metrics: StoredMetrics = db.store.metrics();
  const keys = markets.map((m) => ({ metric_id: WEIGHT_SHARE, exchange_id: m.exchange_id, symbol_id: m.symbol_id, asset_id: '' }));
  if (!keys.some((k) => metrics.hasSeries(k))) {
    return {
      weight_share: null,
      markets_used: null,
      why: 'the database stores no weight shares of its markets (xrate’s own metrics: a replay stores them unless --no-own-metrics)',
    };
  }
  return withCounts(
    markets.map((m, i) => ({ ...m, share: metrics.valuesAt(keys[i], times) })),
    times.length,
  );
}

/** Why a chart has no weight shares, worded for its note. */
function sharesNote(s: Shares): string | undefined {
  return s.weight_share === null ? `no weight shares: ${s.why}` : undefined;
}

/** The note of a period resolution. */
function periodNote(ticks: number, period: PeriodRecord): string {
  return (
    `the range holds ${ticks} ticks, more than the ${CHART_MAX_TICKS} charted one by one: each point is a ${period.period_id} bucket's close, ` +
    `without the markets' prices, the markets left out or the provenance`
  );
}

/**
 * The period of a range too long for ticks: `period_id` when given (at most {@link CHART_POINTS}.max
 * buckets, and one `available` holds for), else chartResolution's; undefined when no period is available.
 */
function periodFor(
  q: ChartRequest,
  points: number,
  forced: PeriodRecord | undefined,
  available: (p: PeriodRecord) => boolean,
  servable: () => string,
): PeriodRecord | undefined {
  if (forced) {
    const n = bucketsIn(q.from, q.to, forced);
    if (n > CHART_POINTS.max) {
      throw new XrateError(
        'usage',
        `period ${forced.period_id} gives ${n} candles over the range, more than ${CHART_POINTS.max}: choose a longer one`,
        {
          field: 'period_id',
        },
      );
    }
    if (!available(forced))
      throw new XrateError('usage', `period ${forced.period_id} cannot be served: ${servable()}`, { field: 'period_id' });
    return forced;
  }
  const r: ChartResolution | undefined = chartResolution(q.from, q.to, points, available);
  if (r?.kind === 'period') return r.period;
  if (!EXCHANGE_RATE_PERIODS.some(available)) return undefined;
  const longest = EXCHANGE_RATE_PERIODS[EXCHANGE_RATE_PERIODS.length - 1];
  throw new XrateError(
    'usage',
    `the range needs ${bucketsIn(q.from, q.to, longest)} points even at ${longest.period_id} (the longest period that can be served), more than ${points}: ` +
      'narrow the range or ask for more points',
    { field: 'points' },
  );
}

/** A period resolution from a replay database (see the module description). */
function periodFromDatabase(path: string, q: ChartRequest, points: number, forced: PeriodRecord | undefined): ChartData {
  return withDatabase(path, (db) => {
    const nc = db.notCovered(q.from, q.to);
    if (nc?.kind === 'before-from')
      throw new XrateError('no_data', `the database has output from ${formatTime(nc.from)} on (the replay's --from)`);
    if (nc?.kind === 'after-stop')
      throw new XrateError('no_data', `the database covers its log only up to ${formatTime(nc.last)} (the replay stopped at --to)`);
    const available = (p: PeriodRecord): boolean => db.seriesFor(q.base, q.quote, p, true) !== undefined;
    // Why a period cannot be served (only when one cannot: listing the stored periods reads every bucket of the pair).
    const servable = (): string => {
      const stored = [...db.storedPeriods(q.base, q.quote), ...db.storedPeriods(q.quote, q.base)].map((p) => p.period_id);
      return stored.length
        ? `it cannot be rolled up from the stored periods ${[...new Set(stored)].join(', ')} of ${q.base}/${q.quote}`
        : `the database keeps no OHLC of ${q.base}/${q.quote}`;
    };
    let period = periodFor(q, points, forced, available, servable);
    let rates: PeriodRates;
    let grid: Grid;
    if (period) {
      grid = gridOf(period, q.from, q.to);
      const series = db.seriesFor(q.base, q.quote, period, true)!;
      const first = grid.starts[0] ?? q.to;
      const got = grid.starts.length ? db.buckets(series, period, first, q.to, bucketEnd(q.to - 1, period), grid.starts.length) : [];
      rates = fromBuckets(grid, series.inverted ? got.map(invertBucket) : got);
    } else {
      // No stored series (a cross pair not tracked): the rate in force at each bucket's last tick.
      period = periodFor(
        q,
        points,
        forced,
        () => true,
        () => '',
      )!;
      grid = gridOf(period, q.from, q.to);
      const { firstTick, lastTick } = db.coverage;
      const rate = grid.starts.map((s, i) => {
        if (firstTick === undefined || lastTick === undefined || s > lastTick) return null;
        const T = Math.floor(Math.min(grid.at[i], lastTick) / US_PER_SECOND) * US_PER_SECOND;
        return T < firstTick ? null : (db.pairTableAt(T).rate(q.base, q.quote)?.raw ?? null);
      });
      rates = { rate, candles: null, notes: [`no candles: ${servable()} (each point is the rate in force at the bucket's last tick)`] };
    }
    const shares = storedShares(db, q.base, q.quote, grid.at);
    return body(q, 'database', grid, period, rates, shares);
  });
}

/** The answer of a period resolution. */
function body(
  q: ChartRequest,
  source: ChartData['source'],
  grid: Grid,
  period: PeriodRecord,
  rates: PeriodRates,
  shares: Shares,
): ChartData {
  const n = grid.starts.length;
  const notes = [periodNote(ticksIn(q.from, q.to), period), ...rates.notes, sharesNote(shares)].filter((x): x is string => !!x);
  return {
    asset_id_base: q.base,
    asset_id_quote: q.quote,
    time_start: formatTime(q.from),
    time_end: formatTime(q.to),
    period_id: rates.candles ? period.period_id : null,
    resolution: period.period_id,
    source,
    markets_detail: false,
    note: notes.join('; '),
    ticks: grid.starts.map((s) => s / US_PER_SECOND),
    rate: rates.rate,
    markets: [],
    exclusions: [],
    candles: rates.candles,
    provenance: [],
    point_provenance: new Array<number>(n).fill(-1),
    weight_share: shares.weight_share,
    markets_used: shares.markets_used,
  };
}

/** The value in force at `t` of a series of (time, value) points in time order (ties: the later point); null before its first. */
function valueAt(times: readonly number[], values: readonly number[], t: number): number | null {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? null : values[lo - 1];
}

/** A period resolution from a log: one replay tracking the pair at the period, with xrate's own metrics (see the module description). */
async function periodFromLog(src: QuerySource, q: ChartRequest, points: number, forced: PeriodRecord | undefined): Promise<ChartData> {
  const period = periodFor(
    q,
    points,
    forced,
    () => true,
    () => '',
  )!;
  const grid = gridOf(period, q.from, q.to);
  const first = grid.starts[0] ?? q.to;
  const buckets: OhlcBucket[] = [];
  const shareLog = new Map<string, { times: number[]; values: number[] }>();
  let engine: Engine | undefined;
  await (await replayModule()).replay({
    ...logOptions(src),
    to: bucketEnd(q.to - 1, period) - 1,
    tailUs: 0,
    track: [`${q.base}/${q.quote}`],
    periods: [period.period_id],
    ownMetrics: true,
    onEngine: (e) => {
      engine = e;
    },
    listener: {
      onBucket: (_t, _p, b) => void (b.start >= first && b.start < q.to && buckets.push(b)),
      onOwnMetrics: (b) => {
        for (let i = 0; i < b.length; i++) {
          if (b.metricId(i) !== WEIGHT_SHARE) continue;
          const id = b.symbolId(i)!;
          let s = shareLog.get(id);
          if (!s) {
            s = { times: [], values: [] };
            shareLog.set(id, s);
          }
          s.times.push(b.time);
          s.values.push(b.value[i]);
        }
      },
    },
  });
  buckets.sort((a, b) => a.start - b.start);
  const rates = fromBuckets(grid, buckets);
  const markets = engine && pairMarkets(engine, q.base, q.quote);
  const shares: Shares = markets
    ? withCounts(
        markets.map((m) => {
          const s = shareLog.get(m.symbol_id);
          return { ...m, share: grid.at.map((t) => (s ? valueAt(s.times, s.values, t) : null)) };
        }),
        grid.at.length,
      )
    : { weight_share: null, markets_used: null, why: CROSS };
  return body(q, 'log', grid, period, rates, shares);
}

/**
 * The chart of rate(base, quote) over [from, to] from a log or a replay database, at the
 * resolution of chartResolution.ts (see the module description).
 *
 * @throws {@link XrateError} `usage` naming the parameter at fault (`time_end` for a bad range,
 *   `points`, `period_id`), `no_data` for a pair with no rate in the range
 *
 * @example
 * ```ts
 * const c = await chartData({ inputs: ['out/xrate.sqlite'] }, { base: 'BTC', quote: 'USD', from, to, points: 800 });
 * c.resolution; // 'tick', or a period such as '6HRS'
 * c.rate.length === c.ticks.length; // true
 * ```
 */
export async function chartData(src: QuerySource, q: ChartRequest): Promise<ChartData> {
  if (!(q.to > q.from))
    throw new XrateError('usage', `the end (${formatTime(q.to)}) must be after the start (${formatTime(q.from)})`, { field: 'time_end' });
  const points = checkPoints(q.points ?? CHART_POINTS.default);
  const forced = q.periodId === undefined ? undefined : chartPeriod(q.periodId);
  const db = isDatabaseSource(src);
  let c: ChartData;
  if (ticksIn(q.from, q.to) <= CHART_MAX_TICKS) {
    c = await tickChartData(src, q);
    // With the markets' detail, the shares of the replay's explanations (those the own metric stores); else the stored ones.
    if (db && !c.markets_detail) {
      const stored = withDatabase(src.inputs[0], (d) =>
        storedShares(
          d,
          q.base,
          q.quote,
          c.ticks.map((t) => t * US_PER_SECOND),
        ),
      );
      const why = sharesNote(stored);
      c = {
        ...c,
        weight_share: stored.weight_share,
        markets_used: stored.markets_used,
        note: why ? [c.note, why].filter(Boolean).join('; ') : c.note,
      };
    } else if (c.weight_share === null) c = { ...c, note: [c.note, `no weight shares: ${CROSS}`].filter(Boolean).join('; ') };
    return c;
  }
  c = db ? periodFromDatabase(src.inputs[0], q, points, forced) : await periodFromLog(src, q, points, forced);
  if (c.rate.every((r) => r === null))
    throw new XrateError('no_data', `no rate for ${q.base}/${q.quote} between ${c.time_start} and ${c.time_end}`);
  // The rates as written (docs/methodology.md section 7); the candles are (toTimeseriesItem).
  return { ...c, rate: c.rate.map(wireRate) };
}

/** Runs `fn` on the replay database at `path`, closed after. */
function withDatabase<T>(path: string, fn: (db: ReplayDatabase) => T): T {
  const db = openChartDatabase(path);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
