/**
 * End-to-end tests of the `xrate` CLI, in-process through `run(argv, io)`: the rate and history
 * query contracts (from a log and from a replay database), the three input formats and gzip,
 * rejects with line numbers, warm-up with --from, --to, --reorder-window, --track/--periods,
 * explain, periods and demo. Exit codes and failures are in cli-errors.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog, type GenOptions } from '../../scripts/gen-log.js';
import type { ExchangeRatesTimeseriesItem } from '../../src/core/ohlc.js';
import type { RateRow as StoreRateRow } from '../../src/io/store.js';
import { cli, cliJson, DEMO, dumpTables, query, TIME7, us, writeSmallLogs, type Tables } from './helpers.js';

interface RateAnswer {
  asset_id_base: string;
  asset_id_quote: string;
  rate: number | null;
  time: string | null;
}
/** History items as the CLI prints them. */
type Item = ExchangeRatesTimeseriesItem;
interface Summary {
  eventsRead: number;
  eventsAccepted: number;
  eventsRejected: number;
  rejectsByReason: Record<string, number>;
  firstTick: number;
  lastTick: number;
  rateChanges: number;
  buckets: number;
}
/** Rows of the rates table as the tests select them (RATE_COLS: without volume). */
type RateRow = Omit<StoreRateRow, 'volume'>;

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const p = (name: string): string => join(dir, name);

/**
 * A generated log of 10 minutes around the 04:00 eligibility refresh (so it has rates from 04:00
 * on), with bad and late lines, in every input format.
 */
const GEN: GenOptions = { seed: 7, events: 30_000, badRate: 0.01, lateRate: 0.005, start: '2024-03-01T03:55:00Z', rate: 50 };
const G = { ndjson: p('gen.ndjson'), gz: p('gen.ndjson.gz'), csv: p('gen.csv'), csvgz: p('gen.csv.gz'), sqlite: p('gen.sqlite') };
/** Full replay of G (NDJSON) and of the demo. */
const GDB = p('gen-full.sqlite');
const DEMO_DB = p('demo.sqlite');
let gSummary: Summary;
let gTables: Tables;
let small: { ndjson: string; csv: string; sqlite: string };

beforeAll(async () => {
  await Promise.all(Object.values(G).map((f) => writeLog(f, GEN)));
  small = writeSmallLogs(dir);
  gSummary = await cliJson<Summary>('replay', G.ndjson, '--db', GDB, '--json');
  gTables = dumpTables(GDB);
  const d = await cli('replay', DEMO, '--db', DEMO_DB, '--quiet');
  expect(d.code).toBe(0);
}, 120_000);

const DEMO_AT = '2024-03-01T04:30:20.7Z';

