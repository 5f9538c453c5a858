/**
 * The stored metrics of the replay database: one row per data point of the log and per
 * definition, xrate's own points as columns (metricChunks.ts), written by the replay in the
 * transaction of the batch that read them, and the {@link MetricsSource} that reads both back as
 * of a tick, as one store.
 *
 * `metric_points` keeps each point with its series key (symbol_id and asset_id `''` when absent),
 * its time and recv_time (µs), its value (`kind` decimal: `value` its float and `text` its exact
 * decimal; text: `text`; time: `value` in µs) and `seq`, its position among the replay's metric
 * events (log order). `metric_definitions` keeps every definition with its time and `seq`. Both
 * carry `batch`, like every output row, so a resume drops what later batches wrote. xrate's own
 * points are in `metric_chunks` (a row per series and batch), and read back as the rows they
 * would have been.
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
import {
  CHUNK_COLUMNS,
  CHUNK_SCHEMA,
  type ChunkPoints,
  type ChunkRow,
  decodeChunk,
  OwnChunkWriter,
  registerChunkFunctions,
} from './metricChunks.js';
import type { RowSinkMaker } from './rowJob.js';
import type { MetricRowWriters, StoredMetrics } from './storeTypes.js';

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
${CHUNK_SCHEMA}`;

/** The output tables of this module (cleared and truncated with the others). */
export const METRIC_TABLES = ['metric_points', 'metric_definitions', 'metric_chunks'] as const;

/**
 * Writers of metric rows (call inside the batch's transaction), through the sinks `make` makes of
 * their statements (the database's connection, or its writer thread: writerThread.ts). xrate's own
 * points go to `own`, which writes them as chunks when flushed (before the batch's commit).
 *
 * @example
 * ```ts
 * const make = (sql) => { const s = db.prepare(sql); return s.run.bind(s); };
 * const own = new OwnChunkWriter(make);
 * const w = metricWriters(make, own);
 * w.point(event, 1, batch);
 * own.flush();
 * ```
 */
export function metricWriters(make: RowSinkMaker, own: OwnChunkWriter = new OwnChunkWriter(make)): MetricRowWriters {
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
    // Gathered per series, written as chunks when the batch commits (own.flush()).
    ownPoints: (b, seq, batch) => own.add(b, seq, batch),
    definition: (e, seq, batch) => definition(e.metricId, e.description, e.time, seq, batch),
  };
}

/** The columns of a point, in the order of {@link PointRow} (rows are read as arrays: much cheaper than objects). */
export const POINT_COLUMNS = 'metric_id, exchange_id, symbol_id, asset_id, chain_id, network_id, time, recv_time, kind, value, text, seq';

