/**
 * The merge of a partitioned replay's databases into one (docs/parallel.md): each output table of
 * the partitions, in partition order, trimmed or joined at the cuts, written into the target's
 * tables as a serial replay writes them. The partitions are attached to the target and their rows
 * chosen and copied by SQL; only the rate rows kept at a cut pass through JavaScript, to be put in
 * the engine's order. Rows get batch 0, and the metric rows' `seq` is numbered again in the merged
 * order (metricMerge.ts: xrate's own points are chunks, renumbered in JavaScript). The rules are those of the in-memory merge of src/reference/partitionMerge.ts, which a
 * property test holds this module to.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { byCodeUnit } from '../core/metrics/source.js';
import { chunkPointCount, mergePartitionMetrics } from './metricMerge.js';
import { CONNECTIVITY_COLUMNS, POSITION_COLUMNS } from './positionStore.js';
import type { MergedCounts, PartitionOutput } from './storeTypes.js';

const RATE_COLS = 'tick, base, quote, rate, time, rank, used, fresh, volume';

const count = (db: Database.Database, table: string): number => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

/**
 * Merges the partitions' output tables into the target database `db`, in one transaction, after
 * the rows it holds: none, or the first partition's (the target is then that partition's own
 * database, and `parts` the partitions after it).
 *
 * @example
 * ```ts
 * mergePartitionOutputs(db, [{ path: 'p0.sqlite' }, { path: 'p1.sqlite', from: cut }]);
 * ```
 */
export function mergePartitionOutputs(db: Database.Database, parts: readonly PartitionOutput[]): MergedCounts {
  const cacheSize = db.pragma('cache_size', { simple: true }) as number;
  parts.forEach((p, k) => {
    db.prepare(`ATTACH DATABASE ? AS p${k}`).run(p.path);
    // The connection's page cache, not the build's default: each page of a partition is read once.
    db.pragma(`p${k}.cache_size = ${cacheSize}`);
  });
  try {
    db.transaction(() => {
      parts.forEach((p, k) => {
        const s = `p${k}`;
        // A partition with a cut wrote its whole state there: trimmed (the first partition has none).
        const cut = p.from;
        mergeRates(db, s, cut);
        // OHLC: a bucket already there (from the partitions before) straddles the cut: joined.
        db.exec(
          `INSERT INTO ohlc(base, quote, period_id, start, "end", time_open, time_close, open, high, low, close, count, batch)
           SELECT base, quote, period_id, start, "end", time_open, time_close, open, high, low, close, count, 0 FROM ${s}.ohlc WHERE true
           ON CONFLICT(base, quote, period_id, start) DO UPDATE SET time_close = excluded.time_close, close = excluded.close,
             high = max(high, excluded.high), low = min(low, excluded.low), count = count + excluded.count`,
        );
        mergeSeries(db, s, cut !== undefined);
        db.exec(`INSERT INTO rejects(input, source, line, reason, message, raw, batch)
                 SELECT input, source, line, reason, message, raw, 0 FROM ${s}.rejects ORDER BY rowid`);
        mergePartitionMetrics(db, s, cut !== undefined);
        mergePositions(db, s);
      });
    })();
  } finally {
    parts.forEach((_, k) => {
      db.prepare(`DETACH DATABASE p${k}`).run();
    });
  }
  return {
    rateChanges: count(db, 'rates'),
    buckets: count(db, 'ohlc'),
    series: count(db, 'series'),
    rejects: count(db, 'rejects'),
    metricRows: count(db, 'metric_points') + count(db, 'metric_definitions') + chunkPointCount(db),
    positionRows: count(db, 'positions') + count(db, 'connectivity'),
  };
}

/**
 * Rates of partition `s`. At its cut (it wrote its whole state there) the rows a serial replay
 * writes there: a dumped row that differs from its pair's last merged row (or, for a pair without
 * one, from no rate), and a row with no rate for a pair whose last merged row had a rate and that
 * the dump lacks; in the engine's order (base, then quote). Then its later rows as they are.
 */
function mergeRates(db: Database.Database, s: string, cut: number | undefined): void {
  let after = '';
  if (cut !== undefined) {
    const atCut = db
      .prepare(
        `WITH last AS MATERIALIZED (SELECT ${RATE_COLS} FROM rates WHERE rowid IN (SELECT max(rowid) FROM rates GROUP BY base, quote)),
         dump AS MATERIALIZED (SELECT ${RATE_COLS} FROM ${s}.rates WHERE tick = @cut)
         SELECT d.tick, d.base, d.quote, d.rate, d.time, d.rank, d.used, d.fresh, d.volume FROM dump d LEFT JOIN last l USING (base, quote)
         WHERE NOT (d.rate IS l.rate AND d.time IS l.time AND d.rank IS l.rank AND d.used = coalesce(l.used, 0)
                    AND d.volume = coalesce(l.volume, 0) AND d.fresh = coalesce(l.fresh, 0))
         UNION ALL
         SELECT @cut, l.base, l.quote, NULL, NULL, NULL, 0, 0, 0 FROM last l
         WHERE l.rate IS NOT NULL AND NOT EXISTS (SELECT 1 FROM dump d WHERE d.base = l.base AND d.quote = l.quote)`,
      )
      .raw()
      .all({ cut }) as RateValues[];
    // The engine's order of a tick's rows (by code unit, as JavaScript compares strings; SQLite's by UTF-8 bytes may differ).
    atCut.sort((a, b) => byCodeUnit(a[1], b[1]) || byCodeUnit(a[2], b[2]));
    const insert = db.prepare(`INSERT INTO rates(${RATE_COLS}, batch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`);
    for (const r of atCut) insert.run(r);
    after = `WHERE tick > ${Number(cut)}`;
  }
  db.exec(`INSERT INTO rates(${RATE_COLS}, batch) SELECT ${RATE_COLS}, 0 FROM ${s}.rates ${after} ORDER BY rowid`);
}

