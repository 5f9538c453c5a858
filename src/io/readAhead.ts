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
 * A replay's merge places each file in its own thread, from the lines the sniff read
 * (`addPlaced`): the worker is told of the file as parked, and reads nothing of it before the
 * merge wakes or pulls it. It keeps each file's path, size and options in columns, the options one
 * object for all the files alike: 60,053 files of a merge peaked at 245 MB, where the worker
 * reading every file's first batch and this thread's closures a file peaked at 788-802 MB.
 *
 * The batches are the ones `openVendorBatches` gives in the merge's thread, row for row, and a
 * file's error comes out of its source where it would have (its earlier batches first). The
 * results are read synchronously (`receiveMessageOnPort`), waiting on a shared counter when the
 * batch asked is not read yet; the asks go out a few at a time, and at once when the merge waits.
 *
 * @module
 */
import { MessageChannel, receiveMessageOnPort, type Worker } from 'node:worker_threads';
import { type BatchColumns, ROW_OTHER } from '../core/batch.js';
import { XrateError } from '../core/errors.js';
import type { BatchSource } from './batch.js';
import { trackReaderWorker } from './batchSource.js';
import type { ReadAheadJob, ReadAheadMessage, ReadAheadResult, ReadAheadWant } from './readAheadJob.js';
import { readFromStart, type VendorBatchOptions } from './vendorBatches.js';
import { startIoWorker } from './ioWorker.js';

/** Asks held before they are posted (all of them when the merge waits). */
const ASKS = 8;
/** Files added parked held before they are posted (the worker keeps them in columns; here they wait as objects). */
const ADDS = 64;
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
  /**
   * Adds a file whose first reading is `first`'s, in this thread (a merge's placing reading, from
   * the lines its sniff read): the worker reads it only once the merge has parked it, from its
   * start in whole batches, as it does a file parked after a first batch it read.
   */
  addPlaced(file: ReadAheadFile, first: BatchSource): BatchSource;
  /**
   * The source of file `k` (the files are numbered from 0 in the order added) after a merge parked
   * it and let its source go (mergeBatches.ts `MergeInputs.reopen`): it reads the file again from
   * its start, in whole batches, as the parked source would have. `file` as it was added.
   */
  again(k: number, file: ReadAheadFile): BatchSource;
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
  const w = new AheadWorker();
  // Read by the worker from the file's start, in whole batches, as a file parked before.
  const whole = (file: ReadAheadFile): ReadAheadFile => ({
    path: file.path,
    opts: readFromStart(file.opts),
  });
  return {
    add: (file) => new AheadSource(w, w.add(file, false), file, false),
    addPlaced(file, first) {
      const again = whole(file);
      return new PlacedSource(first, new AheadSource(w, w.add(again, true), again, true));
    },
    again: (k, file) => new AheadSource(w, k, whole(file), true),
    close: () => w.stop(),
  };
}

/** The worker and what this thread knows of its files (each file's state in {@link AheadSource}). */
class AheadWorker {
  private readonly count: Int32Array;
  private readonly results = new MessageChannel();
  private readonly out = new MessageChannel();
  private readonly worker: Worker;
  failure: Error | undefined;
  /** Each file's results not taken yet (undefined: none). */
  private readonly queues: (ReadAheadResult[] | undefined)[] = [];
  /** Each file's bytes read. */
  readonly bytes: number[] = [];
  /** Files whose source has ended or was closed (their results are dropped). */
  readonly gone: boolean[] = [];
  private live = 0;
  private received = 0;
  stopped = false;
  private asks: ReadAheadWant = { add: [], park: [], files: [], times: [] };

