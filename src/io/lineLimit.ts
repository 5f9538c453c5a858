/**
 * The maximum line length of the readers (`--max-line-bytes`, docs/methodology.md section 1.4),
 * and the bound on the raw text a reject keeps.
 *
 * - A line (NDJSON), row (CSV) or table row (SQLite) of more than `max` bytes of UTF-8, its line
 *   ending not counted, becomes a `line_too_long` reject; `max` bytes exactly is accepted.
 * - The text readers enforce it while reading: once the unterminated end of the text read so far
 *   is over the limit, {@link LineBuffer} keeps only its first {@link KEEP_CHARS} characters and a
 *   byte count, and drops the rest of the line up to its newline. So memory stays bounded by the
 *   limit plus a read chunk, whatever the length of a line.
 * - A raw text longer than its bound keeps its first characters followed by
 *   `… [truncated: N bytes in all]`, N being the UTF-8 size of the whole text ({@link clipText}).
 *
 * Byte counts are exact: a UTF-16 code unit is 1 to 3 bytes of UTF-8, so a text of at most
 * `max / 3` code units is within the limit without counting, and only longer ones are counted.
 *
 * @module
 */
import type { SourceRecord } from './source.js';

/** Default maximum line length: 1 MiB of UTF-8. */
export const DEFAULT_MAX_LINE_BYTES = 1 << 20;

/** The largest limit accepted (256 MiB: a line is held as one string while it is read). */
export const MAX_LINE_BYTES_CAP = 1 << 28;

/** Characters kept as the raw text of a line over the limit. */
export const KEEP_CHARS = 256;

/** UTF-8 size of `s[from, to)`. */
export function utf8Bytes(s: string, from: number, to: number): number {
  return Buffer.byteLength(from === 0 && to === s.length ? s : s.slice(from, to), 'utf8');
}

/** True for the first half of a surrogate pair. */
function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** End of the first `n` characters of `s` from `from`, not splitting a surrogate pair. */
function cutEnd(s: string, from: number, n: number): number {
  const end = from + n;
  return end < s.length && isHigh(s.charCodeAt(end - 1)) ? end - 1 : end;
}

/**
 * A copy of `s[from, to)` that holds no reference to `s` (a slice of a large chunk would keep the
 * whole chunk alive for as long as the record does).
 */
function copyOf(s: string, from: number, to: number): string {
  return Buffer.from(s.slice(from, to), 'utf16le').toString('utf16le');
}

/**
 * `s[from, to)` when it has at most `keep` characters, else its first `keep` characters (one less
 * rather than half a surrogate pair) followed by `… [truncated: N bytes in all]`, where N is
 * `bytes` (the UTF-8 size of the whole text, counted when not given). Never a slice of `s`.
 *
 * @example
 * ```ts
 * clipText('abcdef', 0, 6, 3); // 'abc… [truncated: 6 bytes in all]'
 * ```
 */
export function clipText(s: string, from: number, to: number, keep: number, bytes?: number): string {
  if (to - from <= keep) return copyOf(s, from, to);
  return `${copyOf(s, from, cutEnd(s, from, keep))}… [truncated: ${bytes ?? utf8Bytes(s, from, to)} bytes in all]`;
}

/** The message of a line over the limit. */
export function tooLongMessage(bytes: number, max: number, what = 'line'): string {
  return `${what} of ${bytes} bytes exceeds the limit of ${max} bytes (--max-line-bytes)`;
}

/** The reject record of a line over the limit (`raw` already bounded). */
export function tooLongRecord(line: number, raw: string, message: string): SourceRecord {
  return { line, raw, error: message, reason: 'line_too_long' };
}

/** A maximum line length, with the thresholds below which no bytes need counting. */
export class LineLimit {
  /** The limit, bytes of UTF-8. */
  readonly max: number;
  /** A complete line of at most this many UTF-16 code units is within the limit. */
  readonly safe: number;
  /** An unterminated line of at most this many code units may still be within the limit. */
  readonly safeTail: number;

  constructor(max: number) {
    this.max = max;
    this.safe = Math.floor(max / 3);
    this.safeTail = Math.floor((max + 1) / 3);
  }

  /**
   * The reject of line `line`, the text `s[from, to)` (without its line ending), when it is over
   * the limit; else undefined. Meant for lines longer than {@link safe} code units.
   */
  check(line: number, s: string, from: number, to: number): SourceRecord | undefined {
    const bytes = utf8Bytes(s, from, to);
    if (bytes <= this.max) return undefined;
    return tooLongRecord(line, clipText(s, from, to, KEEP_CHARS, bytes), tooLongMessage(bytes, this.max));
  }
}

/**
 * A line over the limit being dropped: its first {@link KEEP_CHARS} characters and its size so
 * far. The line ending is not counted: LF, or CR LF (a CR at the end of the input too).
 */
