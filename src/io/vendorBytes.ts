/**
 * The bytes of a vendor file for the columnar reader (vendorBatches.ts): read and, for a gzip
 * file, inflated synchronously, a slice at a time, with no file descriptor held between reads.
 *
 * Why synchronous: a `--merge` reads hundreds or thousands of small files at once. Through
 * `zlib.createGunzip` streams each slice of each file is a trip through the thread pool and a
 * few stream callbacks; that cost (and the waits) made decompression about 2.7 times the CPU time
 * of inflating the same bytes in one call. Here each pull reads one slice of the file and
 * inflates it at once into a buffer shared by every reader of the thread (the caller turns the
 * bytes into rows before it pulls from another file), so each open file costs only its inflate
 * state (about 40 KB), and only until its data has all been inflated: the inflater of a file read
 * whole in one pull (a small one) is let go with that pull.
 *
 * Node has no public incremental synchronous inflate; the one `zlib.gunzipSync` uses is the
 * stream's handle (`writeSync`, the same native call: zlibSync.ts), used here the way Node's own
 * `processChunkSync` does. Where that handle is not there (another runtime), {@link openBytes}
 * returns undefined and the reader falls back to the streaming text path.
 *
 * @module
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { constants, createGunzip, type Gunzip, type ZlibReset } from 'node:zlib';
import { XrateError } from '../core/errors.js';
import { ignoreStreamError, writeChecked, zlibSync } from './zlibSync.js';

/** Inflated (or read) bytes per pull at most: the shared output buffer. */
const OUT = 1 << 17;

/** A file's bytes, pulled synchronously. */
export interface ByteReader {
  /**
   * The next bytes, at most `max` (<= 128 KiB), as a view valid until the next pull of any reader
   * of this thread; undefined at the end. Throws an XrateError (`input`) when the file cannot be
   * read or its gzip data is broken.
   */
  next(max: number): Buffer | undefined;
  /** File bytes consumed so far (compressed bytes for gzip). */
  bytesRead(): number;
  /** Releases the inflate state. */
  close(): void;
}

const NO_BYTES = Buffer.alloc(0);

/**
 * Inflaters reset and kept for the next files of the thread, at most {@link IDLE_INFLATERS}: a merge
 * reads thousands of files, some twice, and making a gunzip stream and its state costs more than
 * inflating a small file.
 */
const idle: Gunzip[] = [];
const IDLE_INFLATERS = 8;

/** Inflaters held by this thread's readers of gzip files, not yet done with their data. */
let held = 0;

/**
 * How many inflaters this thread's readers of gzip files hold (each about 40 KB of zlib's memory,
 * outside the JavaScript heap): those whose data is not yet all inflated. For tests and diagnostics.
 */
export function inflatersHeld(): number {
  return held;
}

/** A gunzip stream used through its handle: its own output buffer is not used, and its errors come out of `next()` (see `finish`). */
function newInflater(): Gunzip {
  const z = createGunzip({ chunkSize: constants.Z_MIN_CHUNK });
  z.on('error', ignoreStreamError);
  return z;
}

/** The output buffer shared by every reader of the thread (one file is read at a time). */
let outBuf: Buffer | undefined;

