/**
 * Two replay databases compared output by output, row for row: what "a partitioned replay equals
 * a serial one" (docs/parallel.md) means, as one function that tests and scripts/check-partitions.ts
 * share.
 *
 * Compared, in this order, each in an order that makes its rows comparable:
 *
 * | table | order | columns |
 * |---|---|---|
 * | `rates` | rowid (the order written) | all but `batch` |
 * | `ohlc` | base, quote, period_id, start | all but `batch` |
 * | `series` | base, quote, tick | all but `batch` |
 * | `rejects` | rowid | all but `batch` |
 * | `metric_points` | seq | all but `batch` (`seq` included); xrate's own points, stored as chunks (`metric_chunks`), compared as the rows they stand for |
 * | `metric_definitions` | seq | all but `batch` (`seq` included) |
 * | `positions` | seq | all but `batch` (`seq` included) |
 * | `connectivity` | seq | all but `batch` (`seq` included) |
 * | `runs` | the run the outputs belong to (one row) | its counts: events read, accepted, rejected, rejects by reason (as an object: key order aside), quotes discarded, ticks, first and last tick, pairs with a rate, rate changes, status, stopped; and the resolved `config` |
 *
 * Left out, because they legitimately differ between two replays of one log: `batch` (a serial
 * replay numbers its input batches, a merge writes 0); in `runs` the id, `started_at`,
 * `finished_at`, `duration_ms`, `pid`, `host`, `resumed`, `inputs` (the paths as given), `options`
 * (`workers` is one), and `buckets` (a serial replay counts bucket writes, a merge the rows it
 * holds); the table `meta` (the outputs' run id); and `snapshots` (ids, times, and the engine
 * state, whose final form a merge rebuilds: compare the engines' answers instead, as
 * test/e2e/partition.test.ts does).
 *
 * @module
 */
import Database from 'better-sqlite3';
import { XrateError } from '../core/errors.js';
import { pointRowsBySeq } from './metricMerge.js';

/** A row as read (column name to value). */
type Row = Record<string, unknown>;

/** One table's comparison. */
export interface TableComparison {
  table: string;
  /** Rows in the first and the second database. */
  rows: [number, number];
  /**
   * The first row (0-based, in the table's order) that differs: both rows (one is undefined when
   * that database has no row there: a missing or extra row) and the columns that differ.
   * Undefined when the tables are equal.
   */
  difference?: { index: number; a?: Row; b?: Row; columns: string[] };
}

/** Each table compared: its name, its row order and the columns left out. */
const TABLES: readonly { table: string; order: string; omit: readonly string[] }[] = [
  { table: 'rates', order: 'rowid', omit: ['batch'] },
  { table: 'ohlc', order: 'base, quote, period_id, start', omit: ['batch'] },
  { table: 'series', order: 'base, quote, tick', omit: ['batch'] },
  { table: 'rejects', order: 'rowid', omit: ['batch'] },
  { table: 'metric_points', order: 'seq, rowid', omit: ['batch'] },
  { table: 'metric_definitions', order: 'seq, rowid', omit: ['batch'] },
  { table: 'positions', order: 'seq, rowid', omit: ['batch'] },
  { table: 'connectivity', order: 'seq, rowid', omit: ['batch'] },
];

/** The `runs` columns compared (see the module description). */
const RUN_COLUMNS = [
  'status',
  'config',
  'events_read',
  'events_accepted',
  'events_rejected',
  'rejects_by_reason',
  'quotes_discarded',
  'ticks',
  'first_tick',
  'last_tick',
  'pairs_with_rate',
  'rate_changes',
  'stopped',
] as const;

/** The names of the compared tables, in the order compared. */
export const COMPARED_TABLES: readonly string[] = [...TABLES.map((t) => t.table), 'runs'];

/** Whether two values read from SQLite are equal (numbers exactly; blobs byte for byte). */
function same(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  return Object.is(a, b);
}

/** The columns in which two rows differ (every column of either when one is missing). */
function differing(a: Row | undefined, b: Row | undefined): string[] {
  if (a === undefined || b === undefined) return Object.keys(a ?? b ?? {});
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return keys.filter((k) => !same(a[k], b[k]));
}

