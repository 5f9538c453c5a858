/**
 * The metrics routes (src/service/metrics.ts) over the metrics of a replay database: what each
 * route answers (the exact shapes and the 400s of every operation are in
 * metricsContract.test.ts), `time_format`, month periods, groups, CSV / XML / MessagePack / gzip,
 * limit costs and the right.
 */
import { decode as unpack } from '@msgpack/msgpack';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { formatTimeAs } from '../../src/core/metrics/timeFormat.js';
import { metricTimeseries, type MetricTimeseriesQuery, toMetricTimeseriesItem } from '../../src/core/metrics/timeseries.js';
import { getPeriod } from '../../src/core/periods.js';
import { formatTime } from '../../src/core/time.js';
import { csvOptions, render } from '../../src/http/format/index.js';
import { Query } from '../../src/http/params.js';
import { parseRights, RIGHTS } from '../../src/http/keys.js';
import { OWN_METRICS } from '../../src/core/engine/ownMetrics.js';
import { expectError, expectSchema } from './helpers.js';
import { D, expectHistoryItems, FR, LONG_SERIES, metricsServer, POINTS, RANK, T, USD } from './metricsFixture.js';

const m = metricsServer();
const { get, json, bad } = m;

describe('listing', () => {
  it('/v1/metrics/listing: every definition (the latest wins) and every metric seen, sorted; own metrics only with points', async () => {
    const body = await json('/v1/metrics/listing');
    expectSchema('/v1/metrics/listing', body);
    // xrate's own metrics with no stored point (XRATE_MARKET_SPREAD, ...) are not listed.
    expect(body.map((m) => m.metric_id)).toEqual(['FUNDING_RATE', 'LISTED', 'MONTHLY', 'STATUS', 'TICKS', 'TVL', USD, RANK]);
    expect(body[0]).toEqual({ metric_id: FR, description: 'Funding rate of a perpetual contract' });
    expect(Object.keys(body[0])).toEqual(['metric_id', 'description']);
    // A metric seen with no definition: its own description if it is xrate's, else "".
    expect(body.find((m) => m.metric_id === USD)?.description).toBe(OWN_METRICS.find((d) => d.metric_id === USD)?.description);
    expect(body.find((m) => m.metric_id === 'TVL')?.description).toBe('');
    expect(body.find((m) => m.metric_id === RANK)?.description).toBe('Rank of the exchange at the tick');
    const early = await json(`/v1/metrics/listing?time=${D}00.5Z`);
    expect(early.map((m) => m.metric_id)).toEqual([FR, USD, RANK]);
  });

  it('/v1/metrics/exchange/listing: the exchange-level series of the exchange', async () => {
    const body = await json('/v1/metrics/exchange/listing?exchange_id=KRAKEN');
    expectSchema('/v1/metrics/exchange/listing', body);
    expect(body).toEqual([
      { exchange_id: 'KRAKEN', metric_id: 'LISTED' },
      { exchange_id: 'KRAKEN', metric_id: 'STATUS' },
      { exchange_id: 'KRAKEN', metric_id: RANK },
    ]);
    expect(Object.keys(body[0])).toEqual(['exchange_id', 'metric_id']);
    expect(await json(`/v1/metrics/exchange/listing?exchange_id=KRAKEN&metric_id=${RANK}`)).toHaveLength(1);
    await bad('/v1/metrics/exchange/listing', 'exchange_id');
  });

  it('/v1/metrics/symbol/listing: exchange_id, metric_id, symbol_id of the symbol-level series', async () => {
    const body = await json(`/v1/metrics/symbol/listing?metric_id=${FR}&exchange_id=BINANCE`);
    expectSchema('/v1/metrics/symbol/listing', body);
    expect(body).toEqual([{ exchange_id: 'BINANCE', metric_id: FR, symbol_id: 'BINANCE_PERP_BTC_USDT' }]);
    expect(Object.keys(body[0])).toEqual(['exchange_id', 'metric_id', 'symbol_id']);
    expect(await json('/v1/metrics/symbol/listing?exchange_id=KRAKEN')).toEqual([
      { exchange_id: 'KRAKEN', metric_id: FR, symbol_id: 'KRAKEN_PERP_BTC_USD' },
    ]);
    expect(await json('/v1/metrics/symbol/listing?symbol_id=KRAKEN_PERP_BTC_USD')).toHaveLength(1);
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
    const all = await json(`/v1/metrics/symbol/current?exchange_id=BINANCE`);
    expectSchema('/v1/metrics/symbol/current', all);
    expect(all).toHaveLength(1);
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
    // A symbol-level point without an asset_id: asset_id is there, empty.
    expect(await json('/v1/metrics/symbol/current?symbol_id=KRAKEN_PERP_BTC_USD')).toEqual([
      {
        entry_time: `${D}00.5000000Z`,
        recv_time: `${D}00.5000000Z`,
        exchange_id: 'KRAKEN',
        asset_id: '',
        symbol_id: 'KRAKEN_PERP_BTC_USD',
        metric_id: FR,
        value_decimal: 0.0005,
      },
    ]);
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

  it('/v1/metrics/exchange/{exchange_id}/current; /v1/metrics/by-exchange/{exchange_id}: every series of every scope, first and last time', async () => {
    const exchangeLevel = await json('/v1/metrics/exchange/BINANCE/current');
    expect(exchangeLevel).toEqual(await json('/v1/metrics/exchange/current?exchange_id=BINANCE'));
    const all = await json('/v1/metrics/by-exchange/BINANCE');
    const span = (first: string, last: string) => ({ min_time: formatTime(T(first)), max_time: formatTime(T(last)) });
    const ids = { exchange_id: 'BINANCE', chain_id: '', network_id: '' };
    expect(all).toEqual([
      { asset_id: 'BTC', ...ids, metric_id: FR, symbol_id: 'BINANCE_PERP_BTC_USDT', ...span(`${D}00.25Z`, `${D}01.25Z`) },
      { asset_id: '', ...ids, metric_id: 'MONTHLY', symbol_id: '', ...span('2024-01-15', '2024-04-10') },
      { asset_id: '', ...ids, metric_id: 'TICKS', symbol_id: '', ...span('2024-02-01', '2024-02-01T00:04:09Z') },
      { asset_id: '', ...ids, metric_id: RANK, symbol_id: '', ...span(`${D}00Z`, `${D}01.5Z`) },
    ]);
    // As of a time: the series with a point by then, their last point by then; time_format applies.
    expect(await json(`/v1/metrics/by-exchange/BINANCE?time=${D}01Z&time_format=unix_millisec`)).toEqual([
      {
        asset_id: 'BTC',
        ...ids,
        metric_id: FR,
        symbol_id: 'BINANCE_PERP_BTC_USDT',
        min_time: T(`${D}00.25Z`) / 1e3,
        max_time: T(`${D}00.75Z`) / 1e3,
      },
      { asset_id: '', ...ids, metric_id: RANK, symbol_id: '', min_time: T(`${D}00Z`) / 1e3, max_time: T(`${D}00Z`) / 1e3 },
    ]);
    // chain_id and network_id: those of the series' latest point.
    expect(await json('/v1/metrics/by-exchange/UNISWAP?asset_id=ETH')).toEqual([
      {
        asset_id: 'ETH',
        exchange_id: 'UNISWAP',
        metric_id: 'TVL',
        symbol_id: '',
        chain_id: 'ETHEREUM',
        network_id: 'MAINNET',
        ...span(`${D}02Z`, `${D}02Z`),
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
    // Every series of the metric on the exchange together (BTC and ETH at 00:00:00).
    const pooled = await json(`/v1/metrics/history?metric_id=${USD}&exchange_id=XRATE&period_id=1DAY`);
    expect(pooled.map((i) => [i.count, i.min, i.max])).toEqual([[4, 2500, 42002]]);
    expect(await json(`/v1/metrics/history?metric_id=${USD}&asset_id=ETH&period_id=1DAY`)).toEqual([
      expect.objectContaining({ count: 1, sum: 2500 }),
    ]);
    expect(await json(`/v1/metrics/history?metric_id=${FR}&symbol_id=KRAKEN_PERP_BTC_USD`)).toHaveLength(1);
    const text = await json('/v1/metrics/history?metric_id=STATUS&exchange_id=KRAKEN');
    expect(text.map((i) => [i.count, i.first, i.sum])).toEqual([[1, null, null]]);
  });

  it('400 naming a missing or bad parameter; 550 for a series that does not exist', async () => {
    await bad('/v1/metrics/exchange/history?exchange_id=BINANCE', 'metric_id');
    await bad(`/v1/metrics/exchange/history?metric_id=${RANK}`, 'exchange_id');
    await bad(`/v1/metrics/symbol/history?metric_id=${FR}`, 'symbol_id');
    await bad(`/v1/metrics/asset/history?metric_id=${USD}&asset_id=BTC`, 'exchange_id');
    await bad(`/v1/metrics/asset/history?metric_id=${USD}&exchange_id=XRATE`, 'asset_id');
    await bad('/v1/metrics/history', 'metric_id');
    for (const id of ['symbol_id', 'asset_id', 'exchange_id']) await bad(`/v1/metrics/history?metric_id=${USD}`, id);
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
  type Grouped = { series_label: string[]; rows: Record<string, unknown>[][] };

  it('{series_label, rows}: one series per value of groupby, labels sorted, each aggregated', async () => {
    const body = await json<Grouped>(`/v1/metrics/group?groupby=asset_id&metric_id=${USD}&exchange_id=XRATE`);
    expect(Object.keys(body)).toEqual(['series_label', 'rows']);
    expect(body.series_label).toEqual(['BTC', 'ETH']);
    expect(body.rows.map((r) => r.map((i) => [i.time_period_start, i.count, i.sum]))).toEqual([
      [
        [`${D}00.0000000Z`, 1, 42000.5],
        [`${D}01.0000000Z`, 2, 84003],
      ],
      [[`${D}00.0000000Z`, 1, 2500]],
    ]);
    for (const r of body.rows) expectHistoryItems(r);
    // Each row is the history of the label's series.
    expect(body.rows[0]).toEqual(await json(`/v1/metrics/asset/history?metric_id=${USD}&exchange_id=XRATE&asset_id=BTC`));
    const byExchange = await json<Grouped>(
      `/v1/metrics/group?groupby=EXCHANGE_ID&metric_id=${FR}&symbol_id=KRAKEN_PERP_BTC_USD&period_id=1MIN`,
    );
    expect(byExchange).toEqual({
      series_label: ['KRAKEN'],
      rows: [
        [expect.objectContaining({ time_period_start: `${D}00.0000000Z`, time_period_end: '2024-01-01T00:01:00.0000000Z', count: 1 })],
      ],
    });
    // A series with no point in the window keeps its label, with no item; several series pooled in one group.
    const late = await json<Grouped>(`/v1/metrics/group?groupby=metric_id&metric_id=TVL&exchange_id=UNISWAP&time_start=2024-01-02`);
    expect(late).toEqual({ series_label: ['TVL'], rows: [[]] });
    const pooled = await json<Grouped>(`/v1/metrics/group?groupby=exchange_id&metric_id=TVL&exchange_id=UNISWAP&period_id=1DAY`);
    expect(pooled.rows.map((r) => r.map((i) => [i.count, i.sum]))).toEqual([[[2, 1500]]]);
    expect(await json<Grouped>(`/v1/metrics/group?groupby=asset_id&metric_id=${USD}&exchange_id=NOPE`)).toEqual({
      series_label: [],
      rows: [],
    });
  });

  it('metric_id, one of exchange_id, symbol_id, asset_id, and groupby are required; the cost counts the items of every group', async () => {
    await bad('/v1/metrics/group?groupby=asset_id&exchange_id=XRATE', 'metric_id');
    for (const id of ['exchange_id', 'symbol_id', 'asset_id']) await bad(`/v1/metrics/group?groupby=asset_id&metric_id=${USD}`, id);
    await bad(`/v1/metrics/group?metric_id=${USD}&exchange_id=XRATE`, 'groupby');
    await bad(`/v1/metrics/group?metric_id=${USD}&exchange_id=XRATE&groupby=chain_id`, 'groupby');
    await bad(`/v1/metrics/group?metric_id=${USD}&exchange_id=XRATE&groupby=asset_id&period_id=1WEEK`, 'period_id');
    await bad(`/v1/metrics/group?metric_id=${USD}&exchange_id=XRATE&groupby=asset_id&limit=0`, 'limit');
    await bad(`/v1/metrics/group?metric_id=${USD}&exchange_id=XRATE&groupby=asset_id&time_format=unix`, 'time_format');
    const res = await get('/v1/metrics/group?groupby=metric_id&metric_id=TICKS&exchange_id=BINANCE&limit=150');
    expect(res.status).toBe(200);
    expect((res.json() as Grouped).rows.map((r) => r.length)).toEqual([150]);
    expect(res.headers['x-ratelimit-request-cost']).toBe('2');
    const small = await get(`/v1/metrics/group?groupby=asset_id&metric_id=${USD}&exchange_id=XRATE`);
    expect(small.headers['x-ratelimit-request-cost']).toBe('1');
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
    // The grouped result flattened as the all-rates object: one row per item, its label repeated.
    const GROUP = `/v1/metrics/group?groupby=asset_id&metric_id=${USD}&exchange_id=XRATE`;
    const groups = await get(`${GROUP}&output_format=csv&csv_exclude_col=time_open,time_close`);
    expect(groups.text.split('\n')).toEqual([
      'series_label;time_period_start;time_period_end;first;last;min;max;count;sum',
      `BTC;${D}00.0000000Z;${D}01.0000000Z;42000.5;42000.5;42000.5;42000.5;1;42000.5`,
      `BTC;${D}01.0000000Z;${D}02.0000000Z;42001;42002;42001;42002;2;84003`,
      `ETH;${D}00.0000000Z;${D}01.0000000Z;2500;2500;2500;2500;1;2500`,
      '',
    ]);
    // A label with no item: one row of the label alone.
    const empty = await get(`${GROUP}&time_start=2025-01-01&output_format=csv&csv_include_header=false`);
    expect(empty.text).toBe('BTC;;;;;;;;;;\nETH;;;;;;;;;;\n');
    const byExchange = await get('/v1/metrics/by-exchange/UNISWAP?output_format=csv&csv_set_timeformat=unix');
    expect(byExchange.text).toBe(
      'asset_id;exchange_id;metric_id;symbol_id;chain_id;network_id;min_time;max_time\n' +
        'ETH;UNISWAP;TVL;;ETHEREUM;MAINNET;1704067202;1704067202\nUSDC;UNISWAP;TVL;;BASE;;1704067202;1704067202\n',
    );
    const symbols = await get('/v1/metrics/symbol/listing?exchange_id=KRAKEN&output_format=csv');
    expect(symbols.text).toBe('exchange_id;metric_id;symbol_id\nKRAKEN;FUNDING_RATE;KRAKEN_PERP_BTC_USD\n');
    const exchanges = await get(`/v1/metrics/exchange/listing?exchange_id=KRAKEN&metric_id=STATUS&output_format=csv`);
    expect(exchanges.text).toBe('exchange_id;metric_id\nKRAKEN;STATUS\n');
  });

  it('gzip by Accept-Encoding: the same JSON', async () => {
    const plain = await get(HIST);
    const res = await get(HIST, { 'Accept-Encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(res.body).toString('utf8')).toBe(plain.text);
    const GROUP = `/v1/metrics/group?groupby=asset_id&metric_id=${USD}&exchange_id=XRATE&output_format=csv`;
    const csv = await get(GROUP, { 'Accept-Encoding': 'gzip' });
    expect(csv.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(csv.body).toString('utf8')).toBe((await get(GROUP)).text);
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
    const GROUP = `/v1/metrics/group?groupby=asset_id&metric_id=${USD}&exchange_id=XRATE&period_id=1DAY`;
    const grp = await get(`${GROUP}&output_format=xml`);
    expect(grp.text).toContain('<GroupedMetrics ');
    expect(grp.text).toContain(
      '<series_label><string>BTC</string><string>ETH</string></series_label><rows><ArrayOfMetricData><MetricData><time_period_start>',
    );
    expect(grp.text).toContain('<sum>126003.5</sum></MetricData></ArrayOfMetricData><ArrayOfMetricData><MetricData>');
    expect(grp.text).toContain('<sum>2500</sum></MetricData></ArrayOfMetricData></rows></GroupedMetrics>');
    const none = await get(`${GROUP}&time_start=2025-01-01&output_format=xml`);
    expect(none.text).toContain('<rows><ArrayOfMetricData/><ArrayOfMetricData/></rows>');
    const listing = await get('/v1/metrics/listing?output_format=xml');
    expect(listing.text).toContain('<ArrayOfMetric ');
    expect((await get('/v1/metrics/symbol/listing?exchange_id=KRAKEN&output_format=xml')).text).toContain('<ListingItem><exchange_id>');
    const byExchange = await get('/v1/metrics/by-exchange/UNISWAP?asset_id=USDC&output_format=xml');
    expect(byExchange.text).toContain(
      '<ArrayOfMetricByExchange xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><MetricByExchange><asset_id>USDC</asset_id>',
    );
    expect(byExchange.text).toContain('<symbol_id/><chain_id>BASE</chain_id><network_id/><min_time>');
    for (const path of [HIST, GROUP, '/v1/metrics/by-exchange/BINANCE']) {
      const mp = await get(path, { Accept: 'application/x-msgpack' });
      expect(mp.headers['content-type']).toBe('application/x-msgpack');
      expect(unpack(mp.body)).toEqual(JSON.parse((await get(path)).text));
    }
  });
});

describe('the metrics right', () => {
  it('a key with every right (all) has it; a key without it gets 403', async () => {
    expect(RIGHTS).toContain('metrics');
    expect(parseRights('all')).toContain('metrics');
    expect(parseRights(undefined)).toContain('metrics');
    expect(parseRights('metrics, rate')).toEqual(['rate', 'metrics']);
    const ratesOnly = m.srv.key({ name: 'no metrics', rights: ['rate', 'rates', 'periods', 'history', 'explain'] });
    const msg = expectError(await m.srv.get('/v1/metrics/listing', { 'X-CoinAPI-Key': ratesOnly }), 403);
    expect(msg).toMatch(/metrics/);
    expect(expectError(await m.srv.get('/v1/metrics/listing'), 401)).toBeTruthy();
    const metricsOnly = m.srv.key({ name: 'metrics only', rights: parseRights('metrics') });
    expect((await m.srv.get('/v1/metrics/listing', { 'X-CoinAPI-Key': metricsOnly })).status).toBe(200);
  });

  it('a 400 costs 1, as on the exchange-rate routes', async () => {
    const res = await get('/v1/metrics/group');
    expect(res.status).toBe(400);
    expect(res.headers['x-ratelimit-request-cost']).toBe('1');
  });
});
