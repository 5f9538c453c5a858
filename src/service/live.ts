/**
 * Live engines for the rate service:
 *
 * - {@link startReplay} (`serve --replay LOG`): replays LOG into the database with
 *   {@link replay} (exactly `xrate replay LOG --db DB`), then serves the engine it leaves.
 * - {@link startFollow} (`serve --replay LOG --follow`): reads a plain NDJSON log from the start,
 *   keeps reading what is appended (a line counts once its newline is written), and ticks on the
 *   wall clock every second (`engine.advanceTo(now - lag)`) so rates go stale and expire in real
 *   time. Records go through the ingest path of `xrate replay` ({@link Ingest}): rate changes,
 *   OHLC buckets and rejects land in the same tables, one transaction per read batch; when the
 *   feed stops, the run is closed with its counters and a snapshot of the engine, so the database
 *   can later be served on its own. This module keeps only the tailing and the wall-clock ticks.
 *
 * Wall-clock ticks are skipped while the log's event time is more than `maxCatchUpMs` behind the
 * clock (an old log being caught up): ticks then follow event time only, as in a replay.
 *
 * @module
 */
import type { EngineConfig } from '../core/config.js';
import { createEngine, type Engine } from '../core/engine.js';
import { US_PER_SECOND } from '../core/time.js';
import { ReplayStore } from '../io/store.js';
import { FileTail } from '../io/tail.js';
import { Ingest } from '../replay/ingest.js';
import { DEFAULT_STORED_PERIODS, replay } from '../replay/replay.js';
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
  const lagUs = (opts.lagMs ?? 1000) * 1000;
  const maxCatchUpUs = (opts.maxCatchUpMs ?? 3_600_000) * 1000;
  const warn = opts.warn ?? ((m: string) => void process.stderr.write(`xrate serve: ${m}\n`));
  const tail = FileTail.open(opts.log, { maxLineBytes: opts.maxLineBytes, warn });

  const store = ReplayStore.open(opts.db);
  let provider: LiveRateProvider | undefined;
  const ingest = new Ingest({
    inputs: [opts.log],
    state: { outputOn: true, eventsRead: 0, rateChanges: 0, buckets: 0 },
    store,
    listener: { onPairRate: (c) => provider?.notePair(c.base, c.quote) },
    engine: (listener) => createEngine(opts.config ?? {}, listener),
  });
  const engine = ingest.engine;
  const started = now();
  ingest.beginRun({ follow: true, db: opts.db }, started, false);
  store.clearOutputs(ingest.runId);
  engine.emitAllAtNextTick();
  engine.trackDirectPairs(DEFAULT_STORED_PERIODS);
  provider = new LiveRateProvider(engine, store, 'follow', {
    run: { config: JSON.stringify(engine.snapshot().config), options: '{}', first_tick: null, last_tick: null },
  });

  let warnedClock = false;
  const readAppended = (): void =>
    tail.read((records) =>
      ingest.inBatch(() => {
        for (const rec of records) ingest.ingestRecord(rec, 0);
      }),
    );

  const tickToClock = (): void => {
    const last = engine.lastTickTime ?? engine.firstTickTime;
    if (last === undefined) return;
    const target = now() * 1000 - lagUs;
    if (target - last > maxCatchUpUs) {
      if (!warnedClock) {
        warn(
          `the log's event time is more than ${Math.round(maxCatchUpUs / US_PER_SECOND)} s behind the wall clock: ticking on event time only`,
        );
        warnedClock = true;
      }
      return;
    }
    if (engine.lastTickTime !== undefined && target < engine.lastTickTime + US_PER_SECOND) return;
    ingest.inBatch(() => engine.advanceTo(target));
  };

  let polling = false;
  const poll = (): void => {
    if (polling || !store.isOpen) return;
    polling = true;
    try {
      readAppended();
      tickToClock();
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
    ingest.inBatch(() => engine.flush());
    // `stopped`: the log may go on past what was read, so later times are not covered.
    ingest.saveSnapshot({ input: 0, line: tail.lines, final: false, driver: { follow: true, offset: tail.offset, stopped: true } }, now());
    const finishedAt = now();
    ingest.finishRun(ingest.totals(), { finishedAt, durationMs: now() - started, stopped: true });
  };
  provider.onClose(stop);
  return { provider, engine, poll, lines: () => tail.lines, stop };
}
