/**
 * Partitioned replays across machines (docs/parallel.md, "Many machines"): the partitions of
 * {@link replayParallel} go to a BullMQ queue on Redis, `xrate worker` processes take them, and
 * the submitting process merges what they wrote.
 *
 * Every path in a job (the inputs, the partition's database) is absolute, and must name the same
 * file on every machine: a shared directory mounted at the same place everywhere.
 *
 * A partition is written to a file of its attempt's own and renamed into place when it is
 * complete, so an attempt that died (a killed worker, whose job BullMQ finds stalled and hands to
 * another worker) leaves nothing the merge would read; partitions are deterministic, so a second
 * writer of the same partition writes the same bytes.
 *
 * @module
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { type Job, type JobsOptions, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { VERSION } from '../version.js';
import { connectRedis, redisAuthOptions } from './redisConnect.js';
import { isRedisUrl } from './redisUrl.js';
import { connectFailure, type RedisSecurity, redactUrl } from './security.js';
import { type PartitionJob, type PartitionResult, type PartitionRunner, removeDb } from '../replay/parallel.js';
import { messageOf, XrateError } from '../core/errors.js';

/** The queue's default name. */
export const DEFAULT_QUEUE = 'xrate-partitions';

/** How a partition job is put on the queue: JSON, with the numbers JSON cannot hold tagged. */
export function encodeJob(job: PartitionJob): string {
  return JSON.stringify(job, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? { $number: String(v) } : v));
}

/** The inverse of {@link encodeJob}. */
export function decodeJob(text: string): PartitionJob {
  return JSON.parse(text, (_k, v: unknown) =>
    v !== null &&
    typeof v === 'object' &&
    !Array.isArray(v) &&
    Object.keys(v).length === 1 &&
    typeof (v as { $number?: unknown }).$number === 'string'
      ? Number((v as { $number: string }).$number)
      : v,
  ) as PartitionJob;
}

/** Default time a queue's client waits for a lost Redis to come back before it gives up, ms. */
export const DEFAULT_QUEUE_WAIT_MS = 60_000;

/**
 * A submitting run marks itself alive in Redis for this long, renewed every fifth of it; a worker
 * skips a partition whose run's mark is gone (the run ended, or gave the queue up).
 */
const RUN_MARK_MS = 60_000;

/** The Redis key that says the submitting run `token` of `queue` is alive (in BullMQ's `bull:` prefix). */
const runMark = (queue: string, token: string): string => `bull:${queue}:xrate-run:${token}`;

/**
 * A connected Redis connection for BullMQ from a `redis://HOST:PORT[/DB]` URL (`rediss://` for
 * TLS), with `security`'s user, password and TLS material. BullMQ needs
 * `maxRetriesPerRequest: null` on the connections it blocks on. Once connected it reconnects by
 * itself; the first connection failing is an error that says why (authentication, TLS, refused),
 * within 10 s (`CONNECT_TIMEOUT_MS`, src/distributed/security.ts).
 */
export async function redisConnection(url: string, security?: RedisSecurity): Promise<Redis> {
  if (!isRedisUrl(url)) throw new XrateError('usage', `--queue must be a redis:// URL, got "${redactUrl(url)}"`, { field: '--queue' });
  const conn = new Redis(url, { ...redisAuthOptions(url, security), maxRetriesPerRequest: null, lazyConnect: true });
  return connectRedis(conn, `the queue at ${redactUrl(url)}`);
}

/** Whether `e` is a connection's failure (told once by {@link watchRedis}), not a command's. */
function isConnectionError(e: Error): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return (
    (code !== undefined &&
      ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code)) ||
    /Connection is closed/.test(e.message)
  );
}

/** What {@link watchRedis} tells its caller. */
interface WatchHooks {
  /** The connection to Redis is lost: from now on, {@link gaveUp} unless it is back within the wait. */
  lost?(): void;
  /** Ready again after `downMs` away. */
  back?(downMs: number): void;
  /** Away for the whole wait: the error says so (called once per loss). */
  gaveUp(error: Error): void;
}

/**
 * Watches a connected `conn` for the loss of Redis (see {@link WatchHooks}), saying on `log` when
 * it is lost and when it is back; returns the function that stops watching.
 */
