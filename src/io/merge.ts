/**
 * A k-way merge of event sources by event time (`xrate replay --merge`): the records of all
 * inputs, in the order of a stable sort by (time, input index, line) when each input is in time
 * order.
 *
 * - A record's time is its event's (`event.time`, or the `time` field of a record not yet parsed).
 *   A record without a readable time (a reject to be: bad JSON, a missing or malformed time, a line
 *   over the limit) takes the time of the record before it in its input (or the earliest time at
 *   the start), so it comes out right after that record: every record of an input comes out in
 *   the input's own order, and none is lost. An input that goes back in time is not sorted: its
 *   records still come out in its order, each when it is the earliest head of all inputs (the
 *   engine then rejects the late ones, as without a merge).
 * - Ties: the input given first, then the earlier line.
 * - Streaming, bounded memory: the merge holds one batch of records per input (the sources are
 *   opened with a small batch and, for text files, lean reads: textStream.ts), plus the output
 *   batch. A binary heap of the inputs by their next record's time picks the next record in
 *   O(log k).
 *
 * @module
 */
import { parseTime } from '../core/time.js';
import type { EventSource, SourceRecord } from './source.js';
import { popTop, siftDown, siftUp } from '../core/heap.js';

/** One batch of a merge: records and, at the same index, the index of the input each came from. */
export interface MergedBatch {
  records: SourceRecord[];
  inputs: number[];
}

/** The merged stream of several {@link EventSource}s (see the module description). */
export interface MergedSource {
  /** The sizes of all inputs added up. */
  readonly totalBytes: number;
  /** The bytes read of all inputs added up. */
  bytesRead(): number;
  /** The records of all inputs in merged order, in batches of at most `batchSize`. Call once. */
  batches(): AsyncGenerator<MergedBatch>;
  /** Stops reading and closes every input. */
  close(): void;
}

/**
 * The time of a record for the merge, or undefined when it has none that can be read: the event's
 * time, else the record's `time` field (an ISO 8601 string) parsed.
 */
export function recordTime(r: SourceRecord): number | undefined {
  if (r.event !== undefined) return r.event.time;
  const t = r.record?.time;
  return typeof t === 'string' ? parseTime(t.trim()) : undefined;
}

interface Cursor {
  it: AsyncIterator<SourceRecord[]>;
  batch: SourceRecord[];
  pos: number;
}

/**
 * Merges `sources` (see the module description); the sources are closed by `close()` or at the
 * end of `batches()`.
 *
 * @example
 * ```ts
 * const m = mergeSources(paths.map((p) => openSource(p, { batchSize: 256, lean: true })));
 * for await (const { records, inputs } of m.batches()) for (let k = 0; k < records.length; k++) use(records[k], inputs[k]);
 * ```
 */
export function mergeSources(sources: readonly EventSource[], batchSize = 4096): MergedSource {
  let closed = false;
  const totalBytes = sources.reduce((s, x) => s + x.totalBytes, 0);
  const cursors: (Cursor | undefined)[] = new Array(sources.length);
  /** The merge time of each input's next record (the one at its cursor's `pos`). */
  const keys = new Float64Array(sources.length).fill(Number.NEGATIVE_INFINITY);
  /** Heap of input indices by (key, index). */
  const heap: number[] = [];
  const less = (a: number, b: number): boolean => {
    const ka = keys[a];
    const kb = keys[b];
    return ka < kb || (ka === kb && a < b);
  };
  /** The next non-empty batch of input `i` into its cursor; false at its end. */
  const load = async (i: number, c: Cursor): Promise<boolean> => {
    for (;;) {
      const r = await c.it.next();
      if (r.done) return false;
      if (r.value.length > 0) {
        c.batch = r.value;
        c.pos = 0;
        keys[i] = recordTime(r.value[0]) ?? keys[i];
        return true;
      }
    }
  };
  const closeAll = (): void => {
    for (let i = 0; i < sources.length; i++) {
      const c = cursors[i];
      if (c) void c.it.return?.();
      cursors[i] = undefined;
      sources[i].close();
    }
  };
  return {
    totalBytes,
    bytesRead: () => sources.reduce((s, x) => s + x.bytesRead(), 0),
    async *batches() {
      try {
        for (let i = 0; i < sources.length && !closed; i++) {
          const c: Cursor = { it: sources[i].batches()[Symbol.asyncIterator](), batch: [], pos: 0 };
          cursors[i] = c;
          if (await load(i, c)) {
            heap.push(i);
            siftUp(heap, heap.length - 1, less);
          }
        }
        let records: SourceRecord[] = [];
        let inputs: number[] = [];
        while (heap.length > 0 && !closed) {
          const i = heap[0];
          const c = cursors[i]!;
          records.push(c.batch[c.pos]);
          inputs.push(i);
          c.pos++;
          if (c.pos < c.batch.length) {
            keys[i] = recordTime(c.batch[c.pos]) ?? keys[i];
            siftDown(heap, 0, less);
          } else if (await load(i, c)) {
            siftDown(heap, 0, less);
          } else popTop(heap, less);
          if (records.length >= batchSize) {
            yield { records, inputs };
            records = [];
            inputs = [];
          }
        }
        if (records.length > 0 && !closed) yield { records, inputs };
      } finally {
        closeAll();
      }
    },
    close() {
      closed = true;
      closeAll();
    },
  };
}
