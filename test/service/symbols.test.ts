/**
 * The symbols routes (src/service/symbols.ts) over a replay database: every route's 200 body
 * against the interface's schemas (v1.Symbol, v1.SymbolMapping), fields in schema order, the
 * filters, an unknown exchange, `time` (550 before the last tick, with the advice to ask the log),
 * every output format, the cost and the right.
 */
import { decode as unpack } from '@msgpack/msgpack';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replay } from '../../src/replay/replay.js';
import { parseRights, RIGHTS } from '../../src/http/keys.js';
import { expectError, expectSchema, SPEC, startServer, tempDir, type TestServer } from './helpers.js';

const D = '2024-01-01T00:00:';
/** A symbol event of KRAKEN_SPOT_BTC_USD with none of the optional fields. */
const redeclared = (time: string) => ({
  type: 'symbol',
  time,
  symbol_id: 'KRAKEN_SPOT_BTC_USD',
  exchange_id: 'KRAKEN',
  symbol_type: 'SPOT',
  asset_id_base: 'BTC',
  asset_id_quote: 'USD',
});
const LOG = [
  {
    type: 'symbol',
    time: `${D}00.1Z`,
    symbol_id: 'KRAKEN_SPOT_BTC_USD',
    exchange_id: 'KRAKEN',
    symbol_type: 'SPOT',
    asset_id_base: 'BTC',
    asset_id_quote: 'USD',
    symbol_id_exchange: 'XXBTZUSD',
    asset_id_base_exchange: 'XBT',
    asset_id_quote_exchange: 'ZUSD',
    price_precision: 1,
    size_precision: 8,
  },
  // The same symbol again, at the same time (and later, below), without the optional fields:
  // the record keeps them (docs/methodology.md section 10: the union of its symbol events).
  redeclared(`${D}00.1Z`),
  {
    type: 'symbol',
    time: `${D}00.1Z`,
    symbol_id: 'DERIBIT_OPT_BTC_USD_240329_60000_C',
    exchange_id: 'DERIBIT',
    symbol_type: 'OPTION',
    asset_id_base: 'BTC',
    asset_id_quote: 'USD',
    option_type_is_call: true,
    option_strike_price: '60000',
    option_expiration_time: '2024-03-29T08:00:00Z',
  },
  {
    type: 'symbol',
    time: `${D}00.1Z`,
    symbol_id: 'KRAKEN_SPOT_ETH_USD',
    exchange_id: 'KRAKEN',
    symbol_type: 'SPOT',
    asset_id_base: 'ETH',
    asset_id_quote: 'USD',
    active: false,
  },
  { type: 'trade', time: `${D}00.5Z`, symbol_id: 'KRAKEN_SPOT_BTC_USD', price: '42000', size: '0.1' },
  { type: 'trade', time: `${D}00.6Z`, symbol_id: 'KRAKEN_SPOT_BTC_USD', price: '42001', size: '0.2' },
  {
    type: 'quote',
    time: `${D}00.7Z`,
    symbol_id: 'KRAKEN_SPOT_BTC_USD',
    bid_price: '41999',
    bid_size: '1',
    ask_price: '42001',
    ask_size: '1',
  },
  { type: 'trade', time: `${D}00.8Z`, symbol_id: 'KRAKEN_SPOT_ETH_USD', price: '2500', size: '3' },
  {
    type: 'quote',
    time: `${D}00.9Z`,
    symbol_id: 'KRAKEN_SPOT_ETH_USD',
    bid_price: '2499',
    bid_size: '1',
    ask_price: '2501',
    ask_size: '1',
  },
  {
    type: 'quote',
    time: `${D}01.5Z`,
    symbol_id: 'BITSTAMP_SPOT_BTC_EUR',
    bid_price: '39000',
    bid_size: '1',
    ask_price: '39002',
    ask_size: '1',
  },
  redeclared(`${D}03Z`),
  { type: 'trade', time: `${D}05Z`, symbol_id: 'DERIBIT_OPT_BTC_USD_240329_60000_C', price: '0.05', size: '10' },
];

let tmp: ReturnType<typeof tempDir>;
let srv: TestServer;
let key: string;

beforeAll(async () => {
  tmp = tempDir();
  const log = join(tmp.dir, 'log.ndjson');
  writeFileSync(log, `${LOG.map((e) => JSON.stringify(e)).join('\n')}\n`);
  const db = join(tmp.dir, 'replay.sqlite');
  await replay({ inputs: [log], db });
  srv = await startServer({ db, keysPath: join(tmp.dir, 'keys.sqlite') });
  key = srv.key({ name: 'symbols' });
});

afterAll(async () => {
  await srv?.close();
  tmp?.remove();
});

