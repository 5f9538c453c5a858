/**
 * CSV reader: RFC 4180 with a header row, optionally gzipped.
 *
 * - The first non-blank row is the header; it must name a `type` column (else `batches()` throws
 *   `CSV header must include "type"`). Header names are trimmed; a BOM is ignored.
 * - Fields may be quoted with `"`; inside quotes, `""` is a quote and commas, CR and LF are data.
 *   A `"` inside an unquoted field is kept as a literal character. Values are not trimmed.
 * - Rows end at LF or CRLF (a lone CR is data). Blank rows (no text, or only whitespace and
 *   commas) are skipped without a record.
 * - A malformed row (text after a closing quote, a quote never closed, or a field count that
 *   differs from the header's) becomes a record with `error` set and `raw` = the row's text;
 *   reading resumes at the next line. Bad input is never fatal.
 * - A row of more than `maxLineBytes` bytes of UTF-8 (its line ending not counted) becomes a
 *   `line_too_long` record at its first line, and reading resumes at the next physical line: for a
 *   row of one line, the next row; for a quoted field running over several lines (most often a
 *   quote never closed), the lines after the first are read as rows. A line over the limit is
 *   dropped while it is read, never held whole (lineLimit.ts). This does not depend on where the
 *   read chunks end.
 * - `line` is the physical line on which the row starts (the header is normally line 1).
 *
 * Why not fast-csv's parser: it stops the whole stream at the first malformed quote (and drops the
 * rows of the chunk being parsed), which would make one bad row fatal, and it cannot report
 * physical line numbers. This parser agrees with fast-csv on well-formed input (see the tests).
 *
 * @module
 */

import type { RejectReason } from '../core/types.js';
import { clipText, DEFAULT_MAX_LINE_BYTES, KEEP_CHARS, LineBuffer, LineLimit, tooLongMessage, utf8Bytes } from './lineLimit.js';
import { JsonRecord } from './record.js';
import { type RecordMaker, recordMaker } from './recordShape.js';
import type { EventSource, ReaderOptions, SourceRecord } from './source.js';
import { textSource, withLastLine } from './textStream.js';
import { XrateError } from '../core/errors.js';

/** One parsed CSV row: `fields`, or `error`; `end` is the index just after the row's line ending. */
interface RowResult {
  fields?: string[];
  error?: string;
  end: number;
  /** The row had a quoted field (it may then span several physical lines). */
  quoted: boolean;
}

/** Index of the next `\n` at or after `from`, or -1. */
function nextNl(s: string, from: number): number {
  return s.indexOf('\n', from);
}

/**
 * Parses one row of `s` starting at `pos`. Returns `undefined` when the row may continue past the
 * end of `s` and more text is coming (`eof` false).
 */
function parseRow(s: string, pos: number, eof: boolean, delim: number): RowResult | undefined {
  const n = s.length;
  const fields: string[] = [];
  let quoted = false;
  let i = pos;
  for (;;) {
    if (i < n && s.charCodeAt(i) === 34 /* " */) {
      quoted = true;
      let val = '';
      let j = i + 1;
      for (;;) {
        const q = s.indexOf('"', j);
        if (q === -1) {
          if (!eof) return undefined;
          // Report the row's first line and resume reading at the next line.
          const nl = nextNl(s, pos);
          return { error: 'quoted field is never closed', end: nl === -1 ? n : nl + 1, quoted };
        }
        if (q + 1 >= n && !eof) return undefined; // cannot tell "" from a closing quote yet
        if (s.charCodeAt(q + 1) === 34) {
          val += s.slice(j, q + 1);
          j = q + 2;
          continue;
        }
        val += s.slice(j, q);
        i = q + 1;
        break;
      }
      fields.push(val);
      if (i >= n) {
        if (!eof) return undefined;
        return { fields, end: n, quoted };
      }
      const c = s.charCodeAt(i);
      if (c === delim) {
        i++;
        continue;
      }
      if (c === 10) return { fields, end: i + 1, quoted };
      if (c === 13) {
        if (i + 1 >= n) {
          if (!eof) return undefined;
          return { fields, end: n, quoted };
        }
        if (s.charCodeAt(i + 1) === 10) return { fields, end: i + 2, quoted };
      }
      const nl = nextNl(s, i);
      if (nl === -1 && !eof) return undefined;
      return {
        error: `unexpected character ${JSON.stringify(s[i])} after a closing quote (field ${fields.length})`,
        end: nl === -1 ? n : nl + 1,
        quoted,
      };
    }
    // Unquoted field: up to the next comma or LF.
    let j = i;
    let c = 0;
    while (j < n) {
      c = s.charCodeAt(j);
      if (c === delim || c === 10) break;
      j++;
    }
    if (j >= n) {
      if (!eof) return undefined;
      let e = n;
      if (e > i && s.charCodeAt(e - 1) === 13) e--;
      fields.push(s.slice(i, e));
      return { fields, end: n, quoted };
    }
    if (c === delim) {
      fields.push(s.slice(i, j));
      i = j + 1;
      continue;
    }
    let e = j;
    if (e > i && s.charCodeAt(e - 1) === 13) e--;
    fields.push(s.slice(i, e));
    return { fields, end: j + 1, quoted };
  }
}

