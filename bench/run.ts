/**
 * `npm run bench [-- --filter NAME]`: the benchmarks of docs/performance.md, written to
 * bench/results/latest.json as { header: {node, cpu, cores, date, ...}, results: [{name, unit,
 * median, p99, samples}] }.
 *
 * Units: `ms` for one operation (tick/*, cross-all/L; p99 = 99th percentile latency),
 * `events/s` and `req/s` for throughputs (median = throughput at the median latency, p99 =
 * throughput at the 99th-percentile latency, i.e. the slow tail), `MB` for memory, `s` for the
 * wall time of a whole CLI run (replay/db-*).
 *
 * Entries held against a C program (tick/L, replay/db-*; see bench/c-limits.ts) also carry
 * `ratio` (xrate figure / C figure, measured in the same run; `null` with `ratio_reason` when the
 * C programs are not available: set XRATE_PERF_DIR), `ratio_to`, `ratio_target` and `c` (the C
 * figures).
 *
 * Run with `node --expose-gc` (the npm script does) so memory/L can collect garbage first.
 */
import { spawnSync } from 'node:child_process';
import { cpus, tmpdir } from 'node:os';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import type { XrateEvent } from '../src/core/types.js';
import { replay } from '../src/replay/replay.js';
import { writeLog } from '../scripts/gen-log.js';
import { buildC, runRefresh, writeUniverseBin, type RefreshFigures } from './c-limits.js';
import { chartYearBench } from './chart.js';
import { metricsHistoryBench } from './metrics.js';
import { feedBench } from './feed.js';
import { parallelBench } from './parallel.js';
import { replayParquetBench } from './parquet.js';
import { median, replayDbBench } from './replay-db.js';
import { threadsBenches } from './threads.js';
import { vendorMergeBench } from './vendor.js';
import { cliBenches } from './cli.js';
import { applySecond, QUOTE_FRACTION, received, S, START, TRACKED, tickAt, warmEngine } from './engines.js';
import { Universe, type SizeName } from './universe.js';

export interface BenchResult {
  name: string;
  unit: string;
  median: number;
  p99: number;
  samples: number;
  /** Extra figures (e.g. p99 latency of http/rate). */
  [extra: string]: unknown;
}

function stats(task: { name: string; result: unknown }): { median: number; p99: number; samples: number } {
  const r = task.result as { state: string; latency?: { p50: number; p99: number; samplesCount: number }; error?: Error };
  if (!r.latency) throw new Error(`benchmark ${task.name} did not complete: ${r.state} ${r.error?.message ?? ''}`);
  return { median: r.latency.p50, p99: r.latency.p99, samples: r.latency.samplesCount };
}

/** Goal: tick/L <= 2.5x C pair_kernel + C bfs1 (USD). */
const TICK_L_RATIO_TARGET = 2.5;

/**
 * tick/L's limit: refresh.c on the bench L universe as it stands after warm-up (the same seed and
 * warm-up events as warmEngine), written in refresh.c's universe.bin layout.
 */
function refreshLimit(dir: string): { exe: string; universe: string } | { reason: string } {
  const b = buildC('refresh', dir);
  if (!('exe' in b)) return b;
  const universe = join(dir, 'universe-L-seed42.bin');
  const u = new Universe('L', 42);
  writeUniverseBin(u, u.warmup(START), universe);
  return { exe: b.exe, universe };
}

/** The tick/L median of this run, for tick/L+own-metrics' overhead. */
let tickLMedian: number | undefined;

/** The own metrics' overhead over tick/L, measured in processes of their own (goal: under 15 %). */
const OWN_METRICS_TARGET = 0.15;

/**
 * tick/L+own-metrics: tick/L with a listener taking xrate's own metrics (the engine computes them
 * only then), timed as tick/L is. Its overhead is measured apart, in processes of their own
 * (ownTicks.ts), as a user runs one engine: {@link OWN_PROCESSES} of a plain L engine and as many
 * of one with the listener, in the order plain, own, own, plain, plain, own (the machine's drift
 * falls on both), each warmed alike and ticked {@link OWN_WARM_TICKS} seconds untimed, then
 * {@link OWN_TICKS} timed; the overhead is the ratio of the two sides' median process medians,
 * less one. Two engines ticked in turn in one process share their compiled code, which made that
 * measure swing from +1.5 % to +45 % between runs (docs/performance.md). The figure against
 * tick/L's median of this run is kept as `overhead_sequential`.
 */
