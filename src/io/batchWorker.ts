/**
 * The worker thread of a reader (batchSource.ts): reads the input it is given (a {@link BatchJob}:
 * its `workerData`, or its first message when it was started early, ioWorker.ts `jobOf`) in this
 * thread and posts each batch, its buffers transferred, with the bytes read so far; then `done`,
 * or the error that stopped it. It waits for the reading thread to take batches (an `ack` each)
 * once {@link MAX_IN_FLIGHT} are on their way.
 *
 * @module
 */
import { parentPort } from 'node:worker_threads';
import { BufferPool, batchTransferList } from '../core/batch.js';
import { isXrateError, messageOf } from '../core/errors.js';
import { type BatchAck, type BatchJob, type BatchWorkerMessage, MAX_IN_FLIGHT } from './batchJob.js';
import { HeapBudget } from './heapBudget.js';
import { jobOf, WORKER_HEAP_FLOOR_MB } from './ioWorker.js';
import { settleDetaching } from './detaching.js';

// This thread moves buffers: compiled once, not again at the first move (detaching.ts).
settleDetaching();

// Started early (ioWorker.ts `startEarly`), the worker does not know its input's format while it
// waits: it loads every columnar reader meanwhile.
const job = await jobOf<BatchJob>(() => import('./batchSource.js'));
const port = parentPort;
let inFlight = 0;
let resume: (() => void) | undefined;
/** The buffers of the batches the reading thread gave back, for the next ones (a recycling job's). */
const pool = job.recycle ? new BufferPool() : undefined;
/**
 * This thread's heap kept near what it holds: a Parquet reader's decoding leaves garbage that V8
 * let grow to a hundred megabytes before its first full collection at 100 M events.
 */
const budget = new HeapBudget(WORKER_HEAP_FLOOR_MB);
port?.on('message', (m: BatchAck) => {
  if (m !== 'ack' && m?.ack !== true) return;
  if (m !== 'ack' && pool !== undefined) for (const b of m.recycle) pool.put(b);
  inFlight--;
  resume?.();
});

const post = (m: BatchWorkerMessage): void => port?.postMessage(m, 'batch' in m ? batchTransferList(m.batch) : []);

async function run(): Promise<void> {
  // An NDJSON log needs its reader alone (the other formats' readers take tens of ms to load).
  const nd = job.ndjson;
  const src =
    nd !== undefined
      ? (await import('./ndjsonSource.js')).ndjsonSource(job.path, nd.gzip, false, { ...nd.nb, pool }, 0)
      : (await import('./batchSource.js')).openBatchSource(job.path, { ...job.opts, threads: 1, pool });
  try {
    for await (const batch of src.batches()) {
      post({ batch, bytesRead: src.bytesRead() });
      budget.check();
      inFlight++;
      while (inFlight >= MAX_IN_FLIGHT) {
        await new Promise<void>((r) => {
          resume = r;
        });
        resume = undefined;
      }
    }
    post({ done: true, bytesRead: src.bytesRead() });
  } finally {
    src.close();
  }
}

run().catch((e: unknown) => post({ error: messageOf(e), code: isXrateError(e) ? e.code : undefined }));