/** Number of `\n` in `s[from, to)`. */
function countNl(s: string, from: number, to: number): number {
  let k = 0;
  let i = s.indexOf('\n', from);
  while (i !== -1 && i < to) {
    k++;
    i = s.indexOf('\n', i + 1);
  }
  return k;
}

/** A row with no content: every field empty or whitespace. */
export function isBlank(fields: string[]): boolean {
  for (const f of fields) if (f.length > 0 && f.trim().length > 0) return false;
  return true;
}

/** End of a row's text without its line ending. */
function textEnd(s: string, from: number, to: number): number {
  let e = to;
  if (e > from && s.charCodeAt(e - 1) === 10) e--;
  if (e > from && s.charCodeAt(e - 1) === 13) e--;
  return e;
}

/** A row's text without its line ending, for `raw` of an error record. */
function rowText(s: string, from: number, to: number): string {
  return s.slice(from, textEnd(s, from, to));
}

/** A row of the file: its first physical line and either fields or an error. */
export interface CsvRow {
  line: number;
  fields?: string[];
  error?: string;
  /** The row's text (only for error rows). */
  text?: string;
  /** Error rows: the reject reason when it is not `bad_json` (`line_too_long`). */
  reason?: RejectReason;
}

/**
 * Incremental CSV row splitter: feed text chunks with {@link CsvSplitter.push}, then call
 * {@link CsvSplitter.end}; each returns the rows completed so far (blank rows dropped).
 *
 * @example
 * ```ts
 * const sp = new CsvSplitter();
 * sp.push('a,b\n"x,\ny",2\n'); // [{line:1, fields:['a','b']}, {line:2, fields:['x,\ny','2']}]
 * sp.end();                    // []
 * ```
 */
export class CsvSplitter {
  private readonly lines: LineBuffer;
  private readonly limit: LineLimit;
  private line = 1;
  private width = 0;
  private readonly delim: number;

  /**
   * @param header - the first row read is a header: every later row must have as many fields
   *   (else it becomes an error row).
   * @param maxLineBytes - a longer row is a `line_too_long` error row (see the module description).
   * @param delimiter - the field separator, one character (default `,`; CoinAPI's flat files use `;`).
   * @param from - the text pushed starts at this physical line, after a header of `width` fields
   *   already read (a reader that read the lines before by other means and hands the rest over).
   */
  constructor(
    private readonly header = false,
    maxLineBytes = DEFAULT_MAX_LINE_BYTES,
    delimiter = ',',
    from?: { line: number; width: number },
  ) {
    this.delim = delimiter.charCodeAt(0);
    this.limit = new LineLimit(maxLineBytes);
    this.lines = new LineBuffer(this.limit);
    if (from !== undefined) {
      this.line = from.line;
      this.width = from.width;
    }
  }

  /** Adds text (chunks must not split a surrogate pair); returns the complete rows. */
  push(chunk: string): CsvRow[] {
    const s = this.lines.join(chunk);
    const out: CsvRow[] = [];
    this.takeLong(out);
    this.lines.keep(s, this.run(s, false, out));
    return out;
  }

  /** Ends the input; returns the last rows. */
  end(): CsvRow[] {
    const s = this.lines.end();
    const out: CsvRow[] = [];
    this.takeLong(out);
    if (s.length > 0) this.run(s, true, out);
    return out;
  }

  /** A line over the limit that was dropped while read (it ended in the last chunk). */
  private takeLong(out: CsvRow[]): void {
    const long = this.lines.takeLong();
    if (long === undefined) return;
    const r = long.record(this.line, this.limit.max);
    out.push({ line: this.line, error: r.error, text: r.raw, reason: 'line_too_long' });
    this.line++;
  }

