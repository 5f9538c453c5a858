/**
 * The replay database's writer thread (writerThread.ts starts it): its own connection to the
 * database (`workerData.path`), running each posted {@link RowJob} (the previous outputs cleared
 * first when the job says so, its rows in order, its snapshot) in a transaction, alone or with the
 * jobs already posted behind it, then counting them done in the shared state. A failed job is
 * rolled back and its error posted on `workerData.errors`; the jobs after it are counted done
 * unrun (the run fails with that error). Each job's columns, run or not, go back on
 * `workerData.spares` (the next jobs are written into them: rowJob.ts).
 *
 * @module
 */
import Database from 'better-sqlite3';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { columnBuffers, forEachRow, multiRowSql, orFail, type RowColumns, type RowJob } from './rowJob.js';
import { deleteSnapshots, insertEarlyPart, insertSnapshot } from './snapshotParts.js';
import { CLEAR_SQL, WRITER_STATE } from './writerThread.js';
import { settleDetaching } from './detaching.js';

// This thread moves buffers: compiled once, not again at the first move (detaching.ts).
settleDetaching();

const { path, state, errors, spares } = workerData as { path: string; state: SharedArrayBuffer; errors: MessagePort; spares: MessagePort };
const shared = new Int32Array(state);
// As the thread exits (closed, or ended by an error no job caught), the engine's thread waiting on
// a count is woken and sees it ended (writerThread.ts: the run fails rather than waiting forever).
process.on('exit', () => {
  Atomics.store(shared, WRITER_STATE.ended, 1);
  for (const index of Object.values(WRITER_STATE)) Atomics.notify(shared, index);
});
const statements: Database.Statement[] = [];
const columns: number[] = [];
/**
 * By statement: the statement its multi-row forms (`INSERT ... VALUES (?, ...), (?, ...)`) are made
 * of (undefined: a statement of another shape, which has none), those forms by their count of rows
 * (each prepared at its first use), whether the rows left at the end of a run go in by one of them
 * (`restAtOnce`; else one by one), and the values of the rows waiting for it.
 *
 * A multi-row statement that could end in an abort keeps a statement journal, to undo itself
 * alone: a copy of each page it changes (once a statement). Where rows of a few pairs come
 * in short runs (each row to its pair's page of an index), that is about a page a row: rows one by
 * one cost less. A plain `INSERT`'s forms are made `INSERT OR FAIL`, which keeps none (a failed job
 * is undone whole, its transaction or savepoint rolled back: writes of a statement that failed
 * midway are never committed), and the rest of its runs goes in at once. An `INSERT OR REPLACE`
 * keeps one (a NULL in a NOT NULL column without a default aborts it): its forms are of
 * {@link ROWS_AT_ONCE} rows only, the rest of a run one by one.
 */
const manyOf: (string | undefined)[] = [];
const forms: (Database.Statement | undefined)[][] = [];
const restAtOnce: boolean[] = [];
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

/**
 * Pages the write-ahead log holds before the commit that passes them copies them into the database
 * (SQLite's default is 1,000): each such checkpoint waits for two syncs of the disk, and a page
 * that several batches change is copied once a checkpoint, not once a batch. 8,192 pages of 4 KiB:
 * a log of about 32 MiB at most, deleted when the replay closes the database.
 */
const WAL_CHECKPOINT_PAGES = 8192;

/**
 * SQLite's page cache of the thread's connection, KiB: half of better-sqlite3's 16 MB. The rows go
 * to the ends of a few tables and indexes a pair, and a merge of 60,000 vendor files (61 pairs)
 * peaked 6-17 MB lower with a quarter of it in the same time; a log of many pairs touches more pages.
 */
const PAGE_CACHE_KB = 8000;

/** Jobs committed in one transaction at most (see {@link runJob}). */
const GROUP_MAX = 8;

function openDb(): Database.Database | undefined {
  try {
    const d = new Database(path, { fileMustExist: true });
    d.pragma('synchronous = NORMAL');
    // A multi-row statement keeps the pages it changes in a statement journal (to undo the
    // statement alone): in memory, where it was a new temporary file a transaction, written
    // through the kernel (a third of the replay's writes).
    d.pragma('temp_store = MEMORY');
    d.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
    d.pragma(`cache_size = -${PAGE_CACHE_KB}`);
    return d;
  } catch (e) {
    fail(e);
    return undefined;
  }
}
const db = openDb();