describe('xrate rate', () => {
  it('prints one JSON array, one object per --pair in order: direct, inverse, cross, unknown, same asset', async () => {
    const r = await cli(
      'rate',
      DEMO,
      '--at',
      DEMO_AT,
      '--pair',
      'BTC/USD',
      '--pair',
      'USD/BTC',
      '--pair',
      'SOL/BTC,FOO/BAR',
      '--pair',
      'ETH/ETH',
    );
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out.endsWith('\n')).toBe(true);
    expect(r.out.trimEnd().split('\n')).toHaveLength(1);
    const a = JSON.parse(r.out) as RateAnswer[];
    expect(a.map((x) => `${x.asset_id_base}/${x.asset_id_quote}`)).toEqual(['BTC/USD', 'USD/BTC', 'SOL/BTC', 'FOO/BAR', 'ETH/ETH']);
    for (const x of a) expect(Object.keys(x)).toEqual(['asset_id_base', 'asset_id_quote', 'rate', 'time']);
    const [btc, inv, cross, none, same] = a;
    expect(typeof btc.rate).toBe('number');
    expect(btc.rate!).toBeGreaterThan(10_000);
    expect(btc.time).toMatch(TIME7);
    expect(us(btc.time!)).toBeLessThanOrEqual(us(DEMO_AT));
    // Inverse: 1/rate, same time.
    expect(Math.abs(inv.rate! * btc.rate! - 1)).toBeLessThan(1e-12);
    expect(inv.time).toBe(btc.time);
    // Cross (there is no SOL/BTC market in the demo): the product of its legs, time = oldest leg.
    expect(cross.rate).toBeGreaterThan(0);
    expect(cross.time).toMatch(TIME7);
    const ex = await cliJson<{ kind: string; rate: number; time: string; path: string[]; legs: { rate: number; time: string }[] }>(
      'explain',
      DEMO,
      '--pair',
      'SOL/BTC',
      '--at',
      DEMO_AT,
    );
    expect(ex.kind).toBe('cross');
    expect(ex.path.length).toBeGreaterThan(2);
    expect(ex.rate).toBe(cross.rate);
    expect(ex.time).toBe(cross.time);
    const product = ex.legs.reduce((m, l) => m * l.rate, 1);
    expect(Math.abs(product / cross.rate! - 1)).toBeLessThan(1e-12);
    expect(ex.legs.map((l) => l.time).sort()[0]).toBe(cross.time);
    expect(none).toEqual({ asset_id_base: 'FOO', asset_id_quote: 'BAR', rate: null, time: null });
    expect(same.rate).toBe(1);
    expect(same.time).toBe('2024-03-01T04:30:20.0000000Z');
  });

  it('answers null/null before the first rate', async () => {
    const a = await cliJson<RateAnswer[]>('rate', DEMO, '--at', '2024-03-01T03:00:00Z', '--pair', 'BTC/USD');
    expect(a).toEqual([{ asset_id_base: 'BTC', asset_id_quote: 'USD', rate: null, time: null }]);
  });

  it('a replay database gives the same answers as the log', async () => {
    const pairs = ['BTC/USD', 'USD/BTC', 'SOL/BTC', 'ETH/EUR', 'XRP/ETH', 'USDT/USD', 'FOO/BAR', 'BTC/BTC'];
    const args = pairs.flatMap((x) => ['--pair', x]);
    for (const at of ['2024-03-01T03:59:59Z', '2024-03-01T04:00:00Z', DEMO_AT, '2024-03-01T05:12:00.1234567Z', '2024-03-01T05:54:11Z']) {
      const fromLog = await cli('rate', DEMO, '--at', at, ...args);
      const fromDb = await cli('rate', DEMO_DB, '--at', at, ...args);
      expect(fromLog.code).toBe(0);
      expect(fromDb.code).toBe(0);
      expect(fromDb.out, `at ${at}`).toBe(fromLog.out);
    }
  });

  // Past the last tick of the replay (the demo ends at 05:54:11) the log ticks on through --at,
  // so markets go stale one by one after 301 s and the next rank down is used; the database
  // answers from the engine's final state advanced to --at, which must give the same.
  it('after the end of the log, a database gives the same answers as the log', async () => {
    const args = ['--at', '2024-03-01T06:00:00Z', '--pair', 'BTC/USD', '--pair', 'SOL/BTC'];
    expect((await cli('rate', DEMO_DB, ...args)).out).toBe((await cli('rate', DEMO, ...args)).out);
  });

  it('a log with bad lines still answers (generated log, 1% bad and 0.5% late lines)', async () => {
    expect(gSummary.eventsRejected).toBeGreaterThan(300);
    const a = await cliJson<RateAnswer[]>('rate', G.ndjson, '--at', '2024-03-01T04:04:00Z', '--pair', 'BTC/USD', '--pair', 'LTC/BTC');
    expect(a[0].rate).toBeGreaterThan(0);
    expect(a[1].rate).toBeGreaterThan(0);
    const b = await cliJson<RateAnswer[]>('rate', GDB, '--at', '2024-03-01T04:04:00Z', '--pair', 'BTC/USD', '--pair', 'LTC/BTC');
    expect(b).toEqual(a);
  });
});

