/**
 * The inputs of the output dump (scripts/dump-outputs.ts), written into its working directory:
 * generated logs (fixed seeds), CoinAPI flat files made from the Binance fixture, the small files
 * the docs' examples use (metrics, tardis symbols, a configuration, EMS sites) and bad files for
 * the error paths.
 *
 * @module
 */

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { writeLog } from '../gen-log.js';

/** The open-interest points of docs/cli.md's metrics example. */
const OI = [
  '{"type":"metric_definition","time":"2024-03-01T00:00:00Z","metric_id":"OPEN_INTEREST","description":"Open interest, contracts"}',
  ...[
    ['00:00', '81250'],
    ['00:30', '81710'],
    ['01:00', '82040'],
    ['01:30', '81975'],
    ['02:00', '82400'],
  ].map(
    ([t, v]) =>
      `{"type":"metric","time":"2024-03-01T${t}:00Z","metric_id":"OPEN_INTEREST","exchange_id":"BINANCE","symbol_id":"BINANCE_PERP_BTC_USDT","value_decimal":"${v}"}`,
  ),
];

const TARDIS_SYMBOL =
  '{"type":"symbol","time":"2020-02-22T00:00:00Z","symbol_id":"BINANCEFTS_PERP_BTC_USDT","exchange_id":"BINANCE-FUTURES","symbol_type":"PERPETUAL","asset_id_base":"BTC","asset_id_quote":"USDT","symbol_id_exchange":"BTCUSDT"}';

/** A self-signed certificate (no key) served by `/v1/certificate/pem`: fixed text, valid until 2126. */
const CLIENT_PEM = [
  '-----BEGIN CERTIFICATE-----',
  'MIIBjjCCATWgAwIBAgIULFiOTOeYseEvHDXWisfxjt50SjIwCgYIKoZIzj0EAwIw',
  'HDEaMBgGA1UEAwwReHJhdGUtZHVtcC1jbGllbnQwIBcNMjYxMTI1MDEzOTA1WhgP',
  'MjEyNjExMDEwMTM5MDVaMBwxGjAYBgNVBAMMEXhyYXRlLWR1bXAtY2xpZW50MFkw',
  'EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEMg0htdiOKIx0pLX2ARQp3Mq8PtocoVyo',
  'qZIZVvY6Ax/r/kwPcomvEMg8EwpKaEkIt7iWSg09Eh0dT17joeLrHqNTMFEwHQYD',
  'VR0OBBYEFFpGeFMeceZVXxDgQr54Qn4CQzKcMB8GA1UdIwQYMBaAFFpGeFMeceZV',
  'XxDgQr54Qn4CQzKcMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIg',
  'QV+mwgqW4mPzc0hXCLiHnLpka2b8N/zFq28U6G/c5uwCIBuG4P1oP3GWkC21/dxh',
  'Mly76slxzFAwe7Ip2Y9VEeYs',
  '-----END CERTIFICATE-----',
].join('\n');

const SITES = {
  locations: [{ location_id: 'aws-eu-central-1', region_name: 'eu-central-1', provider_name: 'aws' }],
  endpoints: [
    {
      exchange_id: 'BINANCE~hedge',
      location_id: 'aws-eu-central-1',
      endpoint_schema: 'https',
      endpoint_host: 'ems.example.com',
      endpoint_url: 'https://ems.example.com/',
    },
    {
      exchange_id: 'KRAKEN',
      location_id: 'aws-eu-central-1',
      endpoint_schema: 'https',
      endpoint_host: 'k.example.com',
      endpoint_url: 'https://k.example.com/',
    },
  ],
};