function readAt(path: string, buf: Buffer, len: number, pos: number): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new XrateError('input', `cannot read "${path}": ${(e as Error).message}`);
  }
  try {
    return readSync(fd, buf, 0, len, pos);
  } catch (e) {
    throw new XrateError('input', `cannot read "${path}" (after ${pos} bytes): ${(e as Error).message}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * A plain file's bytes; `size` (its size when opened, when known): a read that ends short at or
 * past it is its last, not followed by one more to see nothing is left.
 */
function plainBytes(path: string, size: number): ByteReader {
  let pos = 0;
  let done = false;
  return {
    next(max) {
      if (done) return undefined;
      outBuf ??= Buffer.allocUnsafe(OUT);
      const want = Math.min(max, OUT);
      const n = readAt(path, outBuf, want, pos);
      if (n === 0) {
        done = true;
        return undefined;
      }
      pos += n;
      // The file's end: these bytes are its last.
      if (n < want && pos >= size) done = true;
      return outBuf.subarray(0, n);
    },
    bytesRead: () => pos,
    close() {
      done = true;
    },
  };
}

/**
 * A gzip file's bytes, inflated (concatenated gzip members included, as `createGunzip` reads
 * them); undefined when the runtime's zlib has no synchronous handle. `read`: compressed bytes
 * read from the file at a time (the reader's own input buffer); `size`: as for {@link plainBytes}.
 */
function gzipBytes(path: string, read: number, size: number): ByteReader | undefined {
  const z = idle.pop() ?? newInflater();
  const sync = zlibSync(z);
  if (sync === undefined) {
    z.close();
    return undefined;
  }
  const { state } = sync;
  held++;
  // A file smaller than a read gets a buffer of its size and one byte (a small one comes from Node's
  // shared pool), so its one read comes short and is its last.
  let inBuf = Buffer.allocUnsafe(Math.max(1, Math.min(read, size + 1)));
  let inOff = 0;
  let inLen = 0;
  /** Compressed bytes read from the file, and taken by the inflater. */
  let filePos = 0;
  let taken = 0;
  let eof = false;
  let finished = false;
  let text = 0;
  const broken = (e: unknown): XrateError =>
    new XrateError(
      'input',
      `cannot read "${path}" (gzip data broken near byte ${taken} of the file, after ${text} bytes of text): ${(e as Error).message}`,
    );
  const finish = (): void => {
    finished = true;
    held--;
    // A sound inflater is reset for the next file this thread reads; a failed one is let go.
    if (!z.destroyed && idle.length < IDLE_INFLATERS) {
      (z as Gunzip & ZlibReset).reset();
      idle.push(z);
    } else z.close();
    // The stream lives on until its close is done (a later turn of the event loop), and with it
    // what its listeners' scope holds: not the read buffer. A merge parks thousands of files in a turn.
    inBuf = NO_BYTES;
  };
  return {
    next(max) {
      if (finished) return undefined;
      outBuf ??= Buffer.allocUnsafe(OUT);
      const room = Math.min(max, OUT);
      for (;;) {
        if (inLen === 0 && !eof) {
          inOff = 0;
          inLen = readAt(path, inBuf, inBuf.length, filePos);
          filePos += inLen;
          // A file of thousands read a slice at a time: the read that ends it is not followed by an empty one.
          if (inLen === 0 || (inLen < inBuf.length && filePos >= size)) eof = true;
        }
        try {
          writeChecked(z, sync, eof ? constants.Z_FINISH : constants.Z_NO_FLUSH, inBuf, inOff, inLen, outBuf, 0, room);
        } catch (e) {
          finish();
          throw broken(e);
        }
        const availOut = state[0];
        const availIn = state[1];
        taken += inLen - availIn;
        inOff += inLen - availIn;
        inLen = availIn;
        const have = room - availOut;
        if (have > 0) {
          text += have;
          // Every byte read and inflated, with room to spare: the data ended here. Its inflater goes
          // now, not at the next pull, which for a file a merge holds open comes only once its rows
          // are reached: a day's hundreds of small files each held 40 KB of state for the day.
          if (eof && inLen === 0 && availOut > 0) finish();
          return outBuf.subarray(0, have);
        }
        if (eof) {
          finish();
          return undefined;
        }
      }
    },
    bytesRead: () => taken,
    close() {
      if (!finished) finish();
    },
  };
}

/**
 * The bytes of `path` (inflated when `gzip`, reading `read` compressed bytes at a time), or
 * undefined when gzip cannot be inflated synchronously here. `size`: the file's size when it was
 * opened, when known (see {@link plainBytes}): a read that comes short of what it asked for at that
 * size or past it found the file's end, so no read follows it.
 */
export function openBytes(path: string, gzip: boolean, read = 1 << 15, size = Number.POSITIVE_INFINITY): ByteReader | undefined {
  return gzip ? gzipBytes(path, read, size) : plainBytes(path, size);
}