async function tickOwnMetricsBench(): Promise<BenchResult> {
  const st = await timeTicks('tick/L+own-metrics', 'L', true);
  const r: BenchResult = { name: 'tick/L+own-metrics', unit: 'ms', ...st, quote_fraction: QUOTE_FRACTION, own_points: received.ownPoints };
  const m = ownMetricsProcesses();
  r.overhead_vs = 'tick/L, processes of their own';
  r.overhead = m.own_ms / m.plain_ms - 1;
  r.overhead_target = OWN_METRICS_TARGET;
  r.processes = m;
  if (tickLMedian !== undefined) r.overhead_sequential = st.median / tickLMedian - 1;
  return r;
}

/** The measure in processes: processes of each engine, and the ticks of each, untimed then timed. */
const OWN_PROCESSES = 3;
const OWN_WARM_TICKS = 30;
const OWN_TICKS = 250;

/** One process of ownTicks.ts: its median tick, ms. */
function ownTicksProcess(mode: 'plain' | 'own'): number {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'ownTicks.ts');
  const p = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', script, mode, String(OWN_TICKS), String(OWN_WARM_TICKS)], {
    encoding: 'utf8',
  });
  if (p.status !== 0) throw new Error(`tick/L+own-metrics: the ${mode} process failed (${p.status ?? p.signal}): ${p.stderr}`);
  const out = JSON.parse(p.stdout.trim().split('\n').at(-1)!) as { median_ms: number; ticks: number; own_points: number };
  if (out.ticks !== OWN_TICKS) throw new Error(`tick/L+own-metrics: the ${mode} process timed ${out.ticks} ticks, not ${OWN_TICKS}`);
  // The engine with the listener computed its own metrics, the plain one none.
  if ((mode === 'own') !== out.own_points > 0)
    throw new Error(`tick/L+own-metrics: the ${mode} process received ${out.own_points} own-metric points`);
  return out.median_ms;
}

function ownMetricsProcesses(): { plain_ms: number; own_ms: number; plain_process_ms: number[]; own_process_ms: number[]; ticks: number } {
  const plain: number[] = [];
  const own: number[] = [];
  for (let k = 0; k < OWN_PROCESSES; k++)
    for (const mode of k % 2 === 0 ? (['plain', 'own'] as const) : (['own', 'plain'] as const)) {
      (mode === 'plain' ? plain : own).push(ownTicksProcess(mode));
    }
  return { plain_ms: median(plain), own_ms: median(own), plain_process_ms: plain, own_process_ms: own, ticks: OWN_TICKS };
}

/** Times one tick of a warm engine of `size` (new quotes each second, cross rates from USD). */
async function timeTicks(name: string, size: SizeName, ownMetrics: boolean): Promise<ReturnType<typeof stats>> {
  const { engine, u } = warmEngine(size, ownMetrics);
  let T = START + S;
  const bench = new Bench({ time: size === 'L' ? 3000 : 1500, warmupTime: 300 });
  bench.add(name, () => tickAt(engine, T), {
    beforeEach() {
      T += S;
      applySecond(engine, u, T);
    },
  });
  await bench.run();
  return stats(bench.tasks[0]);
}

async function tickBench(size: SizeName, dir: string): Promise<BenchResult> {
  // For L, refresh.c runs just before and just after the timed ticks; its figures are the means.
  const limit = size === 'L' ? refreshLimit(dir) : undefined;
  const cRuns: RefreshFigures[] = [];
  if (limit && 'exe' in limit) cRuns.push(runRefresh(limit.exe, limit.universe));
  const st = await timeTicks(`tick/${size}`, size, false);
  const r: BenchResult = { name: `tick/${size}`, unit: 'ms', ...st, quote_fraction: QUOTE_FRACTION, tracked_pairs: TRACKED };
  if (size === 'L') tickLMedian = st.median;
  if (!limit) return r;
  r.ratio_to = 'C pair_kernel + C bfs1 (USD)';
  r.ratio_target = TICK_L_RATIO_TARGET;
  if (!('exe' in limit)) {
    r.ratio = null;
    r.ratio_reason = limit.reason;
    return r;
  }
  cRuns.push(runRefresh(limit.exe, limit.universe));
  const mean = (f: (c: RefreshFigures) => number): number => cRuns.reduce((a, c) => a + f(c), 0) / cRuns.length;
  const c = { pair_kernel_ms: mean((c) => c.pair_kernel_ms), bfs1_ms: mean((c) => c.bfs1_ms) };
  const ms = c.pair_kernel_ms + c.bfs1_ms;
  r.c = { program: 'refresh', universe: 'bench L universe after warm-up (seed 42)', ...c, ms, reach: cRuns[0].reach, runs: cRuns.length };
  r.ratio = st.median / ms;
  return r;
}