/** The column names of `table`, less `omit`. */
function columns(db: Database.Database, table: string, omit: readonly string[]): string[] {
  const cols = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
  if (cols.length === 0) throw new XrateError('input', `"${db.name}" has no table "${table}"`);
  return cols.filter((c) => !omit.includes(c));
}

/** Compares two row streams in step, counting both to the end. */
function compareRows(table: string, as: Iterable<Row>, bs: Iterable<Row>): TableComparison {
  const ia = as[Symbol.iterator]();
  const ib = bs[Symbol.iterator]();
  const rows: [number, number] = [0, 0];
  let difference: TableComparison['difference'];
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done && y.done) break;
    const a = x.done ? undefined : x.value;
    const b = y.done ? undefined : y.value;
    if (a) rows[0]++;
    if (b) rows[1]++;
    if (difference === undefined) {
      const cols = differing(a, b);
      if (cols.length > 0) difference = { index: Math.max(rows[0], rows[1]) - 1, a, b, columns: cols };
    }
  }
  return difference === undefined ? { table, rows } : { table, rows, difference };
}

/** The outputs' run of a database as compared: its counts (rejects by reason parsed, keys sorted). */
function runRows(db: Database.Database): Row[] {
  const m = db.prepare(`SELECT value FROM meta WHERE key = 'outputs_run'`).get() as { value: string } | undefined;
  const run = (
    m
      ? db.prepare('SELECT * FROM runs WHERE id = ?').get(Number(m.value))
      : db.prepare(`SELECT * FROM runs WHERE status = 'complete' ORDER BY id DESC LIMIT 1`).get()
  ) as Row | undefined;
  if (run === undefined) return [];
  const row: Row = {};
  for (const c of RUN_COLUMNS) row[c] = run[c];
  if (typeof row.rejects_by_reason === 'string') {
    const byReason = JSON.parse(row.rejects_by_reason) as Record<string, number>;
    row.rejects_by_reason = JSON.stringify(Object.fromEntries(Object.entries(byReason).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))));
  }
  return [row];
}

/**
 * Compares the outputs of the replay databases `a` and `b` table by table (see the module
 * description for the tables, their order and what is left out): per table the row counts and
 * the first differing row, if any. Reads both in step without holding a table in memory.
 * `tables` limits the comparison to those named (of {@link COMPARED_TABLES}; default all).
 *
 * @throws XrateError when a database cannot be opened or lacks an output table.
 * @example
 * ```ts
 * const diff = compareReplays('serial.sqlite', 'parallel.sqlite').filter((t) => t.difference);
 * ```
 */
export function compareReplays(a: string, b: string, opts: { tables?: readonly string[] } = {}): TableComparison[] {
  const wanted = (t: string) => opts.tables === undefined || opts.tables.includes(t);
  const open = (path: string): Database.Database => {
    try {
      return new Database(path, { readonly: true, fileMustExist: true });
    } catch (e) {
      throw new XrateError('input', `cannot open database "${path}": ${(e as Error).message}`);
    }
  };
  const da = open(a);
  try {
    const db = open(b);
    try {
      const out = TABLES.filter((t) => wanted(t.table)).map(({ table, order, omit }) => {
        const cols = columns(da, table, omit);
        const colsB = columns(db, table, omit);
        const select = (d: Database.Database, cs: string[]) =>
          d.prepare(`SELECT ${cs.map((c) => `"${c}"`).join(', ')} FROM ${table} ORDER BY ${order}`).iterate() as IterableIterator<Row>;
        if (table === 'metric_points') {
          // With xrate's own points, read from their chunks by connections of their own.
          const ca = open(a);
          const cb = open(b);
          try {
            return compareRows(table, pointRowsBySeq(select(da, cols), ca), pointRowsBySeq(select(db, colsB), cb));
          } finally {
            ca.close();
            cb.close();
          }
        }
        return compareRows(table, select(da, cols), select(db, colsB));
      });
      if (wanted('runs')) out.push(compareRows('runs', runRows(da), runRows(db)));
      return out;
    } finally {
      db.close();
    }
  } finally {
    da.close();
  }
}

/** Whether every table compared equal. */
export function replaysEqual(tables: readonly TableComparison[]): boolean {
  return tables.every((t) => t.difference === undefined);
}
