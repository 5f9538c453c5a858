/**
 * Inputs opened as columnar batches ({@link BatchSource}, src/io/batch.ts): the one way to open
 * an event log for the batch readers.
 *
 * - NDJSON (plain or gzip): read on bytes straight into batches (ndjsonBatches.ts).
 * - Parquet event logs (parquetRead.ts) and vendor files (vendorBatches.ts): their columnar
 *   readers, their batches cut to `batchSize` rows as the record readers cut them (rebatch.ts).
 * - CSV and SQLite: the record-at-a-time reader (source.ts `openSource`), each batch of records
 *   turned into columns (`batchesOf`).
 * - With `threads` > 1 the reading of a columnar format (file reads, gunzip, parsing) runs in
 *   a worker thread (batchWorker.ts), which transfers each batch to this thread (its buffers
 *   move, they are not copied); at most `MAX_IN_FLIGHT` (batchJob.ts) batches are on their way at once,
 *   so memory stays bounded whatever the length of the input. A lean input (one of the many of
 *   a merge) is read in this thread whatever `threads` says: a worker per file would not pay.
 *
 * Opening checks the file as `openSource` does, in this thread, with the same errors; an error
 * while reading (a broken gzip stream, a CSV header without `type`) comes out of `batches()` with
 * the message and code it has in the record-at-a-time reader. `close()` terminates the worker,
 * and so does the end of `batches()` (read to its end, stopped, or failed).
 *
 * @module
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { BufferPool, batchTransferList } from '../core/batch.js';
import { XrateError } from '../core/errors.js';
import { type BatchSource, batchesOf } from './batch.js';
import type { BatchAck, BatchJob, BatchWorkerMessage } from './batchJob.js';
import { DEFAULT_MAX_LINE_BYTES } from './lineLimit.js';
import type { NdjsonBatchOptions } from './ndjsonBatches.js';
import { isGzip } from './detect.js';
import { ndjsonSource } from './ndjsonSource.js';
import { openParquetBatches, parquetRawOf } from './parquetRead.js';
import { rebatched } from './rebatch.js';
import { openVendorBatches } from './vendorBatches.js';
import { DEFAULT_BATCH_SIZE, type OpenSourceOptions, openSource, type SourceFormat } from './source.js';
import { dropEarlyWorkers, startIoWorker } from './ioWorker.js';
import { settleDetaching } from './detaching.js';

// This thread moves buffers: compiled once, not again at the first move (detaching.ts).
settleDetaching();

/** Options of {@link openBatchSource}. */
export interface BatchSourceOptions extends OpenSourceOptions {
  /**
   * Threads reading the input: 1 (the default) reads it in the calling thread; more, in a worker
   * thread (see the module description). A replay's default is {@link defaultThreads}.
   */
  threads?: number;
  /**
   * The caller is done with each batch once it asks for the next one (it keeps none of its
   * columns): an NDJSON input's batches are then built on the buffers of the batches before
   * (core/batch.ts `BufferPool`), and so are a Parquet input's read in a worker, given back to
   * the worker reading it with each ack. The replay driver reads its inputs so.
   */
  recycle?: boolean;
  /**
   * Where a Parquet input read in this thread takes its batches' buffers (a reader worker's pool,
   * fed by the acks of the thread it posts them to: batchWorker.ts).
   */
  pool?: BufferPool;
}

/** The default of a replay's `threads`: the cores available (os.availableParallelism). */
export function defaultThreads(): number {
  return availableParallelism();
}

/** The formats whose readers give quotes and trades as columns (read in a worker with threads > 1). */
const COLUMNAR_FORMATS: ReadonlySet<string> = new Set(['ndjson', 'parquet', 'coinapi', 'tardis']);

/**
 * Opens `path` as columnar batches (see the module description).
 *
 * @throws XrateError `input` when the file cannot be opened (as `openSource`), `usage` for a bad option
 * @example
 * ```ts
 * const src = openBatchSource('fixtures/demo/demo.ndjson.gz', { threads: 2 });
 * try {
 *   for await (const b of src.batches()) for (let i = 0; i < b.length; i++) handle(recordAt(b, i));
 * } finally {
 *   src.close();
 * }
 * ```
 */