export class LongLine {
  private prefix = '';
  /** The prefix holds all the characters it will keep. */
  private full = false;
  private chars = 0;
  private bytes = 0;
  /** The last character seen is a CR. */
  private cr = false;

  /** Starts with `s[from, end)` (`bytes` its UTF-8 size). */
  constructor(s: string, from: number, bytes: number) {
    this.add(s, from, s.length, bytes);
  }

  private add(s: string, from: number, to: number, bytes: number): void {
    if (to <= from) return;
    if (!this.full) {
      const room = KEEP_CHARS - this.prefix.length;
      if (to - from <= room) this.prefix += copyOf(s, from, to);
      else if (room === 0) this.full = true;
      else {
        this.prefix += copyOf(s, from, cutEnd(s, from, room));
        this.full = true;
      }
    }
    this.chars += to - from;
    this.bytes += bytes;
    this.cr = s.charCodeAt(to - 1) === 13;
  }

  /**
   * Takes the start of `chunk` up to the line's newline: returns the index just after the
   * newline, or -1 when all of `chunk` belongs to the line.
   */
  feed(chunk: string): number {
    const nl = chunk.indexOf('\n');
    const end = nl < 0 ? chunk.length : nl;
    this.add(chunk, 0, end, utf8Bytes(chunk, 0, end));
    if (nl < 0) return -1;
    this.finish();
    return nl + 1;
  }

  /** Ends the line (at its newline or the end of the input): a final CR is not counted. */
  finish(): void {
    if (!this.cr) return;
    this.cr = false;
    this.chars--;
    this.bytes--;
  }

  /** The reject record of the line, numbered `line`, for the limit `max`. */
  record(line: number, max: number): SourceRecord {
    const p = this.prefix.length > this.chars ? this.prefix.slice(0, this.chars) : this.prefix;
    const raw = this.chars <= KEEP_CHARS ? p : `${p}… [truncated: ${this.bytes} bytes in all]`;
    return tooLongRecord(line, raw, tooLongMessage(this.bytes, max));
  }
}

/**
 * The unterminated end of a text read in chunks, bounded by a {@link LineLimit}: the text readers
 * split `join(chunk)` into lines, then hand back the unterminated rest with `keep`. When that rest
 * is over the limit (more than `max + 1` bytes: a CR may still turn out to be the line ending),
 * the line is dropped up to its newline, and `takeLong()` hands it over once it has ended.
 *
 * Chunks must not split a surrogate pair (the text streams of the readers never do).
 *
 * @example
 * ```ts
 * const lb = new LineBuffer(new LineLimit(10));
 * let text = lb.join('ab\ncdefghijklmnop'); // 'ab\ncdefghijklmnop': split it, keep the rest
 * lb.keep(text, 3);                         // 'cdefghijklmnop' is over the limit: dropped
 * text = lb.join('qr\nst');                 // 'st'
 * lb.takeLong()?.record(2, 10);             // the reject of line 2 (16 bytes)
 * ```
 */
export class LineBuffer {
  private rest = '';
  private skip: LongLine | undefined;
  private done: LongLine | undefined;

  constructor(readonly limit: LineLimit) {}

  /**
   * The text to split next: the kept rest followed by `chunk` (from the start of a line). While a
   * line over the limit is being dropped, the part of `chunk` after its newline ('' when the line
   * goes on).
   */
  join(chunk: string): string {
    const skip = this.skip;
    if (skip === undefined) return this.rest.length > 0 ? this.rest + chunk : chunk;
    const k = skip.feed(chunk);
    if (k < 0) return '';
    this.skip = undefined;
    this.done = skip;
    return chunk.slice(k);
  }

  /** The line over the limit that ended in the last `join` (or at `end`), once. */
  takeLong(): LongLine | undefined {
    const d = this.done;
    this.done = undefined;
    return d;
  }

  /** Keeps `text[from..]`, the start of a line with no newline yet, or drops it when over the limit. */
  keep(text: string, from: number): void {
    const limit = this.limit;
    if (text.length - from > limit.safeTail) {
      const bytes = utf8Bytes(text, from, text.length);
      if (bytes > limit.max + 1) {
        this.skip = new LongLine(text, from, bytes);
        this.rest = '';
        return;
      }
    }
    this.rest = from === 0 ? text : text.slice(from);
  }

  /** Ends the input: the last line's text ('' when a line over the limit was being dropped: see `takeLong`). */
  end(): string {
    const skip = this.skip;
    if (skip !== undefined) {
      skip.finish();
      this.skip = undefined;
      this.done = skip;
      return '';
    }
    const r = this.rest;
    this.rest = '';
    return r;
  }
}