/** A row of `metric_points` as read with {@link POINT_COLUMNS}. */
export type PointRow = [
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

/** A point as read back from a row of `metric_points` (also the reference reader's: test/helpers/metricRows.ts). */
export function pointOf(r: PointRow): StoredMetricPoint {
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
export function where(filter: MetricFilter): { sql: string; params: Record<string, string> } {
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

/** The columns of a series key. */
const KEY = 'metric_id, exchange_id, symbol_id, asset_id';
/** The condition of one series, its key as named parameters. */
const SAME_SERIES = 'metric_id = @metric_id AND exchange_id = @exchange_id AND symbol_id = @symbol_id AND asset_id = @asset_id';

/** Points as columns, with their seqs (what orders two points of one time). */
interface SeqColumns {
  times: number[];
  values: (number | null)[];
  texts: (string | null)[];
  seqs: number[];
}

/** Whether point (ta, sa) comes before point (tb, sb): by time, then seq. */
const before = (ta: number, sa: number, tb: number, sb: number): boolean => ta < tb || (ta === tb && sa < sb);

/**
 * The order of two point lists each in (time, seq) order, merged: an index `i` of the first
 * list as `i`, of the second as `-1 - i`.
 */
function mergeOrder(
  a: { times: ArrayLike<number>; seqs: ArrayLike<number> },
  b: { times: ArrayLike<number>; seqs: ArrayLike<number> },
): Int32Array {
  const na = a.times.length;
  const nb = b.times.length;
  const out = new Int32Array(na + nb);
  let i = 0;
  let j = 0;
  for (let k = 0; k < out.length; k++) {
    out[k] = j >= nb || (i < na && before(a.times[i], a.seqs[i], b.times[j], b.seqs[j])) ? i++ : -1 - j++;
  }
  return out;
}

/**
 * The {@link MetricsSource} of a replay database (a database written before metrics were stored
 * answers with no metric; one written before own points were stored as chunks, from its rows).
 * Every answer is the one the same points would give as rows of `metric_points`.
 *
 * @example
 * ```ts
 * const metrics = new DatabaseMetrics(db, OWN_METRICS);
 * metrics.current({ scope: 'asset', asset_id: 'BTC' });
 * ```
 */
export class DatabaseMetrics implements StoredMetrics {
  private readonly stored: boolean;
  /** Whether the database has the table of own points as chunks. */
  private readonly chunked: boolean;

  /** `own`: the definitions of xrate's own metrics (listed when the database holds points of them). */
  constructor(
    private readonly db: Database.Database,
    private readonly own: readonly MetricDefinition[] = [],
  ) {
    const has = (name: string): boolean => !!db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name);
    this.stored = has('metric_points');
    this.chunked = this.stored && has('metric_chunks');
    if (this.chunked) registerChunkFunctions(db);
  }

  listing(at?: TimeUs): MetricDefinition[] {
    if (!this.stored) return [];
    const t = asOfTick(at);
    const sql = this.chunked
      ? 'SELECT metric_id FROM metric_points WHERE time <= @t UNION SELECT metric_id FROM metric_chunks WHERE first <= @t'
      : 'SELECT DISTINCT metric_id FROM metric_points WHERE time <= @t';
    const seen = this.db.prepare(sql).pluck().all({ t }) as string[];
    const defs = this.db.prepare('SELECT metric_id, description FROM metric_definitions WHERE time <= ? ORDER BY time, seq');
    return metricListing(this.own, seen, defs.all(t) as MetricDefinition[]);
  }

  series(filter: MetricFilter, at?: TimeUs): SeriesKey[] {
    if (!this.stored) return [];
    const w = where(filter);
    const rows = `SELECT DISTINCT ${KEY} FROM metric_points WHERE ${w.sql} AND time <= @at`;
    const sql = this.chunked
      ? `${rows} UNION SELECT ${KEY} FROM metric_chunks WHERE ${w.sql} AND first <= @at ORDER BY ${KEY}`
      : `${rows} ORDER BY ${KEY}`;
    return this.db.prepare(sql).all({ ...w.params, at: asOfTick(at) }) as SeriesKey[];
  }

  current(filter: MetricFilter, at?: TimeUs): StoredMetricPoint[] {
    if (!this.stored) return [];
    const latest = this.db
      .prepare(`SELECT ${POINT_COLUMNS} FROM metric_points WHERE ${SAME_SERIES} AND time <= @at ORDER BY time DESC, seq DESC LIMIT 1`)
      .raw();
    // A series' chunks are in (time, seq) order: its latest point as of `at` is in the last chunk that starts by then.
    const chunk = this.chunked
      ? this.db.prepare(
          `SELECT ${CHUNK_COLUMNS} FROM metric_chunks WHERE ${SAME_SERIES} AND first <= @at ORDER BY first DESC, seq_first DESC LIMIT 1`,
        )
      : undefined;
    const t = asOfTick(at);
    return this.series(filter, at).map((k) => {
      const row = latest.get({ ...k, at: t }) as PointRow | undefined;
      const c = chunk?.get({ ...k, at: t }) as ChunkRow | undefined;
      const last = c === undefined ? undefined : lastChunkPoint(c, t);
      if (last === undefined) return pointOf(row as PointRow);
      return pointOf(row !== undefined && before(last[6], last[11], row[6], row[11]) ? row : last);
    });
  }

  spans(filter: MetricFilter, at?: TimeUs): SeriesSpan[] {
    if (!this.stored) return [];
    const w = where(filter);
    const rows = `SELECT ${KEY}, MIN(time) AS first, MAX(time) AS last FROM metric_points
                  WHERE ${w.sql} AND time <= @at GROUP BY ${KEY}`;
    const sql = this.chunked
      ? `SELECT ${KEY}, MIN(first) AS first, MAX(last) AS last FROM (${rows}
           UNION ALL SELECT ${KEY}, first, CASE WHEN last <= @at THEN last ELSE xrate_chunk_last(points, n, @at) END
           FROM metric_chunks WHERE ${w.sql} AND first <= @at)
         GROUP BY ${KEY} ORDER BY ${KEY}`
      : `${rows} ORDER BY ${KEY}`;
    return this.db.prepare(sql).all({ ...w.params, at: asOfTick(at) }) as SeriesSpan[];
  }

  points(filter: MetricFilter, from: TimeUs, to: TimeUs): StoredMetricPoint[] {
    if (!this.stored) return [];
    const w = where(filter);
    const sql = `SELECT ${POINT_COLUMNS} FROM metric_points WHERE ${w.sql} AND time >= @from AND time < @to ORDER BY time, seq`;
    const read = this.db.transaction(() => ({
      rows: this.db
        .prepare(sql)
        .raw()
        .all({ ...w.params, from, to }) as PointRow[],
      chunks: this.chunked ? this.chunkPoints(filter, from, to) : undefined,
    }));
    const { rows, chunks } = read();
    if (chunks === undefined || chunks.times.length === 0) return rows.map(pointOf);
    const c = chunks;
    const chunkRow = (j: number): PointRow => [
      ...c.keys[j],
      null,
      null,
      c.times[j],
      c.times[j],
      'decimal',
      c.values[j],
      c.texts[j],
      c.seqs[j],
    ];
    if (rows.length === 0) return c.times.map((_, j) => pointOf(chunkRow(j)));
    const order = mergeOrder({ times: rows.map((r) => r[6]), seqs: rows.map((r) => r[11]) }, c);
    return Array.from(order, (k) => pointOf(k >= 0 ? rows[k] : chunkRow(-1 - k)));
  }

  /**
   * Each column is read by a query of its own, plucked (a value per row, no array per row: reading
   * rows of three values costs half as much again as the three columns), in one read transaction
   * so the three see the same rows; the own points' chunks are decoded in the same transaction and
   * merged in.
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
    const read = this.db.transaction(() => {
      const chunks = this.chunked ? this.chunkPoints(filter, from, to) : undefined;
      const rows: SeqColumns = {
        times: column('time') as number[],
        values: column(`CASE WHEN kind = 'decimal' THEN value END`) as (number | null)[],
        texts: column(`CASE WHEN kind = 'decimal' THEN ifnull(text, '') END`) as (string | null)[],
        seqs: chunks === undefined || chunks.times.length === 0 ? [] : (column('seq') as number[]),
      };
      return { rows, chunks };
    });
    const { rows, chunks } = read();
    if (chunks === undefined || chunks.times.length === 0) return { times: rows.times, values: rows.values, texts: rows.texts };
    if (rows.times.length === 0) return { times: chunks.times, values: chunks.values, texts: chunks.texts };
    const order = mergeOrder(rows, chunks);
    const pick = <T>(a: T[], b: T[]): T[] => Array.from(order, (k) => (k >= 0 ? a[k] : b[-1 - k]));
    return { times: pick(rows.times, chunks.times), values: pick(rows.values, chunks.values), texts: pick(rows.texts, chunks.texts) };
  }

  /** The own points of the series `filter` selects with from <= time < to, in (time, seq) order, as columns with their series keys. */
  private chunkPoints(filter: MetricFilter, from: TimeUs, to: TimeUs): SeqColumns & { keys: [string, string, string, string][] } {
    const w = where(filter);
    const chunks = this.db
      .prepare(`SELECT ${CHUNK_COLUMNS} FROM metric_chunks WHERE ${w.sql} AND last >= @from AND first < @to ORDER BY seq_first`)
      .all({ ...w.params, from, to }) as ChunkRow[];
    const out = {
      times: [] as number[],
      values: [] as (number | null)[],
      texts: [] as (string | null)[],
      seqs: [] as number[],
      keys: [] as [string, string, string, string][],
    };
    let sorted = true;
    for (const c of chunks) {
      const d = decodeChunk(c);
      const key: [string, string, string, string] = [c.metric_id, c.exchange_id, c.symbol_id, c.asset_id];
      for (let i = 0; i < c.n; i++) {
        const t = d.times[i];
        if (t < from || t >= to) continue;
        const n = out.times.length;
        if (n > 0 && !before(out.times[n - 1], out.seqs[n - 1], t, d.seqs[i])) sorted = false;
        const v = d.values[i];
        out.times.push(t);
        out.values.push(Number.isNaN(v) ? null : v);
        out.texts.push(d.text(i));
        out.seqs.push(d.seqs[i]);
        out.keys.push(key);
      }
    }
    if (sorted) return out;
    // Several series: their points interleave.
    const order = Array.from(out.times, (_, i) => i).sort((i, j) => out.times[i] - out.times[j] || out.seqs[i] - out.seqs[j]);
    const by = <T>(a: T[]): T[] => order.map((i) => a[i]);
    return { times: by(out.times), values: by(out.values), texts: by(out.texts), seqs: by(out.seqs), keys: by(out.keys) };
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
    const k = { metric_id, exchange_id, symbol_id, asset_id };
    if (!this.chunked || !this.chunkAt(k, Number.MAX_SAFE_INTEGER)) {
      const got = this.valuesAtStmt.all({ ...k, times: JSON.stringify(times) }) as (number | null)[];
      return got.map((v) => v ?? null);
    }
    // xrate's own points (chunks): the last chunk that starts by each time, one index seek per
    // time (a chunk decoded once); the series' rows, if it has any, compared by (time, seq).
    const hasRows = this.hasRowsStmt().get(k) !== undefined;
    const row = hasRows
      ? this.db.prepare(
          `SELECT time, seq, CASE WHEN kind = 'decimal' THEN value END AS value FROM metric_points
           WHERE ${SAME_SERIES} AND time <= @at ORDER BY time DESC, seq DESC LIMIT 1`,
        )
      : undefined;
    const decoded = new Map<number, ChunkPoints>();
    return times.map((t) => {
      const c = this.chunkAt(k, t);
      let best: { time: number; seq: number; value: number | null } | undefined;
      if (c !== undefined) {
        let d = decoded.get(c.id);
        if (d === undefined) {
          d = decodeChunk(c);
          decoded.set(c.id, d);
        }
        let i = c.n - 1;
        while (i >= 0 && d.times[i] > t) i--;
        if (i >= 0) best = { time: d.times[i], seq: d.seqs[i], value: Number.isNaN(d.values[i]) ? null : d.values[i] };
      }
      const r = row?.get({ ...k, at: t }) as { time: number; seq: number; value: number | null } | undefined;
      if (r !== undefined && (best === undefined || before(best.time, best.seq, r.time, r.seq))) best = r;
      return best?.value ?? null;
    });
  }

  /** The last chunk of series `k` that starts at or before `at`, if any (with its rowid). */
  private chunkAt(k: SeriesKey, at: TimeUs): (ChunkRow & { id: number }) | undefined {
    this.chunkAtStmt ??= this.db.prepare(
      `SELECT rowid AS id, ${CHUNK_COLUMNS} FROM metric_chunks WHERE ${SAME_SERIES} AND first <= @at ORDER BY first DESC, seq_first DESC LIMIT 1`,
    );
    return this.chunkAtStmt.get({ ...k, at }) as (ChunkRow & { id: number }) | undefined;
  }

  private hasRowsStmt(): Database.Statement {
    this.hasRows ??= this.db.prepare(`SELECT 1 FROM metric_points WHERE ${SAME_SERIES} LIMIT 1`);
    return this.hasRows;
  }

  private chunkAtStmt: Database.Statement | undefined;
  private hasRows: Database.Statement | undefined;

  /** Whether series `key` has a point at or before `at` (one index seek). */
  hasSeries(key: SeriesKey, at: TimeUs = Number.MAX_SAFE_INTEGER): boolean {
    if (!this.stored) return false;
    this.hasSeriesStmt ??= this.db.prepare(
      'SELECT 1 FROM metric_points WHERE metric_id = ? AND exchange_id = ? AND symbol_id = ? AND asset_id = ? AND time <= ? LIMIT 1',
    );
    if (this.hasSeriesStmt.get(key.metric_id, key.exchange_id, key.symbol_id, key.asset_id, at) !== undefined) return true;
    const { metric_id, exchange_id, symbol_id, asset_id } = key;
    return this.chunked && this.chunkAt({ metric_id, exchange_id, symbol_id, asset_id }, at) !== undefined;
  }

  private valuesAtStmt: Database.Statement | undefined;
  private hasSeriesStmt: Database.Statement | undefined;
  // ---- end of the values in force at given times ----
}

/** The point of chunk `c` that is its last at or before `at` (as a row of `metric_points`), if any. */
function lastChunkPoint(c: ChunkRow, at: TimeUs): PointRow | undefined {
  const d = decodeChunk(c);
  let i = c.n - 1;
  while (i >= 0 && d.times[i] > at) i--;
  if (i < 0) return undefined;
  const v = d.values[i];
  const t = d.times[i];
  return [
    c.metric_id,
    c.exchange_id,
    c.symbol_id,
    c.asset_id,
    null,
    null,
    t,
    t,
    'decimal',
    Number.isNaN(v) ? null : v,
    d.text(i),
    d.seqs[i],
  ];
}
