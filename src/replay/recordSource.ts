/**
 * Record sources of the replay driver (driver.ts): what yields the records of a run, in batches,
 * in replay order, each record with the index of its input, and where a snapshot taken after a
 * batch resumes reading.
 *
 * - {@link fileSequence}: the inputs one after another (`xrate replay`), from a given input and
 *   line on (a resumed replay, or a partition's window).
 * - {@link mergedFiles}: all inputs at once, merged by event time (`--merge`, src/io/merge.ts).
 * - {@link FollowedFile}: a plain NDJSON log read as it grows (src/io/tail.ts), polled
 *   ({@link PolledSource}).
 * - A JetStream stream: the replica's, in src/distributed (the driver knows nothing of NATS).
 *
 * A batch feeds its records to the driver's {@link RecordSink} itself, so a source can do its own
 * work between records (a stream's sequence check) and mark the end of an input inside a stream.
 *
 * @module
 */
import { type BatchColumns, BufferPool, eventAt, ROW_OTHER } from '../core/batch.js';
import { type BatchSource, rawOf, recordAt } from '../io/batch.js';
import { type BatchSourceOptions, openBatchSource } from '../io/batchSource.js';
import { type MergedBatchSource, type MergedRows, type MergeInputs, mergeBatchSources } from '../io/mergeBatches.js';
import { type ReadAhead, readAhead } from '../io/readAhead.js';
import type { Paths } from '../io/pathList.js';
import { mergedVendorFile, openVendorBatches, readFromStart } from '../io/vendorBatches.js';
import type { VendorKind } from '../io/vendorCsv.js';
import { sniffVendorFile } from '../io/vendorSniff.js';
import type { SourceRecord } from '../io/source.js';
import type { FileTail } from '../io/tail.js';

/** Where reading stands: an input and a line of it. */
export interface SourcePosition {
  input: number;
  line: number;
}

/** Row i's raw text (src/io/batch.ts `rawOf`, or a reader's own). */
export type RawOf = (b: BatchColumns, i: number) => string;

/**
 * What a batch feeds: the driver's handling of one record or of the rows of a columnar batch, and
 * the end of an input inside a stream.
 */
export interface RecordSink {
  /** One record of input `input`, in replay order; false once the driver stopped reading (`to`). */
  record(rec: SourceRecord, input: number): boolean;
  /**
   * The rows of a columnar batch in order, each of input `input` (or `b.input[i]` when the batch
   * has that column), stopping after the row that stops the driver (`to`); returns the number of
   * rows handled. `raw` gives a row's raw text, asked for only when it is stored (a reject).
   */
  rows(b: BatchColumns, input: number, raw: RawOf): number;
  /** {@link rows} for the rows of a merge by reference (src/io/mergeBatches.ts), `raw` given each row's input too. */
  mergedRows(m: MergedRows, raw: (b: BatchColumns, i: number, input: number) => string): number;
  /** The end of an input inside a stream (a publish run's end): the end-of-input ticks. */
  endOfInput(): void;
}

/** Records read together: one database transaction of the driver. */
export interface SourceBatch {
  /** Feeds the batch to `sink` in order (stopping when it returns false); where a snapshot after it resumes. */
  feed(sink: RecordSink): SourcePosition;
}

/** How far a source has read, for progress reports. */
export interface SourceProgress {
  input: number;
  inputs: number;
  path: string;
  bytesRead: number;
  totalBytes: number;
}

/** A source read to its end by the driver ({@link Driver.consume}). */
export interface RecordSource {
  /** The batches, in order; opened when first asked (an unreadable input fails the run). */
  batches(): AsyncIterable<SourceBatch>;
  /** How far it has read (after the latest batch). */
  progress?(): SourceProgress;
}

/** A source read when polled ({@link Driver.poll}): what came since the last read. */
export interface PolledSource {
  /** Hands each batch read to `onBatch` as it is read. */
  read(onBatch: (batch: SourceBatch) => void): void;
}

/** How the inputs are opened (openSource's options but the start line). */
export type OpenOptions = Pick<BatchSourceOptions, 'format' | 'batchSize' | 'maxLineBytes' | 'time' | 'threads'>;

/**
 * Opens input `path` as columnar batches (every record source of a replay reads its files here).
 */
export function openInputBatches(path: string, opts: BatchSourceOptions): BatchSource {
  return openBatchSource(path, opts);
}

/** The raw-text reader of a batch source's rows. */
function rawReader(src: BatchSource): RawOf {
  const own = src.rawOf;
  return own === undefined ? rawOf : (b, i) => own.call(src, b, i);
}

/** Row i of a batch as the record the record-at-a-time reader gives, its raw text from `raw`. */
export function recordWith(b: BatchColumns, i: number, raw: RawOf): SourceRecord {
  return b.kind[i] === ROW_OTHER ? recordAt(b, i) : { line: b.line[i], raw: raw(b, i), event: eventAt(b, i) };
}

