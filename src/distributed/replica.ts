/**
 * A replica of the rate service fed by a JetStream stream (`xrate serve --nats URL --stream NAME`,
 * docs/deploy.md): it reads the stream in sequence order with an ordered consumer
 * (streamSource.ts; feed.ts says what a message holds), applies each record through the driver of
 * `xrate replay` (src/replay/driver.ts), ticks in event time only (never on the wall clock), and
 * writes its own replay database. So every replica
 * that has read the stream to sequence N holds the same engine and the same outputs, and once it
 * has read the end of a publish run it answers exactly as `xrate replay` of the published logs.
 *
 * - **Batches**: the messages delivered together (at most `batchSize`) are applied in one
 *   transaction of the database, which records the stream sequence reached in the same commit as
 *   the outputs of those messages.
 * - **Snapshots**: every `snapshotEveryUs` of event time (default 1 h), and at a graceful stop, the
 *   engine and the position in the stream are stored with the batch. A replica restarted on its
 *   database, after a stop or a `kill -9`, drops what was written after its newest snapshot, then
 *   reads the stream again from the sequence after it: the outputs are those of a replica that
 *   never stopped. With no snapshot, or a new database, it starts at the stream's first message.
 *   A new replica can also start from another replica's newest snapshot (`snapshotFrom`: its
 *   database copied with SQLite's online backup, while it runs), and read the stream from there.
 * - **Lag**: the stream's last sequence (asked of the server every second, and learnt from each
 *   delivery) minus the last sequence applied.
 *
 * @module
 */
