/**
 * The metric points and definitions the metrics route tests serve (a replay database written as
 * a replay writes it), a server over them, and helpers to ask it: shared by metrics.test.ts and
 * metricsContract.test.ts.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { parseDec } from '../../src/core/decimal.js';
import { OWN_METRICS } from '../../src/core/engine/ownMetrics.js';
import type { MetricValue, SeriesKey } from '../../src/core/metrics/events.js';
import type { MetricsSource, StoredMetricPoint } from '../../src/core/metrics/source.js';
import { ReplayStore } from '../../src/io/store.js';
import { parseTime } from '../../src/core/time.js';
import type { RateProvider } from '../../src/answers/index.js';
import { expectError, SPEC, startServer, tempDir, type Res, type TestServer } from './helpers.js';

export const T = (s: string): number => parseTime(s)!;
export const dec = (text: string): MetricValue => ({ kind: 'decimal', dec: parseDec(text)! });

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

export const RANK = 'XRATE_EXCHANGE_RANK';
export const FR = 'FUNDING_RATE';
export const USD = 'XRATE_ASSET_USD_RATE';
export const D = '2024-01-01T00:00:';
export const BIN_PERP = { metric_id: FR, exchange_id: 'BINANCE', symbol_id: 'BINANCE_PERP_BTC_USDT', asset_id: 'BTC' };
export const LONG_SERIES = { metric_id: 'TICKS', exchange_id: 'COINBASE' };
/** Decimal texts of the long history: floats written as their text, or not (zeros, exponents, many digits). */
const LONG_TEXTS = ['0.0123', '0.0120', '-1.5', '1e-7', '42', '0.30000000000000001', '-0.000', '123456789.123456789', '7'];

export const POINTS: StoredMetricPoint[] = [
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
export const DEFINITIONS = [
  { metric_id: FR, description: 'old' },
  { metric_id: RANK, description: 'Rank of the exchange at the tick' },
  { metric_id: FR, description: 'Funding rate of a perpetual contract' },
];

/** The points and definitions above written into a replay database, as a replay writes them; its metrics as the service reads them. */
function metricsDatabase(store: ReplayStore): MetricsSource {
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
  return store.metrics(OWN_METRICS);
}

/** How the tests of a file ask the server over the metrics above (made before them, closed after them). */
export interface MetricsServer {
  /** The server (set once the tests start). */
  readonly srv: TestServer;
  /** A GET with a key that has every right. */
  get(path: string, headers?: Record<string, string>): Promise<Res>;
  /** The JSON body of a 200. */
  json<T = Record<string, unknown>[]>(path: string): Promise<T>;
  /** The message of a 400, checked to name `param` (quoted). */
  bad(path: string, param: string): Promise<string>;
}

/** The server over the metrics above, for the tests of one file (call at the file's top level). */
export function metricsServer(): MetricsServer {
  let tmp: ReturnType<typeof tempDir>;
  let srv: TestServer;
  let key: string;
  let store: ReplayStore;
  beforeAll(async () => {
    tmp = tempDir();
    store = ReplayStore.open(join(tmp.dir, 'replay.sqlite'));
    srv = await startServer({
      provider: {} as RateProvider, // the metrics routes never call it
      keysPath: join(tmp.dir, 'keys.sqlite'),
      metrics: metricsDatabase(store),
    });
    key = srv.key({ name: 'metrics' });
  });
  afterAll(async () => {
    await srv?.close();
    store?.close();
    tmp?.remove();
  });
  const get = (path: string, headers: Record<string, string> = {}): Promise<Res> => srv.get(path, { 'X-CoinAPI-Key': key, ...headers });
  return {
    get srv() {
      return srv;
    },
    get,
    async json<T>(path: string): Promise<T> {
      const res = await get(path);
      expect(res.status, res.text).toBe(200);
      return res.json() as T;
    },
    async bad(path: string, param: string): Promise<string> {
      const message = expectError(await get(path), 400);
      expect(message).toContain(`'${param}'`);
      return message;
    },
  };
}

/** The history item: the fields of the spec's example response, in its order. */
export const EXAMPLE_ITEM = (() => {
  const op = SPEC.paths['/v1/metrics/symbol/history'].get as {
    responses: { '200': { content: { 'application/json': { examples: Record<string, { value: Record<string, unknown>[] }> } } } };
  };
  return Object.values(op.responses['200'].content['application/json'].examples)[0].value[0];
})();
export function expectHistoryItems(items: Record<string, unknown>[], timeType = 'string'): void {
  for (const item of items) {
    expect(Object.keys(item)).toEqual(Object.keys(EXAMPLE_ITEM));
    for (const k of ['time_period_start', 'time_period_end', 'time_open', 'time_close']) expect(typeof item[k]).toBe(timeType);
    expect(Number.isInteger(item.count)).toBe(true);
    for (const k of ['first', 'last', 'min', 'max', 'sum']) expect(item[k] === null || typeof item[k] === 'number').toBe(true);
  }
}