/** A columnar batch of one input; a snapshot after it resumes after its last row handled. */
function columnBatch(b: BatchColumns, input: number, raw: RawOf): SourceBatch {
  return {
    feed(sink) {
      const n = sink.rows(b, input, raw);
      return { input, line: n > 0 ? b.line[n - 1] : 0 };
    },
  };
}

/** A batch of records of one input. */
function inputBatch(records: readonly SourceRecord[], input: number): SourceBatch {
  return {
    feed(sink) {
      let lastLine = 0;
      for (const rec of records) {
        lastLine = rec.line;
        if (!sink.record(rec, input)) break;
      }
      return { input, line: lastLine };
    },
  };
}

/**
 * The inputs in sequence from `start` on (its line: the first one read; the later inputs from
 * their start), each opened in turn and closed once read or left.
 */
export function fileSequence(paths: Paths, open: OpenOptions, start: SourcePosition = { input: 0, line: 1 }): RecordSource {
  let at: { input: number; src: BatchSource } | undefined;
  return {
    async *batches() {
      for (let i = start.input; i < paths.length; i++) {
        // Each batch is fed whole before the next is asked for, and nothing keeps its columns.
        const src = openInputBatches(paths.at(i) as string, { ...open, startLine: i === start.input ? start.line : 1, recycle: true });
        at = { input: i, src };
        const raw = rawReader(src);
        try {
          for await (const b of src.batches()) yield columnBatch(b, i, raw);
        } finally {
          src.close();
        }
      }
    },
    progress() {
      const i = at?.input ?? start.input;
      return {
        input: i,
        inputs: paths.length,
        path: paths.at(i) as string,
        bytesRead: at?.src.bytesRead() ?? 0,
        totalBytes: at?.src.totalBytes ?? 0,
      };
    },
  };
}

/**
 * Records per batch of each input of a merge: the merge holds one batch of every input at once, so
 * a small one keeps thousands of inputs within memory (src/io/merge.ts).
 */
const MERGE_INPUT_BATCH = 64;

/** Rows per read of a vendor file in a merge (vendorBatches.ts: about this many). */
const VENDOR_MERGE_BATCH = 256;

/**
 * Rows of a vendor file's first batch in a merge, about (vendorBatches.ts `first`): the merge reads
 * every file's first batch before its first row, only to place the file by its first row's time; it
 * then parks the file (mergeBatches.ts) and reads it again from its start when it reaches it, so
 * only the files it has reached hold anything but their place.
 */
const VENDOR_FIRST_ROWS = 1;

/**
 * The `threads` from which a merge reads its vendor files in a read-ahead worker (src/io/readAhead.ts);
 * below, in the replay's thread. The worker takes a core of its own: on two cores, shared with the
 * replay's thread and the database writer's, its reading (run by a new, cold JavaScript engine
 * each run, its compilation included) cost more CPU than it took off the merge's thread, and a
 * merge of 1,034 CoinAPI files ran a seventh faster without it (docs/performance.md).
 */
export const MERGE_READ_AHEAD_THREADS = 3;

/** The inputs of a merge as {@link mergedFiles} opens them ({@link vendorMergeInputs}). */
export interface MergeFileInputs extends MergeInputs {
  /** Stops the read-ahead worker, if one was started (the merge closes the sources). */
  close(): void;
}

/**
 * The inputs `paths` of a merge, each opened as the merge places it (mergeBatches.ts
 * `MergeInputs`): a vendor file from the lines its sniff read, any other input by the one opener.
 * A vendor file the merge parks is let go, and opened again from what is kept of it in columns
 * (its format, size and compression, about 13 bytes): its source object, about 100 bytes, only
 * while the merge is in it. With {@link MERGE_READ_AHEAD_THREADS} threads or more, a read-ahead
 * worker reads the vendor files once they are parked.
 */