  constructor() {
    const shared = new SharedArrayBuffer(8);
    this.count = new Int32Array(shared);
    const job: ReadAheadJob = { results: this.results.port2, asks: this.out.port2, counts: shared };
    this.worker = startIoWorker(new URL('./readAheadWorker.js', import.meta.url), job, [job.results, job.asks]);
    trackReaderWorker(this.worker);
    // None keeps this process alive: the sources' end (or close) stops the worker.
    this.worker.unref();
    this.results.port1.unref();
    this.out.port1.unref();
    this.worker.on('error', (e) => {
      this.failure ??= e;
    });
    this.worker.on('exit', (code) => {
      this.failure ??= new XrateError('failed', `the read-ahead worker thread of a merge stopped (exit code ${code})`);
    });
  }

  /** A file to read: its number. Unless `parked`, its first batch is asked for (the merge loads every input's first, in order, before its first row). */
  add(file: ReadAheadFile, parked: boolean): number {
    if (this.stopped) throw new Error('readAhead: a file added after the worker stopped');
    const i = this.queues.length;
    this.queues.push(undefined);
    this.bytes.push(0);
    this.gone.push(false);
    this.live++;
    this.asks.add.push({ path: file.path, opts: file.opts });
    if (!parked) this.ask(i, Number.NEGATIVE_INFINITY);
    else if (this.asks.add.length >= ADDS) this.flush();
    return i;
  }

  flush(): void {
    const asks = this.asks;
    if ((asks.files.length === 0 && asks.park.length === 0 && asks.add.length === 0) || this.stopped) return;
    this.out.port1.postMessage(asks);
    this.asks = { add: [], park: [], files: [], times: [] };
    Atomics.add(this.count, 1, 1);
    Atomics.notify(this.count, 1);
  }

  /** One more batch of file `i`, needed once the merge reaches event time `time`. */
  ask(i: number, time: number): void {
    this.asks.files.push(i);
    this.asks.times.push(time);
    if (this.asks.files.length >= ASKS) this.flush();
  }

  /** File `i` parked: the worker lets it go. */
  park(i: number): void {
    this.asks.park.push(i);
    if (this.asks.park.length >= PARKS) this.flush();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    void this.worker.terminate();
    this.results.port1.close();
    this.out.port1.close();
  }

  /** File `i`'s source has ended or was closed. */
  leave(i: number): void {
    if (this.gone[i]) return;
    this.gone[i] = true;
    this.queues[i] = undefined;
    if (--this.live === 0) this.stop();
  }

  /** Takes every message posted so far into the files' queues. */
  private drain(): void {
    const port = this.results.port1;
    for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
      this.received++;
      for (const r of (m.message as ReadAheadMessage).results) {
        if (this.gone[r.file]) continue;
        const q = this.queues[r.file];
        if (q === undefined) this.queues[r.file] = [r];
        else q.push(r);
      }
    }
  }

  /** The next result of file `i`, waiting for the worker when it is not read yet. */
  async next(i: number): Promise<ReadAheadResult> {
    for (;;) {
      const q = this.queues[i];
      if (q !== undefined && q.length > 0) return q.shift() as ReadAheadResult;
      this.drain();
      if ((this.queues[i]?.length ?? 0) > 0) continue;
      if (this.failure) throw this.failure;
      this.flush();
      if (Atomics.wait(this.count, 0, this.received, WAIT_MS) === 'timed-out') await new Promise<void>((r) => setImmediate(r));
    }
  }
}

/** A file read by the worker (see the module description): its state in this thread. */
class AheadSource implements BatchSource {
  readonly format: 'coinapi' | 'tardis';
  readonly path: string;
  readonly totalBytes: number;
  private readonly first: number | undefined;
  /** The first batch's next one, not asked for until the merge reaches the file: its need time. */
  private waiting: number | undefined;
  /** Parked: the reading being ended is not the file's end. */
  private parking = false;
  /**
   * A batch asked for and not taken yet: the first one is asked for as the file is added (unless
   * added parked); after a park, by `wake` or at the next reading's start, whichever comes first.
   */
  private outstanding: boolean;