const get = (path: string, headers: Record<string, string> = {}) => srv.get(path, { 'X-CoinAPI-Key': key, ...headers });
async function json(path: string, spec = '/v1/symbols'): Promise<Record<string, unknown>[]> {
  const res = await get(path);
  expect(res.status, res.text).toBe(200);
  const body = res.json() as Record<string, unknown>[];
  expectSchema(spec, body);
  return body;
}
const ids = (xs: Record<string, unknown>[]) => xs.map((x) => x.symbol_id);

/** A timestamp as the service writes it. */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$/;

/** The JSON type of each field of v1.Symbol and v1.SymbolMapping that xrate writes (`time`: an ISO timestamp). */
const FIELD_TYPES: Record<string, 'string' | 'number' | 'boolean' | 'time'> = {
  symbol_id: 'string',
  exchange_id: 'string',
  symbol_type: 'string',
  asset_id_base: 'string',
  asset_id_quote: 'string',
  future_delivery_time: 'time',
  option_type_is_call: 'boolean',
  option_strike_price: 'number',
  option_expiration_time: 'time',
  data_start: 'time',
  data_end: 'time',
  data_quote_start: 'time',
  data_quote_end: 'time',
  data_trade_start: 'time',
  data_trade_end: 'time',
  volume_1hrs: 'number',
  volume_1hrs_usd: 'number',
  volume_1day: 'number',
  volume_1day_usd: 'number',
  price: 'number',
  symbol_id_exchange: 'string',
  asset_id_base_exchange: 'string',
  asset_id_quote_exchange: 'string',
  price_precision: 'number',
  size_precision: 'number',
};

/** Every field of every item is one xrate writes, of its type, in the order of `schema`. */
function expectTypes(items: Record<string, unknown>[], schema: string): void {
  const order = schemaOrder(schema);
  for (const item of items) {
    expect(Object.keys(item)).toEqual(order.filter((k) => k in item));
    for (const [k, v] of Object.entries(item)) {
      const t = FIELD_TYPES[k];
      expect(t, k).toBeDefined();
      expect(
        t === 'time' ? typeof v === 'string' && ISO.test(v) : typeof v === t && (t !== 'number' || Number.isFinite(v)),
        `${k}: ${v}`,
      ).toBe(true);
    }
  }
}

/** The property names of a schema, in its order. */
function schemaOrder(name: string): string[] {
  return Object.keys((SPEC.components as { schemas: Record<string, { properties: object }> }).schemas[name].properties);
}

describe('GET /v1/symbols', () => {
  it('lists every symbol, fields in v1.Symbol order, absent values left out', async () => {
    const all = await json('/v1/symbols');
    expect(ids(all)).toEqual(['BITSTAMP_SPOT_BTC_EUR', 'DERIBIT_OPT_BTC_USD_240329_60000_C', 'KRAKEN_SPOT_BTC_USD', 'KRAKEN_SPOT_ETH_USD']);
    expectTypes(all, 'v1.Symbol');
    expect(all[2]).toEqual({
      symbol_id: 'KRAKEN_SPOT_BTC_USD',
      exchange_id: 'KRAKEN',
      symbol_type: 'SPOT',
      asset_id_base: 'BTC',
      asset_id_quote: 'USD',
      data_start: `${D}00.5000000Z`,
      data_end: `${D}00.7000000Z`,
      data_quote_start: `${D}00.7000000Z`,
      data_quote_end: `${D}00.7000000Z`,
      data_trade_start: `${D}00.5000000Z`,
      data_trade_end: `${D}00.6000000Z`,
      volume_1hrs: 0.3,
      volume_1hrs_usd: 12600,
      volume_1day: 0.3,
      volume_1day_usd: 12600,
      price: 42001,
      symbol_id_exchange: 'XXBTZUSD',
      asset_id_base_exchange: 'XBT',
      asset_id_quote_exchange: 'ZUSD',
      price_precision: 0.1,
      size_precision: 1e-8,
    });
    expect(all[1]).toMatchObject({
      option_type_is_call: true,
      option_strike_price: 60000,
      option_expiration_time: '2024-03-29T08:00:00.0000000Z',
      price: 0.05,
    });
    expect(all[0]).toMatchObject({ price: 39001, volume_1day: 0, volume_1day_usd: 0 }); // base BTC has a USD rate
  });

  it('filters: symbol id prefixes, exchanges, assets (comma or semicolon lists)', async () => {
    expect(ids(await json('/v1/symbols?filter_symbol_id=KRAKEN_SPOT_;bitstamp_'))).toEqual([
      'BITSTAMP_SPOT_BTC_EUR',
      'KRAKEN_SPOT_BTC_USD',
      'KRAKEN_SPOT_ETH_USD',
    ]);
    expect(ids(await json('/v1/symbols?filter_exchange_id=DERIBIT,BITSTAMP'))).toEqual([
      'BITSTAMP_SPOT_BTC_EUR',
      'DERIBIT_OPT_BTC_USD_240329_60000_C',
    ]);
    expect(ids(await json('/v1/symbols?filter_asset_id=ETH;EUR'))).toEqual(['BITSTAMP_SPOT_BTC_EUR', 'KRAKEN_SPOT_ETH_USD']);
  });
});