async function crossAllBench(): Promise<BenchResult> {
  const { engine, u } = warmEngine('L');
  const assets = engine.assetIds();
  let reached = 0;
  const bench = new Bench({ iterations: 5, time: 0, warmupIterations: 1, warmupTime: 0 });
  bench.add('cross-all/L', () => {
    reached = 0;
    for (const a of assets) {
      const all = engine.ratesFrom(a)!;
      for (let i = 0; i < all.rate.length; i++) if (!Number.isNaN(all.rate[i])) reached++;
    }
  });
  await bench.run();
  void u;
  return { name: 'cross-all/L', unit: 'ms', ...stats(bench.tasks[0]), assets: assets.length, rates: reached };
}

/** apply/quote's median of this run, for apply/metric's ratio (goal: a metric point costs at most 1.5x a quote). */
let applyQuoteRate: number | undefined;

async function applyBench(kind: 'quote' | 'trade' | 'metric'): Promise<BenchResult> {
  const { engine, u } = warmEngine('L', false, kind === 'metric');
  // Each iteration applies fresh events of a new second (half the markets quoting, or 100,000
  // trades); the tick of the previous second, the generation and its garbage stay outside the
  // timed part.
  let T = START + S;
  let events: XrateEvent[] = [];
  const bench = new Bench({ time: 3000, warmupTime: 300 });
  bench.add(
    `apply/${kind}`,
    () => {
      for (let i = 0; i < events.length; i++) engine.apply(events[i]);
    },
    {
      beforeEach() {
        T += S;
        engine.advanceTo(T - S);
        events =
          kind === 'quote' ? u.secondOfQuotes(T, 0.5) : kind === 'trade' ? u.secondOfTrades(T, 100_000) : u.secondOfMetrics(T, 100_000);
        gc?.({ type: 'minor' });
      },
    },
  );
  await bench.run();
  const st = stats(bench.tasks[0]);
  const r: BenchResult = {
    name: `apply/${kind}`,
    unit: 'events/s',
    median: (events.length / st.median) * 1000,
    p99: (events.length / st.p99) * 1000,
    samples: st.samples,
    batch: events.length,
    ...(kind === 'metric' && { points_received: received.metricPoints }),
  };
  if (kind === 'quote') applyQuoteRate = r.median;
  if (kind === 'metric' && applyQuoteRate !== undefined) {
    // Cost per event relative to a quote's: quote rate / metric rate (target <= 1.5).
    r.cost_vs = 'apply/quote';
    r.cost_ratio = applyQuoteRate / r.median;
    r.cost_target = 1.5;
  }
  return r;
}

const LOG_EVENTS = 2_000_000;

async function replayBench(format: 'ndjson' | 'csv' | 'sqlite', dir: string): Promise<BenchResult> {
  const ext = format === 'sqlite' ? 'sqlite' : format;
  const log = join(dir, `bench-2m-seed7.${ext}`);
  if (!existsSync(log)) {
    // ~70 events/s over ~8 hours of event time: busy and quiet seconds alike.
    await writeLog(log, { seed: 7, events: LOG_EVENTS, rate: 70, format, start: '2024-03-01T00:00:00Z', exchanges: 12, assets: 20 });
  }
  const out = join(dir, `bench-out-${format}.ndjson`);
  let read = 0;
  const bench = new Bench({ iterations: 2, time: 0, warmupIterations: 0, warmupTime: 0 });
  bench.add(`replay/${format}`, async () => {
    const s = await replay({ inputs: [log], out, track: [] });
    read = s.eventsRead;
  });
  await bench.run();
  const st = stats(bench.tasks[0]);
  return {
    name: `replay/${format}`,
    unit: 'events/s',
    median: (read / st.median) * 1000,
    p99: (read / st.p99) * 1000,
    samples: st.samples,
    events: read,
    log_bytes: statSync(log).size,
  };
}

