/**
 * Partitioned replays on a BullMQ queue (docs/parallel.md, "Many machines"), with a real Redis
 * server and real `xrate worker` processes: the merged database equals a serial replay's, table by
 * table, row for row; a worker killed mid-partition loses nothing; a partition that fails names its
 * input and line, and leaves no half-merged database.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { decodeJob, encodeJob } from '../../src/distributed/queue.js';
import { type PartitionJob, type PartitionRunner, replayParallel, runPartitionHere } from '../../src/replay/parallel.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { type BinProcess, bin, binStart, cli, ensureBuilt, expectSameOutputs, SUMMARY_COUNTS } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-queue-'));
/** Short windows (a warm-up of about 2 hours), so a log of a day or two has several partitions. */
const CONFIG = join(dir, 'config.json');
const LOG = join(dir, 'log.ndjson');
const SERIAL = join(dir, 'serial.sqlite');

let redis: RedisServer;
let serialRows: Record<string, number>;
let serialSummary: Record<string, unknown>;
const started: BinProcess[] = [];

/** Starts an `xrate worker` on the test's queue. */
function worker(...extra: string[]): BinProcess {
  const w = binStart(['worker', '--queue', redis.url, ...extra]);
  started.push(w);
  return w;
}

async function stop(w: BinProcess): Promise<number | NodeJS.Signals> {
  if (w.proc.exitCode === null && w.proc.signalCode === null) w.proc.kill('SIGTERM');
  return w.exited;
}

/** What a serial and a partitioned replay's summaries share. */
function counts(s: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(SUMMARY_COUNTS.map((k) => [k, s[k]]));
}

beforeAll(async () => {
  ensureBuilt();
  redis = await startRedis();
  writeFileSync(CONFIG, JSON.stringify({ maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 }));
  await writeLog(LOG, { seed: 33, events: 60_000, rate: 0.5, badRate: 0.01, lateRate: 0.01 });
  const r = await cli('replay', LOG, '--db', SERIAL, '--config', CONFIG, '--json');
  expect(r.code, r.err).toBe(0);
  serialSummary = JSON.parse(r.out);
  serialRows = expectSameOutputs(SERIAL, SERIAL);
}, 120_000);

afterAll(async () => {
  await Promise.all(started.map(stop));
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a partition job on the queue', () => {
  it('travels as JSON with the numbers JSON cannot hold', () => {
    const job: PartitionJob = {
      index: 1,
      db: '/shared/out.sqlite.part-1',
      inputs: ['/shared/a.ndjson'],
      from: 1_700_000_000_000_000,
      to: 1_700_003_599_999_999,
      config: { maxRateAgeSeconds: 1800 },
      partition: {
        start: { input: 0, line: 12 },
        metadata: [],
        clockUs: Number.NEGATIVE_INFINITY,
        markets: ['X_SPOT_A_B'],
        track: ['A/B'],
      },
    };
    const back = decodeJob(encodeJob(job));
    expect(back).toEqual(job);
    expect(back.partition.clockUs).toBe(Number.NEGATIVE_INFINITY);
  });
});

describe('bad queue flags', () => {
  it('are usage errors (exit 2); a queue that cannot be reached is exit 1 with the reason', async () => {
    const cases: [string[], number, RegExp][] = [
      [['worker'], 2, /^xrate: worker needs --queue redis:\/\/HOST:PORT\n$/],
      [['worker', '--queue', 'localhost:6379'], 2, /--queue must be a redis:\/\/ URL, got "localhost:6379"/],
      [['worker', '--queue', redis.url, '--lock-ms', '10'], 2, /--lock-ms must be an integer in 1000\.\.3600000, got "10"/],
      [['replay', LOG, '--queue', 'http://x'], 2, /--queue must be a redis:\/\/ URL, got "http:\/\/x"/],
      [['replay', LOG, '--attempts', '2'], 2, /--queue-name and --attempts go with --queue/],
      [['replay', LOG, '--queue', redis.url, '--attempts', '0'], 2, /--attempts must be an integer in 1\.\.100, got "0"/],
      [
        ['replay', LOG, '--queue', redis.url, '--from', '2024-03-01T00:00:00Z'],
        2,
        /partitioned replays \(--workers, --queue\) do not work with --from yet/,
      ],
      [
        ['replay', LOG, '--db', join(dir, 'nowhere.sqlite'), '--queue', 'redis://127.0.0.1:1'],
        1,
        /^xrate: cannot reach the queue at redis:\/\/127\.0\.0\.1:1: connect ECONNREFUSED/,
      ],
    ];
    for (const [argv, code, re] of cases) {
      const r = await cli(...argv);
      expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(code);
      expect(r.err).toMatch(re);
    }
    expect(existsSync(join(dir, 'nowhere.sqlite'))).toBe(false);
  });
});

