/**
 * The replay database's writes on a thread of their own (writerWorker.ts, its own connection):
 * the engine's thread only packs each batch's rows into a {@link RowJob} and posts it at the
 * commit, and goes on with the next batch while the thread inserts and commits this one, in the
 * order posted: a batch's snapshot and rows commit together, and batches that wait for the thread
 * commit together (writerWorker.ts), so the database holds the outputs up to the end of a batch.
 *
 * {@link drain} waits (blocking) until every posted job is committed; the replay database drains
 * before anything else it does on its own connection (a read, the run's row, closing), so what
 * it reads and writes there follows every batch posted. A job that fails is rolled back, the later
 * ones are not run, and its error is thrown by the next commit or drain: the run fails with it;
 * so does a thread ended by an error outside any job, and a job whose buffers were already moved.
 * At most {@link MAX_QUEUED} jobs wait to be run at a time. {@link close} drains, closes the thread's
 * connection and ends the thread.
 *
 * @module
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort, type Worker } from 'node:worker_threads';
import { type RowColumns, type RowJob, RowJobBuilder, rowJobTransfer, type RowSink } from './rowJob.js';
import { OUTPUT_TABLES } from './storeSchema.js';
import { startIoWorker } from './ioWorker.js';
import { settleDetaching } from './detaching.js';

// This thread moves buffers: compiled once, not again at the first move (detaching.ts).
settleDetaching();

/**
 * Indexes in the shared state: jobs (and snapshot parts) done, that is committed; whether the
 * thread has closed its connection; jobs posted, counted once each is on its way (the thread keeps
 * a transaction open for a job it knows is coming); the transactions committed; jobs run,
 * committed or not (their memory is free: what bounds the jobs that wait); and whether the thread
 * has ended (set as it exits, by its close or an error, and every count's waiter woken).
 */
export const WRITER_STATE = { done: 0, closed: 1, posted: 2, commits: 3, ran: 4, ended: 5 } as const;

/** What clearing the outputs deletes (ReplayStore.clearOutputs), the snapshots then too (snapshotParts.ts `deleteSnapshots`). */
export const CLEAR_SQL = OUTPUT_TABLES.map((t) => `DELETE FROM ${t}`);

/** Jobs posted and not run at most: the engine waits for the thread beyond that. */
const MAX_QUEUED = 3;

/**
 * Throws unless every buffer of `transfer` is still this thread's. A message whose transfer list
 * holds a buffer already moved to another thread (a snapshot's blob handed over twice, say) is
 * dropped by `postMessage` without an error, and the job's wait would never end.
 */
function assertAttached(transfer: ArrayBuffer[]): void {
  for (const b of transfer) {
    try {
      new Uint8Array(b, 0, 0);
    } catch {
      throw new Error('a buffer of the job was already moved to the writer thread (handed over twice): the job is not posted');
    }
  }
}

/**
 * The writer thread of one replay database, and the job of the batch being written.
 *
 * @example
 * ```ts
 * const w = new WriterThread('out/xrate.sqlite');
 * w.begin();
 * w.sink('INSERT INTO t(a) VALUES (?)')(1);
 * w.commit();
 * w.close();
 * ```
 */
export class WriterThread {
  private readonly shared = new Int32Array(new SharedArrayBuffer(24));
  private readonly errors: MessagePort;
  /** Where the thread gives back the columns of each job it has run (rowJob.ts {@link RowJobBuilder.reuse}). */
  private readonly spares: MessagePort;
  private readonly worker: Worker;
  private readonly builder = new RowJobBuilder();
  private posted = 0;
  private open = true;
  /** The error of a failed job, once thrown (not thrown again). */
  private failure: Error | undefined;
  /** Whether a batch's job is being written (between {@link begin} and {@link commit}). */
  inJob = false;
  private clear: RowJob['clear'];
  private snapshot: unknown[] | undefined;
  /** Whether parts of the current job's snapshot were posted ahead of it. */
  private early = false;

  constructor(path: string) {
    const { port1, port2 } = new MessageChannel();
    const back = new MessageChannel();
    this.errors = port1;
    this.spares = back.port1;
    this.worker = startIoWorker(
      new URL('./writerWorker.js', import.meta.url),
      { path, state: this.shared.buffer, errors: port2, spares: back.port2 },
      [port2, back.port2],
    );
    // The thread keeps no event loop of this process alive: close() ends it. An error that ends
    // it is thrown by the wait it ends (see `waitFor`), not as this process's uncaught error.
    this.worker.on('error', () => {});
    this.worker.unref();
    this.errors.unref();
    this.spares.unref();
  }

  /** The sink of statement `sql`, writing into the current job. */
  sink(sql: string): RowSink {
    return this.builder.sink(sql);
  }