import { rmSync } from 'node:fs';
import { DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { EngineConfig } from '../core/config.js';
import { createEngine, type Engine } from '../core/engine.js';
import { US_PER_SECOND } from '../core/time.js';
import { type ReplayCheckpoint, ReplayStore } from '../io/store.js';
import { Driver } from '../replay/driver.js';
import { isReplicaState, newReplicaState, type ReplicaState } from '../replay/driverState.js';
import { DEFAULT_STORED_PERIODS } from '../core/periods.js';
import { EventTimeTicks } from '../replay/ticks.js';
import { LiveRateProvider } from '../answers/index.js';
import { connectNats } from './natsConnect.js';
import { ensureStream } from './publish.js';
import { type NatsSecurity, redactUrl } from './security.js';
import { StreamSource } from './streamSource.js';
import { XrateError } from '../core/errors.js';

/** Default event time between two snapshots of a replica, µs. */
export const DEFAULT_REPLICA_SNAPSHOT_US = 3600 * US_PER_SECOND;

/** Default bound of the stream lag (messages) under which a replica is ready. */
export const DEFAULT_READY_LAG = 1000;

/** What a replica logs (pino's methods). */
export interface ReplicaLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Options of {@link startReplica}. */
export interface ReplicaOptions {
  /** NATS server URL(s). */
  nats: string;
  /** Credentials and TLS of the connection to NATS. */
  natsSecurity?: NatsSecurity;
  /** The stream (created when missing, as `xrate publish` creates it). */
  stream: string;
  /** The replica's own replay database. */
  db: string;
  /** Engine configuration of a replica that starts afresh (a resumed one keeps its snapshot's). */
  config?: Partial<EngineConfig>;
  /** Event time between snapshots, µs (default 1 h). */
  snapshotEveryUs?: number;
  /**
   * Start from the newest snapshot of this replica database (another replica's, copied with
   * SQLite's online backup while it runs) instead of the stream's start; `db` must not exist.
   */
  snapshotFrom?: string;
  /** Messages applied in one transaction at most (default 4096). */
  batchSize?: number;
  /** Compute and store xrate's own metrics (default: on, as a replay that writes a database does). */
  ownMetrics?: boolean;
  /** Lag (messages) under which {@link ReplicaStatus.ready} holds (default 1000). */
  readyLag?: number;
  /** How often the stream's last sequence is asked for, ms (default 1000). */
  infoEveryMs?: number;
  log?: ReplicaLog;
  /** Wall clock, ms. */
  now?: () => number;
}

/** A replica's position in its stream. */
export interface ReplicaStatus {
  stream: string;
  /** Sequence of the last message applied (0: none). */
  appliedSeq: number;
  /** The stream's last sequence as last known. */
  streamSeq: number;
  /** streamSeq - appliedSeq (at least 0). */
  lag: number;
  /** Whether the server answered the last question about the stream (within 3 periods), and reading it has not failed. */
  connected: boolean;
  /** Why the replica stopped reading the stream, if it did (a gap in the stream's sequence). */
  error?: string;
  /** connected, and lag at most {@link readyLag}. */
  ready: boolean;
  /** The lag bound of {@link ready}, messages. */
  readyLag: number;
  /** Messages applied by this process. */
  applied: number;
}

/** Timing of the ticks an event made the engine compute (one observation per event that moved the clock). */
export type TickObserver = (seconds: number) => void;

/** A running replica. */
export interface Replica {
  readonly provider: LiveRateProvider;
  readonly engine: Engine;
  status(): ReplicaStatus;
  /** Resolves once the replica has applied every message up to `seq` (default: the stream's last now). */
  caughtUp(seq?: number): Promise<void>;
  /** Called with the duration of each event's pending ticks (for /metrics). */
  onTicks(observer: TickObserver): void;
  /** Stops reading, saves a snapshot and closes the run (the provider's close() calls it, then closes the database). */
  stop(): Promise<void>;
}

/**
 * Starts a replica (see the module description): opens (or resumes) its database, connects,
 * and consumes the stream in the background.
 *
 * @throws XrateErrors when NATS cannot be reached, or the database replicates another stream
 */
export async function startReplica(opts: ReplicaOptions): Promise<Replica> {
  const now = opts.now ?? Date.now;
  const log = opts.log;
  const batchSize = Math.max(1, opts.batchSize ?? 4096);
  const snapshotEveryUs = opts.snapshotEveryUs ?? DEFAULT_REPLICA_SNAPSHOT_US;
  const readyLag = opts.readyLag ?? DEFAULT_READY_LAG;
  const infoEveryMs = opts.infoEveryMs ?? 1000;

  // Connected first: a server that cannot be reached, or refuses the credentials, leaves no file.
  const nc: NatsConnection = await connectNats(opts.nats, 'xrate serve', opts.natsSecurity);
  let store: ReplayStore;
  try {
    if (opts.snapshotFrom !== undefined) await ReplayStore.copy(opts.snapshotFrom, opts.db);
    store = ReplayStore.open(opts.db);
  } catch (e) {
    await nc.close().catch(() => undefined);
    throw e;
  }
  try {
    let resume = replicaSnapshot(store);
    if (opts.snapshotFrom !== undefined && !resume)
      throw new XrateError('input', `"${opts.snapshotFrom}" holds no snapshot of a replica: start from the stream's beginning instead`);
    if (resume && (resume.driver as ReplicaState).replica.stream !== opts.stream) {
      throw new XrateError(
        'conflict',
        `"${opts.db}" holds a replica of the stream "${(resume.driver as ReplicaState).replica.stream}", not "${opts.stream}": give each stream its own --db`,
        { field: '--db' },
      );
    }
    if (resume && opts.config !== undefined) {
      const given = JSON.stringify(createEngine(opts.config).snapshot().config);
      if (given !== JSON.stringify(resume.engine.config))
        throw new XrateError(
          'conflict',
          `"${opts.db}" was computed with another engine configuration than --config gives (${JSON.stringify(resume.engine.config)}): a replica keeps its configuration; start one with a new --db for another`,
          { field: '--config' },
        );
    }
    const st: ReplicaState = resume ? (resume.driver as ReplicaState) : newReplicaState(opts.stream);
    const rs = st.replica;
    let provider: LiveRateProvider | undefined;
    let tickObserver: TickObserver | undefined;
    // Ticks run before the service registers its observer (the replica applies the stream from its
    // start) are kept and handed over then, so none is missing from /metrics.
    const unobserved: number[] = [];
    const driver = new Driver({
      inputs: rs.inputs,
      state: st,
      marks: rs,
      resume,
      config: opts.config,
      store,
      ownMetrics: opts.ownMetrics ?? true,
      listener: { onPairRate: (c) => provider?.notePair(c.base, c.quote) },
      clear: 'first-batch',
      periods: DEFAULT_STORED_PERIODS,
      snapshotEveryUs,
      // Event time only: the end of a publish run ticks through its last accepted event's second.
      ticks: new EventTimeTicks(),
      onTicks: (seconds) => {
        if (tickObserver) tickObserver(seconds);
        else unobserved.push(seconds);
      },
      now,
      started: now(),
    });
    // Restored: the snapshot is not held while the replica runs (a day of trade bins is tens of megabytes).
    const resumed = resume !== undefined;
    resume = undefined;
    const engine = driver.engine;
    driver.beginRun({ replica: { nats: redactUrl(opts.nats), stream: opts.stream }, db: opts.db });
    driver.start();
    provider = new LiveRateProvider(
      engine,
      store,
      'replica',
      { run: { config: JSON.stringify(engine.snapshot().config), options: '{}', first_tick: null, last_tick: null } },
      () => rs.seq,
    );
    log?.info(
      { stream: opts.stream, db: opts.db, fromSeq: rs.seq + 1, resumed },
      resumed ? `resuming the replica from its snapshot at stream sequence ${rs.seq}` : 'starting the replica at the stream start',
    );

    const jsm: JetStreamManager = await jetstreamManager(nc);
    await ensureStream(jsm, opts.stream);
    // Messages the replica has not applied that the stream no longer holds (its retention removed
    // them) would be skipped without a word: refused.
    const first = (await jsm.streams.info(opts.stream)).state.first_seq;
    if (first > rs.seq + 1)
      throw new XrateError(
        'conflict',
        `the stream "${opts.stream}" starts at sequence ${first}, but this replica has applied up to ${rs.seq}: ` +
          'the messages between are gone (retention); start from a replica that has them (--snapshot-from FILE) or a new --db on a stream that holds them all',
      );
    const consumer = await jetstream(nc).consumers.get(
      opts.stream,
      rs.seq > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: rs.seq + 1 } : { deliver_policy: DeliverPolicy.All },
    );
    const messages: ConsumerMessages = await consumer.consume({ max_messages: Math.min(batchSize, 4096) });

    let streamSeq = rs.seq;
    let infoAt = -Infinity;
    let applied = 0;
    const waiters: { seq: number; resolve: () => void }[] = [];
    const stream = new StreamSource({
      messages,
      batchSize,
      position: rs,
      log,
      onDelivery: (last) => {
        if (last > streamSeq) streamSeq = last;
      },
    });
    const afterBatch = (): void => {
      applied += stream.delivered;
      if (rs.seq > streamSeq) streamSeq = rs.seq;
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i].seq <= rs.seq) {
          waiters[i].resolve();
          waiters.splice(i, 1);
        }
      }
    };

    let failed: Error | undefined;
    const consuming = driver.consume(stream, afterBatch).catch((e: Error) => {
      failed = e;
      log?.error({ err: e.message }, `the replica stopped reading the stream: ${e.message}`);
    });

    // Losing and regaining the stream are logged once each.
    let lost = false;
    const askStream = async (): Promise<void> => {
      try {
        const info = await jsm.streams.info(opts.stream);
        if (info.state.last_seq > streamSeq) streamSeq = info.state.last_seq;
        infoAt = now();
        if (lost) log?.info({ stream: opts.stream, seq: rs.seq }, 'the stream can be read again');
        lost = false;
      } catch (e) {
        if (!lost) log?.warn({ err: (e as Error).message }, `cannot read the stream's state: ${(e as Error).message}`);
        lost = true;
      }
    };
    await askStream();
    const infoTimer = setInterval(() => void askStream(), infoEveryMs);
    infoTimer.unref();

    const status = (): ReplicaStatus => {
      const lag = Math.max(0, streamSeq - rs.seq);
      const connected = failed === undefined && now() - infoAt <= 3 * infoEveryMs;
      return {
        stream: opts.stream,
        appliedSeq: rs.seq,
        streamSeq,
        lag,
        connected,
        ready: connected && lag <= readyLag,
        readyLag,
        applied,
        error: failed?.message,
      };
    };

    let stopped = false;
    const stop = async (): Promise<void> => {
      if (stopped) return;
      stopped = true;
      clearInterval(infoTimer);
      await messages.close().catch(() => undefined);
      await consuming;
      await nc.close().catch(() => undefined);
      if (!store.isOpen) return;
      driver.stopLive({ flush: false, at: { input: 0, line: 0 } });
      log?.info({ stream: opts.stream, seq: rs.seq }, `replica stopped at stream sequence ${rs.seq} (snapshot saved)`);
    };
    provider.onClose(stop);

    return {
      provider,
      engine,
      status,
      caughtUp: async (seq?: number) => {
        if (seq === undefined) {
          await askStream();
          seq = streamSeq;
        }
        if (rs.seq >= seq) return;
        await new Promise<void>((resolve) => waiters.push({ seq, resolve }));
      },
      onTicks: (o) => {
        tickObserver = o;
        for (const seconds of unobserved.splice(0)) o(seconds);
      },
      stop,
    };
  } catch (e) {
    await nc.close().catch(() => undefined);
    store.close();
    // A copy this start made is of no use to the next.
    if (opts.snapshotFrom !== undefined) for (const f of [opts.db, `${opts.db}-wal`, `${opts.db}-shm`]) rmSync(f, { force: true });
    throw e;
  }
}

/** The newest snapshot `store` holds if it is a replica's, to restore its engine from (packed). */
function replicaSnapshot(store: ReplayStore): ReplayCheckpoint | undefined {
  const cp = store.latestSnapshot(undefined, { packed: true });
  return cp !== undefined && isReplicaState(cp.driver) ? cp : undefined;
}
