/**
 * What the reading thread and a reader's worker (batchWorker.ts) say to each other: the job, the
 * messages, the back-pressure bound. Apart from batchSource.ts, so that a worker reading NDJSON
 * loads none of the other formats' readers.
 *
 * @module
 */
import type { BatchColumns } from '../core/batch.js';
import type { ErrorCode } from '../core/errors.js';
import type { NdjsonBatchOptions } from './ndjsonBatches.js';
import type { OpenSourceOptions } from './source.js';

/** Batches a reader's worker may have posted and not yet seen taken (the back-pressure bound). */
export const MAX_IN_FLIGHT = 4;

/** What a reader's worker is asked to read. */
export interface BatchJob {
  path: string;
  opts: OpenSourceOptions;
  /** An NDJSON input, opened and checked already: read by ndjsonSource.ts alone. */
  ndjson?: { gzip: boolean; nb: NdjsonBatchOptions };
  /**
   * The reading thread gives each batch's buffers back with its ack ({@link BatchAck}), for the
   * worker's next batches (an NDJSON or Parquet input's; `BatchSourceOptions.recycle`).
   */
  recycle?: boolean;
}

/** What the reading thread posts for each batch it took: `'ack'`, or the ack with the batch's buffers, transferred. */
export type BatchAck = 'ack' | { ack: true; recycle: ArrayBuffer[] };

/** A message of a reader's worker. */
export type BatchWorkerMessage =
  | { batch: BatchColumns; bytesRead: number }
  | { done: true; bytesRead: number }
  | { error: string; code?: ErrorCode };
