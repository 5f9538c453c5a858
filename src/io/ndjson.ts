/**
 * NDJSON reader: one JSON object per line, optionally gzipped.
 *
 * Lines are split on `\n` (a trailing `\r` is dropped, so CRLF files work); blank or
 * whitespace-only lines are skipped without a record; the last line needs no newline. Each other
 * line is `JSON.parse`d: a line that is not valid JSON, or whose value is not an object, becomes a
 * record with `error` set. A UTF-8 byte order mark at the start of the file is ignored.
 *
 * @module
 */

import { fastParseLine, TimeCache } from './fastNdjson.js';
import type { EventSource, ReaderOptions, SourceRecord } from './source.js';
import { textEventSource } from './textStream.js';

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
 * Opens an NDJSON file (see the module description). Called by `openSource`.
 *
 * @example
 * ```ts
 * const src = openNdjson('log.ndjson', { batchSize: 4096, startLine: 1, gzip: false, totalBytes: 0 });
 * ```
 */
export function openNdjson(path: string, ro: ReaderOptions): EventSource {
  const { batchSize, startLine } = ro;
  return textEventSource('ndjson', path, ro, async function* (ts, isClosed) {
    let rest = '';
    let line = 0;
    let batch: SourceRecord[] = [];
    const times = new TimeCache();
    // Quotes and trades of the common shape become events directly; the rest is JSON.parse'd.
    const read = (raw: string, n: number): SourceRecord | undefined => {
      const event = fastParseLine(raw, times);
      return event !== undefined ? { line: n, raw, event } : readJsonLine(raw, n);
    };
    for await (const chunk of ts.chunks()) {
      const text = rest.length > 0 ? rest + chunk : chunk;
      let start = 0;
      let nl: number;
      // biome-ignore lint/suspicious/noAssignInExpressions: the usual scan for the next newline
      while ((nl = text.indexOf('\n', start)) !== -1) {
        line++;
        if (line >= startLine) {
          let end = nl;
          if (end > start && text.charCodeAt(end - 1) === 13) end--;
          if (end > start) {
            let raw = text.slice(start, end);
            if (line === 1 && raw.charCodeAt(0) === 0xfeff) raw = raw.slice(1);
            const r = read(raw, line);
            if (r !== undefined) {
              batch.push(r);
              if (batch.length >= batchSize) {
                yield batch;
                batch = [];
                if (isClosed()) return;
              }
            }
          }
        }
        start = nl + 1;
      }
      rest = start === 0 ? text : text.slice(start);
    }
    if (rest.length > 0) {
      line++;
      let raw = rest.charCodeAt(rest.length - 1) === 13 ? rest.slice(0, -1) : rest;
      if (line === 1 && raw.charCodeAt(0) === 0xfeff) raw = raw.slice(1);
      if (line >= startLine && raw.length > 0) {
        const r = read(raw, line);
        if (r !== undefined) batch.push(r);
      }
    }
    if (batch.length > 0) yield batch;
  });
}
