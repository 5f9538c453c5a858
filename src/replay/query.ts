/**
 * Answers "what was the rate at TIME" and "what are the OHLC buckets of a pair" from an event
 * log (by replaying it) or from a database written by `xrate replay`.
 *
 * From a log the answer is exactly the engine's. From a database, the same answers:
 * - rates at T within the replay come from the newest row of every pair at or before T (the
 *   `rates` table holds a row whenever a pair's rate, time, rank, markets used, volume or
 *   freshness changed, and a full-state row at the start of the output), and cross rates from
 *   the same graph search the engine uses (the run's cross method);
 * - rates at T after the replay's last tick come from the engine's final state advanced to T
 *   with no further events (the log has none);
 * - times the database cannot answer as the log would (before the replay's --from, or after
 *   the --to it stopped at) are refused with a message naming the covered span;
 * - history comes from the stored buckets, rolled up from the largest stored period that nests
 *   in the one asked for (1SEC, 1MIN, 1HRS and 1DAY are stored by default), which equals the
 *   roll-up of 1SEC (section 6). Pairs that were not tracked during the replay have no buckets:
 *   ask the log instead.
 *
 * @module
 */
import { resolveConfig, type EngineConfig, type ResolvedConfig } from '../core/config.js';
import { restoreEngine, type Engine } from '../core/engine.js';
import { RateGraph, type PairView } from '../core/graph.js';
import { rollUp, toTimeseriesItem, type ExchangeRatesTimeseriesItem, type OhlcBucket } from '../core/ohlc.js';
import { bucketEnd, bucketStart, EXCHANGE_RATE_PERIODS, getPeriod, isMonthPeriod, isRollupOf, type PeriodRecord } from '../core/periods.js';
import type { RateExplanation } from '../core/provenance.js';
import { formatTime, US_PER_SECOND } from '../core/time.js';
import type { SourceFormat } from '../io/source.js';
import { ReplayStore } from '../io/store.js';
import { replay } from './replay.js';

/** One answer of {@link queryRates}: the interface's ExchangeRate shape. */
export interface RateAnswer {
  asset_id_base: string;
  asset_id_quote: string;
  rate: number | null;
  time: string | null;
}

/** Where a query reads from. */
export interface QuerySource {
  /** Event logs, or one replay database. */
  inputs: string[];
  format?: SourceFormat;
  config?: Partial<EngineConfig>;
  /** Buffer and sort within this window while replaying (as `replay --reorder-window`). */
  reorderWindowUs?: number;
}

/** Maximum `limit` of a history query (the interface's bound). */
export const HISTORY_MAX_LIMIT = 100_000;

/** True when the single input is a database written by `xrate replay`. */
export function isDatabaseSource(src: QuerySource): boolean {
  return src.inputs.length === 1 && src.format !== 'ndjson' && src.format !== 'csv' && ReplayStore.isReplayDatabase(src.inputs[0]);
}

function floorSecond(t: number): number {
  return Math.floor(t / US_PER_SECOND) * US_PER_SECOND;
}

/** The newest complete run of a replay database, its config and what it covers. */
function coverage(store: ReplayStore): { cfg: ResolvedConfig; first: number | null; last: number | null; from?: number; stopped: boolean } {
  const run = store.latestCompleteRun();
  if (!run) throw new Error(`xrate: database "${store.path}" holds no complete replay run`);
  const options = JSON.parse(run.options) as { from?: number };
  return { cfg: resolveConfig(JSON.parse(run.config) as Partial<EngineConfig>), first: run.first_tick, last: run.last_tick, from: options.from, stopped: run.stopped === 1 };
}

/** Refuses a time the database cannot answer the way the log would. */
function checkCovered(path: string, c: ReturnType<typeof coverage>, start: number, end: number): void {
  if (c.from !== undefined && start < c.from) {
    throw new Error(`xrate: database "${path}" has output from ${formatTime(c.from)} on (the replay's --from); ask the log for earlier times`);
  }
  if (c.stopped && c.last !== null && end > c.last) {
    throw new Error(`xrate: database "${path}" covers its log only up to ${formatTime(c.last)} (the replay stopped at --to); ask the log for later times`);
  }
}

