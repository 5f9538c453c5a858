/**
 * replay/parquet: `xrate replay FILE.parquet --db FILE` as a user runs it, FILE.parquet being the
 * sparse bench log (replay/db-sparse) converted once with `xrate convert` into the bench
 * directory. Each sample runs the built CLI in a child process (bench/replay-db.ts' runCli: wall
 * time from spawn to exit, peak RSS by bench/maxrss.mjs); before each, `ndjson_scan` scans the
 * NDJSON log the Parquet file was converted from, and the entry records ratio = xrate seconds /
 * C seconds (medians), target <= 2x. The conversion's own time, size and peak RSS are recorded
 * once (when the file is made).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildC, ndjsonScan } from './c-limits.js';
import { benchLog, ensureCliBuilt, median, p99, runCli } from './replay-db.js';
import type { BenchResult } from './run.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SAMPLES = 2;
/** Goals: a Parquet replay <= 2x ndjson_scan of the same events as NDJSON, within 256 MB of RSS. */
const RATIO_TARGET = 2;
const RSS_TARGET_MB = 256;

/** Converts `log` to `out` once: the conversion's wall seconds and peak RSS (undefined when the file was there). */
function convertOnce(log: string, out: string, dir: string): { seconds: number; rssMb: number } | undefined {
  if (existsSync(out)) return undefined;
  const rssFile = join(dir, 'replay-parquet-convert.rss');
  const tmp = `${out}.part.parquet`;
  const args = ['--import', pathToFileURL(join(ROOT, 'bench', 'maxrss.mjs')).href, join(ROOT, 'bin', 'xrate.js')];
  args.push('convert', log, '--out', tmp, '--quiet');
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, XRATE_BENCH_RSS_FILE: rssFile } });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`xrate convert ${log} exited with ${r.status}: ${r.stderr || r.error?.message}`);
  renameSync(tmp, out);
  const rssMb = Number(readFileSync(rssFile, 'utf8')) / 1024;
  return { seconds, rssMb };
}

/** replay/parquet, with its ratio to ndjson_scan on the NDJSON log it was converted from. */
export async function replayParquetBench(dir: string): Promise<BenchResult> {
  ensureCliBuilt();
  const { path: log, spec } = await benchLog('sparse', dir);
  const pq = join(dir, `replay-parquet-sparse-seed${spec.seed}.parquet`);
  const conv = convertOnce(log, pq, dir);
  const scan = buildC('ndjson_scan', dir);
  const cSeconds: number[] = [];
  const xSeconds: number[] = [];
  let rssMb = 0;
  let dbBytes = 0;
  let cLines: number | undefined;
  for (let i = 0; i < SAMPLES; i++) {
    if ('exe' in scan) {
      const c = ndjsonScan(scan.exe, log);
      cSeconds.push(c.seconds);
      cLines = c.lines;
    }
    const x = runCli(pq, join(dir, 'replay-parquet.sqlite'), join(dir, 'replay-parquet.rss'));
    xSeconds.push(x.seconds);
    rssMb = Math.max(rssMb, x.rssMb);
    dbBytes = x.dbBytes;
  }
  const med = median(xSeconds);
  const r: BenchResult = {
    name: 'replay/parquet',
    unit: 's',
    median: med,
    p99: p99(xSeconds),
    samples: SAMPLES,
    events: spec.events,
    events_per_s: spec.events / med,
    log: { span: spec.span, rate: spec.rate, exchanges: spec.exchanges, assets: spec.assets, seed: spec.seed },
    log_bytes: statSync(log).size,
    parquet_bytes: statSync(pq).size,
    db_bytes: dbBytes,
    peak_rss_mb: rssMb,
    rss_target_mb: RSS_TARGET_MB,
    ratio_to: 'ndjson_scan',
    ratio_target: RATIO_TARGET,
  };
  if (conv !== undefined) {
    r.convert_s = conv.seconds;
    r.convert_peak_rss_mb = conv.rssMb;
  }
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
