/**
 * Long answers in slices. Reading and rendering a history of up to 100,000 items takes hundreds
 * of milliseconds; done in one go it would hold the event loop, and every other request, for all
 * that time. Instead the work is cut into slices run by one scheduler: each turn of the event loop
 * (`setImmediate`) it gives every long answer waiting a share of {@link TURN_MS} ms, in turn, and
 * leaves the rest of the turn to I/O, so short requests are answered between two turns however
 * many long answers are in flight (the long ones share the time, round robin):
 *
 * - {@link drainSlices} takes the items of a lazily read sequence a slice at a time, and stops
 *   reading once the client has gone;
 * - {@link SlicedBody} is a response body produced a slice at a time as the socket asks for more
 *   (a client that reads slowly, or not at all, holds the work back; one that disconnects ends it);
 *   {@link slicedArrayBody} makes one of an array answer's pieces.
 *
 * What is held between slices should be few objects (history.ts keeps buckets in typed arrays):
 * objects that live across many turns make every young-generation collection copy them, which
 * stalls the event loop as surely as the work itself.
 *
 * @module
 */
import { Readable } from 'node:stream';
import { XrateError } from '../core/errors.js';
import type { HistoryPieces } from '../http/format/index.js';

/** Work of all long answers together in one turn of the event loop, ms. */
export const TURN_MS = 2;

/** The smallest share of a turn a slice gets, ms (with many long answers, a turn runs fewer of them). */
const MIN_SLICE_MS = 0.5;

/** Work done at once, in the request's own turn, before a sequence is left to the scheduler, ms. */
const FIRST_SLICE_MS = 0.5;

/** Items taken between two looks at the clock. */
const CLOCK_EVERY = 32;

/** A slice of work: runs until `performance.now()` passes `deadline` (or to its end). */
type Slice = (deadline: number) => void;

const waiting: Slice[] = [];
let scheduled = false;
/** Short work to run at the start of the next turn, before the slices ({@link soon}). */
const first: (() => void)[] = [];

/** Runs `slice` in a later turn of the event loop, after the slices queued before it. */
function later(slice: Slice): void {
  waiting.push(slice);
  if (!scheduled) {
    scheduled = true;
    setImmediate(runTurn);
  }
}

/**
 * Runs `fn` in the next check phase of the event loop (as `setImmediate` does), but before the
 * slices of long answers when a turn of them is due: what short answers wait for (the group commit
 * of charges, limits.ts) is not held up by them.
 */
export function soon(fn: () => void): void {
  if (scheduled) first.push(fn);
  else setImmediate(fn);
}

/** One turn: the slices queued so far, in order, each with a share of what is left of the turn. */
function runTurn(): void {
  scheduled = false;
  for (const fn of first.splice(0)) fn();
  const end = performance.now() + TURN_MS;
  let n = waiting.length;
  while (n > 0) {
    const now = performance.now();
    if (now >= end) break;
    const slice = waiting.shift()!;
    n--;
    try {
      slice(now + Math.max(MIN_SLICE_MS, (end - now) / (n + 1)));
    } catch (e) {
      // A slice handles its own errors (its answer fails); this one did not: the others go on.
      process.stderr.write(`xrate serve: internal error in a long answer: ${(e as Error).stack ?? String(e)}\n`);
    }
  }
  if (waiting.length > 0 && !scheduled) {
    scheduled = true;
    setImmediate(runTurn);
  }
}

/** Thrown when the client closed the connection before its answer was ready (nobody sees the status). */
export class ClientGone extends XrateError {
  constructor() {
    super('client_closed', 'Client closed the request');
  }
}

/**
 * Hands every item of `items` to `take`, a slice at a time: the first at once, the others in
 * later turns of the event loop (see the module description). A read that throws (a 550 of the
 * provider) rejects the promise.
 *
 * @param gone - whether the client has gone: checked before each later slice; then `items` is
 *   closed (no more rows are read) and the promise rejects with {@link ClientGone}
 */
export function drainSlices<T>(items: Iterator<T>, take: (item: T) => void, gone: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const slice = (deadline: number): void => {
      try {
        for (let n = 1; ; n++) {
          const r = items.next();
          if (r.done) {
            resolve();
            return;
          }
          take(r.value);
          if (n % CLOCK_EVERY === 0 && performance.now() >= deadline) break;
        }
      } catch (e) {
        reject(e);
        return;
      }
      later((d) => {
        if (gone()) {
          items.return?.();
          reject(new ClientGone());
        } else slice(d);
      });
    };
    slice(performance.now() + FIRST_SLICE_MS);
  });
}

/**
 * A response body made a slice at a time: `produce(deadline)` returns the next piece (made until
 * `performance.now()` passes `deadline`, or to the end), or null once everything was produced.
 * Each piece is made in a turn of the event loop (see the module description), when the reader
 * asks for more.
 */
export class SlicedBody extends Readable {
  private pending = false;

  constructor(private readonly produce: (deadline: number) => string | Buffer | null) {
    super();
  }

  override _read(): void {
    if (this.pending) return;
    this.pending = true;
    later((deadline) => {
      this.pending = false;
      if (this.destroyed) return;
      let piece: string | Buffer | null;
      try {
        piece = this.produce(deadline);
      } catch (e) {
        this.destroy(e as Error);
        return;
      }
      this.push(piece);
    });
  }
}

/** Items rendered between two looks at the clock. */
const RENDER_RUN = 32;

/**
 * The body of a long array answer of `count` items: the head and tail of `pieces` (see
 * format/pieces.ts) around the pieces `piece(from, to)` of runs of items, a slice of items per
 * turn of the event loop, as the socket asks for more.
 */
export function slicedArrayBody(
  pieces: Pick<HistoryPieces, 'head' | 'tail'>,
  count: number,
  piece: (from: number, to: number) => string | Buffer,
): SlicedBody {
  let at = 0;
  let ended = false;
  const text = typeof pieces.head === 'string';
  return new SlicedBody((deadline) => {
    if (ended) return null;
    const parts: (string | Buffer)[] = at === 0 ? [pieces.head] : [];
    while (at < count) {
      const to = Math.min(at + RENDER_RUN, count);
      parts.push(piece(at, to));
      at = to;
      if (performance.now() >= deadline) break;
    }
    if (at === count) {
      parts.push(pieces.tail);
      ended = true;
    }
    return text ? parts.join('') : Buffer.concat(parts as Buffer[]);
  });
}