  /** Starts a batch's job. */
  begin(): void {
    this.inJob = true;
  }

  /** Clears the previous outputs at the start of the current job (the outputs now run `runId`'s). */
  clearOutputs(runId: number | undefined): void {
    this.clear = { runId };
  }

  /** Writes a snapshot row (the values of snapshotParts.ts `insertSnapshot`) in the current job. */
  saveSnapshot(values: unknown[]): void {
    this.snapshot = values;
  }

  /**
   * Posts part `seq` (from 1) of the blob of the current job's snapshot now, ahead of the job: the
   * thread stores it at once (snapshotParts.ts `insertEarlyPart`), and the blob is never whole.
   */
  snapshotPart(part: Buffer, seq: number): void {
    this.early = true;
    this.throwFailure();
    // Counted as a job: at most MAX_QUEUED parts and jobs wait, whatever the blob's size.
    this.post({ part, seq }, [part.buffer as ArrayBuffer]);
  }

  /** Posts the current job; throws the error of a failed earlier job. */
  commit(): void {
    for (let m = receiveMessageOnPort(this.spares); m; m = receiveMessageOnPort(this.spares)) this.builder.reuse(m.message as RowColumns);
    const job = this.builder.take();
    if (this.clear) job.clear = this.clear;
    if (this.snapshot) job.snapshot = this.snapshot;
    if (this.early) job.snapshotEarly = true;
    this.clear = undefined;
    this.snapshot = undefined;
    this.early = false;
    this.inJob = false;
    this.throwFailure();
    this.post({ job }, rowJobTransfer(job));
    this.throwFailure();
  }

  /**
   * Posts a job (or a snapshot's part) with its buffers moved, counts it posted, and waits while
   * more than {@link MAX_QUEUED} wait to be run. Throws, posting nothing, when a buffer of
   * `transfer` was already moved.
   */
  private post(message: unknown, transfer: ArrayBuffer[]): void {
    assertAttached(transfer);
    this.worker.postMessage(message, transfer);
    this.posted++;
    Atomics.store(this.shared, WRITER_STATE.posted, this.posted);
    this.waitFor(WRITER_STATE.ran, this.posted - MAX_QUEUED);
  }

  /** Drops the current job (its transaction rolled back). */
  rollback(): void {
    this.builder.drop();
    this.clear = undefined;
    this.snapshot = undefined;
    this.early = false;
    this.inJob = false;
  }

  /** The transactions the thread has committed: fewer than the jobs when jobs that waited were committed together. */
  get commits(): number {
    return Atomics.load(this.shared, WRITER_STATE.commits);
  }

  /** Waits until every posted job is done; throws the error of a failed one (once). */
  drain(): void {
    this.waitFor(WRITER_STATE.done, this.posted);
    this.throwFailure();
  }

  /**
   * Waits until the count at `index` reaches `count`. When the thread has ended short of it (not
   * closed: an error ended it), throws, once, as the run's failure: the error the thread posted,
   * or that it ended with jobs not done (they are lost with the run); after that, waits no more.
   */
  private waitFor(index: number, count: number): void {
    for (;;) {
      const n = Atomics.load(this.shared, index);
      if (n >= count) return;
      if (Atomics.load(this.shared, WRITER_STATE.ended) !== 0) break;
      Atomics.wait(this.shared, index, n);
    }
    this.throwFailure();
    if (this.failure) return;
    const lost = this.posted - Atomics.load(this.shared, WRITER_STATE.done);
    this.failure = new Error(
      `the replay database's writer thread ended unexpectedly, ${lost} batch${lost === 1 ? '' : 'es'} of rows not written`,
    );
    throw this.failure;
  }

  private throwFailure(): void {
    if (this.failure) return;
    const m = receiveMessageOnPort(this.errors)?.message as { message: string; name?: string; code?: string } | undefined;
    if (!m) return;
    const e = new Error(m.message);
    if (typeof m.name === 'string') e.name = m.name;
    if (m.code !== undefined) Object.assign(e, { code: m.code });
    this.failure = e;
    throw e;
  }

  /** Waits for the posted jobs (their failure not thrown: the run has ended), closes the thread's connection, ends it. */
  close(): void {
    if (!this.open) return;
    this.open = false;
    try {
      this.waitFor(WRITER_STATE.done, this.posted);
      if (Atomics.load(this.shared, WRITER_STATE.ended) === 0) {
        this.worker.postMessage({ close: true });
        this.waitFor(WRITER_STATE.closed, 1);
      }
    } catch {
      // The thread ended: nothing is left to close.
    }
    void this.worker.terminate();
    this.errors.close();
    this.spares.close();
  }
}