  /** Splits `s` into rows (into `out`); returns where the unfinished row starts. */
  private run(s: string, eof: boolean, out: CsvRow[]): number {
    const { max, safe, safeTail } = this.limit;
    let pos = 0;
    const n = s.length;
    while (pos < n) {
      if (pos === 0 && this.line === 1 && s.charCodeAt(0) === 0xfeff) {
        pos = 1;
        continue;
      }
      const r = parseRow(s, pos, eof, this.delim);
      if (r === undefined) {
        // The row goes on past the text read so far. Over the limit already (more than max + 1
        // bytes: a last CR may be the line ending) and over several lines: rejected now. On one
        // line, the line buffer drops it as it is read.
        if (n - pos <= safeTail || nextNl(s, pos) === -1 || utf8Bytes(s, pos, n) <= max + 1) break;
        pos = this.tooLong(s, pos, out);
        continue;
      }
      if (r.end - pos > safe && utf8Bytes(s, pos, textEnd(s, pos, r.end)) > max) {
        pos = this.tooLong(s, pos, out);
        continue;
      }
      const line = this.line;
      this.line += r.quoted || r.error !== undefined ? countNl(s, pos, r.end) : s.charCodeAt(r.end - 1) === 10 ? 1 : 0;
      if (r.error !== undefined) {
        let text = rowText(s, pos, r.end);
        if (text.length > 1000) text = `${text.slice(0, 1000)}…`;
        out.push({ line, error: r.error, text });
      } else if (!isBlank(r.fields!)) {
        const k = r.fields!.length;
        if (this.width > 0 && k !== this.width) {
          out.push({ line, error: `row has ${k} fields, the header has ${this.width}`, text: rowText(s, pos, r.end) });
        } else {
          out.push({ line, fields: r.fields });
          if (this.header && this.width === 0) this.width = k;
        }
      }
      pos = r.end;
    }
    return pos;
  }

  /**
   * The row at `pos` is over the limit: the reject of its first line (`line of N bytes` when that
   * line alone is over the limit); returns where the next line starts.
   */
  private tooLong(s: string, pos: number, out: CsvRow[]): number {
    const max = this.limit.max;
    const nl = nextNl(s, pos);
    const end = nl === -1 ? s.length : nl + 1;
    const e = textEnd(s, pos, end);
    const bytes = utf8Bytes(s, pos, e);
    const line = this.line;
    const error =
      bytes > max
        ? tooLongMessage(bytes, max)
        : `row starting on line ${line} runs past the limit of ${max} bytes (--max-line-bytes) over several lines (a quote never closed?)`;
    out.push({ line, error, text: clipText(s, pos, e, KEEP_CHARS, bytes), reason: 'line_too_long' });
    if (nl !== -1) this.line++;
    return end;
  }
}

/**
 * Opens a CSV file (see the module description). Called by `openSource`.
 *
 * @example
 * ```ts
 * const src = openCsv('log.csv', { batchSize: 4096, startLine: 1, gzip: false, totalBytes: 0, maxLineBytes: 1 << 20 });
 * ```
 */
export function openCsv(path: string, ro: ReaderOptions): EventSource {
  const { batchSize, startLine } = ro;
  return textSource('csv', path, ro, async function* (ts, isClosed) {
    const sp = new CsvSplitter(true, ro.maxLineBytes);
    let header: (string | undefined)[] | undefined;
    /** The record of a row's fields, by the header (one shape a file: recordShape.ts). */
    let make: RecordMaker | undefined;
    let batch: SourceRecord[] = [];
    let lastLine = 0;
    const take = (rows: CsvRow[]): void => {
      for (const row of rows) {
        lastLine = row.line;
        if (header === undefined) {
          if (row.fields === undefined) {
            throw new XrateError('input', `CSV header of "${path}" cannot be read (line ${row.line}: ${row.error})`);
          }
          header = readHeader(row.fields, path);
          make = recordMaker(header);
          continue;
        }
        if (row.line < startLine) continue;
        if (row.fields === undefined) {
          const raw = row.text ?? '';
          batch.push(
            row.reason ? { line: row.line, raw, error: row.error, reason: row.reason } : { line: row.line, raw, error: row.error },
          );
          continue;
        }
        const f = row.fields;
        if (f.length !== header.length) {
          // Defensive: the splitter already reports these.
          batch.push({ line: row.line, raw: f.join(','), error: `row has ${f.length} fields, the header has ${header.length}` });
          continue;
        }
        batch.push(new JsonRecord(row.line, make!(f)));
      }
    };
    for await (const chunk of withLastLine(ts.chunks(), () => lastLine)) {
      take(sp.push(chunk));
      if (batch.length >= batchSize) {
        const all = batch;
        let k = 0;
        for (; all.length - k >= batchSize; k += batchSize) {
          yield all.slice(k, k + batchSize);
          if (isClosed()) return;
        }
        batch = all.slice(k);
      }
    }
    take(sp.end());
    if (header === undefined) throw new XrateError('input', `CSV file "${path}" has no header row`);
    for (let k = 0; k < batch.length && !isClosed(); k += batchSize) yield batch.slice(k, k + batchSize);
  });
}

/** Validates the header row; columns named `""` or `__proto__` are ignored (`undefined`). */
function readHeader(fields: string[], path: string): (string | undefined)[] {
  const names = fields.map((f) => f.trim());
  if (!names.includes('type')) {
    throw new XrateError('input', `CSV header must include "type" (file "${path}", header: ${names.join(',')})`);
  }
  const seen = new Set<string>();
  return names.map((n) => {
    if (n === '' || n === '__proto__') return undefined;
    if (seen.has(n)) throw new XrateError('input', `CSV header of "${path}" names column "${n}" twice`);
    seen.add(n);
    return n;
  });
}
