/**
 * Numbers on the wire (docs/methodology.md section 7): rates the demo database stores with binary
 * noise (BTC/USD 62299.755000000005 at 05:53:37, the 1DAY open 62439.619999999995, SOL/USD
 * 131.00900000000001) are written with at most 15 significant digits in JSON, CSV, XML and
 * MessagePack, in the all-rates answer (inverted too), in long histories written a slice at a
 * time, in explanations and in the chart's data; the database keeps the doubles as computed.
 */
import { join } from 'node:path';
import { decode as unpack } from '@msgpack/msgpack';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OhlcBucket } from '../../src/core/ohlc.js';
import { getPeriod } from '../../src/core/periods.js';
import { parseTime } from '../../src/core/time.js';
import { wireNumber, wireRate } from '../../src/core/wire.js';
import type { ChartData } from '../../src/replay/chart.js';
import { ReplayDatabase } from '../../src/replay/database.js';
import { demoDb, startServer, tempDir, type TestServer } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
let db: string;
let srv: TestServer;
let key: string;
const H = (extra: Record<string, string> = {}): Record<string, string> => ({ 'X-CoinAPI-Key': key, ...extra });

const AT = '2024-03-01T05:53:40Z';
const RATE = `/v1/exchangerate/BTC/USD?time=${AT}`;
const DAY = '/v1/exchangerate/BTC/USD/history?period_id=1DAY&time_start=2024-03-01T00:00:00Z&time_end=2100-01-01T00:00:00Z';
/** The stored rate of BTC/USD at AT, and as written. */
const NOISY = 62299.755000000005;
const WRITTEN = '62299.755';

beforeAll(async () => {
  tmp = tempDir();
  db = await demoDb(tmp.dir);
  srv = await startServer({ db, keysPath: join(tmp.dir, 'keys.sqlite') });
  key = srv.key();
});

afterAll(async () => {
  await srv?.close();
  tmp?.remove();
});

async function get(path: string, headers: Record<string, string> = {}): Promise<{ text: string; body: Buffer }> {
  const r = await srv.get(path, H(headers));
  expect(r.status, r.text).toBe(200);
  return r;
}

/** The rows of `sql` over the demo database (read-only). */
function rows<T>(sql: string): T[] {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare(sql).all() as T[];
  } finally {
    d.close();
  }
}

describe('the database keeps the rates as computed', () => {
  it('holds the noisy doubles these tests expect written rounded', () => {
    const d = ReplayDatabase.open(db);
    try {
      expect(d.pairTableAt(parseTime(AT)!).rate('BTC', 'USD')!.raw).toBe(NOISY);
      expect(d.pairTableAt(d.coverage.lastTick!).rate('SOL', 'USD')!.raw).toBe(131.00900000000001);
    } finally {
      d.close();
    }
    expect(rows<{ open: number }>("SELECT open FROM ohlc WHERE base = 'BTC' AND quote = 'USD' AND period_id = '1DAY'")).toEqual([
      { open: 62439.619999999995 },
    ]);
  });
});

describe('a rate in every format', () => {
  it('JSON', async () => {
    expect((await get(RATE)).text).toBe(
      `{"time":"2024-03-01T05:53:36.1999520Z","asset_id_base":"BTC","asset_id_quote":"USD","rate":${WRITTEN}}`,
    );
  });

  it('CSV, with the decimal mark option too', async () => {
    expect((await get(`${RATE}&output_format=csv`)).text).toBe(
      `time;asset_id_base;asset_id_quote;rate\n2024-03-01T05:53:36.1999520Z;BTC;USD;${WRITTEN}\n`,
    );
    expect((await get(`${RATE}&output_format=csv&csv_include_header=false&csv_set_dec_mark=,`)).text).toBe(
      '2024-03-01T05:53:36.1999520Z;BTC;USD;62299,755\n',
    );
  });

  it('XML', async () => {
    const { text } = await get(`${RATE}&output_format=xml`);
    expect(text).toContain(`<asset_id_quote>USD</asset_id_quote><rate>${WRITTEN}</rate></ExchangeRate>`);
  });

  it('MessagePack: the same rounded double, as a float64', async () => {
    const { body } = await get(RATE, { Accept: 'application/x-msgpack' });
    expect((unpack(body) as { rate: number }).rate).toBe(Number(WRITTEN));
    const f64 = Buffer.alloc(9);
    f64[0] = 0xcb;
    f64.writeDoubleBE(Number(WRITTEN), 1);
    expect(body.includes(f64)).toBe(true);
  });

  it('all rates of a base, and inverted: the rounding of 1 / the rate as computed', async () => {
    const q = `/v1/exchangerate/BTC?filter_asset_id=USD&time=${AT}`;
    expect((await get(q)).text).toBe(
      `{"asset_id_base":"BTC","rates":[{"time":"2024-03-01T05:53:36.1999520Z","asset_id_quote":"USD","rate":${WRITTEN}}]}`,
    );
    const inv = wireNumber(1 / NOISY);
    expect((await get(`${q}&invert=true`)).text).toContain(`"asset_id_quote":"USD","rate":${inv}}`);
    expect(String(inv)).toBe('0.0000160514274895624');
  });
});

