/**
 * chart/year: the chart of BTC/USD over a year, as the chart route answers it on a heavy-answer
 * thread (src/service/chart.ts `chartAnswer`: the data from the database and its JSON body), from
 * a replay database made once per bench directory: a generated log of a year at a low event rate
 * over a few markets (scripts/gen-log.ts: about 315,000 events, four exchanges, five assets)
 * replayed with its own metrics (the default). At 2000 points the year is drawn by 6HRS buckets (1460 points,
 * rolled up from the stored 1HRS), each market's weight share read at each point. The goal: under
 * 300 ms. The entry also records the CPU time per answer (the machine may be shared).
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { parseTime } from '../src/core/time.js';
import { replay } from '../src/replay/replay.js';
import { chartAnswer } from '../src/service/chart.js';
import { writeLog } from '../scripts/gen-log.js';
import type { BenchResult } from './run.js';

const FROM = parseTime('2023-01-01T00:00:00Z')!;
const TO = parseTime('2024-01-01T00:00:00Z')!;

/** The replay database of a year (made when absent). */
async function yearDatabase(dir: string): Promise<string> {
  const db = join(dir, 'chart-year.sqlite');
  if (existsSync(db)) return db;
  const log = join(dir, 'chart-year.ndjson');
  // 0.01 events/s over a year: a quote or trade every 100 s on average, spread over the markets.
  await writeLog(log, { seed: 11, events: 315_360, rate: 0.01, exchanges: 4, assets: 5, start: '2023-01-01T00:00:00Z' });
  const tmp = `${db}.tmp`;
  for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`]) rmSync(f, { force: true });
  await replay({ inputs: [log], db: tmp });
  renameSync(tmp, db);
  rmSync(log, { force: true });
  return db;
}

/** Runs the bench in `dir` (see the module description). */
export async function chartYearBench(dir: string): Promise<BenchResult> {
  const db = await yearDatabase(dir);
  const q = { base: 'BTC', quote: 'USD', from: FROM, to: TO, points: 2000 };
  let bytes = 0;
  const cpu: number[] = [];
  const bench = new Bench({ time: 4000, warmupTime: 500 });
  bench.add('chart/year', async () => {
    const c0 = process.cpuUsage();
    const a = await chartAnswer(db, q);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    bytes = a.body.length;
  });
  await bench.run();
  const r = bench.tasks[0].result as { latency?: { p50: number; p99: number; samplesCount: number } };
  if (!r.latency) throw new Error('chart/year did not complete');
  const body = JSON.parse((await chartAnswer(db, q)).body.toString('utf8')) as {
    resolution: string;
    ticks: unknown[];
    weight_share: unknown[] | null;
  };
  if (body.resolution !== '6HRS' || !body.weight_share)
    throw new Error(`chart/year: resolution ${body.resolution}, weight shares ${body.weight_share?.length ?? 'none'}`);
  cpu.sort((a, b) => a - b);
  return {
    name: 'chart/year',
    unit: 'ms',
    median: r.latency.p50,
    p99: r.latency.p99,
    samples: r.latency.samplesCount,
    resolution: body.resolution,
    points: body.ticks.length,
    markets: body.weight_share.length,
    bytes,
    cpu_ms_median: cpu[cpu.length >> 1],
    target_ms: 300,
  };
}
