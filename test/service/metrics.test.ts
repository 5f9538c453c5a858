/**
 * The metrics routes (src/service/metrics.ts) over the metrics of a replay database: every route's 200
 * shape against the interface's schemas (the history items against the spec's example response,
 * whose fields the schema `v1.MetricData` does not describe), the 400s naming the parameter,
 * `time_format`, month periods, groups, CSV / XML / MessagePack / gzip, limit costs and the right.
 */
import { decode as unpack } from '@msgpack/msgpack';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDec } from '../../src/core/decimal.js';
import type { MetricValue, SeriesKey } from '../../src/core/metrics/events.js';
import type { MetricsSource, StoredMetricPoint } from '../../src/core/metrics/source.js';
import { formatTimeAs } from '../../src/core/metrics/timeFormat.js';
import { metricTimeseries, type MetricTimeseriesQuery, toMetricTimeseriesItem } from '../../src/core/metrics/timeseries.js';
import { getPeriod } from '../../src/core/periods.js';
import { ReplayStore } from '../../src/io/store.js';
import { formatTime, parseTime } from '../../src/core/time.js';
import { csvOptions, render } from '../../src/service/format/index.js';
import { Query } from '../../src/service/params.js';
import { parseRights, RIGHTS } from '../../src/service/keys.js';
import type { RateProvider } from '../../src/service/provider.js';
import { expectError, expectSchema, SPEC, startServer, tempDir, type Res, type TestServer } from './helpers.js';

const T = (s: string): number => parseTime(s)!;
const dec = (text: string): MetricValue => ({ kind: 'decimal', dec: parseDec(text)! });

let seq = 0;
/** A stored point (seq in the order of the calls: the log order). */
function pt(
  key: Partial<SeriesKey> & { metric_id: string; exchange_id: string },
  time: string,
  value: MetricValue,
  extra: { recv?: string; chain_id?: string; network_id?: string } = {},
): StoredMetricPoint {
  const { recv, ...ids } = extra;
  return {
    symbol_id: '',
    asset_id: '',
    ...key,
    ...ids,
    time: T(time),
    recvTime: T(recv ?? time),
    seq: ++seq,
    value,
  };
}

const RANK = 'XRATE_EXCHANGE_RANK';
const FR = 'FUNDING_RATE';
const USD = 'XRATE_ASSET_USD_RATE';
const D = '2024-01-01T00:00:';
const BIN_PERP = { metric_id: FR, exchange_id: 'BINANCE', symbol_id: 'BINANCE_PERP_BTC_USDT', asset_id: 'BTC' };
const LONG_SERIES = { metric_id: 'TICKS', exchange_id: 'COINBASE' };
/** Decimal texts of the long history: floats written as their text, or not (zeros, exponents, many digits). */
const LONG_TEXTS = ['0.0123', '0.0120', '-1.5', '1e-7', '42', '0.30000000000000001', '-0.000', '123456789.123456789', '7'];

const POINTS: StoredMetricPoint[] = [
  pt({ metric_id: RANK, exchange_id: 'BINANCE' }, `${D}00Z`, dec('1')),
  pt({ metric_id: RANK, exchange_id: 'KRAKEN' }, `${D}00Z`, dec('2')),
  pt({ metric_id: RANK, exchange_id: 'BINANCE' }, `${D}01.5Z`, dec('3')),
  pt(BIN_PERP, `${D}00.25Z`, dec('0.0001'), { recv: `${D}00.2Z` }),
  pt(BIN_PERP, `${D}00.75Z`, dec('0.0003')),
  pt(BIN_PERP, `${D}01.25Z`, dec('0.0002')),
  pt({ metric_id: FR, exchange_id: 'KRAKEN', symbol_id: 'KRAKEN_PERP_BTC_USD' }, `${D}00.5Z`, dec('0.0005')),
  pt({ metric_id: USD, exchange_id: 'XRATE', asset_id: 'BTC' }, `${D}00Z`, dec('42000.5')),
  pt({ metric_id: USD, exchange_id: 'XRATE', asset_id: 'ETH' }, `${D}00Z`, dec('2500')),
  pt({ metric_id: USD, exchange_id: 'XRATE', asset_id: 'BTC' }, `${D}01Z`, dec('42001')),
  pt({ metric_id: USD, exchange_id: 'XRATE', asset_id: 'BTC' }, `${D}01Z`, dec('42002')),
  pt({ metric_id: 'TVL', exchange_id: 'UNISWAP', asset_id: 'ETH' }, `${D}02Z`, dec('1000'), {
    chain_id: 'ETHEREUM',
    network_id: 'MAINNET',
  }),
  pt({ metric_id: 'TVL', exchange_id: 'UNISWAP', asset_id: 'USDC' }, `${D}02Z`, dec('500'), { chain_id: 'BASE' }),
  pt({ metric_id: 'STATUS', exchange_id: 'KRAKEN' }, `${D}03Z`, { kind: 'text', text: 'open' }),
  pt({ metric_id: 'LISTED', exchange_id: 'KRAKEN' }, `${D}03Z`, { kind: 'time', us: T('2013-09-10T00:00:00.1234567Z') }),
  pt({ metric_id: 'MONTHLY', exchange_id: 'BINANCE' }, '2024-01-15T00:00:00Z', dec('1')),
  pt({ metric_id: 'MONTHLY', exchange_id: 'BINANCE' }, '2024-01-31T23:59:59.9999999Z', dec('2')),
  pt({ metric_id: 'MONTHLY', exchange_id: 'BINANCE' }, '2024-02-01T00:00:00Z', dec('3')),
  pt({ metric_id: 'MONTHLY', exchange_id: 'BINANCE' }, '2024-04-10T00:00:00Z', dec('4')),
  // 250 points a second apart: a long history.
  ...Array.from({ length: 250 }, (_, i) =>
    pt({ metric_id: 'TICKS', exchange_id: 'BINANCE' }, new Date(Date.UTC(2024, 1, 1) + i * 1000).toISOString(), dec(String(i))),
  ),
  // 700 more, mostly one a second, some seconds with two points, some text and time values: a
  // history long enough to be written a slice at a time.
  ...Array.from({ length: 700 }, (_, i) => {
    const time = new Date(Date.UTC(2024, 1, 1) + (i - (i % 7 === 3 ? 0.5 : 0)) * 1000).toISOString();
    const value: MetricValue =
      i % 50 === 7
        ? { kind: 'text', text: 'halted' }
        : i % 50 === 9
          ? { kind: 'time', us: T(time) }
          : dec(LONG_TEXTS[i % LONG_TEXTS.length]);
    return pt(LONG_SERIES, time, value);
  }),
];
const DEFINITIONS = [
  { metric_id: FR, description: 'old' },
  { metric_id: RANK, description: 'Rank of the exchange at the tick' },
  { metric_id: FR, description: 'Funding rate of a perpetual contract' },
];