describe('xrate worker', () => {
  it('refuses a partition submitted by another version of xrate', async () => {
    const w = worker('--queue-name', 'versions');
    await w.waitErr(/waiting for partitions/);
    const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
    // QueueEvents reads on a duplicate of the connection it is given: this one is the test's to close,
    // or it would retry (and log) once the server stops at the end of the file.
    const eventsConn = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue('versions', { connection: conn });
    const events = new QueueEvents('versions', { connection: eventsConn, lastEventId: '0-0' });
    try {
      await events.waitUntilReady();
      const job: PartitionJob = {
        index: 0,
        db: join(dir, 'never.sqlite'),
        inputs: [LOG],
        partition: { start: { input: 0, line: 0 }, metadata: [] },
      };
      const added = await queue.add('partition 0', { job: encodeJob(job), version: '0.0.0-other' }, { attempts: 1 });
      await expect(added.waitUntilFinished(events)).rejects.toThrow(/submitted by xrate 0\.0\.0-other, this worker is xrate \d+\.\d+\.\d+/);
      expect(existsSync(join(dir, 'never.sqlite'))).toBe(false);
    } finally {
      await events.close();
      await queue.close();
      conn.disconnect();
      eventsConn.disconnect();
      await stop(w);
    }
  }, 60_000);
});

describe('xrate replay --queue with two xrate worker processes', () => {
  it('merges to the serial replay, every table row for row, with the serial counts', async () => {
    const workers = [worker(), worker()];
    await Promise.all(workers.map((w) => w.waitErr(/waiting for partitions/)));
    const db = join(dir, 'queue.sqlite');
    const r = binStart(['replay', LOG, '--db', db, '--config', CONFIG, '--queue', redis.url, '--workers', '3', '--json']);
    expect(await r.exited, r.err()).toBe(0);
    const summary = JSON.parse(r.out());
    expect(counts(summary)).toEqual(counts(serialSummary));
    expectSameOutputs(db, SERIAL);
    expect(serialRows.rates).toBeGreaterThan(1000);
    expect(serialRows.rejects).toBeGreaterThan(100);
    expect(serialRows.metric_points).toBeGreaterThan(1000);
    // Both workers took partitions, and no partition file is left beside the database.
    const took = workers.map((w) => (w.err().match(/: done,/g) ?? []).length);
    expect(took.reduce((a, b) => a + b)).toBeGreaterThanOrEqual(3);
    expect(took.every((n) => n > 0)).toBe(true);
    expect(readdirSync(dir).filter((f) => f.includes('.part-'))).toEqual([]);
    // SIGTERM: each worker says so and exits 0.
    expect(await Promise.all(workers.map(stop))).toEqual([0, 0]);
    for (const w of workers) expect(w.err()).toMatch(/xrate worker: SIGTERM: finishing the partitions in hand, then stopping/);
  }, 120_000);

  it('loses nothing when a worker is killed mid-partition: another takes the partition, and the result is the same', async () => {
    const doomed = worker('--lock-ms', '2000');
    await doomed.waitErr(/waiting for partitions/);
    const db = join(dir, 'killed.sqlite');
    const r = binStart(['replay', LOG, '--db', db, '--config', CONFIG, '--queue', redis.url, '--workers', '2', '--json']);
    await doomed.waitErr(/partition \d \(job [^)]*\): started/);
    // Let it write part of its partition, then kill it without warning.
    await new Promise((res) => setTimeout(res, 300));
    const killedJob = /partition (\d) \(job ([^,]+), attempt 1\): started/.exec(doomed.err());
    expect(killedJob).not.toBeNull();
    expect(doomed.err()).not.toMatch(/: done,/);
    doomed.proc.kill('SIGKILL');
    expect(await doomed.exited).toBe('SIGKILL');
    const rescuer = worker('--lock-ms', '2000');
    expect(await r.exited, r.err()).toBe(0);
    // The rescuer ran the killed partition again as a new attempt.
    expect(rescuer.err()).toMatch(new RegExp(`partition ${killedJob![1]} \\(job ${killedJob![2]}, attempt 2\\): started`));
    expectSameOutputs(db, SERIAL);
    expect(counts(JSON.parse(r.out()))).toEqual(counts(serialSummary));
    expect(readdirSync(dir).filter((f) => f.includes('.part-'))).toEqual([]);
    await stop(rescuer);
  }, 120_000);
});

