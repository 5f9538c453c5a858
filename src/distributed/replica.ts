/**
 * A replica of the rate service fed by a JetStream stream (`xrate serve --nats URL --stream NAME`,
 * docs/deploy.md): it reads the stream in sequence order with an ordered consumer, applies each
 * record through the ingest path of `xrate replay` (feed.ts says what a message holds), ticks in
 * event time only (never on the wall clock), and writes its own replay database. So every replica
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
import { performance } from 'node:perf_hooks';
import { DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { EngineConfig } from '../core/config.js';
import { createEngine, restoreEngine, type Engine } from '../core/engine.js';
import { US_PER_SECOND } from '../core/time.js';
import { TimeCache } from '../io/fastNdjson.js';
import { LineLimit } from '../io/lineLimit.js';
import { lineRecord } from '../io/ndjson.js';
import type { SourceRecord } from '../io/source.js';
import { ReplayStore } from '../io/store.js';
import { Ingest, type IngestState } from '../replay/ingest.js';
import { DEFAULT_STORED_PERIODS } from '../replay/replay.js';
import { LiveRateProvider } from '../answers/index.js';
import { decodeMessage } from './feed.js';
import { connectNats } from './natsConnect.js';
import { ensureStream } from './publish.js';
import { type NatsSecurity, redactUrl } from './security.js';
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
  /** Compute and store xrate's own metrics. */
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

/** The driver state a replica stores in its snapshots. */
interface ReplicaDriver extends IngestState {
  replica: {
    stream: string;
    /** Last sequence applied. */
    seq: number;
    /** Names of the logs seen, by input index (the `source` of rejects). */
    inputs: string[];
    /** Latest time of an accepted event, µs. */
    lastEventTime: number | null;
    lastSnapTick: number | null;
  };
}

function isReplicaDriver(d: unknown): d is ReplicaDriver {
  return typeof d === 'object' && d !== null && typeof (d as ReplicaDriver).replica?.stream === 'string';
}

