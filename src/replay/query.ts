/**
 * Answers "what was the rate at TIME" and "what are the OHLC buckets of a pair" from an event
 * log (by replaying it) or from a database written by `xrate replay`.
 *
 * From a log the answer is exactly the engine's. From a database (database.ts, shared with the
 * service), the same answers:
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
 *   roll-up of 1SEC (docs/methodology.md section 5). Pairs that were not tracked during the replay have no buckets:
 *   ask the log instead.
 *
 * @module
 */
import { resolveConfig, type EngineConfig } from '../core/config.js';
import type { Engine } from '../core/engine.js';
import { OWN_METRICS } from '../core/engine/ownMetrics.js';
import type { MetricsSource } from '../core/metrics/source.js';
import { toTimeseriesItem, type ExchangeRatesTimeseriesItem, type OhlcBucket } from '../core/ohlc.js';
import { bucketEnd, bucketStartAtOrAfter, EXCHANGE_RATE_PERIODS, exchangeRatePeriod, type PeriodRecord } from '../core/periods.js';
import type { RateExplanation } from '../core/provenance.js';
import { floorSecond, formatTime } from '../core/time.js';
import { wireExplanation, wireNumber } from '../core/wire.js';
import type { SourceFormat } from '../io/source.js';
import { ReplayStore } from '../io/store.js';
import { partialOutputs, ReplayDatabase, ReplayDatabaseError, type NotCovered } from './database.js';
import { MemoryMetrics } from './memoryMetrics.js';
import type { ReplayOptions, ReplaySummary } from './replay.js';
import { XrateError } from '../core/errors.js';

/** One answer of {@link queryRates}: the interface's ExchangeRate shape, the rate as written (wireNumber). */
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
  /** Maximum line length while replaying (as `replay --max-line-bytes`). */
  maxLineBytes?: number;
}

/** Maximum `limit` of a history query (the interface's bound). */
export const HISTORY_MAX_LIMIT = 100_000;

/** True when the single input is a database written by `xrate replay`. */
export function isDatabaseSource(src: QuerySource): boolean {
  return src.inputs.length === 1 && src.format !== 'ndjson' && src.format !== 'csv' && ReplayStore.isReplayDatabase(src.inputs[0]);
}

/** The replay options that read a query's log as its replay did: inputs, format, config, reorder window, line limit. */
export function logOptions(src: QuerySource): Pick<ReplayOptions, 'inputs' | 'format' | 'config' | 'reorderWindowUs' | 'maxLineBytes'> {
  return {
    inputs: src.inputs,
    format: src.format,
    config: src.config,
    reorderWindowUs: src.reorderWindowUs,
    maxLineBytes: src.maxLineBytes,
  };
}

/**
 * Replays a query's log through `at` (the whole log when undefined), keeping no OHLC; `extra`
 * adds a listener and a hook that receives the engine (chart.ts explains each tick with them), or
 * a snapshot to start from.
 */
export async function replayTo(
  src: QuerySource,
  at: number | undefined,
  extra: Pick<ReplayOptions, 'listener' | 'onEngine' | 'resumeFrom'> = {},
): Promise<ReplaySummary> {
  return (await replayModule()).replay({ ...logOptions(src), to: at, track: [], ...extra });
}

/**
 * The replay's module, loaded when a query or a chart reads a log: a query of a replay database
 * needs none of the readers it loads (the Parquet libraries among them), and starts about 90 ms sooner.
 */
export function replayModule(): Promise<typeof import('./replay.js')> {
  return import('./replay.js');
}

/** Opens a replay database for a query; its failures become {@link XrateError}s worded for the CLI. */
function openDatabase(path: string): ReplayDatabase {
  try {
    return ReplayDatabase.open(path);
  } catch (e) {
    throw cliError(e);
  }
}

/** Words a failure of the database module as the CLI reports it. */
function cliError(e: unknown): unknown {
  if (!(e instanceof ReplayDatabaseError)) return e;
  const f = e.failure;
  if (f.kind === 'no-complete-run') return new XrateError('no_data', `database "${f.path}" holds no complete replay run`);
  if (f.kind === 'no-engine-state') return new XrateError('no_data', `database "${f.path}" holds no engine state`);
  if (f.kind === 'partial-outputs') return new XrateError('unavailable', partialOutputs(f.path, f.runId, f.status));
  return f.cause;
}