let tmp: ReturnType<typeof tempDir>;
let srv: TestServer;
let key: string;
let store: ReplayStore;

/** The points and definitions above written into a replay database, as a replay writes them. */
function metricsDatabase(path: string): MetricsSource {
  store = ReplayStore.open(path);
  const w = store.writers();
  store.transaction(() => {
    for (const p of POINTS) {
      w.point(
        {
          type: 'metric',
          time: p.time,
          recvTime: p.recvTime,
          metricId: p.metric_id,
          exchangeId: p.exchange_id,
          ...(p.symbol_id !== '' && { symbolId: p.symbol_id }),
          ...(p.asset_id !== '' && { assetId: p.asset_id }),
          ...(p.chain_id !== undefined && { chainId: p.chain_id }),
          ...(p.network_id !== undefined && { networkId: p.network_id }),
          value: p.value,
        },
        p.seq,
        1,
      );
    }
    DEFINITIONS.forEach((d, i) => {
      w.definition({ type: 'metric_definition', time: 0, metricId: d.metric_id, description: d.description }, seq + 1 + i, 1);
    });
  });
  return store.metrics();
}

beforeAll(async () => {
  tmp = tempDir();
  srv = await startServer({
    provider: {} as RateProvider, // the metrics routes never call it
    keysPath: join(tmp.dir, 'keys.sqlite'),
    metrics: metricsDatabase(join(tmp.dir, 'replay.sqlite')),
  });
  key = srv.key({ name: 'metrics' });
});

afterAll(async () => {
  await srv?.close();
  store?.close();
  tmp?.remove();
});

const get = (path: string, headers: Record<string, string> = {}): Promise<Res> => srv.get(path, { 'X-CoinAPI-Key': key, ...headers });
const json = async <T = Record<string, unknown>[]>(path: string): Promise<T> => {
  const res = await get(path);
  expect(res.status, res.text).toBe(200);
  return res.json() as T;
};
const bad = async (path: string, param: string): Promise<string> => {
  const message = expectError(await get(path), 400);
  expect(message).toContain(`'${param}'`);
  return message;
};

/** The history item: the fields of the spec's example response, in its order. */
const EXAMPLE_ITEM = (() => {
  const op = SPEC.paths['/v1/metrics/symbol/history'].get as {
    responses: { '200': { content: { 'application/json': { examples: Record<string, { value: Record<string, unknown>[] }> } } } };
  };
  return Object.values(op.responses['200'].content['application/json'].examples)[0].value[0];
})();
function expectHistoryItems(items: Record<string, unknown>[], timeType = 'string'): void {
  for (const item of items) {
    expect(Object.keys(item)).toEqual(Object.keys(EXAMPLE_ITEM));
    for (const k of ['time_period_start', 'time_period_end', 'time_open', 'time_close']) expect(typeof item[k]).toBe(timeType);
    expect(Number.isInteger(item.count)).toBe(true);
    for (const k of ['first', 'last', 'min', 'max', 'sum']) expect(item[k] === null || typeof item[k] === 'number').toBe(true);
  }
}

