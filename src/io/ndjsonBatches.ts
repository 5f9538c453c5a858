/**
 * The NDJSON reader on bytes: UTF-8 chunks (a file read, gunzipped) straight to columnar batches
 * (src/core/batch.ts), the lines split on the bytes, never decoded whole.
 *
 * Its batches, turned back into records (src/io/batch.ts `recordAt`), are the records the
 * record-at-a-time reader (ndjson.ts `readNdjson`) gives for the same text, in the same batches:
 * - quote and trade lines of the common shape go straight to columns (ndjsonBytes.ts), their raw
 *   text as offsets into the batch's `raw` bytes;
 * - every other line (other types, escapes, odd shapes, invalid JSON, a byte order mark) is
 *   decoded and read by `lineRecord`, today's path, and kept whole as an other row; a blank line
 *   gives no row;
 * - a line of more than `maxLineBytes` bytes (its line ending not counted) is a `line_too_long`
 *   reject, dropped while it is read (only its first bytes are kept), as lineLimit.ts does;
 * - lines are split on LF; a CR before it (or at the end of the input) is not part of the line;
 *   lines before `startLine` are counted off, not read.
 *
 * Invalid UTF-8 is read as the record-at-a-time reader reads it: a line holding a byte over 0x7f
 * is decoded (an invalid sequence becomes U+FFFD) and its length counted on the decoded text.
 *
 * @module
 */
import { BatchBuilder, type BatchColumns, type BufferPool } from '../core/batch.js';
import { TimeCache } from './fastNdjson.js';
import { clipText, KEEP_CHARS, LineLimit, tooLongMessage, tooLongRecord } from './lineLimit.js';
import { lineRecord } from './ndjson.js';
import { ByteLineParser } from './ndjsonBytes.js';
import type { SourceRecord } from './source.js';
import { withLastLine } from './textStream.js';
import { StringDecoder } from 'node:string_decoder';

/** Bytes kept of a line over the limit: enough for its first {@link KEEP_CHARS} characters and one more. */
const KEEP_BYTES = 4 * KEEP_CHARS;

/** The text of UTF-8 bytes, decoded as the record-at-a-time reader decodes them (StringDecoder). */
function decode(b: Uint8Array): string {
  return new StringDecoder('utf8').end(asBuffer(b));
}

/** Options of {@link NdjsonBatcher}. */
export interface NdjsonBatchOptions {
  /** Rows (records) per batch. */
  batchSize: number;
  /** The first line read; the lines before are counted off. */
  startLine: number;
  /** Maximum line length, bytes of UTF-8 without the line ending. */
  maxLineBytes: number;
  /** Where the batches' buffers come from (and go back to, once done with); by default each is new. */
  pool?: BufferPool;
}

/**
 * A line over the limit being dropped: its first bytes, its size (UTF-8 bytes of its text as
 * decoded, as the record-at-a-time reader counts: an invalid byte is a U+FFFD), whether its last
 * byte is a CR.
 */
interface LongBytes {
  head: Uint8Array;
  kept: number;
  /** Bytes read of the line. */
  read: number;
  bytes: number;
  cr: boolean;
  decoder: StringDecoder;
}

/** UTF-8 bytes of `b` as decoded by `d` (streaming). */
function decodedBytes(d: StringDecoder, b?: Buffer): number {
  const s = b === undefined ? d.end() : d.write(b);
  return Buffer.byteLength(s, 'utf8');
}

function asBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

function concat(a: Uint8Array, b: Uint8Array, bEnd = b.length): Buffer {
  const out = Buffer.allocUnsafe(a.length + bEnd);
  out.set(a, 0);
  out.set(b.subarray(0, bEnd), a.length);
  return out;
}

/**
 * NDJSON bytes in, batches out: {@link push} each chunk (chunks may split lines, characters and
 * CR LF anywhere), then {@link end}; each returns the batches it completed.
 *
 * @example
 * ```ts
 * const nb = new NdjsonBatcher({ batchSize: 4096, startLine: 1, maxLineBytes: 1 << 20 });
 * const batches = [...nb.push(bytes), ...nb.end()];
 * ```
 */
export class NdjsonBatcher {
  /** Lines counted so far (the last line read whole). */
  line = 0;
  private readonly bb = new BatchBuilder();
  private gen = 0;
  private readonly parser = new ByteLineParser();
  private readonly times = new TimeCache();
  private readonly limit: LineLimit;
  private readonly batchSize: number;
  private readonly startLine: number;
  private raw: Uint8Array = new Uint8Array(1 << 16);
  private rawLen = 0;
  private out: BatchColumns[] = [];
  private rest: Buffer | undefined;
  private long: LongBytes | undefined;

  private readonly pool: BufferPool | undefined;

  constructor(o: NdjsonBatchOptions) {
    this.pool = o.pool;
    this.limit = new LineLimit(o.maxLineBytes);
    this.batchSize = Math.max(1, o.batchSize);
    this.startLine = o.startLine;
  }

  /** Reads `chunk`; returns the batches completed. */
  push(chunk: Uint8Array): BatchColumns[] {
    const c = asBuffer(chunk);
    let pos = 0;
    if (this.long !== undefined) {
      const nl = c.indexOf(10);
      this.addLong(c, nl < 0 ? c.length : nl);
      if (nl < 0) return this.take();
      this.endLong();
      pos = nl + 1;
    } else if (this.rest !== undefined) {
      const nl = c.indexOf(10);
      if (nl < 0) {
        this.keep(concat(this.rest, c), true);
        return this.take();
      }
      const first = concat(this.rest, c, nl + 1);
      this.rest = undefined;
      this.block(first, 0, first.length);
      pos = nl + 1;
    }
    const last = c.lastIndexOf(10);
    if (last >= pos) {
      this.block(c, pos, last + 1);
      pos = last + 1;
    }
    if (pos < c.length) this.keep(c.subarray(pos));
    return this.take();
  }

