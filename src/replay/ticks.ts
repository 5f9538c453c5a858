/**
 * Tick policies of the replay driver (driver.ts): what moves the engine's clock besides the
 * events themselves.
 *
 * - {@link EventTimeTicks} (a replay, a partition, a replica): ticks only as events move the
 *   clock; at the end of the input, ticks through the last accepted event's second rounded up
 *   (so every event counts), bounded by `to` and, past the log's end, by `tail`.
 * - {@link WallClockTicks} (a followed log): after every read, ticks through the wall clock minus
 *   a lag, so rates go stale and expire in real time; not while the log's event time is more than
 *   `maxCatchUp` behind the clock (an old log being caught up: then event time only, warned once).
 *
 * @module
 */
import type { Engine } from '../core/engine.js';
import { ceilSecond, US_PER_SECOND } from '../core/time.js';

/** What a tick policy sees of the driver. */
export interface DriverClock {
  readonly engine: Engine;
  /** The latest time of an accepted event, µs (null before the first). */
  readonly lastEventTime: number | null;
  /** Runs `fn` as a batch of its own (one transaction). */
  inBatch(fn: () => void): void;
}

/** When the clock moves besides the events (see the module description). */
export interface TickPolicy {
  /** The end of a replay, µs: an accepted event past it stops the reading. */
  readonly to?: number;
  /** After a read of a polled source. */
  afterRead(clock: DriverClock): void;
  /** At the end of the input (in its final batch, or where a stream marks it). */
  atEnd(clock: DriverClock): void;
}

/** Ticks in event time only (see the module description). */
export class EventTimeTicks implements TickPolicy {
  readonly to: number | undefined;
  private readonly tailUs: number | undefined;

  /** @param opts - `to`: the end of the replay, µs; `tailUs`: with `to` past the log's end, how far past its last event to tick at most. */
  constructor(opts: { to?: number; tailUs?: number } = {}) {
    this.to = opts.to;
    this.tailUs = opts.tailUs;
  }

  afterRead(): void {}

  atEnd(clock: DriverClock): void {
    const last = clock.lastEventTime;
    if (last === null) return;
    const end = ceilSecond(last);
    if (this.to !== undefined) clock.engine.advanceTo(Math.min(this.to, this.tailUs !== undefined ? end + this.tailUs : Infinity));
    else clock.engine.advanceTo(end);
  }
}

/** Options of {@link WallClockTicks}. */
export interface WallClockOptions {
  /** Wall clock, ms. */
  now: () => number;
  /** Ticks run through the wall clock minus this, µs. */
  lagUs: number;
  /** No ticks while the event time is this far behind the clock, µs. */
  maxCatchUpUs: number;
  warn: (message: string) => void;
}

/** Ticks on the wall clock after every read (see the module description). */
export class WallClockTicks implements TickPolicy {
  private warned = false;

  constructor(private readonly opts: WallClockOptions) {}

  afterRead(clock: DriverClock): void {
    const engine = clock.engine;
    const last = engine.lastTickTime ?? engine.firstTickTime;
    if (last === undefined) return;
    const target = this.opts.now() * 1000 - this.opts.lagUs;
    if (target - last > this.opts.maxCatchUpUs) {
      if (!this.warned) {
        this.opts.warn(
          `the log's event time is more than ${Math.round(this.opts.maxCatchUpUs / US_PER_SECOND)} s behind the wall clock: ticking on event time only`,
        );
        this.warned = true;
      }
      return;
    }
    if (engine.lastTickTime !== undefined && target < engine.lastTickTime + US_PER_SECOND) return;
    clock.inBatch(() => engine.advanceTo(target));
  }

  /** A followed log has no end: its last ticks are the wall clock's. */
  atEnd(): void {}
}
