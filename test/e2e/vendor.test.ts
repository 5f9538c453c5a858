/**
 * `xrate replay` over vendor files and directories: `--merge`, `--time`, what the run records
 * (summary counts, `runs.inputs`, rejects with their file and line), and the usage errors of the
 * combinations it does not take.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateLog } from '../../scripts/gen-log.js';
import { replayParallel } from '../../src/replay/parallel.js';
import { replay } from '../../src/replay/replay.js';
import { exportVendor } from '../helpers/vendorExport.js';
import { cli, cliJson, expectSameOutputs, query } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-vendor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const p = (name: string): string => join(dir, name);

const SYMBOLS = p('symbols.ndjson');
writeFileSync(
  SYMBOLS,
  '{"type":"symbol","time":"2020-02-22T00:00:00Z","symbol_id":"BINANCEFTS_PERP_BTC_USDT","exchange_id":"binance-FUTURES","symbol_type":"PERPETUAL","asset_id_base":"BTC","asset_id_quote":"USDT","symbol_id_exchange":"BTCUSDT"}\n',
);
const QUOTES = 'fixtures/tardis/binance-futures/quotes/2020-02-22_BTCUSDT.csv';
const TRADES = 'fixtures/tardis/binance-futures/trades/2020-02-22_BTCUSDT.csv';

interface Summary {
  inputs: string[];
  eventsRead: number;
  eventsAccepted: number;
  eventsRejected: number;
  rejectsByReason: Record<string, number>;
}

describe('xrate replay over vendor files', () => {
  it('--merge over a directory of real tardis files: every row read and accepted, the files as the inputs of the run', async () => {
    const db = p('tardis.sqlite');
    const s = await cliJson<Summary>('replay', SYMBOLS, 'fixtures/tardis', '--merge', '--db', db, '--json');
    expect(s.inputs).toEqual([SYMBOLS, QUOTES, TRADES]);
    expect([s.eventsRead, s.eventsAccepted, s.eventsRejected]).toEqual([801, 801, 0]);
    const [run] = query<{ inputs: string; events_read: number }>(db, 'SELECT inputs, events_read FROM runs');
    expect(JSON.parse(run.inputs)).toEqual([SYMBOLS, QUOTES, TRADES]);
    expect(run.events_read).toBe(801);
  });

  it('a merge reports progress over the bytes of all its inputs', async () => {
    const seen: { bytesRead: number; totalBytes: number; inputs: number }[] = [];
    const total = [SYMBOLS, QUOTES, TRADES].reduce((s, f) => s + statSync(f).size, 0);
    await replay({
      inputs: [SYMBOLS, 'fixtures/tardis'],
      merge: true,
      out: p('progress.ndjson'),
      batchSize: 50,
      progressEveryMs: 0,
      onProgress: (x) => seen.push(x),
    });
    expect(seen.length).toBeGreaterThan(5);
    for (const x of seen) expect([x.totalBytes, x.inputs]).toEqual([total, 1]);
    const read = seen.map((x) => x.bytesRead);
    expect(read).toEqual([...read].sort((a, b) => a - b));
    expect(read.at(-1)).toBe(total);
  });

  it('without --merge, the files are read one after another: the trades after the quotes are late', async () => {
    const s = await cliJson<Summary>('replay', SYMBOLS, 'fixtures/tardis', '--out', p('seq.ndjson'), '--json');
    expect(s.eventsRead).toBe(801);
    // The trades start 2 s in, the 400 quotes span 4 s: the trades before the last quote's second are late.
    expect(s.rejectsByReason.late).toBeGreaterThan(0);
    expect(s.eventsAccepted + s.eventsRejected).toBe(801);
  });

  it('without the symbol event, each tardis row is a reject naming the exchange and symbol, with its file and line', async () => {
    const db = p('nosym.sqlite');
    const s = await cliJson<Summary>('replay', TRADES, '--db', db, '--json');
    expect(s.rejectsByReason).toEqual({ unknown_symbol: 400 });
    const r = query<{ source: string; line: number; message: string }>(
      db,
      'SELECT source, line, message FROM rejects ORDER BY rowid LIMIT 2',
    );
    expect(r.map((x) => [x.source, x.line])).toEqual([
      [TRADES, 2],
      [TRADES, 3],
    ]);
    expect(r[0].message).toContain('exchange "binance-futures" symbol "BTCUSDT"');
  });

  it('CoinAPI flat files and tardis CSV give the outputs of the NDJSON log they were exported from, through the command', async () => {
    const lines = [...generateLog({ seed: 11, events: 4000, exchanges: 3, assets: 4, start: '2024-03-01T23:00:00Z', rate: 1 })];
    for (const [vendor, time] of [
      ['coinapi', 'receive'],
      ['tardis', 'exchange'],
    ] as const) {
      const d = p(`x-${vendor}`);
      mkdirSync(d);
      const x = exportVendor(lines, d, { vendor, time, gzip: true });
      const want = p(`x-${vendor}-ndjson.sqlite`);
      const got = p(`x-${vendor}-vendor.sqlite`);
      expect((await cli('replay', x.ndjson, '--db', want, '--quiet')).code).toBe(0);
      const r = await cli('replay', x.meta, x.tree, '--merge', '--time', time, '--db', got, '--quiet');
      expect(r.code, r.err).toBe(0);
      const rows = expectSameOutputs(got, want);
      expect(rows.rates).toBeGreaterThan(50);
    }
  });
});

describe('a directory of NDJSON logs', () => {
  it('replayed in partitions equals its serial replay (the directory stands for its files in both)', async () => {
    const d = p('days');
    mkdirSync(join(d, '2024-03'), { recursive: true });
    const lines = [...generateLog({ seed: 23, events: 20_000, rate: 0.5, badRate: 0.01 })];
    const half = lines.length >> 1;
    writeFileSync(join(d, '2024-03', 'a.ndjson'), `${lines.slice(0, half).join('\n')}\n`);
    writeFileSync(join(d, '2024-03', 'b.ndjson'), `${lines.slice(half).join('\n')}\n`);
    const config = { maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 };
    const serial = await replay({ inputs: [d], db: p('days-serial.sqlite'), config });
    expect(serial.inputs).toEqual([join(d, '2024-03', 'a.ndjson'), join(d, '2024-03', 'b.ndjson')]);
    const par = await replayParallel({ inputs: [d], db: p('days-parallel.sqlite'), config, workers: 2 });
    expect(par.eventsRead).toBe(serial.eventsRead);
    const rows = expectSameOutputs(p('days-parallel.sqlite'), p('days-serial.sqlite'));
    expect(rows.rates).toBeGreaterThan(100);
  }, 120_000);
});

describe('usage errors', () => {
  it.each([
    ['a bad --time', ['--time', 'sideways'], /--time must be receive or exchange, got "sideways"/],
    ['--merge with --resume', ['--merge', '--resume'], /--merge does not work with --snapshot-every or --resume/],
    ['--merge with --snapshot-every', ['--merge', '--snapshot-every', '1h'], /--merge does not work with --snapshot-every or --resume/],
    ['--merge with --workers', ['--merge', '--workers', '2'], /partitioned replays \(--workers, --queue\) do not work with --merge yet/],
    ['vendor files with --workers', ['--workers', '2'], /partitioned replays \(--workers, --queue\) do not read tardis CSV files yet/],
  ])('%s: exit 2', async (_name, flags, message) => {
    const r = await cli('replay', SYMBOLS, 'fixtures/tardis', '--db', p('usage.sqlite'), ...flags);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it('a directory without event logs: exit 1, named', async () => {
    const empty = p('empty');
    mkdirSync(join(empty, 'sub'), { recursive: true });
    writeFileSync(join(empty, 'sub', 'notes.txt'), 'hello');
    const r = await cli('replay', empty, '--db', p('empty.sqlite'));
    expect(r.code).toBe(1);
    expect(r.err).toContain(`directory "${empty}" holds no event log`);
  });

  it('--format coinapi on a file that is not one: exit 1', async () => {
    const r = await cli('replay', TRADES, '--format', 'coinapi', '--db', p('fmt.sqlite'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/is not a CoinAPI flat file/);
  });
});
