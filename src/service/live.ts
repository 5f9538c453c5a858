/**
 * Live engines for the rate service:
 *
 * - {@link startReplay} (`serve --replay LOG`): replays LOG into the database with
 *   {@link replay} (exactly `xrate replay LOG --db DB`), then serves the engine it leaves.
 * - {@link startFollow} (`serve --follow LOG`): reads a plain NDJSON log from the start,
 *   keeps reading what is appended (a line counts once its newline is written), and ticks on the
 *   wall clock every second (`engine.advanceTo(now - lag)`) so rates go stale and expire in real
 *   time. Records go through the driver of `xrate replay` (src/replay/driver.ts): rate changes,
 *   OHLC buckets and rejects land in the same tables, one transaction per read batch; when the
 *   feed stops, the run is closed with its counters and a snapshot of the engine, so the database
 *   can later be served on its own. This module keeps only the poll timer: the driver reads the
 *   followed file (src/io/tail.ts) and ticks on the wall clock (src/replay/ticks.ts).
 *
 * Wall-clock ticks are skipped while the log's event time is more than `maxCatchUpMs` behind the
 * clock (an old log being caught up): ticks then follow event time only, as in a replay.
 *
 * @module
 */
import type { EngineConfig } from '../core/config.js';
import type { Engine } from '../core/engine.js';
import { ReplayStore } from '../io/store.js';
import { FileTail } from '../io/tail.js';
import { Driver } from '../replay/driver.js';
import { followSnapshot, newFollowState } from '../replay/driverState.js';
import { FollowedFile } from '../replay/recordSource.js';
import { WallClockTicks } from '../replay/ticks.js';
import { DEFAULT_STORED_PERIODS } from '../core/periods.js';
import { replay } from '../replay/replay.js';
import { LiveRateProvider } from '../answers/index.js';

/** Options of {@link startReplay}. */
export interface ReplayServeOptions {
  log: string;
  db: string;
  config?: Partial<EngineConfig>;
  format?: 'ndjson' | 'csv' | 'sqlite';
  reorderWindowUs?: number;
  /** Maximum line length, bytes of UTF-8 (default 1 MiB). */
  maxLineBytes?: number;
}

/** Replays `log` into `db` and serves the engine it leaves (static afterwards). */
export async function startReplay(opts: ReplayServeOptions): Promise<LiveRateProvider> {
  const summary = await replay({
    inputs: [opts.log],
    db: opts.db,
    config: opts.config,
    format: opts.format,
    reorderWindowUs: opts.reorderWindowUs,
    maxLineBytes: opts.maxLineBytes,
  });
  summary.engine.setListener({});
  const store = ReplayStore.open(opts.db, { readonly: true });
  try {
    return new LiveRateProvider(summary.engine, store, 'replay');
  } catch (e) {
    store.close();
    throw e;
  }
}

/** Options of {@link startFollow}. */
export interface FollowOptions {
  /** A plain (not gzipped) NDJSON log that keeps growing. */
  log: string;
  db: string;
  config?: Partial<EngineConfig>;
  /** Wall clock, ms (injectable for tests). */
  now?: () => number;
  /** How often to read new lines and tick, ms (default 1000). */
  pollMs?: number;
  /** Ticks run through the wall clock minus this, ms (default 1000: events may arrive a second late). */
  lagMs?: number;
  /** No wall-clock ticks while the event time is this far behind the clock, ms (default 1 h). */
  maxCatchUpMs?: number;
  /** Maximum line length, bytes of UTF-8 (default 1 MiB): a longer line is a `line_too_long` reject, never held whole. */
  maxLineBytes?: number;
  /** Warnings (default: stderr). */
  warn?: (message: string) => void;
}

/** A running feed. */
export interface Follower {
  readonly provider: LiveRateProvider;
  readonly engine: Engine;
  /** Reads what was appended and ticks to the wall clock now (also run every pollMs). */
  poll(): void;
  /** Lines read so far. */
  lines(): number;
  /** Stops reading and closes the run (buckets flushed, counters, a snapshot); the provider's close() also closes the database. */
  stop(): Promise<void>;
}

/**
 * Starts following `log` (see the module description). The first poll (reading the whole log
 * so far) runs before this returns.
 *
 * @throws XrateError when the log is not a plain NDJSON file or cannot be opened
 */
export function startFollow(opts: FollowOptions): Follower {
  const now = opts.now ?? Date.now;
  const warn = opts.warn ?? ((m: string) => void process.stderr.write(`xrate serve: ${m}\n`));
  const tail = FileTail.open(opts.log, { maxLineBytes: opts.maxLineBytes, warn });
  const followed = new FollowedFile(tail);

  const store = ReplayStore.open(opts.db);
  let provider: LiveRateProvider | undefined;
  const driver = new Driver({
    inputs: [opts.log],
    state: newFollowState(),
    marks: { lastEventTime: null, lastSnapTick: null },
    store,
    listener: { onPairRate: (c) => provider?.notePair(c.base, c.quote) },
    config: opts.config,
    clear: 'at-begin',
    periods: DEFAULT_STORED_PERIODS,
    ticks: new WallClockTicks({
      now,
      lagUs: (opts.lagMs ?? 1000) * 1000,
      maxCatchUpUs: (opts.maxCatchUpMs ?? 3_600_000) * 1000,
      warn,
    }),
    now,
    started: now(),
  });
  const engine = driver.engine;
  driver.beginRun({ follow: true, db: opts.db });
  driver.start();
  provider = new LiveRateProvider(engine, store, 'follow', {
    run: { config: JSON.stringify(engine.snapshot().config), options: '{}', first_tick: null, last_tick: null },
  });

  let polling = false;
  const poll = (): void => {
    if (polling || !store.isOpen) return;
    polling = true;
    try {
      driver.poll(followed);
    } catch (e) {
      warn(`follow: ${(e as Error).message}`);
    } finally {
      polling = false;
    }
  };

  poll();
  const timer = setInterval(poll, opts.pollMs ?? 1000);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    tail.close();
    if (!store.isOpen) return;
    // The log may go on past what was read: its snapshot says how far, and that it stopped.
    driver.stopLive({ flush: true, at: followed.position, driver: followSnapshot(tail.offset) });
  };
  provider.onClose(stop);
  return { provider, engine, poll, lines: () => tail.lines, stop };
}
