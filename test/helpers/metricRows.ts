/**
 * The reference the stored metrics (src/io/metricStore.ts) are held to: the reader of the replay
 * database as it was when every point, xrate's own included, was a row of `metric_points`, and
 * the writer of own points as those rows. A database written with {@link writeOwnRows} and read
 * with {@link RowMetrics} answers as one written and read by the replay must.
 */
import type Database from 'better-sqlite3';
import type { OwnMetricBatch } from '../../src/core/engine.js';
import type { SeriesKey } from '../../src/core/metrics/events.js';
import {
  type MetricDefinition,
  type MetricFilter,
  type MetricsSource,
  metricListing,
  type SeriesSpan,
  type StoredMetricPoint,
} from '../../src/core/metrics/source.js';
import type { MetricPointColumns } from '../../src/core/metrics/timeseries.js';
import type { TimeUs } from '../../src/core/types.js';
import { asOfTick, POINT_COLUMNS, type PointRow, pointOf, where } from '../../src/io/metricStore.js';
import type { MetricRowWriters } from '../../src/io/storeTypes.js';

/** Writes the points of one tick of own metrics as the rows `point` writes for each `b.event(i)`, seq `seq + i`. */
export function writeOwnRows(w: MetricRowWriters, b: OwnMetricBatch, seq: number, batch: number): void {
  for (let i = 0; i < b.length; i++) w.point(b.event(i), seq + i, batch);
}

/** The reader of a database whose points are all rows of `metric_points`: DatabaseMetrics as it was before own points were chunks. */
export class RowMetrics implements MetricsSource {
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

  /** DatabaseMetrics.valuesAt as it was: the decimal value of series `key` in force at each of `times`. */
  valuesAt(key: SeriesKey, times: readonly TimeUs[]): (number | null)[] {
    if (!this.stored || times.length === 0) return times.map(() => null);
    const got = this.db
      .prepare(
        `SELECT (SELECT CASE WHEN kind = 'decimal' THEN value END FROM metric_points
                 WHERE metric_id = @metric_id AND exchange_id = @exchange_id AND symbol_id = @symbol_id AND asset_id = @asset_id
                 AND time <= t.value ORDER BY time DESC, seq DESC LIMIT 1)
         FROM json_each(@times) t ORDER BY t.key`,
      )
      .pluck()
      .all({ ...key, times: JSON.stringify(times) }) as (number | null)[];
    return got.map((v) => v ?? null);
  }

  /** DatabaseMetrics.hasSeries as it was: whether series `key` has a point at or before `at`. */
  hasSeries(key: SeriesKey, at: TimeUs = Number.MAX_SAFE_INTEGER): boolean {
    if (!this.stored) return false;
    const sql =
      'SELECT 1 FROM metric_points WHERE metric_id = ? AND exchange_id = ? AND symbol_id = ? AND asset_id = ? AND time <= ? LIMIT 1';
    return this.db.prepare(sql).get(key.metric_id, key.exchange_id, key.symbol_id, key.asset_id, at) !== undefined;
  }
}
