/**
 * Every metrics operation of the interface description, over the metrics of metricsFixture.ts:
 * the exact shape of its answer (field names, their order and types) and its 400s (a required
 * parameter absent, or a malformed one, named in the message), with the common parameters
 * `time_format`, `period_id` and `limit`.
 */
import { describe, expect, it } from 'vitest';
import { formatTime } from '../../src/core/time.js';
import { D, FR, metricsServer, RANK, T, USD } from './metricsFixture.js';

const { json, bad } = metricsServer();

/** A timestamp as the service writes it: 7 fractional digits and `Z`. */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$/;

type FieldType = 'string' | 'time' | 'number' | 'count' | 'aggregate' | 'unix' | 'digits';

/** Whether `v` is of type `t` (`aggregate`: a number or null; `unix`: an integer; `digits`: an integer as a string of digits). */
function isType(v: unknown, t: FieldType): boolean {
  switch (t) {
    case 'string':
      return typeof v === 'string';
    case 'time':
      return typeof v === 'string' && ISO.test(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'count':
      return Number.isInteger(v) && (v as number) >= 1;
    case 'aggregate':
      return v === null || (typeof v === 'number' && Number.isFinite(v));
    case 'unix':
      return Number.isSafeInteger(v);
    case 'digits':
      return typeof v === 'string' && /^-?\d+$/.test(v);
  }
}

/** Each item has exactly `fields`, in that order, of those types. */
function expectShape(items: readonly Record<string, unknown>[], fields: readonly (readonly [string, FieldType])[]): void {
  expect(items.length).toBeGreaterThan(0);
  for (const item of items) {
    expect(Object.keys(item)).toEqual(fields.map(([name]) => name));
    for (const [name, type] of fields) expect(isType(item[name], type), `${name}: ${JSON.stringify(item[name])} is not ${type}`).toBe(true);
  }
}

/** The fields of a metric timeseries item, times of type `time`. */
const itemFields = (time: FieldType = 'time'): [string, FieldType][] => [
  ['time_period_start', time],
  ['time_period_end', time],
  ['time_open', time],
  ['time_close', time],
  ['first', 'aggregate'],
  ['last', 'aggregate'],
  ['min', 'aggregate'],
  ['max', 'aggregate'],
  ['count', 'count'],
  ['sum', 'aggregate'],
];

/** The fields of a current metric value before its value: `ids` between recv_time and metric_id. */
const currentFields = (ids: string[]): [string, FieldType][] => [
  ['entry_time', 'time'],
  ['recv_time', 'time'],
  ['exchange_id', 'string'],
  ...ids.map((id): [string, FieldType] => [id, 'string']),
  ['metric_id', 'string'],
];

/** Current values: the fields of `ids`, then exactly one value field of its type. */
function expectCurrent(items: readonly Record<string, unknown>[], ids: string[]): void {
  expect(items.length).toBeGreaterThan(0);
  const head = currentFields(ids);
  for (const item of items) {
    const keys = Object.keys(item);
    const value = keys[head.length];
    expect(keys.length).toBe(head.length + 1);
    const type: FieldType = value === 'value_decimal' ? 'number' : value === 'value_time' ? 'time' : 'string';
    expect(['value_decimal', 'value_text', 'value_time']).toContain(value);
    expectShape([item], [...head, [value, type]]);
  }
}

const SYMBOL = 'BINANCE_PERP_BTC_USDT';

describe('shapes of the metrics operations', () => {
  it('GET /v1/metrics/listing: metric listing items', async () => {
    expectShape(await json('/v1/metrics/listing'), [
      ['metric_id', 'string'],
      ['description', 'string'],
    ]);
  });

  it('GET /v1/metrics/by-exchange/{exchange_id}: metric-by-exchange items', async () => {
    const body = await json('/v1/metrics/by-exchange/BINANCE');
    expectShape(body, [
      ['asset_id', 'string'],
      ['exchange_id', 'string'],
      ['metric_id', 'string'],
      ['symbol_id', 'string'],
      ['chain_id', 'string'],
      ['network_id', 'string'],
      ['min_time', 'time'],
      ['max_time', 'time'],
    ]);
    expect(body.every((i) => i.exchange_id === 'BINANCE')).toBe(true);
  });

  it('current values: no asset_id nor symbol_id at exchange level, asset_id at asset level, both at symbol level', async () => {
    for (const path of ['/v1/metrics/exchange/KRAKEN/current', '/v1/metrics/exchange/current?exchange_id=KRAKEN'])
      expectCurrent(await json(path), []);
    for (const path of ['/v1/metrics/asset/BTC/current', '/v1/metrics/asset/current?asset_id=ETH'])
      expectCurrent(await json(path), ['asset_id']);
    for (const path of [
      `/v1/metrics/symbol/${SYMBOL}/current`,
      '/v1/metrics/symbol/KRAKEN_PERP_BTC_USD/current',
      '/v1/metrics/symbol/current?exchange_id=KRAKEN',
      `/v1/metrics/symbol/current?symbol_id=${SYMBOL}`,
    ])
      expectCurrent(await json(path), ['asset_id', 'symbol_id']);
  });

  it('scope listings: exchange_id, metric_id (exchange level); exchange_id, metric_id, symbol_id (symbol level)', async () => {
    expectShape(await json('/v1/metrics/exchange/listing?exchange_id=BINANCE'), [
      ['exchange_id', 'string'],
      ['metric_id', 'string'],
    ]);
    for (const q of ['exchange_id=BINANCE', `symbol_id=${SYMBOL}`, `exchange_id=KRAKEN&metric_id=${FR}`])
      expectShape(await json(`/v1/metrics/symbol/listing?${q}`), [
        ['exchange_id', 'string'],
        ['metric_id', 'string'],
        ['symbol_id', 'string'],
      ]);
  });

  it('histories: metric timeseries items', async () => {
    for (const path of [
      `/v1/metrics/history?metric_id=${FR}&symbol_id=${SYMBOL}`,
      `/v1/metrics/history?metric_id=${USD}&asset_id=BTC`,
      `/v1/metrics/history?metric_id=${RANK}&exchange_id=BINANCE`,
      `/v1/metrics/exchange/history?metric_id=${RANK}&exchange_id=BINANCE`,
      `/v1/metrics/symbol/history?metric_id=${FR}&symbol_id=${SYMBOL}`,
      '/v1/metrics/history?metric_id=STATUS&exchange_id=KRAKEN',
    ])
      expectShape(await json(path), itemFields());
  });

  it('GET /v1/metrics/group: {series_label: string[], rows: item[][]}, one row per label', async () => {
    const body = await json<{ series_label: unknown[]; rows: Record<string, unknown>[][] }>(
      `/v1/metrics/group?metric_id=${USD}&exchange_id=XRATE&groupby=asset_id`,
    );
    expect(Object.keys(body)).toEqual(['series_label', 'rows']);
    expect(body.series_label.every((l) => typeof l === 'string')).toBe(true);
    expect(body.rows).toHaveLength(body.series_label.length);
    for (const r of body.rows) expectShape(r, itemFields());
  });

  it('time_format: every time field of the timeseries items and of the metric-by-exchange items', async () => {
    const cases: [string, FieldType][] = [
      ['unix_sec', 'unix'],
      ['unix_millisec', 'unix'],
      ['unix_microsec', 'unix'],
      ['unix_nanosec', 'digits'],
    ];
    for (const [format, type] of cases) {
      const q = `time_format=${format}`;
      expectShape(await json(`/v1/metrics/history?metric_id=${FR}&symbol_id=${SYMBOL}&${q}`), itemFields(type));
      expectShape(await json(`/v1/metrics/symbol/history?metric_id=${FR}&symbol_id=${SYMBOL}&${q}`), itemFields(type));
      const group = await json<{ rows: Record<string, unknown>[][] }>(
        `/v1/metrics/group?metric_id=${FR}&exchange_id=BINANCE&groupby=symbol_id&${q}`,
      );
      expectShape(group.rows[0], itemFields(type));
      const spans = await json(`/v1/metrics/by-exchange/KRAKEN?${q}`);
      for (const s of spans) for (const k of ['min_time', 'max_time']) expect(isType(s[k], type), `${format} ${k}`).toBe(true);
    }
    const [first] = await json(`/v1/metrics/history?metric_id=${FR}&symbol_id=${SYMBOL}&time_format=unix_millisec&limit=1`);
    expect([first.time_period_start, first.time_period_end, first.time_open, first.time_close]).toEqual(
      [`${D}00Z`, `${D}01Z`, `${D}00.25Z`, `${D}00.75Z`].map((t) => T(t) / 1000),
    );
  });
});

describe('required and malformed parameters of the metrics operations: 400 naming them', () => {
  it('GET /v1/metrics/history: metric_id, and one of symbol_id, asset_id, exchange_id', async () => {
    await bad('/v1/metrics/history?exchange_id=BINANCE', 'metric_id');
    await bad(`/v1/metrics/history?metric_id=${RANK}&exchange_id=`, 'exchange_id');
    const message = await bad(`/v1/metrics/history?metric_id=${RANK}`, 'symbol_id');
    for (const name of ['asset_id', 'exchange_id']) expect(message).toContain(`'${name}'`);
  });

  it('GET /v1/metrics/group: metric_id; one of exchange_id, symbol_id, asset_id; groupby in symbol_id, asset_id, exchange_id, metric_id', async () => {
    const ok = `/v1/metrics/group?metric_id=${USD}&exchange_id=XRATE`;
    await bad('/v1/metrics/group?exchange_id=XRATE&groupby=asset_id', 'metric_id');
    const message = await bad(`/v1/metrics/group?metric_id=${USD}&groupby=asset_id`, 'exchange_id');
    for (const name of ['symbol_id', 'asset_id']) expect(message).toContain(`'${name}'`);
    await bad(ok, 'groupby');
    for (const g of ['chain_id', 'network_id', 'time', 'x']) await bad(`${ok}&groupby=${g}`, 'groupby');
    for (const g of ['symbol_id', 'asset_id', 'exchange_id', 'metric_id'])
      expect(Object.keys(await json(`${ok}&groupby=${g}`))).toEqual(['series_label', 'rows']);
  });

  it('exchange/listing and exchange/current: exchange_id; exchange/history: metric_id and exchange_id', async () => {
    await bad('/v1/metrics/exchange/listing', 'exchange_id');
    await bad(`/v1/metrics/exchange/listing?metric_id=${RANK}`, 'exchange_id');
    await bad('/v1/metrics/exchange/current', 'exchange_id');
    await bad('/v1/metrics/exchange/history?exchange_id=BINANCE', 'metric_id');
    await bad(`/v1/metrics/exchange/history?metric_id=${RANK}`, 'exchange_id');
  });

  it('symbol/listing and symbol/current: exchange_id or symbol_id; symbol/history: metric_id and symbol_id', async () => {
    for (const route of ['listing', 'current']) {
      const message = await bad(`/v1/metrics/symbol/${route}?metric_id=${FR}`, 'exchange_id');
      expect(message).toContain("'symbol_id'");
    }
    await bad(`/v1/metrics/symbol/history?symbol_id=${SYMBOL}`, 'metric_id');
    await bad(`/v1/metrics/symbol/history?metric_id=${FR}&exchange_id=BINANCE`, 'symbol_id');
  });

  it('time_format: unix_sec, unix_millisec, unix_microsec or unix_nanosec', async () => {
    for (const route of [
      `history?metric_id=${FR}&symbol_id=${SYMBOL}`,
      `group?metric_id=${FR}&symbol_id=${SYMBOL}&groupby=exchange_id`,
      `symbol/history?metric_id=${FR}&symbol_id=${SYMBOL}`,
      `exchange/history?metric_id=${RANK}&exchange_id=BINANCE`,
      'by-exchange/BINANCE',
      'exchange/current?exchange_id=BINANCE',
    ])
      for (const v of ['unix', 'UNIX_SEC', 'unix_ms', 'iso'])
        await bad(`/v1/metrics/${route}${route.includes('?') ? '&' : '?'}time_format=${v}`, 'time_format');
  });

  it('period_id: 1SEC by default, the exchange-rate ids and month ids (2MTH) accepted, others 400', async () => {
    const path = `/v1/metrics/history?metric_id=${FR}&symbol_id=${SYMBOL}`;
    const [item] = await json(path);
    expect(T(item.time_period_end as string) - T(item.time_period_start as string)).toBe(1_000_000);
    const [twoMonths] = await json(`${path}&period_id=2MTH`);
    expect([twoMonths.time_period_start, twoMonths.time_period_end]).toEqual([T('2024-01-01'), T('2024-03-01')].map(formatTime));
    expect((await json(`${path}&period_id=10DAY`)).length).toBe(1);
    for (const p of ['7SEC', '2WEEK', '0MTH', 'MTH', '1.5MTH']) await bad(`${path}&period_id=${p}`, 'period_id');
    await bad(`/v1/metrics/group?metric_id=${FR}&symbol_id=${SYMBOL}&groupby=exchange_id&period_id=9HRS`, 'period_id');
  });

  it('limit: 1..100000, default 100', async () => {
    const path = '/v1/metrics/exchange/history?metric_id=TICKS&exchange_id=BINANCE';
    expect(await json(path)).toHaveLength(100);
    expect(await json(`${path}&limit=1`)).toHaveLength(1);
    expect(await json(`${path}&limit=100000`)).toHaveLength(250);
    for (const route of [
      path,
      `/v1/metrics/history?metric_id=TICKS&exchange_id=BINANCE`,
      `/v1/metrics/group?metric_id=TICKS&exchange_id=BINANCE&groupby=metric_id`,
    ])
      for (const l of ['0', '100001', '-5', '2.5', 'many']) await bad(`${route}&limit=${l}`, 'limit');
  });
});
