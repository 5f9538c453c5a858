/**
 * Every endpoint over real HTTP on 127.0.0.1, against a database replayed from the demo log: the
 * answers equal `xrate rate` / `xrate history` from the same database, every JSON body matches
 * the interface's schema, and every bad request is a JSON error (never a 500).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTime, parseTime } from '../../src/core/time.js';
import { wireNumber } from '../../src/core/wire.js';
import { ReplayStore } from '../../src/io/store.js';
import { queryHistory, queryRates } from '../../src/replay/query.js';
import { demoDb, expectError, expectSchema, FIXTURES, PATHS, startServer, tempDir, type TestServer } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
let db: string;
let srv: TestServer;
let key: string;
let lastTick: number;
let firstTick: number;
const H = (): Record<string, string> => ({ 'X-CoinAPI-Key': key });

beforeAll(async () => {
  tmp = tempDir();
  db = await demoDb(tmp.dir);
  const store = ReplayStore.open(db, { readonly: true });
  const run = store.latestRun()!;
  lastTick = run.last_tick!;
  firstTick = run.first_tick!;
  store.close();
  srv = await startServer({ db, keysPath: join(tmp.dir, 'keys.sqlite') });
  key = srv.key({ name: 'test' });
});

afterAll(async () => {
  await srv?.close();
  tmp?.remove();
});

/** `inverse` is 1 / `rate` as written: within 2e-14 of it (each rounded to 15 digits), a number written as is (wireNumber). */
function expectInverse(inverse: number, rate: number): void {
  expect(Math.abs(inverse * rate - 1)).toBeLessThan(2e-14);
  expect(wireNumber(inverse)).toBe(inverse);
}

async function getJson(path: string, specPath: string): Promise<unknown> {
  const r = await srv.get(path, H());
  expect(r.status, r.text).toBe(200);
  expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = r.json();
  expectSchema(specPath, body);
  return body;
}

