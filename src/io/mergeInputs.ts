/**
 * The inputs of a merge (`xrate replay --merge`) opened and merged by event time
 * (mergeBatches.ts): each vendor file by its columnar reader (vendorBatches.ts), any other input
 * by the one opener (batchSource.ts), lean (a few rows of each held at a time).
 *
 * With `threads` > 1 the whole of it (opening thousands of files, inflating and parsing them, the
 * merge) runs in a worker thread (batchWorker.ts), which transfers each merged batch: the replay's
 * thread only applies them. A merged batch stands alone (every row's raw text in its own bytes,
 * mergeBatches.ts); an other row that is not a plain object (a record whose raw text a getter
 * makes) crosses as a plain copy, its raw text made in the worker.
 *
 * @module
 */
import type { BatchColumns, OtherRow } from '../core/batch.js';
import type { BatchSource } from './batch.js';
import { type BatchSourceOptions, openBatchSource, readerWorker } from './batchSource.js';
import { type MergedBatchSource, mergeBatchSources } from './mergeBatches.js';
import type { SourceRecord } from './source.js';
import { openVendorBatches } from './vendorBatches.js';
import { sniffVendorFile } from './vendorSniff.js';

/** How the inputs of a merge are opened (openSource's options but the start line, and the threads). */
export type MergeInputOptions = Pick<BatchSourceOptions, 'format' | 'batchSize' | 'maxLineBytes' | 'time' | 'threads'>;

/**
 * Records per batch of each input of a merge: the merge holds one batch of every input at once, so
 * a small one keeps thousands of inputs within memory (src/io/merge.ts).
 */
const MERGE_INPUT_BATCH = 64;

/** Rows per read of a vendor file in a merge (vendorBatches.ts: about this many). */
const VENDOR_MERGE_BATCH = 256;

/** Opens every input of a merge in this thread (closing those opened when one fails). */
function openAll(paths: readonly string[], open: MergeInputOptions): BatchSource[] {
  const sources: BatchSource[] = [];
  try {
    for (const path of paths) {
      // A vendor file's batches as it reads them (the merge cuts its own); any other input by the one opener.
      const vendor = open.format === undefined || open.format === 'coinapi' || open.format === 'tardis' ? sniffVendorFile(path) : undefined;
      sources.push(
        vendor?.kind !== undefined
          ? openVendorBatches(path, {
              kind: vendor.kind,
              size: vendor.size,
              gzip: vendor.gzip,
              batchSize: VENDOR_MERGE_BATCH,
              maxLineBytes: open.maxLineBytes,
              time: open.time,
            })
          : openBatchSource(path, {
              format: open.format,
              batchSize: MERGE_INPUT_BATCH,
              maxLineBytes: open.maxLineBytes,
              time: open.time,
              lean: true,
            }),
      );
    }
  } catch (e) {
    for (const src of sources) src.close();
    throw e;
  }
  return sources;
}

/** The merge read in this thread, its inputs opened when `batches()` is first called. */
function mergedHere(paths: readonly string[], open: MergeInputOptions): MergedBatchSource {
  let merged: MergedBatchSource | undefined;
  let closed = false;
  return {
    get totalBytes() {
      return merged?.totalBytes ?? 0;
    },
    bytesRead: () => merged?.bytesRead() ?? 0,
    async *batches() {
      if (closed) return;
      merged = mergeBatchSources(openAll(paths, open), { batchSize: open.batchSize });
      yield* merged.batches();
    },
    close() {
      closed = true;
      merged?.close();
    },
  };
}

/**
 * The inputs `paths` merged by event time, in batches of `open.batchSize` rows with an `input`
 * column (see the module description). The inputs are opened when `batches()` is first called:
 * an input that cannot be opened fails it, with the error of the record-at-a-time reader.
 *
 * @example
 * ```ts
 * const m = openMergedInputs(['meta.ndjson', ...vendorFiles], { threads: 2 });
 * for await (const b of m.batches()) for (let i = 0; i < b.length; i++) use(recordAt(b, i), b.input![i]);
 * ```
 */
export function openMergedInputs(paths: readonly string[], open: MergeInputOptions): MergedBatchSource {
  const threads = open.threads === undefined ? 1 : Math.floor(open.threads);
  if (threads <= 1 || paths.length === 0) return mergedHere(paths, open);
  const r = readerWorker({ paths: [...paths], opts: { ...open, threads: 1 } }, `the ${paths.length} inputs of a merge`);
  return {
    get totalBytes() {
      return r.totalBytes() ?? 0;
    },
    bytesRead: r.bytesRead,
    batches: r.batches,
    close: r.close,
  };
}

/** The plain copy of an other row kept as a class instance (its raw text made by a getter). */
function plainRow(o: OtherRow): OtherRow {
  const r = o as unknown as SourceRecord;
  const p: OtherRow = { raw: r.raw };
  if (r.line !== undefined) p.line = r.line;
  if (r.record !== undefined) p.record = r.record;
  if (r.error !== undefined) p.error = r.error;
  if (r.reason !== undefined) p.reason = r.reason;
  if (r.event !== undefined) p.event = r.event;
  if (r.venue !== undefined) p.venue = r.venue;
  return p;
}

/** Makes every other row of `b` a plain object, so that the batch crosses threads whole (see the module description). */
export function plainOthers(b: BatchColumns): void {
  const others = b.others;
  for (let k = 0; k < others.length; k++) {
    const o = others[k];
    if (Object.getPrototypeOf(o) !== Object.prototype) others[k] = plainRow(o);
  }
}
