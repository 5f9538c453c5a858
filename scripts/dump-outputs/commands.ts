/**
 * The output dump's replays (every log and replay option) and the query commands on what they
 * wrote (scripts/dump-outputs.ts).
 *
 * @module
 */

import { BINANCE, DEMO, type Dump, EMS_LOG } from './dump.js';

export async function replays(d: Dump): Promise<void> {
  const r = (label: string, argv: string[], files: string[] = []) => d.cli(label, ['replay', ...argv], files);
  // The demo log, with each replay option.
  await r('demo', [DEMO, '--db', 'dbs/demo.sqlite']);
  d.db('demo', 'dbs/demo.sqlite');
  await r('demo-no-own-metrics', [DEMO, '--db', 'dbs/demo-none.sqlite', '--no-own-metrics']);
  d.db('demo-no-own-metrics', 'dbs/demo-none.sqlite');
  await r('demo-out-ndjson', [DEMO, '--out', 'files/demo.ndjson', '--from', '2024-03-01T05:00:00Z'], ['files/demo.ndjson']);
  await r(
    'demo-out-csv',
    [DEMO, '--out', 'files/rates.csv', '--config', 'logs/strict.json', '--reorder-window', '2', '--quiet'],
    ['files/rates.csv'],
  );
  await r('demo-from-to', [DEMO, '--db', 'dbs/from-to.sqlite', '--from', '2024-03-01T04:00:00Z', '--to', '2024-03-01T05:00:00.5Z']);
  d.db('demo-from-to', 'dbs/from-to.sqlite');
  await r('demo-track', [DEMO, '--db', 'dbs/track.sqlite', '--track', 'SOL/BTC,BTC/USD,ETH/EUR', '--periods', '1MIN,5MIN,1HRS']);
  d.db('demo-track', 'dbs/track.sqlite');
  await r('demo-own-metrics', ['logs/oi.ndjson', DEMO, '--db', 'dbs/metrics.sqlite', '--json']);
  d.db('demo-own-metrics', 'dbs/metrics.sqlite');
  await r('demo-snapshot', [DEMO, '--db', 'dbs/snap.sqlite', '--snapshot-every', '1h']);
  await r('demo-resume-complete', [DEMO, '--db', 'dbs/snap.sqlite', '--snapshot-every', '1h', '--resume']);
  d.db('demo-snapshot', 'dbs/snap.sqlite');
  await r('demo-workers', [DEMO, '--db', 'dbs/workers.sqlite', '--workers', '2']);
  d.db('demo-workers', 'dbs/workers.sqlite');
  await r('demo-config-reorder', [DEMO, '--db', 'dbs/strict.sqlite', '--config', 'logs/strict.json', '--reorder-window', '2']);
  d.db('demo-config-reorder', 'dbs/strict.sqlite');
  await d.cli('demo-command', ['demo', '--db', 'dbs/demo-cmd.sqlite']);
  d.db('demo-command', 'dbs/demo-cmd.sqlite');
  // Real data.
  await r('binance', [BINANCE, '--db', 'dbs/binance.sqlite', '--json']);
  d.db('binance', 'dbs/binance.sqlite');
  await r('tardis-merge', ['logs/tardis-symbols.ndjson', 'fixtures/tardis', '--merge', '--db', 'dbs/tardis.sqlite']);
  d.db('tardis-merge', 'dbs/tardis.sqlite');
  await r('tardis-merge-exchange-time', [
    'logs/tardis-symbols.ndjson',
    'fixtures/tardis',
    '--merge',
    '--time',
    'exchange',
    '--db',
    'dbs/tardis-x.sqlite',
  ]);
  d.db('tardis-merge-exchange-time', 'dbs/tardis-x.sqlite');
  await r('coinapi-merge', ['logs/coinapi-meta.ndjson', 'logs/coinapi', '--merge', '--db', 'dbs/coinapi.sqlite']);
  d.db('coinapi-merge', 'dbs/coinapi.sqlite');
  await r('coinapi-merge-exchange-time', [
    'logs/coinapi-meta.ndjson',
    'logs/coinapi',
    '--merge',
    '--time',
    'exchange',
    '--db',
    'dbs/coinapi-x.sqlite',
  ]);
  d.db('coinapi-merge-exchange-time', 'dbs/coinapi-x.sqlite');
  // Generated logs.
  await r('gen-gz', ['logs/gen.ndjson.gz', '--db', 'dbs/gen.sqlite']);
  d.db('gen-gz', 'dbs/gen.sqlite');
  await r(
    'gen-gz-workers-out',
    ['logs/gen.ndjson.gz', '--workers', '2', '--out', 'files/gen-workers.csv', '--quiet'],
    ['files/gen-workers.csv'],
  );
  await r('gen-merge-metrics', ['logs/oi.ndjson', 'logs/gen.ndjson.gz', '--merge', '--db', 'dbs/gen-merge.sqlite']);
  d.db('gen-merge-metrics', 'dbs/gen-merge.sqlite');
  await r('gen-bad-ndjson', ['logs/gen-bad.ndjson', '--db', 'dbs/gen-bad.sqlite']);
  d.db('gen-bad-ndjson', 'dbs/gen-bad.sqlite');
  await r('gen-bad-csv', ['logs/gen-bad.csv', '--db', 'dbs/gen-bad-csv.sqlite']);
  d.db('gen-bad-csv', 'dbs/gen-bad-csv.sqlite');
  await r('gen-bad-sqlite', ['logs/gen-bad.sqlite', '--db', 'dbs/gen-bad-sqlite.sqlite']);
  d.db('gen-bad-sqlite', 'dbs/gen-bad-sqlite.sqlite');
  await r('gen-bad-reorder', ['logs/gen-bad.ndjson', '--reorder-window', '5', '--db', 'dbs/gen-bad-reorder.sqlite']);
  d.db('gen-bad-reorder', 'dbs/gen-bad-reorder.sqlite');
  await r('gen-bad-workers', ['logs/gen-bad.ndjson', '--workers', '2', '--db', 'dbs/gen-bad-workers.sqlite']);
  d.db('gen-bad-workers', 'dbs/gen-bad-workers.sqlite');
  // The EMS gateway's positions.
  await r('ems', [EMS_LOG, '--db', 'dbs/ems.sqlite']);
  d.db('ems', 'dbs/ems.sqlite');
}

