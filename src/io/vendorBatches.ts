/**
 * The columnar reader of vendor files (CoinAPI flat files, tardis CSV: vendorCsv.ts): a file read
 * straight into {@link BatchColumns}, without a row, record or event object per row.
 *
 * Rows are read from bytes (vendorBytes.ts: inflated synchronously for gzip) line by line: the
 * fields are found by their delimiters, decimals and times are parsed from the bytes, and a
 * CoinAPI quote or trade becomes a column row whose raw text is its line's bytes. The fast path
 * takes only rows whose outcome it knows to be the record-at-a-time reader's: printable ASCII
 * without spaces, as many fields as the header, plain decimals (`123.45`; prices above 0) and
 * times of the common shapes. Every other row is handed to that reader's own row logic
 * (`vendorRows` in vendorCsv.ts) and its record put in the batch as it is; a line with a quote
 * character, or longer than the line limit, hands the rest of the file to its CSV splitter. So a
 * batch, row for row (`recordAt`, src/io/batch.ts), equals what `openSource` gives for the file,
 * rejects and raw texts included.
 *
 * tardis rows name their market by exchange and exchange symbol (a record's `venue`, mapped by the
 * ingest): they are other rows (`ROW_OTHER`) holding the record, event and venue; only the reading
 * is columnar.
 *
 * {@link openVendorBatches} is a plain function of a path and options, so a worker thread can
 * run it and transfer the batches.
 *
 * @module
 */
import { XrateError } from '../core/errors.js';
import type { BatchColumns, BufferPool } from '../core/batch.js';
import { batchesOf, type BatchSource } from './batch.js';
import { DEFAULT_MAX_LINE_BYTES } from './lineLimit.js';
import { DEFAULT_BATCH_SIZE } from './source.js';
import { lastLineRead } from './textStream.js';
import { type ByteReader, openBytes } from './vendorBytes.js';
import { openVendorCsv, type VendorKind, type VendorTime } from './vendorCsv.js';
import { VendorLineParser } from './vendorLines.js';
import { sniffVendorFile } from './vendorSniff.js';

/** Options of {@link openVendorBatches}. */
export interface VendorBatchOptions {
  /** Rows per batch, about (a batch ends at the first line read after this many rows). Default 4096. */
  batchSize?: number;
  /** Skip rows whose line is below this. Default 1. */
  startLine?: number;
  /** See `OpenSourceOptions.maxLineBytes` (src/io/source.ts). */
  maxLineBytes?: number;
  /** The time events take: the receive time (default) or the exchange's. */
  time?: VendorTime;
  /** The format the file must be (else an `input` error), as `--format coinapi|tardis`. */
  format?: 'coinapi' | 'tardis';
  /** The file's kind when already known (skips reading its header twice). */
  kind?: VendorKind;
  /** With `kind`: the file's size and compression when already known (`sniffVendorFile`), so it is not opened again to tell them. */
  size?: number;
  gzip?: boolean;
  /**
   * Rows of the first batch, about (the lines up to this many are parsed for it, the rest for the
   * next batch): a merge reads every file's first batch before its first row, to place it. After
   * that batch the file's inflate state and read buffers are let go, and the next pull opens it
   * again, passing over the bytes read before (inflating them again, about a read). A merge parks
   * the source then (`park`): the parser goes too, and the file is read again from its start,
   * without a short first batch, when the merge reaches it.
   */
  first?: number;
  /**
   * With `first`: the file's first lines as text, each with its line feed, as read to tell its
   * format (vendorSniff.ts `head`): when they hold the lines of the first batch, that batch is
   * read from them, without opening the file, and a reading that goes on opens it past them.
   */
  head?: Uint8Array;
  /**
   * The file was read before, in a reading this one repeats (a parked file read again from its
   * start in another source): a file that cannot be read now says so, not that none of it was read.
   */
  readBefore?: boolean;
  /**
   * Buffers to build the batches on (core/batch.ts `BufferPool`), for a reader whose batches are
   * given back once done with: a merge's (mergeBatches.ts `MergeInputs.release`).
   */
  pool?: BufferPool;
}