describe('xrate history', () => {
  const base = ['--pair', 'BTC/USD', '--period', '1SEC', '--from', '2024-03-01T04:00:00Z', '--to', '2024-03-01T04:05:00Z'];

  it('prints ExchangeRatesTimeseriesItem objects, oldest first, at most 100 by default', async () => {
    const r = await cli('history', G.ndjson, ...base);
    expect(r.code).toBe(0);
    expect(r.out.trimEnd().split('\n')).toHaveLength(1);
    const items = JSON.parse(r.out) as Item[];
    expect(items).toHaveLength(100);
    expect(items[0].time_period_start).toBe('2024-03-01T04:00:00.0000000Z');
    for (const [i, it] of items.entries()) {
      expect(Object.keys(it)).toEqual([
        'time_period_start',
        'time_period_end',
        'time_open',
        'time_close',
        'rate_open',
        'rate_high',
        'rate_low',
        'rate_close',
      ]);
      for (const k of ['time_period_start', 'time_period_end', 'time_open', 'time_close'] as const) expect(it[k]).toMatch(TIME7);
      expect(us(it.time_period_end) - us(it.time_period_start)).toBe(1_000_000);
      expect(it.rate_low).toBeLessThanOrEqual(Math.min(it.rate_open, it.rate_close));
      expect(it.rate_high).toBeGreaterThanOrEqual(Math.max(it.rate_open, it.rate_close));
      if (i > 0) expect(us(it.time_period_start)).toBeGreaterThan(us(items[i - 1].time_period_start));
    }
  });

  it('--limit N keeps the oldest N; the buckets are those whose start lies in [from, to)', async () => {
    const all = await cliJson<Item[]>('history', G.ndjson, ...base, '--limit', '100000');
    expect(all.length).toBeGreaterThan(250);
    expect(all.length).toBeLessThanOrEqual(300);
    expect(us(all[all.length - 1].time_period_start)).toBeLessThan(us('2024-03-01T04:05:00Z'));
    const seven = await cliJson<Item[]>('history', G.ndjson, ...base, '--limit', '7');
    expect(seven).toEqual(all.slice(0, 7));
    const def = await cliJson<Item[]>('history', G.ndjson, ...base);
    expect(def).toEqual(all.slice(0, 100));
    // A start that is not on a bucket boundary: the first bucket starts after it; `to` is exclusive.
    const mid = await cliJson<Item[]>(
      'history',
      G.ndjson,
      '--pair',
      'BTC/USD',
      '--period',
      '1SEC',
      '--from',
      '2024-03-01T04:00:00.5Z',
      '--to',
      '2024-03-01T04:00:10Z',
    );
    expect(mid[0].time_period_start).toBe('2024-03-01T04:00:01.0000000Z');
    expect(mid[mid.length - 1].time_period_start).toBe('2024-03-01T04:00:09.0000000Z');
    expect(mid).toEqual(
      all.filter((x) => us(x.time_period_start) >= us('2024-03-01T04:00:01Z') && us(x.time_period_start) < us('2024-03-01T04:00:10Z')),
    );
  });

  it('a replay database gives the same answers as the log (stored and rolled-up periods)', async () => {
    const windows = [
      ['2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z'],
      ['2024-03-01T04:01:30.5Z', '2024-03-01T04:04:10Z'],
    ];
    for (const period of ['1SEC', '15SEC', '1MIN', '5MIN', '1HRS', '2HRS', '1DAY', '7DAY']) {
      for (const [w, [from, to]] of windows.entries()) {
        for (const pair of ['BTC/USD', 'EUR/USD']) {
          const args = ['--pair', pair, '--period', period, '--from', from, '--to', to, '--limit', '100000'];
          const a = await cli('history', G.ndjson, ...args);
          const b = await cli('history', GDB, ...args);
          expect(a.code).toBe(0);
          expect(b.out, `${pair} ${period} ${from} ${to}`).toBe(a.out);
          // (The 7DAY bucket holding the log starts on 2024-02-29, before the window.)
          if (w === 0 && period !== '7DAY') expect((JSON.parse(a.out) as Item[]).length).toBeGreaterThan(0);
        }
      }
    }
  });

  it('answers cross pairs from a log', async () => {
    const items = await cliJson<Item[]>(
      'history',
      G.ndjson,
      '--pair',
      'LTC/BTC',
      '--period',
      '1MIN',
      '--from',
      '2024-03-01T04:00:00Z',
      '--to',
      '2024-03-01T04:05:00Z',
    );
    expect(items.length).toBe(5);
    expect(items[0].rate_open).toBeGreaterThan(0);
  });

  it('--track and --periods: a period that rolls up from the stored ones equals history from the log', async () => {
    const db = p('tracked.sqlite');
    const r = await cli('replay', G.ndjson, '--db', db, '--track', 'BTC/USD', '--track', 'LTC/BTC', '--periods', '1min,1HRS', '--quiet');
    expect(r.code).toBe(0);
    const stored = query<{ pair: string; period_id: string }>(
      db,
      `SELECT DISTINCT base || '/' || quote AS pair, period_id FROM ohlc ORDER BY 1, 2`,
    );
    expect(stored).toEqual([
      { pair: 'BTC/USD', period_id: '1HRS' },
      { pair: 'BTC/USD', period_id: '1MIN' },
      { pair: 'LTC/BTC', period_id: '1HRS' },
      { pair: 'LTC/BTC', period_id: '1MIN' },
    ]);
    for (const [pair, period] of [
      ['BTC/USD', '5MIN'],
      ['LTC/BTC', '2MIN'],
      ['BTC/USD', '1MIN'],
      ['LTC/BTC', '3HRS'],
      ['BTC/USD', '1DAY'],
    ]) {
      const args = ['--pair', pair, '--period', period, '--from', '2024-03-01T00:00:00Z', '--to', '2024-03-02T00:00:00Z'];
      const fromDb = await cli('history', db, ...args);
      const fromLog = await cli('history', G.ndjson, ...args);
      expect(fromDb.code, fromDb.err).toBe(0);
      expect(fromDb.out, `${pair} ${period}`).toBe(fromLog.out);
    }
    // Finer than every stored period: made from the pair's change series, as from the log.
    for (const period of ['1SEC', '10SEC']) {
      const args = [
        '--pair',
        'BTC/USD',
        '--period',
        period,
        '--from',
        '2024-03-01T04:00:00Z',
        '--to',
        '2024-03-01T04:20:00Z',
        '--limit',
        '2000',
      ];
      const fromDb = await cli('history', db, ...args);
      const fromLog = await cli('history', G.ndjson, ...args);
      expect(fromDb.code, fromDb.err).toBe(0);
      expect(fromDb.out, period).toBe(fromLog.out);
      expect(JSON.parse(fromDb.out).length).toBeGreaterThan(10);
    }
    // ETH/USD was not tracked: bad input (exit 1), named.
    const eth = await cli(
      'history',
      db,
      '--pair',
      'ETH/USD',
      '--period',
      '1MIN',
      '--from',
      '2024-03-01T04:00:00Z',
      '--to',
      '2024-03-01T04:01:00Z',
    );
    expect(eth.code).toBe(1);
    expect(eth.err).toMatch(/no OHLC for ETH\/USD.*not tracked/);
  });
});

