/**
 * `xrate metrics LOG|DB ROUTE [NAME=VALUE ...]`: metric events of a log, replayed into a database,
 * answered from either exactly alike; bad events are rejects with their reason; a bad parameter
 * exits 2 naming it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_METRICS } from '../../src/core/engine/ownMetrics.js';
import { cli, cliJson, DEMO } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-metrics-'));
const LOG = join(dir, 'metrics.ndjson');
const DB = join(dir, 'metrics.sqlite');
const DB_NONE = join(dir, 'metrics-none.sqlite');
const P = 'BINANCE_PERP_BTC_USDT';
const lines = [
  { type: 'exchange', time: '2024-01-01T00:00:00Z', exchange_id: 'BINANCE', legitimate: true, rank: 1 },
  { type: 'metric_definition', time: '2024-01-01T00:00:00Z', metric_id: 'FUNDING_RATE', description: 'Funding rate' },
  {
    type: 'metric',
    time: '2024-01-01T00:00:00.5Z',
    metric_id: 'FUNDING_RATE',
    exchange_id: 'BINANCE',
    symbol_id: P,
    value_decimal: '0.0001',
  },
  {
    type: 'quote',
    time: '2024-01-01T00:00:01Z',
    symbol_id: 'BINANCE_SPOT_BTC_USDT',
    bid_price: 42000,
    bid_size: 1,
    ask_price: 42001,
    ask_size: 1,
  },
  {
    type: 'metric',
    time: '2024-01-01T00:00:02Z',
    metric_id: 'FUNDING_RATE',
    exchange_id: 'BINANCE',
    symbol_id: P,
    value_decimal: '0.0003',
  },
  { type: 'metric', time: '2024-01-01T00:00:03Z', metric_id: 'FUNDING_RATE', exchange_id: 'BINANCE', symbol_id: P },
  { type: 'metric', time: '2024-01-01T00:00:03Z', metric_id: 'X', exchange_id: 'BINANCE', value_text: 'a', value_decimal: 1 },
  { type: 'metric', time: '2024-01-01T00:00:04Z', metric_id: 'STATUS', exchange_id: 'BINANCE', value_text: 'open' },
  { type: 'metric', time: '2024-01-01T00:00:04Z', metric_id: 'TVL', exchange_id: 'UNISWAP', asset_id: 'ETH', value_decimal: '0.1' },
  { type: 'metric', time: '2024-01-01T00:00:05Z', metric_id: 'TVL', exchange_id: 'UNISWAP', asset_id: 'ETH', value_decimal: '0.2' },
];

beforeAll(async () => {
  writeFileSync(LOG, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const r = await cli('replay', LOG, '--db', DB, '--quiet');
  expect(r.code, r.err).toBe(0);
  const n = await cli('replay', LOG, '--db', DB_NONE, '--quiet', '--no-own-metrics');
  expect(n.code, n.err).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('xrate metrics', () => {
  it('counts metric events as accepted: every line read is accepted or rejected', async () => {
    const s = await cliJson<{ eventsRead: number; eventsAccepted: number; eventsRejected: number }>(
      'replay',
      LOG,
      '--db',
      join(dir, 'count.sqlite'),
      '--json',
      '--quiet',
    );
    expect(s.eventsRead).toBe(lines.length);
    expect(s.eventsRejected).toBe(2); // the point with no value, the one with two
    expect(s.eventsAccepted + s.eventsRejected).toBe(s.eventsRead);
  });

  const routes: string[][] = [
    ['listing'],
    ['symbol/current', 'exchange_id=BINANCE'],
    ['symbol/current', `symbol_id=${P}`, 'time=2024-01-01T00:00:01.9Z'],
    [`symbol/${P}/current`, 'time_format=unix_millisec'],
    ['exchange/current', 'exchange_id=BINANCE'],
    ['asset/listing'],
    ['by-exchange/UNISWAP'],
    ['symbol/history', 'metric_id=FUNDING_RATE', `symbol_id=${P}`, 'period_id=1MIN'],
    ['asset/history', 'metric_id=TVL', 'exchange_id=UNISWAP', 'asset_id=ETH', 'period_id=1DAY'],
    ['group', 'metric_id=TVL', 'asset_id=ETH', 'groupby=exchange_id', 'period_id=1HRS'],
    ['history', 'metric_id=FUNDING_RATE', 'exchange_id=BINANCE', 'time_format=unix_nanosec'],
  ];

  it('answers every route alike from the log and from its database, with and without own metrics', async () => {
    for (const r of routes) {
      const fromDb = await cliJson('metrics', DB, ...r);
      expect(await cliJson('metrics', LOG, ...r), r.join(' ')).toEqual(fromDb);
      const none = await cliJson('metrics', DB_NONE, ...r);
      expect(await cliJson('metrics', LOG, ...r, '--no-own-metrics'), r.join(' ')).toEqual(none);
    }
  });

  it('answers what the methodology says', async () => {
    // The log's metrics by metric_id; xrate's own are not listed: the replay stored none of them.
    const listing = await cliJson<{ metric_id: string; description: string }[]>('metrics', DB_NONE, 'listing');
    expect(listing).toEqual([
      { metric_id: 'FUNDING_RATE', description: 'Funding rate' },
      { metric_id: 'STATUS', description: '' },
      { metric_id: 'TVL', description: '' },
    ]);
    // As of tick 00:00:01 only the first funding rate is known.
    const early = await cliJson<{ value_decimal: number }[]>(
      'metrics',
      DB,
      'symbol/current',
      `symbol_id=${P}`,
      'time=2024-01-01T00:00:01.9Z',
    );
    expect(early.map((x) => x.value_decimal)).toEqual([0.0001]);
    const [bucket] = await cliJson<{ sum: number; count: number }[]>(
      'metrics',
      DB,
      'asset/history',
      'metric_id=TVL',
      'exchange_id=UNISWAP',
      'asset_id=ETH',
      'period_id=1DAY',
    );
    expect(bucket).toMatchObject({ count: 2, sum: 0.3 }); // exact: 0.1 + 0.2
  });

  it('keeps bad metric events as rejects with their reason', () => {
    const db = new Database(DB, { readonly: true });
    const rejects = db.prepare('SELECT line, reason, message FROM rejects ORDER BY line').all();
    db.close();
    expect(rejects).toEqual([
      { line: 6, reason: 'missing_field', message: expect.stringContaining('"value_decimal", "value_text" or "value_time"') },
      { line: 7, reason: 'bad_field', message: expect.stringContaining('exactly one of') },
    ]);
  });

  it('exits 2 naming a bad parameter, and names an unknown route', async () => {
    const bad = await cli('metrics', DB, 'group', 'metric_id=TVL', 'asset_id=ETH', 'groupby=nope');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("'groupby'");
    const missing = await cli('metrics', DB, 'exchange/history', 'metric_id=STATUS');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('exchange_id');
    const oneOf = await cli('metrics', DB, 'history', 'metric_id=STATUS');
    expect(oneOf.code).toBe(2);
    expect(oneOf.err).toContain("one of 'symbol_id', 'asset_id' or 'exchange_id'");
    const route = await cli('metrics', DB, 'nowhere');
    expect(route.code).toBe(2);
    expect(route.err).toContain('unknown metrics route');
  });

  it("xrate's own metrics: a replay stores them unless --no-own-metrics, and the log answers alike", async () => {
    const own = join(dir, 'own.sqlite');
    const r = await cli('replay', DEMO, '--db', own, '--quiet');
    expect(r.code, r.err).toBe(0);
    for (const route of [
      ['exchange/current', 'exchange_id=KRAKEN'],
      ['symbol/current', 'metric_id=XRATE_MARKET_SPREAD', 'exchange_id=KRAKEN'],
      ['by-exchange/KRAKEN'],
    ]) {
      const fromDb = await cliJson<{ metric_id: string }[]>('metrics', own, ...route);
      expect(fromDb.length, route.join(' ')).toBeGreaterThan(0);
      expect(fromDb.every((x) => x.metric_id.startsWith('XRATE_'))).toBe(true);
      expect(await cliJson('metrics', DEMO, ...route), route.join(' ')).toEqual(fromDb);
    }
    // Listed once stored, with their descriptions.
    const listing = await cliJson<{ metric_id: string; description: string }[]>('metrics', own, 'listing');
    expect(listing).toEqual([...OWN_METRICS]);
    expect(await cliJson('metrics', DEMO, 'listing')).toEqual(listing);
    // With --no-own-metrics the log has none of them, as a database replayed with it: none listed.
    const none = join(dir, 'none.sqlite');
    const n = await cli('replay', DEMO, '--db', none, '--quiet', '--no-own-metrics');
    expect(n.code, n.err).toBe(0);
    expect(await cliJson('metrics', none, 'listing')).toEqual([]);
    expect(await cliJson('metrics', DEMO, 'exchange/current', 'exchange_id=KRAKEN', '--no-own-metrics')).toEqual([]);
    expect(await cliJson('metrics', DEMO, 'listing', '--no-own-metrics')).toEqual([]);
    // --own-metrics, the flag of earlier versions, is refused saying what holds now.
    for (const cmd of [
      ['replay', DEMO, '--db', join(dir, 'old.sqlite'), '--quiet', '--own-metrics'],
      ['metrics', DEMO, 'listing', '--own-metrics'],
    ]) {
      const old = await cli(...cmd);
      expect(old.code, cmd[0]).toBe(2);
      expect(old.err).toContain('--own-metrics is no longer needed');
      expect(old.err).toContain('--no-own-metrics leaves them out');
    }
  }, 180_000);
});
