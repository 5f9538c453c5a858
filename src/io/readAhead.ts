/**
 * The vendor files of a merge (`xrate replay --merge`) read in a worker thread, ahead of the
 * merge and by its demand: the merge runs in the replay's thread and asks for one more batch of a
 * file each time it takes one, so the worker reads, inflates and parses each file one batch ahead
 * of it while that thread merges and applies the rows.
 *
 * A merge holds a batch of every input at once (mergeBatches.ts) and reads thousands of small
 * files a batch at a time, in an order only it knows: a worker per file would not pay, nor one
 * reading each file through (its batches would wait in memory until merged). Here one worker
 * holds the files (readAheadWorker.ts) and each file has at most two batches out of it: the one
 * being merged and the next, read already. At the start every file's first batch is asked for, in
 * the order the merge loads them. A file read with a short first batch (`first`) is parked after
 * it (vendorBatches.ts), and its next batch is asked for only once the merge reaches the file
 * (`reached`, told by mergeBatches.ts) or pulls that batch. The merge parks the file's source
 * (`park`) after placing it: the worker then lets the file go whole (its parser too), and reads it
 * again from its start when the merge wakes it (`wake`, a few files before it reaches it) or
 * pulls it: a merge of many days of files holds only the files of the time it is at.
 *
 * The batches are the ones `openVendorBatches` gives in the merge's thread, row for row, and a
 * file's error comes out of its source where it would have (its earlier batches first). The
 * results are read synchronously (`receiveMessageOnPort`), waiting on a shared counter when the
 * batch asked is not read yet; the asks go out a few at a time, and at once when the merge waits.
 *
 * @module
 */
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { type BatchColumns, ROW_OTHER } from '../core/batch.js';
import { XrateError } from '../core/errors.js';
import type { BatchSource } from './batch.js';
import { trackReaderWorker } from './batchSource.js';
import type { ReadAheadJob, ReadAheadMessage, ReadAheadResult, ReadAheadWant } from './readAheadJob.js';
import type { VendorBatchOptions } from './vendorBatches.js';
import { startIoWorker } from './ioWorker.js';

/** Asks held before they are posted (all of them when the merge waits). */
const ASKS = 8;
/** Parks held before they are posted (the worker lets the files go when it takes them). */
const PARKS = 64;
/** Milliseconds a wait for the worker lasts before this thread's events are seen (a worker that failed). */
const WAIT_MS = 50;

/** A file for {@link readAhead}: a vendor file and how `openVendorBatches` opens it, its size known. */
export interface ReadAheadFile {
  path: string;
  opts: VendorBatchOptions & { size: number };
}

/** A read-ahead worker and the sources of the files it reads. */
export interface ReadAhead {
  /** Adds a file to read and returns its source (`batches()` called once); every file is added before the merge starts. */
  add(file: ReadAheadFile): BatchSource;
  /** Stops the worker (safe to call more than once; the end of every source added does too). */
  close(): void;
}

/**
 * Starts a worker that reads the files added, ahead of the merge that takes their batches (see
 * the module description). Files are handed to it a few at a time as they are added, so it reads
 * while the rest are opened.
 *
 * @example
 * ```ts
 * const ra = readAhead();
 * const m = mergeBatchSources(files.map((f) => ra.add(f)));
 * for await (const b of m.batches()) use(b);
 * ```
 */
