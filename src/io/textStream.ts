/**
 * Internal helper of the NDJSON and CSV readers: a file opened as a stream of UTF-8 text chunks,
 * gunzipped on the fly when asked, with a count of the file bytes consumed.
 *
 * @module
 */

import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import type { EventSource, ReaderOptions, SourceFormat, SourceRecord } from './source.js';
import { isXrateError, messageOf, XrateError } from '../core/errors.js';

/** Read-ahead of the file stream. Large chunks keep the per-chunk overhead low. */
const FILE_CHUNK = 1 << 20;
/**
 * The most bytes (or characters) made into one string where text is read or written in bulk (a
 * text stream's decoding, the NDJSON pre-scan's Latin-1 views, a rate file's joined lines): V8
 * makes a string of 128 KiB or more in its large-object space, a mapping of fresh pages each time
 * (a 1 MiB chunk decoded whole cost about 3.3 ms, in 64 KiB strings about 0.1-0.4 ms).
 */
export const STRING_WINDOW = 1 << 16;
/** Output chunk size of gunzip. */
const GUNZIP_CHUNK = 1 << 18;
/** Text chunk of a lean stream (one of many read at once by a merge): plain file reads and gunzip output. */
const LEAN_CHUNK = 1 << 13;
/** File read of a lean gzip stream: compressed bytes, about five times as much text. */
const LEAN_GZIP_READ = 1 << 15;

/** An open text stream: iterate `chunks()` once; `close()` releases the file. */
export interface TextStream {
  /**
   * UTF-8 decoded text, in chunks; a chunk never splits a multi-byte character. With `skipLines`,
   * the text after that many newlines: the bytes before are counted off, never decoded.
   */
  chunks(skipLines?: number): AsyncGenerator<string>;
  /**
   * The bytes (gunzipped), in chunks, undecoded: iterate either this or {@link chunks}, once. A
   * chunk is valid until the next one is asked for (a plain file's are read into two buffers in
   * turn).
   */
  bytes(): AsyncGenerator<Buffer>;
  /** File bytes consumed so far (compressed bytes for gzip). */
  bytesRead(): number;
  /** Destroys the streams. */
  close(): void;
}

/** What a reading that failed had read, for its error: its last whole line (a line number from 1), or none. */
export function lastLineRead(line: number): string {
  return line > 0 ? `the last line read whole was line ${line}` : 'no whole line was read';
}

/**
 * `chunks` (text, or bytes), with a read error that names the last line read whole (`lastLine()`, asked when the
 * error comes: the records before it were handed over).
 */
export async function* withLastLine<T = string>(chunks: AsyncIterable<T>, lastLine: () => number): AsyncGenerator<T> {
  try {
    yield* chunks;
  } catch (e) {
    const said = `${messageOf(e)}; ${lastLineRead(lastLine())}`;
    throw isXrateError(e) ? new XrateError(e.code, said, { cause: e }) : new Error(said);
  }
}

/** A file stream: its bytes and a count of the bytes read. */
interface FileStream {
  readonly stream: Readable;
  readonly bytesRead: () => number;
}

/** A plain file's chunks, read into buffers of its own (see {@link plainFile}). */
interface FileChunks {
  readonly chunks: AsyncIterable<Buffer>;
  readonly bytesRead: () => number;
  readonly close: () => void;
}

/**
 * A lean file stream: `chunk` bytes at a time, the file opened for each read and closed after it,
 * so that a merge of thousands of files holds no file descriptor between reads and about one chunk
 * of each file in memory.
 */
function leanFile(path: string, chunk: number): FileStream {
  let read = 0;
  // Synchronous reads: a few µs for a local file, where an asynchronous open, read and close are
  // three trips through the thread pool, which left a merge of many files waiting on them.
  function* chunks(): Generator<Buffer> {
    for (;;) {
      const fd = openSync(path, 'r');
      let n: number;
      const buf = Buffer.allocUnsafe(chunk);
      try {
        n = readSync(fd, buf, 0, chunk, read);
      } finally {
        closeSync(fd);
      }
      if (n === 0) return;
      read += n;
      yield n === chunk ? buf : buf.subarray(0, n);
    }
  }
  return { stream: Readable.from(chunks(), { objectMode: false, highWaterMark: 1 }), bytesRead: () => read };
}

/**
 * A plain file read `chunk` bytes at a time into two buffers in turn: the next chunk is read while
 * the reader takes the last. A stream's read-ahead made a new buffer of each chunk, garbage once
 * read: tens of megabytes of them waited for a collection in a reader's thread.
 */
function plainFile(path: string, chunk: number): FileChunks {
  let read = 0;
  let handle: FileHandle | undefined;
  let reading = false;
  let closed = false;
  const release = (): void => {
    if (handle === undefined || reading) return;
    void handle.close().catch(() => {});
    handle = undefined;
  };
  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      if (closed) return;
      handle = await open(path, 'r');
      const fh = handle;
      const bufs = [Buffer.allocUnsafe(chunk), Buffer.allocUnsafe(chunk)];
      const next = (k: number) => {
        reading = true;
        return fh.read(bufs[k], 0, chunk, read).finally(() => {
          reading = false;
          if (closed) release();
        });
      };
      let pending = next(0);
      for (let k = 0; ; k ^= 1) {
        const { bytesRead: n } = await pending;
        if (n === 0 || closed) return;
        read += n;
        pending = next(k ^ 1);
        // A failed read-ahead is thrown when awaited, not before.
        pending.catch(() => {});
        yield n === chunk ? bufs[k] : bufs[k].subarray(0, n);
      }
    } finally {
      closed = true;
      release();
    }
  }
  const close = (): void => {
    closed = true;
    release();
  };
  return { chunks: chunks(), bytesRead: () => read, close };
}

