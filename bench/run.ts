/**
 * `npm run bench [-- --filter NAME]`: the benchmarks of docs/performance.md, written to
 * bench/results/latest.json as { header: {node, cpu, cores, date, ...}, results: [{name, unit,
 * median, p99, samples}] }.
 *
 * Units: `ms` for one operation (tick/*, cross-all/L; p99 = 99th percentile latency),
 * `events/s` and `req/s` for throughputs (median = throughput at the median latency, p99 =
 * throughput at the 99th-percentile latency, i.e. the slow tail), `MB` for memory.
 *
 * Run with `node --expose-gc` (the npm script does) so memory/L can collect garbage first.
 */
import { spawnSync } from 'node:child_process';
import { cpus, tmpdir } from 'node:os';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import { createEngine, type Engine } from '../src/core/engine.js';
import type { XrateEvent } from '../src/core/types.js';
import { replay } from '../src/replay/replay.js';
import { writeLog } from '../scripts/gen-log.js';
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

const S = 1_000_000;
/** 2024-03-01T00:00:00Z: a whole second; T0 = START + 1 s. */
const START = 1_709_251_200 * S;
/** Share of markets that send a new quote in each benchmarked second. */
const QUOTE_FRACTION = 0.2;
const TRACKED = 1_000;
const STORED_PERIODS = ['1SEC', '1MIN', '1HRS', '1DAY'];

function warmEngine(size: SizeName): { engine: Engine; u: Universe; tick: number } {
  const u = new Universe(size, 42);
  const engine = createEngine();
  for (const ev of u.warmup(START)) engine.apply(ev);
  engine.advanceTo(START + S);
  const pairs = engine.pairs().slice(0, TRACKED);
  for (const p of pairs) engine.track(p.base, p.quote, STORED_PERIODS);
  return { engine, u, tick: START + S };
}

function stats(task: { name: string; result: unknown }): { median: number; p99: number; samples: number } {
  const r = task.result as { state: string; latency?: { p50: number; p99: number; samplesCount: number }; error?: Error };
  if (!r.latency) throw new Error(`benchmark ${task.name} did not complete: ${r.state} ${r.error?.message ?? ''}`);
  return { median: r.latency.p50, p99: r.latency.p99, samples: r.latency.samplesCount };
}

async function tickBench(size: SizeName): Promise<BenchResult> {
  const { engine, u } = warmEngine(size);
  let T = START + S;
  const bench = new Bench({ time: size === 'L' ? 3000 : 1500, warmupTime: 300 });
  bench.add(
    `tick/${size}`,
    () => {
      engine.advanceTo(T);
      engine.ratesFrom('USD');
    },
    {
      beforeEach() {
        T += S;
        for (const q of u.secondOfQuotes(T, QUOTE_FRACTION)) engine.apply(q);
        // Collect the generator's garbage here, not inside the timed tick.
        (globalThis as { gc?: (o?: { type: string }) => void }).gc?.({ type: 'minor' });
      },
    },
  );
  await bench.run();
  const st = stats(bench.tasks[0]);
  return { name: `tick/${size}`, unit: 'ms', ...st, quote_fraction: QUOTE_FRACTION, tracked_pairs: TRACKED };
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

async function applyBench(kind: 'quote' | 'trade'): Promise<BenchResult> {
  const { engine, u } = warmEngine('L');
  // Each iteration applies fresh events of a new second (half the markets quoting, or 100,000
  // trades); the tick of the previous second, the generation and its garbage stay outside the
  // timed part.
  let T = START + S;
  let events: XrateEvent[] = [];
  const gc = (globalThis as { gc?: (o?: { type: string }) => void }).gc;
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
        events = kind === 'quote' ? u.secondOfQuotes(T, 0.5) : u.secondOfTrades(T, 100_000);
        gc?.({ type: 'minor' });
      },
    },
  );
  await bench.run();
  const st = stats(bench.tasks[0]);
  return {
    name: `apply/${kind}`,
    unit: 'events/s',
    median: (events.length / st.median) * 1000,
    p99: (events.length / st.p99) * 1000,
    samples: st.samples,
    batch: events.length,
  };
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
  const path = join(dirname(fileURLToPath(import.meta.url)), 'http.bench.ts');
  if (!existsSync(path)) return [];
  const mod = (await import('./http.bench.js')) as { runHttpBench: () => Promise<BenchResult[]> };
  return mod.runHttpBench();
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const fi = args.indexOf('--filter');
  const filter = fi >= 0 ? args[fi + 1] : undefined;
  const dir = join(tmpdir(), 'xrate-bench');
  mkdirSync(dir, { recursive: true });
  const suites: [string, () => Promise<BenchResult | BenchResult[]>][] = [
    ['tick/S', () => tickBench('S')],
    ['tick/M', () => tickBench('M')],
    ['tick/L', () => tickBench('L')],
    ['cross-all/L', crossAllBench],
    ['apply/quote', () => applyBench('quote')],
    ['apply/trade', () => applyBench('trade')],
    ['replay/ndjson', () => replayBench('ndjson', dir)],
    ['replay/csv', () => replayBench('csv', dir)],
    ['replay/sqlite', () => replayBench('sqlite', dir)],
    ['memory/L', memoryBench],
    ['http/rate', httpBench],
  ];
  const results: BenchResult[] = [];
  for (const [name, run] of suites) {
    if (filter && !name.includes(filter)) continue;
    const t0 = Date.now();
    const r = await run();
    for (const x of Array.isArray(r) ? r : [r]) {
      results.push(x);
      console.log(
        `${x.name.padEnd(14)} median ${fmt(x.median).padStart(12)} ${x.unit.padEnd(8)} p99 ${fmt(x.p99).padStart(12)}  n=${x.samples}  (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
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
    const order = suites.map(([n]) => n);
    all.sort((a, b) => order.findIndex((n) => a.name.startsWith(n)) - order.findIndex((n) => b.name.startsWith(n)));
  }
  writeFileSync(file, `${JSON.stringify({ header, results: all }, null, 2)}\n`);
  console.log(`wrote bench/results/latest.json`);
  if (process.env.XRATE_BENCH_KEEP_LOGS !== '1' && !filter) rmSync(dir, { recursive: true, force: true });
}

function fmt(v: number): string {
  return v >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toPrecision(4);
}

await main();