/**
 * Engine memory after a 24-hour warm-up at size L (heap + array buffers it holds), measured in a
 * fresh process (bench/memory.ts) so that nothing left by the other suites is counted or freed
 * in between.
 */
async function memoryBench(): Promise<BenchResult> {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'memory.ts');
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', script], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`memory/L failed: ${r.stderr}`);
  const m = JSON.parse(r.stdout.trim().split('\n').pop()!) as { mb: number; ticks: number };
  return { name: 'memory/L', unit: 'MB', median: m.mb, p99: m.mb, samples: 1, ticks: m.ticks };
}

async function httpBench(): Promise<BenchResult[]> {
  const { runHttpBench } = await import('./http.bench.js');
  return runHttpBench();
}

/** `http/rate` through two `xrate serve --redis` replicas (bench/http.bench.ts). */
async function httpReplicasBench(): Promise<BenchResult[]> {
  const { runHttpReplicasBench } = await import('./http.bench.js');
  return runHttpReplicasBench();
}

/** Light requests while four connections loop `history?limit=100000` (bench/http.bench.ts). */
async function historyContentionBench(dir: string): Promise<BenchResult[]> {
  const { runHistoryContentionBench } = await import('./http.bench.js');
  return runHistoryContentionBench({ dir });
}

/** Light requests while eight connections loop charts, long histories and metric groups (bench/heavy.bench.ts). */
async function heavyContentionBench(): Promise<BenchResult[]> {
  const { runHeavyContentionBench } = await import('./heavy.bench.js');
  return runHeavyContentionBench();
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const fi = args.indexOf('--filter');
  const filter = fi >= 0 ? args[fi + 1] : undefined;
  const dir = join(tmpdir(), 'xrate-bench');
  mkdirSync(dir, { recursive: true });
  const suites: [string, () => Promise<BenchResult | BenchResult[]>][] = [
    ['tick/S', () => tickBench('S', dir)],
    ['tick/M', () => tickBench('M', dir)],
    ['tick/L', () => tickBench('L', dir)],
    ['tick/L+own-metrics', tickOwnMetricsBench],
    ['cross-all/L', crossAllBench],
    ['apply/quote', () => applyBench('quote')],
    ['apply/trade', () => applyBench('trade')],
    ['apply/metric', () => applyBench('metric')],
    ['replay/ndjson', () => replayBench('ndjson', dir)],
    ['replay/csv', () => replayBench('csv', dir)],
    ['replay/sqlite', () => replayBench('sqlite', dir)],
    ['replay/coinapi-merge', () => vendorMergeBench(dir)],
    ['replay/db-sparse', () => replayDbBench('sparse', dir)],
    ['replay/db-dense', () => replayDbBench('dense', dir)],
    ['replay/threads-1 replay/threads-2', () => threadsBenches(dir)],
    ['replay/parquet', () => replayParquetBench(dir)],
    ['replay/parallel-2 replay/queue-2', () => parallelBench(dir)],
    ['metrics/history-100k', () => metricsHistoryBench(dir)],
    ['chart/year', () => chartYearBench(dir)],
    ['memory/L', memoryBench],
    ['http/rate', httpBench],
    ['http/rate-replicas', httpReplicasBench],
    ['http/history-contention', () => historyContentionBench(dir)],
    ['http/heavy-contention', heavyContentionBench],
    ['feed/publish feed/replica', () => feedBench(dir)],
    ['cli/rate cli/help', async () => cliBenches(dir)],
  ];
  const results: BenchResult[] = [];
  for (const [name, run] of suites) {
    if (filter && !name.includes(filter)) continue;
    const t0 = Date.now();
    const r = await run();
    for (const x of Array.isArray(r) ? r : [r]) {
      results.push(x);
      console.log(
        `${x.name.padEnd(16)} median ${fmt(x.median).padStart(12)} ${x.unit.padEnd(8)} p99 ${fmt(x.p99).padStart(12)}  n=${x.samples}  (${((Date.now() - t0) / 1000).toFixed(1)} s)${extras(x)}`,
      );
    }
  }
  const cpu = cpus();
  const header = {
    node: process.version,
    cpu: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    platform: `${process.platform} ${process.arch}`,
    date: new Date().toISOString(),
    filter: filter ?? null,
  };
  const outDir = join(dirname(fileURLToPath(import.meta.url)), 'results');
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, 'latest.json');
  for (const r of results) r.date = header.date;
  // A filtered run replaces only its own entries; the others keep the date they were measured on.
  let all = results;
  if (filter && existsSync(file)) {
    const prev = JSON.parse(readFileSync(file, 'utf8')) as { results: BenchResult[] };
    const fresh = new Set(results.map((r) => r.name));
    all = [...prev.results.filter((r) => !fresh.has(r.name)), ...results];
    // In the suites' order: the suite naming the entry (each name of a suite of several; its
    // variants, as replay/threads-1-dense, after it).
    const suiteOf = (r: BenchResult): number =>
      suites.findIndex(([n]) => n.split(' ').some((k) => r.name === k || r.name.startsWith(`${k}-`)));
    all.sort((a, b) => suiteOf(a) - suiteOf(b));
  }
  writeFileSync(file, `${JSON.stringify({ header, results: all }, null, 2)}\n`);
  console.log(`wrote bench/results/latest.json`);
  if (process.env.XRATE_BENCH_KEEP_LOGS !== '1' && !filter) rmSync(dir, { recursive: true, force: true });
}