describe('listing', () => {
  it('/v1/metrics/listing: every definition (the latest wins) and every metric seen, sorted', async () => {
    const body = await json('/v1/metrics/listing');
    expectSchema('/v1/metrics/listing', body);
    expect(body.map((m) => m.metric_id)).toEqual(['FUNDING_RATE', 'LISTED', 'MONTHLY', 'STATUS', 'TICKS', 'TVL', USD, RANK]);
    expect(body[0]).toEqual({ metric_id: FR, description: 'Funding rate of a perpetual contract' });
    expect(Object.keys(body[0])).toEqual(['metric_id', 'description']);
    const early = await json(`/v1/metrics/listing?time=${D}00.5Z`);
    expect(early.map((m) => m.metric_id)).toEqual([FR, USD, RANK]);
  });

  it('/v1/metrics/exchange/listing: the exchange-level series of the exchange', async () => {
    const body = await json('/v1/metrics/exchange/listing?exchange_id=KRAKEN');
    expectSchema('/v1/metrics/exchange/listing', body);
    expect(body).toEqual([
      { metric_id: 'LISTED', exchange_id: 'KRAKEN' },
      { metric_id: 'STATUS', exchange_id: 'KRAKEN' },
      { metric_id: RANK, exchange_id: 'KRAKEN' },
    ]);
    expect(await json(`/v1/metrics/exchange/listing?exchange_id=KRAKEN&metric_id=${RANK}`)).toHaveLength(1);
    await bad('/v1/metrics/exchange/listing', 'exchange_id');
  });

  it('/v1/metrics/symbol/listing: fields in the schema order (metric_id, symbol_id, exchange_id, asset_id)', async () => {
    const body = await json('/v1/metrics/symbol/listing');
    expectSchema('/v1/metrics/symbol/listing', body);
    expect(body).toEqual([
      { metric_id: FR, symbol_id: 'BINANCE_PERP_BTC_USDT', exchange_id: 'BINANCE', asset_id: 'BTC' },
      { metric_id: FR, symbol_id: 'KRAKEN_PERP_BTC_USD', exchange_id: 'KRAKEN' },
    ]);
    expect(Object.keys(body[0])).toEqual(['metric_id', 'symbol_id', 'exchange_id', 'asset_id']);
    expect(await json('/v1/metrics/symbol/listing?exchange_id=KRAKEN')).toHaveLength(1);
  });

  it('/v1/metrics/asset/listing: chain_id and network_id filter and are listed', async () => {
    const body = await json('/v1/metrics/asset/listing?exchange_id=UNISWAP');
    expectSchema('/v1/metrics/asset/listing', body);
    expect(body).toEqual([
      { metric_id: 'TVL', exchange_id: 'UNISWAP', asset_id: 'ETH', chain_id: 'ETHEREUM', network_id: 'MAINNET' },
      { metric_id: 'TVL', exchange_id: 'UNISWAP', asset_id: 'USDC', chain_id: 'BASE' },
    ]);
    expect(await json('/v1/metrics/asset/listing?chain_id=BASE')).toEqual([body[1]]);
    expect(await json('/v1/metrics/asset/listing?network_id=MAINNET')).toEqual([body[0]]);
    expect((await json('/v1/metrics/asset/listing?asset_id=BTC')).map((i) => i.metric_id)).toEqual([USD]);
    await bad('/v1/metrics/asset/listing?asset_id_external=btc', 'asset_id_external');
  });
});

