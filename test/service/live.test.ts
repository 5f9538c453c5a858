/**
 * Live providers over HTTP: `serve --replay LOG` (the engine left by the replay) and
 * `serve --follow LOG` (a growing NDJSON log, ticks on the wall clock).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTime, parseTime } from '../../src/core/time.js';
import { startFollow, startReplay } from '../../src/service/live.js';
import { DatabaseRateProvider, type LiveRateProvider } from '../../src/answers/index.js';
import { toV1Symbol } from '../../src/service/symbols.js';
import { DEMO_LOG, demoDb, expectError, expectSchema, PATHS, startServer, tempDir, type TestServer } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;

beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp?.remove());

describe('serve --replay LOG', () => {
  let live: LiveRateProvider;
  let fromDb: DatabaseRateProvider;
  let srv: TestServer;
  let key: string;

  beforeAll(async () => {
    live = await startReplay({ log: DEMO_LOG, db: join(tmp.dir, 'replayed.sqlite') });
    fromDb = await DatabaseRateProvider.open(await demoDb(tmp.dir));
    srv = await startServer({ provider: live, keysPath: join(tmp.dir, 'keys-replay.sqlite') });
    key = srv.key();
  });
  afterAll(async () => {
    await srv?.close();
    await live?.close();
    await fromDb?.close();
  });

  it('answers as the database of the same replay does: now, earlier, later, all rates, history', async () => {
    const H = { 'X-CoinAPI-Key': key };
    for (const q of ['', '?time=2024-03-01T05:00:00Z', '?time=2024-03-01T05:54:30Z', '?time=2024-03-01T06:30:00Z']) {
      for (const [b, c] of [
        ['BTC', 'USD'],
        ['SOL', 'BTC'],
        ['usdt', 'eur'],
      ]) {
        const r = await srv.get(`/v1/exchangerate/${b}/${c}${q}`, H);
        expect(r.status, r.text).toBe(200);
        expectSchema(PATHS.rate, r.json());
        const at = q ? parseTime(q.slice(6)) : undefined;
        expect(r.json(), `${b}/${c}${q}`).toEqual(fromDb.rate(b, c, at).value);
      }
    }
    const all = await srv.get('/v1/exchangerate/ETH?invert=1', H);
    expect(all.json()).toEqual(fromDb.rates('ETH', { invert: true }));
    const hist = await srv.get(
      '/v1/exchangerate/ETH/USD/history?period_id=1MIN&time_start=2024-03-01T05:00:00Z&time_end=2100-01-01T00:00:00Z',
      H,
    );
    expectSchema(PATHS.history, hist.json());
    expect((hist.json() as unknown[]).length).toBe(55);
    const e = await srv.get('/v1/exchangerate/SOL/BTC/explain', H);
    expect((e.json() as { kind: string }).kind).toBe('cross');
    expect(live.info().mode).toBe('replay');
  });

  it('answers symbols as the database of the same replay does, at its end and later', async () => {
    const H = { 'X-CoinAPI-Key': key };
    for (const q of ['', '?time=2024-03-01T06:30:00Z']) {
      const at = q ? parseTime(q.slice(6)) : undefined;
      const r = await srv.get(`/v1/symbols/KRAKEN${q}`, H);
      expect(r.status, r.text).toBe(200);
      const body = r.json() as { symbol_id: string }[];
      expect(body.length).toBeGreaterThan(5);
      expect(body, q).toEqual(fromDb.symbols(at, { exchangeIds: ['KRAKEN'] }).map(toV1Symbol));
    }
  });
});

describe('serve --follow LOG', () => {
  const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
  let clock = T0;
  const iso = (ms: number): string => formatTime(ms * 1000);
  const line = (o: Record<string, unknown>): string => `${JSON.stringify(o)}\n`;
  const quote = (ms: number, sym: string, bid: number, ask: number): string =>
    line({ type: 'quote', time: iso(ms), symbol_id: sym, bid_price: bid, bid_size: 2, ask_price: ask, ask_size: 3 });
  const trade = (ms: number, sym: string, price: number): string => line({ type: 'trade', time: iso(ms), symbol_id: sym, price, size: 1 });

  it('reads what is appended, ticks on the wall clock, writes the database, and hands it over when stopped', async () => {
    const log = join(tmp.dir, 'live.ndjson');
    const db = join(tmp.dir, 'live.sqlite');
    writeFileSync(
      log,
      trade(T0 - 20_000, 'EXA_SPOT_BTC_USD', 100) +
        quote(T0 - 20_000, 'EXA_SPOT_BTC_USD', 99, 101) +
        trade(T0 - 20_000, 'EXA_SPOT_ETH_USD', 10) +
        quote(T0 - 19_500, 'EXA_SPOT_ETH_USD', 9.5, 10.5) +
        'not json\n',
    );
    const warnings: string[] = [];
    const f = startFollow({ log, db, now: () => clock, pollMs: 3_600_000, lagMs: 1000, warn: (m) => warnings.push(m) });
    const srv = await startServer({ provider: f.provider, keysPath: join(tmp.dir, 'keys-live.sqlite') });
    const H = { 'X-CoinAPI-Key': srv.key() };
    try {
      expect(f.engine.lastTickTime).toBe((T0 - 1000) * 1000);
      let r = await srv.get('/v1/exchangerate/BTC/USD', H);
      expect(r.json()).toEqual({ time: iso(T0 - 20_000), asset_id_base: 'BTC', asset_id_quote: 'USD', rate: 100 });
      expect((await srv.get('/v1/exchangerate/ETH/BTC', H)).json()).toMatchObject({ rate: 0.1 });

      // A new quote and half a line: only complete lines count.
      appendFileSync(log, `${quote(T0 + 500, 'EXA_SPOT_BTC_USD', 109, 111)}{"type":"quote","time":"${iso(T0 + 1500)}`);
      clock = T0 + 2000;
      f.poll();
      expect(f.engine.lastTickTime).toBe((T0 + 1000) * 1000);
      r = await srv.get('/v1/exchangerate/BTC/USD', H);
      expect(r.json()).toEqual({ time: iso(T0 + 500), asset_id_base: 'BTC', asset_id_quote: 'USD', rate: 110 });
      appendFileSync(log, '","symbol_id":"EXA_SPOT_BTC_USD","bid_price":119,"bid_size":1,"ask_price":121,"ask_size":1}\n');
      clock = T0 + 3000;
      f.poll();
      expect((await srv.get('/v1/exchangerate/BTC/USD', H)).json()).toMatchObject({ rate: 120 });
      expect(f.lines()).toBe(7);
      // An event older than the last tick is late: rejected, nothing changes.
      appendFileSync(log, quote(T0 + 1900, 'EXA_SPOT_BTC_USD', 1, 3));
      f.poll();
      expect(f.engine.getStats().rejects).toMatchObject({ bad_json: 1, late: 1 });
      expect((await srv.get('/v1/exchangerate/BTC/USD', H)).json()).toMatchObject({ rate: 120 });

      // Earlier times come from the database the feed writes.
      r = await srv.get(`/v1/exchangerate/BTC/USD?time=${iso(T0 - 5000)}`, H);
      expect(r.json()).toMatchObject({ rate: 100 });
      expect((await srv.get(`/v1/exchangerate/BTC/USD?time=${iso(T0 + 1200)}`, H)).json()).toMatchObject({ rate: 110 });
      // A later time is the current state (the log may still grow).
      expect((await srv.get(`/v1/exchangerate/BTC/USD?time=${iso(T0 + 60_000)}`, H)).json()).toMatchObject({ rate: 120 });
      // History: closed buckets from the database plus the engine's open one.
      const hist = await srv.get(
        `/v1/exchangerate/BTC/USD/history?period_id=1SEC&time_start=${iso(T0 - 30_000)}&time_end=${iso(T0 + 3_600_000)}&limit=1000`,
        H,
      );
      const items = hist.json() as { time_period_start: string; rate_close: number }[];
      expectSchema(PATHS.history, items);
      expect(items.length).toBe(23);
      expect(items.at(-1)).toMatchObject({ time_period_start: iso(T0 + 2000), rate_close: 120 });
      const min = (
        await srv.get(`/v1/exchangerate/BTC/USD/history?period_id=1MIN&time_start=${iso(T0 - 60_000)}&time_end=${iso(T0 + 3_600_000)}`, H)
      ).json() as {
        rate_open: number;
        rate_high: number;
        rate_close: number;
      }[];
      expect(min.map((m) => [m.rate_open, m.rate_close])).toEqual([
        [100, 100],
        [100, 120],
      ]);
      const e = (await srv.get('/v1/exchangerate/BTC/USD/explain', H)).json() as { kind: string; tick: string };
      expect(e).toMatchObject({ kind: 'direct', tick: iso(T0 + 2000) });

      // Six minutes without quotes: the markets go stale, the rate is carried (and still served).
      clock = T0 + 400_000;
      f.poll();
      const ex = (await srv.get('/v1/exchangerate/BTC/USD/explain', H)).json() as {
        fresh: boolean;
        legs: { explanation: { excluded: { reason: string }[] } }[];
      };
      expect(ex.fresh).toBe(false);
      expect(ex.legs[0].explanation.excluded.map((m) => m.reason)).toEqual(['stale']);
      expect((await srv.get('/v1/exchangerate/BTC/USD', H)).json()).toMatchObject({ rate: 120 });
      expect(srv.provider.info()).toMatchObject({ mode: 'follow', pairs: 2, lastTick: (T0 + 399_000) * 1000 });
      expect(warnings).toEqual([]);
    } finally {
      await srv.close();
      await f.provider.close();
    }

    // The database it wrote serves on its own afterwards.
    const after = await DatabaseRateProvider.open(db);
    try {
      expect(after.rate('BTC', 'USD').value).toMatchObject({ rate: 120 });
      expect(after.rate('BTC', 'USD', T0 * 1000).value).toMatchObject({ rate: 100 });
      expect(() => after.rate('BTC', 'USD', (T0 + 3_600_000) * 1000)).toThrow(/covers its log only up to/);
      expect(
        after.history('BTC', 'USD', {
          period: { period_id: '1MIN', length_seconds: 60, length_months: 0, unit_count: 1, unit_name: 'minute', display_name: '1 Minute' },
          from: (T0 - 60_000) * 1000,
          limit: 10,
        }).length,
      ).toBe(7);
    } finally {
      await after.close();
    }
  });

  it('an old log is caught up on event time only (no wall-clock ticks), with a warning', async () => {
    const log = join(tmp.dir, 'old.ndjson');
    const old = Date.UTC(2024, 2, 1, 5, 0, 0);
    writeFileSync(
      log,
      trade(old, 'EXA_SPOT_BTC_USD', 100) + quote(old, 'EXA_SPOT_BTC_USD', 99, 101) + quote(old + 5000, 'EXA_SPOT_BTC_USD', 100, 102),
    );
    const warnings: string[] = [];
    const f = startFollow({ log, db: join(tmp.dir, 'old.sqlite'), now: () => T0, pollMs: 3_600_000, warn: (m) => warnings.push(m) });
    try {
      expect(f.engine.lastTickTime).toBe((old + 5000) * 1000 - 1_000_000);
      expect(warnings.join('\n')).toMatch(/behind the wall clock: ticking on event time only/);
      expect(f.provider.rate('BTC', 'USD').value.rate).toBe(100);
    } finally {
      await f.provider.close();
    }
  });

  it('refuses a gzipped or CSV log', () => {
    expect(() => startFollow({ log: DEMO_LOG, db: join(tmp.dir, 'x.sqlite') })).toThrow(/plain NDJSON/);
    expect(() => startFollow({ log: join(tmp.dir, 'x.csv'), db: join(tmp.dir, 'x.sqlite') })).toThrow(/plain NDJSON/);
  });

  it('550 before the first tick of a followed log', async () => {
    const log = join(tmp.dir, 'empty.ndjson');
    writeFileSync(log, '');
    const f = startFollow({ log, db: join(tmp.dir, 'empty.sqlite'), now: () => T0, pollMs: 3_600_000 });
    const srv = await startServer({ provider: f.provider, keysPath: join(tmp.dir, 'keys-empty.sqlite') });
    try {
      expect(expectError(await srv.get('/v1/exchangerate/BTC/USD', { 'X-CoinAPI-Key': srv.key() }), 550)).toMatch(
        /no tick has been computed yet/,
      );
    } finally {
      await srv.close();
      await f.provider.close();
    }
  });
});
