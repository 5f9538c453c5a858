/**
 * The NDJSON part of the pre-scan (prescan.ts): what it keeps of a record ({@link ScannedRecord}),
 * read from a reader's record or from an NDJSON line, and {@link NdjsonScanner}, which reads lines
 * from the file's bytes.
 *
 * The scanner splits lines as the NDJSON reader does (on `\n`, a trailing `\r` dropped, blank
 * lines skipped but counted) and reads each one's `"time"` and `"symbol_id"` in place, in a
 * Latin-1 view of each chunk: one character per byte, so its ASCII characters are those of the
 * UTF-8 text at the same offsets, and no string is made per line. Only lines it cannot read so
 * (metadata, a time not in the plain form, a non-ASCII byte where it matters, a line long enough
 * to be near the length limit) are decoded and read as the string scan ({@link lineRecord}) reads
 * them; the records it gives are that scan's, line for line.
 *
 * @module
 */
import { parseEvent } from '../core/events.js';
import { parseTime } from '../core/time.js';
import { isReject, type XrateEvent } from '../core/types.js';
import { TimeCache } from '../io/fastNdjson.js';
import { utf8Bytes } from '../io/lineLimit.js';
import type { SourceRecord } from '../io/source.js';
import { STRING_WINDOW } from '../io/textStream.js';

/** What the pre-scan keeps of a record: its time (undefined: unreadable), the event when it is metadata, the symbol id it names. */
export interface ScannedRecord {
  time: number | undefined;
  metadata?: XrateEvent;
  symbolId?: string;
}

/** Where the scanned records go (a {@link PrescanStats}). */
export interface ScanSink {
  add(input: number, line: number, time: number | undefined, metadata?: XrateEvent, symbolId?: string): void;
}

/** The {@link ScannedRecord} of a reader's record. */
export function recordTime(rec: SourceRecord): ScannedRecord {
  const ev = rec.event;
  if (ev !== undefined) return { time: ev.time, ...('symbolId' in ev && { symbolId: ev.symbolId }) };
  const r = rec.record;
  if (r === undefined) return { time: undefined };
  const type = r.type;
  if (type === 'exchange' || type === 'symbol') {
    const e = parseEvent(r);
    if (isReject(e)) return { time: undefined };
    return { time: e.time, metadata: e, ...(e.type === 'symbol' && { symbolId: e.symbolId }) };
  }
  const t = r.time;
  const time = typeof t === 'string' ? parseTime(t) : undefined;
  const id = r.symbol_id;
  return { time: time ?? undefined, ...(typeof id === 'string' && id.length > 0 && { symbolId: id }) };
}

/** `"type":"exchange"` or `"type":"symbol"`, the only lines the scan parses whole. */
const METADATA_TYPE = /"type"\s*:\s*"(?:exchange|symbol)"/;

/**
 * Where the plain string value of key `key` (quoted, e.g. `"time"`) lies in an NDJSON line: [start,
 * end) of its text, or undefined when the key is absent or its value is not a string without
 * escapes (the caller parses the line whole then).
 */
function stringValue(line: string, key: string): [number, number] | undefined {
  const k = line.indexOf(key);
  if (k < 0) return undefined;
  let i = k + key.length;
  while (line.charCodeAt(i) === 32) i++;
  if (line.charCodeAt(i) !== 58) return undefined; // :
  i++;
  while (line.charCodeAt(i) === 32) i++;
  if (line.charCodeAt(i) !== 34) return undefined; // "
  const end = line.indexOf('"', i + 1);
  if (end < 0 || line.lastIndexOf('\\', end) > i) return undefined;
  return [i + 1, end];
}

/** The time of an NDJSON line without parsing it (undefined: not in the plain form, or not a valid time). */
function lineTime(line: string, times: TimeCache): number | undefined {
  const at = stringValue(line, '"time"');
  return at === undefined ? undefined : times.parseAt(line, at[0], at[1]);
}

/**
 * The record of one non-blank NDJSON line (a trailing `\r` dropped): its time read in place, or
 * by parsing it whole when needed. A line over `maxLineBytes` is a reject of the reader: no time.
 */
export function lineRecord(raw: string, times: TimeCache, maxLineBytes: number): ScannedRecord {
  if (raw.length > maxLineBytes / 4 && utf8Bytes(raw, 0, raw.length) > maxLineBytes) return { time: undefined };
  const time = METADATA_TYPE.test(raw) ? undefined : lineTime(raw, times);
  if (time !== undefined) {
    const id = stringValue(raw, '"symbol_id"');
    return id === undefined || id[1] === id[0] ? { time } : { time, symbolId: raw.slice(id[0], id[1]) };
  }
  let rec: unknown;
  try {
    rec = JSON.parse(raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw);
  } catch {
    return { time: undefined };
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) return { time: undefined };
  return recordTime({ line: 0, raw, record: rec as Record<string, unknown> });
}

