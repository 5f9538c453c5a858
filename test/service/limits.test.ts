/**
 * Limits over HTTP: the headers on every authenticated response, request cost, 429 past the 24 h
 * limit (unless overage), the sliding window, the concurrency limit, exactness under concurrent
 * requests, and usage surviving a restart.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatTime } from '../../src/core/time.js';
import { KeyStore } from '../../src/http/keys.js';
import type { RateProvider } from '../../src/answers/index.js';
import { demoProvider, expectError, Gate, GatedHistory, limitsOf, startServer, type Res, type TestServer } from './helpers.js';

const demo = demoProvider();
let clock = Date.UTC(2026, 0, 1, 12, 0, 0, 250);
const RATE = '/v1/exchangerate/BTC/USD';
const HIST = '/v1/exchangerate/BTC/USD/history?period_id=1SEC&time_start=2024-03-01T05:00:00Z&time_end=2024-03-01T05:10:00Z';

let n = 0;
async function server(extra: { provider?: RateProvider; flushEveryMs?: number; keysPath?: string } = {}): Promise<TestServer> {
  return startServer({
    provider: extra.provider ?? demo.provider,
    keysPath: extra.keysPath ?? join(demo.tmp.dir, `keys-${n++}.sqlite`),
    now: () => clock,
    flushEveryMs: extra.flushEveryMs,
  });
}

describe('headers and cost', () => {
  let srv: TestServer;
  afterAll(async () => srv?.close());

  it('every authenticated response carries the limit headers; errors cost 1, refusals 0', async () => {
    srv = await server();
    const key = srv.key({ limit: 1000, concurrency: 7 });
    const H = { 'X-CoinAPI-Key': key };
    const resetOf = (sec: number): string => formatTime((sec + 86_400) * 1_000_000);
    const sec = Math.floor(clock / 1000);
    let r = await srv.get(RATE, H);
    expect(limitsOf(r)).toEqual({
      used: '1',
      limit: '1000',
      remaining: '999',
      cost: '1',
      reset: resetOf(sec),
      overage: 'DISABLED',
      climit: '7',
      cremaining: '6',
    });
    r = await srv.get('/v1/exchangerate/BTC/USD?time=bad', H);
    expectError(r, 400);
    expect(limitsOf(r)).toMatchObject({ used: '2', remaining: '998', cost: '1', climit: '7' });
    r = await srv.get('/v1/exchangerate/BTC/NOPE', H);
    expectError(r, 550);
    expect(limitsOf(r)).toMatchObject({ used: '3', cost: '1' });
    const noHistory = srv.key({ rights: ['rate'] });
    r = await srv.get(HIST, { 'X-CoinAPI-Key': noHistory });
    expectError(r, 403);
    expect(limitsOf(r)).toMatchObject({ used: '0', remaining: '1000000', cost: '0', reset: formatTime(Math.floor(clock) * 1000) });
    r = await srv.get('/v1/exchangerate/history/periods', H);
    expect(limitsOf(r)).toMatchObject({ used: '4', cost: '1' });
    r = await srv.get('/nothing/here', H);
    expectError(r, 404);
    expect(r.headers['x-ratelimit-request-cost']).toBe('0');
  });

  it('history: one request per call without limit; with limit, one per 100 points returned (at least 1)', async () => {
    const key = srv.key({ limit: 1000 });
    const H = { 'X-CoinAPI-Key': key };
    let r = await srv.get(HIST, H);
    expect((r.json() as unknown[]).length).toBe(100);
    expect(limitsOf(r)).toMatchObject({ cost: '1', used: '1' });
    r = await srv.get(`${HIST}&limit=250`, H);
    expect((r.json() as unknown[]).length).toBe(250);
    expect(limitsOf(r)).toMatchObject({ cost: '3', used: '4' });
    r = await srv.get(`${HIST}&limit=100000`, H);
    expect((r.json() as unknown[]).length).toBe(600);
    expect(limitsOf(r)).toMatchObject({ cost: '6', used: '10' });
    r = await srv.get('/v1/exchangerate/BTC/USD/history?period_id=1SEC&time_start=2025-01-01&time_end=2100-01-01T00:00:00Z&limit=5000', H);
    expect(r.json()).toEqual([]);
    expect(limitsOf(r)).toMatchObject({ cost: '1', used: '11' });
  });
});

describe('24 h request limit', () => {
  it('429 past the limit (charging nothing), with Retry-After; the window slides', async () => {
    const srv = await server();
    try {
      const key = srv.key({ limit: 5 });
      const H = { 'X-CoinAPI-Key': key };
      const t0 = clock;
      for (let i = 0; i < 3; i++) expect((await srv.get(RATE, H)).status).toBe(200);
      clock += 3_600_000; // one hour later
      for (let i = 0; i < 2; i++) expect((await srv.get(RATE, H)).status).toBe(200);
      let r = await srv.get(RATE, H);
      expect(expectError(r, 429)).toMatch(/Request limit exceeded: 5 of 5/);
      expect(limitsOf(r)).toMatchObject({ used: '5', remaining: '0', cost: '0' });
      // The first 3 requests leave the window 24 h after their second.
      expect(Number(r.headers['retry-after'])).toBe(86_400 - 3600 + (Math.floor(t0 / 1000) - Math.floor(clock / 1000) + 3600));
      expect(limitsOf(r).reset).toBe(formatTime((Math.floor(clock / 1000) + 86_400) * 1e6));
      // A history call that would cost more than what is left is refused.
      clock = t0 + 86_400_000 - 1000; // the first three are still in
      expectError(await srv.get(RATE, H), 429);
      clock = t0 + 86_400_000; // they left
      r = await srv.get(RATE, H);
      expect(r.status).toBe(200);
      expect(limitsOf(r)).toMatchObject({ used: '3', remaining: '2' });
      r = await srv.get(`${HIST}&limit=250`, H);
      expect(expectError(r, 429)).toMatch(/this request costs 3/);
      expect(limitsOf(r)).toMatchObject({ used: '3', cost: '0' });
      r = await srv.get(`${HIST}&limit=200`, H);
      expect(r.status).toBe(200);
      expect(limitsOf(r)).toMatchObject({ used: '5', remaining: '0', cost: '2' });
    } finally {
      await srv.close();
    }
  });

  it('with overage the limit may be passed and Remaining goes negative', async () => {
    const srv = await server();
    try {
      const key = srv.key({ limit: 2, overage: true });
      let r: Res | undefined;
      for (let i = 0; i < 4; i++) {
        r = await srv.get(RATE, { 'X-CoinAPI-Key': key });
        expect(r.status).toBe(200);
      }
      expect(limitsOf(r!)).toMatchObject({ used: '4', limit: '2', remaining: '-2', overage: 'ENABLED' });
    } finally {
      await srv.close();
    }
  });

  it('exact under concurrent requests: exactly `limit` of many parallel requests succeed', async () => {
    const gate = new Gate();
    const srv = await server({ provider: new GatedHistory(demo.provider, gate) });
    try {
      const key = srv.key({ limit: 20, concurrency: 1000 });
      const pending = Array.from({ length: 60 }, () => srv.get(HIST, { 'X-CoinAPI-Key': key }));
      await gate.waitFor(60); // every request passed admission and waits in the handler
      gate.open();
      const res = await Promise.all(pending);
      expect(res.filter((r) => r.status === 200).length).toBe(20);
      expect(res.filter((r) => r.status === 429).length).toBe(40);
      expect(Math.max(...res.map((r) => Number(r.headers['x-ratelimit-used'])))).toBe(20);
      const plain = await Promise.all(Array.from({ length: 30 }, () => srv.get(RATE, { 'X-CoinAPI-Key': srv.key({ limit: 1000 }) })));
      expect(plain.every((r) => r.status === 200)).toBe(true);
      const k2 = srv.key({ limit: 7, concurrency: 1000 });
      const burst = await Promise.all(Array.from({ length: 40 }, () => srv.get(RATE, { 'X-CoinAPI-Key': k2 })));
      expect(burst.filter((r) => r.status === 200).length).toBe(7);
    } finally {
      await srv.close();
    }
  });
});

describe('concurrency limit', () => {
  it('429 past the concurrency limit; X-ConcurrencyLimit-Remaining counts requests in flight', async () => {
    const gate = new Gate();
    const srv = await server({ provider: new GatedHistory(demo.provider, gate) });
    try {
      const key = srv.key({ concurrency: 2 });
      const H = { 'X-CoinAPI-Key': key };
      const slow = [srv.get(HIST, H), srv.get(HIST, H)];
      await gate.waitFor(2);
      const r = await srv.get(RATE, H);
      expect(expectError(r, 429)).toMatch(/concurrency limit of this API key is 2/);
      expect(limitsOf(r)).toMatchObject({ climit: '2', cremaining: '0', cost: '0' });
      expect(r.headers['retry-after']).toBe('1');
      // Another key is not affected.
      expect((await srv.get(RATE, { 'X-CoinAPI-Key': srv.key() })).status).toBe(200);
      gate.open();
      const done = await Promise.all(slow);
      expect(done.map((x) => x.status)).toEqual([200, 200]);
      // Both answered while the other was still in flight.
      expect(done.map((x) => limitsOf(x).cremaining)).toEqual(['0', '0']);
      const after = await srv.get(RATE, H);
      expect(after.status).toBe(200);
      expect(limitsOf(after)).toMatchObject({ climit: '2', cremaining: '1' });
    } finally {
      await srv.close();
    }
  });

  it('a request aborted by the client frees its slot', async () => {
    const gate = new Gate();
    const srv = await server({ provider: new GatedHistory(demo.provider, gate) });
    try {
      const key = srv.key({ concurrency: 1 });
      const { request } = await import('node:http');
      const u = new URL(srv.url + HIST);
      const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers: { 'X-CoinAPI-Key': key } });
      req.on('error', () => undefined);
      req.end();
      await gate.waitFor(1);
      expectError(await srv.get(RATE, { 'X-CoinAPI-Key': key }), 429);
      req.destroy();
      await new Promise((r) => setTimeout(r, 100));
      gate.open();
      await new Promise((r) => setTimeout(r, 50));
      expect((await srv.get(RATE, { 'X-CoinAPI-Key': key })).status).toBe(200);
    } finally {
      await srv.close();
    }
  });
});

describe('persistence', () => {
  it('usage survives a restart (written on close, and behind every flush period)', async () => {
    const keysPath = join(demo.tmp.dir, 'persist.sqlite');
    let srv = await server({ keysPath, flushEveryMs: 0 });
    const key = srv.key({ limit: 10 });
    for (let i = 0; i < 4; i++) await srv.get(RATE, { 'X-CoinAPI-Key': key });
    await srv.get(`${HIST}&limit=300`, { 'X-CoinAPI-Key': key });
    await srv.close();
    const ks = KeyStore.open(keysPath);
    expect(ks.list(clock).find((k) => k.prefix === key.slice(0, 8))!.used_24h).toBe(7);
    ks.close();

    srv = await server({ keysPath, flushEveryMs: 20 });
    let r = await srv.get(RATE, { 'X-CoinAPI-Key': key });
    expect(limitsOf(r)).toMatchObject({ used: '8', remaining: '2' });
    await srv.get(RATE, { 'X-CoinAPI-Key': key });
    await new Promise((res) => setTimeout(res, 100));
    // Written behind while running: a second connection sees it.
    const other = KeyStore.open(keysPath);
    expect(other.list(clock).find((k) => k.prefix === key.slice(0, 8))!.used_24h).toBe(9);
    other.close();
    await srv.close();

    srv = await server({ keysPath });
    r = await srv.get(RATE, { 'X-CoinAPI-Key': key });
    expect(limitsOf(r)).toMatchObject({ used: '10', remaining: '0' });
    expectError(await srv.get(RATE, { 'X-CoinAPI-Key': key }), 429);
    clock += 86_400_000 + 1000;
    r = await srv.get(RATE, { 'X-CoinAPI-Key': key });
    expect(limitsOf(r)).toMatchObject({ used: '1' });
    await srv.close();
  });
});
