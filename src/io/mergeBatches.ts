/**
 * The merge of several inputs by event time (`xrate replay --merge`) over columnar batches: the
 * rows of several {@link BatchSource}s into batches whose `input` column names each row's input
 * (src/core/batch.ts), in exactly the order of the record merge (merge.ts):
 *
 * - a row's time is its event's (the `time` column of a quote or trade row; an other row's
 *   event time, or its record's `time` text parsed: `recordTime`); a row without one takes the
 *   time of the row before it in its input (the earliest at the start), so it comes out right
 *   after that row;
 * - ties: the input given first, then the earlier line; an input that goes back in time is not
 *   sorted (its rows come out in its order, each when it is the earliest head);
 * - one batch of each input is held at a time, plus the output (with `rows()`, the batches its
 *   rows are in); a binary heap of the inputs picks the next row in O(log k); an input is told
 *   when the merge takes the first row of its batch (`BatchSource.reached`: a read-ahead may wait
 *   for it);
 * - an input that can be parked (`BatchSource.park`: a vendor file) is placed by its first batch and
 *   then parked, holding nothing but its next row's time until the merge reaches it, when it is
 *   read again from its start: a merge of thousands of files over many days holds only the files
 *   of the time it is at. The parked inputs are reached in the order of their times (then of the
 *   inputs), so the next {@link WAKE_AHEAD} of them in that order are told (`wake`) before, for a
 *   read-ahead to have their first batches ready. Inputs given with `reopen` ({@link MergeInputs})
 *   are let go once parked, and once read to their end: a parked input is then only its place;
 *   those given with `release` get back each batch once no row of it is read again, to build a
 *   later one on its buffer (a merge reading its vendor files in its thread allocates no batch
 *   memory once under way: fresh memory costs a page fault a page on these machines).
 *
 * Two outputs of the same order. `batches()`: rows copied column by column (values, exact texts,
 * raw bytes, symbols through the output batch's dictionary, other rows as they are); a row whose
 * raw text its source gives through `rawOf` gets it as bytes in the output, so an output batch
 * stands alone (it may cross threads, or outlive the merge). `rows()`: nothing copied, each row
 * named by its input's batch and its row there ({@link MergedRows}), for a consumer in the
 * merge's thread (the replay's driver): its raw text read, when asked for (a reject's), through
 * {@link MergedBatchSource.rawOfRow}. The inputs' batches are then held until the consumer has
 * taken the rows, so a source must not write over a batch it gave (a reader recycling its buffers).
 * A replay's merge of 1,034 CoinAPI files (the CLI, eight alternating rounds): 7 % less wall time
 * and 8 % less CPU than with the rows copied, and a peak RSS of 168 MB against 188 MB.
 *
 * @module
 */
import { BatchBuilder, type BatchColumns, CELLS, type OtherRow, ROW_OTHER, ROW_QUOTE } from '../core/batch.js';
import { type BatchSource, rawOf } from './batch.js';
import { HEAP_CHECK_EVERY } from './heapBudget.js';
import { recordTime } from './merge.js';
import type { SourceRecord } from './source.js';
import { popTop, siftDown, siftUp } from '../core/heap.js';

/**
 * Merged rows by reference: row k is row `rows[k]` of its input's batch `batches[k]`, of input
 * `input[k]` (an index into the merge's sources).
 */
export interface MergedRows {
  length: number;
  batches: BatchColumns[];
  rows: Int32Array;
  input: Uint32Array;
}

/** The merged stream of several {@link BatchSource}s (see the module description). */
export interface MergedBatchSource {
  /** The sizes of all inputs added up (of those opened so far, while the merge places them: {@link MergeInputs}). */
  readonly totalBytes: number;
  /** The bytes read of all inputs added up. */
  bytesRead(): number;
  /**
   * The rows of all inputs in merged order, in batches of at most `batchSize` rows with an `input`
   * column, each standing alone. Call once, and this or {@link rows}.
   */
  batches(): AsyncGenerator<BatchColumns>;
  /** The same rows by reference, at most `batchSize` a step (see the module description). Call once, and this or {@link batches}. */
  rows(): AsyncGenerator<MergedRows>;
  /** The raw text of row `i` of a batch of input `input` (a row of {@link rows}). */
  rawOfRow(b: BatchColumns, i: number, input: number): string;
  /** Stops reading and closes every input. */
  close(): void;
}