const CR = 13;
const SPACE = 32;
const QUOTE = 34;
const DOT = 46;
const COLON = 58;
const ZERO = 48;
const Z = 90;
const BACKSLASH = 92;
const BRACE = 123;
/** The first byte (character of the Latin-1 view) that is not ASCII. */
const NON_ASCII = 0x80;

/** ASCII white space as JavaScript's `\s` and `trim` take it (the others are not ASCII). */
const isSpace = (c: number): boolean => c === SPACE || (c >= 9 && c <= CR);

/**
 * Where {@link METADATA_TYPE} may match in a chunk's Latin-1 view: every match, and every
 * `"type"` followed (past ASCII white space, and a colon) by a non-ASCII byte, which may decode
 * to white space that `\s` takes. A match may run over a newline (the line is then read whole,
 * for nothing); none is missed.
 */
const METADATA_CANDIDATE = /"type"[\t-\r ]*(?:[\x80-\xff]|:[\t-\r ]*(?:[\x80-\xff]|"(?:exchange|symbol)"))/g;

/**
 * The occurrences of one key in a text, searched for in increasing order: the last one found is
 * remembered, so the keys of a chunk are searched once however many lines lack them.
 */
class KeyFinder {
  private text = '';
  private from = Number.POSITIVE_INFINITY;
  private at = -1;

  constructor(private readonly key: string) {}

  /** A new text to search. */
  reset(text: string): void {
    this.text = text;
    this.from = Number.POSITIVE_INFINITY;
  }

  /** The first occurrence at or after `from` (-1: none). */
  next(from: number): number {
    if (from < this.from || (this.at >= 0 && this.at < from)) {
      this.at = this.text.indexOf(this.key, from);
      this.from = from;
    }
    return this.at;
  }
}

/** Outcome of reading a key's string value in place: its [start, end), or why not. */
const PLAIN = 0;
const ABSENT = -1;
const ESCAPED = -2;

/** The minute of the last time read in place: its first 17 bytes (`YYYY-MM-DDTHH:MM:`) and its start, µs. */
const MINUTE_PREFIX = 17;

/**
 * A chunk is read in windows of at most this many bytes, each with a Latin-1 view of its own below
 * V8's large-object size (textStream.ts `STRING_WINDOW`: a 1 MiB chunk's view cost about 1.7 ms,
 * sixteen 64 KiB ones about 0.12 ms).
 */
const WINDOW = STRING_WINDOW;

/**
 * The NDJSON pre-scan of one input over its bytes (see the module description): `push` each chunk
 * of the file in order, then `end`.
 *
 * @example
 * ```ts
 * const scan = new NdjsonScanner(0, stats, 1 << 20);
 * for await (const chunk of createReadStream('log.ndjson')) scan.push(chunk);
 * scan.end();
 * ```
 */
export class NdjsonScanner {
  private line = 0;
  private readonly times = new TimeCache();
  /** The bytes of the line not ended yet, in pieces. */
  private rest: Buffer[] = [];
  private readonly time = new KeyFinder('"time"');
  private readonly symbolId = new KeyFinder('"symbol_id"');
  /** The next place in the chunk where a line may be metadata ({@link METADATA_CANDIDATE}; Infinity: none). */
  private meta = Number.POSITIVE_INFINITY;
  private readonly metaRe = new RegExp(METADATA_CANDIDATE);
  private text = '';
  /** The symbol ids passed on, in Latin-1, copied out of the chunks (a slice of a chunk's text would keep it alive). */
  private readonly ids = new Set<string>();
  /** The [start, end) found by the last {@link value}. */
  private valueStart = 0;
  private valueEnd = 0;
  private readonly minute = new Uint8Array(MINUTE_PREFIX);
  private minuteUs = Number.NaN;

  /**
   * @param window - the most bytes read with one Latin-1 view ({@link WINDOW}; smaller in tests)
   */
  constructor(
    private readonly input: number,
    private readonly sink: ScanSink,
    private readonly maxLineBytes: number,
    private readonly window = WINDOW,
  ) {}

  /** The lines read so far. */
  get lineCount(): number {
    return this.line;
  }

  /** Takes the next bytes of the file (`chunk` may be reused once this returns). */
  push(chunk: Buffer): void {
    const w = this.window;
    if (chunk.length <= w) this.pushWindow(chunk);
    else for (let at = 0; at < chunk.length; at += w) this.pushWindow(chunk.subarray(at, at + w));
  }