export function readAhead(): ReadAhead {
  const shared = new SharedArrayBuffer(8);
  const count = new Int32Array(shared);
  const results = new MessageChannel();
  const out = new MessageChannel();
  const job: ReadAheadJob = { results: results.port2, asks: out.port2, counts: shared };
  const worker = startIoWorker(new URL('./readAheadWorker.js', import.meta.url), job, [job.results, job.asks]);
  trackReaderWorker(worker);
  // None keeps this process alive: the sources' end (or close) stops the worker.
  worker.unref();
  results.port1.unref();
  out.port1.unref();
  let failure: Error | undefined;
  worker.on('error', (e) => {
    failure ??= e;
  });
  worker.on('exit', (code) => {
    failure ??= new XrateError('failed', `the read-ahead worker thread of a merge stopped (exit code ${code})`);
  });
  const queues: ReadAheadResult[][] = [];
  const bytes: number[] = [];
  /** Files whose source has ended or was closed (their results are dropped). */
  const gone: boolean[] = [];
  let live = 0;
  let received = 0;
  let stopped = false;
  let asks: ReadAheadWant = { add: [], park: [], files: [], times: [] };

  const flush = (): void => {
    if ((asks.files.length === 0 && asks.park.length === 0) || stopped) return;
    out.port1.postMessage(asks);
    asks = { add: [], park: [], files: [], times: [] };
    Atomics.add(count, 1, 1);
    Atomics.notify(count, 1);
  };
  const ask = (i: number, time: number): void => {
    asks.files.push(i);
    asks.times.push(time);
    if (asks.files.length >= ASKS) flush();
  };
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    void worker.terminate();
    results.port1.close();
    out.port1.close();
  };
  const leave = (i: number): void => {
    if (gone[i]) return;
    gone[i] = true;
    queues[i].length = 0;
    if (--live === 0) stop();
  };
  /** Takes every message posted so far into the files' queues. */
  const drain = (): void => {
    for (let m = receiveMessageOnPort(results.port1); m !== undefined; m = receiveMessageOnPort(results.port1)) {
      received++;
      for (const r of (m.message as ReadAheadMessage).results) if (!gone[r.file]) queues[r.file].push(r);
    }
  };
  /** The next result of file `i`, waiting for the worker when it is not read yet. */
  const next = async (i: number): Promise<ReadAheadResult> => {
    for (;;) {
      const q = queues[i];
      if (q.length > 0) return q.shift() as ReadAheadResult;
      drain();
      if (q.length > 0) continue;
      if (failure) throw failure;
      flush();
      if (Atomics.wait(count, 0, received, WAIT_MS) === 'timed-out') await new Promise<void>((r) => setImmediate(r));
    }
  };
  const source = (i: number, file: ReadAheadFile): BatchSource => {
    /** The first batch's next one, not asked for until the merge reaches the file: its need time. */
    let waiting: number | undefined;
    /** Parked: the reading being ended is not the file's end. */
    let parking = false;
    /** Parked before: read again from its start, in whole batches. */
    let again = false;
    /**
     * A batch asked for and not taken yet: the first one is asked for as the file is added; after a
     * park, by `wake` or at the next reading's start, whichever comes first.
     */
    let outstanding = true;
    const askNext = (time: number): void => {
      outstanding = true;
      ask(i, time);
    };
    const askWaiting = (): void => {
      if (waiting === undefined) return;
      askNext(waiting);
      waiting = undefined;
      // Posted now: the merge needs it within the first batch's few rows.
      flush();
    };
    return {
      format: file.opts.kind?.format ?? 'coinapi',
      path: file.path,
      totalBytes: file.opts.size,
      bytesRead: () => bytes[i],
      async *batches() {
        if (again && !outstanding && !gone[i]) askNext(Number.NEGATIVE_INFINITY);
        try {
          for (let k = 0; !gone[i]; k++) {
            const r = await next(i);
            outstanding = false;
            if ('error' in r) throw r.code === undefined ? new Error(r.error) : new XrateError(r.code, r.error);
            bytes[i] = Math.max(bytes[i], r.bytesRead);
            if ('done' in r) return;
            // The next batch, read while this one is merged: needed when the merge is past this one's
            // last row. After a short first batch (`first`), once the merge reaches the file.
            if (k === 0 && file.opts.first !== undefined && !again) waiting = lastTime(r.batch);
            else askNext(lastTime(r.batch));
            yield r.batch;
            askWaiting();
          }
        } finally {
          if (parking) parking = false;
          else leave(i);
        }
      },
      reached: askWaiting,
      park() {
        // Only with no batch asked for: after a short first batch (`first`), before the merge reaches it.
        if (gone[i] || outstanding) return false;
        parking = true;
        again = true;
        waiting = undefined;
        asks.park.push(i);
        if (asks.park.length >= PARKS) flush();
        return true;
      },
      wake(time) {
        if (again && !outstanding && !gone[i]) askNext(time);
      },
      close() {
        leave(i);
      },
    };
  };
  return {
    add(file) {
      if (stopped) throw new Error('readAhead: a file added after the worker stopped');
      const i = queues.length;
      queues.push([]);
      bytes.push(0);
      gone.push(false);
      live++;
      asks.add.push({ path: file.path, opts: file.opts });
      // Its first batch: the merge loads every input's first, in order, before its first row.
      ask(i, Number.NEGATIVE_INFINITY);
      return source(i, file);
    },
    close: stop,
  };
}

/** The time of a batch's last quote or trade row (its rows' times mostly ascend), or -Infinity when none has one. */
function lastTime(b: BatchColumns): number {
  for (let i = b.length - 1; i >= 0; i--) if (b.kind[i] !== ROW_OTHER) return b.time[i];
  return Number.NEGATIVE_INFINITY;
}