/**
 * The options of a vendor file read again from its start, as a parked file is (a merge's `reopen`,
 * the read-ahead worker's reading of a placed file): in whole batches (no short `first`, no `head`
 * lines), and a file that cannot be read now says it was read before (`readBefore`).
 */
export function readFromStart<T extends VendorBatchOptions>(opts: T): T {
  return { ...opts, first: undefined, head: undefined, readBefore: true };
}

/** What a file holds to read once parked, or read to its end: nothing (its reader let go, not kept by the suspended reading). */
const PARKED: ByteReader = { next: () => undefined, bytesRead: () => 0, close() {} };

/** Text bytes pulled per read while the first batch (`first`) is read: it is short, and read again when the file is reopened. */
const FIRST_PULL = 4096;

/** Bytes pulled per read: about the text of `batchSize` rows, within 8 KiB to 128 KiB. */
function pullBytes(batchSize: number): number {
  return Math.min(1 << 17, Math.max(1 << 13, batchSize * 96));
}

/**
 * Opens a CoinAPI flat file or a tardis CSV file (gzipped or not) as columnar batches (see the
 * module description). Throws an XrateError (`input`) when the file cannot be opened or is not a
 * vendor file (of `opts.format`); a header without a required column throws from `batches()`, as
 * `openSource` does.
 *
 * @example
 * ```ts
 * const src = openVendorBatches('T-TRADES/D-20230701/E-BINANCE/IDDI-2+SC-BINANCE_SPOT_BTC_USDT+S-BTCUSDT.csv.gz');
 * for await (const b of src.batches()) for (let i = 0; i < b.length; i++) use(recordAt(b, i));
 * ```
 */