function watchRedis(conn: Redis, waitMs: number, shown: string, log: (line: string) => void, hooks: WatchHooks): () => void {
  let lastError: string | undefined;
  let since: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  const onError = (e: Error): void => {
    lastError = connectFailure(e);
  };
  const onClose = (): void => {
    if (since !== undefined) return;
    since = Date.now();
    lastError = undefined;
    log(`lost the queue's Redis at ${shown}: waiting up to ${waitMs / 1000} s for it`);
    hooks.lost?.();
    timer = setTimeout(() => {
      hooks.gaveUp(
        new XrateError(
          'unavailable',
          `lost the queue's Redis at ${shown}${lastError ? ` (${lastError})` : ''}, and it was not back within ${waitMs / 1000} s`,
        ),
      );
    }, waitMs);
  };
  const onReady = (): void => {
    if (since === undefined) return;
    clearTimeout(timer);
    const down = Date.now() - since;
    since = undefined;
    log(`the queue's Redis is back after ${(down / 1000).toFixed(1)} s`);
    hooks.back?.(down);
  };
  conn.on('error', onError);
  conn.on('close', onClose);
  conn.on('ready', onReady);
  return () => {
    clearTimeout(timer);
    conn.off('error', onError);
    conn.off('close', onClose);
    conn.off('ready', onReady);
  };
}

/** Options of {@link queueRunner}. */
export interface QueueRunnerOptions {
  /** `redis://HOST:PORT` (`rediss://` for TLS). */
  url: string;
  /** The ACL user, password and TLS material of the connection. */
  security?: RedisSecurity;
  /** Queue name (default {@link DEFAULT_QUEUE}). */
  name?: string;
  /** Attempts per partition before the run fails (default 3): a failure or a killed worker uses one. */
  attempts?: number;
  /** How long to wait for a lost Redis to come back before the run fails, ms (default {@link DEFAULT_QUEUE_WAIT_MS}). */
  waitMs?: number;
  /** Told when Redis is lost, when it is back, and what was submitted again. */
  log?: (line: string) => void;
}

/** A partition runner that submits to the queue, and its end. */
export interface QueueRunner {
  run: PartitionRunner;
  /** Workers connected to the queue now. */
  workers(): Promise<number>;
  /** Removes this runner's jobs that no worker has taken yet (the run is given up); how many. */
  cancel(): Promise<number>;
  /** Why the runner gave up (Redis lost for longer than the wait), if it did: every job in progress then failed with this error. */
  lost(): Error | undefined;
  close(): Promise<void>;
}

/**
 * Connects to the queue and returns a {@link PartitionRunner} that submits each partition as a
 * job and resolves with what the worker reported (progress included).
 *
 * Redis lost while the run waits: the runner waits up to `waitMs` for it to come back. Back in
 * time, the jobs the server no longer holds (a Redis restarted without its data) are submitted
 * again under their ids, and the run goes on. Not back: every job waited for fails with the error
 * of {@link QueueRunner.lost}, so the run stops without merging.
 *
 * @example
 * ```ts
 * const q = await queueRunner({ url: 'redis://10.0.0.5:6379' });
 * try { await replayParallel({ inputs, db, workers: 4, run: q.run }); } finally { await q.close(); }
 * ```
 */
