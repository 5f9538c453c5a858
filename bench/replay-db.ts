/**
 * replay/db-sparse and replay/db-dense: the default `xrate replay LOG --db FILE` as a user runs it.
 *
 * Each sample runs the built CLI, `node bin/xrate.js replay LOG --db FILE --quiet`, in a child
 * process with no other option, so OHLC is stored for every direct pair at the default periods.
 * The figure is the wall time from spawn to exit (Node start-up included); the child's peak RSS is
 * recorded by bench/maxrss.mjs, preloaded with `--import`. Before each sample `ndjson_scan` (see
 * bench/c-limits.ts) scans the same file, and the entry records ratio = xrate seconds / C seconds
 * (medians over the samples).
 *
 * dist/ is rebuilt first (`npm run build`) when a file under src/ is newer than dist/cli/main.js,
 * so the figure is always that of the current source.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeLog } from '../scripts/gen-log.js';
import { buildC, ndjsonScan } from './c-limits.js';
import type { BenchResult } from './run.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SAMPLES = 2;
/** Goals: a default replay <= 5x ndjson_scan, and no replay above 256 MB of RSS. */
const RATIO_TARGET = 5;
const RSS_TARGET_MB = 256;
/** Goal: the own metrics (on by default) cost a replay at most 15 %. */
const OWN_METRICS_TARGET = 0.15;

/** The two logs (generated once per bench directory with scripts/gen-log.ts). */
export const LOGS = {
  // 4 days at 4 events/s over 19 markets (3 exchanges, 5 assets): long quiet stretches.
  sparse: { seed: 11, events: 4 * 86_400 * 4, rate: 4, exchanges: 3, assets: 5, span: '4 days' },
  // 6 hours at 60 events/s over 258 markets (12 exchanges, 20 assets).
  dense: { seed: 12, events: 6 * 3_600 * 60, rate: 60, exchanges: 12, assets: 20, span: '6 hours' },
} as const;

function newestMtime(dir: string): number {
  let t = 0;
  for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) t = Math.max(t, statSync(join(dir, f)).mtimeMs);
  return t;
}

let cliChecked = false;

/** Builds dist/ when it is missing or older than src/. */
export function ensureCliBuilt(): void {
  if (cliChecked) return;
  const main = join(ROOT, 'dist', 'cli', 'main.js');
  if (!existsSync(main) || statSync(main).mtimeMs < newestMtime(join(ROOT, 'src'))) {
    console.log('replay/db: dist/ is older than src/, running npm run build');
    const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`replay/db: npm run build failed:\n${r.stdout}${r.stderr}`);
  }
  cliChecked = true;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest-rank 99th percentile (the slowest sample below 100 samples). */
export function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.ceil(0.99 * s.length) - 1];
}

/** One run of the CLI (`xrate replay LOG --db DB --quiet` and `extra`): wall seconds and peak RSS in MB; `keep` leaves the database. */
export function runCli(
  log: string,
  db: string,
  rssFile: string,
  extra: readonly string[] = [],
  keep = false,
): { seconds: number; rssMb: number; dbBytes: number } {
  for (const f of [db, `${db}-wal`, `${db}-shm`, `${db}-journal`, rssFile]) rmSync(f, { force: true });
  const args = ['--import', pathToFileURL(join(ROOT, 'bench', 'maxrss.mjs')).href, join(ROOT, 'bin', 'xrate.js')];
  args.push('replay', log, '--db', db, '--quiet', ...extra);
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, XRATE_BENCH_RSS_FILE: rssFile } });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0)
    throw new Error(`xrate replay ${log} --db ${db} ${extra.join(' ')} exited with ${r.status}: ${r.stderr || r.error?.message}`);
  const rssMb = Number(readFileSync(rssFile, 'utf8')) / 1024;
  const dbBytes = statSync(db).size;
  if (!keep) for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
  return { seconds, rssMb, dbBytes };
}

/** The sparse or dense bench log in `dir` (generated there once). */
export async function benchLog(kind: keyof typeof LOGS, dir: string): Promise<{ path: string; spec: (typeof LOGS)[typeof kind] }> {
  const spec = LOGS[kind];
  const log = join(dir, `replay-db-${kind}-seed${spec.seed}.ndjson`);
  if (!existsSync(log)) {
    const tmp = `${log}.part`;
    const { seed, events, rate, exchanges, assets } = spec;
    await writeLog(tmp, { seed, events, rate, exchanges, assets, format: 'ndjson', start: '2024-03-01T00:00:00Z' });
    renameSync(tmp, log);
  }
  return { path: log, spec };
}

/**
 * replay/db-sparse or replay/db-dense (the default replay, xrate's own metrics stored), with its
 * ratio to ndjson_scan on the same log and, in alternating rounds, the cost of the own metrics
 * over the same replay with `--no-own-metrics`.
 */
export async function replayDbBench(kind: keyof typeof LOGS, dir: string): Promise<BenchResult> {
  ensureCliBuilt();
  const { path: log, spec } = await benchLog(kind, dir);
  const scan = buildC('ndjson_scan', dir);
  const cSeconds: number[] = [];
  const xSeconds: number[] = [];
  const offSeconds: number[] = [];
  let rssMb = 0;
  let dbBytes = 0;
  let cLines: number | undefined;
  for (let i = 0; i < SAMPLES; i++) {
    if ('exe' in scan) {
      const c = ndjsonScan(scan.exe, log);
      cSeconds.push(c.seconds);
      cLines = c.lines;
    }
    const x = runCli(log, join(dir, `replay-db-${kind}.sqlite`), join(dir, `replay-db-${kind}.rss`));
    xSeconds.push(x.seconds);
    rssMb = Math.max(rssMb, x.rssMb);
    dbBytes = x.dbBytes;
    const off = runCli(log, join(dir, `replay-db-${kind}.sqlite`), join(dir, `replay-db-${kind}.rss`), ['--no-own-metrics']);
    offSeconds.push(off.seconds);
  }
  const med = median(xSeconds);
  const r: BenchResult = {
    name: `replay/db-${kind}`,
    unit: 's',
    median: med,
    p99: p99(xSeconds),
    samples: SAMPLES,
    events: spec.events,
    events_per_s: spec.events / med,
    log: { span: spec.span, rate: spec.rate, exchanges: spec.exchanges, assets: spec.assets, seed: spec.seed },
    log_bytes: statSync(log).size,
    db_bytes: dbBytes,
    peak_rss_mb: rssMb,
    rss_target_mb: RSS_TARGET_MB,
    ratio_to: 'ndjson_scan',
    ratio_target: RATIO_TARGET,
    own_metrics_off_s: median(offSeconds),
    own_metrics_overhead: med / median(offSeconds) - 1,
    own_metrics_overhead_target: OWN_METRICS_TARGET,
  };
  if ('exe' in scan) {
    const c = median(cSeconds);
    r.c = { program: 'ndjson_scan', seconds: c, lines: cLines };
    r.ratio = med / c;
  } else {
    r.ratio = null;
    r.ratio_reason = scan.reason;
  }
  return r;
}