describe('GET /v1/exchangerate/{base}/{quote}', () => {
  it('answers the current rate (the last tick) exactly as xrate rate does from the database', async () => {
    const pairs: [string, string][] = [
      ['BTC', 'USD'],
      ['ETH', 'BTC'],
      ['USD', 'BTC'],
      ['SOL', 'BTC'],
      ['EUR', 'USDT'],
      ['DOGE', 'XRP'],
    ];
    const want = await queryRates({ inputs: [db] }, lastTick, pairs);
    for (let i = 0; i < pairs.length; i++) {
      const body = (await getJson(`/v1/exchangerate/${pairs[i][0]}/${pairs[i][1]}`, PATHS.rate)) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(['time', 'asset_id_base', 'asset_id_quote', 'rate']);
      expect(body).toEqual({ time: want[i].time, asset_id_base: pairs[i][0], asset_id_quote: pairs[i][1], rate: want[i].rate });
      expect(body.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
    }
  });

  it('with time, answers the rate as of the last tick at or before it (every ISO form of the wire notes)', async () => {
    const forms: [string, string][] = [
      ['2024-03-01T05:00:00Z', '2024-03-01T05:00:00Z'],
      ['2024-03-01T05:00:00', '2024-03-01T05:00:00Z'],
      ['2024-03-01T05:00:00.9999999Z', '2024-03-01T05:00:00.9999999Z'],
      ['2024-03-01T05:00:00.5', '2024-03-01T05:00:00.5Z'],
      ['2024-03-01T06:00:00%2B01:00', '2024-03-01T05:00:00Z'],
      ['2024-03-01T06:00:00+01:00', '2024-03-01T05:00:00Z'], // "+" decoded as a space
      ['2024-03-01T04:30', '2024-03-01T04:30:00Z'],
      ['2024-03-02', '2024-03-02T00:00:00Z'],
    ];
    for (const [text, iso] of forms) {
      const at = parseTime(iso)!;
      const [want] = await queryRates({ inputs: [db] }, at, [['BTC', 'USD']]);
      const body = (await getJson(`/v1/exchangerate/BTC/USD?time=${text}`, PATHS.rate)) as Record<string, unknown>;
      expect(body, text).toEqual({ time: want.time, asset_id_base: 'BTC', asset_id_quote: 'USD', rate: want.rate });
    }
  });

  it('after the last tick: the final engine advanced with no events, for any order of times', async () => {
    const times = [lastTick + 400e6, lastTick + 10e6, lastTick + 400e6, lastTick + 3600e6, lastTick + 90_000e6];
    const pairs: [string, string][] = [
      ['BTC', 'USD'],
      ['SOL', 'BTC'],
      ['ETH', 'EUR'],
    ];
    for (const t of times) {
      const want = await queryRates({ inputs: [db] }, t, pairs);
      for (let i = 0; i < pairs.length; i++) {
        const r = await srv.get(`/v1/exchangerate/${pairs[i][0]}/${pairs[i][1]}?time=${formatTime(t)}`, H());
        if (want[i].rate === null) expectError(r, 550);
        else
          expect(r.json(), `${pairs[i].join('/')} at ${formatTime(t)}`).toEqual({
            time: want[i].time,
            asset_id_base: pairs[i][0],
            asset_id_quote: pairs[i][1],
            rate: want[i].rate,
          });
      }
    }
  });

  it('identity, inverse and cross rates; asset ids case-insensitively; trailing slash and case of the path', async () => {
    const id = (await getJson('/v1/exchangerate/BTC/BTC', PATHS.rate)) as Record<string, unknown>;
    expect(id).toEqual({ time: formatTime(lastTick), asset_id_base: 'BTC', asset_id_quote: 'BTC', rate: 1 });
    const direct = (await getJson('/v1/exchangerate/BTC/USD', PATHS.rate)) as { rate: number };
    const inv = (await getJson('/v1/exchangerate/USD/BTC', PATHS.rate)) as { rate: number };
    expect(inv.rate * direct.rate).toBeCloseTo(1, 12);
    const lower = (await getJson('/v1/exchangerate/btc/usd/', PATHS.rate)) as Record<string, unknown>;
    expect(lower).toEqual({ ...direct, asset_id_base: 'BTC', asset_id_quote: 'USD' });
    const upperPath = await srv.get('/V1/ExchangeRate/BTC/USD', H());
    expect(upperPath.status).toBe(200);
    const dbl = await srv.get('/v1//exchangerate/BTC/USD', H());
    expect(dbl.status).toBe(200);
  });

  it('550 for an unknown asset, before the first rate and far after the last', async () => {
    expect(expectError(await srv.get('/v1/exchangerate/BTC/XYZ', H()), 550)).toMatch(
      /^You requested specific single item that we don't have at this moment: .*unknown asset "XYZ"/,
    );
    expect(expectError(await srv.get('/v1/exchangerate/NOPE/USD', H()), 550)).toMatch(/unknown asset "NOPE"/);
    expect(expectError(await srv.get(`/v1/exchangerate/BTC/USD?time=${formatTime(firstTick - 1_000_000)}`, H()), 550)).toMatch(
      /before the first tick/,
    );
    expect(expectError(await srv.get('/v1/exchangerate/BTC/USD?time=2024-03-01T03:00:00Z', H()), 550)).toMatch(/no rate for BTC\/USD/);
    expect(expectError(await srv.get('/v1/exchangerate/BTC/USD?time=2030-01-01', H()), 550)).toMatch(/no rate/);
    expect((await srv.get('/v1/exchangerate/BTC/XYZ', H())).headers['x-ratelimit-request-cost']).toBe('1');
  });

  it('400 naming the parameter for a bad time', async () => {
    for (const bad of ['yesterday', '2024-13-01', '2024-03-01T25:00:00Z', '2024-03-01T05:00:00.12345678Z', '1709272451']) {
      expect(expectError(await srv.get(`/v1/exchangerate/BTC/USD?time=${encodeURIComponent(bad)}`, H()), 400)).toMatch(/parameter 'time'/);
    }
    expect(expectError(await srv.get('/v1/exchangerate/BTC/USD?time=2024-03-01&time=2024-03-02', H()), 400)).toMatch(
      /'time'.*more than once/,
    );
  });
});

describe('GET /v1/exchangerate/{base}', () => {
  it('all rates of a base: every other asset with a rate, sorted, each as xrate rate gives it', async () => {
    const body = (await getJson('/v1/exchangerate/BTC', PATHS.rates)) as {
      asset_id_base: string;
      rates: { time: string; asset_id_quote: string; rate: number }[];
    };
    expect(Object.keys(body)).toEqual(['asset_id_base', 'rates']);
    expect(body.asset_id_base).toBe('BTC');
    const quotes = body.rates.map((r) => r.asset_id_quote);
    expect(quotes).toEqual([...quotes].sort());
    expect(quotes).not.toContain('BTC');
    expect(quotes).toEqual(expect.arrayContaining(['USD', 'EUR', 'ETH', 'SOL', 'USDT', 'DOGE', 'XRP', 'LTC', 'ADA']));
    const want = await queryRates(
      { inputs: [db] },
      lastTick,
      quotes.map((q) => ['BTC', q] as [string, string]),
    );
    body.rates.forEach((r, i) => {
      expect(Object.keys(r)).toEqual(['time', 'asset_id_quote', 'rate']);
      expect(r).toEqual({ time: want[i].time, asset_id_quote: quotes[i], rate: want[i].rate });
    });
  });

  it('filter_asset_id (comma or semicolon), invert and time', async () => {
    const f = (await getJson('/v1/exchangerate/BTC?filter_asset_id=USD;EUR,ETH,,NOPE', PATHS.rates)) as {
      rates: { asset_id_quote: string; rate: number }[];
    };
    expect(f.rates.map((r) => r.asset_id_quote)).toEqual(['ETH', 'EUR', 'USD']);
    for (const v of ['true', 'True', 'TRUE', '1']) {
      const inv = (await getJson(`/v1/exchangerate/BTC?filter_asset_id=USD,EUR,ETH&invert=${v}`, PATHS.rates)) as {
        rates: { asset_id_quote: string; rate: number }[];
      };
      // 1 / rate rounded as written (of the rate as computed, so not always 1 / the written rate exactly).
      for (const [i, r] of inv.rates.entries()) expectInverse(r.rate, f.rates[i].rate);
    }
    const notInv = (await getJson('/v1/exchangerate/BTC?filter_asset_id=USD&invert=false', PATHS.rates)) as { rates: { rate: number }[] };
    expect(notInv.rates[0].rate).toBe(f.rates[2].rate);
    const at = '2024-03-01T04:30:00Z';
    const t = (await getJson(`/v1/exchangerate/BTC?filter_asset_id=USD&time=${at}`, PATHS.rates)) as {
      rates: { time: string; rate: number }[];
    };
    const [want] = await queryRates({ inputs: [db] }, parseTime(at)!, [['BTC', 'USD']]);
    expect(t.rates).toEqual([{ time: want.time, asset_id_quote: 'USD', rate: want.rate }]);
    const none = (await getJson('/v1/exchangerate/BTC?filter_asset_id=NOPE', PATHS.rates)) as { rates: unknown[] };
    expect(none.rates).toEqual([]);
  });

  it('550 for an unknown base, 400 for a bad invert', async () => {
    expect(expectError(await srv.get('/v1/exchangerate/NOPE', H()), 550)).toMatch(/unknown asset "NOPE"/);
    expect(expectError(await srv.get('/v1/exchangerate/BTC?invert=maybe', H()), 400)).toMatch(/parameter 'invert'/);
    expect(expectError(await srv.get('/v1/exchangerate/BTC?time=x', H()), 400)).toMatch(/parameter 'time'/);
  });
});

describe('GET /v1/exchangerate/history/periods', () => {
  it('the 33 TimeseriesPeriod records of the interface', async () => {
    const body = await getJson('/v1/exchangerate/history/periods', PATHS.periods);
    expect(body).toEqual(JSON.parse(readFileSync(join(FIXTURES, 'periods.json'), 'utf8')));
    expect((body as unknown[]).length).toBe(33);
  });
});

describe('GET /v1/exchangerate/{base}/{quote}/history', () => {
  const from = '2024-03-01T04:00:00Z';
  const to = '2024-03-01T06:00:00Z';

  it('stored and rolled-up periods equal xrate history from the database', async () => {
    for (const [period, limit, start] of [
      ['1MIN', 100, from],
      ['5MIN', 100, from],
      ['1HRS', 10, from],
      ['10SEC', 50, from],
      ['1DAY', 5, '2024-03-01'],
      ['2DAY', 5, '2024-02-29'],
      ['1SEC', 1000, '2024-03-01T05:50:00Z'],
    ] as const) {
      const want = await queryHistory({ inputs: [db] }, ['BTC', 'USD'], period, parseTime(start)!, parseTime(to)!, limit);
      const body = (await getJson(
        `/v1/exchangerate/BTC/USD/history?period_id=${period}&time_start=${start}&time_end=${to}&limit=${limit}`,
        PATHS.history,
      )) as unknown[];
      expect(body, period).toEqual(want);
      expect(body.length).toBeGreaterThan(0);
      expect(Object.keys(body[0] as object)).toEqual([
        'time_period_start',
        'time_period_end',
        'time_open',
        'time_close',
        'rate_open',
        'rate_high',
        'rate_low',
        'rate_close',
      ]);
    }
  });

  it('default limit 100, period_id case-insensitive, a time_end past the data', async () => {
    const body = (await getJson(
      `/v1/exchangerate/BTC/USD/history?period_id=1min&time_start=${from}&time_end=2100-01-01T00:00:00Z`,
      PATHS.history,
    )) as {
      time_period_start: string;
    }[];
    expect(body.length).toBe(100);
    expect(body[0].time_period_start).toBe('2024-03-01T04:00:00.0000000Z');
    const later = (await getJson(
      '/v1/exchangerate/BTC/USD/history?period_id=1HRS&time_start=2024-03-01T04:30:00Z&time_end=2100-01-01T00:00:00Z',
      PATHS.history,
    )) as {
      time_period_start: string;
    }[];
    expect(later.map((b) => b.time_period_start)).toEqual(['2024-03-01T05:00:00.0000000Z']);
    const empty = await getJson(
      '/v1/exchangerate/BTC/USD/history?period_id=1MIN&time_start=2025-01-01&time_end=2100-01-01T00:00:00Z',
      PATHS.history,
    );
    expect(empty).toEqual([]);
  });

  it('the inverse of a stored pair: open/close inverted, high and low swapped', async () => {
    const q = `period_id=1MIN&time_start=${from}&time_end=${to}&limit=30`;
    const d = (await getJson(`/v1/exchangerate/BTC/USD/history?${q}`, PATHS.history)) as {
      rate_open: number;
      rate_high: number;
      rate_low: number;
      rate_close: number;
      time_open: string;
    }[];
    const i = (await getJson(`/v1/exchangerate/USD/BTC/history?${q}`, PATHS.history)) as typeof d;
    expect(i.length).toBe(d.length);
    i.forEach((b, k) => {
      expect(b.time_open).toBe(d[k].time_open);
      expectInverse(b.rate_open, d[k].rate_open);
      expectInverse(b.rate_high, d[k].rate_low);
      expectInverse(b.rate_low, d[k].rate_high);
      expectInverse(b.rate_close, d[k].rate_close);
    });
  });

  it('550 for a pair without stored history; 400 naming each bad parameter', async () => {
    expect(
      expectError(
        await srv.get(`/v1/exchangerate/SOL/BTC/history?period_id=1MIN&time_start=${from}&time_end=2100-01-01T00:00:00Z`, H()),
        550,
      ),
    ).toMatch(/--track SOL\/BTC/);
    expect(
      expectError(
        await srv.get(`/v1/exchangerate/BTC/NOPE/history?period_id=1MIN&time_start=${from}&time_end=2100-01-01T00:00:00Z`, H()),
        550,
      ),
    ).toMatch(/unknown asset "NOPE"/);
    const cases: [string, RegExp][] = [
      [`time_start=${from}`, /'period_id'/],
      [`period_id=7MIN&time_start=${from}&time_end=2100-01-01`, /'period_id'.*not an exchange-rate period/],
      [`period_id=1MTH&time_start=${from}&time_end=2100-01-01`, /'period_id'/],
      ['period_id=1MIN', /'time_start'/],
      ['period_id=1MIN&time_start=noon&time_end=2100-01-01', /'time_start'/],
      // Required by the interface description (as period_id and time_start).
      [`period_id=1MIN&time_start=${from}`, /Missing required parameter 'time_end'/],
      [`period_id=1MIN&time_start=${from}&time_end=`, /Missing required parameter 'time_end'/],
      [`period_id=1MIN&time_start=${from}&time_end=${from}`, /'time_end'.*after time_start/],
      [`period_id=1MIN&time_start=${from}&time_end=later`, /'time_end'/],
      [`period_id=1MIN&time_start=${from}&time_end=2100-01-01&limit=0`, /'limit'/],
      [`period_id=1MIN&time_start=${from}&time_end=2100-01-01&limit=100001`, /'limit'/],
      [`period_id=1MIN&time_start=${from}&time_end=2100-01-01&limit=ten`, /'limit'/],
      [`period_id=1MIN&time_start=${from}&time_end=2100-01-01&limit=1.5`, /'limit'/],
      [`period_id=1MIN&time_start=${from}&time_end=2100-01-01&limit=-1`, /'limit'/],
    ];
    for (const [q, re] of cases) expect(expectError(await srv.get(`/v1/exchangerate/BTC/USD/history?${q}`, H()), 400), q).toMatch(re);
  });
});

describe('GET /v1/exchangerate/{base}/{quote}/explain (extension)', () => {
  it('explains a cross rate: path, legs, markets used and left out', async () => {
    const r = await srv.get('/v1/exchangerate/SOL/BTC/explain', H());
    expect(r.status, r.text).toBe(200);
    const e = r.json() as {
      kind: string;
      path: string[];
      rate: number;
      legs: { pair: string; explanation: { used: { symbol_id: string; weight: number }[] } }[];
    };
    const rate = (await getJson('/v1/exchangerate/SOL/BTC', PATHS.rate)) as { rate: number };
    expect(e.kind).toBe('cross');
    expect(e.path).toEqual(['SOL', 'USD', 'BTC']);
    expect(e.rate).toBe(rate.rate);
    expect(e.legs.map((l) => l.pair)).toEqual(['SOL/USD', 'BTC/USD']);
    expect(e.legs[0].explanation.used.length).toBeGreaterThan(0);
    const d = (await srv.get('/v1/exchangerate/BTC/USDT/explain', H())).json() as { kind: string; legs: unknown[] };
    expect(d.kind).toBe('direct');
    expect(d.legs.length).toBe(1);
  });

  it('550 for an unknown asset or an earlier time (only the latest tick is kept)', async () => {
    expect(expectError(await srv.get('/v1/exchangerate/SOL/NOPE/explain', H()), 550)).toMatch(/unknown asset "NOPE"/);
    expect(expectError(await srv.get('/v1/exchangerate/SOL/BTC/explain?time=2024-03-01T05:00:00Z', H()), 550)).toMatch(/latest tick/);
    expect((await srv.get(`/v1/exchangerate/SOL/BTC/explain?time=${formatTime(lastTick)}`, H())).status).toBe(200);
    const later = (await srv.get(`/v1/exchangerate/SOL/BTC/explain?time=${formatTime(lastTick + 600e6)}`, H())).json() as {
      tick: string;
      fresh: boolean;
    };
    expect(later).toMatchObject({ tick: formatTime(lastTick + 600e6), fresh: false });
    const t0 = Date.now();
    expect(expectError(await srv.get('/v1/exchangerate/SOL/BTC/explain?time=2030-01-01', H()), 550)).toMatch(/every rate expired/);
    expect(expectError(await srv.get('/v1/exchangerate/SOL/BTC?time=2030-01-01', H()), 550)).toMatch(/no rate/);
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});

describe('errors', () => {
  it('404 JSON for unknown routes and methods', async () => {
    expect(expectError(await srv.get('/v1/exchangerate/BTC/USD/extra/more', H()), 404)).toMatch(
      /Unknown route GET \/v1\/exchangerate\/BTC\/USD\/extra\/more/,
    );
    expect(expectError(await srv.get('/v1', H()), 404)).toMatch(/Unknown route/); // `/` is the chart page
    expect(expectError(await srv.get('/v2/exchangerate/BTC/USD'), 404)).toMatch(/Unknown route/);
    const { request } = await import('./helpers.js');
    expect(expectError(await request(`${srv.url}/v1/exchangerate/BTC/USD`, { method: 'POST', headers: H() }), 404)).toMatch(
      /Unknown route POST/,
    );
  });

  it('400 JSON for a malformed URL or HTTP request', async () => {
    expect(expectError(await srv.get('/v1/exchangerate/%E0%A4%A/USD', H()), 400)).toMatch(/Bad request/);
    const net = await import('node:net');
    const port = Number(new URL(srv.url).port);
    const raw = await new Promise<string>((res) => {
      const s = net.connect(port, '127.0.0.1', () => s.write('GARBAGE\r\n\r\n'));
      let out = '';
      s.on('data', (d) => (out += d.toString()));
      s.on('close', () => res(out));
    });
    expect(raw).toMatch(/^HTTP\/1.1 400 Bad Request/);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({ message: expect.stringMatching(/Bad request/) });
  });

  it('never a 500 for bad input', async () => {
    const values = [
      '',
      ' ',
      '%00',
      '%FF',
      "'",
      '"',
      '<x>',
      '../../etc',
      'a'.repeat(300),
      '-1',
      '1e309',
      'NaN',
      'null',
      '[]',
      '{}',
      '%20true',
      'true%00',
    ];
    const paths = [
      (v: string) => `/v1/exchangerate/BTC/USD?time=${v}`,
      (v: string) => `/v1/exchangerate/${v}/USD`,
      (v: string) => `/v1/exchangerate/BTC/${v}`,
      (v: string) => `/v1/exchangerate/${v}`,
      (v: string) => `/v1/exchangerate/BTC?filter_asset_id=${v}&invert=${v}`,
      (v: string) => `/v1/exchangerate/BTC/USD/history?period_id=${v}&time_start=${v}&time_end=${v}&limit=${v}`,
      (v: string) => `/v1/exchangerate/BTC/USD/history?period_id=1MIN&time_start=2024-03-01&time_end=2100-01-01T00:00:00Z&limit=${v}`,
      (v: string) => `/v1/exchangerate/BTC/USD/explain?time=${v}`,
      (v: string) =>
        `/v1/exchangerate/BTC/USD?output_format=csv&csv_set_delimiter=${v}&csv_set_dec_mark=${v}&csv_set_timeformat=${v}&csv_set_newline=${v}&csv_include_header=${v}&csv_exclude_col=${v}`,
      (v: string) => `/v1/exchangerate/BTC/USD?output_format=${v}`,
    ];
    for (const p of paths) {
      for (const v of values) {
        const r = await srv.get(p(v), H());
        expect([200, 400, 404, 550], `${p(v)} -> ${r.status} ${r.text.slice(0, 200)}`).toContain(r.status);
        if (r.status !== 200) expectError(r, r.status);
      }
    }
  });
});
