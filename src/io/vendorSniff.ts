/**
 * Tells a vendor file (vendorCsv.ts) by its header line, reading only the first few KiB (a gzip
 * file: inflating only those, vendorBytes.ts). A `--merge` of a vendor tree opens thousands of
 * files; inflating 16 KiB of each to find its header (as `detectVendor` in src/io/detect.ts does)
 * cost about 0.3 ms a file.
 *
 * @module
 */
import { statSync } from 'node:fs';
import { XrateError } from '../core/errors.js';
import { detectVendor, isGzip } from './detect.js';
import { openBytes } from './vendorBytes.js';
import { sniffVendor, type VendorKind } from './vendorCsv.js';

/** Text bytes within which the header line must end to be read here (else `detectVendor` reads it). */
const HEAD = 8192;

/** What {@link sniffVendorFile} tells of a file. */
export interface VendorFile {
  /** The file's size in bytes. */
  size: number;
  /** gzip: the name ends in `.gz` or the file starts with the gzip magic bytes. */
  gzip: boolean;
  /** The vendor format, from the header (undefined: not a vendor file, or not asked). */
  kind?: VendorKind;
  /**
   * With `kind`: the file's first two lines (its header and first row, each with its line feed)
   * as read to tell the format, when they came whole within {@link HEAD_KEPT} bytes: a merge
   * places the file by that row without opening it again (vendorBatches.ts `head`).
   */
  head?: Buffer;
}

/** The most text bytes {@link VendorFile.head} keeps (a merge holds one a file until it places it). */
const HEAD_KEPT = 1024;

/**
 * The size, compression and vendor format of `path` (the format as `detectVendor` tells it; not
 * read when `sniff` is false). Throws an XrateError (`input`) when the file cannot be opened.
 */
export function sniffVendorFile(path: string, sniff = true): VendorFile {
  let size: number;
  let gzip: boolean;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new Error('not a regular file');
    size = st.size;
    // A name ending in .gz says gzip without opening the file: it is opened once, to read its
    // header (a merge opens thousands).
    gzip = isGzip(path);
  } catch (e) {
    throw new XrateError('input', `cannot open event log "${path}": ${(e as Error).message}`);
  }
  if (!sniff) return { size, gzip };
  let line: string | undefined;
  let kept: Buffer | undefined;
  try {
    const bytes = openBytes(path, gzip, 4096, size);
    const head = bytes?.next(HEAD);
    bytes?.close();
    const nl = head === undefined ? -1 : head.indexOf(10);
    if (head !== undefined && nl >= 0) {
      line = head.toString('utf8', 0, nl);
      const second = head.indexOf(10, nl + 1);
      // A copy: the bytes read are a view of a buffer the thread's next read writes over. Not from
      // Node's pool: a merge holds every file's until it places it, and each pinned a pool slab of
      // 8 KiB shared with the reads' garbage (6,973 slabs, 55 MB, for the 8.7 MB of 60,000 heads).
      if (second >= 0 && second < HEAD_KEPT) {
        kept = Buffer.allocUnsafeSlow(second + 1);
        head.copy(kept, 0, 0, second + 1);
      }
    }
  } catch {
    line = undefined;
  }
  const kind = line === undefined ? detectVendor(path, gzip) : sniffVendor(line);
  if (kind === undefined) return { size, gzip };
  return kept === undefined ? { size, gzip, kind } : { size, gzip, kind, head: kept };
}
