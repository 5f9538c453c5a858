/**
 * The stored metrics of the replay database: one row per data point and per definition, written
 * by the replay in the transaction of the batch that read them, and the {@link MetricsSource}
 * that reads them back as of a tick.
 *
 * `metric_points` keeps each point with its series key (symbol_id and asset_id `''` when absent),
 * its time and recv_time (µs), its value (`kind` decimal: `value` its float and `text` its exact
 * decimal; text: `text`; time: `value` in µs) and `seq`, its position among the replay's metric
 * events (log order). `metric_definitions` keeps every definition with its time and `seq`. Both
 * carry `batch`, like every output row, so a resume drops what later batches wrote.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import type { MetricValue, SeriesKey } from '../core/metrics/events.js';
import type { MetricPointColumns } from '../core/metrics/timeseries.js';
import {
  type MetricDefinition,
  type MetricFilter,
  type MetricsSource,
  metricListing,
  type SeriesSpan,
  type StoredMetricPoint,
} from '../core/metrics/source.js';
import { floorSecond } from '../core/time.js';
import type { TimeUs } from '../core/types.js';
import type { RowSinkMaker } from './rowJob.js';
import type { MetricRowWriters } from './storeTypes.js';

/** The tables, created with the rest of the schema (store.ts). */
export const METRIC_SCHEMA = `
CREATE TABLE IF NOT EXISTS metric_points (
  metric_id TEXT NOT NULL, exchange_id TEXT NOT NULL, symbol_id TEXT NOT NULL, asset_id TEXT NOT NULL,
  chain_id TEXT, network_id TEXT, time INTEGER NOT NULL, recv_time INTEGER NOT NULL,
  kind TEXT NOT NULL, value REAL, text TEXT, seq INTEGER NOT NULL, batch INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS metric_points_series ON metric_points(metric_id, exchange_id, symbol_id, asset_id, time, seq);
CREATE TABLE IF NOT EXISTS metric_definitions (
  metric_id TEXT NOT NULL, description TEXT NOT NULL, time INTEGER NOT NULL, seq INTEGER NOT NULL, batch INTEGER NOT NULL
);
`;

/** The output tables of this module (cleared and truncated with the others). */
export const METRIC_TABLES = ['metric_points', 'metric_definitions'] as const;

/**
 * Writers of metric rows (call inside the batch's transaction), through the sinks `make` makes of
 * their statements (the database's connection, or its writer thread: writerThread.ts).
 *
 * @example
 * ```ts
 * const w = metricWriters((sql) => { const s = db.prepare(sql); return (...v) => void s.run(...v); });
 * w.point(event, 1, batch);
 * ```
 */