/** The engine at the end of the replay, advanced (with no further events) to `at`. */
function finalEngine(store: ReplayStore, at: number): Engine {
  const cp = store.latestSnapshot();
  if (!cp) throw new Error(`xrate: database "${store.path}" holds no engine state`);
  const engine = restoreEngine(cp.engine);
  engine.advanceTo(at);
  return engine;
}

/**
 * The rates of `pairs` as of the last tick at or before `at` (µs), in the order given.
 *
 * @example
 * ```ts
 * await queryRates({ inputs: ['log.ndjson'] }, parseTime('2024-03-02T04:30:20Z')!, [['BTC', 'USD']]);
 * // [{ asset_id_base: 'BTC', asset_id_quote: 'USD', rate: 64112.56, time: '2024-03-02T04:30:19.8120000Z' }]
 * ```
 */
export async function queryRates(src: QuerySource, at: number, pairs: [string, string][]): Promise<RateAnswer[]> {
  if (isDatabaseSource(src)) return ratesFromDatabase(src.inputs[0], at, pairs);
  const summary = await replay({ inputs: src.inputs, format: src.format, config: src.config, to: at, track: [], reorderWindowUs: src.reorderWindowUs });
  return pairs.map(([b, q]) => answer(summary.engine, b, q));
}

function answer(engine: Engine, b: string, q: string): RateAnswer {
  const r = engine.rate(b, q);
  return { asset_id_base: b, asset_id_quote: q, rate: r ? r.rate : null, time: r ? formatTime(r.time) : null };
}

function ratesFromDatabase(path: string, at: number, pairs: [string, string][]): RateAnswer[] {
  const store = ReplayStore.open(path, { readonly: true });
  try {
    const c = coverage(store);
    const T = floorSecond(at);
    checkCovered(path, c, T, T);
    // After the last tick of a replay that read its whole log, the log has no more events: the
    // engine's final state advanced to T answers exactly as replaying the log to T would.
    if (c.last !== null && T > c.last) {
      const engine = finalEngine(store, at);
      return pairs.map(([b, q]) => answer(engine, b, q));
    }
    const hasTick = c.first !== null && T >= c.first;
    const rows = store.ratesAt(T).filter((r) => r.rate !== null && r.time !== null);
    const names: string[] = [];
    const ids = new Map<string, number>();
    const id = (a: string): number => {
      let i = ids.get(a);
      if (i === undefined) {
        i = names.length;
        ids.set(a, i);
        names.push(a);
      }
      return i;
    };
    const n = rows.length;
    const view: PairView = {
      count: n,
      base: Int32Array.from(rows, (r) => id(r.base)),
      quote: Int32Array.from(rows, (r) => id(r.quote)),
      rate: Float64Array.from(rows, (r) => r.rate!),
      time: Float64Array.from(rows, (r) => r.time!),
      rank: Float64Array.from(rows, (r) => r.rank ?? 0),
      used: Int32Array.from(rows, (r) => r.used),
      volume: Float64Array.from(rows, (r) => r.volume),
      fresh: Uint8Array.from(rows, (r) => r.fresh),
    };
    const graph = new RateGraph((i) => names[i]);
    graph.sync(view, names.length, 1);
    return pairs.map(([b, q]) => {
      const none: RateAnswer = { asset_id_base: b, asset_id_quote: q, rate: null, time: null };
      if (!hasTick) return none;
      if (b === q) return { ...none, rate: 1, time: formatTime(T) };
      const bi = ids.get(b);
      const qi = ids.get(q);
      if (bi === undefined || qi === undefined) return none;
      const r = graph.cross(bi, qi, view, c.cfg.crossMethod);
      return r ? { ...none, rate: r.rate, time: formatTime(r.time) } : none;
    });
  } finally {
    store.close();
  }
}

/** Validates a period id of the exchange-rate interface. */
export function exchangeRatePeriod(id: string): PeriodRecord {
  const p = getPeriod(id);
  if (!p || isMonthPeriod(p)) {
    throw new Error(`xrate: unknown period_id "${id}" (one of ${EXCHANGE_RATE_PERIODS.map((x) => x.period_id).join(', ')})`);
  }
  return p;
}

/**
 * OHLC timeseries of rate(base, quote) for the buckets whose start lies in [from, to), oldest
 * first, at most `limit` (section 6; direct, inverse or cross pair).
 */