describe('current', () => {
  it('/v1/metrics/exchange/current: the latest point of each series, GeneralData fields in order', async () => {
    const body = await json('/v1/metrics/exchange/current?exchange_id=BINANCE');
    expectSchema('/v1/metrics/exchange/current', body);
    expect(body.map((x) => [x.metric_id, x.value_decimal])).toEqual([
      ['MONTHLY', 4],
      ['TICKS', 249],
      [RANK, 3],
    ]);
    expect(body[2]).toEqual({
      entry_time: '2024-01-01T00:00:01.5000000Z',
      recv_time: '2024-01-01T00:00:01.5000000Z',
      exchange_id: 'BINANCE',
      metric_id: RANK,
      value_decimal: 3,
    });
    await bad('/v1/metrics/exchange/current', 'exchange_id');
  });

  it('time: as of a past time', async () => {
    const body = await json(`/v1/metrics/exchange/current?exchange_id=BINANCE&metric_id=${RANK}&time=${D}01Z`);
    expect(body.map((x) => x.value_decimal)).toEqual([1]);
    expect(await json(`/v1/metrics/exchange/current?exchange_id=BINANCE&time=2023-12-31`)).toEqual([]);
    await bad('/v1/metrics/exchange/current?exchange_id=BINANCE&time=yesterday', 'time');
  });

  it('value_text and value_time (time_format applies to every time)', async () => {
    const body = await json('/v1/metrics/exchange/current?exchange_id=KRAKEN');
    expectSchema('/v1/metrics/exchange/current', body);
    expect(body.slice(0, 2)).toEqual([
      {
        entry_time: `${D}03.0000000Z`,
        recv_time: `${D}03.0000000Z`,
        exchange_id: 'KRAKEN',
        metric_id: 'LISTED',
        value_time: '2013-09-10T00:00:00.1234560Z',
      },
      { entry_time: `${D}03.0000000Z`, recv_time: `${D}03.0000000Z`, exchange_id: 'KRAKEN', metric_id: 'STATUS', value_text: 'open' },
    ]);
    const unix = await json('/v1/metrics/exchange/current?exchange_id=KRAKEN&metric_id=LISTED&time_format=unix_millisec');
    expect(unix).toEqual([
      {
        entry_time: T(`${D}03Z`) / 1000,
        recv_time: T(`${D}03Z`) / 1000,
        exchange_id: 'KRAKEN',
        metric_id: 'LISTED',
        value_time: 1378771200123,
      },
    ]);
  });

  it('/v1/metrics/symbol/current and /v1/metrics/symbol/{symbol_id}/current', async () => {
    const all = await json('/v1/metrics/symbol/current');
    expectSchema('/v1/metrics/symbol/current', all);
    expect(all).toHaveLength(2);
    expect(all[0]).toEqual({
      entry_time: '2024-01-01T00:00:01.2500000Z',
      recv_time: '2024-01-01T00:00:01.2500000Z',
      exchange_id: 'BINANCE',
      asset_id: 'BTC',
      symbol_id: 'BINANCE_PERP_BTC_USDT',
      metric_id: FR,
      value_decimal: 0.0002,
    });
    const one = await json('/v1/metrics/symbol/BINANCE_PERP_BTC_USDT/current');
    expect(one).toEqual([all[0]]);
    // As of the last tick at or before `time` (ticks are whole seconds, as for the exchange rates).
    expect(await json(`/v1/metrics/symbol/BINANCE_PERP_BTC_USDT/current?time=${D}01.2Z`)).toEqual([
      { ...all[0], entry_time: `${D}00.7500000Z`, recv_time: `${D}00.7500000Z`, value_decimal: 0.0003 },
    ]);
    expect(await json(`/v1/metrics/symbol/BINANCE_PERP_BTC_USDT/current?time=${D}00.9Z`)).toEqual([]);
    await bad('/v1/metrics/symbol/BINANCE_PERP_BTC_USDT/current?symbol_id=OTHER', 'symbol_id');
  });

  it('/v1/metrics/asset/current: equal times, the later line wins; /v1/metrics/asset/{asset_id}/current', async () => {
    const body = await json(`/v1/metrics/asset/current?metric_id=${USD}`);
    expectSchema('/v1/metrics/asset/current', body);
    expect(body.map((x) => [x.asset_id, x.value_decimal])).toEqual([
      ['BTC', 42002],
      ['ETH', 2500],
    ]);
    expect(Object.keys(body[0])).toEqual(['entry_time', 'recv_time', 'exchange_id', 'asset_id', 'metric_id', 'value_decimal']);
    expect(await json('/v1/metrics/asset/BTC/current')).toEqual([body[0]]);
    expect(await json('/v1/metrics/asset/current?asset_id=ETH&exchange_id=UNISWAP')).toHaveLength(1);
  });

  it('/v1/metrics/exchange/{exchange_id}/current and /v1/metrics/by-exchange/{exchange_id} (every scope)', async () => {
    const exchangeLevel = await json('/v1/metrics/exchange/BINANCE/current');
    expect(exchangeLevel).toEqual(await json('/v1/metrics/exchange/current?exchange_id=BINANCE'));
    const all = await json('/v1/metrics/by-exchange/BINANCE');
    expectSchema('/v1/metrics/exchange/current', all);
    expect(all.map((x) => x.metric_id)).toEqual([FR, 'MONTHLY', 'TICKS', RANK]);
    expect(await json(`/v1/metrics/by-exchange/BINANCE?metric_id=${FR}&time_format=unix_sec`)).toEqual([
      {
        entry_time: T(`${D}01Z`) / 1e6,
        recv_time: T(`${D}01Z`) / 1e6,
        exchange_id: 'BINANCE',
        asset_id: 'BTC',
        symbol_id: 'BINANCE_PERP_BTC_USDT',
        metric_id: FR,
        value_decimal: 0.0002,
      },
    ]);
    expect(await json('/v1/metrics/by-exchange/NOPE')).toEqual([]);
  });
});

