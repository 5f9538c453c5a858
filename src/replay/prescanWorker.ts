/**
 * The worker thread of the pre-scan (prescan.ts): scans the part of an input it is given
 * (`workerData`, a {@link PrescanJob}: a range of an NDJSON file's bytes or a slice of a Parquet
 * file's row groups) and posts what it found ({@link PrescanPart}).
 *
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isXrateError, messageOf } from '../core/errors.js';
import { HeapBudget } from '../io/heapBudget.js';
import { WORKER_HEAP_FLOOR_MB } from '../io/ioWorker.js';
import { type PrescanJob, PrescanStats, scanNdjsonRange, scanParquet } from './prescan.js';

const job = workerData as PrescanJob;
const stats = new PrescanStats();
// A Parquet slice's scan makes strings and records of its rows: its heap kept near what it holds
// (a heap budget). Its lines are its rows' own: its part is appended with no line offset.
const scanned =
  job.kind === 'ndjson' ? scanNdjsonRange(job.path, job.input, stats, job.maxLineBytes, job.start, job.end) : scanParquetSlice(job);

function scanParquetSlice(slice: Extract<PrescanJob, { kind: 'parquet' }>): Promise<number> {
  const budget = new HeapBudget(WORKER_HEAP_FLOOR_MB);
  return scanParquet(slice.path, slice.input, stats, slice.slice, () => budget.check()).then(() => 0);
}
scanned.then(
  (lines) => parentPort?.postMessage({ part: stats.part(lines) }),
  (e: unknown) => parentPort?.postMessage({ error: messageOf(e), code: isXrateError(e) ? e.code : undefined }),
);
