/**
 * The merge of a partitioned replay's databases into one (docs/parallel.md): each output table of
 * the partitions, in partition order, trimmed or joined at the cuts as src/replay/partition.ts
 * says, written into the target's tables as a serial replay writes them. The partitions are
 * attached to the target and their rows copied by SQL; only the rows at a cut (a partition's
 * whole state there, and each series' first row) pass through JavaScript. Rows get batch 0, and
 * the metric rows' `seq` is numbered again in the merged order.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { OWN_METRIC_IDS, type PairRateChange } from '../core/engine.js';
import { trimRateDump } from '../replay/partition.js';
import { CONNECTIVITY_COLUMNS, POSITION_COLUMNS } from './positionStore.js';
import type { RateRow } from './store.js';
import type { MergedCounts, PartitionOutput } from './storeTypes.js';

const RATE_COLS = 'tick, base, quote, rate, time, rank, used, fresh, volume';
const POINT_COLS = 'metric_id, exchange_id, symbol_id, asset_id, chain_id, network_id, time, recv_time, kind, value, text';
/** Own metric ids as an SQL list. */
const OWN_LIST = OWN_METRIC_IDS.map((id) => `'${id}'`).join(', ');

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
  parts.forEach((p, k) => {
    db.prepare(`ATTACH DATABASE ? AS p${k}`).run(p.path);
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
        mergeMetrics(db, s, cut !== undefined);
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
    metricRows: count(db, 'metric_points') + count(db, 'metric_definitions'),
    positionRows: count(db, 'positions') + count(db, 'connectivity'),
  };
}

const changeOf = (r: RateRow): PairRateChange => ({ ...r, pair: -1, fresh: r.fresh === 1 });

/** Rates of partition `s`: at its cut the rows a serial replay writes there (trimRateDump), then the rest as they are. */
function mergeRates(db: Database.Database, s: string, cut: number | undefined): void {
  const insert = db.prepare(`INSERT INTO rates(${RATE_COLS}, batch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`);
  let after = '';
  if (cut !== undefined) {
    const dump = (db.prepare(`SELECT ${RATE_COLS} FROM ${s}.rates WHERE tick = ? ORDER BY rowid`).all(cut) as RateRow[]).map(changeOf);
    // The last merged row of every pair (its state just before the cut).
    const last = (
      db.prepare(`SELECT ${RATE_COLS} FROM rates WHERE rowid IN (SELECT max(rowid) FROM rates GROUP BY base, quote)`).all() as RateRow[]
    ).map(changeOf);
    for (const c of trimRateDump(cut, dump, last))
      insert.run(c.tick, c.base, c.quote, c.rate, c.time, c.rank, c.used, c.fresh ? 1 : 0, c.volume);
    after = `WHERE tick > ${Number(cut)}`;
  }
  db.exec(`INSERT INTO rates(${RATE_COLS}, batch) SELECT ${RATE_COLS}, 0 FROM ${s}.rates ${after} ORDER BY rowid`);
}

/**
 * The change series of partition `s`: with `trim`, each pair's first row is kept only when it
 * differs from the pair's last merged row (trimFirstPerSeries); the other rows as they are.
 */
function mergeSeries(db: Database.Database, s: string, trim: boolean): void {
  const firsts = `SELECT base, quote, min(tick) AS tick FROM ${s}.series GROUP BY base, quote`;
  if (!trim) {
    db.exec(`INSERT INTO series(base, quote, tick, rate, follow, batch) SELECT base, quote, tick, rate, follow, 0 FROM ${s}.series`);
    return;
  }
  const first = db.prepare(
    `SELECT x.base, x.quote, x.tick, x.rate, x.follow FROM ${s}.series x JOIN (${firsts}) f USING (base, quote, tick)`,
  );
  const lastOf = db.prepare('SELECT rate, follow FROM series WHERE base = ? AND quote = ? ORDER BY tick DESC LIMIT 1');
  const insert = db.prepare('INSERT INTO series(base, quote, tick, rate, follow, batch) VALUES (?, ?, ?, ?, ?, 0)');
  const keep = (first.all() as { base: string; quote: string; tick: number; rate: number | null; follow: number }[]).filter((r) => {
    const last = lastOf.get(r.base, r.quote) as { rate: number | null; follow: number } | undefined;
    return last === undefined || last.rate !== r.rate || last.follow !== r.follow;
  });
  for (const r of keep) insert.run(r.base, r.quote, r.tick, r.rate, r.follow);
  db.exec(`INSERT INTO series(base, quote, tick, rate, follow, batch)
           SELECT x.base, x.quote, x.tick, x.rate, x.follow, 0 FROM ${s}.series x JOIN (${firsts}) f USING (base, quote)
           WHERE x.tick > f.tick`);
}

/**
 * The metric points and definitions of partition `s`, in its own order (`seq`): the log's as they
 * are (each partition stores those of its own lines), xrate's own trimmed as every output written
 * on change (with `trim`: each series' first point kept only when it differs from the series' last
 * merged one); `seq` numbered on from the rows merged before.
 */
function mergeMetrics(db: Database.Database, s: string, trim: boolean): void {
  db.exec('CREATE TEMP TABLE IF NOT EXISTS merge_drop (seq INTEGER PRIMARY KEY); DELETE FROM merge_drop');
  if (trim) {
    const firsts = db.prepare(
      `SELECT x.seq, x.metric_id, x.exchange_id, x.symbol_id, x.asset_id, x.kind, x.value, x.text FROM ${s}.metric_points x
       JOIN (SELECT min(seq) AS seq FROM ${s}.metric_points WHERE metric_id IN (${OWN_LIST})
             GROUP BY metric_id, exchange_id, symbol_id, asset_id) f USING (seq)`,
    );
    const lastOf = db.prepare(
      `SELECT kind, value, text FROM metric_points WHERE metric_id = ? AND exchange_id = ? AND symbol_id = ? AND asset_id = ?
       ORDER BY seq DESC LIMIT 1`,
    );
    const drop = db.prepare('INSERT INTO merge_drop(seq) VALUES (?)');
    for (const r of firsts.all() as Record<string, string | number | null>[]) {
      const last = lastOf.get(r.metric_id, r.exchange_id, r.symbol_id, r.asset_id) as Record<string, unknown> | undefined;
      if (last !== undefined && last.kind === r.kind && last.value === r.value && last.text === r.text) drop.run(r.seq);
    }
  }
  const offset = (
    db
      .prepare('SELECT max(coalesce((SELECT max(seq) FROM metric_points), 0), coalesce((SELECT max(seq) FROM metric_definitions), 0)) AS n')
      .get() as {
      n: number;
    }
  ).n;
  const numbered = `WITH rows AS (
      SELECT seq, 'p' AS t FROM ${s}.metric_points WHERE seq NOT IN (SELECT seq FROM merge_drop)
      UNION ALL SELECT seq, 'd' FROM ${s}.metric_definitions),
    numbered AS (SELECT seq, t, ${Number(offset)} + row_number() OVER (ORDER BY seq) AS n FROM rows)`;
  db.exec(`${numbered}
    INSERT INTO metric_points(${POINT_COLS}, seq, batch)
    SELECT ${POINT_COLS}, n.n, 0 FROM ${s}.metric_points x JOIN numbered n ON n.seq = x.seq AND n.t = 'p' ORDER BY n.n`);
  db.exec(`${numbered}
    INSERT INTO metric_definitions(metric_id, description, time, seq, batch)
    SELECT metric_id, description, time, n.n, 0 FROM ${s}.metric_definitions x JOIN numbered n ON n.seq = x.seq AND n.t = 'd' ORDER BY n.n`);
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
