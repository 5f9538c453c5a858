/**
 * What a log is, told from its name and its first bytes: its format (`detectFormat`, and from
 * its content `sniffFormat`) and a vendor file's kind (`detectVendor`). Apart from the readers
 * (source.ts), so that a command that only names or lists its inputs (a query of a replay
 * database, `--help`) loads none of them.
 *
 * @module
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { constants, gunzipSync } from 'node:zlib';
import { isParquetHead } from './parquetSchema.js';
import type { SourceFormat } from './source.js';
import { sniffVendor, type VendorKind } from './vendorCsv.js';

/**
 * The format of a log, from its file name (case-insensitive):
 * `.ndjson`, `.jsonl`, `.json` (and `.ndjson.gz`, `.jsonl.gz`, `.json.gz`) → `ndjson`;
 * `.csv`, `.csv.gz` → `csv`; `.sqlite`, `.sqlite3`, `.db` → `sqlite`; `.parquet` → `parquet`;
 * otherwise `undefined`.
 *
 * @example
 * ```ts
 * detectFormat('logs/day1.ndjson.gz'); // 'ndjson'
 * detectFormat('events.db');           // 'sqlite'
 * ```
 */
export function detectFormat(path: string): SourceFormat | undefined {
  let p = path.toLowerCase();
  if (p.endsWith('.gz')) {
    p = p.slice(0, -3);
    if (/\.(ndjson|jsonl|json)$/.test(p)) return 'ndjson';
    if (p.endsWith('.csv')) return 'csv';
    return undefined;
  }
  if (/\.(ndjson|jsonl|json)$/.test(p)) return 'ndjson';
  if (p.endsWith('.csv')) return 'csv';
  if (/\.(sqlite|sqlite3|db)$/.test(p)) return 'sqlite';
  if (p.endsWith('.parquet')) return 'parquet';
  return undefined;
}

/** Reads up to `n` bytes from the start of a file. */
export function readHead(path: string, n: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(n);
    const got = readSync(fd, buf, 0, n, 0);
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

const SQLITE_MAGIC = 'SQLite format 3\0';

/** Guesses a format from content when the name says nothing: SQLite or Parquet magic, else JSON if it starts with `{`, else CSV. */
export function sniffFormat(head: Buffer, gzip: boolean): SourceFormat {
  if (!gzip && head.subarray(0, 16).toString('latin1') === SQLITE_MAGIC) return 'sqlite';
  if (!gzip && isParquetHead(head)) return 'parquet';
  if (gzip) return 'ndjson';
  const text = head
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  return text.startsWith('{') ? 'ndjson' : 'csv';
}

/** Bytes read to find a CSV file's header line (its first line). */
const HEADER_BYTES = 16384;

/**
 * The first line of a CSV file (gunzipped), or undefined when it cannot be read: enough to tell
 * a vendor file from an xrate CSV.
 */
function firstLine(path: string, gzip: boolean): string | undefined {
  try {
    let head = readHead(path, HEADER_BYTES);
    // A gzip stream cut short: decompress what there is.
    if (gzip) head = gunzipSync(head, { finishFlush: constants.Z_SYNC_FLUSH });
    const text = head.toString('utf8');
    const nl = text.indexOf('\n');
    return nl < 0 ? text : text.slice(0, nl);
  } catch {
    return undefined;
  }
}

/**
 * The vendor format of a CSV file, from its header line (vendorCsv.ts), or undefined for an xrate
 * CSV (or a file whose header says nothing known).
 */
export function detectVendor(path: string, gzip = gzipOrUnreadable(path)): VendorKind | undefined {
  const line = firstLine(path, gzip);
  return line === undefined ? undefined : sniffVendor(line);
}

/** Whether `path` is gzip: its name ends in `.gz`, or it starts with gzip's magic bytes. Throws when it cannot be read. */
export function isGzip(path: string): boolean {
  if (path.toLowerCase().endsWith('.gz')) return true;
  const h = readHead(path, 2);
  return h.length === 2 && h[0] === 0x1f && h[1] === 0x8b;
}

/** {@link isGzip}, false for a file that cannot be read (its reader says so). */
function gzipOrUnreadable(path: string): boolean {
  try {
    return isGzip(path);
  } catch {
    return false;
  }
}
