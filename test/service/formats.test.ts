/**
 * Output formats over HTTP: XML, CSV with every csv_* option, MessagePack by Accept (and never
 * over output_format), gzip/deflate by Accept-Encoding; plus the pure helpers.
 */
import { join } from 'node:path';
import { gunzipSync, inflateSync } from 'node:zlib';
import { XMLParser } from 'fast-xml-parser';
import { decode as unpack } from '@msgpack/msgpack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTime } from '../../src/core/time.js';
import { formatTimeCustom, prefersMsgpack } from '../../src/http/format/index.js';
import { demoDb, expectError, expectSchema, PATHS, startServer, tempDir, type TestServer } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
let srv: TestServer;
let key: string;
const H = (extra: Record<string, string> = {}): Record<string, string> => ({ 'X-CoinAPI-Key': key, ...extra });
const HIST = '/v1/exchangerate/BTC/USD/history?period_id=1MIN&time_start=2024-03-01T05:00:00Z&time_end=2024-03-01T05:03:00Z';

beforeAll(async () => {
  tmp = tempDir();
  const db = await demoDb(tmp.dir);
  srv = await startServer({ db, keysPath: join(tmp.dir, 'keys.sqlite') });
  key = srv.key();
});

afterAll(async () => {
  await srv?.close();
  tmp?.remove();
});

async function json(path: string): Promise<unknown> {
  const r = await srv.get(path, H());
  expect(r.status, r.text).toBe(200);
  return r.json();
}

async function csv(path: string): Promise<string> {
  const r = await srv.get(path, H());
  expect(r.status, r.text).toBe(200);
  expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
  return r.text;
}