/** The records of published logs carry lines of any length the publisher let through. */
const NO_LIMIT = new LineLimit(2 ** 31);

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
    const cp = store.latestSnapshot();
    const resume = cp !== undefined && isReplicaDriver(cp.driver) ? cp : undefined;
    if (opts.snapshotFrom !== undefined && !resume)
      throw new XrateError('input', `"${opts.snapshotFrom}" holds no snapshot of a replica: start from the stream's beginning instead`);
    if (resume && (resume.driver as ReplicaDriver).replica.stream !== opts.stream) {
      throw new XrateError(
        'conflict',
        `"${opts.db}" holds a replica of the stream "${(resume.driver as ReplicaDriver).replica.stream}", not "${opts.stream}": give each stream its own --db`,
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
    const st: ReplicaDriver = resume
      ? (resume.driver as ReplicaDriver)
      : {
          outputOn: true,
          eventsRead: 0,
          rateChanges: 0,
          buckets: 0,
          replica: { stream: opts.stream, seq: 0, inputs: [], lastEventTime: null, lastSnapTick: null },
        };
    const rs = st.replica;
    const inputIndex = new Map(rs.inputs.map((name, i) => [name, i]));
    let provider: LiveRateProvider | undefined;
    const ingest = new Ingest({
      inputs: rs.inputs,
      state: st,
      store,
      batch: resume ? resume.batch : 0,
      clearWithFirstBatch: !resume,
      ownMetrics: opts.ownMetrics,
      listener: { onPairRate: (c) => provider?.notePair(c.base, c.quote) },
      engine: (listener) => (resume ? restoreEngine(resume.engine, listener) : createEngine(opts.config ?? {}, listener)),
    });
    const engine = ingest.engine;
    const started = now();
    ingest.beginRun({ replica: { nats: redactUrl(opts.nats), stream: opts.stream }, db: opts.db }, started, !!resume);
    if (resume) store.truncateAfter(resume.batch);
    else {
      engine.emitAllAtNextTick();
      engine.trackDirectPairs(DEFAULT_STORED_PERIODS);
    }
    provider = new LiveRateProvider(
      engine,
      store,
      'replica',
      { run: { config: JSON.stringify(engine.snapshot().config), options: '{}', first_tick: null, last_tick: null } },
      () => rs.seq,
    );
    log?.info(
      { stream: opts.stream, db: opts.db, fromSeq: rs.seq + 1, resumed: !!resume },
      resume ? `resuming the replica from its snapshot at stream sequence ${rs.seq}` : 'starting the replica at the stream start',
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
    let tickObserver: TickObserver | undefined;
    // Ticks run before the service registers its observer (the replica applies the stream from its
    // start) are kept and handed over then, so none is missing from /metrics.
    const unobserved: number[] = [];
    const observeTicks = (seconds: number): void => {
      if (tickObserver) tickObserver(seconds);
      else unobserved.push(seconds);
    };
    const waiters: { seq: number; resolve: () => void }[] = [];
    const times = new TimeCache();

    const inputOf = (name: string): number => {
      let i = inputIndex.get(name);
      if (i === undefined) {
        i = rs.inputs.length;
        rs.inputs.push(name);
        inputIndex.set(name, i);
      }
      return i;
    };

    // The end of a publish run: tick through the last accepted event's second, as a replay does at
    // the end of its input.
    const endOfInput = (): void => {
      if (rs.lastEventTime === null) return;
      const end = Math.ceil(rs.lastEventTime / US_PER_SECOND) * US_PER_SECOND;
      if (engine.lastTickTime === undefined || end > engine.lastTickTime) engine.advanceTo(end);
    };

    const applyMessage = (m: JsMsg): void => {
      const item = decodeMessage(m.headers, m.string());
      if (item.kind === 'end') endOfInput();
      else if (item.kind === 'unknown') log?.warn({ seq: m.seq }, `stream message ${m.seq} skipped: ${item.why}`);
      else {
        const input = inputOf(item.input);
        const rec: SourceRecord | undefined = item.reject
          ? { line: item.line, raw: item.raw, error: item.reject.error, reason: item.reject.reason }
          : lineRecord(item.raw, 0, item.raw.length, item.line, NO_LIMIT, times);
        if (rec !== undefined) {
          const ev = ingest.parseRecord(rec, input);
          if (ev !== undefined) {
            const before = engine.lastTickTime;
            const t0 = performance.now();
            const rejected = ingest.applyEvent(ev, input, rec);
            if (engine.lastTickTime !== before) observeTicks((performance.now() - t0) / 1000);
            if (rejected === undefined && (rs.lastEventTime === null || ev.time > rs.lastEventTime)) rs.lastEventTime = ev.time;
          }
        }
      }
      rs.seq = m.seq;
    };

    const applyBatch = (batch: JsMsg[]): void => {
      ingest.inBatch(() => {
        for (const m of batch) {
          // An ordered consumer delivers every sequence in turn; anything else is a gap.
          if (m.seq !== rs.seq + 1)
            throw new Error(`stream message ${m.seq} came after ${rs.seq}: the messages between are gone, and the replica stops there`);
          applyMessage(m);
        }
        const lt = engine.lastTickTime;
        if (lt !== undefined && (rs.lastSnapTick === null || lt - rs.lastSnapTick >= snapshotEveryUs)) {
          rs.lastSnapTick = lt;
          ingest.saveSnapshot({ input: 0, line: 0, final: false, driver: st }, now());
        }
      });
      applied += batch.length;
      if (rs.seq > streamSeq) streamSeq = rs.seq;
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i].seq <= rs.seq) {
          waiters[i].resolve();
          waiters.splice(i, 1);
        }
      }
    };

    let failed: Error | undefined;
    const consuming = (async () => {
      let batch: JsMsg[] = [];
      for await (const m of messages) {
        batch.push(m);
        const last = m.seq + m.info.pending;
        if (last > streamSeq) streamSeq = last;
        if (batch.length >= batchSize || m.info.pending === 0) {
          applyBatch(batch);
          batch = [];
        }
      }
      if (batch.length > 0) applyBatch(batch);
    })().catch((e: Error) => {
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
      ingest.inBatch(() => ingest.saveSnapshot({ input: 0, line: 0, final: false, driver: st }, now()));
      ingest.finishRun(ingest.totals(), { finishedAt: now(), durationMs: now() - started, stopped: true });
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