export async function queries(d: Dump): Promise<void> {
  const at = '2024-03-01T04:30:20Z';
  const q = (label: string, ...argv: string[]) => d.cli(label, argv);
  for (const [name, src] of [
    ['log', DEMO],
    ['db', 'dbs/demo.sqlite'],
    ['workers', 'dbs/workers.sqlite'],
    ['snap', 'dbs/snap.sqlite'],
  ]) {
    await q(`rate-${name}`, 'rate', src, '--at', at, '--pair', 'BTC/USD', '--pair', 'SOL/BTC', '--pair', 'USD/ETH', '--pair', 'FOO/USD');
    await q(`explain-${name}`, 'explain', src, '--pair', 'SOL/BTC');
  }
  await q('rate-db-after-end', 'rate', 'dbs/demo.sqlite', '--at', '2024-03-02T12:00:00Z', '--pair', 'BTC/USD', '--pair', 'ETH/EUR');
  await q('rate-db-before-start', 'rate', 'dbs/demo.sqlite', '--at', '2024-03-01T01:00:00Z', '--pair', 'BTC/USD');
  await q('rate-from-to', 'rate', 'dbs/from-to.sqlite', '--at', at, '--pair', 'BTC/USD');
  await q(
    'history-log-cross',
    'history',
    DEMO,
    '--pair',
    'SOL/BTC',
    '--period',
    '1HRS',
    '--from',
    '2024-03-01T04:00:00Z',
    '--to',
    '2024-03-01T06:00:00Z',
  );
  await q(
    'history-db-5min',
    'history',
    'dbs/demo.sqlite',
    '--pair',
    'BTC/USD',
    '--period',
    '5MIN',
    '--from',
    '2024-03-01T03:00:00Z',
    '--to',
    '2024-03-01T06:00:00Z',
  );
  await q(
    'history-db-1sec',
    'history',
    'dbs/demo.sqlite',
    '--pair',
    'ETH/BTC',
    '--period',
    '1SEC',
    '--from',
    '2024-03-01T05:00:00Z',
    '--to',
    '2024-03-01T05:10:00Z',
    '--limit',
    '200',
  );
  await q(
    'history-db-inverse',
    'history',
    'dbs/demo.sqlite',
    '--pair',
    'USD/BTC',
    '--period',
    '1HRS',
    '--from',
    '2024-03-01T00:00:00Z',
    '--to',
    '2024-03-02T00:00:00Z',
  );
  await q(
    'history-db-untracked',
    'history',
    'dbs/demo.sqlite',
    '--pair',
    'SOL/BTC',
    '--period',
    '1HRS',
    '--from',
    '2024-03-01T04:00:00Z',
    '--to',
    '2024-03-01T06:00:00Z',
  );
  await q(
    'history-track',
    'history',
    'dbs/track.sqlite',
    '--pair',
    'SOL/BTC',
    '--period',
    '5MIN',
    '--from',
    '2024-03-01T04:00:00Z',
    '--to',
    '2024-03-01T05:00:00Z',
  );
  await q(
    'history-track-rollup',
    'history',
    'dbs/track.sqlite',
    '--pair',
    'ETH/EUR',
    '--period',
    '15MIN',
    '--from',
    '2024-03-01T02:00:00Z',
    '--to',
    '2024-03-01T06:00:00Z',
  );
  await q('explain-log-at', 'explain', DEMO, '--pair', 'ETH/BTC', '--at', at);
  await q('explain-db-none', 'explain', 'dbs/demo.sqlite', '--pair', 'BTC/XYZ');
  await q('explain-db-earlier', 'explain', 'dbs/demo.sqlite', '--pair', 'BTC/USD', '--at', at);
  await q('periods', 'periods');
  await q('periods-months', 'periods', '--months');
  const m = 'dbs/metrics.sqlite';
  await q('metrics-listing', 'metrics', m, 'listing');
  await q(
    'metrics-symbol-history',
    'metrics',
    m,
    'symbol/history',
    'metric_id=OPEN_INTEREST',
    'exchange_id=BINANCE',
    'symbol_id=BINANCE_PERP_BTC_USDT',
    'period_id=1HRS',
    'time_start=2024-03-01T00:00:00Z',
    'time_format=unix_sec',
  );
  await q('metrics-asset-current', 'metrics', m, 'asset/current', 'exchange_id=XRATE', 'asset_id=BTC');
  await q('metrics-exchange-current', 'metrics', m, 'exchange/current', 'exchange_id=KRAKEN');
  await q('metrics-by-exchange', 'metrics', m, 'by-exchange/KRAKEN');
  await q(
    'metrics-history',
    'metrics',
    m,
    'history',
    'metric_id=XRATE_ASSET_USD_RATE',
    'asset_id=ETH',
    'period_id=1HRS',
    'time_start=2024-03-01T00:00:00Z',
  );
  await q(
    'metrics-group-log',
    'metrics',
    'logs/oi.ndjson',
    'group',
    'metric_id=OPEN_INTEREST',
    'exchange_id=BINANCE',
    'groupby=symbol_id',
    'period_id=1HRS',
    'time_format=unix_sec',
  );
  await q(
    'metrics-group-db',
    'metrics',
    m,
    'group',
    'metric_id=XRATE_MARKET_WEIGHT_SHARE',
    'exchange_id=KRAKEN',
    'groupby=symbol_id',
    'period_id=1HRS',
    'time_start=2024-03-01T00:00:00Z',
  );
  await q('metrics-missing-param', 'metrics', m, 'history', 'metric_id=OPEN_INTEREST');
  await q('symbols-db-active', 'symbols', m, 'KRAKEN/active', 'filter_asset_id=BTC');
  await q('symbols-db-map', 'symbols', 'dbs/demo.sqlite', 'map/BINANCE');
  await q('symbols-log-time', 'symbols', DEMO, '', 'filter_symbol_id=KRAKEN_SPOT_BTC', 'time=2024-03-01T04:00:00Z');
  await q('symbols-db-earlier', 'symbols', 'dbs/demo.sqlite', 'KRAKEN', 'time=2024-03-01T04:00:00Z');
  await q('symbols-tardis', 'symbols', 'dbs/tardis.sqlite', 'BINANCE-FUTURES');
  await q('symbols-workers', 'symbols', 'dbs/workers.sqlite', '');
  await q('rate-binance', 'rate', 'dbs/binance.sqlite', '--at', '2021-01-08T00:00:30Z', '--pair', 'BTC/USDT', '--pair', 'USDT/BTC');
  await q(
    'history-binance',
    'history',
    'dbs/binance.sqlite',
    '--pair',
    'BTC/USDT',
    '--period',
    '10SEC',
    '--from',
    '2021-01-08T00:00:00Z',
    '--to',
    '2021-01-08T00:01:00Z',
  );
  await q('rate-coinapi', 'rate', 'dbs/coinapi.sqlite', '--at', '2021-01-08T00:00:40Z', '--pair', 'BTC/USDT');
  await q('rate-coinapi-x', 'rate', 'dbs/coinapi-x.sqlite', '--at', '2021-01-08T00:00:40Z', '--pair', 'BTC/USDT');
  await q(
    'rate-gen',
    'rate',
    'dbs/gen.sqlite',
    '--at',
    '2024-03-01T04:30:00Z',
    '--pair',
    'BTC/USD',
    '--pair',
    'ETH/EUR',
    '--pair',
    'SOL/USDT',
  );
  await q(
    'history-gen',
    'history',
    'dbs/gen.sqlite',
    '--pair',
    'BTC/USD',
    '--period',
    '1MIN',
    '--from',
    '2024-03-01T04:00:00Z',
    '--to',
    '2024-03-01T04:30:00Z',
  );
  await q('explain-gen', 'explain', 'dbs/gen.sqlite', '--pair', 'ETH/USD');
  await q('rate-gen-bad-log', 'rate', 'logs/gen-bad.csv', '--at', '2024-03-01T04:15:00Z', '--pair', 'BTC/USD', '--pair', 'ETH/BTC');
  await q('rate-gen-bad-reorder', 'rate', 'dbs/gen-bad-reorder.sqlite', '--at', '2024-03-01T04:15:00Z', '--pair', 'BTC/USD');
  await q('rate-ems', 'rate', 'dbs/ems.sqlite', '--at', '2024-03-01T00:00:06Z', '--pair', 'BTC/USDT');
  const plot = (label: string, src: string, pair: string, from: string, to: string, extra: string[] = []) =>
    d.cli(
      label,
      ['plot', src, '--pair', pair, '--from', from, '--to', to, '--out', `files/${label}.svg`, ...extra],
      [`files/${label}.svg`],
    );
  await plot('plot-log', DEMO, 'ETH/BTC', '2024-03-01T04:30:00Z', '2024-03-01T04:40:00Z', ['--period', '5MIN']);
  await plot('plot-db', 'dbs/demo.sqlite', 'BTC/USD', '2024-03-01T05:00:00Z', '2024-03-01T05:05:00Z', [
    '--width',
    '640',
    '--height',
    '360',
  ]);
  await plot('plot-db-cross', 'dbs/track.sqlite', 'SOL/BTC', '2024-03-01T05:00:00Z', '2024-03-01T05:20:00Z', ['--period', '5MIN']);
}
