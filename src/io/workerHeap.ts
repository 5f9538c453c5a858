/**
 * The V8 heap limits of xrate's I/O worker threads (the readers': batchSource.ts, readAhead.ts;
 * the replay database's writer: writerThread.ts). Their work makes short-lived garbage and keeps
 * little, so a young generation of a few megabytes serves them as well as the default, sized
 * for a main thread: at 25 M events read from Parquet, the two threads of a replay took 37 MB
 * less at the peak (250 -> 213 MB), in the same time.
 *
 * @module
 */
import type { ResourceLimits } from 'node:worker_threads';

/** `resourceLimits` of every I/O worker thread. */
export const IO_WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 4 };

/** The heap budget's floor in a reader's worker (heapBudget.ts): its heap is collected in full above it, and above twice what the last collection left. */
export const WORKER_HEAP_FLOOR_MB = 16;