export function vendorMergeInputs(paths: Paths, open: OpenOptions): MergeFileInputs {
  /** The worker reading the vendor files ahead (with {@link MERGE_READ_AHEAD_THREADS} threads or more), started at the first one. */
  let ahead: ReadAhead | undefined;
  const vendorOpts = { batchSize: VENDOR_MERGE_BATCH, first: VENDOR_FIRST_ROWS, maxLineBytes: open.maxLineBytes, time: open.time };
  /** The buffers of the vendor files' batches read in this thread, given back by the merge ({@link MERGE_POOL_KEEP}). */
  const pool = new BufferPool(0, MERGE_POOL_KEEP);
  const local = { ...vendorOpts, pool };
  const n = paths.length;
  /** The vendor formats met (a handful: vendorCsv.ts keeps one object each). */
  const kinds: VendorKind[] = [];
  /** Each vendor file's format, as 1 + its index in `kinds`, plus {@link GZIP} when compressed; 0: not a vendor file. */
  const kindOf = new Uint8Array(n);
  const sizes = new Float64Array(n);
  /** Each vendor file's number in the read-ahead worker. */
  let aheadAt: Int32Array | undefined;
  let added = 0;
  /** What a vendor file's readings but its first share: its format, size and compression. */
  const own = (i: number) => {
    const k = kindOf[i];
    return { kind: kinds[(k & ~GZIP) - 1], size: sizes[i], gzip: (k & GZIP) !== 0 };
  };
  return {
    length: n,
    open(i) {
      const path = paths.at(i) as string;
      // A vendor file's batches as it reads them (the merge cuts its own); any other input by the one opener.
      const vendor = open.format === undefined || open.format === 'coinapi' || open.format === 'tardis' ? sniffVendorFile(path) : undefined;
      if (vendor?.kind === undefined)
        return openInputBatches(path, {
          format: open.format,
          batchSize: MERGE_INPUT_BATCH,
          maxLineBytes: open.maxLineBytes,
          time: open.time,
          lean: true,
        });
      let k = kinds.indexOf(vendor.kind);
      if (k < 0) k = kinds.push(vendor.kind) - 1;
      kindOf[i] = (k + 1) | (vendor.gzip ? GZIP : 0);
      sizes[i] = vendor.size;
      // Its header and first row as the sniff read them (`head`): the first batch, which places
      // it, needs no reading; the read-ahead worker, if any, reads it once the merge parks it.
      const here = mergedVendorFile(path, vendor.kind, vendor.size, vendor.gzip, vendor.head, local);
      if ((open.threads ?? 1) < MERGE_READ_AHEAD_THREADS) return here;
      ahead ??= readAhead();
      aheadAt ??= new Int32Array(n);
      aheadAt[i] = added++;
      return ahead.addPlaced({ path, opts: { ...vendorOpts, ...own(i) } }, here);
    },
    reopen(i) {
      if (kindOf[i] === 0) throw new Error(`vendorMergeInputs: input ${i} opened again, but only a vendor file parks`);
      const path = paths.at(i) as string;
      if (ahead !== undefined) return ahead.again((aheadAt as Int32Array)[i], { path, opts: { ...vendorOpts, ...own(i) } });
      return openVendorBatches(path, readFromStart({ ...local, ...own(i) }));
    },
    release(i, b) {
      // A vendor batch read in this thread: its columns and raw bytes in one buffer, from the pool.
      if (ahead === undefined && kindOf[i] !== 0 && b.raw.buffer === b.kind.buffer) pool.put(b.kind.buffer as ArrayBuffer);
    },
    close() {
      ahead?.close();
    },
  };
}

/**
 * Free buffers a merge keeps for its vendor files' batches: it leaves one about every 256 rows, and
 * gives those back in bursts, once its consumer has taken the rows (mergeBatches.ts `release`).
 */
const MERGE_POOL_KEEP = 64;

/** {@link vendorMergeInputs}: the flag of a compressed file in its format's byte. */
const GZIP = 0x80;

/**
 * All inputs at once, by event time (src/io/mergeBatches.ts): a few rows of each input held at a
 * time; `batchSize` rows a batch. `keepHeap` is called every `HEAP_CHECK_EVERY` inputs opened
 * and placed, before the first batch (the replay's heap budget: a merge of tens of thousands of
 * files spends seconds there, making garbage).
 */
export function mergedFiles(paths: Paths, open: OpenOptions, keepHeap?: () => void): RecordSource {
  let merged: MergedBatchSource | undefined;
  return {
    async *batches() {
      const inputs = vendorMergeInputs(paths, open);
      // The rows go to the driver in this thread, by reference: each stays in its input's batch.
      merged = mergeBatchSources(inputs, { batchSize: open.batchSize, placing: keepHeap });
      const raw = merged.rawOfRow;
      try {
        for await (const rows of merged.rows()) {
          yield {
            feed(sink) {
              sink.mergedRows(rows, raw);
              // A merge is never snapshotted (replay.ts refuses it): no position to resume from.
              return { input: 0, line: 0 };
            },
          };
        }
      } finally {
        merged.close();
        // Stopped by its sources' end or close; closed here too when the merge failed placing them.
        inputs.close();
      }
    },
    progress() {
      return { input: 0, inputs: 1, path: paths.at(0) as string, bytesRead: merged?.bytesRead() ?? 0, totalBytes: merged?.totalBytes ?? 0 };
    },
  };
}

/** A followed log (input 0): what was appended since the last read, one batch per chunk read. */
export class FollowedFile implements PolledSource {
  constructor(readonly tail: FileTail) {}

  /** Reads what was appended, handing each batch to `onBatch` as it is read. */
  read(onBatch: (batch: SourceBatch) => void): void {
    this.tail.read((records) => onBatch(inputBatch(records, 0)));
  }

  /** Where the log stands: lines read. */
  get position(): SourcePosition {
    return { input: 0, line: this.tail.lines };
  }
}
