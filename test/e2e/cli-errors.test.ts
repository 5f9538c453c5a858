/**
 * End-to-end tests of the `xrate` CLI, in-process through `run(argv, io)`: bad usage and bad
 * input exit codes and messages, and replay databases that fail, differ in config or do not cover
 * the time asked for. The query contracts are in cli.test.ts.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, DEMO, query, writeSmallLogs } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-cli-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const p = (name: string): string => join(dir, name);

/** The demo replayed into a database. */
const DEMO_DB = p('demo.sqlite');
let small: { ndjson: string; csv: string; sqlite: string };

beforeAll(async () => {
  small = writeSmallLogs(dir);
  const d = await cli('replay', DEMO, '--db', DEMO_DB, '--quiet');
  expect(d.code).toBe(0);
}, 120_000);

const DEMO_AT = '2024-03-01T04:30:20.7Z';

describe('exit codes and messages', () => {
  const L = (): string => small.ndjson;
  const H = ['--pair', 'BTC/USD', '--period', '1SEC', '--from', '2024-01-01T00:00:00Z', '--to', '2024-01-01T00:01:00Z'];

  it.each([
    ['unknown command', ['frobnicate'], /unknown command "frobnicate"/],
    ['unknown flag', ['rate', '@L', '--at', '2024-01-01T00:00:03Z', '--pair', 'BTC/USD', '--bogus'], /--bogus/],
    ['bad --at', ['rate', '@L', '--at', 'yesterday', '--pair', 'BTC/USD'], /--at: not an ISO 8601 time: "yesterday"/],
    ['missing --at', ['rate', '@L', '--pair', 'BTC/USD'], /missing --at/],
    ['bad --pair', ['rate', '@L', '--at', '2024-01-01T00:00:03Z', '--pair', 'BTCUSD'], /--pair: "BTCUSD" is not BASE\/QUOTE/],
    ['bad --pair (3 parts)', ['rate', '@L', '--at', '2024-01-01T00:00:03Z', '--pair', 'BTC/USD/EUR'], /--pair: "BTC\/USD\/EUR"/],
    ['missing --pair', ['rate', '@L', '--at', '2024-01-01T00:00:03Z'], /missing --pair/],
    ['missing LOG', ['rate', '--at', '2024-01-01T00:00:03Z', '--pair', 'BTC/USD'], /missing LOG/],
    ['unknown period', ['history', '@L', ...H.map((x) => (x === '1SEC' ? '7MIN' : x))], /--period: unknown period id "7MIN"/],
    ['--limit 0', ['history', '@L', ...H, '--limit', '0'], /--limit must be an integer in 1\.\.100000, got "0"/],
    ['--limit 100001', ['history', '@L', ...H, '--limit', '100001'], /--limit must be an integer in 1\.\.100000, got "100001"/],
    ['--limit 1.5', ['history', '@L', ...H, '--limit', '1.5'], /--limit/],
    [
      '--to before --from',
      ['history', '@L', '--pair', 'BTC/USD', '--period', '1SEC', '--from', '2024-01-01T00:01:00Z', '--to', '2024-01-01T00:00:00Z'],
      /--to must be after --from/,
    ],
    ['replay: bad --from', ['replay', '@L', '--db', '@D', '--from', '2024-13-01'], /--from: not an ISO 8601 time/],
    ['replay: unknown --periods', ['replay', '@L', '--db', '@D', '--periods', '1SEC,7SEC'], /--periods: unknown period id "7SEC"/],
    ['replay: bad --out', ['replay', '@L', '--out', '@D'], /--out must name a \.ndjson, \.csv or \.parquet file/],
    ['replay: bad --batch-size', ['replay', '@L', '--db', '@D', '--batch-size', '0'], /--batch-size/],
    ['replay: --threads 0', ['replay', '@L', '--db', '@D', '--threads', '0'], /--threads must be a whole number from 1 to 256, got "0"/],
    [
      'replay: bad --threads',
      ['replay', '@L', '--db', '@D', '--threads', 'many'],
      /--threads must be a whole number from 1 to 256, got "many"/,
    ],
    ['replay: bad --reorder-window', ['replay', '@L', '--db', '@D', '--reorder-window', 'soon'], /--reorder-window: not a duration/],
    [
      'bad --format',
      ['rate', '@L', '--at', '2024-01-01T00:00:03Z', '--pair', 'BTC/USD', '--format', 'xml'],
      /--format must be ndjson, csv, sqlite, coinapi, tardis or parquet, got "xml"/,
    ],
    ['periods: positional', ['periods', 'extra'], /extra/],
    [
      'serve: bad --heavy-concurrency',
      ['serve', '--db', '@D', '--heavy-concurrency', '0'],
      /--heavy-concurrency must be an integer in 1\.\.10000, got "0"/,
    ],
  ])('bad usage: %s → exit 2, the problem named on stderr', async (_name, argv, msg) => {
    const args = argv.map((a) => (a === '@L' ? L() : a === '@D' ? p('usage.sqlite') : a));
    const r = await cli(...args);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^xrate: /);
    expect(r.err).toMatch(msg);
  });

  it('a missing file → exit 1', async () => {
    const missing = p('nope.ndjson');
    for (const argv of [
      ['replay', missing, '--db', p('m.sqlite')],
      ['rate', missing, '--at', '2024-01-01T00:00:03Z', '--pair', 'BTC/USD'],
      ['history', missing, '--pair', 'BTC/USD', '--period', '1MIN', '--from', '2024-01-01T00:00:00Z', '--to', '2024-01-01T01:00:00Z'],
      ['explain', missing, '--pair', 'BTC/USD'],
    ]) {
      const r = await cli(...argv);
      expect(r.code, argv[0]).toBe(1);
      expect(r.err).toBe(`xrate: cannot open "${missing}": no such file\n`);
    }
  });

  it('a CSV without a "type" column → exit 1', async () => {
    const csv = p('notype.csv');
    writeFileSync(csv, 'time,symbol_id,price,size\n2024-01-01T00:00:00Z,X_SPOT_A_B,1,1\n');
    const r = await cli('replay', csv, '--db', p('notype.sqlite'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/CSV header must include "type"/);
    const q = await cli('rate', csv, '--at', '2024-01-01T00:00:03Z', '--pair', 'BTC/USD');
    expect(q.code).toBe(1);
    expect(q.err).toMatch(/CSV header must include "type"/);
  });

  it('a SQLite file that is neither an event log nor a replay database → exit 1', async () => {
    const f = p('other.sqlite');
    const db = new Database(f);
    db.exec('CREATE TABLE t (x)');
    db.close();
    const r = await cli('rate', f, '--at', '2024-01-01T00:00:03Z', '--pair', 'BTC/USD');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/no "events" table/);
  });

  it('--resume without a snapshot, or snapshots without --db → exit 1 with a message', async () => {
    const r = await cli('replay', L(), '--db', p('nosnap.sqlite'), '--resume');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/nothing to resume/);
    const s = await cli('replay', L(), '--out', p('x.ndjson'), '--snapshot-every', '10m');
    expect(s.code).not.toBe(0);
    expect(s.err).toMatch(/need the SQLite output/);
  });

  it('a replay database copied elsewhere still answers (it is self-contained)', async () => {
    const copy = p('copy.sqlite');
    copyFileSync(DEMO_DB, copy);
    const args = ['--at', DEMO_AT, '--pair', 'BTC/USD'];
    expect((await cli('rate', copy, ...args)).out).toBe((await cli('rate', DEMO_DB, ...args)).out);
  });
});

