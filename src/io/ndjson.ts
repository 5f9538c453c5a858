/**
 * NDJSON reader: one JSON object per line, optionally gzipped.
 *
 * Lines are split on `\n` (a trailing `\r` is dropped, so CRLF files work); blank or
 * whitespace-only lines are skipped without a record; the last line needs no newline. Each other
 * line is `JSON.parse`d: a line that is not valid JSON, or whose value is not an object, becomes a
 * record with `error` set. A UTF-8 byte order mark at the start of the file is ignored.
 *
 * A line of more than `maxLineBytes` bytes of UTF-8 (its line ending not counted) becomes a
 * `line_too_long` record; it is dropped while it is read, never held whole (lineLimit.ts).
 *
 * @module
 */

import { fastParseLine, TimeCache } from './fastNdjson.js';
import { LineBuffer, LineLimit } from './lineLimit.js';
import type { EventSource, ReaderOptions, SourceRecord } from './source.js';
import { textSource, withLastLine } from './textStream.js';

/** Reads one line's text into a {@link SourceRecord}, or `undefined` for a blank line. */
export function readJsonLine(raw: string, line: number): SourceRecord | undefined {
  const c = raw.charCodeAt(0);
  if (c !== 123 /* { */) {
    // Rare path: blank, leading whitespace, BOM, or not an object.
    if (raw.trim().length === 0) return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    return { line, raw, error: `invalid JSON: ${(e as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const what = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    return { line, raw, error: `not a JSON object (got ${what})` };
  }
  return { line, raw, record: value as Record<string, unknown> };
}

/**
 * The record of the line `text[start, end)` (its line ending left out), numbered `line`: a
 * `line_too_long` reject past `limit`; for a quote or trade of the common shape, the fast path's
 * event; else {@link readJsonLine}'s record; undefined for a blank line. A byte order mark
 * opening line 1 is ignored. `times` is the reader's time cache, shared across its lines.
 */
export function lineRecord(
  text: string,
  start: number,
  end: number,
  line: number,
  limit: LineLimit,
  times: TimeCache,
): SourceRecord | undefined {
  if (end <= start) return undefined;
  if (end - start > limit.safe) {
    const tooLong = limit.check(line, text, start, end);
    if (tooLong !== undefined) return tooLong;
  }
  let raw = start === 0 && end === text.length ? text : text.slice(start, end);
  if (line === 1 && raw.charCodeAt(0) === 0xfeff) raw = raw.slice(1);
  const event = fastParseLine(raw, times);
  return event !== undefined ? { line, raw, event } : readJsonLine(raw, line);
}

/**
 * Opens an NDJSON file (see the module description). Called by `openSource`.
 *
 * @example
 * ```ts
 * const src = openNdjson('log.ndjson', { batchSize: 4096, startLine: 1, gzip: false, totalBytes: 0, maxLineBytes: 1 << 20 });
 * ```
 */
export function openNdjson(path: string, ro: ReaderOptions): EventSource {
  // The lines before `startLine` are counted off in the bytes, not decoded.
  const skipped = Math.max(0, ro.startLine - 1);
  return textSource('ndjson', path, ro, (ts, isClosed) => readNdjson(ts.chunks(skipped), ro, isClosed, skipped));
}

/**
 * The records of an NDJSON text given in chunks (which must not split a surrogate pair), in
 * batches: what {@link openNdjson} reads. A line of more than `ro.maxLineBytes` bytes is a
 * `line_too_long` reject, dropped as it is read (lineLimit.ts). With `skipped`, the text starts
 * after that many lines (numbered on from there).
 */
export async function* readNdjson(
  chunks: AsyncIterable<string>,
  ro: ReaderOptions,
  isClosed: () => boolean,
  skipped = 0,
): AsyncGenerator<SourceRecord[]> {
  const { batchSize, startLine } = ro;
  const limit = new LineLimit(ro.maxLineBytes);
  const lines = new LineBuffer(limit);
  let line = skipped;
  let batch: SourceRecord[] = [];
  const times = new TimeCache();
  for await (const chunk of withLastLine(chunks, () => line)) {
    const text = lines.join(chunk);
    const long = lines.takeLong();
    if (long !== undefined) {
      line++;
      if (line >= startLine) {
        batch.push(long.record(line, limit.max));
        if (batch.length >= batchSize) {
          yield batch;
          batch = [];
          if (isClosed()) return;
        }
      }
    }
    let start = 0;
    let nl: number;
    // biome-ignore lint/suspicious/noAssignInExpressions: the usual scan for the next newline
    while ((nl = text.indexOf('\n', start)) !== -1) {
      line++;
      if (line >= startLine) {
        const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
        const r = lineRecord(text, start, end, line, limit, times);
        if (r !== undefined) {
          batch.push(r);
          if (batch.length >= batchSize) {
            yield batch;
            batch = [];
            if (isClosed()) return;
          }
        }
      }
      start = nl + 1;
    }
    lines.keep(text, start);
  }
  const rest = lines.end();
  const long = lines.takeLong();
  if (long !== undefined) {
    line++;
    if (line >= startLine) batch.push(long.record(line, limit.max));
  } else if (rest.length > 0) {
    line++;
    const end = rest.charCodeAt(rest.length - 1) === 13 ? rest.length - 1 : rest.length;
    if (line >= startLine) {
      const r = lineRecord(rest, 0, end, line, limit, times);
      if (r !== undefined) batch.push(r);
    }
  }
  if (batch.length > 0) yield batch;
}