/** Options of {@link mergeBatchSources}. */
export interface MergeBatchOptions {
  /** Rows per output batch (default 4096). */
  batchSize?: number;
  /** Parked inputs woken ahead of the merge (default {@link WAKE_AHEAD}). */
  wakeAhead?: number;
  /** Called every `HEAP_CHECK_EVERY` inputs loaded before the first row (a heap budget's check: src/io/heapBudget.ts). */
  placing?: () => void;
}

/** Parked inputs woken ahead of the merge (see the module description). */
export const WAKE_AHEAD = 32;

/**
 * Inputs opened as the merge places them, in order: input `i` is opened by `open(i)` just before
 * the merge reads its first batch, so what opening it made (a vendor file's first lines, read to
 * tell its format) goes once it is placed, not after every input is opened.
 */
export interface MergeInputs {
  readonly length: number;
  open(i: number): BatchSource;
  /**
   * Input `i` again, once the merge has parked it and let its source go: a source reading it from
   * its start in whole batches, as the parked source's next reading would. With it the merge keeps
   * nothing of a parked input but its place, and lets an input's source go once read to its end
   * (unless its rows' raw texts come from it, `rawOf`): a merge of a year of files holds an object
   * only for the files it is in.
   */
  reopen?(i: number): BatchSource;
  /**
   * The merge, and the consumer of its rows, are done with batch `b` of input `i`: no row of it is
   * read again, so its buffers may build a later batch (a reader on a `BufferPool`). With `rows()`
   * a batch is given back once the consumer asks for the next rows, so the rows it was given are
   * valid until then.
   */
  release?(i: number, b: BatchColumns): void;
}

interface Cursor {
  it: AsyncIterator<BatchColumns>;
  src: BatchSource;
  b: BatchColumns | undefined;
  pos: number;
  /** Next entry of `b.textCells` not yet copied. */
  text: number;
  /** `b`'s symbol indices in the output batch's dictionary (-1: not yet), valid for output batch `symGen`. */
  symMap: Int32Array;
  symGen: number;
}

/** A cursor at the start of a reading of `src`. */
function cursorOf(src: BatchSource): Cursor {
  return { it: src.batches()[Symbol.asyncIterator](), src, b: undefined, pos: 0, text: 0, symMap: new Int32Array(16), symGen: -1 };
}

/** The merge time of row `i`, or undefined when it has none that can be read. */
function rowTime(b: BatchColumns, i: number): number | undefined {
  if (b.kind[i] !== ROW_OTHER) return b.time[i];
  return recordTime(b.others[b.otherIndex[i]] as unknown as SourceRecord);
}

/** What the merge puts its rows into, in order: copied ({@link MergedBuilder}) or referenced ({@link RowRefs}). */
interface MergeOut<T> {
  readonly length: number;
  /** Whether `add` copies the row (the input's batch is done with once the merge leaves it). */
  readonly copies: boolean;
  /** Takes row `c.pos` of cursor `c` (input `k`). */
  add(c: Cursor, k: number): void;
  /** The rows so far; starts over. */
  finish(): T;
}

/** The output side of `batches()`: rows copied into a batch with an input column. */
class MergedBuilder implements MergeOut<BatchColumns> {
  readonly copies = true;
  private readonly bb = new BatchBuilder();
  private input = new Uint32Array(1024);
  private raw = new Uint8Array(1 << 16);
  private rawLen = 0;
  /** Incremented at each finish (the symbol maps of the cursors are then stale). */
  private gen = 0;
  private readonly enc = new TextEncoder();

  get length(): number {
    return this.bb.length;
  }