/** A row of `rates` read as an array in the order of RATE_COLS. */
type RateValues = [number, string, string, number | null, number | null, number | null, number, number, number];

/** A table written on change per series: its series' columns, the column that orders a series' rows, the columns of a value. */
interface ChangeTable {
  table: string;
  series: readonly string[];
  order: string;
  values: readonly string[];
  /** Which rows are written on change (SQL condition; default all). */
  where?: string;
}

const SERIES_TABLE: ChangeTable = { table: 'series', series: ['base', 'quote'], order: 'tick', values: ['rate', 'follow'] };
/**
 * The first-row trim of an output written on change, per series (trimFirstPerSeries of the
 * reference): fills the temporary table `merge_drop` with the key (series and order columns) of
 * each series' first row in partition `s` whose value equals the series' last merged row (the
 * serial replay wrote no row there), and returns the SQL condition that leaves them out of a
 * select of `s`'s rows.
 */
function dropRepeatedFirsts(db: Database.Database, s: string, t: ChangeTable): string {
  const key = [...t.series, t.order];
  const sameSeries = (a: string, b: string): string => t.series.map((c) => `${a}.${c} = ${b}.${c}`).join(' AND ');
  db.exec(`DROP TABLE IF EXISTS temp.merge_drop;
    CREATE TEMP TABLE merge_drop AS
    SELECT ${key.map((c) => `x.${c}`).join(', ')} FROM ${s}.${t.table} x
    JOIN (SELECT ${t.series.join(', ')}, min(${t.order}) AS ${t.order} FROM ${s}.${t.table} WHERE ${t.where ?? 'true'}
          GROUP BY ${t.series.join(', ')}) f USING (${key.join(', ')})
    WHERE (SELECT ${t.values.map((c) => `l.${c} IS x.${c}`).join(' AND ')} FROM main.${t.table} l
           WHERE ${sameSeries('l', 'x')} ORDER BY l.${t.order} DESC LIMIT 1)`);
  return `(${key.join(', ')}) NOT IN (SELECT ${key.join(', ')} FROM temp.merge_drop)`;
}

/** The change series of partition `s`: with `trim`, each pair's first row only when it differs from the pair's last merged row. */
function mergeSeries(db: Database.Database, s: string, trim: boolean): void {
  const keep = trim ? dropRepeatedFirsts(db, s, SERIES_TABLE) : 'true';
  db.exec(
    `INSERT INTO series(base, quote, tick, rate, follow, batch) SELECT base, quote, tick, rate, follow, 0 FROM ${s}.series WHERE ${keep}`,
  );
}

/**
 * The position and connectivity rows of partition `s`, as they are (each partition stores those of
 * its own lines, and they are snapshots: nothing straddles a cut), `seq` numbered on from the rows
 * merged before, in the partition's own order.
 */
function mergePositions(db: Database.Database, s: string): void {
  const offset = (
    db
      .prepare('SELECT max(coalesce((SELECT max(seq) FROM positions), 0), coalesce((SELECT max(seq) FROM connectivity), 0)) AS n')
      .get() as { n: number }
  ).n;
  const numbered = `WITH rows AS (SELECT seq, 'p' AS t FROM ${s}.positions UNION ALL SELECT seq, 'c' FROM ${s}.connectivity),
    numbered AS (SELECT seq, t, ${Number(offset)} + row_number() OVER (ORDER BY seq) AS n FROM rows)`;
  db.exec(`${numbered}
    INSERT INTO positions(${POSITION_COLUMNS}, seq, batch)
    SELECT ${POSITION_COLUMNS}, n.n, 0 FROM ${s}.positions x JOIN numbered n ON n.seq = x.seq AND n.t = 'p' ORDER BY n.n`);
  db.exec(`${numbered}
    INSERT INTO connectivity(${CONNECTIVITY_COLUMNS}, seq, batch)
    SELECT ${CONNECTIVITY_COLUMNS}, n.n, 0 FROM ${s}.connectivity x JOIN numbered n ON n.seq = x.seq AND n.t = 'c' ORDER BY n.n`);
}
