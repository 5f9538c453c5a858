/**
 * The built command, an input truncated by the test while the run reads it: serially, with
 * `--workers 2` and through the queue (a real redis-server and a real `xrate worker`), the run exits
 * 1 naming the file and what changed, and nothing is left as a complete run (a serial run's row says
 * `failed`; a partitioned run makes no database).
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { type RedisServer, startRedis } from '../helpers/redis.js';
import { type BinProcess, binStart, ensureBuilt } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-input-changed-'));
const SOURCE = join(dir, 'source.ndjson');
const CONFIG = join(dir, 'config.json');
let redis: RedisServer;
const started: BinProcess[] = [];
let n = 0;

beforeAll(async () => {
  ensureBuilt();
  writeFileSync(CONFIG, JSON.stringify({ maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 }));
  await writeLog(SOURCE, { seed: 21, events: 200_000, rate: 2 });
  redis = await startRedis();
}, 120_000);

afterAll(async () => {
  for (const p of started) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGTERM');
  await Promise.all(started.map((p) => p.exited));
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves once `seen()` is true (checked every 2 ms), or rejects after `ms`. */
async function until(seen: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!seen()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Whether a file whose name starts with `prefix` exists beside `path`. */
function beside(path: string, prefix: string): boolean {
  return readdirSync(dirname(path)).some((f) => f.startsWith(prefix));
}

/** Runs `xrate replay LOG --db DB ...extra`, truncating LOG to 40 % once `started(db)` is true. */
async function truncatedRun(
  extra: string[],
  started: (db: string) => boolean,
): Promise<{ code: number | NodeJS.Signals; err: string; log: string; db: string; size: number }> {
  n++;
  const log = join(dir, `log-${n}.ndjson`);
  const db = join(dir, `out-${n}.sqlite`);
  copyFileSync(SOURCE, log);
  const size = statSync(log).size;
  const p = binStart(['replay', log, '--db', db, '--config', CONFIG, ...extra]);
  await until(() => started(db) || p.proc.exitCode !== null);
  truncateSync(log, Math.floor(size * 0.4));
  const code = await p.exited;
  return { code, err: p.err(), log, db, size };
}

describe('an input truncated while the command reads it', () => {
  it('serially: exit 1 naming the file and the sizes; the run row says failed', async () => {
    const r = await truncatedRun([], (db) => existsSync(db));
    expect(r.code, r.err).toBe(1);
    expect(r.err).toContain(
      `input "${r.log}" changed while the replay read it: its size went from ${r.size} to ${Math.floor(r.size * 0.4)} bytes`,
    );
    const h = new Database(r.db, { readonly: true });
    const runs = h.prepare('SELECT status FROM runs').all() as { status: string }[];
    h.close();
    expect(runs).toHaveLength(1);
    expect(runs[0].status).toMatch(/^failed: input ".*" changed while the replay read it/);
  });

  it('with --workers 2: exit 1 naming the file, and no database made', async () => {
    const r = await truncatedRun(['--workers', '2'], (db) => beside(db, `${basename(db)}.part-`));
    expect(r.code, r.err).toBe(1);
    expect(r.err).toContain(`input "${r.log}" changed while the replay read it`);
    // A partition marks the file as it starts, which can be while it is being truncated: then the
    // change it names can be the modification alone (seen once under load: its mark had the new
    // size and the old time). The run fails either way, and its parent marked the file first.
    expect(r.err).toMatch(
      new RegExp(`its size went from ${r.size} to ${Math.floor(r.size * 0.4)} bytes|it was modified at \\S+ \\(was \\S+\\)`),
    );
    expect(existsSync(r.db)).toBe(false);
  });

  it('through the queue: exit 1 naming the file, and no database made', async () => {
    const w = binStart(['worker', '--queue', redis.url, '--queue-name', 'input-changed']);
    started.push(w);
    await w.waitErr(/waiting for partitions/);
    const r = await truncatedRun(['--workers', '2', '--queue', redis.url, '--queue-name', 'input-changed'], (db) =>
      beside(db, `${basename(db)}.part-`),
    );
    expect(r.code, r.err).toBe(1);
    expect(r.err).toContain(`input "${r.log}" changed while the replay read it`);
    expect(existsSync(r.db)).toBe(false);
  });
});
