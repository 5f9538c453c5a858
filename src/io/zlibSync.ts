/**
 * A zlib stream's synchronous handle: the native call `zlib.gzipSync` and `gunzipSync` make
 * (`writeSync`), used the way Node's own `processChunkSync` does, where Node has no public
 * incremental synchronous (de)compression. The vendor readers inflate through it a slice at a time
 * (vendorBytes.ts), a snapshot's blob is deflated through it into parts (snapshotBlob.ts) and
 * inflated a slice at a time ({@link gunzipSlices}).
 *
 * @module
 */
import { constants, createGunzip, type Gunzip, type Gzip, gunzipSync } from 'node:zlib';

/** The native handle of a zlib stream. */
export interface ZlibHandle {
  /** Compresses or inflates `input[inOff, inOff + inLen)` into `out[outOff, outOff + outLen)`; throws on bad data. */
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
}

/**
 * The handle of stream `z` and the state each call leaves (index 0: bytes of output room left,
 * 1: bytes of input not taken); undefined where the runtime has none (then the stream, or `*Sync`).
 */
export function zlibSync(z: Gzip | Gunzip): { handle: ZlibHandle; state: Uint32Array } | undefined {
  const handle = (z as unknown as { _handle?: ZlibHandle })._handle;
  const state = (z as unknown as { _writeState?: Uint32Array })._writeState;
  return typeof handle?.writeSync === 'function' && state instanceof Uint32Array ? { handle, state } : undefined;
}

/**
 * The error listener of a stream used through its handle, whose errors come out of the call
 * ({@link writeChecked}): a function of no caller's scope, since a closed stream lives until a
 * later turn of the event loop and keeps what its listeners hold (a reader's buffers).
 */
export const ignoreStreamError = (): void => {};

/**
 * One call of stream `z`'s handle (`sync`): `sync.state` then tells the output room and the input
 * it left. Throws the stream's error when the call failed (data not gzip, or cut short at
 * Z_FINISH), which the handle reports by destroying the stream rather than by throwing.
 */
export function writeChecked(
  z: Gzip | Gunzip,
  sync: { handle: ZlibHandle },
  flush: number,
  input: Uint8Array,
  inOff: number,
  inLen: number,
  out: Uint8Array,
  outOff: number,
  outLen: number,
): void {
  sync.handle.writeSync(flush, input, inOff, inLen, out, outOff, outLen);
  if (z.destroyed) throw z.errored ?? new Error('unexpected end of file');
}

/**
 * The inflated bytes of gzip data given in `parts` (concatenated gzip members included, as
 * `gunzipSync` reads them), `slice` bytes at a time at most, in one buffer reused (each slice valid
 * until the next): gzip data of tens of megabytes read without its bytes or its inflated text
 * whole (a snapshot's blob, snapshotBlob.ts). Where the runtime has no synchronous handle, the
 * parts are joined and inflated at once.
 * @throws the inflater's error on data that is not gzip, or cut short
 */
export function* gunzipSlices(parts: Iterable<Uint8Array>, slice = 1 << 16): Generator<Buffer> {
  const z = createGunzip({ chunkSize: constants.Z_MIN_CHUNK }); // its own output buffer is not used
  const sync = zlibSync(z);
  if (sync === undefined) {
    z.close();
    yield gunzipSync(Buffer.concat([...parts]));
    return;
  }
  z.on('error', ignoreStreamError);
  const { state } = sync;
  const out = Buffer.allocUnsafe(slice);
  const step = function* (flush: number, input: Uint8Array): Generator<Buffer> {
    let off = 0;
    let len = input.length;
    for (;;) {
      writeChecked(z, sync, flush, input, off, len, out, 0, slice);
      off += len - state[1];
      len = state[1];
      const have = slice - state[0];
      if (have > 0) yield out.subarray(0, have);
      // Output room left: all the input it could take was taken.
      if (state[0] > 0) return;
    }
  };
  try {
    for (const part of parts) if (part.length > 0) yield* step(constants.Z_NO_FLUSH, part);
    yield* step(constants.Z_FINISH, new Uint8Array(0));
  } finally {
    z.close();
  }
}
