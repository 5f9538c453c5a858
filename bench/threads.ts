/**
 * replay/threads-1 and replay/threads-2: the default `xrate replay LOG --db FILE --quiet` on the
 * sparse and dense logs of replay/db-*, with `--threads 1` (reading, parsing and the engine on one
 * thread) and `--threads 2` (reading and parsing in a worker thread), in alternating rounds, each
 * round with `ndjson_scan` of the same file before it. Each entry records its ratio to
 * `ndjson_scan` (medians), the speed-up of two threads over one, and whether the two databases
 * of the last round hold the same outputs (compareReplays: every output table, row for row).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { compareReplays, replaysEqual } from '../src/io/compareReplays.js';
import { buildC, ndjsonScan } from './c-limits.js';
import { benchLog, ensureCliBuilt, LOGS, median, p99, runCli } from './replay-db.js';
import type { BenchResult } from './run.js';

const ROUNDS = 2;
const THREADS = [1, 2] as const;

/** replay/threads-1 and replay/threads-2 on one log (`kind`). */
async function threadsBench(kind: keyof typeof LOGS, dir: string): Promise<BenchResult[]> {
  ensureCliBuilt();
  const { path: log } = await benchLog(kind, dir);
  const scan = buildC('ndjson_scan', dir);
  const c: number[] = [];
  const s: Record<number, number[]> = { 1: [], 2: [] };
  const rss: Record<number, number> = { 1: 0, 2: 0 };
  const db = (n: number) => join(dir, `threads-${kind}-${n}.sqlite`);
  for (let round = 0; round < ROUNDS; round++) {
    if ('exe' in scan) c.push(ndjsonScan(scan.exe, log).seconds);
    // Alternate which thread count runs first.
    const order = round % 2 === 0 ? THREADS : [...THREADS].reverse();
    for (const n of order) {
      const r = runCli(log, db(n), join(dir, `threads-${kind}-${n}.rss`), ['--threads', String(n)], round === ROUNDS - 1);
      s[n].push(r.seconds);
      rss[n] = Math.max(rss[n], r.rssMb);
    }
  }
  const equal = replaysEqual(compareReplays(db(1), db(2)));
  for (const n of THREADS) for (const f of [db(n), `${db(n)}-wal`, `${db(n)}-shm`]) rmSync(f, { force: true });
  const cMed = c.length > 0 ? median(c) : undefined;
  const spec = LOGS[kind];
  return THREADS.map((n) => {
    const med = median(s[n]);
    const r: BenchResult = {
      name: `replay/threads-${n}${kind === 'sparse' ? '' : `-${kind}`}`,
      unit: 's',
      median: med,
      p99: p99(s[n]),
      samples: ROUNDS,
      events: spec.events,
      events_per_s: spec.events / med,
      log: { kind, span: spec.span, rate: spec.rate, seed: spec.seed },
      threads: n,
      peak_rss_mb: rss[n],
      rss_target_mb: 256,
      speedup_over_1: median(s[1]) / med,
      outputs_equal_to_threads_1: equal,
      all_s: s[n],
      ratio_to: 'ndjson_scan',
      ratio_target: 5,
    };
    if (cMed !== undefined) {
      r.c = { program: 'ndjson_scan', seconds: cMed };
      r.ratio = med / cMed;
    } else {
      r.ratio = null;
      r.ratio_reason = 'reason' in scan ? scan.reason : 'ndjson_scan not built';
    }
    return r;
  });
}

/** The threads entries on the sparse and the dense log. */
export async function threadsBenches(dir: string): Promise<BenchResult[]> {
  return [...(await threadsBench('sparse', dir)), ...(await threadsBench('dense', dir))];
}
