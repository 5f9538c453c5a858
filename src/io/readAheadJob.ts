/**
 * What the merge's thread and its read-ahead worker (readAheadWorker.ts) say to each other: the
 * files to read, the batches asked for, the batches read. Apart from readAhead.ts, so that the
 * worker loads only what it runs.
 *
 * @module
 */
import type { BatchColumns } from '../core/batch.js';
import type { MessagePort } from 'node:worker_threads';
import type { ErrorCode } from '../core/errors.js';
import type { VendorBatchOptions } from './vendorBatches.js';

/** A file a read-ahead worker reads: a vendor file and how to open it. */
export interface ReadAheadJobFile {
  path: string;
  opts: VendorBatchOptions;
}

/** What a read-ahead worker is given (`workerData`): its ports and counters. */
export interface ReadAheadJob {
  /** Where the results go, and the asks come from (each side reads them synchronously: `receiveMessageOnPort`). */
  results: MessagePort;
  asks: MessagePort;
  /**
   * Shared counters (Int32Array): at index 0 the results posted (the merge's thread waits on it),
   * at index 1 the asks posted (the worker waits on it).
   */
  counts: SharedArrayBuffer;
}

/**
 * What the merge's thread posts: one more batch asked of each file of `files`, needed once the
 * merge reaches the event time at the same index of `times` (the worker reads the earliest first).
 */
export interface ReadAheadWant {
  /** Files added to those read (numbered on from those before), before the asks. */
  add: ReadAheadJobFile[];
  /** Files parked, before the asks: each let go, and read again from its start at its next ask. */
  park: number[];
  files: number[];
  times: number[];
}

/** What a file gave for a batch asked for: the batch, its end, or the error that stopped it. */
export type ReadAheadResult =
  | { file: number; batch: BatchColumns; bytesRead: number }
  | { file: number; done: true; bytesRead: number }
  | { file: number; error: string; code?: ErrorCode };

/** A message of the worker: the results of several asks, in the order they were read. */
export interface ReadAheadMessage {
  results: ReadAheadResult[];
}
