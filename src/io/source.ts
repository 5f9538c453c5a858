/**
 * Event sources: streaming readers that turn an NDJSON, CSV, SQLite or Parquet (parquetRead.ts)
 * event log into batches of raw records (field maps) with their line numbers.
 *
 * Readers never parse events (that is `parseEvent` in `src/core/events.ts`) and never fail on a
 * bad line: a line or row that cannot be read becomes a {@link SourceRecord} with `error` set, so
 * the caller can turn it into a reject `{line, reason, raw}` (docs/methodology.md section 1).
 * Only bad usage throws (a missing file, a CSV header without `type`, a SQLite file without an
 * `events` table); those errors are XrateErrors of code `input`.
 *
 * Everything streams: memory use is bounded by the batch size, whatever the file size, and by
 * the maximum line length, whatever the length of a line: a longer line or row becomes a
 * `line_too_long` record, dropped while it is read (lineLimit.ts).
 *
 * @module
 */

import { statSync } from 'node:fs';
import type { RejectReason, XrateEvent } from '../core/types.js';
import { openCsv } from './csv.js';
import { DEFAULT_MAX_LINE_BYTES } from './lineLimit.js';
import { openNdjson } from './ndjson.js';
import { detectFormat, detectVendor, readHead, sniffFormat } from './detect.js';
import { openParquetSource } from './parquetRead.js';
import { isParquetHead } from './parquetSchema.js';
import { openSqlite } from './sqliteSource.js';
import { openVendorCsv, type VendorKind, type VendorTime } from './vendorCsv.js';
import { XrateError } from '../core/errors.js';

export { JsonRecord } from './record.js';
export { detectFormat, detectVendor } from './detect.js';

/**
 * One line (NDJSON), row (CSV) or table row (SQLite) of an event log, not yet parsed as an event.
 *
 * Exactly one of `record`, `event` and `error` is set.
 */
export interface SourceRecord {
  /**
   * 1-based position in the source. NDJSON: the physical line. CSV: the physical line on which
   * the row starts (the header is normally line 1; a quoted field with newlines makes a row span
   * several lines). SQLite: the rowid.
   */
  line: number;
  /** NDJSON: the line's text (without its line ending). CSV and SQLite: the record as JSON, or the row's text when it could not be read. */
  raw: string;
  /**
   * The field map: JSON values (NDJSON), strings (CSV), column values (SQLite: string, number,
   * null). Empty strings and nulls are passed through; the event parser treats them as absent.
   */
  record?: Record<string, unknown>;
  /** Why the line or row could not be read (invalid JSON, not a JSON object, malformed CSV row, too long). */
  error?: string;
  /** With `error`: the reject reason when it is not `bad_json` (`line_too_long`). */
  reason?: RejectReason;
  /**
   * The event itself, when a reader's fast path parsed the line directly (NDJSON quotes and
   * trades; see fastNdjson.ts): exactly what `parseEvent(record)` would give. Then `record` is
   * not set.
   */
  event?: XrateEvent;
  /**
   * With `event`, for a vendor file that names a market by exchange and exchange symbol (tardis):
   * the event's `symbolId` is a placeholder, to be replaced by the symbol_id of the `symbol` event
   * with this `exchange_id` (any case) and `symbol_id_exchange` (the ingest does it).
   */
  venue?: { exchange: string; symbol: string };
}

/**
 * The log formats xrate reads: its own event log (`ndjson`, `csv`, `sqlite`, and `parquet`, the
 * Parquet event log `xrate convert` writes: parquetRead.ts) and two vendors' CSV files (`coinapi`
 * flat files, `tardis` CSV datasets: vendorCsv.ts).
 */
export type SourceFormat = 'ndjson' | 'csv' | 'sqlite' | 'coinapi' | 'tardis' | 'parquet';

/** Options of {@link openSource}. */
export interface OpenSourceOptions {
  /** The format; by default {@link detectFormat} on the name, then a look at the file's first bytes. */
  format?: SourceFormat;
  /** Records per batch (default 4096). */
  batchSize?: number;
  /** Skip records whose `line` is below this (for resuming a replay). Default 1. */
  startLine?: number;
  /**
   * Maximum length of a line (NDJSON), row (CSV) or table row (SQLite: its values' lengths added
   * up), bytes of UTF-8 without the line ending (default {@link DEFAULT_MAX_LINE_BYTES}, 1 MiB).
   * A longer one becomes a `line_too_long` record.
   */
  maxLineBytes?: number;
  /** Vendor files: the time events take, the receive time (default) or the exchange's. */
  time?: VendorTime;
  /**
   * Read with small buffers and no file descriptor held between reads (NDJSON, CSV and vendor
   * files): for the many inputs of a merge (merge.ts).
   */
  lean?: boolean;
  /**
   * NDJSON, CSV and vendor text files: bytes read from the file (and given out by gunzip) at a time
   * (default 1 MiB read, 256 KiB gunzipped). `xrate convert` reads 64 KiB: a chunk's text lives
   * while its lines are read, and a short-lived one is freed by the young generation's collections
   * instead of ageing into the old generation with each chunk of the file.
   */
  chunkBytes?: number;
}