  /** Appends `bytes[s, e)` to the raw bytes; returns the new end. */
  private rawBytes(bytes: Uint8Array, s: number, e: number): number {
    const n = e - s;
    if (this.rawLen + n > this.raw.length) {
      const next = new Uint8Array(Math.max(this.raw.length * 2, this.rawLen + n));
      next.set(this.raw.subarray(0, this.rawLen));
      this.raw = next;
    }
    const raw = this.raw;
    let o = this.rawLen;
    // A row's raw text is short: a loop beats making a view to copy from.
    if (n <= 256) for (let k = s; k < e; k++) raw[o++] = bytes[k];
    else {
      raw.set(bytes.subarray(s, e), o);
      o += n;
    }
    this.rawLen = o;
    return o;
  }

  add(c: Cursor, k: number): void {
    const b = c.b!;
    const i = c.pos;
    const bb = this.bb;
    const kind = b.kind[i];
    let rs = -1;
    let re = -1;
    const s = b.rawStart[i];
    if (s >= 0) {
      rs = this.rawLen;
      re = this.rawBytes(b.raw, s, b.rawEnd[i]);
    } else if (kind !== ROW_OTHER) {
      rs = this.rawLen;
      const bytes = this.enc.encode(c.src.rawOf ? c.src.rawOf(b, i) : rawOf(b, i));
      re = this.rawBytes(bytes, 0, bytes.length);
    }
    let row: number;
    if (kind === ROW_OTHER) {
      row = bb.other(b.line[i], b.others[b.otherIndex[i]] as OtherRow, rs, re);
    } else {
      if (c.symGen !== this.gen) {
        c.symMap.fill(-1);
        c.symGen = this.gen;
      }
      const si = b.symbol[i];
      let sym = c.symMap[si];
      if (sym < 0) {
        sym = bb.symbolIndex(b.symbols[si]);
        c.symMap[si] = sym;
      }
      const v = b.v;
      const cell = CELLS * i;
      row =
        kind === ROW_QUOTE
          ? bb.quote(b.line[i], b.time[i], sym, v[cell], v[cell + 1], v[cell + 2], v[cell + 3], rs, re)
          : bb.trade(b.line[i], b.time[i], sym, v[cell], v[cell + 1], b.side[i], rs, re);
      const cells = b.textCells;
      let t = c.text;
      while (t < cells.length && cells[t] < cell) t++;
      const out = CELLS * row - cell;
      for (; t < cells.length && cells[t] < cell + CELLS; t++) bb.text(cells[t] + out, b.texts[t]);
      c.text = t;
    }
    if (row >= this.input.length) {
      const next = new Uint32Array(this.input.length * 2);
      next.set(this.input);
      this.input = next;
    }
    this.input[row] = k;
  }

  finish(): BatchColumns {
    const n = this.bb.length;
    const b = this.bb.finish(this.raw.slice(0, this.rawLen));
    b.input = this.input.slice(0, n);
    this.rawLen = 0;
    this.gen++;
    return b;
  }
}

/** The output side of `rows()`: each row's input batch, row and input (see the module description). */
class RowRefs implements MergeOut<MergedRows> {
  readonly copies = false;
  private n = 0;
  private batches: BatchColumns[] = [];
  private rows: Int32Array;
  private input: Uint32Array;

  constructor(private readonly size: number) {
    this.rows = new Int32Array(size);
    this.input = new Uint32Array(size);
  }

  get length(): number {
    return this.n;
  }

  add(c: Cursor, k: number): void {
    const n = this.n++;
    this.batches.push(c.b!);
    this.rows[n] = c.pos;
    this.input[n] = k;
  }

  finish(): MergedRows {
    const out: MergedRows = { length: this.n, batches: this.batches, rows: this.rows, input: this.input };
    this.n = 0;
    this.batches = [];
    this.rows = new Int32Array(this.size);
    this.input = new Uint32Array(this.size);
    return out;
  }
}

/**
 * Merges `sources` (see the module description); the sources are closed by `close()` or at the
 * end of `batches()` or `rows()`.
 *
 * @example
 * ```ts
 * const m = mergeBatchSources(paths.map((p) => openVendorBatches(p, { batchSize: 256 })));
 * for await (const b of m.batches()) for (let i = 0; i < b.length; i++) use(recordAt(b, i), b.input![i]);
 * ```
 */