describe('histories', () => {
  it('the 1DAY open in JSON, CSV and XML', async () => {
    const item =
      '"time_open":"2024-03-01T04:00:00.0000000Z","time_close":"2024-03-01T05:54:11.0000000Z",' +
      '"rate_open":62439.62,"rate_high":62689.96,"rate_low":62107.81,"rate_close":62319.71}]';
    expect((await get(DAY)).text).toContain(item);
    expect((await get(`${DAY}&output_format=csv`)).text).toContain(';62439.62;62689.96;62107.81;62319.71\n');
    expect((await get(`${DAY}&output_format=xml`)).text).toContain('<rate_open>62439.62</rate_open>');
  });

  it('a long history written a slice at a time from the buckets: JSON.stringify of the rounded items', async () => {
    const q = '/v1/exchangerate/BTC/USDT/history?period_id=1SEC&time_start=2024-03-01T04:00:00Z&time_end=2100-01-01T00:00:00Z&limit=3000';
    const sec = getPeriod('1SEC')!;
    const d = ReplayDatabase.open(db);
    const end = Number.MAX_SAFE_INTEGER;
    const raw = d.buckets(d.seriesFor('BTC', 'USDT', sec, false)!, sec, parseTime('2024-03-01T04:00:00Z')!, end, end, 3000);
    d.close();
    const rates = (b: OhlcBucket): number[] => [b.open, b.high, b.low, b.close];
    expect(raw.flatMap(rates).filter((v) => wireNumber(v) !== v).length).toBeGreaterThan(1000);
    const json = (await get(q)).text;
    const items = JSON.parse(json) as Record<string, number>[];
    expect(items.length).toBe(raw.length);
    expect(items.length).toBeGreaterThan(256);
    items.forEach((it, i) => {
      expect([it.rate_open, it.rate_high, it.rate_low, it.rate_close]).toEqual(rates(raw[i]).map(wireNumber));
    });
    // MessagePack is written from the wire items: the JSON written from the buckets is their JSON.
    expect(json).toBe(JSON.stringify(unpack((await get(q, { Accept: 'application/x-msgpack' })).body)));
  });

  it('the inverse pair: each rate the rounding of 1 / the stored one', async () => {
    const d = (await get(DAY.replace('BTC/USD', 'USD/BTC'))).text;
    expect(d).toContain(`"rate_open":${wireNumber(1 / 62439.619999999995)},`);
  });
});

describe('explanations and charts', () => {
  it('explain: the rate, the leg rate and the pair rate rounded; prices as computed', async () => {
    const { text } = await get('/v1/exchangerate/SOL/USD/explain');
    expect(text).toContain('"kind":"direct","rate":131.009,');
    expect(text).toContain('"inverted":false,"rate":131.009,');
    expect(text).toContain('"tick":"2024-03-01T05:54:11.0000000Z","rate":131.009,');
    expect(text).not.toContain('"rate":131.00900000000001');
    expect(text).toContain('"price":131.00900000000001');
    expect((await get('/v1/exchangerate/SOL/USD/explain?output_format=csv')).text).toContain(';131.009;');
  });

  it('the chart data: its rates and provenance rounded', async () => {
    const r = await get('/v1/exchangerate/BTC/USD/chart?time_start=2024-03-01T05:53:35Z&time_end=2024-03-01T05:53:45Z');
    const c = JSON.parse(r.text) as ChartData;
    expect(c.rate.slice(2, 11)).toEqual(new Array(9).fill(Number(WRITTEN)));
    expect(r.text).toContain(`"rate":[62306.675,62306.675,${WRITTEN},${WRITTEN},`);
    expect(c.provenance.map((p) => p.rate)).toContain(Number(WRITTEN));
    for (const p of c.provenance) {
      expect(wireRate(p.rate)).toBe(p.rate);
      for (const l of p.legs) expect([wireNumber(l.rate), wireRate(l.explanation.rate)]).toEqual([l.rate, l.explanation.rate]);
    }
    // The market's price p stays as computed (a price, not a rate).
    expect(c.markets[0].price[2]).toBe(NOISY);
  });
});