export function metricWriters(make: RowSinkMaker): MetricRowWriters {
  const point = make(
    `INSERT INTO metric_points(metric_id, exchange_id, symbol_id, asset_id, chain_id, network_id, time, recv_time, kind, value, text, seq, batch)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const definition = make('INSERT INTO metric_definitions(metric_id, description, time, seq, batch) VALUES (?, ?, ?, ?, ?)');
  return {
    point: (e, seq, batch) => {
      const v = e.value;
      const value = v.kind === 'decimal' ? v.dec.value : v.kind === 'time' ? v.us : null;
      const text = v.kind === 'decimal' ? v.dec.text : v.kind === 'text' ? v.text : null;
      point(
        e.metricId,
        e.exchangeId,
        e.symbolId ?? '',
        e.assetId ?? '',
        e.chainId ?? null,
        e.networkId ?? null,
        e.time,
        e.recvTime ?? e.time,
        v.kind,
        value,
        text,
        seq,
        batch,
      );
    },
    // The rows `point` writes for each b.event(i), read from the batch's columns (no event object per point).
    ownPoints: (b, seq, batch) => {
      const time = b.time;
      for (let i = 0; i < b.length; i++) {
        point(
          b.metricId(i),
          b.exchangeId(i),
          b.symbolId(i) ?? '',
          b.assetId(i) ?? '',
          null,
          null,
          time,
          time,
          'decimal',
          b.value[i],
          b.text(i),
          seq + i,
          batch,
        );
      }
    },
    definition: (e, seq, batch) => definition(e.metricId, e.description, e.time, seq, batch),
  };
}

/** The columns of a point, in the order of {@link PointRow} (rows are read as arrays: much cheaper than objects). */
const POINT_COLUMNS = 'metric_id, exchange_id, symbol_id, asset_id, chain_id, network_id, time, recv_time, kind, value, text, seq';

/** A row of `metric_points` as read with {@link POINT_COLUMNS}. */
type PointRow = [
  string,
  string,
  string,
  string,
  string | null,
  string | null,
  number,
  number,
  string,
  number | null,
  string | null,
  number,
];

function metricValueOf(kind: string, value: number | null, text: string | null): MetricValue {
  if (kind === 'decimal') return { kind: 'decimal', dec: { value: value ?? Number.NaN, text: text ?? '' } };
  if (kind === 'time') return { kind: 'time', us: value ?? 0 };
  return { kind: 'text', text: text ?? '' };
}

function pointOf(r: PointRow): StoredMetricPoint {
  const [metric_id, exchange_id, symbol_id, asset_id, chain_id, network_id, time, recvTime, kind, value, text, seq] = r;
  const p: StoredMetricPoint = {
    metric_id,
    exchange_id,
    symbol_id,
    asset_id,
    time,
    recvTime,
    seq,
    value: metricValueOf(kind, value, text),
  };
  if (chain_id === null && network_id === null) return p;
  return { ...p, ...(chain_id !== null && { chain_id }), ...(network_id !== null && { network_id }) };
}

/**
 * The last tick at or before `at` (ticks are whole seconds): what a query "as of `at`" sees.
 * Undefined: no bound.
 *
 * @example
 * ```ts
 * asOfTick(1_700_000_000_500_000); // 1_700_000_000_000_000
 * ```
 */
export function asOfTick(at: TimeUs | undefined): TimeUs {
  return at === undefined ? Number.MAX_SAFE_INTEGER : floorSecond(at);
}

/** The WHERE clause of a filter (named parameters of the same names) and its parameters. */
function where(filter: MetricFilter): { sql: string; params: Record<string, string> } {
  const parts: string[] = [];
  const params: Record<string, string> = {};
  for (const k of ['metric_id', 'exchange_id', 'symbol_id', 'asset_id'] as const) {
    const v = filter[k];
    if (v === undefined) continue;
    parts.push(`${k} = @${k}`);
    params[k] = v;
  }
  if (filter.scope === 'symbol') parts.push(`symbol_id <> ''`);
  else if (filter.scope === 'asset') parts.push(`symbol_id = '' AND asset_id <> ''`);
  else if (filter.scope === 'exchange') parts.push(`symbol_id = '' AND asset_id = ''`);
  return { sql: parts.length ? parts.join(' AND ') : '1', params };
}

/**
 * The {@link MetricsSource} of a replay database (a database written before metrics were stored
 * answers with no metric).
 *
 * @example
 * ```ts
 * const metrics = new DatabaseMetrics(db, OWN_METRICS);
 * metrics.current({ scope: 'asset', asset_id: 'BTC' });
 * ```
 */
export class DatabaseMetrics implements MetricsSource {
  private readonly stored: boolean;

  /** `own`: the definitions of xrate's own metrics (listed when the database holds points of them). */
  constructor(
    private readonly db: Database.Database,
    private readonly own: readonly MetricDefinition[] = [],
  ) {
    this.stored = !!db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'metric_points'`).get();
  }

  listing(at?: TimeUs): MetricDefinition[] {
    if (!this.stored) return [];
    const t = asOfTick(at);
    const seen = this.db.prepare('SELECT DISTINCT metric_id FROM metric_points WHERE time <= ?').pluck().all(t) as string[];
    const defs = this.db.prepare('SELECT metric_id, description FROM metric_definitions WHERE time <= ? ORDER BY time, seq');
    return metricListing(this.own, seen, defs.all(t) as MetricDefinition[]);
  }

  series(filter: MetricFilter, at?: TimeUs): SeriesKey[] {
    if (!this.stored) return [];
    const w = where(filter);
    const sql = `SELECT DISTINCT metric_id, exchange_id, symbol_id, asset_id FROM metric_points
                 WHERE ${w.sql} AND time <= @at ORDER BY metric_id, exchange_id, symbol_id, asset_id`;
    return this.db.prepare(sql).all({ ...w.params, at: asOfTick(at) }) as SeriesKey[];
  }

  current(filter: MetricFilter, at?: TimeUs): StoredMetricPoint[] {
    if (!this.stored) return [];
    const latest = this.db
      .prepare(
        `SELECT ${POINT_COLUMNS} FROM metric_points WHERE metric_id = @metric_id AND exchange_id = @exchange_id AND symbol_id = @symbol_id
       AND asset_id = @asset_id AND time <= @at ORDER BY time DESC, seq DESC LIMIT 1`,
      )
      .raw();
    const t = asOfTick(at);
    return this.series(filter, at).map((k) => pointOf(latest.get({ ...k, at: t }) as PointRow));
  }

  spans(filter: MetricFilter, at?: TimeUs): SeriesSpan[] {
    if (!this.stored) return [];
    const w = where(filter);
    const sql = `SELECT metric_id, exchange_id, symbol_id, asset_id, MIN(time) AS first, MAX(time) AS last FROM metric_points
                 WHERE ${w.sql} AND time <= @at GROUP BY metric_id, exchange_id, symbol_id, asset_id
                 ORDER BY metric_id, exchange_id, symbol_id, asset_id`;
    return this.db.prepare(sql).all({ ...w.params, at: asOfTick(at) }) as SeriesSpan[];
  }

  points(filter: MetricFilter, from: TimeUs, to: TimeUs): StoredMetricPoint[] {
    if (!this.stored) return [];
    const w = where(filter);
    const sql = `SELECT ${POINT_COLUMNS} FROM metric_points WHERE ${w.sql} AND time >= @from AND time < @to ORDER BY time, seq`;
    return (
      this.db
        .prepare(sql)
        .raw()
        .all({ ...w.params, from, to }) as PointRow[]
    ).map(pointOf);
  }

  /**
   * Each column is read by a query of its own, plucked (a value per row, no array per row: reading
   * rows of three values costs half as much again as the three columns), in one read transaction
   * so the three see the same rows.
   */
  pointColumns(filter: MetricFilter, from: TimeUs, to: TimeUs): MetricPointColumns {
    if (!this.stored) return { times: [], values: [], texts: [] };
    const w = where(filter);
    const params = { ...w.params, from, to };
    const column = (expr: string) =>
      this.db
        .prepare(`SELECT ${expr} FROM metric_points WHERE ${w.sql} AND time >= @from AND time < @to ORDER BY time, seq`)
        .pluck()
        .all(params);
    // A decimal point's text as pointOf reads it; null for the other kinds.
    const read = this.db.transaction(() => ({
      times: column('time') as number[],
      values: column(`CASE WHEN kind = 'decimal' THEN value END`) as (number | null)[],
      texts: column(`CASE WHEN kind = 'decimal' THEN ifnull(text, '') END`) as (string | null)[],
    }));
    return read();
  }

  // ---- Values in force at given times (the chart's summary over long ranges: src/answers/chart.ts) ----

  /**
   * The decimal value of series `key` in force at each of `times` (µs, ascending or not): that of
   * its latest point with time <= the time (ties: the later point), null when it has none then or
   * the point is not a decimal. One index seek per time (metric_points_series), whatever the
   * number of points in between, all in one statement (the times as a JSON array: no call per time).
   *
   * @example
   * ```ts
   * metrics.valuesAt({ metric_id: 'XRATE_MARKET_WEIGHT_SHARE', exchange_id: 'KRAKEN', symbol_id: 'KRAKEN_SPOT_BTC_USD', asset_id: '' }, [t1, t2]);
   * // [0.25, null]
   * ```
   */
  valuesAt(key: SeriesKey, times: readonly TimeUs[]): (number | null)[] {
    if (!this.stored || times.length === 0) return times.map(() => null);
    this.valuesAtStmt ??= this.db
      .prepare(
        `SELECT (SELECT CASE WHEN kind = 'decimal' THEN value END FROM metric_points
                 WHERE metric_id = @metric_id AND exchange_id = @exchange_id AND symbol_id = @symbol_id AND asset_id = @asset_id
                 AND time <= t.value ORDER BY time DESC, seq DESC LIMIT 1)
         FROM json_each(@times) t ORDER BY t.key`,
      )
      .pluck();
    const { metric_id, exchange_id, symbol_id, asset_id } = key;
    const got = this.valuesAtStmt.all({ metric_id, exchange_id, symbol_id, asset_id, times: JSON.stringify(times) }) as (number | null)[];
    return got.map((v) => v ?? null);
  }

  /** Whether series `key` has a point at or before `at` (one index seek). */
  hasSeries(key: SeriesKey, at: TimeUs = Number.MAX_SAFE_INTEGER): boolean {
    if (!this.stored) return false;
    this.hasSeriesStmt ??= this.db.prepare(
      'SELECT 1 FROM metric_points WHERE metric_id = ? AND exchange_id = ? AND symbol_id = ? AND asset_id = ? AND time <= ? LIMIT 1',
    );
    return this.hasSeriesStmt.get(key.metric_id, key.exchange_id, key.symbol_id, key.asset_id, at) !== undefined;
  }

  private valuesAtStmt: Database.Statement | undefined;
  private hasSeriesStmt: Database.Statement | undefined;
  // ---- end of the values in force at given times ----
}