export async function queueRunner(opts: QueueRunnerOptions): Promise<QueueRunner> {
  const name = opts.name ?? DEFAULT_QUEUE;
  const shown = redactUrl(opts.url);
  const log = opts.log ?? (() => {});
  const conn = await redisConnection(opts.url, opts.security);
  const eventsConn = await redisConnection(opts.url, opts.security).catch((e: unknown) => {
    conn.disconnect();
    throw e;
  });
  const queue = new Queue(name, { connection: conn });
  // From the stream's start (BullMQ keeps its last 10,000 events): an event published before the
  // first read would be lost reading from now on, and a job would wait for it forever.
  const events = new QueueEvents(name, { connection: eventsConn, lastEventId: '0-0' });
  // Errors of the connections (each retry while Redis is away) are told by the watch below, once.
  let away = false;
  const onError = (e: Error): void => {
    if (!away && !isConnectionError(e)) log(`queue error: ${e.message}`);
  };
  queue.on('error', onError);
  events.on('error', onError);
  await events.waitUntilReady();
  const listeners = new Map<string, (eventsRead: number) => void>();
  events.on('progress', ({ jobId, data }) => {
    const n = (data as { eventsRead?: unknown } | undefined)?.eventsRead;
    if (typeof n === 'number') listeners.get(jobId)?.(n);
  });
  // One token per submitting run: job ids never collide with an earlier run's.
  const token = `${hostname()}-${process.pid}-${Date.now().toString(36)}`;
  const mark = runMark(name, token);
  const renewMark = (): Promise<unknown> => conn.set(mark, '1', 'PX', RUN_MARK_MS);
  await renewMark();
  const markTimer = setInterval(() => void renewMark().catch(() => undefined), RUN_MARK_MS / 5);
  markTimer.unref();
  let submitted = 0;
  const attempts = opts.attempts ?? 3;
  /** The jobs waited for: as submitted (to submit them again into a Redis that lost them), and their ends. */
  const waiting = new Map<string, Waiting>();
  const settle = (id: string, end: { result: PartitionResult } | { reason: string }): void => {
    const w = waiting.get(id);
    if (!w) return;
    waiting.delete(id);
    if ('result' in end) w.resolve(end.result);
    else w.reject(new Error(end.reason));
  };
  events.on('completed', ({ jobId, returnvalue }) => settle(jobId, { result: returnvalue as unknown as PartitionResult }));
  events.on('failed', ({ jobId, failedReason }) => settle(jobId, { reason: failedReason }));
  /** Settles job `id` if it has ended (its end may have come while no event could be read); its state. */
  const check = async (id: string): Promise<string> => {
    const state = await queue.getJobState(id);
    if (state === 'completed' || state === 'failed') {
      const j = await queue.getJob(id);
      if (j) settle(id, state === 'completed' ? { result: j.returnvalue as PartitionResult } : { reason: j.failedReason });
    }
    return state;
  };

  let gaveUp: Error | undefined;
  let giveUp: (e: Error) => void = () => {};
  const givenUp = new Promise<never>((_, reject) => {
    giveUp = reject;
  });
  givenUp.catch(() => undefined);
  const unlessLost = <T>(p: Promise<T>): Promise<T> => Promise.race([p, givenUp]);

  // Back after a loss: the run's mark first (a worker skips the jobs of a run without one), then
  // each job waited for is looked at: ended, it is settled; unknown to the server (a Redis
  // restarted without its data), it is submitted again under its id.
  const resubmit = async (): Promise<void> => {
    await renewMark();
    let again = 0;
    for (const [id, w] of [...waiting]) {
      if ((await check(id)) !== 'unknown' || !waiting.has(id)) continue;
      await queue.add(w.title, w.data, w.options);
      again++;
    }
    if (again > 0) log(`the queue had lost ${again} of this run's partitions: submitted again`);
  };
  const waitMs = opts.waitMs ?? DEFAULT_QUEUE_WAIT_MS;
  const unwatch = watchRedis(conn, waitMs, shown, log, {
    lost: () => {
      away = true;
    },
    back: () => {
      away = false;
      resubmit().catch((e: Error) => log(`looking at the partitions again failed: ${e.message}`));
    },
    gaveUp: (e) => {
      gaveUp = e;
      giveUp(e);
    },
  });

  const run: PartitionRunner = async (job, progress) => {
    if (gaveUp) throw gaveUp;
    const id = `${token}-${job.index}-${submitted++}`;
    const title = `partition ${job.index + 1}`;
    const data: QueueJobData = { job: encodeJob(job), version: VERSION, run: token };
    const options: JobsOptions = {
      jobId: id,
      attempts,
      backoff: { type: 'fixed', delay: 1000 },
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: 7 * 86_400 },
    };
    if (progress) listeners.set(id, progress);
    const ended = new Promise<PartitionResult>((resolve, reject) => waiting.set(id, { title, data, options, resolve, reject }));
    // It may end (fail) before it is awaited below: not an unhandled rejection meanwhile.
    ended.catch(() => undefined);
    try {
      await unlessLost(queue.add(title, data, options));
      // The events are read from before the job was added: this only settles what they cannot tell.
      await unlessLost(check(id));
      return await unlessLost(ended);
    } catch (e) {
      if (e === gaveUp) throw e;
      throw new XrateError('failed', `queue job ${id}, tried up to ${attempts} times: ${messageOf(e)}`, { cause: e });
    } finally {
      listeners.delete(id);
      waiting.delete(id);
    }
  };
  return {
    run,
    workers: async () => (await unlessLost(queue.getWorkers())).length,
    cancel: async () => {
      // Redis away: nothing can be removed, and the workers skip these jobs once the run's mark is gone.
      if (away) return 0;
      let removed = 0;
      // A job a worker holds is locked and stays; it ends on its own, and its file is removed with the others.
      for (const id of waiting.keys()) removed += await queue.remove(id);
      return removed;
    },
    lost: () => gaveUp,
    close: async () => {
      unwatch();
      clearInterval(markTimer);
      if (away) {
        // Nothing can be said to a Redis that is away (the mark lapses by itself): the connections are dropped.
        conn.disconnect();
        eventsConn.disconnect();
      }
      await events.close();
      if (!away) await conn.del(mark).catch(() => undefined);
      await queue.close();
      conn.disconnect();
      eventsConn.disconnect();
    },
  };
}

