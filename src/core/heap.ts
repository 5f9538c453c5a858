/**
 * A binary min-heap kept in a plain array, by a `less` order the caller gives: the merges of
 * several inputs by time (src/io/merge.ts, mergeBatches.ts) and the read-ahead worker's asks
 * (src/io/readAheadWorker.ts) keep theirs so.
 *
 * @module
 */

/**
 * Moves `heap[k]` up to its place (after a push at `k`).
 *
 * @example
 * ```ts
 * const heap = [1, 5, 3];
 * heap.push(0);
 * siftUp(heap, 3, (a, b) => a < b); // heap[0] === 0
 * ```
 */
export function siftUp<T>(heap: T[], k: number, less: (a: T, b: T) => boolean): void {
  const x = heap[k];
  while (k > 0) {
    const p = (k - 1) >> 1;
    if (!less(x, heap[p])) break;
    heap[k] = heap[p];
    k = p;
  }
  heap[k] = x;
}

/** Moves `heap[k]` down to its place (after its key grew, or the last element was put at `k`). */
export function siftDown<T>(heap: T[], k: number, less: (a: T, b: T) => boolean): void {
  const n = heap.length;
  const x = heap[k];
  for (;;) {
    let c = 2 * k + 1;
    if (c >= n) break;
    if (c + 1 < n && less(heap[c + 1], heap[c])) c++;
    if (!less(heap[c], x)) break;
    heap[k] = heap[c];
    k = c;
  }
  heap[k] = x;
}

/** Removes and returns the top of a non-empty `heap` (its last element sifted down from the top). */
export function popTop<T>(heap: T[], less: (a: T, b: T) => boolean): T {
  const top = heap[0];
  const last = heap.pop() as T;
  if (heap.length > 0) {
    heap[0] = last;
    siftDown(heap, 0, less);
  }
  return top;
}
