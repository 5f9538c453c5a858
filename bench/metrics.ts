/**
 * metrics/history-100k: the history of one metric series of 100,000 points (one a second), read
 * from a replay database and written as JSON, as `GET /v1/metrics/exchange/history?...&limit=100000`
 * answers it without the HTTP layer (src/service/metrics.ts `answerMetrics` and the JSON body).
 * Issue 11's goal: under 100 ms.
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { Bench } from 'tinybench';
import { ReplayStore } from '../src/io/store.js';
import { answerMetrics } from '../src/service/metrics.js';
import { formatTime } from '../src/core/time.js';
import type { BenchResult } from './run.js';

const POINTS = 100_000;
const START = 1_709_251_200_000_000;

/** Runs the bench in `dir` (the database is written there first). */
export async function metricsHistoryBench(dir: string): Promise<BenchResult> {
  const path = join(dir, 'metrics-history.sqlite');
  for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
  const store = ReplayStore.open(path);
  const w = store.writers();
  store.transaction(() => {
    for (let i = 0; i < POINTS; i++) {
      const text = ((i % 997) / 1e4).toFixed(4);
      w.point(
        {
          type: 'metric',
          time: START + i * 1_000_000,
          metricId: 'FUNDING_RATE',
          exchangeId: 'BINANCE',
          value: { kind: 'decimal', dec: { value: Number(text), text } },
        },
        i + 1,
        1,
      );
    }
  });
  const source = store.metrics();
  const query = {
    metric_id: 'FUNDING_RATE',
    exchange_id: 'BINANCE',
    period_id: '1SEC',
    time_start: formatTime(START),
    limit: String(POINTS),
  };
  let items = 0;
  const bench = new Bench({ time: 3000, warmupTime: 300 });
  bench.add('metrics/history-100k', () => {
    const a = answerMetrics(source, '/v1/metrics/exchange/history', query);
    items = a?.value.length ?? 0;
    JSON.stringify(a?.value);
  });
  await bench.run();
  store.close();
  const r = bench.tasks[0].result as { latency?: { p50: number; p99: number; samplesCount: number } };
  if (!r.latency) throw new Error('metrics/history-100k did not complete');
  if (items !== POINTS) throw new Error(`metrics/history-100k answered ${items} items, not ${POINTS}`);
  return {
    name: 'metrics/history-100k',
    unit: 'ms',
    median: r.latency.p50,
    p99: r.latency.p99,
    samples: r.latency.samplesCount,
    items,
    target_ms: 100,
  };
}