/** Refuses a time the database cannot answer the way the log would. */
function checkCovered(path: string, nc: NotCovered | undefined): void {
  if (nc?.kind === 'before-from') {
    throw new XrateError(
      'no_data',
      `database "${path}" has output from ${formatTime(nc.from)} on (the replay's --from); ask the log for earlier times`,
    );
  }
  if (nc?.kind === 'after-stop') {
    throw new XrateError(
      'no_data',
      `database "${path}" covers its log only up to ${formatTime(nc.last)} (the replay stopped at --to); ask the log for later times`,
    );
  }
}

/** The engine at the end of the replay, advanced (with no further events) to `at`. */
function finalEngine(db: ReplayDatabase, at: number): Engine {
  try {
    return db.engineAfterEnd(at);
  } catch (e) {
    throw cliError(e);
  }
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
  const summary = await replayTo(src, at);
  return pairs.map(([b, q]) => answer(summary.engine, b, q));
}

function answer(engine: Engine, b: string, q: string): RateAnswer {
  const r = engine.rate(b, q);
  return { asset_id_base: b, asset_id_quote: q, rate: r ? wireNumber(r.rate) : null, time: r ? formatTime(r.time) : null };
}

function ratesFromDatabase(path: string, at: number, pairs: [string, string][]): RateAnswer[] {
  const db = openDatabase(path);
  try {
    const c = db.coverage;
    const T = floorSecond(at);
    checkCovered(path, db.notCovered(T, T));
    // After the last tick of a replay that read its whole log, the log has no more events: the
    // engine's final state advanced to T answers exactly as replaying the log to T would.
    if (c.lastTick !== undefined && T > c.lastTick) {
      // Once every carried rate has expired (rule 13), that engine would answer only identities:
      // no need to compute the ticks up to T (a time years ahead answers at once).
      if (db.allExpiredAt(T)) {
        return pairs.map(([b, q]) => ({
          asset_id_base: b,
          asset_id_quote: q,
          rate: b === q ? 1 : null,
          time: b === q ? formatTime(T) : null,
        }));
      }
      const engine = finalEngine(db, at);
      return pairs.map(([b, q]) => answer(engine, b, q));
    }
    const hasTick = c.firstTick !== undefined && T >= c.firstTick;
    const table = hasTick ? db.pairTableAt(T) : undefined;
    return pairs.map(([b, q]) => {
      const none: RateAnswer = { asset_id_base: b, asset_id_quote: q, rate: null, time: null };
      if (!table) return none;
      if (b === q) return { ...none, rate: 1, time: formatTime(T) };
      const r = table.rate(b, q);
      return r ? { ...none, rate: r.value.rate, time: r.value.time } : none;
    });
  } finally {
    db.close();
  }
}

/** The period of an exchange-rate `period_id`, or a `usage` {@link XrateError} naming the valid ids. */
function requirePeriod(id: string): PeriodRecord {
  const p = exchangeRatePeriod(id);
  if (!p) {
    throw new XrateError('usage', `unknown period_id "${id}" (one of ${EXCHANGE_RATE_PERIODS.map((x) => x.period_id).join(', ')})`, {
      field: 'period_id',
    });
  }
  return p;
}

/**
 * OHLC timeseries of rate(base, quote) for the buckets whose start lies in [from, to), oldest
 * first, at most `limit` (docs/methodology.md section 5; direct, inverse or cross pair); the
 * rates as written (section 7).
 */