describe('input formats', () => {
  it('the same log as NDJSON, gzip NDJSON, CSV, gzip CSV and SQLite gives byte-identical rate files and identical rates/ohlc tables', async () => {
    const outs: Record<string, { file: string; tables: Tables; summary: Summary }> = {};
    for (const [name, log] of Object.entries(G)) {
      const file = p(`rates-${name}.ndjson`);
      const db = p(`db-${name}.sqlite`);
      expect((await cli('replay', log, '--out', file, '--quiet')).code).toBe(0);
      const summary = await cliJson<Summary>('replay', log, '--db', db, '--json');
      outs[name] = { file, tables: dumpTables(db), summary };
    }
    const ref = readFileSync(outs.ndjson.file);
    expect(ref.length).toBeGreaterThan(100_000);
    expect(outs.ndjson.tables.rates).toEqual(gTables.rates);
    for (const name of ['gz', 'csv', 'csvgz', 'sqlite']) {
      expect(readFileSync(outs[name].file).equals(ref), `${name} rate file`).toBe(true);
      expect(outs[name].tables.rates, `${name} rates`).toEqual(outs.ndjson.tables.rates);
      expect(outs[name].tables.ohlc, `${name} ohlc`).toEqual(outs.ndjson.tables.ohlc);
      expect(outs[name].summary.eventsRead).toBe(GEN.events);
      expect(outs[name].summary.eventsRejected, name).toBe(outs.ndjson.summary.eventsRejected);
    }
    // gzip input: the very same rejects; CSV: the same rejects one line further down (header);
    // SQLite: the rowid is the line, and an invalid-JSON line is a row with an unknown type.
    const key = (t: Tables, shift = 0): string[] => t.rejects.map((r) => `${Number(r.line) - shift} ${r.reason}`);
    const nd = outs.ndjson.tables;
    expect(outs.gz.tables.rejects.map(({ source: _s, ...r }) => r)).toEqual(nd.rejects.map(({ source: _s, ...r }) => r));
    expect(key(outs.csv.tables, 1)).toEqual(key(nd));
    expect(key(outs.csvgz.tables, 1)).toEqual(key(nd));
    expect(key(outs.sqlite.tables)).toEqual(key(nd).map((k) => k.replace('bad_json', 'unknown_type')));
  });

  it('a CSV rate file carries the same changes', async () => {
    const file = p('rates.csv');
    expect((await cli('replay', G.ndjson, '--out', file, '--quiet')).code).toBe(0);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe('tick,asset_id_base,asset_id_quote,rate,time,rank,used,fresh');
    expect(lines.length - 1).toBe(gTables.rates.length);
  });

  it('rejects are recorded with their line numbers and raw text (every reject of the generated log)', () => {
    expect(gTables.rejects.length).toBe(gSummary.eventsRejected);
    const lines = readFileSync(G.ndjson, 'utf8').split('\n');
    const reasons = new Set<string>();
    for (const r of gTables.rejects) {
      expect(r.input).toBe(0);
      expect(r.source).toBe(G.ndjson);
      expect(r.raw, `line ${String(r.line)}`).toBe(lines[Number(r.line) - 1]);
      expect(String(r.message).length).toBeGreaterThan(0);
      reasons.add(String(r.reason));
    }
    expect([...reasons].sort()).toEqual(Object.keys(gSummary.rejectsByReason).sort());
    expect(reasons).toContain('late');
    expect(reasons).toContain('bad_json');
  });

  it('several logs are read in order as one stream; rejects name their input', async () => {
    const text = readFileSync(G.ndjson, 'utf8').split('\n');
    const a = p('part1.ndjson');
    const b = p('part2.ndjson');
    writeFileSync(a, `${text.slice(0, 15_000).join('\n')}\n`);
    writeFileSync(b, text.slice(15_000).join('\n'));
    const db = p('parts.sqlite');
    expect((await cli('replay', a, b, '--db', db, '--quiet')).code).toBe(0);
    const t = dumpTables(db);
    expect(t.rates).toEqual(gTables.rates);
    expect(t.ohlc).toEqual(gTables.ohlc);
    const where = (r: Record<string, unknown>): number => (r.input === 0 ? Number(r.line) : Number(r.line) + 15_000);
    expect(t.rejects.map((r) => `${where(r)} ${r.reason}`)).toEqual(gTables.rejects.map((r) => `${r.line} ${r.reason}`));
    expect(new Set(t.rejects.map((r) => `${r.input} ${r.source}`))).toEqual(new Set([`0 ${a}`, `1 ${b}`]));
  });
});

