/**
 * The chart extension over real HTTP (`GET /v1/exchangerate/{base}/{quote}/chart`): the answer is
 * src/answers/chart.ts's over the served database at any range (by tick up to 7200 ticks, else by
 * period within `points`), it needs a key with the `history` right, costs one request per 100
 * points, defaults to the hour before the last tick, and words bad parameters as 400 naming them
 * and missing data as 550. The page (`/`, `/ui/...`) needs no key.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTime, parseTime } from '../../src/core/time.js';
import { chartData } from '../../src/answers/chart.js';
import type { ChartData } from '../../src/replay/chart.js';
import { parseRights } from '../../src/http/keys.js';
import { startFollow } from '../../src/service/live.js';
import { demoProvider, expectError, startServer, type TestServer } from './helpers.js';

const demo = demoProvider();
let srv: TestServer;
let key: string;

beforeAll(async () => {
  srv = await startServer({ provider: demo.provider, keysPath: join(demo.tmp.dir, 'keys.sqlite') });
  key = srv.key();
});
afterAll(() => srv?.close());

const H = (): Record<string, string> => ({ 'X-CoinAPI-Key': key });
const CHART = '/v1/exchangerate/BTC/USD/chart';

describe('GET /v1/exchangerate/{base}/{quote}/chart', () => {
  it('answers the chart data of the database, costing one request per 100 points', async () => {
    const res = await srv.get(`${CHART}?time_start=2024-03-01T04:20:00Z&time_end=2024-03-01T04:25:00Z&period_id=1min`, H());
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-ratelimit-request-cost']).toBe('4');
    const want = await chartData(
      { inputs: [demo.db] },
      { base: 'BTC', quote: 'USD', from: parseTime('2024-03-01T04:20:00Z')!, to: parseTime('2024-03-01T04:25:00Z')!, periodId: '1MIN' },
    );
    expect(JSON.parse(res.text)).toEqual(want);
    expect(want.candles!.length).toBe(5);
    expect(want.markets_detail).toBe(true);
  });

  it('answers a range of more than 7200 ticks by period, within the points asked for', async () => {
    const q = '?time_start=2024-03-01T02:30:00Z&time_end=2024-03-01T05:00:00Z';
    const res = await srv.get(`${CHART}${q}`, H());
    expect(res.status).toBe(200);
    const c = JSON.parse(res.text) as ChartData;
    // 9001 ticks; 2000 points: 5SEC buckets.
    expect([c.resolution, c.ticks.length, c.candles!.length > 0, c.markets_detail]).toEqual(['5SEC', 1800, true, false]);
    expect(res.headers['x-ratelimit-request-cost']).toBe('18');
    const want = await chartData(
      { inputs: [demo.db] },
      { base: 'BTC', quote: 'USD', from: parseTime('2024-03-01T02:30:00Z')!, to: parseTime('2024-03-01T05:00:00Z')! },
    );
    expect(c).toEqual(want);
    const few = JSON.parse((await srv.get(`${CHART}${q}&points=400`, H())).text) as ChartData;
    expect([few.resolution, few.ticks.length]).toEqual(['30SEC', 300]);
    const hourly = JSON.parse((await srv.get(`${CHART}${q}&period_id=1hrs`, H())).text) as ChartData;
    expect([hourly.resolution, hourly.period_id, hourly.ticks.length]).toEqual(['1HRS', '1HRS', 2]);
  });

  it('matches asset ids ignoring case, as the other routes do', async () => {
    const q = '?time_start=2024-03-01T04:20:00Z&time_end=2024-03-01T04:21:00Z';
    const lower = await srv.get(`/v1/exchangerate/btc/usd/chart${q}`, H());
    expect(lower.status).toBe(200);
    expect(lower.text).toBe((await srv.get(`${CHART}${q}`, H())).text);
  });

  it('defaults to the hour before the last tick', async () => {
    const res = await srv.get(CHART, H());
    expect(res.status).toBe(200);
    const c = JSON.parse(res.text) as ChartData;
    expect([c.time_start, c.time_end, c.ticks.length]).toEqual(['2024-03-01T04:54:11.0000000Z', '2024-03-01T05:54:11.0000000Z', 3601]);
    expect(res.headers['x-ratelimit-request-cost']).toBe('37');
  });

  it('needs a key with the history right', async () => {
    expectError(await srv.get(CHART), 401);
    const rateOnly = srv.keys.create({ rights: parseRights('rate') }).key;
    expect(expectError(await srv.get(CHART, { 'X-CoinAPI-Key': rateOnly }), 403)).toBe(
      'This API key has no access to timeseries data (/v1/exchangerate/{base}/{quote}/history)',
    );
  });

  it('words bad parameters as 400 and missing data as 550', async () => {
    const cases: [string, number, string][] = [
      ['?time_start=yesterday', 400, "Invalid value of parameter 'time_start'"],
      [
        '?time_start=2024-03-01T05:00:00Z&time_end=2024-03-01T04:00:00Z',
        400,
        "Invalid value of parameter 'time_end': must be after time_start",
      ],
      ['?points=49', 400, "Invalid value of parameter 'points': 49 is out of range 50..5000"],
      ['?points=wide', 400, `Invalid value of parameter 'points': "wide" is not an integer in 50..5000`],
      [
        '?time_start=2024-03-01T02:30:00Z&time_end=2024-03-01T05:00:00Z&period_id=1SEC',
        400,
        "Invalid value of parameter 'period_id': period 1SEC gives 9000 candles over the range, more than 5000: choose a longer one",
      ],
      [
        '?time_start=2020-01-01T00:00:00Z&time_end=2024-03-01T05:00:00Z&points=50',
        400,
        "Invalid value of parameter 'points': the range needs 153 points even at 10DAY",
      ],
      ['?period_id=7MIN', 400, `Invalid value of parameter 'period_id': unknown period_id "7MIN"`],
      [
        '?time_start=2024-03-01T04:00:00Z&time_end=2024-03-01T05:00:00Z&period_id=1SEC',
        400,
        "Invalid value of parameter 'period_id': period 1SEC gives more than 2000 candles over the range: choose a longer one",
      ],
    ];
    for (const [q, status, start] of cases) {
      const msg = expectError(await srv.get(`${CHART}${q}`, H()), status);
      expect({ q, msg: msg.slice(0, start.length) }).toEqual({ q, msg: start });
    }
    expect(expectError(await srv.get('/v1/exchangerate/FOO/USD/chart', H()), 550)).toBe(
      "You requested specific single item that we don't have at this moment: no rate for FOO/USD between 2024-03-01T04:54:11.0000000Z and 2024-03-01T05:54:11.0000000Z",
    );
  });

  it('is a 550 saying why under --follow, whose run completes only when the service stops', async () => {
    const log = join(demo.tmp.dir, 'follow.ndjson');
    const T0 = Date.UTC(2026, 0, 1);
    writeFileSync(
      log,
      `${JSON.stringify({ type: 'trade', time: formatTime((T0 - 20_000) * 1000), symbol_id: 'EXA_SPOT_BTC_USD', price: 100, size: 1 })}\n` +
        `${JSON.stringify({ type: 'quote', time: formatTime((T0 - 20_000) * 1000), symbol_id: 'EXA_SPOT_BTC_USD', bid_price: 99, bid_size: 2, ask_price: 101, ask_size: 3 })}\n`,
    );
    const f = startFollow({ log, db: join(demo.tmp.dir, 'follow.sqlite'), now: () => T0, pollMs: 3_600_000 });
    const live = await startServer({ provider: f.provider, keysPath: join(demo.tmp.dir, 'keys-follow.sqlite') });
    try {
      const H2 = { 'X-CoinAPI-Key': live.key() };
      expect((await live.get('/v1/exchangerate/BTC/USD', H2)).status).toBe(200);
      expect(expectError(await live.get(CHART, H2), 550)).toMatch(
        /under --follow the run completes only when the service stops: chart the log with "xrate plot LOG"/,
      );
    } finally {
      await live.close();
      await f.provider.close();
    }
  });

  it('serves the page and its assets without a key', async () => {
    const page = await srv.get('/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<script src="/ui/chart.js"></script>');
    const lib = await srv.get('/ui/uPlot.iife.min.js');
    expect([lib.status, lib.headers['content-type'], lib.headers['cache-control']]).toEqual([
      200,
      'text/javascript; charset=utf-8',
      'no-cache',
    ]);
  });
});