describe('history', () => {
  const SYM = `/v1/metrics/symbol/history?metric_id=${FR}&symbol_id=BINANCE_PERP_BTC_USDT`;

  it('/v1/metrics/symbol/history: 1SEC buckets by default, the fields of the spec example', async () => {
    const body = await json(SYM);
    expectHistoryItems(body);
    expect(body).toEqual([
      {
        time_period_start: `${D}00.0000000Z`,
        time_period_end: `${D}01.0000000Z`,
        time_open: `${D}00.2500000Z`,
        time_close: `${D}00.7500000Z`,
        first: 0.0001,
        last: 0.0003,
        min: 0.0001,
        max: 0.0003,
        count: 2,
        sum: 0.0004,
      },
      {
        time_period_start: `${D}01.0000000Z`,
        time_period_end: `${D}02.0000000Z`,
        time_open: `${D}01.2500000Z`,
        time_close: `${D}01.2500000Z`,
        first: 0.0002,
        last: 0.0002,
        min: 0.0002,
        max: 0.0002,
        count: 1,
        sum: 0.0002,
      },
    ]);
    expect(await json(`${SYM}&period_id=1min`)).toEqual([
      expect.objectContaining({
        time_period_start: `${D}00.0000000Z`,
        time_period_end: '2024-01-01T00:01:00.0000000Z',
        count: 3,
        sum: 0.0006,
      }),
    ]);
  });

  it('time_format: unix_sec, unix_millisec, unix_microsec as numbers, unix_nanosec as digits', async () => {
    const us = T(`${D}00.25Z`);
    const cases: [string, unknown, unknown][] = [
      ['unix_sec', 1704067200, 1704067200],
      ['unix_millisec', 1704067200000, us / 1000],
      ['unix_microsec', 1704067200000000, us],
      ['unix_nanosec', '1704067200000000000', `${us}000`],
    ];
    for (const [fmt, start, open] of cases) {
      const [item] = await json(`${SYM}&time_format=${fmt}&limit=1`);
      expect(item.time_period_start, fmt).toBe(start);
      expect(item.time_open, fmt).toBe(open);
      expectHistoryItems([item], typeof start);
    }
    for (const v of ['UNIX_SEC', 'unix', 'iso']) await bad(`${SYM}&time_format=${v}`, 'time_format');
  });

  it('time_start / time_end: the buckets that start in [time_start, time_end)', async () => {
    expect((await json(`${SYM}&time_start=${D}01Z`)).map((i) => i.time_period_start)).toEqual([`${D}01.0000000Z`]);
    expect((await json(`${SYM}&time_start=${D}00.5Z`)).map((i) => i.time_period_start)).toEqual([`${D}01.0000000Z`]);
    expect((await json(`${SYM}&time_end=${D}01Z`)).map((i) => i.time_period_start)).toEqual([`${D}00.0000000Z`]);
    expect(await json(`${SYM}&time_start=${D}05Z`)).toEqual([]);
    await bad(`${SYM}&time_start=${D}01Z&time_end=${D}01Z`, 'time_end');
    await bad(`${SYM}&time_start=soon`, 'time_start');
    await bad(`${SYM}&time_end=2024-13-01`, 'time_end');
  });

  it('month periods: calendar months', async () => {
    const path = '/v1/metrics/exchange/history?metric_id=MONTHLY&exchange_id=BINANCE&period_id=1MTH';
    const body = await json(path);
    expectHistoryItems(body);
    expect(body.map((i) => [i.time_period_start, i.time_period_end, i.count, i.sum])).toEqual([
      ['2024-01-01T00:00:00.0000000Z', '2024-02-01T00:00:00.0000000Z', 2, 3],
      ['2024-02-01T00:00:00.0000000Z', '2024-03-01T00:00:00.0000000Z', 1, 3],
      ['2024-04-01T00:00:00.0000000Z', '2024-05-01T00:00:00.0000000Z', 1, 4],
    ]);
    const quarters = await json(path.replace('1MTH', '3mth'));
    expect(quarters.map((i) => [i.time_period_start, i.count])).toEqual([
      ['2024-01-01T00:00:00.0000000Z', 3],
      ['2024-04-01T00:00:00.0000000Z', 1],
    ]);
    expect((await json(path.replace('1MTH', '1YRS'))).map((i) => i.count)).toEqual([4]);
  });

  it('/v1/metrics/exchange/history, /v1/metrics/asset/history and /v1/metrics/history', async () => {
    const ex = await json(`/v1/metrics/exchange/history?metric_id=${RANK}&exchange_id=BINANCE`);
    expect(ex.map((i) => [i.time_period_start, i.first])).toEqual([
      [`${D}00.0000000Z`, 1],
      [`${D}01.0000000Z`, 3],
    ]);
    const asset = await json(`/v1/metrics/asset/history?metric_id=${USD}&exchange_id=XRATE&asset_id=BTC`);
    expectHistoryItems(asset);
    expect(asset.map((i) => [i.count, i.first, i.last, i.sum])).toEqual([
      [1, 42000.5, 42000.5, 42000.5],
      [2, 42001, 42002, 84003],
    ]);
    // Every series of the metric together (BTC and ETH at 00:00:00).
    const pooled = await json(`/v1/metrics/history?metric_id=${USD}&period_id=1DAY`);
    expect(pooled.map((i) => [i.count, i.min, i.max])).toEqual([[4, 2500, 42002]]);
    const text = await json('/v1/metrics/history?metric_id=STATUS');
    expect(text.map((i) => [i.count, i.first, i.sum])).toEqual([[1, null, null]]);
  });

  it('400 naming a missing or bad parameter; 550 for a series that does not exist', async () => {
    await bad('/v1/metrics/exchange/history?exchange_id=BINANCE', 'metric_id');
    await bad(`/v1/metrics/exchange/history?metric_id=${RANK}`, 'exchange_id');
    await bad(`/v1/metrics/symbol/history?metric_id=${FR}`, 'symbol_id');
    await bad(`/v1/metrics/asset/history?metric_id=${USD}&asset_id=BTC`, 'exchange_id');
    await bad(`/v1/metrics/asset/history?metric_id=${USD}&exchange_id=XRATE`, 'asset_id');
    await bad('/v1/metrics/history', 'metric_id');
    for (const p of ['7SEC', '1MON', '8DAY', '12MTH', 'x']) await bad(`${SYM}&period_id=${p}`, 'period_id');
    for (const l of ['0', '100001', '-1', '1.5', 'ten']) await bad(`${SYM}&limit=${l}`, 'limit');
    await bad(`${SYM}&output_format=yaml`, 'output_format');
    expectError(await get(`/v1/metrics/exchange/history?metric_id=${RANK}&exchange_id=NOPE`), 550);
  });

  it('limit: at most `limit` buckets, the oldest; every 100 items returned cost one request', async () => {
    const path = '/v1/metrics/exchange/history?metric_id=TICKS&exchange_id=BINANCE';
    const cases: [string, number, string][] = [
      ['', 100, '1'],
      ['&limit=1', 1, '1'],
      ['&limit=100', 100, '1'],
      ['&limit=101', 101, '2'],
      ['&limit=1000', 250, '3'],
      ['&limit=100000', 250, '3'],
    ];
    for (const [q, n, cost] of cases) {
      const res = await get(path + q);
      expect(res.status).toBe(200);
      const items = res.json() as Record<string, unknown>[];
      expect(items, q).toHaveLength(n);
      expect(items[0].first).toBe(0);
      expect(res.headers['x-ratelimit-request-cost'], q).toBe(cost);
      expect(res.headers['x-ratelimit-limit']).toBeDefined();
    }
  });
});