export function mergeBatchSources(inputs: readonly BatchSource[] | MergeInputs, opts: MergeBatchOptions = {}): MergedBatchSource {
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? 4096));
  let closed = false;
  const n = inputs.length;
  /**
   * The inputs opened so far, the first `opened` (all of them once placed); undefined: let go,
   * parked or read ({@link MergeInputs.reopen}). Arrays of the inputs' number are made at their
   * length: one grown input by input takes about 1.44 times the room (3.5 bytes an input more).
   */
  const sources: (BatchSource | undefined)[] = Array.isArray(inputs) ? (inputs as readonly BatchSource[]).slice() : new Array(n);
  let opened = Array.isArray(inputs) ? n : 0;
  /** Their sizes added up. */
  let totalBytes = sources.reduce((s, x) => s + (x as BatchSource).totalBytes, 0);
  const reopen = Array.isArray(inputs) ? undefined : (inputs as MergeInputs).reopen?.bind(inputs);
  const release = Array.isArray(inputs) ? undefined : (inputs as MergeInputs).release?.bind(inputs);
  /**
   * The batches the merge has left that the consumer of `rows()` may still read, with their inputs:
   * given back ({@link MergeInputs.release}) once it asks for the next rows.
   */
  const spent: BatchColumns[] = [];
  const spentOf: number[] = [];
  /** Whether a batch the merge leaves waits in `spent` (rows by reference) or goes back at once. */
  let deferSpent = false;
  const spend = (i: number, b: BatchColumns): void => {
    if (release === undefined) return;
    if (!deferSpent) release(i, b);
    else {
      spent.push(b);
      spentOf.push(i);
    }
  };
  const releaseSpent = (): void => {
    for (let k = 0; k < spent.length; k++) (release as NonNullable<typeof release>)(spentOf[k], spent[k]);
    spent.length = 0;
    spentOf.length = 0;
  };
  /** The bytes read of the sources let go, added up; with `reopen`, what each read before it was parked. */
  let readGone = 0;
  const readParked = reopen === undefined ? undefined : new Float64Array(n);
  const open = (i: number): BatchSource => {
    if (i === opened) {
      const src = (inputs as MergeInputs).open(i);
      sources[i] = src;
      opened++;
      totalBytes += src.totalBytes;
    }
    return sources[i] as BatchSource;
  };
  /** Parked input `i`'s source, opened again if it was let go. */
  const parkedSource = (i: number): BatchSource => {
    let src = sources[i];
    if (src === undefined) {
      // What its placing read is counted again by the reading from its start.
      readGone -= (readParked as Float64Array)[i];
      src = (reopen as (i: number) => BatchSource)(i);
      sources[i] = src;
    }
    return src;
  };
  const cursors: (Cursor | undefined)[] = new Array(n);
  /** The merge time of each input's next row. */
  const keys = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
  const heap: number[] = [];
  /** The inputs parked after their first batch, the first `parkedCount`. */
  const parked = new Int32Array(n);
  let parkedCount = 0;
  const less = (a: number, b: number): boolean => {
    const ka = keys[a];
    const kb = keys[b];
    return ka < kb || (ka === kb && a < b);
  };
  /** The next non-empty batch of input `i` into its cursor; false at its end. */
  const load = async (i: number, c: Cursor): Promise<boolean> => {
    if (c.b !== undefined) {
      spend(i, c.b);
      c.b = undefined;
    }
    for (;;) {
      const r = await c.it.next();
      if (r.done) {
        c.b = undefined;
        return false;
      }
      const b = r.value;
      if (b.length > 0) {
        c.b = b;
        c.pos = 0;
        c.text = 0;
        if (c.symMap.length < b.symbols.length) c.symMap = new Int32Array(b.symbols.length);
        c.symMap.fill(-1);
        c.symGen = -1;
        keys[i] = rowTime(b, 0) ?? keys[i];
        return true;
      }
    }
  };
  /**
   * Input `i` read to its end (the top of the heap): it leaves the heap, its cursor goes, and with
   * `reopen` its source too, closed (unless the raw texts of its rows handed out come from it).
   */
  const done = (i: number): void => {
    popTop(heap, less);
    const src = cursors[i]?.src;
    cursors[i] = undefined;
    if (reopen !== undefined && src !== undefined && src.rawOf === undefined) {
      readGone += src.bytesRead();
      src.close();
      sources[i] = undefined;
    }
  };
  const closeAll = (): void => {
    for (let i = 0; i < opened; i++) {
      const c = cursors[i];
      if (c) void c.it.return?.();
      cursors[i] = undefined;
      sources[i]?.close();
    }
  };
  /** Opens input `i` and places it by its first row's time; parks it if it can (see the module description). */
  const place = async (i: number): Promise<void> => {
    // Its own frame: a cursor left in the merge's (a suspended generator's) would hold the last input's source.
    const c = cursorOf(open(i));
    cursors[i] = c;
    if (!(await load(i, c))) {
      cursors[i] = undefined;
      return;
    }
    heap.push(i);
    siftUp(heap, heap.length - 1, less);
    if (c.src.park?.()) {
      // Placed by its first row's time (kept in keys): parked, holding nothing here but its
      // place, until the merge reaches it.
      cursors[i] = undefined;
      await c.it.return?.(undefined);
      // No row of its first batch was taken: it goes back at once.
      if (c.b !== undefined) release?.(i, c.b);
      parked[parkedCount++] = i;
      if (readParked !== undefined) {
        // Let go, not closed (its next reading is another source's: MergeInputs.reopen).
        readParked[i] = c.src.bytesRead();
        readGone += readParked[i];
        sources[i] = undefined;
      }
    }
  };
  let started = false;
  /** The merge, its rows put into `out`. */
  async function* run<T>(out: MergeOut<T>): AsyncGenerator<T> {
    if (started) throw new Error('mergeBatchSources: batches() or rows() called twice');
    started = true;
    deferSpent = !out.copies;
    try {
      for (let i = 0; i < n && !closed; i++) {
        if (i % HEAP_CHECK_EVERY === 0) opts.placing?.();
        await place(i);
      }
      // The order the parked inputs will be reached in: by time, then input.
      parked.subarray(0, parkedCount).sort((a, b) => keys[a] - keys[b] || a - b);
      let woken = 0;
      const wake = (): void => {
        if (woken < parkedCount && !closed) {
          const k = parked[woken++];
          parkedSource(k).wake?.(keys[k]);
        }
      };
      const ahead = Math.max(1, Math.floor(opts.wakeAhead ?? WAKE_AHEAD));
      while (woken < ahead && woken < parkedCount) wake();
      while (heap.length > 0 && !closed) {
        const i = heap[0];
        const c = cursors[i];
        if (c === undefined) {
          // A parked input reached: read again from its start (its first row's time is its key still,
          // unless the file changed: then it goes where its new first row puts it).
          wake();
          const again = cursorOf(parkedSource(i));
          cursors[i] = again;
          if (await load(i, again)) siftDown(heap, 0, less);
          else done(i);
          continue;
        }
        if (c.pos === 0) c.src.reached?.();
        out.add(c, i);
        c.pos++;
        if (c.pos < c.b!.length) {
          keys[i] = rowTime(c.b!, c.pos) ?? keys[i];
          siftDown(heap, 0, less);
        } else if (await load(i, c)) {
          siftDown(heap, 0, less);
        } else done(i);
        if (out.length >= batchSize) {
          yield out.finish();
          // The consumer asked for the next rows: it is done with those it was given.
          releaseSpent();
        }
      }
      if (out.length > 0 && !closed) yield out.finish();
    } finally {
      closeAll();
    }
  }
  return {
    // The inputs opened so far: all of them from the first row on.
    get totalBytes() {
      return totalBytes;
    },
    bytesRead() {
      let read = readGone;
      for (const src of sources) if (src !== undefined) read += src.bytesRead();
      return read;
    },
    batches: () => run(new MergedBuilder()),
    rows: () => run(new RowRefs(batchSize)),
    rawOfRow(b, i, input) {
      // A source let go has no rawOf (see `done`).
      const src = sources[input];
      return b.rawStart[i] < 0 && b.kind[i] !== ROW_OTHER && src?.rawOf ? src.rawOf(b, i) : rawOf(b, i);
    },
    close() {
      closed = true;
      closeAll();
    },
  };
}