/** What a job of the queue holds: the partition, the version of xrate that submitted it, and its run's token. */
interface QueueJobData {
  job: string;
  version?: string;
  run?: string;
}

/** A job a {@link queueRunner} waits for. */
interface Waiting {
  title: string;
  data: QueueJobData;
  options: JobsOptions;
  resolve(r: PartitionResult): void;
  reject(e: Error): void;
}

/** Options of {@link startQueueWorker}. */
export interface QueueWorkerOptions {
  url: string;
  /** The ACL user, password and TLS material of the connection. */
  security?: RedisSecurity;
  name?: string;
  /** Partitions processed at once by this worker (default 1). */
  concurrency?: number;
  /**
   * How long a job's lock lasts without renewal, ms (default 30,000): a worker that died is found
   * out after about this long, and its partition handed to another worker.
   */
  lockMs?: number;
  /** How long to wait for a lost Redis to come back before giving up, ms (default {@link DEFAULT_QUEUE_WAIT_MS}). */
  waitMs?: number;
  /** Runs one partition (the CLI: in a worker thread, so the lock is renewed while it runs). */
  run: PartitionRunner;
  /** Told when a partition starts, ends or fails, and when Redis is lost or back. */
  log?: (line: string) => void;
  /**
   * Redis lost for longer than the wait: the files of the partitions in hand are removed (their
   * jobs go back to the queue once Redis is, as a dead worker's), and this is called; the worker
   * takes nothing more, and its process should end (its running partitions with it).
   */
  onLost?: (error: Error) => void;
}

/** A running queue worker. */
export interface QueueWorker {
  /** Stops taking jobs and waits for the running ones. */
  close(): Promise<void>;
}

/** Attempts started by this process (a part of each attempt's file name, so that no two share one). */
let attemptsHere = 0;

/**
 * Takes partitions from the queue and replays each with `run` into a file of its own attempt,
 * renamed to the job's database when complete (see the module description). A partition whose
 * submitting run has ended is skipped, and fails for good.
 *
 * @example
 * ```ts
 * const w = await startQueueWorker({ url: 'redis://10.0.0.5:6379', run: runPartitionInWorker });
 * process.on('SIGTERM', () => void w.close());
 * ```
 */