describe('a long history (written a slice at a time)', () => {
  const SERIES = '/v1/metrics/exchange/history?metric_id=TICKS&exchange_id=COINBASE';
  const PATH = `${SERIES}&limit=100000`;
  const points = () => POINTS.filter((p) => p.metric_id === LONG_SERIES.metric_id && p.exchange_id === LONG_SERIES.exchange_id);
  /** The items as the history was answered before its buckets were kept in columns: bucket objects, then items. */
  const reference = (q: MetricTimeseriesQuery, time: (us: number) => string | number = formatTime) =>
    metricTimeseries(points(), q).map((b) => toMetricTimeseriesItem(b, time));
  const SEC = { period: getPeriod('1SEC')! };

  it('JSON: the bytes of the items, for every time format, period and window; gzip the same', async () => {
    const cases: [string, MetricTimeseriesQuery, (us: number) => string | number][] = [
      ['', SEC, formatTime],
      ['&time_format=unix_nanosec', SEC, (us) => formatTimeAs(us, 'unix_nanosec')],
      ['&time_format=unix_millisec', SEC, (us) => formatTimeAs(us, 'unix_millisec')],
      ['&period_id=2SEC', { period: getPeriod('2SEC')! }, formatTime],
      [
        '&time_start=2024-02-01T00:01:00Z&time_end=2024-02-01T00:09:00Z',
        { ...SEC, timeStart: T('2024-02-01T00:01:00Z'), timeEnd: T('2024-02-01T00:09:00Z') },
        formatTime,
      ],
      ['&limit=300', { ...SEC, limit: 300 }, formatTime],
    ];
    for (const [query, q, time] of cases) {
      const items = reference(q, time);
      expect(items.length, query).toBeGreaterThan(256);
      const res = await get(query.startsWith('&limit') ? SERIES + query : PATH + query);
      expect(res.status, query).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.text, query).toBe(JSON.stringify(items));
      expect(res.headers['x-ratelimit-request-cost'], query).toBe(String(Math.ceil(items.length / 100)));
    }
    const gz = await get(PATH, { 'Accept-Encoding': 'gzip' });
    expect(gunzipSync(gz.body).toString('utf8')).toBe(JSON.stringify(reference(SEC)));
    const all = await get('/v1/metrics/history?metric_id=TICKS&exchange_id=COINBASE&limit=100000');
    expect(all.text).toBe(JSON.stringify(reference(SEC)));
  });

  it('CSV, XML and MessagePack: the items rendered as before', async () => {
    const items = reference(SEC);
    const csvQuery = '&output_format=csv&csv_set_delimiter=,';
    const csv = await get(PATH + csvQuery);
    expect(csv.text).toBe(render('metric_history', items, { kind: 'csv', csv: csvOptions(new Query({ csv_set_delimiter: ',' })) }).body);
    const xml = await get(`${PATH}&output_format=xml`);
    expect(xml.text).toBe(render('metric_history', items, { kind: 'xml' }).body);
    const mp = await get(PATH, { Accept: 'application/x-msgpack' });
    expect(mp.body.equals(render('metric_history', items, { kind: 'msgpack' }).body as Buffer)).toBe(true);
  });
});