export async function queryHistory(
  src: QuerySource,
  pair: [string, string],
  periodId: string,
  from: number,
  to: number,
  limit = 100,
): Promise<ExchangeRatesTimeseriesItem[]> {
  const period = requirePeriod(periodId);
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_MAX_LIMIT)
    throw new XrateError('usage', `limit must be an integer in 1..${HISTORY_MAX_LIMIT}, got ${limit}`, { field: 'limit' });
  if (!(to > from))
    throw new XrateError('usage', `time_end (${formatTime(to)}) must be after time_start (${formatTime(from)})`, { field: 'time_end' });
  const first = bucketStartAtOrAfter(from, period);
  if (first >= to) return [];
  const lastEnd = bucketEnd(to - 1, period);
  let buckets: OhlcBucket[];
  if (isDatabaseSource(src)) buckets = historyFromDatabase(src.inputs[0], pair, period, first, to, lastEnd, limit);
  else {
    buckets = [];
    resolveConfig(src.config ?? {}); // fail fast on a bad config
    await (await replayModule()).replay({
      ...logOptions(src),
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

function historyFromDatabase(
  path: string,
  [b, q]: [string, string],
  period: PeriodRecord,
  first: number,
  to: number,
  lastEnd: number,
  limit: number,
): OhlcBucket[] {
  const db = openDatabase(path);
  try {
    checkCovered(path, db.notCovered(first, lastEnd - 1));
    const series = db.seriesFor(b, q, period, false);
    const stored = db.storedPeriods(b, q);
    if (!series && stored.length === 0) {
      throw new XrateError(
        'no_data',
        `database "${path}" has no OHLC for ${b}/${q}: it was not tracked during the replay (use --track ${b}/${q}, or query the log)`,
      );
    }
    if (!series) {
      throw new XrateError(
        'no_data',
        `period ${period.period_id} cannot be rolled up from the stored periods ${stored.map((p) => p.period_id).join(', ')} of ${b}/${q}`,
      );
    }
    return db.buckets(series, period, first, to, lastEnd, limit);
  } finally {
    db.close();
  }
}

/**
 * The provenance of rate(base, quote): from a log, at the last tick <= `at` (default: the end of
 * the log); from a database, at its final state. Its rates as written (wireExplanation).
 */
export async function queryExplain(src: QuerySource, pair: [string, string], at?: number): Promise<RateExplanation> {
  if (isDatabaseSource(src)) {
    const path = src.inputs[0];
    const db = openDatabase(path);
    try {
      const last = db.coverage.lastTick;
      if (at !== undefined && last !== undefined && floorSecond(at) < last) {
        throw new XrateError(
          'no_data',
          `the database holds the engine state at ${formatTime(last)} only; explain an earlier time from the log`,
        );
      }
      if (at !== undefined) checkCovered(path, db.notCovered(floorSecond(at), floorSecond(at)));
      return wireExplanation(finalEngine(db, at ?? last ?? 0).explain(pair[0], pair[1]));
    } finally {
      db.close();
    }
  }
  const summary = await replayTo(src, at);
  return wireExplanation(summary.engine.explain(pair[0], pair[1]));
}

/**
 * The stored metrics of a query's source: a replay database's tables, or a log replayed in
 * memory (its metric events, and xrate's own metrics with `ownMetrics`, as a replay stores them
 * by default; keeping no OHLC). Close it when done.
 *
 * @example
 * ```ts
 * const m = await openMetrics({ inputs: ['log.ndjson'] });
 * m.source.listing();
 * m.close();
 * ```
 */
export async function openMetrics(src: QuerySource, ownMetrics = false): Promise<{ source: MetricsSource; close(): void }> {
  if (isDatabaseSource(src)) {
    const store = ReplayStore.open(src.inputs[0], { readonly: true });
    return { source: store.metrics(OWN_METRICS), close: () => store.close() };
  }
  const mem = new MemoryMetrics(OWN_METRICS);
  resolveConfig(src.config ?? {}); // fail fast on a bad config
  await (await replayModule()).replay({
    inputs: src.inputs,
    format: src.format,
    config: src.config,
    track: [],
    reorderWindowUs: src.reorderWindowUs,
    maxLineBytes: src.maxLineBytes,
    ownMetrics,
    listener: {
      onMetric: (e) => mem.addPoint(e),
      onMetricDefinition: (e) => mem.addDefinition(e),
      onOwnMetrics: (b) => {
        for (let i = 0; i < b.length; i++) mem.addPoint(b.event(i));
      },
    },
  });
  return { source: mem, close: () => undefined };
}

/**
 * The engine after replaying a query's log through `at` (events with time <= `at`, ticks through
 * the last whole second <= `at`), or through its end; what `xrate symbols LOG` answers from (the
 * symbol records at any time: docs/methodology.md section 10). A log only: a replay database keeps
 * its final engine, which the service's provider serves.
 *
 * @example
 * ```ts
 * (await engineAt({ inputs: ['log.ndjson'] }, parseTime('2024-03-01T04:00:00Z'))).symbols();
 * ```
 */
export async function engineAt(src: QuerySource, at: number | undefined): Promise<Engine> {
  resolveConfig(src.config ?? {}); // fail fast on a bad config
  return (await replayTo(src, at)).engine;
}
