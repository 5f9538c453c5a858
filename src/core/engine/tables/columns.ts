/**
 * Helpers shared by the engine's tables: growth of typed-array columns, and the NaN <-> null
 * mapping of float columns in snapshots (JSON has no NaN).
 *
 * @module
 */

/** Smallest capacity a column grows to, so the first few ids do not reallocate one by one. */
const MIN_CAPACITY = 16;

/** Returns `a`, or a copy at least twice as long (new slots set to `fill`) when it is shorter than `n`. */
export function growF64(a: Float64Array<ArrayBuffer>, n: number, fill = 0): Float64Array<ArrayBuffer> {
  if (n <= a.length) return a;
  const b = new Float64Array(Math.max(n, a.length * 2, MIN_CAPACITY)).fill(fill);
  b.set(a);
  return b;
}

/** {@link growF64} for an Int32Array column. */
export function growI32(a: Int32Array<ArrayBuffer>, n: number, fill = 0): Int32Array<ArrayBuffer> {
  if (n <= a.length) return a;
  const b = new Int32Array(Math.max(n, a.length * 2, MIN_CAPACITY)).fill(fill);
  b.set(a);
  return b;
}

/** {@link growF64} for a Uint8Array column (flags and small codes). */
export function growU8(a: Uint8Array<ArrayBuffer>, n: number, fill = 0): Uint8Array<ArrayBuffer> {
  if (n <= a.length) return a;
  const b = new Uint8Array(Math.max(n, a.length * 2, MIN_CAPACITY)).fill(fill);
  b.set(a);
  return b;
}

/** The first `n` values of a float column for a snapshot, NaN written as null. */
export function nullableColumn(a: Float64Array, n: number): (number | null)[] {
  return Array.from(a.subarray(0, n), (v) => (Number.isNaN(v) ? null : v));
}

/** A float column read back from a snapshot, null read as NaN (inverse of {@link nullableColumn}). */
export function floatColumn(a: readonly (number | null)[]): Float64Array {
  return Float64Array.from(a, (v) => (v === null ? NaN : v));
}
