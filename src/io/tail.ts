/**
 * Reading a growing NDJSON log: {@link FileTail} reads what was appended since its last read, a
 * line counting once its newline is written, with the line limits of the other readers (a line
 * over the limit is a `line_too_long` record, dropped as it is read, never held whole). Used by
 * `xrate serve --follow LOG` and `xrate publish --follow`.
 *
 * @module
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { TimeCache } from './fastNdjson.js';
import { DEFAULT_MAX_LINE_BYTES, LineBuffer, LineLimit } from './lineLimit.js';
import { lineRecord } from './ndjson.js';
import { detectFormat, type SourceRecord } from './source.js';
import { XrateError } from '../core/errors.js';

const CHUNK = 1 << 20;

/**
 * A plain NDJSON file read as it grows.
 *
 * @example
 * ```ts
 * const tail = FileTail.open('live.ndjson');
 * setInterval(() => tail.read((records) => { for (const r of records) use(r); }), 1000);
 * ```
 */
export class FileTail {
  private readonly decoder = new StringDecoder('utf8');
  private readonly buf = Buffer.allocUnsafe(CHUNK);
  private readonly limit: LineLimit;
  /** The unfinished last line; a line over the limit is dropped as it is read. */
  private readonly pending: LineBuffer;
  private readonly times = new TimeCache();
  private pos = 0;
  private line = 0;
  private warnedShrink = false;
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    maxLineBytes: number,
    private readonly warn: (message: string) => void,
  ) {
    this.limit = new LineLimit(maxLineBytes);
    this.pending = new LineBuffer(this.limit);
  }

  /**
   * Opens `path` for reading from its start.
   *
   * @throws XrateError when the log is gzipped or not NDJSON, or cannot be opened
   */
  static open(path: string, opts: { maxLineBytes?: number; warn?: (message: string) => void } = {}): FileTail {
    const fmt = detectFormat(path);
    if (/\.gz$/i.test(path) || (fmt !== undefined && fmt !== 'ndjson')) {
      throw new XrateError('input', `following a log needs a plain NDJSON file (one event per line), not "${path}"`);
    }
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (e) {
      throw new XrateError('input', `cannot open "${path}": ${(e as Error).message}`);
    }
    return new FileTail(path, fd, opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, opts.warn ?? (() => {}));
  }

  /** Bytes read so far. */
  get offset(): number {
    return this.pos;
  }

  /** Lines read so far (blank ones included: they are numbered). */
  get lines(): number {
    return this.line;
  }

  /**
   * Reads what was appended: `onRecords` gets the records of the complete lines of each chunk
   * read, in order (blank lines are numbered but give no record). A file that shrank (truncated or
   * rotated) is reported once and waited for.
   */
  read(onRecords: (records: SourceRecord[]) => void): void {
    if (this.closed) return;
    const size = fstatSync(this.fd).size;
    if (size < this.pos) {
      if (!this.warnedShrink)
        this.warn(`"${this.path}" shrank (truncated or rotated?): waiting for it to grow past the ${this.pos} bytes already read`);
      this.warnedShrink = true;
      return;
    }
    while (this.pos < size) {
      const n = readSync(this.fd, this.buf, 0, Math.min(CHUNK, size - this.pos), this.pos);
      if (n <= 0) break;
      this.pos += n;
      const text = this.pending.join(this.decoder.write(this.buf.subarray(0, n)));
      const long = this.pending.takeLong();
      const lastNl = text.lastIndexOf('\n');
      this.pending.keep(text, lastNl + 1);
      if (lastNl < 0 && long === undefined) continue;
      const records: SourceRecord[] = [];
      if (long !== undefined) records.push(long.record(++this.line, this.limit.max));
      let start = 0;
      while (start <= lastNl) {
        const nl = text.indexOf('\n', start);
        this.line++;
        const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
        const rec = lineRecord(text, start, end, this.line, this.limit, this.times);
        if (rec !== undefined) records.push(rec);
        start = nl + 1;
      }
      onRecords(records);
    }
  }

  /** Closes the file. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
  }
}