  /** Takes the next bytes of the file, at most a window of them. */
  private pushWindow(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const text = chunk.toString('latin1');
    let from = 0;
    if (this.rest.length > 0) {
      const nl = text.indexOf('\n');
      // Copies: the caller may reuse a chunk once it is pushed.
      if (nl < 0) {
        this.rest.push(Buffer.from(chunk));
        return;
      }
      this.rest.push(Buffer.from(chunk.subarray(0, nl)));
      this.joined();
      from = nl + 1;
    }
    this.lines(chunk, text, from);
  }

  /** The end of the file: its last line, if it has no newline. */
  end(): void {
    if (this.rest.length > 0) this.joined();
  }

  /** The line that was split between chunks (its pieces in `rest`). */
  private joined(): void {
    const buf = this.rest.length === 1 ? this.rest[0] : Buffer.concat(this.rest);
    this.rest = [];
    this.lines(buf, buf.toString('latin1'), 0, true);
  }

  /** The lines of `buf` (`text` its Latin-1 view) from `from`; the unended rest kept, or with `last`, taken as a line. */
  private lines(buf: Buffer, text: string, from: number, last = false): void {
    this.text = text;
    this.time.reset(text);
    this.symbolId.reset(text);
    this.metaRe.lastIndex = from;
    this.nextMeta();
    let start = from;
    for (let nl = text.indexOf('\n', start); nl >= 0; nl = text.indexOf('\n', start)) {
      this.take(buf, start, nl);
      start = nl + 1;
    }
    if (start < buf.length) {
      if (last) this.take(buf, start, buf.length);
      else this.rest.push(Buffer.from(buf.subarray(start)));
    }
  }

  /** Moves {@link meta} to the next candidate. */
  private nextMeta(): void {
    const m = this.metaRe.exec(this.text);
    this.meta = m === null ? Number.POSITIVE_INFINITY : m.index;
    // The next search from the next character: a match over a newline must hide none after it.
    if (m !== null) this.metaRe.lastIndex = m.index + 1;
  }

  /** One line: `buf[start, nl)`, `nl` its newline (or the end). */
  private take(buf: Buffer, start: number, nl: number): void {
    const line = ++this.line;
    const end = nl > start && buf[nl - 1] === CR ? nl - 1 : nl;
    // Metadata, or maybe: read whole.
    while (this.meta < start) this.nextMeta();
    if (this.meta < end) {
      this.slow(buf, line, start, end);
      return;
    }
    const bytes = end - start;
    if (buf[start] !== BRACE || 3 * bytes > this.maxLineBytes) {
      let i = start;
      while (i < end && isSpace(buf[i])) i++;
      if (i === end) return; // blank
      // Not blank (an ASCII character that is not space), and over the limit whatever its decoding.
      if (buf[i] < NON_ASCII && bytes > this.maxLineBytes) {
        this.sink.add(this.input, line, undefined);
        return;
      }
      // Decoded, an invalid byte can take up to 3 bytes: a line that may be near the limit is read as a string.
      if (buf[i] >= NON_ASCII || 3 * bytes > this.maxLineBytes) {
        this.slow(buf, line, start, end);
        return;
      }
    }
    // A line of the usual form has its keys where the search would find them first: no search.
    const usual = isUsual(buf, start, end);
    const timeValue = usual ? this.valueAfter(buf, start + USUAL_PREFIX.length, end) : this.value(buf, this.time, 6, start, end);
    const time = timeValue === PLAIN ? this.timeAt(buf, this.valueStart, this.valueEnd) : undefined;
    if (time === undefined) {
      this.slow(buf, line, start, end);
      return;
    }
    const s =
      usual && startsWith(buf, this.valueEnd + 1, end, USUAL_SYMBOL)
        ? this.valueAfter(buf, this.valueEnd + 1 + USUAL_SYMBOL.length, end)
        : this.value(buf, this.symbolId, 11, start, end);
    if (s === ABSENT || s === ESCAPED || this.valueEnd === this.valueStart) {
      this.sink.add(this.input, line, time);
      return;
    }
    // The sink keeps the first record of each id: only a new one is passed on, decoded from the
    // bytes (the ids seen are kept in their Latin-1 form, copied out of the chunk).
    if (this.ids.has(this.text.slice(this.valueStart, this.valueEnd))) {
      this.sink.add(this.input, line, time);
      return;
    }
    this.ids.add(buf.toString('latin1', this.valueStart, this.valueEnd));
    this.sink.add(this.input, line, time, undefined, buf.toString('utf8', this.valueStart, this.valueEnd));
  }

  /** A line the in-place reading cannot take: decoded and read as a string ({@link lineRecord}). */
  private slow(buf: Buffer, line: number, start: number, end: number): void {
    const raw = buf.toString('utf8', start, end);
    if (raw.trim().length === 0) return;
    const r = lineRecord(raw, this.times, this.maxLineBytes);
    this.sink.add(this.input, line, r.time, r.metadata, r.symbolId);
  }