describe('group', () => {
  it('one series per value of groupby, labels sorted, each aggregated', async () => {
    const body = await json<{ groupby: string; label: string; data: Record<string, unknown>[] }[]>(
      `/v1/metrics/group?groupby=exchange_id&metric_id=${FR}&period_id=1MIN`,
    );
    expect(body.map((g) => [g.groupby, g.label, g.data.length])).toEqual([
      ['exchange_id', 'BINANCE', 1],
      ['exchange_id', 'KRAKEN', 1],
    ]);
    expect(Object.keys(body[0])).toEqual(['groupby', 'label', 'data']);
    expectHistoryItems(body[0].data);
    expect(body.map((g) => g.data[0].count)).toEqual([3, 1]);
    const bySymbol = await json<{ label: string }[]>(`/v1/metrics/group?groupby=SYMBOL_ID&exchange_id=KRAKEN`);
    expect(bySymbol.map((g) => g.label)).toEqual(['', 'KRAKEN_PERP_BTC_USD']);
    const byMetric = await json<{ label: string; data: unknown[] }[]>(
      `/v1/metrics/group?groupby=metric_id&exchange_id=BINANCE&time_start=2024-01-02`,
    );
    expect(byMetric.map((g) => [g.label, g.data.length])).toEqual([
      [FR, 0],
      ['MONTHLY', 4],
      ['TICKS', 100],
      [RANK, 0],
    ]);
  });

  it('groupby is required and checked; the cost counts the items of every group', async () => {
    await bad('/v1/metrics/group', 'groupby');
    await bad('/v1/metrics/group?groupby=chain_id', 'groupby');
    await bad('/v1/metrics/group?groupby=asset_id&period_id=1WEEK', 'period_id');
    const res = await get('/v1/metrics/group?groupby=metric_id&exchange_id=BINANCE&limit=200');
    expect(res.status).toBe(200);
    const n = (res.json() as { data: unknown[] }[]).reduce((s, g) => s + g.data.length, 0);
    expect(n).toBe(2 + 4 + 200 + 2);
    expect(res.headers['x-ratelimit-request-cost']).toBe('3');
  });
});