export function openBatchSource(path: string, opts: BatchSourceOptions = {}): BatchSource {
  const { threads: t, recycle, pool: given, ...o } = opts;
  const threads = t === undefined ? 1 : Math.floor(t);
  if (!(threads >= 1)) throw new XrateError('usage', `threads must be a whole number of at least 1, got ${t}`, { field: 'threads' });
  // The checks and errors of the record-at-a-time reader (which opens nothing yet for a text file).
  const src = openSource(path, o);
  // A worker for the readers that give columns; a CSV or SQLite reader's rows are records, which
  // would cost more to clone across threads (and to serialise their raw texts) than to read here.
  const batchSize = Math.max(1, Math.floor(o.batchSize ?? DEFAULT_BATCH_SIZE));
  const nb = (): NdjsonBatchOptions => ({
    batchSize,
    startLine: o.startLine ?? 1,
    maxLineBytes: Math.floor(o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES),
  });
  if (threads > 1 && o.lean !== true && COLUMNAR_FORMATS.has(src.format)) {
    src.close();
    const job: BatchJob = { path, opts: o };
    if (src.format === 'ndjson') job.ndjson = { gzip: isGzip(path), nb: nb() };
    if (recycle && (job.ndjson !== undefined || src.format === 'parquet')) job.recycle = true;
    return workerSource(job, src.format, src.totalBytes);
  }
  // Read in this thread: a reader's worker started early for it is not needed (ioWorker.ts).
  if (o.lean !== true) dropEarlyWorkers();
  // Parquet row groups and vendor files' read slices, cut where the record readers cut.
  if (src.format === 'parquet') {
    src.close();
    return rebatched(openParquetBatches(path, { startLine: o.startLine, batchSize, pool: given }), batchSize);
  }
  if (src.format === 'coinapi' || src.format === 'tardis') {
    src.close();
    const vendor = { batchSize, startLine: o.startLine, maxLineBytes: o.maxLineBytes, time: o.time, format: src.format };
    return rebatched(openVendorBatches(path, vendor), batchSize);
  }
  if (src.format !== 'ndjson') return batchesOf(src);
  src.close();
  const pool = recycle ? new BufferPool() : undefined;
  return ndjsonSource(path, isGzip(path), o.lean === true, { ...nb(), pool }, src.totalBytes, recycle === true);
}

/** Every reader worker running (of every source), for {@link readerWorkers}. */
const running = new Set<Worker>();
/** Reader workers started in this process, for {@link readerWorkersStarted}. */
let started = 0;

/** The reader worker threads started in this process so far. */
export function readerWorkersStarted(): number {
  return started;
}

/** The reader worker threads running now (none once every source is read, stopped or closed). */
export function readerWorkers(): number {
  return running.size;
}

/** Counts a reader worker started elsewhere (a merge's read-ahead: readAhead.ts) in the two counts above. */
export function trackReaderWorker(w: Worker): void {
  started++;
  running.add(w);
  w.on('exit', () => running.delete(w));
}

type Event = BatchWorkerMessage | { exit: number } | { failed: Error };

/** An input read by a worker thread: each `batches()` call starts one, and ends it when done. */
function workerSource(job: BatchJob, format: SourceFormat, totalBytes: number): BatchSource {
  const live = new Set<Worker>();
  let bytes = 0;
  let closed = false;
  return {
    format,
    // A Parquet row stored without its raw text has it rendered from its columns.
    ...(format === 'parquet' && { rawOf: parquetRawOf }),
    path: job.path,
    totalBytes,
    bytesRead: () => bytes,
    async *batches() {
      if (closed) return;
      const w = startIoWorker(new URL('./batchWorker.js', import.meta.url), job);
      started++;
      live.add(w);
      running.add(w);
      const queue: Event[] = [];
      let wake: (() => void) | undefined;
      const put = (e: Event): void => {
        queue.push(e);
        wake?.();
      };
      w.on('message', (m: BatchWorkerMessage) => put(m));
      w.on('error', (e) => put({ failed: e }));
      w.on('exit', (code) => {
        running.delete(w);
        put({ exit: code });
      });
      try {
        for (;;) {
          while (queue.length === 0) {
            await new Promise<void>((r) => {
              wake = r;
            });
            wake = undefined;
          }
          const m = queue.shift() as Event;
          if (closed) return;
          if ('batch' in m) {
            bytes = m.bytesRead;
            yield m.batch;
            if (closed) return;
            // Taken: its buffers go back to the worker when the batch is done with (recycling).
            if (job.recycle) {
              const recycled = batchTransferList(m.batch);
              w.postMessage({ ack: true, recycle: recycled } satisfies BatchAck, recycled);
            } else w.postMessage('ack' satisfies BatchAck);
          } else if ('done' in m) {
            bytes = m.bytesRead;
            return;
          } else if ('error' in m) throw m.code === undefined ? new Error(m.error) : new XrateError(m.code, m.error);
          else if ('failed' in m) throw m.failed;
          else throw new XrateError('failed', `the reader's worker thread stopped (exit code ${m.exit}) reading "${job.path}"`);
        }
      } finally {
        live.delete(w);
        await w.terminate();
      }
    },
    close() {
      closed = true;
      for (const w of live) void w.terminate();
    },
  };
}