  /** Ends the input (its last line needs no newline); returns the last batches. */
  end(): BatchColumns[] {
    if (this.long !== undefined) this.endLong();
    else if (this.rest !== undefined) {
      const last = concat(this.rest, Buffer.from([10]));
      this.rest = undefined;
      this.block(last, 0, last.length);
    }
    if (this.bb.length > 0) this.finish(undefined, 0, 0);
    return this.take();
  }

  private take(): BatchColumns[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  /** Keeps the start of a line with no newline yet (a copy), or starts dropping it when over the limit. */
  private keep(part: Buffer, fresh = false): void {
    if (part.length > this.limit.max + 1) {
      const kept = Math.min(part.length, KEEP_BYTES);
      const head = new Uint8Array(KEEP_BYTES);
      head.set(part.subarray(0, kept));
      const decoder = new StringDecoder('utf8');
      this.long = { head, kept, read: part.length, bytes: decodedBytes(decoder, part), cr: part[part.length - 1] === 13, decoder };
      this.rest = undefined;
    } else this.rest = fresh ? part : Buffer.from(part);
  }

  private addLong(c: Buffer, end: number): void {
    const l = this.long as LongBytes;
    if (end === 0) return;
    if (l.kept < KEEP_BYTES) {
      const n = Math.min(end, KEEP_BYTES - l.kept);
      l.head.set(c.subarray(0, n), l.kept);
      l.kept += n;
    }
    l.read += end;
    l.bytes += decodedBytes(l.decoder, c.subarray(0, end));
    l.cr = c[end - 1] === 13;
  }

  /** The line over the limit has ended (at its newline or the end of the input). */
  private endLong(): void {
    const l = this.long as LongBytes;
    this.long = undefined;
    l.bytes += decodedBytes(l.decoder);
    if (l.cr) {
      l.bytes--;
      l.read--;
    }
    this.line++;
    if (this.line >= this.startLine) {
      this.tooLong(l.head.subarray(0, Math.min(l.kept, l.read)), l.bytes);
      if (this.bb.length >= this.batchSize) this.finish(undefined, 0, 0);
    }
  }

  /** The reject of a line over the limit: `head` its first bytes (or all), `bytes` its size. */
  private tooLong(head: Uint8Array, bytes: number): void {
    const text = decode(head);
    const raw = clipText(text, 0, text.length, KEEP_CHARS, bytes);
    this.other(tooLongRecord(this.line, raw, tooLongMessage(bytes, this.limit.max)));
  }

  private other(r: SourceRecord): void {
    const { line, ...rest } = r;
    this.bb.other(line, rest);
  }

  /** The lines of b[from, to), each ended by a newline. */
  private block(b: Buffer, from: number, to: number): void {
    let seg = from;
    let pos = from;
    const max = this.limit.max;
    while (pos < to) {
      const nl = b.indexOf(10, pos);
      const line = ++this.line;
      if (line >= this.startLine) {
        const e = nl > pos && b[nl - 1] === 13 ? nl - 1 : nl;
        if (e > pos) {
          if (e - pos > max) this.tooLong(b.subarray(pos, Math.min(e, pos + KEEP_BYTES)), Buffer.byteLength(decode(b.subarray(pos, e))));
          else if (!this.parser.line(b, pos, e, line, this.bb, this.gen, this.rawLen - seg)) {
            const text = decode(b.subarray(pos, e));
            const r = lineRecord(text, 0, text.length, line, this.limit, this.times);
            if (r !== undefined) this.other(r);
          }
          if (this.bb.length >= this.batchSize) {
            this.finish(b, seg, nl + 1);
            seg = nl + 1;
          }
        }
      }
      pos = nl + 1;
    }
    if (this.bb.length > 0) this.append(b, seg, to);
  }

  private append(b: Uint8Array, from: number, to: number): void {
    const n = to - from;
    if (n <= 0) return;
    if (this.rawLen + n > this.raw.length) {
      const grown = new Uint8Array(Math.max(this.raw.length * 2, this.rawLen + n));
      grown.set(this.raw.subarray(0, this.rawLen));
      this.raw = grown;
    }
    this.raw.set(b.subarray(from, to), this.rawLen);
    this.rawLen += n;
  }

  /** Ends the batch, its raw bytes ending with b[from, to). */
  private finish(b: Uint8Array | undefined, from: number, to: number): void {
    if (b !== undefined) this.append(b, from, to);
    const used = this.rawLen;
    // The raw bytes are copied into the batch's one buffer (which it owns, and may transfer):
    // this buffer takes the next batch's.
    this.out.push(this.bb.finish(this.raw.subarray(0, used), { pool: this.pool, copyRaw: true }));
    this.gen++;
    this.rawLen = 0;
  }
}

/**
 * The batches of NDJSON bytes given in chunks (see the module description); a read error names
 * the last line read whole, as the record-at-a-time reader's does. With `skipped`, the bytes
 * start after that many lines (numbered on from there). `isClosed` stops it between batches.
 */
export async function* ndjsonBatches(
  chunks: AsyncIterable<Uint8Array>,
  o: NdjsonBatchOptions,
  isClosed: () => boolean = () => false,
): AsyncGenerator<BatchColumns> {
  const nb = new NdjsonBatcher(o);
  const skipped = Math.max(0, o.startLine - 1);
  for await (const chunk of withLastLine(chunks, () => Math.max(nb.line, skipped))) {
    for (const b of nb.push(chunk)) {
      yield b;
      if (isClosed()) return;
    }
  }
  for (const b of nb.end()) {
    yield b;
    if (isClosed()) return;
  }
}