/** The ratio to C and the peak RSS, for the console line. */
function extras(x: BenchResult): string {
  let s = '';
  if (x.ratio_to !== undefined) {
    const c = x.c as { seconds?: number; ms?: number } | undefined;
    const cFig = c?.seconds !== undefined ? `${c.seconds.toFixed(3)} s` : c?.ms !== undefined ? `${c.ms.toFixed(3)} ms` : '';
    s +=
      typeof x.ratio === 'number'
        ? `  ratio ${x.ratio.toFixed(2)}x ${x.ratio_to} (${cFig}; target <= ${x.ratio_target}x)`
        : `  ratio n/a: ${x.ratio_reason}`;
  }
  if (typeof x.peak_rss_mb === 'number') s += `  peak RSS ${x.peak_rss_mb.toFixed(0)} MB (target <= ${x.rss_target_mb} MB)`;
  if (typeof x.cost_ratio === 'number') s += `  ${x.cost_ratio.toFixed(2)}x the cost of ${x.cost_vs} (target <= ${x.cost_target}x)`;
  if (typeof x.overhead === 'number')
    s += `  ${(100 * x.overhead).toFixed(1)} % over ${x.overhead_vs} (target < ${100 * (x.overhead_target as number)} %)`;
  if (typeof x.speedup === 'number')
    s += `  ${x.speedup.toFixed(2)}x faster than serial (${(x.serial_s as number).toFixed(2)} s; target >= ${x.speedup_target}x)`;
  if (typeof x.ratio_to_workers === 'number')
    s += `  ${x.ratio_to_workers.toFixed(2)}x the time of --workers 2 (${(x.workers_2_s as number).toFixed(2)} s; target <= ${x.ratio_target}x)`;
  if (typeof x.p99LatencyMs === 'number') s += `  p99 latency ${x.p99LatencyMs} ms`;
  if (typeof x.cpu_ms_median === 'number')
    s += `  ${x.resolution}: ${x.points} points; CPU ${x.cpu_ms_median.toFixed(1)} ms per answer (target < ${x.target_ms} ms)`;
  if (x.cpuUsPerRequest && typeof x.cpuUsPerRequest === 'object')
    s += `  CPU per request: ${Object.entries(x.cpuUsPerRequest as Record<string, number>)
      .map(([n, us]) => `${n} ${us} µs`)
      .join(', ')}`;
  if (typeof x.ratio_to_ndjson === 'number')
    s += `  ${x.files} files; the same events as one NDJSON log: ${fmt(x.ndjson_events_per_s as number)} events/s (merge at ${x.ratio_to_ndjson.toFixed(2)}x its speed)`;
  return s;
}

function fmt(v: number): string {
  return v >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toPrecision(4);
}

await main();
