/**
 * The stored metrics of partitions merged into one replay database (partitionMerge.ts), and the
 * stored points read back in `seq` order as rows (compareReplays.ts): the log's points and the
 * definitions are rows, xrate's own points chunks (metricChunks.ts), so both need code of their
 * own beyond SQL.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { CHUNK_COLUMNS, CHUNK_INSERT, type ChunkPoints, type ChunkRow, chunkRow, decodeChunk, writeChunk } from './metricChunks.js';

const KEY = 'metric_id, exchange_id, symbol_id, asset_id';
const POINT_COLS = 'metric_id, exchange_id, symbol_id, asset_id, chain_id, network_id, time, recv_time, kind, value, text';
/** Chunks read at a time. */
const PAGE = 512;

/** Whether two stored values are the same REAL (NaN is stored as NULL: two NaNs are). */
const sameValue = (a: number, b: number): boolean => a === b || (Number.isNaN(a) && Number.isNaN(b));

/** The number of elements of sorted `a` below `x`. */
function below(a: Float64Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The seqs of partition `s`'s own points left out by the trim of a merge: per series, its first
 * point when its value (float and text) equals the series' last point merged before.
 */
function droppedFirsts(db: Database.Database, s: string): Float64Array {
  // SQLite takes the bare columns from the row of the min.
  const firsts = db
    .prepare(`SELECT ${CHUNK_COLUMNS}, min(seq_first) AS seq_first FROM ${s}.metric_chunks GROUP BY ${KEY}`)
    .all() as (ChunkRow & { seq_first: number })[];
  const lastOf = db.prepare(
    `SELECT ${CHUNK_COLUMNS} FROM main.metric_chunks WHERE metric_id = ? AND exchange_id = ? AND symbol_id = ? AND asset_id = ?
     ORDER BY first DESC, seq_first DESC LIMIT 1`,
  );
  const out: number[] = [];
  for (const f of firsts) {
    const l = lastOf.get(f.metric_id, f.exchange_id, f.symbol_id, f.asset_id) as ChunkRow | undefined;
    if (l === undefined) continue;
    const a = decodeChunk(f);
    const b = decodeChunk(l);
    const j = l.n - 1;
    if (sameValue(a.values[0], b.values[j]) && a.text(0) === b.text(j)) out.push(a.seqs[0]);
  }
  return Float64Array.from(out).sort();
}

const maxOf = (db: Database.Database, sql: string): number => (db.prepare(sql).pluck().get() as number | null) ?? 0;

/**
 * The metric points and definitions of partition `s` (attached to `db`) merged after the rows
 * `db` holds, in its own order (`seq`): the log's points and the definitions as they are (each
 * partition stores those of its own lines), xrate's own points trimmed as every output written on
 * change (with `trim`: each series' first point kept only when it differs from the series' last
 * merged one), kept in the partition's chunks; `seq` numbered on from the points and definitions
 * merged before, batch 0.
 */
export function mergePartitionMetrics(db: Database.Database, s: string, trim: boolean): void {
  const offset = Math.max(
    maxOf(db, 'SELECT max(seq) FROM main.metric_points'),
    maxOf(db, 'SELECT max(seq) FROM main.metric_definitions'),
    maxOf(db, 'SELECT max(seq_last) FROM main.metric_chunks'),
  );
  const dropped = trim ? droppedFirsts(db, s) : new Float64Array(0);
  // A partition numbers its points and definitions 1, 2, ...: a point's new seq follows from its
  // own and the points dropped before it. Otherwise (a gap) every seq is ranked.
  const count =
    maxOf(db, `SELECT count(*) FROM ${s}.metric_points`) +
    maxOf(db, `SELECT count(*) FROM ${s}.metric_definitions`) +
    maxOf(db, `SELECT sum(n) FROM ${s}.metric_chunks`);
  const first = Math.min(
    ...[`${s}.metric_points`, `${s}.metric_definitions`].map((t) => maxOf(db, `SELECT coalesce(min(seq), 1) FROM ${t}`)),
    maxOf(db, `SELECT coalesce(min(seq_first), 1) FROM ${s}.metric_chunks`),
  );
  const last = Math.max(
    maxOf(db, `SELECT max(seq) FROM ${s}.metric_points`),
    maxOf(db, `SELECT max(seq) FROM ${s}.metric_definitions`),
    maxOf(db, `SELECT max(seq_last) FROM ${s}.metric_chunks`),
  );
  let renumber: (seq: number) => number;
  if (count === last - first + 1) renumber = (seq) => offset + seq - first + 1 - below(dropped, seq);
  else {
    const all = allSeqs(db, s, dropped);
    renumber = (seq) => offset + below(all, seq) + 1;
  }
  db.function('xrate_merge_seq', { deterministic: true }, (seq: unknown) => renumber(Number(seq)));
  db.exec(`INSERT INTO metric_points(${POINT_COLS}, seq, batch)
    SELECT ${POINT_COLS}, xrate_merge_seq(seq), 0 FROM ${s}.metric_points ORDER BY seq`);
  db.exec(`INSERT INTO metric_definitions(metric_id, description, time, seq, batch)
    SELECT metric_id, description, time, xrate_merge_seq(seq), 0 FROM ${s}.metric_definitions ORDER BY seq`);
  const insert = db.prepare(CHUNK_INSERT);
  const page = db.prepare(`SELECT rowid AS id, ${CHUNK_COLUMNS} FROM ${s}.metric_chunks WHERE rowid > ? ORDER BY rowid LIMIT ${PAGE}`);
  for (let after = 0; ; ) {
    const rows = page.all(after) as (ChunkRow & { id: number })[];
    if (rows.length === 0) break;
    for (const c of rows) {
      const d = decodeChunk(c);
      const kept = (i: number): boolean => dropped.length === 0 || dropped[below(dropped, d.seqs[i])] !== d.seqs[i];
      let all = true;
      for (let i = 0; i < c.n && all; i++) all = kept(i);
      if (all) {
        insertRenumbered(insert, c, d, renumber);
        continue;
      }
      const keep: number[] = [];
      for (let i = 0; i < c.n; i++) if (kept(i)) keep.push(i);
      writeChunk(
        insert.run.bind(insert),
        [c.metric_id, c.exchange_id, c.symbol_id, c.asset_id],
        {
          times: keep.map((i) => d.times[i]),
          values: keep.map((i) => d.values[i]),
          seqs: keep.map((i) => renumber(d.seqs[i])),
          texts: keep.map((i) => d.text(i)),
        },
        0,
      );
    }
    after = rows[rows.length - 1].id;
  }
}

/**
 * Chunk `c` (its points `d`) with every point kept, its seqs renumbered: its times, values and
 * texts column as they are, which is what writeChunk writes for them (they were written so),
 * without a text or an array per point.
 */
function insertRenumbered(insert: Database.Statement, c: ChunkRow, d: ChunkPoints, renumber: (seq: number) => number): void {
  const n = c.n;
  const a = new Float64Array(3 * n);
  a.set(d.times, 0);
  a.set(d.values, n);
  for (let i = 0; i < n; i++) a[2 * n + i] = renumber(d.seqs[i]);
  insert.run(...chunkRow([c.metric_id, c.exchange_id, c.symbol_id, c.asset_id], a, n, c.texts, 0));
}

/** Every seq partition `s` keeps (its points', definitions' and own points' but the dropped), sorted. */
function allSeqs(db: Database.Database, s: string, dropped: Float64Array): Float64Array {
  const seqs: number[] = [
    ...(db.prepare(`SELECT seq FROM ${s}.metric_points`).pluck().all() as number[]),
    ...(db.prepare(`SELECT seq FROM ${s}.metric_definitions`).pluck().all() as number[]),
  ];
  for (const c of db.prepare(`SELECT ${CHUNK_COLUMNS} FROM ${s}.metric_chunks`).all() as ChunkRow[]) {
    const d = decodeChunk(c);
    for (let i = 0; i < c.n; i++) if (dropped[below(dropped, d.seqs[i])] !== d.seqs[i]) seqs.push(d.seqs[i]);
  }
  return Float64Array.from(seqs).sort();
}

/** The number of own points stored in chunks. */
export function chunkPointCount(db: Database.Database): number {
  return maxOf(db, 'SELECT sum(n) FROM metric_chunks');
}

/** A chunk being read point by point. */
interface Cursor {
  row: ChunkRow;
  d: ChunkPoints;
  i: number;
}

/** A min-heap of cursors by the seq of their current point. */
class CursorHeap {
  private readonly a: Cursor[] = [];
  get size(): number {
    return this.a.length;
  }
  top(): Cursor {
    return this.a[0];
  }
  private key(k: number): number {
    const c = this.a[k];
    return c.d.seqs[c.i];
  }
  push(c: Cursor): void {
    const a = this.a;
    a.push(c);
    for (let k = a.length - 1; k > 0; ) {
      const p = (k - 1) >> 1;
      if (this.key(p) <= this.key(k)) break;
      [a[p], a[k]] = [a[k], a[p]];
      k = p;
    }
  }
  pop(): Cursor {
    const a = this.a;
    const top = a[0];
    const end = a.pop() as Cursor;
    if (a.length > 0) {
      a[0] = end;
      for (let k = 0; ; ) {
        const l = 2 * k + 1;
        const r = l + 1;
        let m = k;
        if (l < a.length && this.key(l) < this.key(m)) m = l;
        if (r < a.length && this.key(r) < this.key(m)) m = r;
        if (m === k) break;
        [a[m], a[k]] = [a[k], a[m]];
        k = m;
      }
    }
    return top;
  }
}

/**
 * Every stored point of `rows` (rows of `metric_points`, in seq order, without `batch`) and of
 * the chunks `chunks` reads (another connection to the same database: both are read in step) as
 * the rows of `metric_points` they would be, in seq order (then rowid, for the rows). Holds one
 * chunk per series at a time.
 */
export function* pointRowsBySeq(
  rows: Iterable<Record<string, unknown>>,
  chunks: Database.Database | undefined,
): Generator<Record<string, unknown>> {
  const own = chunks === undefined ? undefined : ownPointsBySeq(chunks);
  let o = own?.next();
  for (const r of rows) {
    while (o !== undefined && !o.done && (o.value.seq as number) < (r.seq as number)) {
      yield o.value;
      o = own?.next();
    }
    yield r;
  }
  while (o !== undefined && !o.done) {
    yield o.value;
    o = own?.next();
  }
}

/** The own points of the chunks of `db`, as rows of `metric_points` (less `batch`), in seq order. */
function* ownPointsBySeq(db: Database.Database): Generator<Record<string, unknown>> {
  const has = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'metric_chunks'`).get();
  if (!has) return;
  const it = db.prepare(`SELECT ${CHUNK_COLUMNS}, seq_first FROM metric_chunks ORDER BY seq_first`).iterate() as IterableIterator<
    ChunkRow & { seq_first: number }
  >;
  const heap = new CursorHeap();
  let next = it.next();
  for (;;) {
    while (!next.done && (heap.size === 0 || next.value.seq_first <= heap.top().d.seqs[heap.top().i])) {
      heap.push({ row: next.value, d: decodeChunk(next.value), i: 0 });
      next = it.next();
    }
    if (heap.size === 0) return;
    const c = heap.pop();
    const { row, d, i } = c;
    const v = d.values[i];
    yield {
      metric_id: row.metric_id,
      exchange_id: row.exchange_id,
      symbol_id: row.symbol_id,
      asset_id: row.asset_id,
      chain_id: null,
      network_id: null,
      time: d.times[i],
      recv_time: d.times[i],
      kind: 'decimal',
      value: Number.isNaN(v) ? null : v,
      text: d.text(i),
      seq: d.seqs[i],
    };
    c.i++;
    if (c.i < row.n) heap.push(c);
  }
}
