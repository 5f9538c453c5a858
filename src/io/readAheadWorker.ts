/**
 * The read-ahead worker of a merge (readAhead.ts starts it): reads the batches the merge's thread
 * asks for, of the vendor files it is given (with the asks; its ports in `workerData`, a {@link ReadAheadJob}), each file
 * opened at its first ask and read on by `openVendorBatches` exactly as that thread would read it.
 * The ask needed soonest (the earliest event time the merge will reach it at; the first asked of
 * two alike) is served first; the results go back a few at a time, their buffers transferred.
 * Both ways are read synchronously, each post counted in a shared counter the other side waits on.
 *
 * @module
 */
import { receiveMessageOnPort, workerData } from 'node:worker_threads';
import { type BatchColumns, batchTransferList } from '../core/batch.js';
import { isXrateError, messageOf } from '../core/errors.js';
import { popTop, siftUp } from '../core/heap.js';
import { HeapBudget } from './heapBudget.js';
import { WORKER_HEAP_FLOOR_MB } from './ioWorker.js';
import type { BatchSource } from './batch.js';
import type { ReadAheadJob, ReadAheadJobFile, ReadAheadMessage, ReadAheadResult, ReadAheadWant } from './readAheadJob.js';
import { openVendorBatches, type VendorBatchOptions } from './vendorBatches.js';
import { settleDetaching } from './detaching.js';

// This thread moves buffers: compiled once, not again at the first move (detaching.ts).
settleDetaching();

/** Results posted together at most (fewer when no ask waits). */
const GROUP = 4;
/** Milliseconds a wait for asks lasts before this thread's events are seen (its termination). */
const WAIT_MS = 100;

const job = workerData as ReadAheadJob;
const counts = new Int32Array(job.counts);
/**
 * The files given, in columns: each one's path, size and options (the options without the size,
 * one object for all the files that share them: a merge of months of files gives tens of
 * thousands, alike but for their paths and sizes).
 */
const paths: string[] = [];
const sizes: number[] = [];
const optsOf: VendorBatchOptions[] = [];
const shared = new Map<string, VendorBatchOptions>();
const sources: (BatchSource | undefined)[] = [];
const readers: (AsyncIterator<BatchColumns> | undefined)[] = [];
/** Keeps the heap near what it holds: the files being read and their next batches. */
const budget = new HeapBudget(WORKER_HEAP_FLOOR_MB);
let asksSeen = 0;

/** The asks waiting: a binary heap by time, then by the order asked. */
interface Ask {
  file: number;
  time: number;
  seq: number;
}
const heap: Ask[] = [];
let seq = 0;
const before = (a: Ask, b: Ask): boolean => a.time < b.time || (a.time === b.time && a.seq < b.seq);

function push(file: number, time: number): void {
  heap.push({ file, time, seq: seq++ });
  siftUp(heap, heap.length - 1, before);
}

function pop(): number {
  return popTop(heap, before).file;
}

/** Takes the asks posted so far. */
function takeAsks(): void {
  for (let m = receiveMessageOnPort(job.asks); m !== undefined; m = receiveMessageOnPort(job.asks)) {
    asksSeen++;
    const w = m.message as ReadAheadWant;
    for (const f of w.add) add(f);
    for (const i of w.park) park(i);
    for (let k = 0; k < w.files.length; k++) push(w.files[k], w.times[k]);
  }
}

/** Takes file `f` into the columns. */
function add(f: ReadAheadJobFile): void {
  paths.push(f.path);
  sizes.push(f.opts.size ?? -1);
  optsOf.push(optionsOf({ ...f.opts, size: undefined }));
}

/** The one object of options alike (a file's own first lines, `head`, are its own). */
function optionsOf(o: VendorBatchOptions): VendorBatchOptions {
  if (o.head !== undefined) return o;
  const key = JSON.stringify(o);
  let one = shared.get(key);
  if (one === undefined) {
    one = o;
    shared.set(key, o);
  }
  return one;
}

/** The next batch of file `i` (opened at its first ask), its end, or its error (the file then closed). */
async function readOne(i: number, transfer: ArrayBuffer[]): Promise<ReadAheadResult> {
  try {
    let src = sources[i];
    let it = readers[i];
    if (src === undefined || it === undefined) {
      src = openVendorBatches(paths[i], sizes[i] < 0 ? optsOf[i] : { ...optsOf[i], size: sizes[i] });
      it = src.batches()[Symbol.asyncIterator]();
      sources[i] = src;
      readers[i] = it;
    }
    const r = await it.next();
    if (r.done) {
      const bytesRead = src.bytesRead();
      end(i);
      return { file: i, done: true, bytesRead };
    }
    for (const b of batchTransferList(r.value)) transfer.push(b);
    return { file: i, batch: r.value, bytesRead: src.bytesRead() };
  } catch (e) {
    end(i);
    return { file: i, error: messageOf(e), code: isXrateError(e) ? e.code : undefined };
  }
}

/** Parked by the merge: its reading ended, all it holds let go; its next ask reads it from its start, in whole batches. */
function park(i: number): void {
  const it = readers[i];
  readers[i] = undefined;
  sources[i] = undefined;
  void it?.return?.(undefined);
  optsOf[i] = optionsOf({ ...optsOf[i], first: undefined, head: undefined, readBefore: true });
}

function end(i: number): void {
  sources[i]?.close();
  sources[i] = undefined;
  readers[i] = undefined;
}

function post(results: ReadAheadResult[], transfer: ArrayBuffer[]): void {
  job.results.postMessage({ results } satisfies ReadAheadMessage, transfer);
  Atomics.add(counts, 0, 1);
  Atomics.notify(counts, 0);
  budget.check();
}

/** Serves the asks, soonest needed first, until the thread is terminated. */
async function serve(): Promise<void> {
  let results: ReadAheadResult[] = [];
  let transfer: ArrayBuffer[] = [];
  for (;;) {
    takeAsks();
    if (heap.length === 0) {
      if (results.length > 0) {
        post(results, transfer);
        results = [];
        transfer = [];
      }
      if (Atomics.wait(counts, 1, asksSeen, WAIT_MS) === 'timed-out') await new Promise<void>((r) => setImmediate(r));
      continue;
    }
    results.push(await readOne(pop(), transfer));
    if (results.length >= GROUP) {
      post(results, transfer);
      results = [];
      transfer = [];
    }
  }
}

void serve();