/** Runs a job in the open transaction: its statements prepared, the outputs cleared if it says so, its rows, its snapshot. */
function run(job: RowJob, db: Database.Database): void {
  for (const sql of job.newStatements) {
    statements.push(db.prepare(sql));
    const c = sql.split('?').length - 1;
    columns.push(c);
    const plain = orFail(sql);
    manyOf.push(multiRowSql(sql, ROWS_AT_ONCE) === undefined ? undefined : (plain ?? sql));
    forms.push([]);
    restAtOnce.push(plain !== undefined);
    waiting.push(new Array(c * ROWS_AT_ONCE));
  }
  if (job.clear) {
    for (const sql of CLEAR_SQL) db.exec(sql);
    deleteSnapshots(db);
    if (job.clear.runId !== undefined)
      db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('outputs_run', ?)`).run(String(job.clear.runId));
  }
  runRows(job, db);
  if (job.snapshot) {
    const v = [...job.snapshot];
    const blob = v[6] as Uint8Array;
    v[6] = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
    insertSnapshot(db, v, job.snapshotEarly ? early : undefined);
  }
  early = undefined;
}

/** Statement s's multi-row form of k rows (2 to {@link ROWS_AT_ONCE}; see {@link manyOf}), prepared at its first use. */
function rowsAtOnce(db: Database.Database, s: number, k: number): Database.Statement {
  const f = forms[s];
  let m = f[k];
  if (m === undefined) {
    m = db.prepare(multiRowSql(manyOf[s]!, k)!);
    f[k] = m;
  }
  return m;
}

/**
 * Inserts the job's rows in order: each row by its statement, or, where rows of one statement
 * follow each other, {@link ROWS_AT_ONCE} of them by its multi-row form, and the rest of the run
 * as {@link restAtOnce} says. Values are given as arguments, not in an array: better-sqlite3 reads
 * an array's values by generic property look-ups (an eighth of the time a replay's rate rows took
 * to insert).
 */
function runRows(job: RowJob, db: Database.Database): void {
  // The statement whose rows wait (-1: none), and how many of them.
  let cur = -1;
  let n = 0;
  const flush = (): void => {
    const c = columns[cur];
    const vals = waiting[cur];
    if (n > 1 && restAtOnce[cur]) rowsAtOnce(db, cur, n).run(...vals.slice(0, n * c));
    else for (let r = 0; r < n; r++) statements[cur].run(...vals.slice(r * c, r * c + c));
    n = 0;
  };
  forEachRow(
    job,
    (s, values) => {
      if (s !== cur) {
        if (n > 0) flush();
        cur = s;
      }
      if (manyOf[s] === undefined) {
        statements[s].run(...values);
        return;
      }
      const vals = waiting[s];
      const c = columns[s];
      for (let k = 0, o = n * c; k < c; k++) vals[o + k] = values[k];
      if (++n < ROWS_AT_ONCE) return;
      rowsAtOnce(db, s, ROWS_AT_ONCE).run(...vals);
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

type Message = { job?: RowJob; part?: Uint8Array; seq?: number; close?: true };

/** Messages handled, jobs and parts (against {@link WRITER_STATE}'s `posted`). */
let received = 0;
/** Jobs run in the open transaction, not yet committed (nor counted done). */
let open = 0;

/** Counts `n` jobs (or parts) done. */
function done(n: number): void {
  Atomics.add(shared, WRITER_STATE.done, n);
  Atomics.notify(shared, WRITER_STATE.done);
}

/** Counts a job (or part) run, committed or not: the engine's thread may post another. */
function ran(): void {
  Atomics.add(shared, WRITER_STATE.ran, 1);
  Atomics.notify(shared, WRITER_STATE.ran);
}

/** Commits the open transaction and counts its jobs done (a failed commit fails the run). */
function commitOpen(): void {
  if (open === 0) return;
  try {
    db?.prepare('COMMIT').run();
    Atomics.add(shared, WRITER_STATE.commits, 1);
  } catch (e) {
    if (db?.inTransaction) db.prepare('ROLLBACK').run();
    fail(e);
  }
  done(open);
  open = 0;
}

/**
 * A job runs in the open transaction, or begins one. While the thread keeps up, it commits at the
 * end of each job; when the next job is already posted, the transaction stays open for it, up to
 * {@link GROUP_MAX} jobs: jobs that wait commit together, each whole (a snapshot always with its
 * batch's rows), so what a reader or a resumed replay finds is still the outputs up to the end of
 * some batch. A job is counted done once committed. A job after the first of a transaction runs in
 * a savepoint: when it fails, it alone is undone and the jobs before it are committed, as if each
 * had committed alone; the jobs after it are counted done unrun.
 */
function runJob(job: RowJob, db: Database.Database): void {
  const first = ++open === 1;
  try {
    db.prepare(first ? 'BEGIN' : 'SAVEPOINT job').run();
    run(job, db);
    if (!first) db.prepare('RELEASE job').run();
  } catch (e) {
    try {
      if (db.inTransaction && first) db.prepare('ROLLBACK').run();
      else if (db.inTransaction) {
        db.exec('ROLLBACK TO job; RELEASE job; COMMIT');
        Atomics.add(shared, WRITER_STATE.commits, 1);
      }
    } catch {
      if (db.inTransaction) db.prepare('ROLLBACK').run();
    }
    fail(e);
    done(open);
    open = 0;
    return;
  }
  if (open < GROUP_MAX && Atomics.load(shared, WRITER_STATE.posted) > received) return;
  commitOpen();
}

parentPort?.on('message', (m: Message) => {
  received++;
  if (m.job) {
    if (!failed && db) runJob(m.job, db);
    else done(1);
    try {
      const { statement, tags, numbers, refs, bytes } = m.job;
      const columns: RowColumns = { statement, tags, numbers, refs, bytes };
      spares.postMessage(columns, columnBuffers(columns));
    } catch (e) {
      // Never thrown out of the thread: the engine's thread waits for it (the run fails with this error).
      fail(e);
    }
    ran();
    return;
  }
  // Anything else comes after the jobs before it are committed.
  commitOpen();
  if (m.part) {
    try {
      if (!failed && db)
        early = insertEarlyPart(db, Buffer.from(m.part.buffer, m.part.byteOffset, m.part.byteLength), m.seq as number, early);
    } catch (e) {
      fail(e);
    }
    // Counted as a job done (the engine's thread bounds what waits: writerThread.ts).
    done(1);
    ran();
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
