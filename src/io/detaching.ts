/**
 * V8 compiles a thread's typed-array reads and writes on the assumption that no ArrayBuffer of
 * the thread has ever been detached (its "array buffer detaching protector"). The first buffer
 * detached, as `postMessage` does to the buffers it moves, invalidates that assumption for the
 * whole thread: every optimised function compiled on it is thrown away and compiled again. The
 * threads of a replay move buffers from their first batch on (the rows posted to the writer
 * thread, a reader's batches and the buffers given back to it), by which time their hot functions
 * have been optimised: the engine's, the reader's and the writer's were all compiled twice.
 *
 * {@link settleDetaching} detaches one buffer of its own as a module that moves buffers loads,
 * before any code is optimised, so that code is compiled once, with the detach checks it would
 * need after the first move anyway.
 *
 * @module
 */

let settled = false;

/** Detaches a buffer of its own in this thread, once (see the module description). */
export function settleDetaching(): void {
  if (settled) return;
  settled = true;
  const b = new ArrayBuffer(8);
  structuredClone(b, { transfer: [b] });
}