function put(path: string, text: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** `2021-01-08T00:00:01.076Z` plus 1.2345 ms, with seven fractional digits (CoinAPI's receive time). */
function receiveTime(iso: string): string {
  const ms = Date.parse(iso) + 1;
  return `${new Date(ms).toISOString().slice(0, -1)}2345Z`;
}

/**
 * The Binance fixture's quotes and trades as CoinAPI flat files (quotes plain with ISO times,
 * trades gzipped with times of day), and its exchange and symbol events as an NDJSON file.
 */
function coinapiFromBinance(fixture: string, dir: string): void {
  const quotes = ['time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx'];
  const trades = ['time_exchange;time_coinapi;guid;price;base_amount;taker_side'];
  const meta: string[] = [];
  let n = 0;
  for (const line of readFileSync(fixture, 'utf8').split('\n')) {
    if (line === '') continue;
    const e = JSON.parse(line) as Record<string, string | number>;
    const t = String(e.time);
    if (e.type === 'quote') quotes.push([t, receiveTime(t), e.ask_price, e.ask_size, e.bid_price, e.bid_size].join(';'));
    else if (e.type === 'trade')
      trades.push([t.slice(11, -1), receiveTime(t).slice(11, -1), `guid-${++n}`, e.price, e.size, e.taker_side].join(';'));
    else meta.push(line);
  }
  const name = 'IDDI-1+SC-BINANCE_SPOT_BTC_USDT+S-BTCUSDT.csv';
  put(join(dir, 'coinapi', 'T-QUOTES', 'D-20210108', 'E-BINANCE', name), `${quotes.join('\n')}\n`);
  put(join(dir, 'coinapi', 'T-TRADES', 'D-20210108', 'E-BINANCE', `${name}.gz`), gzipSync(`${trades.join('\n')}\n`, { level: 6 }));
  put(join(dir, 'coinapi-meta.ndjson'), `${meta.join('\n')}\n`);
}

/** Writes every input under `work/logs` (fixtures are copied by the caller to `work/fixtures`). */
export async function writeInputs(work: string): Promise<void> {
  const logs = join(work, 'logs');
  mkdirSync(logs, { recursive: true });
  put(join(logs, 'oi.ndjson'), `${OI.join('\n')}\n`);
  put(join(logs, 'tardis-symbols.ndjson'), `${TARDIS_SYMBOL}\n`);
  put(join(logs, 'strict.json'), '{"outliers": "mad", "staleAfterSeconds": 120}\n');
  put(join(logs, 'sites.json'), `${JSON.stringify(SITES, null, 2)}\n`);
  put(join(logs, 'client.pem'), `${CLIENT_PEM}\n`);
  coinapiFromBinance(join(work, 'fixtures', 'binance-btcusdt-2021-01-08.ndjson'), logs);

  // Generated logs: a clean gzipped one, and one with bad and late lines in three formats. They
  // start before the 04:00 eligibility refresh (methodology rule 8), from which pairs have rates.
  await writeLog(join(logs, 'gen.ndjson.gz'), { seed: 7, events: 50_000, start: '2024-03-01T03:40:00Z', rate: 50_000 / 3600 });
  const bad = {
    seed: 11,
    events: 30_000,
    exchanges: 6,
    assets: 8,
    start: '2024-03-01T03:50:00Z',
    rate: 30_000 / 1800,
    badRate: 0.004,
    lateRate: 0.002,
  };
  await writeLog(join(logs, 'gen-bad.ndjson'), bad);
  await writeLog(join(logs, 'gen-bad.csv'), bad);
  await writeLog(join(logs, 'gen-bad.sqlite'), bad);

  // Bad inputs of the error paths.
  put(join(logs, 'bad-json.json'), '{"outliers": \n');
  put(join(logs, 'bad-value.json'), '{"outliers": "sometimes"}\n');
  put(join(logs, 'noheader.csv'), '2024-03-01T00:00:00Z,quote,X\n');
  put(join(logs, 'tardis-noprice.csv'), 'exchange,symbol,timestamp,local_timestamp,id,side,amount\nbinance-futures,BTCUSDT,1,2,3,buy,1\n');
  const other = new Database(join(logs, 'other.sqlite'));
  other.exec('CREATE TABLE things (a TEXT); INSERT INTO things VALUES (1)');
  other.close();
}