describe('replay databases: failures, configs and coverage', () => {
  it('a replay whose input turns out unreadable leaves the previous outputs in place', async () => {
    const db = p('keep.sqlite');
    expect((await cli('replay', DEMO, '--db', db, '--quiet')).code).toBe(0);
    const args = ['--at', DEMO_AT, '--pair', 'BTC/USD'];
    const before = (await cli('rate', db, ...args)).out;
    expect(JSON.parse(before)[0].rate).toEqual(expect.any(Number));
    const bad = p('no-type.csv');
    writeFileSync(bad, 'time,symbol_id\n2024-01-01T00:00:00Z,X\n');
    const r = await cli('replay', bad, '--db', db);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/CSV header must include "type"/);
    expect((await cli('rate', db, ...args)).out).toBe(before);
    const runs = query<{ status: string }>(db, 'SELECT status FROM runs ORDER BY id');
    expect(runs.map((x) => x.status)).toEqual(['complete', expect.stringMatching(/^failed: CSV header must include "type"/)]);
  });

  it('a replay that fails after it began writing leaves a database that answers nothing, not the old run mixed with the new', async () => {
    const db = p('broken.sqlite');
    expect((await cli('replay', DEMO, '--db', db, '--quiet')).code).toBe(0);
    // The demo log, gzipped, with its bytes from 70 % on replaced: the gzip stream breaks after
    // many batches were written.
    const gz = readFileSync(DEMO);
    const cut = Math.floor(gz.length * 0.7);
    const broken = p('broken.ndjson.gz');
    writeFileSync(broken, Buffer.concat([gz.subarray(0, cut), Buffer.alloc(gz.length - cut, 0x41)]));
    const r = await cli('replay', broken, '--db', db, '--quiet');
    expect(r.code).toBe(1);
    // The error names the input and where in it the gzip data broke.
    expect(r.err).toMatch(
      /^xrate: cannot read ".*broken\.ndjson\.gz" \(gzip data broken near byte \d+ of the file, after \d+ bytes of text\): /,
    );
    const runs = query<{ id: number; status: string }>(db, 'SELECT id, status FROM runs ORDER BY id');
    expect(runs.map((x) => x.status)).toEqual(['complete', expect.stringMatching(/^failed: /)]);
    const msg = /holds the partial outputs of replay run 2, which did not complete \(status "failed: /;
    for (const args of [
      ['rate', db, '--at', DEMO_AT, '--pair', 'BTC/USD'],
      ['history', db, '--pair', 'BTC/USD', '--period', '1MIN', '--from', '2024-03-01T04:00:00Z', '--to', '2024-03-01T04:10:00Z'],
      ['explain', db, '--pair', 'BTC/USD'],
      ['serve', '--db', db, '--port', '0'],
    ]) {
      const q = await cli(...args);
      expect(q.code, args.join(' ')).toBe(1);
      expect(q.err).toMatch(msg);
    }
    // A complete replay makes it answer again.
    expect((await cli('replay', DEMO, '--db', db, '--quiet')).code).toBe(0);
    expect(JSON.parse((await cli('rate', db, '--at', DEMO_AT, '--pair', 'BTC/USD')).out)[0].rate).toEqual(expect.any(Number));
  });

  it('with the layered cross method, a database gives the same cross rates as the log', async () => {
    const cfg = p('layered.json');
    writeFileSync(cfg, JSON.stringify({ crossMethod: 'layered' }));
    const db = p('layered.sqlite');
    expect((await cli('replay', DEMO, '--db', db, '--config', cfg, '--quiet')).code).toBe(0);
    for (const at of ['2024-03-01T04:30:20Z', '2024-03-01T05:10:00.5Z']) {
      const args = ['--at', at, '--pair', 'SOL/BTC', '--pair', 'ADA/EUR', '--pair', 'BTC/USD'];
      const fromLog = await cli('rate', DEMO, ...args, '--config', cfg);
      expect(fromLog.code).toBe(0);
      expect((await cli('rate', db, ...args)).out, at).toBe(fromLog.out);
    }
  });

  it('--config with a database is bad usage (the database answers with its own config)', async () => {
    const cfg = p('layered2.json');
    writeFileSync(cfg, JSON.stringify({ crossMethod: 'layered' }));
    const r = await cli('rate', DEMO_DB, '--at', DEMO_AT, '--pair', 'BTC/USD', '--config', cfg);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--config applies when replaying a log/);
  });

  it('times a database does not cover are refused, naming the covered span', async () => {
    const db = p('window.sqlite');
    expect((await cli('replay', DEMO, '--db', db, '--from', '2024-03-01T04:30:00Z', '--to', '2024-03-01T05:00:00Z', '--quiet')).code).toBe(
      0,
    );
    const early = await cli('rate', db, '--at', '2024-03-01T04:10:00Z', '--pair', 'BTC/USD');
    expect(early.code).toBe(1);
    expect(early.err).toMatch(/has output from 2024-03-01T04:30:00.0000000Z on/);
    const late = await cli('rate', db, '--at', '2024-03-01T05:20:00Z', '--pair', 'BTC/USD');
    expect(late.code).toBe(1);
    expect(late.err).toMatch(/covers its log only up to 2024-03-01T05:00:00.0000000Z/);
    const inside = ['--at', '2024-03-01T04:45:00Z', '--pair', 'BTC/USD', '--pair', 'SOL/BTC'];
    expect((await cli('rate', db, ...inside)).out).toBe((await cli('rate', DEMO, ...inside)).out);
  });

  it('--db with --out, and snapshots with --out, are bad usage', async () => {
    const both = await cli('replay', DEMO, '--db', p('x.sqlite'), '--out', p('x.ndjson'));
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/either --db .* or --out/);
    const snap = await cli('replay', DEMO, '--out', p('y.ndjson'), '--snapshot-every', '10m');
    expect(snap.code).toBe(2);
    expect(snap.err).toMatch(/--snapshot-every and --resume need the SQLite output/);
  });
});