describe('xrate replay --queue interrupted', () => {
  it('takes its partitions off the queue, so no worker replays them for nobody', async () => {
    const db = join(dir, 'interrupted.sqlite');
    const r = binStart([
      'replay',
      LOG,
      '--db',
      db,
      '--config',
      CONFIG,
      '--queue',
      redis.url,
      '--queue-name',
      'interrupted',
      '--workers',
      '3',
    ]);
    const conn = new Redis(redis.url);
    try {
      for (let t = 0; (await conn.llen('bull:interrupted:wait')) < 3; t++) {
        if (t > 600) throw new Error(`the partitions were not queued:\n${r.err()}`);
        await new Promise((res) => setTimeout(res, 100));
      }
      r.proc.kill('SIGINT');
      expect(await r.exited).toBe(130);
      expect(r.err()).toMatch(/SIGINT: removing this run's partitions from the queue/);
      expect(await conn.llen('bull:interrupted:wait')).toBe(0);
    } finally {
      conn.disconnect();
    }
    expect(existsSync(db)).toBe(false);
  }, 60_000);
});

describe('a run that fails', () => {
  /** The log gzipped, and the same cut short at 80 %: the later partition cannot read it to its end. */
  const gz = join(dir, 'log.ndjson.gz');
  let whole: Buffer;
  let cut: Buffer;
  beforeAll(() => {
    whole = gzipSync(readFileSync(LOG));
    cut = whole.subarray(0, Math.floor(whole.length * 0.8));
  });

  it('in the pre-scan names its input, and no database is made', () => {
    writeFileSync(gz, cut);
    const db = join(dir, 'failed-prescan.sqlite');
    const r = bin(['replay', gz, '--db', db, '--config', CONFIG, '--workers', '2'], { timeout: 120_000 });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /^xrate: reading the inputs to plan the partitions failed: cannot read ".*log\.ndjson\.gz" \(gzip data broken/,
    );
    expect(existsSync(db)).toBe(false);
  });

  it('in a partition names the partition, its input and line; nothing is merged, and an existing database is left as it was', async () => {
    for (const fresh of [true, false]) {
      writeFileSync(gz, whole);
      const db = join(dir, `failed-${fresh}.sqlite`);
      if (!fresh) copyFileSync(SERIAL, db);
      // The input changes under the run once partition 1 is done (shared storage gone wrong).
      let firstDone: () => void = () => {};
      const first = new Promise<void>((res) => {
        firstDone = res;
      });
      const run: PartitionRunner = async (job, progress) => {
        if (job.index === 0) {
          const r = await runPartitionHere(job, progress);
          firstDone();
          return r;
        }
        await first;
        writeFileSync(gz, cut);
        return runPartitionHere(job, progress);
      };
      const err = await replayParallel({
        inputs: [gz],
        db,
        config: JSON.parse(readFileSync(CONFIG, 'utf8')),
        ownMetrics: true,
        workers: 2,
        run,
      }).then(
        () => undefined,
        (e: Error) => e,
      );
      // The partition failed on an unreadable input: the error is the input's.
      expect(err).toMatchObject({ code: 'input' });
      expect(err?.message).toMatch(
        /^partition 2 of 2 \(event time \d{4}-.* to end\) failed: cannot read ".*log\.ndjson\.gz" \(gzip data broken .*\): unexpected end of file; the last line read whole was line \d+$/,
      );
      expect(readdirSync(dir).filter((f) => f.includes('.part-'))).toEqual([]);
      if (fresh) expect(existsSync(db)).toBe(false);
      else expectSameOutputs(db, SERIAL);
    }
  }, 120_000);

  it('on the queue is tried --attempts times, then names the partition, its input and line; no database is made', async () => {
    writeFileSync(gz, whole);
    const db = join(dir, 'failed-queue.sqlite');
    const r = binStart(['replay', gz, '--db', db, '--config', CONFIG, '--queue', redis.url, '--workers', '2', '--attempts', '2']);
    // No worker yet: once both partitions wait on the queue, the input is cut short, then a worker starts.
    const conn = new Redis(redis.url);
    try {
      for (let t = 0; (await conn.llen('bull:xrate-partitions:wait')) < 2; t++) {
        if (t > 600) throw new Error(`the partitions were not queued:\n${r.err()}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    } finally {
      conn.disconnect();
    }
    writeFileSync(gz, cut);
    const w = worker();
    expect(await r.exited, r.err()).toBe(1);
    expect(r.err()).toMatch(
      /xrate: partition 2 of 2 \(event time .* to end\) failed: queue job \S+, tried up to 2 times: cannot read ".*log\.ndjson\.gz" \(gzip data broken .*; the last line read whole was line \d+/,
    );
    expect(existsSync(db)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes('.part-'))).toEqual([]);
    expect((w.err().match(/partition 2 \(job [^)]*\): failed:/g) ?? []).length).toBe(2);
    await stop(w);
  }, 120_000);
});