export function openVendorBatches(path: string, opts: VendorBatchOptions = {}): BatchSource {
  const sniffed =
    opts.kind === undefined
      ? sniffVendorFile(path)
      : opts.size !== undefined && opts.gzip !== undefined
        ? { size: opts.size, gzip: opts.gzip, kind: opts.kind }
        : { ...sniffVendorFile(path, false), kind: opts.kind };
  const { size, gzip } = sniffed;
  const kind = opts.kind ?? sniffed.kind;
  if (kind === undefined || (opts.format !== undefined && kind.format !== opts.format)) {
    const what = opts.format === 'tardis' ? 'a tardis CSV file' : opts.format === 'coinapi' ? 'a CoinAPI flat file' : 'a vendor file';
    throw new XrateError('input', `"${path}" is not ${what} (its header is not one of the format's)`);
  }
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? DEFAULT_BATCH_SIZE));
  const startLine = opts.startLine ?? 1;
  const maxLineBytes = Math.floor(opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  const pull = pullBytes(batchSize);
  let closed = false;
  /** The first lines given (`head`), until a reading takes them or the file is parked. */
  let headText = opts.head;
  /** Parked (`park`): later readings start over without a short first batch. */
  let again = false;
  let read = 0;
  const open = new Set<{ bytesRead(): number; close(): void }>();
  return {
    format: kind.format,
    path,
    totalBytes: size,
    bytesRead() {
      let n = read;
      for (const r of open) n = Math.max(n, r.bytesRead());
      return n;
    },
    async *batches() {
      if (closed) return;
      const readSize = Math.max(1 << 12, pull >> 1);
      let bytes = openBytes(path, gzip, readSize, size);
      if (bytes === undefined) {
        // No synchronous inflate in this runtime: the streaming record reader, as batches.
        const src = openVendorCsv(path, kind, { batchSize, startLine, gzip, totalBytes: size, maxLineBytes, time: opts.time, lean: true });
        open.add(src);
        try {
          yield* batchesOf(src).batches();
        } finally {
          read = Math.max(read, src.bytesRead());
          open.delete(src);
          src.close();
        }
        return;
      }
      open.add(bytes);
      const p = new VendorLineParser(kind, path, { startLine, maxLineBytes, time: opts.time });
      /** The file opened again, past its first `text` bytes of text (read and dropped). */
      const reopen = (text: number): ByteReader => {
        const r = openBytes(path, gzip, readSize, size) as ByteReader;
        try {
          for (let left = text; left > 0; ) {
            const skipped = r.next(Math.min(left, 1 << 17));
            if (skipped === undefined)
              throw new XrateError(
                'input',
                `cannot read "${path}": it ended before the ${text} bytes of text read from it already (was it changed?)`,
              );
            left -= skipped.length;
          }
        } catch (e) {
          r.close();
          throw new XrateError('input', `${(e as Error).message}; ${readSoFar(p.lastLine, true)}`, { cause: e });
        }
        return r;
      };
      /** Lets reader `r` go (its bytes read counted): parked, read to its end, or stopped; what takes its place. */
      const letGo = (r: ByteReader): ByteReader => {
        read = Math.max(read, r.bytesRead());
        open.delete(r);
        r.close();
        return PARKED;
      };
      /** Before the first batch is cut (with `first`): the text bytes pushed so far. */
      let firstText = opts.first === undefined || again ? -1 : 0;
      try {
        const head = firstText === 0 ? firstLines(headText, opts.first as number) : undefined;
        headText = undefined;
        if (head !== undefined) {
          // The first batch from the lines read to tell the format: the file is opened only to go on.
          bytes = letGo(bytes);
          p.push(head);
          firstText = -1;
          if (p.length > 0) {
            yield p.finish(opts.pool);
            if (closed) return;
          }
          bytes = reopen(head.length);
          open.add(bytes);
        }
        for (;;) {
          let chunk: Buffer | undefined;
          try {
            chunk = bytes.next(firstText >= 0 ? Math.min(pull, FIRST_PULL) : pull);
          } catch (e) {
            throw new XrateError('input', `${(e as Error).message}; ${readSoFar(p.lastLine, again || opts.readBefore === true)}`, {
              cause: e,
            });
          }
          if (chunk === undefined) break;
          if (firstText >= 0) {
            // Lines the first batch still takes (the header is line 1; a line cut by the last read is
            // completed by the first line ending of this one).
            const cut = afterLines(chunk, Math.max(1, (opts.first as number) + 1 - p.lastLine));
            p.push(chunk.subarray(0, cut));
            firstText += cut;
            if (cut === chunk.length) continue;
            // Parked until the next pull: the read's state goes, the parser's (a line's carry at most) stays.
            const text = firstText;
            firstText = -1;
            bytes = letGo(bytes);
            if (p.length > 0) {
              yield p.finish(opts.pool);
              if (closed) return;
            }
            bytes = reopen(text);
            open.add(bytes);
            continue;
          }
          p.push(chunk);
          if (p.length >= batchSize) {
            yield p.finish(opts.pool);
            if (closed) return;
          }
        }
        p.end();
        if (!p.hasHeader)
          throw new XrateError(
            'input',
            `${kind.format === 'coinapi' ? 'CoinAPI' : 'tardis'} ${kind.data} file "${path}" has no header row`,
          );
        // Read to its end: its reader (inflate state, read buffer) goes before the last batch is
        // taken, which a merge may not do for a while (a file read ahead of it).
        bytes = letGo(bytes);
        if (p.length > 0 && !closed) yield p.finish(opts.pool);
      } finally {
        // Stopped by an error between two batches: drop the rows built (the builder is shared).
        if (p.length > 0) p.finish();
        letGo(bytes);
      }
    },
    park() {
      again = true;
      headText = undefined;
      return true;
    },
    close() {
      closed = true;
      for (const r of open) r.close();
    },
  };
}

