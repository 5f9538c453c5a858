/**
 * SQLite reader: the rows of table `events`, in rowid order, through better-sqlite3 (read-only).
 *
 * Each row's columns become the record (TEXT → string, INTEGER/REAL → number, NULL → null,
 * BLOB → UTF-8 string); `line` is the rowid and `raw` the record as JSON. Column names are the
 * event field names (`type`, `time`, `symbol_id`, ...), exactly as in the CSV format.
 *
 * A row whose values add up to more than `maxLineBytes` bytes (`octet_length`: UTF-8 bytes of
 * text, bytes of a BLOB, the text form of a number) becomes a `line_too_long` record; SQLite
 * measures the values, and a value over the limit reaches JavaScript only as its first 256
 * characters (for the reject's raw text), so a huge value is never loaded whole. A page of rows
 * none of which is over the limit (SQLite counts them first) is read as it is.
 * {@link writeEventTable} writes such a file (the log generator uses it).
 *
 * @module
 */

import { existsSync, unlinkSync } from 'node:fs';
import Database from 'better-sqlite3';
import { clipText, KEEP_CHARS, tooLongMessage, tooLongRecord } from './lineLimit.js';
import { JsonRecord } from './record.js';
import { type RecordMaker, recordMaker } from './recordShape.js';
import type { EventSource, ReaderOptions, SourceRecord } from './source.js';
import { isXrateError, messageOf, XrateError } from '../core/errors.js';

/** The table xrate reads. */
export const SQLITE_TABLE = 'events';

/**
 * Opens a SQLite event log (see the module description). Called by `openSource`. Throws an
 * XrateError when the file is not a SQLite database or has no `events` table.
 *
 * @example
 * ```ts
 * const src = openSqlite('log.db', { batchSize: 4096, startLine: 1, gzip: false, totalBytes: 0, maxLineBytes: 1 << 20 });
 * console.log(src.totalRecords);
 * ```
 */
export function openSqlite(path: string, ro: ReaderOptions): EventSource {
  const { batchSize, startLine } = ro;
  let db: Database.Database;
  let totalRecords: number;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new XrateError('input', `cannot open SQLite file "${path}": ${(e as Error).message}`);
  }
  try {
    const t = db.prepare(`SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?`).get(SQLITE_TABLE);
    if (t === undefined) throw new XrateError('input', `SQLite file "${path}" has no "${SQLITE_TABLE}" table`);
    totalRecords = (db.prepare(`SELECT count(*) AS n FROM ${SQLITE_TABLE}`).get() as { n: number }).n;
  } catch (e) {
    db.close();
    if (isXrateError(e)) throw e;
    throw new XrateError('input', `cannot read SQLite file "${path}": ${messageOf(e)}`, { cause: e });
  }
  let read = 0;
  let closed = false;
  /** A batches() loop is running (one at a time: it pages through the table by rowid). */
  let reading = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    db.close();
  };
  return {
    format: 'sqlite',
    path,
    totalBytes: ro.totalBytes,
    totalRecords,
    bytesRead: () => (totalRecords > 0 ? Math.round((ro.totalBytes * Math.min(read, totalRecords)) / totalRecords) : ro.totalBytes),
    async *batches() {
      if (closed) return;
      if (reading) {
        throw new XrateError('internal', `SQLite source "${path}" is already being read`);
      }
      // Pages of rows by rowid: one native call per batch is much cheaper than a row iterator.
      const page = pageReader(db, ro.maxLineBytes);
      reading = true;
      read = 0;
      let next = startLine;
      try {
        for (;;) {
          // A page without a row over the limit is read as it is (its values need no cutting); the
          // count and the page in one read transaction, so that they see the same rows.
          const { rows, sized, make } = page(next, batchSize);
          if (rows.length === 0) break;
          const batch: SourceRecord[] = new Array(rows.length);
          for (let r = 0; r < rows.length; r++) {
            const row = rows[r];
            const record = make(row);
            const line = Number(row[0]);
            const bytes = sized ? (row[1] as number) : 0;
            batch[r] = bytes > ro.maxLineBytes ? tooLongRow(line, record, bytes, ro.maxLineBytes) : new JsonRecord(line, record);
          }
          read += rows.length;
          next = Number(rows[rows.length - 1][0]) + 1;
          yield batch;
          if (closed) return;
          if (rows.length < batchSize) break;
        }
      } finally {
        reading = false;
      }
    },
    close,
  };
}

/** A statement reading a page of rows (`raw` rows), and the maker of a row's record (its columns after the first `first`). */
interface PageStatement {
  stmt: Database.Statement;
  make: RecordMaker;
}

/** A BLOB as text (UTF-8); any other value as it is. */
const blobText = (v: unknown): unknown => (v !== null && typeof v === 'object' && Buffer.isBuffer(v) ? v.toString('utf8') : v);

