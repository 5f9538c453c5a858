/**
 * The worker thread of a reader (batchSource.ts): reads the input it is given (`workerData`, a
 * {@link BatchJob}: one input, or the inputs of a merge, mergeInputs.ts) in this thread and posts
 * each batch, its buffers transferred, with the bytes read so far; then `done`, or the error that
 * stopped it. It waits for the reading thread to take batches (an `ack` each) once
 * {@link MAX_IN_FLIGHT} are on their way.
 *
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type BatchColumns, batchTransferList } from '../core/batch.js';
import { isXrateError, messageOf } from '../core/errors.js';
import { type BatchJob, type BatchWorkerMessage, MAX_IN_FLIGHT, openBatchSource } from './batchSource.js';
import { openMergedInputs, plainOthers } from './mergeInputs.js';

const job = workerData as BatchJob;
const port = parentPort;
let inFlight = 0;
let resume: (() => void) | undefined;
port?.on('message', (m: unknown) => {
  if (m !== 'ack') return;
  inFlight--;
  resume?.();
});

const post = (m: BatchWorkerMessage): void => port?.postMessage(m, 'batch' in m ? batchTransferList(m.batch) : []);

/** What the worker reads: one input's batches, or merged batches. */
interface Reader {
  batches(): AsyncIterable<BatchColumns>;
  bytesRead(): number;
  readonly totalBytes?: number;
  close(): void;
}

async function run(): Promise<void> {
  const merge = 'paths' in job;
  const src: Reader = merge
    ? openMergedInputs(job.paths, { ...job.opts, threads: 1 })
    : openBatchSource(job.path, { ...job.opts, threads: 1 });
  try {
    for await (const batch of src.batches()) {
      if (merge) plainOthers(batch);
      post({ batch, bytesRead: src.bytesRead(), ...(merge && { totalBytes: src.totalBytes }) });
      inFlight++;
      while (inFlight >= MAX_IN_FLIGHT) {
        await new Promise<void>((r) => {
          resume = r;
        });
        resume = undefined;
      }
    }
    post({ done: true, bytesRead: src.bytesRead(), ...(merge && { totalBytes: src.totalBytes }) });
  } finally {
    src.close();
  }
}

run().catch((e: unknown) => post({ error: messageOf(e), code: isXrateError(e) ? e.code : undefined }));
