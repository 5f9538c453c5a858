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
import { type Job, Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { VERSION } from '../version.js';
import { connectRedis, redisAuthOptions } from '../distributed/redisConnect.js';
import { isRedisUrl } from '../distributed/redisUrl.js';
import { type RedisSecurity, redactUrl } from '../distributed/security.js';
import { type PartitionJob, type PartitionResult, type PartitionRunner, removeDb } from './parallel.js';

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

/**
 * A connected Redis connection for BullMQ from a `redis://HOST:PORT[/DB]` URL (`rediss://` for
 * TLS), with `security`'s user, password and TLS material. BullMQ needs
 * `maxRetriesPerRequest: null` on the connections it blocks on. Once connected it reconnects by
 * itself; the first connection failing is an error that says why (authentication, TLS, refused),
 * within 10 s (`CONNECT_TIMEOUT_MS`, src/distributed/security.ts).
 */
export async function redisConnection(url: string, security?: RedisSecurity): Promise<Redis> {
  if (!isRedisUrl(url)) throw new Error(`xrate: --queue must be a redis:// URL, got "${redactUrl(url)}"`);
  const conn = new Redis(url, { ...redisAuthOptions(url, security), maxRetriesPerRequest: null, lazyConnect: true });
  return connectRedis(conn, `the queue at ${redactUrl(url)}`);
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
}

/** A partition runner that submits to the queue, and its end. */
export interface QueueRunner {
  run: PartitionRunner;
  /** Workers connected to the queue now. */
  workers(): Promise<number>;
  /** Removes this runner's jobs that no worker has taken yet (the run is given up); how many. */
  cancel(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Connects to the queue and returns a {@link PartitionRunner} that submits each partition as a
 * job and resolves with what the worker reported (progress included).
 *
 * @example
 * ```ts
 * const q = await queueRunner({ url: 'redis://10.0.0.5:6379' });
 * try { await replayParallel({ inputs, db, workers: 4, run: q.run }); } finally { await q.close(); }
 * ```
 */
export async function queueRunner(opts: QueueRunnerOptions): Promise<QueueRunner> {
  const name = opts.name ?? DEFAULT_QUEUE;
  const conn = await redisConnection(opts.url, opts.security);
  const eventsConn = await redisConnection(opts.url, opts.security).catch((e: unknown) => {
    conn.disconnect();
    throw e;
  });
  const queue = new Queue(name, { connection: conn });
  // From the stream's start (BullMQ keeps its last 10,000 events): an event published before the
  // first read would be lost reading from now on, and a job would wait for it forever.
  const events = new QueueEvents(name, { connection: eventsConn, lastEventId: '0-0' });
  await events.waitUntilReady();
  const listeners = new Map<string, (eventsRead: number) => void>();
  events.on('progress', ({ jobId, data }) => {
    const n = (data as { eventsRead?: unknown } | undefined)?.eventsRead;
    if (typeof n === 'number') listeners.get(jobId)?.(n);
  });
  // One token per submitting run: job ids never collide with an earlier run's.
  const token = `${hostname()}-${process.pid}-${Date.now().toString(36)}`;
  let submitted = 0;
  const pending = new Set<string>();
  const attempts = opts.attempts ?? 3;
  const run: PartitionRunner = async (job, progress) => {
    const id = `${token}-${job.index}-${submitted++}`;
    if (progress) listeners.set(id, progress);
    pending.add(id);
    try {
      const added = await queue.add(
        `partition ${job.index + 1}`,
        { job: encodeJob(job), version: VERSION },
        {
          jobId: id,
          attempts,
          backoff: { type: 'fixed', delay: 1000 },
          removeOnComplete: { age: 3600 },
          removeOnFail: { age: 7 * 86_400 },
        },
      );
      return (await added.waitUntilFinished(events)) as PartitionResult;
    } catch (e) {
      throw new Error(`xrate: queue job ${id}, tried up to ${attempts} times: ${(e as Error).message.replace(/^xrate: /, '')}`);
    } finally {
      listeners.delete(id);
      pending.delete(id);
    }
  };
  return {
    run,
    workers: async () => (await queue.getWorkers()).length,
    cancel: async () => {
      let removed = 0;
      // A job a worker holds is locked and stays; it ends on its own, and its file is removed with the others.
      for (const id of pending) removed += await queue.remove(id);
      return removed;
    },
    close: async () => {
      await events.close();
      await queue.close();
      conn.disconnect();
      eventsConn.disconnect();
    },
  };
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
  /** Runs one partition (the CLI: in a worker thread, so the lock is renewed while it runs). */
  run: PartitionRunner;
  /** Told when a partition starts, ends or fails. */
  log?: (line: string) => void;
}

/** A running queue worker. */
export interface QueueWorker {
  /** Stops taking jobs and waits for the running ones. */
  close(): Promise<void>;
}

/**
 * Takes partitions from the queue and replays each with `run` into a file of its own attempt,
 * renamed to the job's database when complete (see the module description).
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
  const worker = new Worker(
    opts.name ?? DEFAULT_QUEUE,
    async (bj: Job<{ job: string; version?: string }>) => {
      // Another version may compute other outputs: this attempt fails (a worker of its version may take the next).
      if (bj.data.version !== VERSION)
        throw new Error(`xrate: the partition was submitted by xrate ${bj.data.version ?? '(unknown)'}, this worker is xrate ${VERSION}`);
      const job = decodeJob(bj.data.job);
      const mine = `${job.db}.attempt-${hostname()}-${process.pid}-${bj.attemptsStarted}`;
      removeDb(mine);
      const name = `partition ${job.index + 1}`;
      log(`${name} (job ${bj.id}, attempt ${bj.attemptsStarted}): started`);
      let last = 0;
      try {
        const result = await opts.run({ ...job, db: mine }, (eventsRead) => {
          const t = Date.now();
          if (t - last < 500) return;
          last = t;
          void bj.updateProgress({ eventsRead }).catch(() => {});
        });
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
        log(`${name} (job ${bj.id}): failed: ${(e as Error).message}`);
        throw e;
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
  worker.on('error', (e) => log(`queue error: ${e.message}`));
  await worker.waitUntilReady();
  return {
    close: async () => {
      await worker.close();
      conn.disconnect();
    },
  };
}