export async function queryHistory(
  src: QuerySource,
  pair: [string, string],
  periodId: string,
  from: number,
  to: number,
  limit = 100,
): Promise<ExchangeRatesTimeseriesItem[]> {
  const period = exchangeRatePeriod(periodId);
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_MAX_LIMIT) throw new Error(`xrate: limit must be an integer in 1..${HISTORY_MAX_LIMIT}, got ${limit}`);
  if (!(to > from)) throw new Error(`xrate: time_end (${formatTime(to)}) must be after time_start (${formatTime(from)})`);
  const first = bucketStart(from, period) === from ? from : bucketEnd(from, period);
  if (first >= to) return [];
  const lastEnd = bucketEnd(to - 1, period);
  let buckets: OhlcBucket[];
  if (isDatabaseSource(src)) buckets = historyFromDatabase(src.inputs[0], pair, period, first, lastEnd);
  else {
    buckets = [];
    resolveConfig(src.config ?? {}); // fail fast on a bad config
    await replay({
      inputs: src.inputs,
      format: src.format,
      config: src.config,
      reorderWindowUs: src.reorderWindowUs,
      to: lastEnd - 1,
      // Ticks run through the end of the log (its last event's second), as in a full replay,
      // and no further than the last bucket asked for.
      tailUs: 0,
      track: [`${pair[0]}/${pair[1]}`],
      periods: [period.period_id],
      listener: { onBucket: (_t, _p, b) => void (b.start >= first && b.start < to && buckets.push(b)) },
    });
  }
  return buckets
    .filter((b) => b.start >= first && b.start < to)
    .sort((a, b) => a.start - b.start)
    .slice(0, limit)
    .map((b) => toTimeseriesItem(b, formatTime));
}

function historyFromDatabase(path: string, [b, q]: [string, string], period: PeriodRecord, first: number, lastEnd: number): OhlcBucket[] {
  const store = ReplayStore.open(path, { readonly: true });
  try {
    checkCovered(path, coverage(store), first, lastEnd - 1);
    const stored = store.storedPeriods(b, q).map((id) => getPeriod(id)).filter((p): p is PeriodRecord => !!p);
    if (stored.length === 0) {
      throw new Error(`xrate: database "${path}" has no OHLC for ${b}/${q}: it was not tracked during the replay (use --track ${b}/${q}, or query the log)`);
    }
    const usable = stored.filter((p) => p.period_id === period.period_id || isRollupOf(period, p));
    if (usable.length === 0) {
      throw new Error(`xrate: period ${period.period_id} cannot be rolled up from the stored periods ${stored.map((p) => p.period_id).join(', ')} of ${b}/${q}`);
    }
    const len = (p: PeriodRecord): number => (p.length_months > 0 ? p.length_months * 31 * 86_400 : p.length_seconds);
    const best = usable.sort((x, y) => len(y) - len(x))[0];
    const rows = store.buckets(b, q, best.period_id, first, lastEnd);
    return best.period_id === period.period_id ? rows : rollUp(rows, period);
  } finally {
    store.close();
  }
}

/**
 * The provenance of rate(base, quote): from a log, at the last tick <= `at` (default: the end of
 * the log); from a database, at its final state.
 */
export async function queryExplain(src: QuerySource, pair: [string, string], at?: number): Promise<RateExplanation> {
  if (isDatabaseSource(src)) {
    const store = ReplayStore.open(src.inputs[0], { readonly: true });
    try {
      const c = coverage(store);
      const last = c.last;
      if (at !== undefined && last !== null && floorSecond(at) < last) {
        throw new Error(`xrate: the database holds the engine state at ${formatTime(last)} only; explain an earlier time from the log`);
      }
      if (at !== undefined) checkCovered(src.inputs[0], c, floorSecond(at), floorSecond(at));
      return finalEngine(store, at ?? last ?? 0).explain(pair[0], pair[1]);
    } finally {
      store.close();
    }
  }
  const summary = await replay({ inputs: src.inputs, format: src.format, config: src.config, to: at, track: [], reorderWindowUs: src.reorderWindowUs });
  return summary.engine.explain(pair[0], pair[1]);
}