describe('output formats', () => {
  const HIST = `/v1/metrics/symbol/history?metric_id=${FR}&symbol_id=BINANCE_PERP_BTC_USDT`;

  it('CSV: header = the JSON field names in order, `;` by default, every csv_* option', async () => {
    const res = await get(`${HIST}&output_format=csv`);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.text.split('\n')).toEqual([
      'time_period_start;time_period_end;time_open;time_close;first;last;min;max;count;sum',
      `${D}00.0000000Z;${D}01.0000000Z;${D}00.2500000Z;${D}00.7500000Z;0.0001;0.0003;0.0001;0.0003;2;0.0004`,
      `${D}01.0000000Z;${D}02.0000000Z;${D}01.2500000Z;${D}01.2500000Z;0.0002;0.0002;0.0002;0.0002;1;0.0002`,
      '',
    ]);
    const unix = await get(
      `${HIST}&output_format=csv&time_format=unix_nanosec&csv_include_header=false&csv_exclude_col=first,last,min,max&limit=1`,
    );
    expect(unix.text).toBe('1704067200000000000;1704067201000000000;1704067200250000000;1704067200750000000;2;0.0004\n');
    const cur = await get('/v1/metrics/exchange/current?exchange_id=KRAKEN&output_format=csv&csv_set_delimiter=,');
    expect(cur.text.split('\n')).toEqual([
      'entry_time,recv_time,exchange_id,asset_id,symbol_id,metric_id,value_decimal,value_text,value_time',
      `${D}03.0000000Z,${D}03.0000000Z,KRAKEN,,,LISTED,,,2013-09-10T00:00:00.1234560Z`,
      `${D}03.0000000Z,${D}03.0000000Z,KRAKEN,,,STATUS,,open,`,
      `${D}00.0000000Z,${D}00.0000000Z,KRAKEN,,,${RANK},2,,`,
      '',
    ]);
    const listing = await get('/v1/metrics/listing?output_format=csv&csv_include_quotes=true');
    expect(listing.text.split('\n')[1]).toBe('"FUNDING_RATE";"Funding rate of a perpetual contract"');
    const assets = await get('/v1/metrics/asset/listing?exchange_id=UNISWAP&output_format=csv');
    expect(assets.text).toBe(
      'metric_id;symbol_id;exchange_id;asset_id;chain_id;network_id\nTVL;;UNISWAP;ETH;ETHEREUM;MAINNET\nTVL;;UNISWAP;USDC;BASE;\n',
    );
    const groups = await get(
      `/v1/metrics/group?groupby=exchange_id&metric_id=${RANK}&period_id=1DAY&output_format=csv&csv_exclude_col=time_open,time_close`,
    );
    expect(groups.text.split('\n')).toEqual([
      'groupby;label;time_period_start;time_period_end;first;last;min;max;count;sum',
      `exchange_id;BINANCE;2024-01-01T00:00:00.0000000Z;2024-01-02T00:00:00.0000000Z;1;3;1;3;2;4`,
      `exchange_id;KRAKEN;2024-01-01T00:00:00.0000000Z;2024-01-02T00:00:00.0000000Z;2;2;2;2;1;2`,
      '',
    ]);
    const empty = await get(
      `/v1/metrics/group?groupby=exchange_id&metric_id=${RANK}&time_start=2025-01-01&output_format=csv&csv_include_header=false`,
    );
    expect(empty.text).toBe('exchange_id;BINANCE;;;;;;;;;;\nexchange_id;KRAKEN;;;;;;;;;;\n');
  });

  it('gzip by Accept-Encoding: the same JSON', async () => {
    const plain = await get(HIST);
    const res = await get(HIST, { 'Accept-Encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(res.body).toString('utf8')).toBe(plain.text);
    const csv = await get(`/v1/metrics/group?groupby=asset_id&output_format=csv`, { 'Accept-Encoding': 'gzip' });
    expect(csv.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(csv.body).toString('utf8')).toBe((await get('/v1/metrics/group?groupby=asset_id&output_format=csv')).text);
  });

  it('XML and MessagePack', async () => {
    const xml = await get(`${HIST}&output_format=xml&limit=1`);
    expect(xml.headers['content-type']).toMatch(/^application\/xml/);
    expect(xml.text).toContain('<ArrayOfMetricData ');
    expect(xml.text).toContain(`<MetricData><time_period_start>${D}00.0000000Z</time_period_start>`);
    expect(xml.text).toContain('<count>2</count><sum>0.0004</sum></MetricData></ArrayOfMetricData>');
    const cur = await get('/v1/metrics/exchange/current?exchange_id=KRAKEN&metric_id=STATUS&output_format=xml');
    expect(cur.text).toContain('<ArrayOfGeneralData ');
    expect(cur.text).toContain('<GeneralData><entry_time>');
    expect(cur.text).toContain('<value_text>open</value_text></GeneralData>');
    const grp = await get(`/v1/metrics/group?groupby=exchange_id&metric_id=${RANK}&period_id=1DAY&output_format=xml`);
    expect(grp.text).toContain('<ArrayOfMetricGroup ');
    expect(grp.text).toContain('<MetricGroup><groupby>exchange_id</groupby><label>BINANCE</label><data><MetricData>');
    const listing = await get('/v1/metrics/listing?output_format=xml');
    expect(listing.text).toContain('<ArrayOfMetric ');
    expect((await get('/v1/metrics/symbol/listing?output_format=xml')).text).toContain('<ListingItem><metric_id>');
    const mp = await get(HIST, { Accept: 'application/x-msgpack' });
    expect(mp.headers['content-type']).toBe('application/x-msgpack');
    expect(unpack(mp.body)).toEqual(JSON.parse((await get(HIST)).text));
  });
});

describe('the metrics right', () => {
  it('a key with every right (all) has it; a key without it gets 403', async () => {
    expect(RIGHTS).toContain('metrics');
    expect(parseRights('all')).toContain('metrics');
    expect(parseRights(undefined)).toContain('metrics');
    expect(parseRights('metrics, rate')).toEqual(['rate', 'metrics']);
    const ratesOnly = srv.key({ name: 'no metrics', rights: ['rate', 'rates', 'periods', 'history', 'explain'] });
    const msg = expectError(await srv.get('/v1/metrics/listing', { 'X-CoinAPI-Key': ratesOnly }), 403);
    expect(msg).toMatch(/metrics/);
    expect(expectError(await srv.get('/v1/metrics/listing'), 401)).toBeTruthy();
    const metricsOnly = srv.key({ name: 'metrics only', rights: parseRights('metrics') });
    expect((await srv.get('/v1/metrics/listing', { 'X-CoinAPI-Key': metricsOnly })).status).toBe(200);
  });

  it('a 400 costs 1, as on the exchange-rate routes', async () => {
    const res = await get('/v1/metrics/group');
    expect(res.status).toBe(400);
    expect(res.headers['x-ratelimit-request-cost']).toBe('1');
  });
});