function pageStatement(db: Database.Database, sql: string, first: number): PageStatement {
  const stmt = db.prepare(sql).raw(true);
  return {
    stmt,
    make: recordMaker(
      stmt
        .columns()
        .slice(first)
        .map((c) => c.name),
      first,
      blobText,
    ),
  };
}

/** A page of rows: `__line` (the rowid), with `sized` `__bytes` (the row's size), then the columns; `make` makes a row's record. */
interface Page {
  rows: unknown[][];
  sized: boolean;
  make: RecordMaker;
}

/**
 * Reads the page of `limit` rows from rowid `from`, in rowid order. With `sized`: `__line`,
 * `__bytes` (the row's size: its values' `octet_length` added up), then the columns, a value over
 * `max` bytes cut to its first characters. Measuring every value of a page costs more than
 * reading it (each value's length taken twice; 2 M rows of 16 columns: 1.7-2.6 s on 3.8-5.3 s of
 * reading them), so the rows over `max` bytes are counted first (each value's length once), and a
 * page with none (every page of most logs) is read without `__bytes`, its values as they are: the
 * count and the page in one read transaction, they see the same rows. When the table's columns
 * cannot be named (e.g. a view with two columns of one name), its rows are read as they are.
 */
function pageReader(db: Database.Database, max: number): (from: number, limit: number) => Page {
  const from = `FROM ${SQLITE_TABLE} WHERE rowid >= ? ORDER BY rowid LIMIT ?`;
  const plain = pageStatement(db, `SELECT rowid AS __line, * ${from}`, 1);
  const asIs = (at: number, limit: number): Page => ({ rows: plain.stmt.all(at, limit) as unknown[][], sized: false, make: plain.make });
  let sized: PageStatement;
  let over: Database.Statement;
  try {
    const names = db
      .prepare(`SELECT * FROM ${SQLITE_TABLE}`)
      .columns()
      .map((c) => `"${c.name.replaceAll('"', '""')}"`);
    const size = names.length > 0 ? names.map((c) => `coalesce(octet_length(${c}), 0)`).join(' + ') : '0';
    const cols = names.map((c) => `, CASE WHEN octet_length(${c}) > ${max} THEN substr(${c}, 1, ${KEEP_CHARS}) ELSE ${c} END AS ${c}`);
    sized = pageStatement(db, `SELECT rowid AS __line, ${size} AS __bytes${cols.join('')} ${from}`, 2);
    over = db.prepare(`SELECT count(*) FROM (SELECT ${size} AS bytes ${from}) WHERE bytes > ${max}`).pluck();
  } catch {
    return asIs;
  }
  return db.transaction((at: number, limit: number): Page => {
    if ((over.get(at, limit) as number) === 0) return asIs(at, limit);
    return { rows: sized.stmt.all(at, limit) as unknown[][], sized: true, make: sized.make };
  });
}

/** The `line_too_long` record of a row of `bytes` bytes (its values over the limit already cut). */
function tooLongRow(line: number, record: Record<string, unknown>, bytes: number, max: number): SourceRecord {
  const json = JSON.stringify(record);
  return tooLongRecord(line, clipText(json, 0, json.length, KEEP_CHARS, bytes), tooLongMessage(bytes, max, 'row'));
}

/**
 * Writes a new SQLite event log at `path` (replacing any file there): table `events` with one TEXT
 * column per name of `columns`, in order, and one row per item of `rows` (null = NULL), committed
 * 20,000 rows at a time. Returns the number of rows.
 *
 * @example
 * ```ts
 * writeEventTable('log.sqlite', ['type', 'time', 'exchange_id'], [['exchange', '2024-03-01T00:00:00Z', 'KRAKEN']]);
 * ```
 */
export function writeEventTable(path: string, columns: readonly string[], rows: Iterable<(string | null)[]>): number {
  for (const p of [path, `${path}-journal`, `${path}-wal`, `${path}-shm`]) if (existsSync(p)) unlinkSync(p);
  const db = new Database(path);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec(`CREATE TABLE ${SQLITE_TABLE} (${columns.map((c) => `"${c}" TEXT`).join(', ')})`);
    const ins = db.prepare(`INSERT INTO ${SQLITE_TABLE} VALUES (${columns.map(() => '?').join(', ')})`);
    const insertMany = db.transaction((batch: (string | null)[][]) => {
      for (const r of batch) ins.run(r);
    });
    let n = 0;
    let pending: (string | null)[][] = [];
    for (const row of rows) {
      pending.push(row);
      n++;
      if (pending.length >= 20_000) {
        insertMany(pending);
        pending = [];
      }
    }
    if (pending.length > 0) insertMany(pending);
    return n;
  } finally {
    db.close();
  }
}