describe('XML', () => {
  const parser = new XMLParser({
    ignoreAttributes: false,
    parseTagValue: true,
    isArray: (name) => ['ExchangeRatesRate', 'TimeseriesPeriod', 'ExchangeRatesTimeseriesItem'].includes(name),
  });

  it('ExchangeRate, ExchangeRates, ArrayOfTimeseriesPeriod, ArrayOfExchangeRatesTimeseriesItem', async () => {
    const rate = (await json('/v1/exchangerate/BTC/USD')) as Record<string, unknown>;
    let r = await srv.get('/v1/exchangerate/BTC/USD?output_format=xml', H());
    expect(r.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(r.text.startsWith('<?xml version="1.0" encoding="utf-8"?><ExchangeRate ')).toBe(true);
    const x = parser.parse(r.text) as { ExchangeRate: Record<string, unknown> };
    expect({
      time: x.ExchangeRate.time,
      asset_id_base: x.ExchangeRate.asset_id_base,
      asset_id_quote: x.ExchangeRate.asset_id_quote,
      rate: x.ExchangeRate.rate,
    }).toEqual(rate);

    const all = (await json('/v1/exchangerate/BTC?filter_asset_id=USD,EUR')) as { rates: unknown[] };
    r = await srv.get('/v1/exchangerate/BTC?filter_asset_id=USD,EUR&output_format=XML', H());
    const xa = parser.parse(r.text) as { ExchangeRates: { asset_id_base: string; rates: { ExchangeRatesRate: unknown[] } } };
    expect(xa.ExchangeRates.asset_id_base).toBe('BTC');
    expect(xa.ExchangeRates.rates.ExchangeRatesRate).toEqual(all.rates);

    r = await srv.get('/v1/exchangerate/history/periods?output_format=xml', H());
    const xp = parser.parse(r.text) as { ArrayOfTimeseriesPeriod: { TimeseriesPeriod: unknown[] } };
    expect(xp.ArrayOfTimeseriesPeriod.TimeseriesPeriod).toEqual(await json('/v1/exchangerate/history/periods'));

    r = await srv.get(`${HIST}&output_format=xml`, H());
    const xh = parser.parse(r.text) as { ArrayOfExchangeRatesTimeseriesItem: { ExchangeRatesTimeseriesItem: unknown[] } };
    expect(xh.ArrayOfExchangeRatesTimeseriesItem.ExchangeRatesTimeseriesItem).toEqual(await json(HIST));
  });

  it('explain as XML: arrays as wrapper elements, nulls as xsi:nil', async () => {
    const r = await srv.get('/v1/exchangerate/SOL/BTC/explain?output_format=xml', H());
    expect(r.status).toBe(200);
    expect(r.text).toContain('<path><asset_id>SOL</asset_id><asset_id>USD</asset_id><asset_id>BTC</asset_id></path>');
    expect(r.text).toContain('<legs><LegExplanation>');
    expect(r.text).toMatch(/<used><MarketProvenance>/);
    const p = new XMLParser({ ignoreAttributes: false }).parse(r.text) as { RateExplanation: { kind: string } };
    expect(p.RateExplanation.kind).toBe('cross');
  });

  it('an empty rates list is an empty wrapper', async () => {
    const r = await srv.get('/v1/exchangerate/BTC?filter_asset_id=NOPE&output_format=xml', H());
    expect(r.text).toContain('<asset_id_base>BTC</asset_id_base><rates/></ExchangeRates>');
  });
});

describe('CSV', () => {
  it('defaults: header of the JSON field names in schema order, ";" delimiter, unix newlines, 7-digit times', async () => {
    const rate = (await json('/v1/exchangerate/BTC/USD')) as { time: string; rate: number };
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv')).toBe(
      `time;asset_id_base;asset_id_quote;rate\n${rate.time};BTC;USD;${rate.rate}\n`,
    );
    const all = (await json('/v1/exchangerate/BTC?filter_asset_id=USD,EUR')) as {
      rates: { time: string; asset_id_quote: string; rate: number }[];
    };
    expect(await csv('/v1/exchangerate/BTC?filter_asset_id=USD,EUR&output_format=csv')).toBe(
      `asset_id_base;time;asset_id_quote;rate\n${all.rates.map((r) => `BTC;${r.time};${r.asset_id_quote};${r.rate}\n`).join('')}`,
    );
    const periods = await csv('/v1/exchangerate/history/periods?output_format=csv');
    expect(periods.split('\n')[0]).toBe('period_id;length_seconds;length_months;unit_count;unit_name;display_name');
    expect(periods.split('\n')[1]).toBe('1SEC;1;0;1;second;1 Second');
    expect(periods.trimEnd().split('\n').length).toBe(34);
    const hist = (await json(HIST)) as Record<string, unknown>[];
    const h = await csv(`${HIST}&output_format=csv`);
    expect(h.split('\n')[0]).toBe('time_period_start;time_period_end;time_open;time_close;rate_open;rate_high;rate_low;rate_close');
    expect(h.split('\n')[1]).toBe(Object.values(hist[0]).join(';'));
  });

  it('csv_include_header, csv_include_quotes, csv_exclude_col', async () => {
    const rate = (await json('/v1/exchangerate/BTC/USD')) as { time: string; rate: number };
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_include_header=false')).toBe(`${rate.time};BTC;USD;${rate.rate}\n`);
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_include_header=0')).toBe(`${rate.time};BTC;USD;${rate.rate}\n`);
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_include_quotes=true')).toBe(
      `"time";"asset_id_base";"asset_id_quote";"rate"\n${rate.time};"BTC";"USD";${rate.rate}\n`,
    );
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_exclude_col=time,asset_id_base')).toBe(
      `asset_id_quote;rate\nUSD;${rate.rate}\n`,
    );
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_exclude_col=RATE,nope')).toBe(
      `time;asset_id_base;asset_id_quote\n${rate.time};BTC;USD\n`,
    );
  });

  it('csv_set_delimiter, csv_set_dec_mark (quoting a cell that holds the delimiter)', async () => {
    const rate = (await json('/v1/exchangerate/BTC/USD')) as { time: string; rate: number };
    const comma = String(rate.rate).replace('.', ',');
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_set_delimiter=,&csv_include_header=false')).toBe(
      `${rate.time},BTC,USD,${rate.rate}\n`,
    );
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_set_delimiter=%09&csv_include_header=false')).toBe(
      `${rate.time}\tBTC\tUSD\t${rate.rate}\n`,
    );
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_set_delimiter=|&csv_include_header=false')).toBe(
      `${rate.time}|BTC|USD|${rate.rate}\n`,
    );
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_set_dec_mark=,&csv_include_header=false')).toBe(
      `${rate.time};BTC;USD;${comma}\n`,
    );
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_set_dec_mark=,&csv_set_delimiter=,&csv_include_header=false')).toBe(
      `${rate.time},BTC,USD,"${comma}"\n`,
    );
  });

  it('csv_set_timeformat: unix and custom formats', async () => {
    const rate = (await json('/v1/exchangerate/BTC/USD')) as { time: string; rate: number };
    const us = parseTime(rate.time)!;
    const unix = `${Math.floor(us / 1e6)}.${String(us % 1e6)
      .padStart(6, '0')
      .replace(/0+$/, '')}`;
    expect(await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_include_header=false&csv_set_timeformat=unix')).toBe(
      `${unix};BTC;USD;${rate.rate}\n`,
    );
    expect(
      await csv('/v1/exchangerate/BTC/USD?output_format=csv&csv_include_header=false&csv_set_timeformat=UNIX&csv_set_dec_mark=,'),
    ).toBe(`${unix.replace('.', ',')};BTC;USD;${String(rate.rate).replace('.', ',')}\n`);
    const custom = await csv(
      `/v1/exchangerate/BTC/USD?output_format=csv&csv_include_header=false&csv_set_timeformat=${encodeURIComponent('yyyy-MM-dd HH:mm:ss')}`,
    );
    expect(custom).toBe(`${rate.time.slice(0, 10)} ${rate.time.slice(11, 19)};BTC;USD;${rate.rate}\n`);
    const h = await csv(`${HIST}&output_format=csv&csv_include_header=false&csv_set_timeformat=unix`);
    expect(h.split('\n')[0].split(';').slice(0, 4)).toEqual(['1709269200', '1709269260', '1709269200', '1709269259']);
  });

  it('csv_set_newline: win, mac, unix', async () => {
    const base = '/v1/exchangerate/history/periods?output_format=csv';
    expect((await csv(`${base}&csv_set_newline=win`)).split('\r\n').length).toBe(35);
    const mac = await csv(`${base}&csv_set_newline=mac`);
    expect(mac.includes('\n')).toBe(false);
    expect(mac.split('\r').length).toBe(35);
    expect((await csv(`${base}&csv_set_newline=unix`)).split('\n').length).toBe(35);
  });

  it('explain flattens to one row per market', async () => {
    const text = await csv('/v1/exchangerate/SOL/BTC/explain?output_format=csv');
    const [head, ...rows] = text.trimEnd().split('\n');
    expect(head.split(';').slice(0, 12)).toEqual([
      'asset_id_base',
      'asset_id_quote',
      'tick',
      'kind',
      'rate',
      'time',
      'leg_pair',
      'leg_from',
      'leg_to',
      'leg_inverted',
      'leg_rate',
      'status',
    ]);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(rows.every((r) => r.startsWith('SOL;BTC;'))).toBe(true);
    expect(rows.some((r) => r.includes(';SOL/USD;SOL;USD;false;'))).toBe(true);
  });

  it('400 naming each bad option', async () => {
    const cases: [string, RegExp][] = [
      ['output_format=yaml', /'output_format'/],
      ['output_format=csv&csv_set_newline=dos', /'csv_set_newline'/],
      ['output_format=csv&csv_set_dec_mark=ab', /'csv_set_dec_mark'/],
      ['output_format=csv&csv_set_dec_mark=5', /'csv_set_dec_mark'/],
      ['output_format=csv&csv_set_delimiter=%22', /'csv_set_delimiter'/],
      ['output_format=csv&csv_set_delimiter=abcdef', /'csv_set_delimiter'/],
      ['output_format=csv&csv_include_header=yes%3F', /'csv_include_header'/],
      ['output_format=csv&csv_include_quotes=2', /'csv_include_quotes'/],
      ["output_format=csv&csv_set_timeformat=yyyy'", /'csv_set_timeformat'/],
      ['output_format=csv&csv_set_timeformat=ffffffff', /'csv_set_timeformat'/],
    ];
    for (const [q, re] of cases) expect(expectError(await srv.get(`/v1/exchangerate/BTC/USD?${q}`, H()), 400), q).toMatch(re);
  });
});

