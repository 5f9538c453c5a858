/**
 * The replay database's writer thread (writerThread.ts starts it): its own connection to the
 * database (`workerData.path`), running each posted {@link RowJob} as one transaction (the
 * previous outputs cleared first when the job says so, its rows in order, its snapshot), then
 * counting it done in the shared state. A failed job is rolled back and its error posted on
 * `workerData.errors`; the jobs after it are counted done unrun (the run fails with that error).
 *
 * @module
 */
import Database from 'better-sqlite3';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { forEachRow, multiRowSql, type RowJob } from './rowJob.js';
import { deleteSnapshots, insertEarlyPart, insertSnapshot } from './snapshotParts.js';
import { CLEAR_SQL, WRITER_STATE } from './writerThread.js';

const { path, state, errors } = workerData as { path: string; state: SharedArrayBuffer; errors: MessagePort };
const shared = new Int32Array(state);
const statements: Database.Statement[] = [];
const columns: number[] = [];
/**
 * By statement: its form inserting {@link ROWS_AT_ONCE} rows (`INSERT ... VALUES (?, ...), (?, ...)`;
 * undefined for a statement of another shape), and the values of the rows waiting for it.
 */
const multi: (Database.Statement | undefined)[] = [];
const waiting: unknown[][] = [];
let failed = false;

/**
 * Rows of one statement that follow each other in a job are inserted this many at a time, by one
 * statement: SQLite inserts them in order, as one statement a row would (the same rowids, the
 * same replacements), and the call into better-sqlite3 and the statement's start are paid once
 * for them all (the rate rows of a replay take about a tenth less time).
 */
const ROWS_AT_ONCE = 32;

/** Records the failure of a job: posted once; the jobs after it are not run. */
function fail(e: unknown): void {
  failed = true;
  const err = e as { message?: unknown; name?: unknown; code?: unknown };
  errors.postMessage({ message: String(err?.message ?? e), name: err?.name, code: err?.code });
}

function openDb(): Database.Database | undefined {
  try {
    const d = new Database(path, { fileMustExist: true });
    d.pragma('synchronous = NORMAL');
    return d;
  } catch (e) {
    fail(e);
    return undefined;
  }
}
const db = openDb();

function run(job: RowJob, db: Database.Database): void {
  for (const sql of job.newStatements) {
    statements.push(db.prepare(sql));
    const c = sql.split('?').length - 1;
    columns.push(c);
    const many = multiRowSql(sql, ROWS_AT_ONCE);
    multi.push(many === undefined ? undefined : db.prepare(many));
    waiting.push(new Array(c * ROWS_AT_ONCE));
  }
  db.prepare('BEGIN').run();
  try {
    if (job.clear) {
      for (const sql of CLEAR_SQL) db.exec(sql);
      deleteSnapshots(db);
      if (job.clear.runId !== undefined)
        db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('outputs_run', ?)`).run(String(job.clear.runId));
    }
    runRows(job);
    if (job.snapshot) {
      const v = [...job.snapshot];
      const blob = v[6] as Uint8Array;
      v[6] = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
      insertSnapshot(db, v, job.snapshotEarly ? early : undefined);
    }
    early = undefined;
    db.prepare('COMMIT').run();
  } catch (e) {
    if (db.inTransaction) db.prepare('ROLLBACK').run();
    throw e;
  }
}

/**
 * Inserts the job's rows in order: each row by its statement, or, where rows of one statement
 * follow each other, {@link ROWS_AT_ONCE} of them by its multi-row form. Values are given as
 * arguments, not in an array: better-sqlite3 reads an array's values by generic property look-ups
 * (an eighth of the time a replay's rate rows took to insert).
 */
function runRows(job: RowJob): void {
  // The statement whose rows wait (-1: none), and how many of them.
  let cur = -1;
  let n = 0;
  const flush = (): void => {
    const c = columns[cur];
    const vals = waiting[cur];
    for (let r = 0; r < n; r++) statements[cur].run(...vals.slice(r * c, r * c + c));
    n = 0;
  };
  forEachRow(
    job,
    (s, values) => {
      const m = multi[s];
      if (s !== cur) {
        if (n > 0) flush();
        cur = s;
      }
      if (m === undefined) {
        statements[s].run(...values);
        return;
      }
      const vals = waiting[s];
      const c = columns[s];
      for (let k = 0, o = n * c; k < c; k++) vals[o + k] = values[k];
      if (++n < ROWS_AT_ONCE) return;
      m.run(...vals);
      n = 0;
    },
    (s) => columns[s],
  );
  if (n > 0) flush();
  // The values do not outlive the job (its strings and blobs are the job's).
  for (const vals of waiting) vals.fill(undefined);
}

/** The id of the snapshot whose blob's parts came ahead of its job (snapshotParts.ts `insertEarlyPart`). */
let early: number | undefined;

parentPort?.on('message', (m: { job?: RowJob; part?: Uint8Array; seq?: number; close?: true }) => {
  if (m.part) {
    try {
      if (!failed && db)
        early = insertEarlyPart(db, Buffer.from(m.part.buffer, m.part.byteOffset, m.part.byteLength), m.seq as number, early);
    } catch (e) {
      fail(e);
    }
    // Counted as a job done (the engine's thread bounds what waits: writerThread.ts).
    Atomics.add(shared, WRITER_STATE.done, 1);
    Atomics.notify(shared, WRITER_STATE.done);
    return;
  }
  if (m.job) {
    try {
      if (!failed && db) run(m.job, db);
    } catch (e) {
      fail(e);
    }
    Atomics.add(shared, WRITER_STATE.done, 1);
    Atomics.notify(shared, WRITER_STATE.done);
    return;
  }
  try {
    db?.close();
  } finally {
    Atomics.store(shared, WRITER_STATE.closed, 1);
    Atomics.notify(shared, WRITER_STATE.closed);
    parentPort?.close();
  }
});
