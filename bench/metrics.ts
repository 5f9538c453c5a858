/**
 * metrics/history-100k: the history of one metric series of 100,000 points (one a second), read
 * from a replay database and written as JSON, as `GET /v1/metrics/exchange/history?...&limit=100000`
 * answers it without the HTTP layer: the route's answer (src/service/metrics.ts `answerMetrics`)
 * and its JSON body as the route table sends it (src/service/routeTable.ts `answerBody`: for a
 * long history, a body written a slice at a time, read here to its end). The goal: under 100 ms.
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { Bench } from 'tinybench';
import { ReplayStore } from '../src/io/store.js';
import { answerMetrics } from '../src/service/metrics.js';
import { answerBody } from '../src/service/routeTable.js';
import { formatTime } from '../src/core/time.js';
import type { BenchResult } from './run.js';

/** Bytes of a body: a string, a buffer, or a stream read to its end. */
async function bodyBytes(body: string | Buffer | Readable): Promise<number> {
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (Buffer.isBuffer(body)) return body.length;
  let n = 0;
  for await (const piece of body) n += (piece as Buffer).length;
  return n;
}

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
  let bytes = 0;
  const bench = new Bench({ time: 3000, warmupTime: 300 });
  bench.add('metrics/history-100k', async () => {
    const a = answerMetrics(source, '/v1/metrics/exchange/history', query);
    if (a === undefined) throw new Error('no metrics route /v1/metrics/exchange/history');
    items = a.json?.length ?? (a.value as unknown[]).length;
    bytes = await bodyBytes(answerBody(a, { kind: 'json' }).body);
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
    bytes,
    target_ms: 100,
  };
}
