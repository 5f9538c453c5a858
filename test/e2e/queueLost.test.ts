/**
 * The queue's Redis lost in the middle of a `xrate replay --queue` run (docs/parallel.md, "Redis
 * lost"), with a real `redis-server` killed by SIGKILL and real `xrate worker` processes. Not back
 * within `--queue-wait`: the submitter and the worker each end with a message naming Redis and what
 * became of the run, exit 1, no database made and no partition file left. Back within the wait (a
 * server started again on the same port, without the data it had): the jobs it lost are submitted
 * again, and the run ends equal to a serial replay. A partition of a run that has ended is skipped.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import type { PartitionJob } from '../../src/replay/parallel.js';
import { encodeJob } from '../../src/distributed/queue.js';
import { VERSION } from '../../src/version.js';
import { type RedisServer, startRedis } from '../helpers/redis.js';
import { type BinProcess, binStart, cli, ensureBuilt, expectSameOutputs, SUMMARY_COUNTS } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-queue-lost-'));
const CONFIG = join(dir, 'config.json');
const LOG = join(dir, 'log.ndjson');
const SERIAL = join(dir, 'serial.sqlite');

let serialSummary: Record<string, unknown>;
const started: BinProcess[] = [];
const servers: RedisServer[] = [];

function start(argv: string[]): BinProcess {
  const p = binStart(argv);
  started.push(p);
  return p;
}

async function redisServer(port?: number): Promise<RedisServer> {
  const r = await startRedis({ port });
  servers.push(r);
  return r;
}

/** Kills the server as a crash would (no shutdown, no save). */
async function crash(r: RedisServer): Promise<void> {
  process.kill(r.pid, 'SIGKILL');
  await r.stop();
}

