/**
 * The worker thread of `xrate replay --workers N` and `xrate worker`: replays the partition it is
 * given (`workerData.job`, a {@link PartitionJob}) into its own database, posting the records read
 * now and then (when `workerData.progress`), then what it counted.
 *
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isXrateError, messageOf } from '../core/errors.js';
import { PARTITION_HEAP_FLOOR_MB, type PartitionJob, runPartitionHere, type WorkerMessage } from './parallel.js';

const { job, progress } = workerData as { job: PartitionJob; progress: boolean };
const post = (m: WorkerMessage): void => parentPort?.postMessage(m);
// This thread's heap is the partition's alone: kept near what it holds (the heap budget), as
// `xrate replay` keeps its own (src/io/heapBudget.ts), with a floor of its own.
runPartitionHere({ ...job, heapBudget: PARTITION_HEAP_FLOOR_MB }, progress ? (n) => post({ progress: n }) : undefined).then(
  (result) => post({ result }),
  (e: unknown) => post({ error: messageOf(e), code: isXrateError(e) ? e.code : undefined }),
);
