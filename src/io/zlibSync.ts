/**
 * A zlib stream's synchronous handle: the native call `zlib.gzipSync` and `gunzipSync` make
 * (`writeSync`), used the way Node's own `processChunkSync` does, where Node has no public
 * incremental synchronous (de)compression. The vendor readers inflate through it a slice at a time
 * (vendorBytes.ts), and a snapshot's blob is deflated through it into parts (snapshotBlob.ts).
 *
 * @module
 */
import type { Gunzip, Gzip } from 'node:zlib';

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