  constructor(
    private readonly w: AheadWorker,
    private readonly i: number,
    file: ReadAheadFile,
    /** Parked before (or added so): read again from its start, in whole batches. */
    private again: boolean,
  ) {
    this.format = file.opts.kind?.format ?? 'coinapi';
    this.path = file.path;
    this.totalBytes = file.opts.size;
    this.first = file.opts.first;
    this.outstanding = !again;
  }

  bytesRead(): number {
    return this.w.bytes[this.i];
  }

  private askNext(time: number): void {
    this.outstanding = true;
    this.w.ask(this.i, time);
  }

  async *batches(): AsyncGenerator<BatchColumns> {
    const { w, i } = this;
    if (this.again && !this.outstanding && !w.gone[i]) this.askNext(Number.NEGATIVE_INFINITY);
    try {
      for (let k = 0; !w.gone[i]; k++) {
        const r = await w.next(i);
        this.outstanding = false;
        if ('error' in r) throw r.code === undefined ? new Error(r.error) : new XrateError(r.code, r.error);
        w.bytes[i] = Math.max(w.bytes[i], r.bytesRead);
        if ('done' in r) return;
        // The next batch, read while this one is merged: needed when the merge is past this one's
        // last row. After a short first batch (`first`), once the merge reaches the file.
        if (k === 0 && this.first !== undefined && !this.again) this.waiting = lastTime(r.batch);
        else this.askNext(lastTime(r.batch));
        yield r.batch;
        this.reached();
      }
    } finally {
      if (this.parking) this.parking = false;
      else w.leave(i);
    }
  }

  /** Asks for the batch after a short first one, now the merge needs it within that batch's few rows. */
  reached(): void {
    if (this.waiting === undefined) return;
    this.askNext(this.waiting);
    this.waiting = undefined;
    this.w.flush();
  }

  park(): boolean {
    // Only with no batch asked for: after a short first batch (`first`), before the merge reaches it.
    if (this.w.gone[this.i] || this.outstanding) return false;
    this.parking = true;
    this.again = true;
    this.waiting = undefined;
    this.w.park(this.i);
    return true;
  }

  wake(time: number): void {
    if (this.again && !this.outstanding && !this.w.gone[this.i]) this.askNext(time);
  }

  close(): void {
    this.w.leave(this.i);
  }
}

/**
 * A file placed by a reading in this thread (`first`, until the merge parks it) and read by the
 * worker after ({@link ReadAhead.addPlaced}).
 */
class PlacedSource implements BatchSource {
  /** The reading in this thread, until the merge parks the file (then only the bytes it read are kept). */
  private first: BatchSource | undefined;
  private firstRead = 0;

  constructor(
    first: BatchSource,
    private readonly ahead: AheadSource,
  ) {
    this.first = first;
  }

  get format(): BatchSource['format'] {
    return this.ahead.format;
  }

  get path(): string {
    return this.ahead.path;
  }

  get totalBytes(): number {
    return this.ahead.totalBytes;
  }

  bytesRead(): number {
    return Math.max(this.first?.bytesRead() ?? this.firstRead, this.ahead.bytesRead());
  }

  batches(): AsyncIterable<BatchColumns> {
    return this.first === undefined ? this.ahead.batches() : this.first.batches();
  }

  park(): boolean {
    const first = this.first;
    if (first === undefined) return this.ahead.park();
    if (first.park?.() !== true) return false;
    // Its reading in this thread ends (the merge ends its iteration): the worker's are next.
    this.firstRead = first.bytesRead();
    this.first = undefined;
    return true;
  }

  wake(time: number): void {
    if (this.first === undefined) this.ahead.wake(time);
  }

  reached(): void {
    if (this.first === undefined) this.ahead.reached();
  }

  close(): void {
    this.first?.close();
    this.ahead.close();
  }
}

/** The time of a batch's last quote or trade row (its rows' times mostly ascend), or -Infinity when none has one. */
function lastTime(b: BatchColumns): number {
  for (let i = b.length - 1; i >= 0; i--) if (b.kind[i] !== ROW_OTHER) return b.time[i];
  return Number.NEGATIVE_INFINITY;
}
