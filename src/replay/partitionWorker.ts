/**
 * The worker thread of `xrate replay --workers N`: replays the partition it is given
 * (`workerData`, a {@link PartitionJob}) into its own database and posts what it counted.
 *
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type PartitionJob, runPartitionHere } from './parallel.js';

runPartitionHere(workerData as PartitionJob).then(
  (result) => parentPort?.postMessage({ result }),
  (e: unknown) => parentPort?.postMessage({ error: e instanceof Error ? e.message : String(e) }),
);
