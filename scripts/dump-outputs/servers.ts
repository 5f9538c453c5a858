/**
 * The output dump's servers: `xrate serve` over a database and over a live engine, and `xrate ems
 * serve` self-hosted and managed, each asked a fixed list of requests (scripts/dump-outputs.ts).
 *
 * @module
 */

import { BINANCE, type Dump, ENV, type Req } from './dump.js';
import { runBin } from './processes.js';

const READY_SERVE = /listening on (http:\/\/\S+)[^\n]*\n(?:keys: [^\n]*\n|[\s\S]*shown only now:\n[0-9A-F-]{36}\n)/;
const READY_EMS = /listening on (https?:\/\/\S+)[^\n]*\n/;
const KEY_RE = /shown only now:\n([0-9A-F-]{36})\n/;

export async function serveDatabase(d: Dump): Promise<void> {
  const s = await d.start(['serve', '--db', 'dbs/metrics.sqlite', '--keys', 'keys/serve.sqlite', '--log-level', 'silent'], READY_SERVE);
  try {
    const key = KEY_RE.exec(s.stdout())?.[1] ?? '';
    const restricted = await runBin(
      d.bin,
      d.work,
      ['keys', 'create', '--keys', 'keys/serve.sqlite', '--name', 'ro', '--rights', 'rate'],
      ENV,
    );
    const roKey = restricted.stdout.trim().split('\n').at(-1) ?? '';
    const k = { 'X-CoinAPI-Key': key };
    const ex = '/v1/exchangerate';
    const t0 = 'time_start=2024-03-01T00:00:00Z';
    const hist = `${ex}/BTC/USD/history?period_id=5MIN&time_start=2024-03-01T04:00:00Z&time_end=2024-03-01T05:00:00Z`;
    const mhist = `/v1/metrics/symbol/history?metric_id=OPEN_INTEREST&exchange_id=BINANCE&symbol_id=BINANCE_PERP_BTC_USDT&period_id=1HRS&${t0}`;
    const group = `/v1/metrics/group?metric_id=XRATE_MARKET_WEIGHT_SHARE&exchange_id=KRAKEN&groupby=symbol_id&period_id=1HRS&${t0}`;
    const formatted: [string, string][] = [
      ['rate', `${ex}/BTC/USD`],
      ['rates', `${ex}/BTC?filter_asset_id=USD;EUR;ETH&invert=true`],
      ['periods', `${ex}/history/periods`],
      ['history', hist],
      ['explain', `${ex}/SOL/BTC/explain`],
      ['metrics-listing', '/v1/metrics/listing'],
      ['metrics-history', mhist],
      ['metrics-group', group],
      ['metrics-by-exchange', '/v1/metrics/by-exchange/BINANCE'],
      ['symbols', '/v1/symbols/KRAKEN/active?filter_asset_id=BTC'],
      ['symbols-map', '/v1/symbols/map/KRAKEN'],
    ];
    const sep = (p: string) => (p.includes('?') ? '&' : '?');
    const list: Req[] = [
      ['healthz', '/healthz', {}],
      ['readyz', '/readyz', {}],
      ['openapi', '/openapi.json', {}],
      ['page', '/', {}],
      ['page-script', '/ui/chart.js', {}],
      ...formatted.flatMap(([label, p]): Req[] => [
        [label, p, k],
        [`${label}-csv`, `${p}${sep(p)}output_format=csv`, k],
        [`${label}-xml`, `${p}${sep(p)}output_format=xml`, k],
        [`${label}-msgpack`, p, { ...k, Accept: 'application/x-msgpack' }],
      ]),
      ['rate-time', `${ex}/BTC/USD?time=2024-03-01T05:30:20.5+01:00`, k],
      ['rate-after-end', `${ex}/BTC/USD?time=2024-03-02T12:00:00Z`, k],
      ['rate-cross-case', `${ex}/sol/btc`, k],
      ['rate-gzip', `${ex}/BTC/USD`, { ...k, 'Accept-Encoding': 'gzip' }],
      ['rates-all', `${ex}/ETH`, k],
      [
        'history-1sec-chunked',
        `${ex}/ETH/BTC/history?period_id=1SEC&time_start=2024-03-01T05:00:00Z&time_end=2100-01-01T00:00:00Z&limit=300`,
        k,
      ],
      ['history-inverse', `${ex}/USD/BTC/history?period_id=1HRS&${t0}&time_end=2024-03-02T00:00:00Z`, k],
      [
        'history-csv-options',
        `${hist}&output_format=csv&csv_include_header=false&csv_set_delimiter=,&csv_set_dec_mark=,&csv_set_timeformat=yyyy-MM-ddTHH:mm:ss`,
        k,
      ],
      ['explain-direct', `${ex}/ETH/BTC/explain`, k],
      ['explain-csv', `${ex}/ETH/BTC/explain?output_format=csv`, k],
      ['chart', `${ex}/ETH/BTC/chart?time_start=2024-03-01T04:30:00Z&time_end=2024-03-01T04:33:00Z&period_id=1MIN`, k],
      ['metrics-exchange-listing', '/v1/metrics/exchange/listing?exchange_id=KRAKEN', k],
      ['metrics-symbol-listing', '/v1/metrics/symbol/listing?exchange_id=BINANCE', k],
      ['metrics-asset-listing', '/v1/metrics/asset/listing', k],
      ['metrics-exchange-current', '/v1/metrics/exchange/KRAKEN/current', k],
      ['metrics-symbol-current', '/v1/metrics/symbol/current?symbol_id=BINANCE_PERP_BTC_USDT&time_format=unix_millisec', k],
      ['metrics-asset-current', '/v1/metrics/asset/BTC/current?exchange_id=XRATE', k],
      ['metrics-history-any', `/v1/metrics/history?metric_id=XRATE_ASSET_USD_RATE&asset_id=ETH&period_id=1HRS&${t0}`, k],
      ['metrics-exchange-history', `/v1/metrics/exchange/history?metric_id=XRATE_EXCHANGE_RANK&exchange_id=KRAKEN&period_id=1DAY&${t0}`, k],
      [
        'metrics-asset-history-month',
        `/v1/metrics/asset/history?metric_id=XRATE_ASSET_USD_RATE&exchange_id=XRATE&asset_id=BTC&period_id=1MTH&${t0}`,
        k,
      ],
      ['symbols-all', '/v1/symbols?filter_symbol_id=BINANCE_', k],
      ['symbols-exchange', '/v1/symbols/KRAKEN', k],
      ['auth-query', `${ex}/BTC/EUR?apikey=${key}`, {}],
      ['auth-path', `/APIKEY-${key}${ex}/BTC/EUR`, {}],
      ['auth-authorization', `${ex}/BTC/EUR`, { Authorization: key }],
      ['auth-service-key', `${ex}/BTC/EUR`, { 'X-Service-Key': key }],
      ['400-time', `${ex}/BTC/USD?time=yesterday`, k],
      ['400-missing-time-end', `${ex}/BTC/USD/history?period_id=1HRS&${t0}`, k],
      ['400-limit', `${hist}&limit=0`, k],
      ['400-period', `${ex}/BTC/USD/history?period_id=7SEC&${t0}&time_end=2024-03-02T00:00:00Z`, k],
      ['400-twice', `${ex}/BTC/USD?time=2024-03-01T04:00:00Z&time=2024-03-01T05:00:00Z`, k],
      ['400-metrics-one-of', '/v1/metrics/history?metric_id=OPEN_INTEREST', k],
      ['400-chart-too-long', `${ex}/ETH/BTC/chart?time_start=2024-03-01T02:30:00Z&time_end=2024-03-01T05:00:00Z`, k],
      ['400-format', `${ex}/BTC/USD?output_format=yaml`, k],
      ['401-missing', `${ex}/BTC/USD`, {}],
      ['401-invalid', `${ex}/BTC/USD`, { 'X-CoinAPI-Key': '00000000-0000-0000-0000-000000000000' }],
      ['401-conflict', `${ex}/BTC/USD?apikey=00000000-0000-0000-0000-000000000000`, k],
      ['403-right', hist, { 'X-CoinAPI-Key': roKey }],
      ['404-route', '/v1/foo', k],
      ['404-apikey-segment', '/APIKEY-secret/v1/foo', {}],
      ['550-unknown-asset', `${ex}/BTC/XYZ`, k],
      ['550-before-start', `${ex}/BTC/USD?time=2024-03-01T01:00:00Z`, k],
      ['550-explain-earlier', `${ex}/BTC/USD/explain?time=2024-03-01T04:00:00Z`, k],
      ['550-history-untracked', `${ex}/SOL/BTC/history?period_id=1HRS&${t0}&time_end=2024-03-02T00:00:00Z`, k],
      ['550-metrics-no-series', `/v1/metrics/symbol/history?metric_id=NOPE&symbol_id=X&${t0}`, k],
      ['550-symbols-earlier', '/v1/symbols/KRAKEN?time=2024-03-01T04:00:00Z', k],
      ['prometheus', '/metrics', {}],
    ];
    await d.requests('serve-db', s, list);
  } finally {
    await d.stopped('serve-db', s);
  }
}