describe('a small hand-written log', () => {
  const rateRows = (db: string): RateRow[] =>
    query<RateRow>(db, `SELECT tick, base, quote, rate, time, rank, used, fresh FROM rates ORDER BY tick, base, quote`);
  const T = (s: string): number => us(`2024-01-01T00:00:${s}Z`);

  it('NDJSON: bad lines become rejects with line, reason and raw text; the rest is applied', async () => {
    const db = p('small-nd.sqlite');
    const s = await cliJson<Summary>('replay', small.ndjson, '--db', db, '--json');
    expect(s.eventsRead).toBe(13);
    expect(s.eventsRejected).toBe(3);
    expect(s.rejectsByReason).toEqual({ bad_json: 1, bad_size: 1, late: 1 });
    const lines = readFileSync(small.ndjson, 'utf8').split('\n');
    const rej = dumpTables(db).rejects;
    expect(rej.map((r) => [r.line, r.reason])).toEqual([
      [5, 'bad_json'],
      [9, 'bad_size'],
      [11, 'late'],
    ]);
    for (const r of rej) expect(r.raw).toBe(lines[Number(r.line) - 1]);
    expect(rej[0].raw).toBe('{"type":"trade", this is not json');
    expect(rej[1].message).toMatch(/size/);
    expect(rej[2].message).toMatch(/late|before/);
    expect(rateRows(db)).toEqual([
      { tick: T('02'), base: 'BTC', quote: 'USD', rate: 100, time: T('01.2'), rank: 1, used: 1, fresh: 1 },
      { tick: T('02'), base: 'ETH', quote: 'USD', rate: 10, time: T('01.3'), rank: 1, used: 1, fresh: 1 },
      { tick: T('03'), base: 'BTC', quote: 'USD', rate: 102, time: T('02.5'), rank: 1, used: 1, fresh: 1 },
      { tick: T('04'), base: 'ETH', quote: 'USD', rate: 11, time: T('03.1'), rank: 1, used: 1, fresh: 1 },
      { tick: T('05'), base: 'BTC', quote: 'USD', rate: 105, time: T('04.7'), rank: 1, used: 1, fresh: 1 },
    ]);
    const a = await cliJson<RateAnswer[]>('rate', small.ndjson, '--at', '2024-01-01T00:00:04.9Z', '--pair', 'BTC/USD', '--pair', 'ETH/BTC');
    expect(a).toEqual([
      { asset_id_base: 'BTC', asset_id_quote: 'USD', rate: 102, time: '2024-01-01T00:00:02.5000000Z' },
      // 11 / 102 = 0.10784313725490197 as a double, written with 15 significant digits.
      { asset_id_base: 'ETH', asset_id_quote: 'BTC', rate: 0.107843137254902, time: '2024-01-01T00:00:02.5000000Z' },
    ]);
  });

  it('CSV with a quoted field holding a comma, and SQLite, give the same outputs as NDJSON', async () => {
    const csvText = readFileSync(small.csv, 'utf8');
    expect(csvText).toContain('"BTC,USD"');
    const dbs = { ndjson: p('small-a.sqlite'), csv: p('small-b.sqlite'), sqlite: p('small-c.sqlite') };
    const files = { ndjson: p('small-a.ndjson'), csv: p('small-b.ndjson'), sqlite: p('small-c.ndjson') };
    for (const k of ['ndjson', 'csv', 'sqlite'] as const) {
      expect((await cli('replay', small[k], '--db', dbs[k], '--quiet')).code).toBe(0);
      expect((await cli('replay', small[k], '--out', files[k], '--quiet')).code).toBe(0);
    }
    const nd = dumpTables(dbs.ndjson);
    expect(nd.rates.length).toBe(5);
    for (const k of ['csv', 'sqlite'] as const) {
      const t = dumpTables(dbs[k]);
      expect(t.rates, k).toEqual(nd.rates);
      expect(t.ohlc, k).toEqual(nd.ohlc);
      expect(readFileSync(files[k], 'utf8'), k).toBe(readFileSync(files.ndjson, 'utf8'));
    }
    // The symbol row (CSV line 4, with the quoted comma) was read: no reject there, and the market
    // it names (not a SPOT pattern id) has rates.
    const csvRej = dumpTables(dbs.csv).rejects;
    expect(csvRej.map((r) => [r.line, r.reason])).toEqual([
      [6, 'bad_json'],
      [10, 'bad_size'],
      [12, 'late'],
    ]);
    expect(csvRej[0].raw).toBe(csvText.split('\n')[5]);
    expect(JSON.parse(String(csvRej[1].raw))).toMatchObject({ type: 'trade', size: '-1' });
    const sqRej = dumpTables(dbs.sqlite).rejects;
    expect(sqRej.map((r) => [r.line, r.reason])).toEqual([
      [5, 'unknown_type'],
      [9, 'bad_size'],
      [11, 'late'],
    ]);
    // Same answers from every format.
    for (const k of ['csv', 'sqlite'] as const) {
      const args = ['--at', '2024-01-01T00:00:03Z', '--pair', 'BTC/USD', '--pair', 'USD/ETH'];
      expect((await cli('rate', small[k], ...args)).out).toBe((await cli('rate', small.ndjson, ...args)).out);
    }
  });

  it('--reorder-window accepts a line that is late by less than the window', async () => {
    const db = p('small-rw.sqlite');
    const s = await cliJson<Summary>('replay', small.ndjson, '--db', db, '--reorder-window', '2', '--json');
    expect(s.rejectsByReason).toEqual({ bad_json: 1, bad_size: 1 });
    expect(s.eventsAccepted).toBe(11);
    expect(rateRows(db).find((r) => r.base === 'ETH' && r.tick === T('02'))).toMatchObject({ rate: 20, time: T('01.5') });
    const at = ['--at', '2024-01-01T00:00:02Z', '--pair', 'ETH/USD'];
    expect((await cliJson<RateAnswer[]>('rate', small.ndjson, ...at, '--reorder-window', '2s'))[0].rate).toBe(20);
    expect((await cliJson<RateAnswer[]>('rate', small.ndjson, ...at))[0].rate).toBe(10);
    expect(dumpTables(db).rejects.map((r) => r.reason)).toEqual(['bad_json', 'bad_size']);
  });
});

