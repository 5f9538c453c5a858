/**
 * cli/rate and cli/help: how long a short command takes as a user runs it, the built CLI in a
 * child process from its start to its exit. `xrate rate DB --at T --pair BTC/USD` on a database
 * of the demo log (made once per bench directory, as `npm start` makes it) and `xrate --help`, in
 * alternating runs: most of their time is Node's start and the loading of the modules the command
 * imports (docs/performance.md), which a static import of the replay's readers grows by a third.
 * Each entry also gives the fastest run (`min_ms`).
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensureCliBuilt, median, p99, ROOT } from './replay-db.js';
import type { BenchResult } from './run.js';

const RUNS = 15;
const AT = '2024-03-01T05:54:10Z';

/** Wall milliseconds of `xrate ...args`; throws when it fails. */
function timed(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'xrate.js'), ...args], { cwd: ROOT, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`cli bench: xrate ${args.join(' ')} exited with ${r.status}:\n${r.stderr}`);
  return ms;
}

/** The cli/rate and cli/help entries (see the module description). */
export function cliBenches(dir: string): BenchResult[] {
  ensureCliBuilt();
  const db = join(dir, 'cli-demo.sqlite');
  if (!existsSync(db)) timed(['replay', join(ROOT, 'fixtures', 'demo', 'demo.ndjson.gz'), '--db', db, '--quiet']);
  const rate = ['rate', db, '--at', AT, '--pair', 'BTC/USD'];
  // One run of each first: the files they read are then in the page cache for every timed run.
  timed(rate);
  timed(['--help']);
  const rates: number[] = [];
  const helps: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    rates.push(timed(rate));
    helps.push(timed(['--help']));
  }
  const entry = (name: string, xs: number[]): BenchResult => ({
    name,
    unit: 'ms',
    median: median(xs),
    p99: p99(xs),
    samples: xs.length,
    min_ms: Math.min(...xs),
  });
  return [entry('cli/rate', rates), entry('cli/help', helps)];
}