/**
 * A streaming reader of one event log. {@link EventSource.batches} may be called more than once;
 * each call reads the file again from the start.
 */
export interface EventSource {
  /** The format being read. */
  readonly format: SourceFormat;
  /** The path given to {@link openSource}. */
  readonly path: string;
  /** The file's size in bytes (compressed size for gzip), for progress reports. */
  readonly totalBytes: number;
  /** The number of records, when known up front (SQLite: the row count of `events`). */
  readonly totalRecords?: number;
  /**
   * Bytes of the file consumed so far (compressed bytes for gzip). SQLite: an estimate,
   * `totalBytes` times the fraction of rows read.
   */
  bytesRead(): number;
  /** The records in source order, in batches of at most `batchSize`. */
  batches(): AsyncIterable<SourceRecord[]>;
  /** Stops reading and releases the file (safe to call more than once). */
  close(): void;
}

/** Internal: the options every reader receives, with defaults applied. */
export interface ReaderOptions {
  batchSize: number;
  startLine: number;
  /** NDJSON/CSV: decompress with gunzip. */
  gzip: boolean;
  totalBytes: number;
  /** See {@link OpenSourceOptions.maxLineBytes}. */
  maxLineBytes: number;
  /** See {@link OpenSourceOptions.lean}. */
  lean?: boolean;
  /** See {@link OpenSourceOptions.chunkBytes}. */
  chunkBytes?: number;
}

/** Default {@link OpenSourceOptions.batchSize}. */
export const DEFAULT_BATCH_SIZE = 4096;

/**
 * Opens an event log for streaming. The format comes from `opts.format`, else from the name
 * ({@link detectFormat}), else from the first bytes; a CSV file whose header is a CoinAPI flat
 * file's or a tardis CSV dataset's is read as that vendor's (vendorCsv.ts). NDJSON and CSV files
 * are gunzipped when the name ends in `.gz` or the file starts with the gzip magic bytes `1f 8b`.
 * A file that starts with the Parquet magic bytes `PAR1` is read as a Parquet event log
 * (parquetRead.ts), whatever its name.
 *
 * Throws an XrateError (`input`) when the file cannot be opened or, for SQLite, has no
 * `events` table. A CSV header without a `type` column throws from `batches()`.
 *
 * @example
 * ```ts
 * const src = openSource('fixtures/demo/demo.ndjson.gz');
 * for await (const batch of src.batches()) {
 *   for (const r of batch) {
 *     if (r.error) console.log('line', r.line, r.error);
 *     else handle(r.record!); // e.g. parseEvent(r.record!)
 *   }
 * }
 * ```
 */
export function openSource(path: string, opts: OpenSourceOptions = {}): EventSource {
  let size: number;
  let head: Buffer;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new Error('not a regular file');
    size = st.size;
    head = readHead(path, 64);
  } catch (e) {
    throw new XrateError('input', `cannot open event log "${path}": ${(e as Error).message}`);
  }
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? DEFAULT_BATCH_SIZE));
  const startLine = opts.startLine ?? 1;
  const gzip = path.toLowerCase().endsWith('.gz') || (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b);
  // A Parquet file is one whatever its name.
  let format = opts.format ?? (isParquetHead(head) ? 'parquet' : undefined) ?? detectFormat(path) ?? sniffFormat(head, gzip);
  const maxLineBytes = Math.floor(opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  if (!(maxLineBytes >= 1))
    throw new XrateError('usage', `the maximum line length must be at least 1 byte, got ${opts.maxLineBytes}`, { field: 'maxLineBytes' });
  const ro: ReaderOptions = { batchSize, startLine, gzip, totalBytes: size, maxLineBytes, lean: opts.lean, chunkBytes: opts.chunkBytes };
  let vendor: VendorKind | undefined;
  if (format === 'csv' || format === 'coinapi' || format === 'tardis') {
    vendor = detectVendor(path, gzip);
    if (vendor !== undefined && opts.format === 'csv') vendor = undefined;
    if (opts.format === 'coinapi' || opts.format === 'tardis') {
      if (vendor?.format !== opts.format) {
        throw new XrateError(
          'input',
          `"${path}" is not a ${opts.format === 'coinapi' ? 'CoinAPI flat file' : 'tardis CSV file'} (its header is not one of the format's)`,
        );
      }
    }
    if (vendor !== undefined) format = vendor.format;
  }
  switch (format) {
    case 'ndjson':
      return openNdjson(path, ro);
    case 'csv':
      return openCsv(path, ro);
    case 'sqlite':
      return openSqlite(path, ro);
    case 'coinapi':
    case 'tardis':
      return openVendorCsv(path, vendor!, { ...ro, time: opts.time });
    case 'parquet':
      return openParquetSource(path, ro);
    default:
      throw new XrateError('usage', `unknown source format "${String(format)}"`, { field: 'format' });
  }
}