describe('replay --from and --to', () => {
  const FROM = '2024-03-01T04:03:00.5Z';
  const FIRST = us('2024-03-01T04:03:01Z'); // the first tick >= FROM

  it('--from: warm-up before it, a full-state row per pair at the first tick >= from, then the same rows as a full replay', async () => {
    const db = p('from.sqlite');
    const s = await cliJson<Summary>('replay', G.ndjson, '--db', db, '--from', FROM, '--json');
    expect(s.eventsRead).toBe(GEN.events);
    const t = dumpTables(db);
    const rates = t.rates as unknown as RateRow[];
    expect(Math.min(...rates.map((r) => r.tick))).toBe(FIRST);
    // Every pair with a rate at FIRST in the full replay has a row at FIRST, with the same state.
    const full = gTables.rates as unknown as RateRow[];
    const last = new Map<string, RateRow>();
    for (const r of full) if (r.tick <= FIRST) last.set(`${r.base}/${r.quote}`, r);
    const state = [...last.values()].filter((r) => r.rate !== null).map((r) => ({ ...r, tick: FIRST }));
    expect(state.length).toBeGreaterThan(20);
    const first = rates.filter((r) => r.tick === FIRST);
    expect(first.filter((r) => r.rate !== null)).toEqual(state.sort((a, b) => (a.base + a.quote < b.base + b.quote ? -1 : 1)));
    // After it: exactly the full replay's rows.
    expect(rates.filter((r) => r.tick > FIRST)).toEqual(full.filter((r) => r.tick > FIRST));
    expect(s.rateChanges).toBe(rates.length);
    // OHLC only from ticks >= from; 1SEC buckets equal the full replay's from there on.
    for (const b of t.ohlc) expect(Number(b.time_open)).toBeGreaterThanOrEqual(FIRST);
    const sec = (x: Tables): unknown[] => x.ohlc.filter((b) => b.period_id === '1SEC' && Number(b.start) >= FIRST);
    expect(sec(t)).toEqual(sec(gTables));
    // Rejects are recorded through warm-up too.
    expect(t.rejects).toEqual(gTables.rejects);
    // Queries on this database after `from` agree with the log.
    const args = ['--at', '2024-03-01T04:04:30Z', '--pair', 'BTC/USD', '--pair', 'LTC/BTC', '--pair', 'EUR/USDT'];
    expect((await cli('rate', db, ...args)).out).toBe((await cli('rate', G.ndjson, ...args)).out);
  });

  it('--to: events <= to are applied and ticks run through the last whole second <= to', async () => {
    const TO = '2024-03-01T04:02:30.7Z';
    const end = us('2024-03-01T04:02:30Z');
    const db = p('to.sqlite');
    const s = await cliJson<Summary>('replay', G.ndjson, '--db', db, '--to', TO, '--json');
    expect(s.lastTick).toBe(end);
    expect(s.eventsRead).toBeLessThan(GEN.events);
    const t = dumpTables(db);
    const rates = t.rates as unknown as RateRow[];
    expect(Math.max(...rates.map((r) => r.tick))).toBeLessThanOrEqual(end);
    expect(rates).toEqual((gTables.rates as unknown as RateRow[]).filter((r) => r.tick <= end));
    const sec = (x: Tables): unknown[] => x.ohlc.filter((b) => b.period_id === '1SEC' && Number(b.start) <= end);
    expect(t.ohlc.filter((b) => b.period_id === '1SEC')).toEqual(sec(gTables));
    expect(t.rejects).toEqual(gTables.rejects.filter((r) => Number(r.line) <= s.eventsRead));
    // From and to together.
    const both = await cliJson<Summary>(
      'replay',
      G.ndjson,
      '--db',
      p('fromto.sqlite'),
      '--from',
      FROM,
      '--to',
      '2024-03-01T04:04:00Z',
      '--json',
    );
    expect(both.lastTick).toBe(us('2024-03-01T04:04:00Z'));
    const r2 = dumpTables(p('fromto.sqlite')).rates as unknown as RateRow[];
    expect(r2.filter((r) => r.tick > FIRST)).toEqual(
      (gTables.rates as unknown as RateRow[]).filter((r) => r.tick > FIRST && r.tick <= us('2024-03-01T04:04:00Z')),
    );
  });
});

