/**
 * Heavy answers on worker threads (src/service/heavyPool.ts): charts and long metric timeseries
 * answered by the pool are the bytes the event loop would answer, errors included; light requests
 * are answered while heavy ones run; the pool is a global budget (a full queue is a 503, before any
 * work), and a service closing refuses what waits.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_METRICS } from '../../src/core/engine/ownMetrics.js';
import { replay } from '../../src/replay/replay.js';
import { HeavyPool } from '../../src/service/heavyPool.js';
import { DatabaseRateProvider } from '../../src/answers/index.js';
import { createService } from '../../src/service/server.js';
import { KeyStore } from '../../src/http/keys.js';
import { DEMO_LOG } from './helpers.js';
import { request, type Res, tempDir } from './helpers.js';

const tmp = tempDir('xrate-heavy-pool-');
let db: string;
let provider: DatabaseRateProvider;
let keys: KeyStore;
let key: string;
const servers: { url: string; close(): Promise<void> }[] = [];

async function serve(heavy: boolean): Promise<string> {
  const app = await createService({
    provider,
    keys,
    metrics: provider.metrics(OWN_METRICS),
    heavyConcurrency: 100,
    ...(heavy && { heavy: { db, metricsFrom: 'database' as const, threads: 1 } }),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  servers.push({ url, close: () => app.close() });
  return url;
}

let inline: string;
let pooled: string;

beforeAll(async () => {
  db = join(tmp.dir, 'demo-own.sqlite');
  await replay({ inputs: [DEMO_LOG], db, ownMetrics: true });
  provider = await DatabaseRateProvider.open(db);
  keys = KeyStore.open(join(tmp.dir, 'keys.sqlite'));
  key = keys.create({ name: 'test', concurrency: 1000 }).key;
  inline = await serve(false);
  pooled = await serve(true);
}, 120_000);

afterAll(async () => {
  for (const s of servers) await s.close();
  keys?.close();
  await provider?.close();
  tmp.remove();
});

const get = (base: string, path: string): Promise<Res> => request(base + path, { headers: { 'X-CoinAPI-Key': key } });

const CHART = '/v1/exchangerate/ETH/BTC/chart?time_start=2024-03-01T05:00:00Z&time_end=2024-03-01T05:20:00Z&period_id=5MIN';
const SAME: string[] = [
  CHART,
  '/v1/exchangerate/BTC/USD/chart',
  '/v1/metrics/symbol/history?metric_id=XRATE_MARKET_WEIGHT_SHARE&symbol_id=BINANCE_SPOT_BTC_USDT&period_id=1MIN&limit=2000',
  '/v1/metrics/exchange/history?metric_id=XRATE_EXCHANGE_RANK&exchange_id=BINANCE&period_id=10SEC&limit=5000&output_format=csv',
  '/v1/metrics/history?metric_id=XRATE_MARKET_SPREAD&exchange_id=KRAKEN&period_id=1MIN&time_format=unix_millisec&limit=3000',
  '/v1/metrics/asset/history?metric_id=XRATE_ASSET_USD_RATE&exchange_id=XRATE&asset_id=BTC&period_id=1MIN&output_format=xml&limit=1500',
  // Errors: the route's, worded the same.
  '/v1/exchangerate/ETH/BTC/chart?time_start=yesterday',
  '/v1/exchangerate/ETH/BTC/chart?time_start=2020-01-01T00:00:00Z&time_end=2020-01-01T00:10:00Z',
  '/v1/metrics/symbol/history?metric_id=XRATE_MARKET_WEIGHT_SHARE&symbol_id=BINANCE_SPOT_BTC_USDT&period_id=7XYZ&limit=2000',
  '/v1/metrics/exchange/history?metric_id=NO_SUCH_METRIC&exchange_id=BINANCE&limit=5000',
];

describe('answers on worker threads', () => {
  it('are the bytes, Content-Type, status and cost of the answers on the event loop', async () => {
    let bodies = 0;
    for (const path of SAME) {
      const [a, b] = [await get(inline, path), await get(pooled, path)];
      expect(b.status, path).toBe(a.status);
      expect(b.headers['content-type'], path).toBe(a.headers['content-type']);
      expect(b.headers['x-ratelimit-request-cost'], path).toBe(a.headers['x-ratelimit-request-cost']);
      expect(b.text, path).toBe(a.text);
      if (a.status === 200 && a.body.length > 1000) bodies++;
    }
    // The cases are real answers, not all errors.
    expect(bodies).toBeGreaterThanOrEqual(5);
  });

  it('are computed on the worker threads: /metrics shows a chart running there, and light requests are answered meanwhile', async () => {
    // The gauge a server without the pool does not have (its charts run on the event loop).
    const gauge = async (base: string, name: string): Promise<number | undefined> => {
      const m = (await get(base, '/metrics')).text;
      const v = new RegExp(`^${name} (\\d+)$`, 'm').exec(m)?.[1];
      return v === undefined ? undefined : Number(v);
    };
    expect(await gauge(inline, 'xrate_heavy_running')).toBeUndefined();
    expect(await gauge(pooled, 'xrate_heavy_running')).toBe(0);
    // Three charts, one at a time on the pool's one thread: one running, the others waiting.
    let finished = 0;
    const charts = [0, 1, 2].map(() =>
      get(pooled, CHART).then((r) => {
        expect(r.status).toBe(200);
        finished++;
      }),
    );
    const seen = { running: 0, queued: 0, light: 0 };
    while (finished < 3) {
      seen.running = Math.max(seen.running, (await gauge(pooled, 'xrate_heavy_running')) ?? 0);
      seen.queued = Math.max(seen.queued, (await gauge(pooled, 'xrate_heavy_queued')) ?? 0);
      if (finished < 3 && (await get(pooled, '/v1/exchangerate/BTC/USD')).status === 200) seen.light++;
    }
    await Promise.all(charts);
    expect(seen.running).toBe(1);
    expect(seen.queued).toBeGreaterThanOrEqual(1);
    expect(seen.light).toBeGreaterThan(0);
    expect(await gauge(pooled, 'xrate_heavy_running')).toBe(0);
  });
});

/** A chart of five minutes of ETH/BTC, as the chart route gives it to the pool. */
function chartTask() {
  return {
    kind: 'chart' as const,
    db,
    base: 'ETH',
    quote: 'BTC',
    from: Date.parse('2024-03-01T05:00:00Z') * 1000,
    to: Date.parse('2024-03-01T05:05:00Z') * 1000,
  };
}

