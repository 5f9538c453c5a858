/**
 * Keeps a replay's heap near what it really holds, so its memory does not grow with the log.
 *
 * A replay keeps little alive: the engine's tables and the batch in flight, 20 to 40 MB. But V8
 * collects the old generation only once it has grown to several times what survived the last full
 * collection, and lets that threshold creep up over a long run; a 16-day log peaked near 250 MB of
 * RSS, most of it garbage waiting (docs/performance.md). After each batch the replay asks
 * {@link HeapBudget.check}: when the heap holds more than max(floor, 2 x the live size after the
 * last full collection), it runs one itself. A full collection of a replay's heap takes a few
 * milliseconds and comes every second or so, well under 1 % of the run.
 *
 * `xrate replay` turns it on (ReplayOptions.heapBudget); an application that embeds `replay()`
 * in a process holding more leaves it off, since each collection costs what the whole heap holds.
 *
 * Node offers no collection on demand without `--expose-gc`, so the budget turns that flag on and
 * takes `gc` from a fresh context (the usual way; the main context's globals are untouched). Where
 * that is refused, the budget does nothing and V8 sizes the heap as usual.
 *
 * @module
 */

import v8 from 'node:v8';
import vm from 'node:vm';

const MB = 1024 * 1024;

/** Bytes of the JavaScript heap in use. */
function heapUsed(): number {
  return v8.getHeapStatistics().used_heap_size;
}

let collector: (() => void) | null | undefined;

/** Node's full collection, or null when it cannot be had. */
function fullCollection(): (() => void) | null {
  if (collector === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      const gc: unknown = vm.runInNewContext('gc');
      collector = typeof gc === 'function' ? (gc as () => void) : null;
    } catch {
      collector = null;
    }
  }
  return collector;
}

/**
 * Runs a full collection now, where one can be had (see the module description): between the
 * stages of a partitioned replay's merge, whose buffers of megabytes wait for a collection that
 * the heap's size alone would not start. True when it ran.
 */
export function collectNow(): boolean {
  const gc = fullCollection();
  if (gc === null) return false;
  gc();
  return true;
}

/**
 * Items of a replay's work before its first batch (files marked, opened or placed by a merge)
 * between two checks of its budget: tens of thousands of files make garbage for seconds there.
 */
export const HEAP_CHECK_EVERY = 256;

/** The budget a replay's `heapBudget` setting asks for: true, the default floor; a number, that floor in MB; else none. */
export function heapBudgetOf(setting: boolean | number | undefined): HeapBudget | undefined {
  return setting === true ? new HeapBudget() : typeof setting === 'number' ? new HeapBudget(setting) : undefined;
}

/**
 * The heap budget of one replay.
 *
 * @example
 * ```ts
 * const budget = new HeapBudget();
 * for await (const batch of batches) {
 *   apply(batch);
 *   budget.check();
 * }
 * ```
 */
export class HeapBudget {
  private limit: number;
  private readonly gc = fullCollection();

  /** `floorMb`: the heap is never collected on purpose below this size. */
  constructor(private readonly floorMb = 64) {
    this.limit = floorMb * MB;
  }

  /** Runs a full collection when the heap has outgrown its budget; true when it did. */
  check(): boolean {
    if (this.gc === null || heapUsed() <= this.limit) return false;
    return this.collect();
  }

  /**
   * Runs a full collection now, whatever the heap holds: at the end of a replay's input, before
   * its run's row is rewritten (a row that lists 60,000 vendor files is 6 MB, which SQLite reads
   * and writes whole), the garbage of the last batches is let go first. True when it ran.
   */
  collect(): boolean {
    if (this.gc === null) return false;
    this.gc();
    this.limit = Math.max(this.floorMb * MB, 2 * heapUsed());
    return true;
  }
}
