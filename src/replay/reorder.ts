/**
 * A bounded reorder window for logs whose events arrive slightly out of time order.
 *
 * Without it the engine rejects an event at or before its last tick as `late` (docs/methodology.md
 * section 2; reject reasons in section 1.4). With `--reorder-window S`, events are held in a
 * min-heap keyed by (time, arrival) and released once the newest time seen is more than S
 * seconds past them, so anything up to S seconds late is put back in order (ties keep log
 * order). Events later than the window are still rejected by the engine as `late`. Memory is
 * bounded by the events of one window.
 *
 * @module
 */
import type { XrateEvent } from '../core/types.js';

/** An event with where it came from. */
export interface Positioned {
  event: XrateEvent;
  input: number;
  line: number;
  raw: string;
  seq: number;
  /**
   * A vendor row whose market was not known when it was read (a tardis row: see
   * `SourceRecord.venue`): `event.symbolId` is a placeholder, resolved when the event is released.
   */
  venue?: { exchange: string; symbol: string };
}

/**
 * Min-heap of events ordered by (time, seq).
 *
 * @example
 * ```ts
 * const w = new ReorderWindow(2_000_000);
 * w.push(p); for (const q of w.releasable()) engine.apply(q.event);
 * ```
 */
export class ReorderWindow {
  private heap: Positioned[] = [];
  private maxTime = -Infinity;

  constructor(readonly windowUs: number) {}

  get size(): number {
    return this.heap.length;
  }

  private less(a: Positioned, b: Positioned): boolean {
    return a.event.time < b.event.time || (a.event.time === b.event.time && a.seq < b.seq);
  }

  /**
   * Adds an event. `movesClock` false (an event the engine would reject) keeps the newest time seen
   * where it is: a rejected line releases nothing and makes nothing late (docs/methodology.md section 2).
   */
  push(p: Positioned, movesClock = true): void {
    if (movesClock && p.event.time > this.maxTime) this.maxTime = p.event.time;
    const h = this.heap;
    h.push(p);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i], h[parent])) break;
      [h[i], h[parent]] = [h[parent], h[i]];
      i = parent;
    }
  }

  private pop(): Positioned {
    const h = this.heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l], h[m])) m = l;
        if (r < h.length && this.less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }

  /** Events older than (newest time seen - window), in order. */
  *releasable(): Generator<Positioned> {
    const limit = this.maxTime - this.windowUs;
    while (this.heap.length > 0 && this.heap[0].event.time < limit) yield this.pop();
  }

  /** Every buffered event, in order (end of input). */
  *drain(): Generator<Positioned> {
    while (this.heap.length > 0) yield this.pop();
  }

  /** Plain-JSON state for snapshots (events are plain objects). */
  toJSON(): { maxTime: number | null; items: Positioned[] } {
    return { maxTime: Number.isFinite(this.maxTime) ? this.maxTime : null, items: [...this.heap] };
  }

  static fromJSON(windowUs: number, j: { maxTime: number | null; items: Positioned[] }): ReorderWindow {
    const w = new ReorderWindow(windowUs);
    w.heap = [...j.items];
    w.maxTime = j.maxTime ?? -Infinity;
    return w;
  }
}
