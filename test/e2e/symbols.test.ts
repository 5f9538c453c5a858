/**
 * `xrate symbols LOG|DB ROUTE [NAME=VALUE ...]`: the symbol records of a log, and of the database a
 * replay wrote from it, alike at the end of the log; from the log any time, from the database an
 * earlier time exits 1 saying to ask the log; a bad parameter exits 2. A record is the union of
 * its symbol events through the database and a partitioned replay (--workers 2), whose metric
 * series span the partitions as a serial replay's do.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayParallel } from '../../src/replay/parallel.js';
import { bin, cli, cliJson } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-symbols-'));
const LOG = join(dir, 'symbols.ndjson');
const DB = join(dir, 'symbols.sqlite');
const K = 'KRAKEN_SPOT_BTC_USD';
const at = (s: number) => new Date(Date.UTC(2024, 0, 1) + s * 1000).toISOString();
const lines = [
  {
    type: 'symbol',
    time: at(0.1),
    symbol_id: K,
    exchange_id: 'KRAKEN',
    symbol_type: 'SPOT',
    asset_id_base: 'BTC',
    asset_id_quote: 'USD',
    symbol_id_exchange: 'XXBTZUSD',
  },
  { type: 'trade', time: at(0.5), symbol_id: K, price: '42000', size: '0.1' },
  { type: 'quote', time: at(0.6), symbol_id: K, bid_price: '41999', bid_size: 1, ask_price: '42001', ask_size: 1 },
  { type: 'trade', time: at(0.7), symbol_id: 'BITSTAMP_SPOT_BTC_USD', price: '42010', size: '2' },
  // every 10 minutes for two hours: a trade and a quote on Kraken
  ...Array.from({ length: 12 }, (_, i) => [
    { type: 'trade', time: at(600 * (i + 1)), symbol_id: K, price: String(42000 + i), size: '0.2' },
    {
      type: 'quote',
      time: at(600 * (i + 1) + 0.5),
      symbol_id: K,
      bid_price: String(41999 + i),
      bid_size: 1,
      ask_price: String(42001 + i),
      ask_size: 1,
    },
  ]).flat(),
  {
    type: 'symbol',
    time: at(7300),
    symbol_id: 'BITSTAMP_SPOT_BTC_USD',
    exchange_id: 'BITSTAMP',
    symbol_type: 'SPOT',
    asset_id_base: 'BTC',
    asset_id_quote: 'USD',
    active: false,
  },
];
const ROUTES: [string, ...string[]][] = [
  [''],
  ['KRAKEN'],
  ['BITSTAMP/active'],
  ['map/KRAKEN'],
  ['', 'filter_asset_id=BTC', 'filter_symbol_id=KRAKEN_'],
];

beforeAll(async () => {
  writeFileSync(LOG, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const r = await cli('replay', LOG, '--db', DB, '--quiet');
  expect(r.code, r.err).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('xrate symbols', () => {
  it('answers the same from the log and from its database at the end of the log', async () => {
    for (const [route, ...params] of ROUTES) {
      const fromLog = await cliJson('symbols', LOG, route, ...params);
      expect(await cliJson('symbols', DB, route, ...params), `route "${route}"`).toEqual(fromLog);
    }
    const all = await cliJson<Record<string, unknown>[]>('symbols', DB, '');
    expect(all.map((s) => s.symbol_id)).toEqual(['BITSTAMP_SPOT_BTC_USD', K]);
    expect(all[1]).toMatchObject({ volume_1hrs: 1.2, volume_1day: 2.5, price: 42011, data_trade_end: '2024-01-01T02:00:00.0000000Z' });
    expect(await cliJson('symbols', DB, 'BITSTAMP/active')).toEqual([]);
    expect(await cliJson('symbols', DB, 'map/KRAKEN')).toEqual([
      { symbol_id: K, symbol_id_exchange: 'XXBTZUSD', asset_id_base: 'BTC', asset_id_quote: 'USD' },
    ]);
  });

  it('from the log, any time: the records as of the last tick at or before it', async () => {
    const early = await cliJson<Record<string, unknown>[]>('symbols', LOG, 'KRAKEN', `time=${at(1800.5)}`);
    expect(early[0]).toMatchObject({ volume_1hrs: 0.7, volume_1day: 0.7, price: 42002, data_end: '2024-01-01T00:30:00.0000000Z' });
    expect((await cliJson<unknown[]>('symbols', LOG, 'BITSTAMP/active', `time=${at(3600)}`)).length).toBe(1);
  });

  it('from the database, an earlier time exits 1 naming the last tick and saying to ask the log', async () => {
    const r = await cli('symbols', DB, 'KRAKEN', `time=${at(1800)}`);
    expect(r.code).toBe(1);
    expect(r.err).toContain('2024-01-01T02:01:40.0000000Z');
    expect(r.err).toContain('xrate symbols LOG');
    const later = await cliJson<Record<string, unknown>[]>('symbols', DB, 'KRAKEN', `time=${at(7200 + 3600)}`);
    expect(later[0]).toMatchObject({ volume_1hrs: 0, volume_1day: 2.5 });
    expect(await cliJson('symbols', LOG, 'KRAKEN', `time=${at(7200 + 3600)}`)).toEqual(later);
  });

  it('a bad parameter or route exits 2', async () => {
    expect((await cli('symbols', DB, '', 'time=nope')).code).toBe(2);
    expect((await cli('symbols', DB, 'a/b/c')).code).toBe(2);
    expect((await cli('symbols', DB, 'KRAKEN', 'oops')).code).toBe(2);
  });
});

describe('a record is the union of its symbol events', () => {
  const UNION = join(dir, 'union.ndjson');
  const CONFIG = join(dir, 'config.json');
  // Short windows (a warm-up of about 2 hours, 24 h for the last partition) in a log of 3 days.
  const config = { maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 };
  const H = 3600;
  const symbol = (s: number, fields: Record<string, unknown>) => ({
    type: 'symbol',
    time: at(s),
    symbol_id: K,
    exchange_id: 'KRAKEN',
    symbol_type: 'SPOT',
    asset_id_base: 'BTC',
    asset_id_quote: 'USD',
    ...fields,
  });
  const events = [
    symbol(0, { price_precision: 2, size_precision: 8, symbol_id_exchange: 'XXBTZUSD', asset_id_base_exchange: 'XBT' }),
    // Same time, then later: events without those fields keep them.
    symbol(0, { asset_id_quote_exchange: 'ZUSD' }),
    symbol(5 * H, { size_precision: 6 }),
    symbol(48 * H, {}),
    symbol(60 * H + 0.5, { symbol_id_exchange: 'XBTUSD' }),
    // Every 10 minutes for three days: a quote, and every hour a trade and a metric point.
    ...Array.from({ length: 72 * 6 }, (_, i) => [
      { type: 'quote', time: at(600 * i + 1), symbol_id: K, bid_price: '41999', bid_size: 1, ask_price: '42001', ask_size: 1 },
      ...(i % 6 === 0
        ? [
            { type: 'trade', time: at(600 * i + 2), symbol_id: K, price: '42000', size: '0.1' },
            { type: 'metric', time: at(600 * i + 3), metric_id: 'OPEN_INTEREST', exchange_id: 'KRAKEN', symbol_id: K, value_decimal: i },
          ]
        : []),
    ]).flat(),
  ].sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  const WANT = {
    symbol_id: K,
    symbol_id_exchange: 'XBTUSD',
    asset_id_base_exchange: 'XBT',
    asset_id_quote_exchange: 'ZUSD',
    asset_id_base: 'BTC',
    asset_id_quote: 'USD',
    price_precision: 0.01,
    size_precision: 0.000001,
  };

  beforeAll(() => {
    writeFileSync(UNION, `${events.map((l) => JSON.stringify(l)).join('\n')}\n`);
    writeFileSync(CONFIG, JSON.stringify(config));
  });

  it('from the log, its database, and partitioned replays (--workers 2, and cut between the events)', async () => {
    const serial = join(dir, 'union-serial.sqlite');
    const workers = join(dir, 'union-workers.sqlite');
    const cut = join(dir, 'union-cut.sqlite');
    const r = await cli('replay', UNION, '--db', serial, '--config', CONFIG, '--quiet');
    expect(r.code, r.err).toBe(0);
    // The built command: its partitions run in worker threads.
    const w = bin(['replay', UNION, '--db', workers, '--config', CONFIG, '--quiet', '--workers', '2'], { timeout: 120_000 });
    expect(w.status, w.stderr).toBe(0);
    // Cuts after the first events (carried into the later partitions) and between the later ones.
    let partitions = 0;
    await replayParallel({
      inputs: [UNION],
      db: cut,
      config,
      workers: 3,
      cuts: [Date.parse(at(30 * H)) * 1000, Date.parse(at(54 * H)) * 1000],
      onProgress: (p) => {
        partitions = Math.max(partitions, p.partitions);
      },
    });
    expect(partitions).toBe(3);
    expect(await cliJson('symbols', UNION, 'map/KRAKEN')).toEqual([WANT]);
    const record = await cliJson<Record<string, unknown>[]>('symbols', UNION, '');
    expect(record[0]).toMatchObject({ symbol_id_exchange: 'XBTUSD', asset_id_base_exchange: 'XBT', price_precision: 0.01 });
    // Before the later events: the earlier values, united.
    expect(await cliJson('symbols', UNION, 'map/KRAKEN', `time=${at(H)}`)).toEqual([
      { ...WANT, symbol_id_exchange: 'XXBTZUSD', size_precision: 1e-8 },
    ]);
    type Series = { metric_id: string };
    // xrate's own series (stored by default), the same whichever partitions wrote them.
    const own = (await cliJson<Series[]>('metrics', serial, 'by-exchange/KRAKEN')).filter((x) => x.metric_id.startsWith('XRATE_'));
    expect(own.length).toBeGreaterThan(0);
    for (const db of [serial, workers, cut]) {
      expect(await cliJson('symbols', db, 'map/KRAKEN'), db).toEqual([WANT]);
      expect(await cliJson('symbols', db, ''), db).toEqual(record);
      const series = await cliJson<Series[]>('metrics', db, 'by-exchange/KRAKEN');
      expect(
        series.filter((x) => x.metric_id.startsWith('XRATE_')),
        db,
      ).toEqual(own);
      // The log's metric series: first and last point over the whole log, whichever partitions wrote them.
      expect(
        series.filter((x) => !x.metric_id.startsWith('XRATE_')),
        db,
      ).toEqual([
        {
          asset_id: '',
          exchange_id: 'KRAKEN',
          metric_id: 'OPEN_INTEREST',
          symbol_id: K,
          chain_id: '',
          network_id: '',
          min_time: '2024-01-01T00:00:03.0000000Z',
          max_time: '2024-01-03T23:00:03.0000000Z',
        },
      ]);
      const listing = await cliJson<Series[]>('metrics', db, 'listing');
      expect(
        listing.filter((x) => !x.metric_id.startsWith('XRATE_')),
        db,
      ).toEqual([{ metric_id: 'OPEN_INTEREST', description: '' }]);
    }
  }, 120_000);
});
