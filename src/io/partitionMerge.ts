/**
 * The merge of a partitioned replay's databases into one (docs/parallel.md): each output table of
 * the partitions, in partition order, trimmed or joined at the cuts as src/replay/partition.ts
 * says, written into the target's tables as a serial replay writes them. Rows get batch 0, and
 * the metric rows' `seq` is numbered again in the merged order.
 *
 * @module
 */
import Database from 'better-sqlite3';
import { OWN_METRIC_IDS } from '../core/engine.js';
import type { OhlcBucket } from '../core/ohlc.js';
import { mergeBuckets, mergeRateChanges, type PartitionBucket, trimFirstPerSeries } from '../replay/partition.js';
import { ReplayStore } from './store.js';

/** A partition's database and its cut (the first: none). */
export interface PartitionOutput {
  path: string;
  from?: number;
}

/** How many rows the merge wrote, by table. */
export interface MergedCounts {
  rateChanges: number;
  buckets: number;
  series: number;
  rejects: number;
  metricRows: number;
}

type Row = Record<string, unknown>;

/** Rows of a table of one partition database, in the given order. */
function readAll(db: Database.Database, sql: string): Row[] {
  return db.prepare(sql).all() as Row[];
}

const OWN = new Set<string>(OWN_METRIC_IDS);

/** A metric row of a partition: a point or a definition, with the partition's own `seq`. */
interface MetricRow {
  table: 'metric_points' | 'metric_definitions';
  row: Row;
}

/**
 * Merges the partitions' output tables into `target` (whose output tables must be empty), in one
 * transaction.
 *
 * @example
 * ```ts
 * mergePartitionOutputs(ReplayStore.open('out/xrate.sqlite'), [{ path: 'p0.sqlite' }, { path: 'p1.sqlite', from: cut }]);
 * ```
 */
export function mergePartitionOutputs(target: ReplayStore, parts: readonly PartitionOutput[]): MergedCounts {
  const dbs = parts.map((p) => new Database(p.path, { readonly: true }));
  try {
    const w = target.writers();
    return target.transaction(() => {
      const rates = mergeRateChanges(
        parts.map((p) => ({
          from: p.from ?? Number.NEGATIVE_INFINITY,
          dumpsState: p.from !== undefined,
          changes: readRates(p.path),
        })),
      );
      for (const c of rates) w.rate(c, 0);

      const buckets = mergeBuckets(dbs.map((db) => readAll(db, 'SELECT * FROM ohlc').map(bucketOf)));
      for (const b of buckets) {
        const [base, quote] = JSON.parse(b.track) as [string, string];
        w.bucket(base, quote, b.period, b.bucket, 0);
      }

      const series = trimFirstPerSeries(
        dbs.map((db) => readAll(db, 'SELECT base, quote, tick, rate, follow FROM series ORDER BY base, quote, tick')),
        (r) => JSON.stringify([r.base, r.quote]),
        (r) => `${r.rate} ${r.follow}`,
      );
      for (const r of series)
        w.series(r.base as string, r.quote as string, r.tick as number, (r.rate as number | null) ?? Number.NaN, r.follow === 1, 0);

      let rejects = 0;
      for (const db of dbs) {
        for (const r of readAll(db, 'SELECT input, source, line, reason, message, raw FROM rejects ORDER BY rowid')) {
          w.reject(r.input as number, r.source as string, r.line as number, r.reason as string, r.message as string, r.raw as string, 0);
          rejects++;
        }
      }
      const metricRows = mergeMetrics(target, dbs);
      return { rateChanges: rates.length, buckets: buckets.length, series: series.length, rejects, metricRows };
    });
  } finally {
    for (const db of dbs) db.close();
  }
}

/** The rate changes of a partition's database ({@link ReplayStore.rateChanges}). */
function readRates(path: string) {
  const store = ReplayStore.open(path);
  try {
    return store.rateChanges();
  } finally {
    store.close();
  }
}

/** An `ohlc` row as a bucket of {@link mergeBuckets} (the pair as a JSON pair of ids). */
function bucketOf(r: Row): PartitionBucket {
  const bucket: OhlcBucket = {
    start: r.start as number,
    end: r.end as number,
    timeOpen: r.time_open as number,
    timeClose: r.time_close as number,
    open: r.open as number,
    high: r.high as number,
    low: r.low as number,
    close: r.close as number,
    count: r.count as number,
  };
  return { track: JSON.stringify([r.base, r.quote]), period: r.period_id as string, bucket };
}

/**
 * The metric points and definitions, in each partition's own order (`seq`): the log's as they are
 * (each partition stores those of its own lines), xrate's own trimmed as every output written on
 * change; `seq` numbered again across the merged rows.
 */
function mergeMetrics(target: ReplayStore, dbs: readonly Database.Database[]): number {
  const perPart = dbs.map((db) => {
    const rows: MetricRow[] = [
      ...readAll(db, 'SELECT * FROM metric_points').map((row) => ({ table: 'metric_points' as const, row })),
      ...readAll(db, 'SELECT * FROM metric_definitions').map((row) => ({ table: 'metric_definitions' as const, row })),
    ];
    return rows.sort((a, b) => (a.row.seq as number) - (b.row.seq as number));
  });
  const isOwn = (m: MetricRow) => m.table === 'metric_points' && OWN.has(m.row.metric_id as string);
  // Only own points are trimmed: every other row is its own series (never equal to a last one).
  let unique = 0;
  const merged = trimFirstPerSeries(
    perPart,
    (m) => (isOwn(m) ? JSON.stringify([m.row.metric_id, m.row.exchange_id, m.row.symbol_id, m.row.asset_id]) : `#${unique++}`),
    (m) => (isOwn(m) ? `${m.row.kind} ${m.row.text} ${m.row.value}` : ''),
  );
  const insert = {
    metric_points: target.rawStatement(
      `INSERT INTO metric_points(metric_id, exchange_id, symbol_id, asset_id, chain_id, network_id, time, recv_time, kind, value, text, seq, batch)
       VALUES (@metric_id, @exchange_id, @symbol_id, @asset_id, @chain_id, @network_id, @time, @recv_time, @kind, @value, @text, @seq, 0)`,
    ),
    metric_definitions: target.rawStatement(
      'INSERT INTO metric_definitions(metric_id, description, time, seq, batch) VALUES (@metric_id, @description, @time, @seq, 0)',
    ),
  };
  merged.forEach((m, i) => {
    const { batch: _batch, ...row } = m.row;
    insert[m.table].run({ ...row, seq: i + 1 });
  });
  return merged.length;
}