describe('the pool as a global budget', () => {
  it('runs at most `threads` tasks, queues up to `maxQueued` in order, and refuses one more with 503 before any work', async () => {
    const pool = new HeavyPool({ threads: 1, maxQueued: 2 });
    try {
      const task = chartTask();
      const done: number[] = [];
      const runs = [0, 1, 2].map((i) => pool.run(task).then(() => void done.push(i)));
      expect(pool.load()).toEqual({ running: 1, queued: 2 });
      const refused = await pool.run(task).then(
        () => undefined,
        (e: { status: number; message: string }) => e,
      );
      expect(refused?.status).toBe(503);
      expect(refused?.message).toContain('The service is busy: 3 heavy requests');
      await Promise.all(runs);
      expect(done).toEqual([0, 1, 2]);
      expect(pool.load()).toEqual({ running: 0, queued: 0 });
    } finally {
      await pool.close();
    }
  });

  it('refuses the waiting tasks with 503 when it closes', async () => {
    const pool = new HeavyPool({ threads: 1 });
    const task = chartTask();
    const first = pool.run(task).catch((e: Error) => e);
    const waiting = pool.run(task).catch((e: { status: number }) => e);
    await pool.close();
    expect(((await waiting) as { status: number }).status).toBe(503);
    await first;
    expect(((await pool.run(task).catch((e: { status: number }) => e)) as { status: number }).status).toBe(503);
  });
});
