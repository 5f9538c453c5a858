/**
 * replay/parallel-2 and replay/queue-2: a partitioned `xrate replay` as a user runs it,
 * against the serial replay of the same log in the same run.
 *
 * The log is 20 days at 1 event a second (scripts/gen-log.ts, seed 12). Each round runs, one
 * after the other, the `xrate` command (bin/xrate, the file npm links) as a child process:
 * - `xrate replay LOG --db FILE --quiet --workers 1` (serial),
 * - the same with `--workers 2` (two worker threads),
 * - the same with `--queue redis://… --workers 2`, two `xrate worker` processes (started once,
 *   idle in between) on a real `redis-server` started for the bench.
 * Figures are wall seconds from spawn to exit. replay/parallel-2 carries `speedup` = serial /
 * --workers 2 (target >= 1: no slower than the serial replay, which already keeps two cores busy with
 * its reader and writer threads); replay/queue-2 carries `ratio_to_workers` = queue / --workers 2
 * (target <= 1.1). Medians over the rounds.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeLog } from '../scripts/gen-log.js';
import { binStartAt } from '../test/helpers/process.js';
import { startRedis } from '../test/helpers/redis.js';
import { ensureCliBuilt, median, p99 } from './replay-db.js';
import type { BenchResult } from './run.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The command as a user runs it: a replay in partitions starts with malloc's threshold fixed there. */
const COMMAND = join(ROOT, 'bin', 'xrate');
const BIN = join(ROOT, 'bin', 'xrate.js');
const ROUNDS = 3;
const LOG = { seed: 12, events: 20 * 86_400, rate: 1, span: '20 days' } as const;

function runReplay(log: string, db: string, extra: string[]): number {
  for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
  const t0 = performance.now();
  const r = spawnSync(COMMAND, ['replay', log, '--db', db, '--quiet', ...extra], { cwd: ROOT, encoding: 'utf8' });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`xrate replay ${extra.join(' ')} exited with ${r.status}: ${r.stderr || r.error?.message}`);
  for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
  return seconds;
}

/** Both entries, from the same rounds. */
export async function parallelBench(dir: string): Promise<BenchResult[]> {
  ensureCliBuilt();
  const log = join(dir, `parallel-20d-seed${LOG.seed}.ndjson`);
  if (!existsSync(log)) {
    await writeLog(`${log}.part`, { seed: LOG.seed, events: LOG.events, rate: LOG.rate, start: '2024-03-01T00:00:00Z' });
    renameSync(`${log}.part`, log);
  }
  const redis = await startRedis();
  const workers = [0, 1].map(() => binStartAt(BIN, ROOT, ['worker', '--queue', redis.url]));
  await Promise.all(workers.map((w) => w.waitErr(/waiting for partitions/)));
  const serial: number[] = [];
  const threads: number[] = [];
  const queue: number[] = [];
  try {
    const db = join(dir, 'parallel.sqlite');
    for (let i = 0; i < ROUNDS; i++) {
      serial.push(runReplay(log, db, ['--workers', '1']));
      threads.push(runReplay(log, db, ['--workers', '2']));
      queue.push(runReplay(log, db, ['--queue', redis.url, '--workers', '2']));
    }
  } finally {
    for (const w of workers) w.proc.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    await redis.stop();
  }
  const common = {
    unit: 's',
    samples: ROUNDS,
    events: LOG.events,
    log: { span: LOG.span, rate: LOG.rate, seed: LOG.seed },
    log_bytes: statSync(log).size,
    serial_s: median(serial),
  };
  const t = median(threads);
  const q = median(queue);
  return [
    {
      name: 'replay/parallel-2',
      median: t,
      p99: p99(threads),
      ...common,
      speedup: median(serial) / t,
      speedup_target: 1,
      all_s: { serial, threads },
    },
    {
      name: 'replay/queue-2',
      median: q,
      p99: p99(queue),
      ...common,
      workers_2_s: t,
      ratio_to_workers: q / t,
      ratio_target: 1.1,
      all_s: { queue },
    },
  ];
}