/**
 * What a merge reads a vendor file through when it reads it in its own thread: a source that
 * holds only the file's path, size and kind between two readings, since a merge of months of
 * files holds one a file. Each reading opens the file anew with {@link openVendorBatches}: the
 * first with `shared.first` rows from `head` (to place it), a later one (once parked) from its
 * start in whole batches; what a reading held goes when it ends, or is parked. A merge that can
 * open the file again (mergeBatches.ts `MergeInputs.reopen`) lets even this go once it parks it.
 *
 * @example
 * ```ts
 * const f = sniffVendorFile(path);
 * const src = mergedVendorFile(path, f.kind!, f.size, f.gzip, f.head, { batchSize: 256, first: 1 });
 * ```
 */
export function mergedVendorFile(
  path: string,
  kind: VendorKind,
  size: number,
  gzip: boolean,
  head: Uint8Array | undefined,
  shared: VendorBatchOptions,
): BatchSource {
  return new MergedVendorFile(path, kind, size, gzip, head, shared);
}

/** See {@link mergedVendorFile}. */
class MergedVendorFile implements BatchSource {
  /** The reading under way, if any. */
  private reading: BatchSource | undefined;
  /** Bytes read by the readings that ended. */
  private read = 0;
  /** Parked once: later readings start over in whole batches, and say so if the file changed. */
  private again = false;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly kind: VendorKind,
    readonly totalBytes: number,
    private readonly gzip: boolean,
    private head: Uint8Array | undefined,
    private readonly shared: VendorBatchOptions,
  ) {}

  get format(): 'coinapi' | 'tardis' {
    return this.kind.format;
  }

  bytesRead(): number {
    return Math.max(this.read, this.reading?.bytesRead() ?? 0);
  }

  async *batches(): AsyncGenerator<BatchColumns> {
    if (this.closed) return;
    const own = { kind: this.kind, size: this.totalBytes, gzip: this.gzip };
    const reading = openVendorBatches(
      this.path,
      this.again ? readFromStart({ ...this.shared, ...own }) : { ...this.shared, ...own, head: this.head },
    );
    this.head = undefined;
    this.reading = reading;
    try {
      yield* reading.batches();
    } finally {
      this.read = Math.max(this.read, reading.bytesRead());
      reading.close();
      if (this.reading === reading) this.reading = undefined;
    }
  }

  park(): boolean {
    if (this.reading?.park?.() !== true) return false;
    this.again = true;
    return true;
  }

  close(): void {
    this.closed = true;
    this.head = undefined;
    this.reading?.close();
  }
}

/** What a failed reading had read: its last whole line, or none (`before`: in a reading before it, which this one repeated). */
function readSoFar(line: number, before: boolean): string {
  return line <= 0 && before
    ? 'its first rows were read before (to place it in a merge): was it moved or changed since?'
    : lastLineRead(line);
}

/**
 * The text of the first batch's lines, `first` rows after the header, when `head` holds them all
 * (undefined when it holds fewer, or there is none), as a Buffer (a head that crossed threads is a
 * plain Uint8Array).
 */
function firstLines(head: Uint8Array | undefined, first: number): Buffer | undefined {
  if (head === undefined) return undefined;
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  const at = linesEnd(b, first + 1);
  return at < 0 ? undefined : b.subarray(0, at);
}

/** The index after the `n`th newline of `b`, or -1 when it has fewer. */
function linesEnd(b: Buffer, n: number): number {
  let at = 0;
  for (let k = 0; k < n; k++) {
    const lf = b.indexOf(10, at);
    if (lf < 0) return -1;
    at = lf + 1;
  }
  return at;
}

/** The index after the `n`th newline of `b` (its length when it has fewer). */
function afterLines(b: Buffer, n: number): number {
  const at = linesEnd(b, n);
  return at < 0 ? b.length : at;
}