/**
 * Opens `path` as a text stream (gunzipped when `gzip`). `lean`: small reads, no file descriptor
 * held between them (see {@link leanFile}), for the inputs of a merge. `chunkBytes`: the bytes of
 * a file read and of a gunzip output chunk (default {@link FILE_CHUNK} and {@link GUNZIP_CHUNK}).
 */
export function openTextStream(path: string, gzip: boolean, lean = false, chunkBytes?: number): TextStream {
  let source: AsyncIterable<Buffer>;
  let bytesRead: () => number;
  let release: () => void;
  let gunzip: ReturnType<typeof createGunzip> | undefined;
  if (!lean && !gzip) {
    const f = plainFile(path, chunkBytes ?? FILE_CHUNK);
    ({ chunks: source, bytesRead, close: release } = f);
  } else {
    const fs: FileStream = lean
      ? leanFile(path, gzip ? LEAN_GZIP_READ : LEAN_CHUNK)
      : (() => {
          const f = createReadStream(path, { highWaterMark: chunkBytes ?? FILE_CHUNK });
          return { stream: f, bytesRead: () => f.bytesRead };
        })();
    const file = fs.stream;
    let stream: Readable = file;
    if (gzip) {
      const g = createGunzip({
        // zlib's smallest output chunk is 64 bytes.
        chunkSize: lean ? LEAN_CHUNK : Math.max(64, chunkBytes ?? GUNZIP_CHUNK),
        ...(lean ? { highWaterMark: LEAN_CHUNK } : {}),
      });
      file.on('error', (e) => g.destroy(e));
      stream = file.pipe(g);
      gunzip = g;
    }
    source = stream;
    bytesRead = fs.bytesRead;
    release = () => {
      if (stream !== file) stream.destroy();
      file.destroy();
    };
  }
  let closed = false;
  const close = (): void => {
    closed = true;
    release();
  };
  // Where it broke: for gzip, the compressed bytes the decompressor had taken in and the text
  // it had given out (the lines before that were read); else the bytes of the file read.
  const broken = (e: unknown, text: number): Error => {
    const where = gunzip
      ? `gzip data broken near byte ${gunzip.bytesWritten} of the file, after ${text} bytes of text`
      : `after ${bytesRead()} bytes`;
    return new XrateError('input', `cannot read "${path}" (${where}): ${(e as Error).message}`);
  };
  return {
    async *chunks(skipLines = 0) {
      const decoder = new StringDecoder('utf8');
      let text = 0;
      let skip = skipLines;
      try {
        for await (const chunk of source) {
          if (closed) return;
          text += chunk.length;
          let from = 0;
          // A newline byte is a newline of the text (never part of a multi-byte character), and the
          // decoder holds nothing after one.
          while (skip > 0) {
            const nl = chunk.indexOf(10, from);
            if (nl < 0) break;
            skip--;
            from = nl + 1;
          }
          if (skip > 0) continue;
          // Decoded a window at a time (STRING_WINDOW).
          for (let at = from; at < chunk.length; at += STRING_WINDOW) {
            const s = decoder.write(at === 0 && chunk.length <= STRING_WINDOW ? chunk : chunk.subarray(at, at + STRING_WINDOW));
            if (s.length > 0) yield s;
          }
        }
        const tail = decoder.end();
        if (tail.length > 0) yield tail;
      } catch (e) {
        if (closed) return; // closed by the caller: stop quietly
        throw broken(e, text);
      } finally {
        close();
      }
    },
    async *bytes() {
      let text = 0;
      try {
        for await (const chunk of source) {
          if (closed) return;
          text += chunk.length;
          yield chunk;
        }
      } catch (e) {
        if (closed) return;
        throw broken(e, text);
      } finally {
        close();
      }
    },
    bytesRead,
    close,
  };
}

/** A source of a text log's batches `T`: records (an {@link EventSource}) or columns (a `BatchSource`, src/io/batch.ts). */
export interface TextSource<T> {
  readonly format: SourceFormat;
  readonly path: string;
  readonly totalBytes: number;
  bytesRead(): number;
  batches(): AsyncGenerator<T>;
  close(): void;
}

/**
 * The source of a text log (NDJSON, CSV, vendor CSV): each `batches()` call opens the file anew
 * and hands its text stream to `read`; the source tracks the bytes read across calls and
 * `close()` stops every open stream (`isClosed` lets `read` stop between batches).
 */
export function textSource<T = SourceRecord[]>(
  format: SourceFormat,
  path: string,
  ro: Pick<ReaderOptions, 'gzip' | 'lean' | 'chunkBytes' | 'totalBytes'>,
  read: (ts: TextStream, isClosed: () => boolean) => AsyncGenerator<T>,
): TextSource<T> {
  const open = new Set<TextStream>();
  let lastBytes = 0;
  let closed = false;
  const isClosed = (): boolean => closed;
  return {
    format,
    path,
    totalBytes: ro.totalBytes,
    bytesRead() {
      let n = lastBytes;
      for (const s of open) n = Math.max(n, s.bytesRead());
      return n;
    },
    async *batches() {
      if (closed) return;
      const ts = openTextStream(path, ro.gzip, ro.lean === true, ro.chunkBytes);
      open.add(ts);
      try {
        yield* read(ts, isClosed);
      } finally {
        lastBytes = Math.max(lastBytes, ts.bytesRead());
        ts.close();
        open.delete(ts);
      }
    },
    close() {
      closed = true;
      for (const s of open) s.close();
    },
  };
}