const counts = (s: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(SUMMARY_COUNTS.map((k) => [k, s[k]]));
const partFiles = (): string[] => readdirSync(dir).filter((f) => f.includes('.part-'));

beforeAll(async () => {
  ensureBuilt();
  writeFileSync(CONFIG, JSON.stringify({ maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 }));
  await writeLog(LOG, { seed: 34, events: 60_000, rate: 0.5, badRate: 0.01, lateRate: 0.01 });
  const r = await cli('replay', LOG, '--db', SERIAL, '--config', CONFIG, '--json');
  expect(r.code, r.err).toBe(0);
  serialSummary = JSON.parse(r.out);
}, 120_000);

afterAll(async () => {
  for (const p of started) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
  await Promise.all(started.map((p) => p.exited));
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

describe("the queue's Redis killed mid-run", () => {
  it('and not back within --queue-wait: the submitter and the worker end with a clear message, exit 1, nothing merged, no file left', async () => {
    const redis = await redisServer();
    const worker = start(['worker', '--queue', redis.url, '--queue-wait', '2s']);
    await worker.waitErr(/waiting for partitions/);
    const db = join(dir, 'lost.sqlite');
    const replay = start(['replay', LOG, '--db', db, '--config', CONFIG, '--queue', redis.url, '--queue-wait', '2s', '--workers', '3']);
    await worker.waitErr(/partition \d \(job [^)]*\): started/);
    await crash(redis);
    const shown = redis.url.replace(/[./]/g, '\\$&');
    expect(await replay.exited, replay.err()).toBe(1);
    expect(replay.err()).toMatch(new RegExp(`xrate replay: lost the queue's Redis at ${shown}: waiting up to 2 s for it\\n`));
    expect(replay.err()).toMatch(
      new RegExp(
        `\\nxrate: lost the queue's Redis at ${shown} \\(connect ECONNREFUSED [^)]*\\), and it was not back within 2 s: ` +
          `the run is stopped and nothing was merged \\(no database was made at ".*lost\\.sqlite"\\)\\n$`,
      ),
    );
    expect(await worker.exited, worker.err()).toBe(1);
    expect(worker.err()).toMatch(
      new RegExp(
        `\\nxrate worker: lost the queue's Redis at ${shown} \\(connect ECONNREFUSED [^)]*\\), and it was not back within 2 s: ` +
          'partition \\d in hand is abandoned, its file removed \\(the queue hands it to another worker if Redis comes back with it\\); stopping\\n$',
      ),
    );
    expect(existsSync(db)).toBe(false);
    expect(partFiles()).toEqual([]);
  }, 120_000);

  it('and started again within --queue-wait without its data: the lost partitions are submitted again, and the run equals the serial replay', async () => {
    const redis = await redisServer();
    const worker = start(['worker', '--queue', redis.url, '--queue-wait', '60s']);
    await worker.waitErr(/waiting for partitions/);
    const db = join(dir, 'back.sqlite');
    const replay = start([
      'replay',
      LOG,
      '--db',
      db,
      '--config',
      CONFIG,
      '--queue',
      redis.url,
      '--queue-wait',
      '60s',
      '--workers',
      '3',
      '--json',
    ]);
    await worker.waitErr(/partition \d \(job [^)]*\): started/);
    await crash(redis);
    // Both have seen it go before it comes back, empty.
    await replay.waitErr(/lost the queue's Redis/);
    await worker.waitErr(/lost the queue's Redis/);
    await redisServer(redis.port);
    expect(await replay.exited, replay.err()).toBe(0);
    expect(replay.err()).toMatch(/xrate replay: the queue's Redis is back after \d+\.\d s\n/);
    expect(replay.err()).toMatch(/xrate replay: the queue had lost [123] of this run's partitions: submitted again\n/);
    expect(worker.err()).toMatch(/xrate worker: the queue's Redis is back after \d+\.\d s\n/);
    expect(counts(JSON.parse(replay.out()))).toEqual(counts(serialSummary));
    expectSameOutputs(db, SERIAL);
    expect(partFiles()).toEqual([]);
    worker.proc.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  }, 180_000);
});

describe("interrupted while the queue's Redis is away", () => {
  it('the submitter (SIGINT) and the worker (SIGTERM) stop at once, leaving no file', async () => {
    const redis = await redisServer();
    const worker = start(['worker', '--queue', redis.url, '--queue-wait', '10m']);
    await worker.waitErr(/waiting for partitions/);
    const db = join(dir, 'interrupted.sqlite');
    const replay = start(['replay', LOG, '--db', db, '--config', CONFIG, '--queue', redis.url, '--queue-wait', '10m', '--workers', '3']);
    await worker.waitErr(/partition \d \(job [^)]*\): started/);
    await crash(redis);
    await replay.waitErr(/lost the queue's Redis/);
    await worker.waitErr(/lost the queue's Redis/);
    replay.proc.kill('SIGINT');
    worker.proc.kill('SIGTERM');
    expect(await replay.exited, replay.err()).toBe(130);
    expect(await worker.exited, worker.err()).toBe(0);
    expect(existsSync(db)).toBe(false);
    expect(partFiles()).toEqual([]);
  }, 120_000);
});

describe('a partition of a run that has ended', () => {
  it('is skipped by the worker, once, and writes nothing', async () => {
    const redis = await redisServer();
    const worker = start(['worker', '--queue', redis.url, '--queue-name', 'ended']);
    await worker.waitErr(/waiting for partitions/);
    const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
    const eventsConn = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue('ended', { connection: conn });
    const events = new QueueEvents('ended', { connection: eventsConn, lastEventId: '0-0' });
    try {
      await events.waitUntilReady();
      const job: PartitionJob = {
        index: 0,
        db: join(dir, 'ended.sqlite'),
        inputs: [LOG],
        partition: { start: { input: 0, line: 0 }, metadata: [] },
      };
      // A run whose mark is gone (it ended, or gave the queue up) while its job waited.
      const added = await queue.add('partition 1', { job: encodeJob(job), version: VERSION, run: 'gone-run' }, { attempts: 3 });
      await expect(added.waitUntilFinished(events)).rejects.toThrow(/the run that submitted the partition has ended/);
      expect(await queue.getJobState(added.id!)).toBe('failed');
      expect((await queue.getJob(added.id!))?.attemptsMade).toBe(1);
      expect(worker.err()).toMatch(/partition 1 \(job [^)]*\): skipped: the run that submitted it has ended\n/);
      expect(worker.err()).not.toMatch(/: started/);
      expect(existsSync(job.db)).toBe(false);
    } finally {
      await events.close();
      await queue.close();
      conn.disconnect();
      eventsConn.disconnect();
    }
    worker.proc.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  }, 60_000);
});