export async function serveLive(d: Dump): Promise<void> {
  const s = await d.start(
    ['serve', '--replay', BINANCE, '--db', 'dbs/live.sqlite', '--keys', 'keys/live.sqlite', '--log-level', 'silent'],
    READY_SERVE,
  );
  try {
    const k = { 'X-CoinAPI-Key': KEY_RE.exec(s.stdout())?.[1] ?? '' };
    const ex = '/v1/exchangerate';
    await d.requests('serve-live', s, [
      ['readyz', '/readyz', {}],
      ['rate', `${ex}/BTC/USDT`, k],
      ['rate-time', `${ex}/BTC/USDT?time=2021-01-08T00:00:20Z`, k],
      ['rate-later', `${ex}/USDT/BTC?time=2021-01-09T00:00:00Z`, k],
      ['rates', `${ex}/BTC`, k],
      ['history', `${ex}/BTC/USDT/history?period_id=10SEC&time_start=2021-01-08T00:00:00Z&time_end=2021-01-09T00:00:00Z`, k],
      ['explain', `${ex}/BTC/USDT/explain`, k],
      ['symbols', '/v1/symbols/BINANCE', k],
      ['openapi', '/openapi.json', {}],
    ]);
  } finally {
    await d.stopped('serve-live', s);
  }
  d.db('serve-live', 'dbs/live.sqlite');
}