describe('xrate explain, periods, demo', () => {
  type Leg = {
    pair: string;
    rate: number;
    explanation: { used: { symbol_id: string; exchange_id: string; weight: number }[]; excluded: unknown[] };
  };
  type Explanation = { asset_id_base: string; asset_id_quote: string; kind: string; rate: number; path: string[]; legs: Leg[] };

  it('explain: legs with the markets used', async () => {
    const e = await cliJson<Explanation>('explain', G.ndjson, '--pair', 'LTC/BTC', '--at', '2024-03-01T04:04:00Z');
    expect(e.kind).toBe('cross');
    expect(e.legs.length).toBe(e.path.length - 1);
    for (const l of e.legs) {
      expect(l.explanation.used.length).toBeGreaterThan(0);
      for (const m of l.explanation.used) {
        expect(m.symbol_id).toMatch(/_SPOT_/);
        expect(m.weight).toBeGreaterThan(0);
      }
    }
    const d = await cliJson<Explanation>('explain', G.ndjson, '--pair', 'BTC/USD');
    expect(d.kind).toBe('direct');
    expect(d.legs).toHaveLength(1);
    expect(d.legs[0].explanation.used.length).toBeGreaterThan(0);
    // From the database: the state at the end of the replay, the same as the log's.
    expect(await cliJson<Explanation>('explain', GDB, '--pair', 'BTC/USD')).toEqual(d);
    const early = await cli('explain', GDB, '--pair', 'BTC/USD', '--at', '2024-03-01T04:00:00Z');
    expect(early.code).toBe(1);
    expect(early.err).toMatch(/explain an earlier time from the log/);
  });

  it('periods prints the 33 period records', async () => {
    const ps = await cliJson<{ period_id: string; length_seconds: number }[]>('periods');
    expect(ps).toHaveLength(33);
    expect(ps.map((x) => x.period_id)).toContain('1SEC');
    expect(ps.map((x) => x.period_id)).toContain('10DAY');
    expect((await cliJson<unknown[]>('periods', '--months')).length).toBeGreaterThan(33);
  });

  it('demo replays the bundled example and prints rates', async () => {
    const r = await cli('demo', '--db', p('demo-cmd.sqlite'));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/current rates at 2024-03-01T05:54:1\d\.0000000Z/);
    expect(r.out).toMatch(/SOL\/BTC = [0-9.]+ via SOL -> /);
    expect(dumpTables(p('demo-cmd.sqlite')).rates).toEqual(dumpTables(DEMO_DB).rates);
  });

  it('--help of every command exits 0', async () => {
    for (const c of ['replay', 'rate', 'history', 'explain', 'periods', 'demo']) {
      const r = await cli(c, '--help');
      expect(r.code, c).toBe(0);
      expect(r.out).toMatch(new RegExp(`^Usage: xrate ${c}`));
    }
    expect((await cli()).out).toMatch(/^xrate: /);
  });
});
