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
import { forEachRow, type RowJob } from './rowJob.js';
import { deleteSnapshots, insertEarlyPart, insertSnapshot } from './snapshotParts.js';
import { CLEAR_SQL, WRITER_STATE } from './writerThread.js';

const { path, state, errors } = workerData as { path: string; state: SharedArrayBuffer; errors: MessagePort };
const shared = new Int32Array(state);
const statements: Database.Statement[] = [];
const columns: number[] = [];
let failed = false;

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
    columns.push(sql.split('?').length - 1);
  }
  db.prepare('BEGIN').run();
  try {
    if (job.clear) {
      for (const sql of CLEAR_SQL) db.exec(sql);
      deleteSnapshots(db);
      if (job.clear.runId !== undefined)
        db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('outputs_run', ?)`).run(String(job.clear.runId));
    }
    forEachRow(
      job,
      (s, values) => void statements[s].run(values),
      (s) => columns[s],
    );
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