describe('MessagePack by Accept', () => {
  it('application/x-msgpack alone, or first and preferred, gives MessagePack maps equal to the JSON', async () => {
    const rate = await json('/v1/exchangerate/BTC/USD');
    for (const accept of [
      'application/x-msgpack',
      'application/x-msgpack, application/json;q=0.9',
      'application/x-msgpack;q=1, */*;q=0.1',
    ]) {
      const r = await srv.get('/v1/exchangerate/BTC/USD', H({ Accept: accept }));
      expect(r.headers['content-type'], accept).toBe('application/x-msgpack');
      expect(unpack(r.body)).toEqual(rate);
    }
    for (const [path, spec] of [
      ['/v1/exchangerate/BTC?filter_asset_id=USD,EUR', PATHS.rates],
      ['/v1/exchangerate/history/periods', PATHS.periods],
      [HIST, PATHS.history],
    ] as const) {
      const r = await srv.get(path, H({ Accept: 'application/x-msgpack' }));
      const v = unpack(r.body) as unknown;
      expectSchema(spec, v);
      expect(v).toEqual(await json(path));
    }
  });

  it('JSON for generated clients that list msgpack last, and for equal preference; output_format wins over Accept', async () => {
    for (const accept of [
      'text/plain, application/json, text/json, application/x-msgpack',
      'application/json, application/x-msgpack',
      'application/x-msgpack, application/json',
      '*/*',
      'text/html',
    ]) {
      const r = await srv.get('/v1/exchangerate/BTC/USD', H({ Accept: accept }));
      expect(r.headers['content-type'], accept).toBe('application/json; charset=utf-8');
    }
    const r = await srv.get('/v1/exchangerate/BTC/USD?output_format=csv', H({ Accept: 'application/x-msgpack' }));
    expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
    const j = await srv.get('/v1/exchangerate/BTC/USD?output_format=json', H({ Accept: 'application/x-msgpack' }));
    expect(j.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('errors stay JSON whatever the Accept or output_format', async () => {
    expectError(await srv.get('/v1/exchangerate/BTC/NOPE?output_format=xml', H({ Accept: 'application/x-msgpack' })), 550);
  });
});

describe('compression', () => {
  it('gzip and deflate by Accept-Encoding (gzip preferred when both are accepted); identity otherwise', async () => {
    const plain = await srv.get(HIST, H());
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gz = await srv.get(HIST, H({ 'Accept-Encoding': 'deflate, gzip' }));
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(plain.text);
    const df = await srv.get(HIST, H({ 'Accept-Encoding': 'deflate' }));
    expect(df.headers['content-encoding']).toBe('deflate');
    expect(inflateSync(df.body).toString()).toBe(plain.text);
    const small = await srv.get('/v1/exchangerate/BTC/USD', H({ 'Accept-Encoding': 'gzip' }));
    expect(small.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(small.body).toString())).toEqual(await json('/v1/exchangerate/BTC/USD'));
    const err = await srv.get('/v1/exchangerate/BTC/NOPE', H({ 'Accept-Encoding': 'gzip' }));
    expect(err.status).toBe(550);
    expect(JSON.parse(gunzipSync(err.body).toString()).message).toMatch(/NOPE/);
    const mp = await srv.get('/v1/exchangerate/BTC/USD', H({ 'Accept-Encoding': 'gzip', Accept: 'application/x-msgpack' }));
    expect(mp.headers['content-encoding']).toBe('gzip');
    expect(unpack(gunzipSync(mp.body))).toEqual(await json('/v1/exchangerate/BTC/USD'));
    const br = await srv.get(HIST, H({ 'Accept-Encoding': 'br' }));
    expect(br.headers['content-encoding']).toBeUndefined();
  });
});

describe('helpers', () => {
  it('prefersMsgpack', () => {
    expect(prefersMsgpack(undefined)).toBe(false);
    expect(prefersMsgpack('application/x-msgpack')).toBe(true);
    expect(prefersMsgpack(' Application/X-MsgPack ; q=0.5')).toBe(true);
    expect(prefersMsgpack('application/x-msgpack;q=0')).toBe(false);
    expect(prefersMsgpack('application/json;q=0.5, application/x-msgpack')).toBe(false);
    expect(prefersMsgpack('application/x-msgpack, application/json;q=0.5')).toBe(true);
    expect(prefersMsgpack('application/x-msgpack;q=0.5, application/json')).toBe(false);
  });

  it('formatTimeCustom: .NET-style tokens and unix', () => {
    const t = parseTime('2024-03-01T05:04:03.1234567Z')!;
    expect(formatTimeCustom(t, 'yyyy-MM-ddTHH:mm:ss.fffffffZ', '.')).toBe('2024-03-01T05:04:03.1234560Z');
    expect(formatTimeCustom(t, 'dd/MM/yy h:m:s tt', '.')).toBe('01/03/24 5:4:3 AM');
    expect(formatTimeCustom(t, "ddd, d MMM yyyy 'at' HH\\h", '.')).toBe('Fri, 1 Mar 2024 at 05h');
    expect(formatTimeCustom(t, 'dddd MMMM yyyy-MM-ddTHH:mm:ss.fffK zzz', '.')).toBe('Friday March 2024-03-01T05:04:03.123Z +00:00');
    expect(formatTimeCustom(parseTime('2024-03-01T17:00:00Z')!, 'HH:mm:ss.FFF hh tt', '.')).toBe('17:00:00 05 PM');
    expect(formatTimeCustom(t, 'unix', '.')).toBe('1709269443.123456');
    expect(formatTimeCustom(parseTime('2024-03-01T00:00:00Z')!, 'unix', ',')).toBe('1709251200');
  });
});