export async function serveEms(d: Dump): Promise<void> {
  const s = await d.start(
    ['ems', 'serve', '--db', 'dbs/ems.sqlite', '--sites', 'logs/sites.json', '--client-pem', 'logs/client.pem'],
    READY_EMS,
  );
  try {
    await d.requests('ems-db', s, [
      ['positions-binance', '/v1/positions?exchange_id=BINANCE', {}],
      ['positions-all-490', '/v1/positions', {}],
      ['positions-okx', '/v1/positions?exchange_id=OKX', {}],
      ['positions-time', '/v1/positions?time=2024-03-01T00:00:03Z', {}],
      ['positions-account', '/v1/positions?EXCHANGE_ID=BINANCE~hedge', {}],
      ['positions-kraken-490', '/v1/positions?exchange_id=KRAKEN', {}],
      ['positions-before', '/v1/positions?time=2023-01-01T00:00:00Z', {}],
      ['positions-400-id', '/v1/positions?exchange_id=BINANCE~', {}],
      ['positions-400-time', '/v1/positions?time=later', {}],
      ['endpoints', '/v1/endpoints', {}],
      ['endpoints-filter', '/v1/endpoints?filter_exchange_id=BINANCE&filter_exchange_id=KRAKEN~main', {}],
      ['locations', '/v1/locations', {}],
      ['certificate', '/v1/certificate/pem', {}],
      ['openapi', '/openapi.json', {}],
      ['404', '/v1/orders', {}],
    ]);
  } finally {
    await d.stopped('ems-db', s);
  }
  const m = await d.start(['ems', 'serve', '--db', 'dbs/ems.sqlite', '--managed', '--keys', 'keys/ems.sqlite'], READY_SERVE);
  try {
    const key = KEY_RE.exec(m.stdout())?.[1] ?? '';
    await d.requests('ems-managed', m, [
      ['401', '/v1/positions?exchange_id=BINANCE', {}],
      ['key-header', '/v1/positions?exchange_id=BINANCE', { 'X-CoinAPI-Key': key }],
      ['key-query', `/v1/positions?exchange_id=OKX&apikey=${key}`, {}],
      ['certificate-404', '/v1/certificate/pem', { 'X-CoinAPI-Key': key }],
      ['openapi', '/openapi.json', {}],
    ]);
  } finally {
    await d.stopped('ems-managed', m);
  }
}