describe('GET /v1/symbols/{exchange_id}[/active], /v1/symbols/map/{exchange_id}', () => {
  it('an exchange lists all its symbols; /active leaves the delisted out', async () => {
    expect(ids(await json('/v1/symbols/KRAKEN', '/v1/symbols/{exchange_id}'))).toEqual(['KRAKEN_SPOT_BTC_USD', 'KRAKEN_SPOT_ETH_USD']);
    expect(ids(await json('/v1/symbols/kraken/active', '/v1/symbols/{exchange_id}'))).toEqual(['KRAKEN_SPOT_BTC_USD']);
    expect(ids(await json('/v1/symbols/KRAKEN?filter_asset_id=ETH', '/v1/symbols/{exchange_id}'))).toEqual(['KRAKEN_SPOT_ETH_USD']);
    expect(await json('/v1/symbols/NOPE', '/v1/symbols/{exchange_id}')).toEqual([]);
  });

  it('the map is the v1.SymbolMapping of the active symbols (each field the last value its symbol events gave)', async () => {
    const map = await json('/v1/symbols/map/KRAKEN', '/v1/symbols/map/{exchange_id}');
    expectTypes(map, 'v1.SymbolMapping');
    expectTypes(await json('/v1/symbols/KRAKEN', '/v1/symbols/{exchange_id}'), 'v1.Symbol');
    expect(map).toEqual([
      {
        symbol_id: 'KRAKEN_SPOT_BTC_USD',
        symbol_id_exchange: 'XXBTZUSD',
        asset_id_base_exchange: 'XBT',
        asset_id_quote_exchange: 'ZUSD',
        asset_id_base: 'BTC',
        asset_id_quote: 'USD',
        price_precision: 0.1,
        size_precision: 1e-8,
      },
    ]);
    expect(await json('/v1/symbols/map/NOPE', '/v1/symbols/map/{exchange_id}')).toEqual([]);
  });
});

describe('time, formats, cost and right', () => {
  it('time: the last tick and later are answered; an earlier time is a 550 that says to ask the log', async () => {
    const now = await json('/v1/symbols/KRAKEN');
    expect(await json(`/v1/symbols/KRAKEN?time=${D}05Z`)).toEqual(now);
    const later = await json('/v1/symbols/KRAKEN?time=2024-01-01T01:00:01.5Z');
    expect(later[0]).toMatchObject({ volume_1hrs: 0, volume_1day: 0.3, price: 42001 });
    const msg = expectError(await get(`/v1/symbols/KRAKEN?time=${D}02Z`), 550);
    expect(msg).toContain('2024-01-01T00:00:05.0000000Z');
    expect(msg).toContain('xrate symbols LOG');
  });

  it('400 naming a bad time or output format, on every route', async () => {
    for (const path of ['/v1/symbols', '/v1/symbols/KRAKEN', '/v1/symbols/KRAKEN/active', '/v1/symbols/map/KRAKEN']) {
      expect(expectError(await get(`${path}?time=yesterday`), 400)).toContain("'time'");
      expect(expectError(await get(`${path}?output_format=yaml`), 400)).toContain("'output_format'");
    }
  });

  it('CSV, XML, MessagePack and gzip', async () => {
    const csv = await get('/v1/symbols/map/KRAKEN?output_format=csv');
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.text.split('\n')[0]).toBe(
      'symbol_id;symbol_id_exchange;asset_id_base_exchange;asset_id_quote_exchange;asset_id_base;asset_id_quote;price_precision;size_precision',
    );
    expect(csv.text.split('\n')[1]).toBe('KRAKEN_SPOT_BTC_USD;XXBTZUSD;XBT;ZUSD;BTC;USD;0.1;1e-8');
    const xml = await get('/v1/symbols/KRAKEN/active?output_format=xml');
    expect(xml.text).toContain('<ArrayOfSymbol');
    expect(xml.text).toContain('<Symbol><symbol_id>KRAKEN_SPOT_BTC_USD</symbol_id>');
    const mp = await get('/v1/symbols/KRAKEN', { Accept: 'application/x-msgpack' });
    expect(unpack(mp.body)).toEqual(await json('/v1/symbols/KRAKEN'));
    const gz = await get('/v1/symbols', { 'Accept-Encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(gz.body).toString('utf8'))).toEqual(await json('/v1/symbols'));
  });

  it('costs 1 and needs the right `symbols`', async () => {
    const res = await get('/v1/symbols');
    expect(res.headers['x-ratelimit-request-cost']).toBe('1');
    expect(RIGHTS).toContain('symbols');
    const other = srv.key({ name: 'rates only', rights: parseRights('rate,rates') });
    const msg = expectError(await srv.get('/v1/symbols', { 'X-CoinAPI-Key': other }), 403);
    expect(msg).toContain('symbols (/v1/symbols/...)');
  });
});