  /**
   * The plain string value of the key `keys` finds (its length `keyLength`), in the line as
   * `stringValue` reads it: {@link PLAIN} with its [start, end) in `valueStart`/`valueEnd`, or
   * {@link ABSENT} or {@link ESCAPED} (with a backslash) when it has none. (A time with a
   * non-ASCII byte is no time: parseTime reads every character.)
   */
  private value(buf: Buffer, keys: KeyFinder, keyLength: number, start: number, end: number): number {
    const k = keys.next(start);
    if (k < 0 || k >= end) return ABSENT;
    let i = k + keyLength;
    while (i < end && buf[i] === SPACE) i++;
    if (i >= end || buf[i] !== COLON) return ABSENT;
    i++;
    while (i < end && buf[i] === SPACE) i++;
    if (i >= end || buf[i] !== QUOTE) return ABSENT;
    return this.valueAfter(buf, i + 1, end);
  }

  /** {@link value} from the first byte of the string value, `i` (its opening quote just before). */
  private valueAfter(buf: Buffer, i: number, end: number): number {
    for (let j = i; j < end; j++) {
      const c = buf[j];
      if (c === QUOTE) {
        this.valueStart = i;
        this.valueEnd = j;
        return PLAIN;
      }
      if (c === BACKSLASH) return ESCAPED;
    }
    return ABSENT;
  }

  /**
   * The time `buf[a, b)` as `TimeCache.parseAt` reads it: in place when it has the form
   * `YYYY-MM-DDTHH:MM:SS` then `Z`, or a fraction of 1 to 7 digits and `Z` ({@link secondsOf}),
   * in the minute of the last one read so; else parsed, and its minute kept when it has that form.
   */
  private timeAt(buf: Buffer, a: number, b: number): number | undefined {
    const m = this.minute;
    let same = true;
    for (let k = 0; k < MINUTE_PREFIX; k++) {
      if (buf[a + k] !== m[k]) {
        same = false;
        break;
      }
    }
    const us = secondsOf(buf, a, b);
    if (same && us >= 0) return this.minuteUs + us;
    const t = this.times.parse(buf.toString('latin1', a, b));
    // parseTime's value is the minute's µs plus these (exact integers, the sum a safe one).
    if (t !== undefined && us >= 0 && buf[a + 10] === 84 /* T */ && buf[a + 16] === COLON) {
      for (let k = 0; k < MINUTE_PREFIX; k++) m[k] = buf[a + k];
      this.minuteUs = t - us;
    }
    return t;
  }
}

/**
 * How a quote or trade of a log usually starts, up to its time's value: `"time"` is then first
 * found where it is (`"type"`'s value is no key), and after the time's value (which has no quote)
 * {@link USUAL_SYMBOL} is where `"symbol_id"` is first found.
 */
const USUAL_PREFIX = Buffer.from('{"type":"quote","time":"');
const USUAL_TRADE = Buffer.from('{"type":"trade","time":"');
const USUAL_SYMBOL = Buffer.from(',"symbol_id":"');

/** Whether `buf[start, end)` starts with {@link USUAL_PREFIX} or {@link USUAL_TRADE} (of one length). */
function isUsual(buf: Buffer, start: number, end: number): boolean {
  return startsWith(buf, start, end, USUAL_PREFIX) || startsWith(buf, start, end, USUAL_TRADE);
}

/** Whether `buf[at, end)` starts with `prefix`. */
function startsWith(buf: Buffer, at: number, end: number, prefix: Buffer): boolean {
  if (end - at < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (buf[at + k] !== prefix[k]) return false;
  return true;
}

/**
 * The µs within its minute of a time `buf[a, b)` that ends in `SS` then `Z`, or `SS.` then 1 to 7
 * digits and `Z` (the 7th truncated, as parseTime does), SS from 00 to 59; -1 when it has not
 * that form. Its first 17 bytes are not read.
 */
function secondsOf(buf: Buffer, a: number, b: number): number {
  const len = b - a;
  if (len < 20 || len > 28 || buf[b - 1] !== Z) return -1;
  const s1 = buf[a + 17] - ZERO;
  const s2 = buf[a + 18] - ZERO;
  if (!(s1 >= 0 && s1 <= 5 && s2 >= 0 && s2 <= 9)) return -1;
  const seconds = (s1 * 10 + s2) * 1_000_000;
  if (len === 20) return seconds;
  if (buf[a + 19] !== DOT || len === 21) return -1;
  const digits = len - 21;
  let frac = 0;
  for (let k = 0; k < digits; k++) {
    const d = buf[a + 20 + k] - ZERO;
    if (!(d >= 0 && d <= 9)) return -1;
    frac = frac * 10 + d;
  }
  return seconds + (digits === 7 ? Math.floor(frac / 10) : frac * 10 ** (6 - digits));
}
