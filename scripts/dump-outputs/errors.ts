/**
 * The output dump's bad invocations (each with its message and exit code) and every command's
 * help (scripts/dump-outputs.ts).
 *
 * @module
 */

import { BINANCE, DEMO, type Dump } from './dump.js';

export async function errors(d: Dump): Promise<void> {
  const e = (label: string, ...argv: string[]) => d.cli(`error-${label}`, argv);
  await e('no-command');
  await e('unknown-command', 'frobnicate');
  await e('bad-at', 'rate', 'dbs/demo.sqlite', '--at', 'yesterday', '--pair', 'BTC/USD');
  await e('missing-file', 'rate', 'missing.ndjson', '--at', '2024-03-01T04:30:20Z', '--pair', 'BTC/USD');
  await e('no-pair', 'rate', 'dbs/demo.sqlite', '--at', '2024-03-01T04:30:20Z');
  await e('bad-pair', 'rate', 'dbs/demo.sqlite', '--at', '2024-03-01T04:30:20Z', '--pair', 'BTCUSD');
  await e('unknown-flag', 'rate', 'dbs/demo.sqlite', '--at', '2024-03-01T04:30:20Z', '--pair', 'BTC/USD', '--frob');
  await e('bad-workers', 'replay', DEMO, '--db', 'dbs/x.sqlite', '--workers', '0');
  await e('bad-snapshot-every', 'replay', DEMO, '--db', 'dbs/x.sqlite', '--snapshot-every', '5x');
  await e('bad-from', 'replay', DEMO, '--db', 'dbs/x.sqlite', '--from', '2024-13-01T00:00:00Z');
  await e('config-missing', 'replay', DEMO, '--db', 'dbs/x.sqlite', '--config', 'logs/none.json');
  await e('config-bad-json', 'replay', DEMO, '--db', 'dbs/x.sqlite', '--config', 'logs/bad-json.json');
  await e('config-bad-value', 'replay', DEMO, '--db', 'dbs/x.sqlite', '--config', 'logs/bad-value.json');
  await e('merge-resume', 'replay', DEMO, '--db', 'dbs/x.sqlite', '--merge', '--resume');
  await e('resume-nothing', 'replay', BINANCE, '--db', 'dbs/binance.sqlite', '--resume');
  await e('workers-from', 'replay', DEMO, '--db', 'dbs/x.sqlite', '--workers', '2', '--from', '2024-03-01T04:00:00Z');
  await e('duplicate-inputs', 'replay', BINANCE, `./${BINANCE}`, '--db', 'dbs/x.sqlite');
  await e('csv-no-header', 'replay', 'logs/noheader.csv', '--db', 'dbs/x.sqlite');
  await e('vendor-missing-column', 'replay', 'logs/tardis-symbols.ndjson', 'logs/tardis-noprice.csv', '--merge', '--db', 'dbs/x.sqlite');
  await e('bad-out', 'replay', DEMO, '--out', 'files/rates.txt');
  await e(
    'not-replay-db',
    'history',
    'logs/other.sqlite',
    '--pair',
    'BTC/USD',
    '--period',
    '1HRS',
    '--from',
    '2024-03-01T00:00:00Z',
    '--to',
    '2024-03-02T00:00:00Z',
  );
  await e(
    'bad-period',
    'history',
    'dbs/demo.sqlite',
    '--pair',
    'BTC/USD',
    '--period',
    '7SEC',
    '--from',
    '2024-03-01T00:00:00Z',
    '--to',
    '2024-03-02T00:00:00Z',
  );
  await e(
    'bad-limit',
    'history',
    'dbs/demo.sqlite',
    '--pair',
    'BTC/USD',
    '--period',
    '1HRS',
    '--from',
    '2024-03-01T00:00:00Z',
    '--to',
    '2024-03-02T00:00:00Z',
    '--limit',
    '0',
  );
  await e(
    'plot-bad-out',
    'plot',
    'dbs/demo.sqlite',
    '--pair',
    'BTC/USD',
    '--from',
    '2024-03-01T05:00:00Z',
    '--to',
    '2024-03-01T05:05:00Z',
    '--out',
    'files/x.gif',
  );
  await e(
    'plot-too-long',
    'plot',
    'dbs/demo.sqlite',
    '--pair',
    'BTC/USD',
    '--from',
    '2024-03-01T02:00:00Z',
    '--to',
    '2024-03-01T05:05:00Z',
    '--out',
    'files/x.svg',
  );
  await e('metrics-unknown-route', 'metrics', 'dbs/metrics.sqlite', 'nowhere');
  await e('symbols-bad-time', 'symbols', 'dbs/demo.sqlite', 'KRAKEN', 'time=soon');
  await e('serve-bad-port', 'serve', '--db', 'dbs/demo.sqlite', '--port', '99999');
  await e('serve-missing-db', 'serve', '--db', 'dbs/none.sqlite', '--port', '0');
  await e('ems-unknown', 'ems', 'start');
  await e('ems-keys-without-managed', 'ems', 'serve', '--keys', 'keys/k.sqlite');
  await e('keys-unknown', 'keys', 'frob', '--keys', 'keys/k.sqlite');
  for (const c of [
    'replay',
    'rate',
    'history',
    'explain',
    'plot',
    'metrics',
    'symbols',
    'periods',
    'demo',
    'serve',
    'keys',
    'worker',
    'publish',
  ])
    await d.cli(`help-${c}`, [c, '--help']);
  await d.cli('help', ['--help']);
  await d.cli('help-ems', ['ems', 'serve', '--help']);
}
