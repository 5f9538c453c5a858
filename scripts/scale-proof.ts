/**
 * The proof at scale (docs/performance.md, "A hundred million events"): a generated log of
 * 100 million events replayed end to end as NDJSON and as Parquet, serially and with
 * `--workers 2`, with the time and peak RSS of each run and the check that all four replay
 * databases hold the same outputs. Not run in CI (it needs about 25 GB of disk and an hour).
 *
 * ```
 * npm run build
 * npx tsx scripts/scale-proof.ts --dir DIR [--events 100000000] [--rate 1000] [--seed 27]
 * ```
 *
 * It writes DIR/log.ndjson with scripts/gen-log.ts (kept: a second run reuses it), converts it
 * with `xrate convert DIR/log.ndjson --out DIR/log.parquet`, then runs the built CLI in child
 * processes, one at a time: `xrate replay LOG --db DIR/NAME.sqlite --quiet [--workers 2]`. Each
 * run's wall time is measured from spawn to exit and its peak RSS is the child's own
 * (bench/maxrss.mjs, preloaded). The databases are compared with compareReplays (every output
 * table, row for row). It prints a JSON summary and writes it to DIR/scale-proof.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compareReplays, replaysEqual } from '../src/io/compareReplays.js';
import { writeLog } from './gen-log.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

interface Run {
  name: string;
  args: string[];
  seconds: number;
  peak_rss_mb: number;
  db_bytes: number;
}

/** One run of the built CLI with `args`: wall seconds and the child's peak RSS. */
function cli(name: string, args: string[], dir: string): Omit<Run, 'db_bytes'> {
  const rssFile = join(dir, `${name}.rss`);
  rmSync(rssFile, { force: true });
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(join(ROOT, 'bench', 'maxrss.mjs')).href, join(ROOT, 'bin', 'xrate.js'), ...args],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'], env: { ...process.env, XRATE_BENCH_RSS_FILE: rssFile } },
  );
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`xrate ${args.join(' ')} exited with ${r.status}: ${r.stderr}`);
  return { name, args, seconds, peak_rss_mb: Number(readFileSync(rssFile, 'utf8')) / 1024 };
}

async function main(): Promise<void> {
  const dir = resolve(arg('--dir', ''));
  if (!arg('--dir', '')) throw new Error('scale-proof: --dir DIR is required');
  const events = Number(arg('--events', '100000000'));
  const rate = Number(arg('--rate', '1000'));
  const seed = Number(arg('--seed', '27'));
  const log = join(dir, 'log.ndjson');
  if (!existsSync(log)) {
    const t0 = performance.now();
    await writeLog(`${log}.part`, { seed, events, rate, exchanges: 12, assets: 20, format: 'ndjson', start: '2024-03-01T00:00:00Z' });
    renameSync(`${log}.part`, log);
    console.error(`scale-proof: wrote ${log} in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  const parquet = join(dir, 'log.parquet');
  const conversion = existsSync(parquet) ? undefined : cli('convert', ['convert', log, '--out', parquet], dir);
  const runs: Run[] = [];
  for (const [name, input, extra] of [
    ['ndjson-serial', log, []],
    ['ndjson-workers-2', log, ['--workers', '2']],
    ['parquet-serial', parquet, []],
    ['parquet-workers-2', parquet, ['--workers', '2']],
  ] as const) {
    const db = join(dir, `${name}.sqlite`);
    for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
    const r = cli(name, ['replay', input, '--db', db, '--quiet', ...extra], dir);
    runs.push({ ...r, db_bytes: statSync(db).size });
    console.error(`scale-proof: ${name} ${r.seconds.toFixed(1)} s, peak RSS ${r.peak_rss_mb.toFixed(0)} MB`);
  }
  const base = join(dir, `${runs[0].name}.sqlite`);
  const equal = Object.fromEntries(runs.slice(1).map((r) => [r.name, replaysEqual(compareReplays(base, join(dir, `${r.name}.sqlite`)))]));
  const cpu = cpus();
  const summary = {
    machine: { cpu: cpu[0]?.model ?? 'unknown', cores: cpu.length, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version },
    date: new Date().toISOString(),
    log: { events, rate, seed, ndjson_bytes: statSync(log).size, parquet_bytes: statSync(parquet).size },
    conversion,
    runs: runs.map((r) => ({ ...r, events_per_s: events / r.seconds })),
    outputs_equal_to_ndjson_serial: equal,
  };
  writeFileSync(join(dir, 'scale-proof.json'), `${JSON.stringify(summary, null, 2)}\n`);
  console.log(JSON.stringify(summary, null, 2));
  if (!Object.values(equal).every(Boolean)) process.exitCode = 1;
}

await main();