describe('times far after the end of a replay database', () => {
  it('rate --at years ahead answers at once, as the log would: every rate expired (rule 13), identities only', async () => {
    const far = await cli('rate', DEMO_DB, '--at', '2200-01-01T00:00:00Z', '--pair', 'BTC/USD', '--pair', 'BTC/BTC');
    expect(far.code).toBe(0);
    expect(JSON.parse(far.out)).toEqual([
      { asset_id_base: 'BTC', asset_id_quote: 'USD', rate: null, time: null },
      { asset_id_base: 'BTC', asset_id_quote: 'BTC', rate: 1, time: '2200-01-01T00:00:00.0000000Z' },
    ]);
    // Just past the expiry of the last rates (the demo's last tick is 05:54:11, maxRateAge 24 h):
    // the database's shortcut and the log's engine, which computes every tick, agree.
    const at = '2024-03-02T05:54:13Z';
    const args = ['--at', at, '--pair', 'BTC/USD', '--pair', 'SOL/BTC', '--pair', 'ETH/ETH'];
    const fromDb = await cli('rate', DEMO_DB, ...args);
    const fromLog = await cli('rate', DEMO, ...args);
    expect(fromDb.code).toBe(0);
    expect(fromDb.out).toBe(fromLog.out);
    expect(JSON.parse(fromDb.out)[2]).toEqual({
      asset_id_base: 'ETH',
      asset_id_quote: 'ETH',
      rate: 1,
      time: '2024-03-02T05:54:13.0000000Z',
    });
  });
});