export async function startQueueWorker(opts: QueueWorkerOptions): Promise<QueueWorker> {
  const conn = await redisConnection(opts.url, opts.security);
  const log = opts.log ?? (() => {});
  const lockDuration = opts.lockMs ?? 30_000;
  const queueName = opts.name ?? DEFAULT_QUEUE;
  const shown = redactUrl(opts.url);
  const waitMs = opts.waitMs ?? DEFAULT_QUEUE_WAIT_MS;
  /** The partitions in hand: their names, by attempt file. */
  const inHand = new Map<string, string>();
  let away = false;
  const ended = async (data: QueueJobData): Promise<boolean> =>
    data.run !== undefined && (await conn.exists(runMark(queueName, data.run))) === 0;
  const worker = new Worker(
    queueName,
    async (bj: Job<QueueJobData>) => {
      // Another version may compute other outputs: this attempt fails (a worker of its version may take the next).
      if (bj.data.version !== VERSION)
        throw new XrateError(
          'conflict',
          `the partition was submitted by xrate ${bj.data.version ?? '(unknown)'}, this worker is xrate ${VERSION}`,
        );
      const job = decodeJob(bj.data.job);
      const name = `partition ${job.index + 1}`;
      const gone = (): Error => {
        log(`${name} (job ${bj.id}): skipped: the run that submitted it has ended`);
        return new UnrecoverableError('xrate: the run that submitted the partition has ended');
      };
      if (await ended(bj.data)) throw gone();
      const mine = `${job.db}.attempt-${hostname()}-${process.pid}-${bj.attemptsStarted}-${++attemptsHere}`;
      inHand.set(mine, name);
      removeDb(mine);
      log(`${name} (job ${bj.id}, attempt ${bj.attemptsStarted}): started`);
      let last = 0;
      try {
        const result = await opts.run({ ...job, db: mine }, (eventsRead) => {
          const t = Date.now();
          if (t - last < 500) return;
          last = t;
          void bj.updateProgress({ eventsRead }).catch(() => {});
        });
        // Renamed into place only while Redis answers, and for a run still waiting for it.
        if (await ended(bj.data)) throw gone();
        // Closed, its WAL is checkpointed and gone; were it not, the WAL goes with it.
        for (const suffix of ['-wal', '-shm']) {
          rmSync(job.db + suffix, { force: true });
          if (existsSync(mine + suffix)) renameSync(mine + suffix, job.db + suffix);
        }
        renameSync(mine, job.db);
        log(`${name} (job ${bj.id}): done, ${result.owned.eventsRead} own events`);
        return result;
      } catch (e) {
        removeDb(mine);
        if (!(e instanceof UnrecoverableError)) log(`${name} (job ${bj.id}): failed: ${(e as Error).message}`);
        throw e;
      } finally {
        inHand.delete(mine);
      }
    },
    {
      connection: conn,
      concurrency: opts.concurrency ?? 1,
      lockDuration,
      stalledInterval: Math.max(1000, Math.floor(lockDuration / 2)),
      maxStalledCount: 2,
    },
  );
  // While Redis is away every retry is an error: the loss is told once, by the watch.
  worker.on('error', (e) => {
    if (!away && !isConnectionError(e)) log(`queue error: ${e.message}`);
  });
  await worker.waitUntilReady();
  /** Removes the files of the partitions in hand, which cannot be reported (their jobs go back to the queue, stalled, once Redis is back); their names. */
  const abandon = (): string[] => {
    for (const mine of inHand.keys()) removeDb(mine);
    const names = [...inHand.values()];
    inHand.clear();
    return names;
  };
  const unwatch = watchRedis(conn, waitMs, shown, log, {
    lost: () => {
      away = true;
    },
    back: () => {
      away = false;
    },
    gaveUp: (e) => {
      const names = abandon();
      opts.onLost?.(
        new XrateError(
          'unavailable',
          names.length === 0
            ? `${e.message}: no partition was in hand`
            : `${e.message}: ${names.join(', ')} in hand ${names.length === 1 ? 'is' : 'are'} abandoned, ${names.length === 1 ? 'its file' : 'their files'} removed (the queue hands ${names.length === 1 ? 'it' : 'them'} to another worker if Redis comes back with ${names.length === 1 ? 'it' : 'them'})`,
        ),
      );
    },
  });
  return {
    close: async () => {
      if (away) {
        // Nothing can be reported to a Redis that is away, and BullMQ would wait for it: the
        // partitions in hand are abandoned as when the wait runs out, and the connections dropped.
        unwatch();
        abandon();
        conn.disconnect();
        void worker.close(true).catch(() => undefined);
        return;
      }
      // Watched meanwhile: Redis lost while the partitions in hand finish ends the wait as above.
      await worker.close();
      unwatch();
      conn.disconnect();
    },
  };
}
