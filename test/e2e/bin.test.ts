/**
 * End-to-end tests of the real `xrate` executable (`node bin/xrate.js`, the compiled CLI) in
 * subprocesses: --help of every command, exit codes 0/1/2, output streams, and a replay that is
 * killed with SIGKILL and resumed from its last snapshot, which must give the same outputs as an
 * uninterrupted replay.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { BIN, bin, digestTables, ensureBuilt, firstDifference, query, SUMMARY_COUNTS, writeSmallLogs } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-bin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const p = (name: string): string => join(dir, name);
let small: { ndjson: string; csv: string; sqlite: string };

beforeAll(() => {
  ensureBuilt();
  small = writeSmallLogs(dir);
}, 180_000);

describe('node bin/xrate.js', () => {
  it('--help of every command: usage on stdout, exit 0', () => {
    for (const c of ['replay', 'rate', 'history', 'explain', 'periods', 'demo']) {
      const r = bin([c, '--help']);
      expect(r.status, `${c} --help: ${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: xrate ${c} `));
      expect(r.stderr).toBe('');
    }
    for (const argv of [['--help'], ['-h'], [], ['help', 'rate']]) {
      const r = bin(argv);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/Usage: xrate/);
    }
    const v = bin(['--version']);
    expect(v.status).toBe(0);
    expect(v.stdout).toBe('0.1.0\n');
  });

  it('exit 0: rate prints one JSON line on stdout and nothing on stderr', () => {
    const r = bin(['rate', small.ndjson, '--at', '2024-01-01T00:00:03Z', '--pair', 'BTC/USD', '--pair', 'ETH/BTC', '--pair', 'XRP/USD']);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      '[{"asset_id_base":"BTC","asset_id_quote":"USD","rate":102,"time":"2024-01-01T00:00:02.5000000Z"},' +
        '{"asset_id_base":"ETH","asset_id_quote":"BTC","rate":0.0980392156862745,"time":"2024-01-01T00:00:01.3000000Z"},' +
        '{"asset_id_base":"XRP","asset_id_quote":"USD","rate":null,"time":null}]\n',
    );
  });

  it('exit 0: replay prints a summary (or nothing with --quiet, or JSON with --json)', () => {
    const db = p('small.sqlite');
    const r = bin(['replay', small.csv, '--db', db]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`output: ${db}`);
    const q = bin(['replay', small.csv, '--db', db, '--quiet']);
    expect(q.status).toBe(0);
    expect(q.stdout).toBe('');
    const j = bin(['replay', small.csv, '--db', db, '--json']);
    expect(j.status).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({
      eventsRead: 13,
      eventsRejected: 3,
      rejectsByReason: { bad_json: 1, bad_size: 1, late: 1 },
    });
    const h = bin([
      'history',
      db,
      '--pair',
      'BTC/USD',
      '--period',
      '1MIN',
      '--from',
      '2024-01-01T00:00:00Z',
      '--to',
      '2024-01-01T00:01:00Z',
    ]);
    expect(h.status).toBe(0);
    expect(JSON.parse(h.stdout)).toEqual([
      {
        time_period_start: '2024-01-01T00:00:00.0000000Z',
        time_period_end: '2024-01-01T00:01:00.0000000Z',
        time_open: '2024-01-01T00:00:02.0000000Z',
        time_close: '2024-01-01T00:00:05.0000000Z',
        rate_open: 100,
        rate_high: 105,
        rate_low: 100,
        rate_close: 105,
      },
    ]);
  });

  it('exit 1: bad input that stops the run (missing file, CSV without "type", not a database)', () => {
    const missing = bin(['rate', p('missing.ndjson'), '--at', '2024-01-01T00:00:03Z', '--pair', 'BTC/USD']);
    expect(missing.status).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe(`xrate: cannot open "${p('missing.ndjson')}": no such file\n`);
    const csv = p('notype.csv');
    writeFileSync(csv, 'time,price\n2024-01-01T00:00:00Z,1\n');
    const c = bin(['replay', csv, '--db', p('notype.sqlite')]);
    expect(c.status).toBe(1);
    expect(c.stderr).toMatch(/^xrate: CSV header must include "type"/);
    const other = p('other.sqlite');
    const db = new Database(other);
    db.exec('CREATE TABLE t (x)');
    db.close();
    const o = bin([
      'history',
      other,
      '--pair',
      'BTC/USD',
      '--period',
      '1MIN',
      '--from',
      '2024-01-01T00:00:00Z',
      '--to',
      '2024-01-01T01:00:00Z',
    ]);
    expect(o.status).toBe(1);
    expect(o.stderr).toMatch(/no "events" table/);
  });

  it('exit 2: bad usage, the problem named on stderr', () => {
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /unknown command "frobnicate"/],
      [['rate', small.ndjson, '--at', '2024-01-01T00:00:03Z', '--pair', 'BTC/USD', '--bogus'], /--bogus/],
      [['rate', small.ndjson, '--at', 'noon', '--pair', 'BTC/USD'], /--at: not an ISO 8601 time: "noon"/],
      [['rate', small.ndjson, '--at', '2024-01-01T00:00:03Z', '--pair', 'BTC'], /--pair: "BTC" is not BASE\/QUOTE/],
      [
        ['history', small.ndjson, '--pair', 'BTC/USD', '--period', '1WEEK', '--from', '2024-01-01', '--to', '2024-01-02'],
        /unknown period id "1WEEK"/,
      ],
      [
        ['history', small.ndjson, '--pair', 'BTC/USD', '--period', '1MIN', '--from', '2024-01-01', '--to', '2024-01-02', '--limit', '0'],
        /--limit/,
      ],
      [
        [
          'history',
          small.ndjson,
          '--pair',
          'BTC/USD',
          '--period',
          '1MIN',
          '--from',
          '2024-01-01',
          '--to',
          '2024-01-02',
          '--limit',
          '100001',
        ],
        /--limit/,
      ],
    ];
    for (const [argv, msg] of cases) {
      const r = bin(argv);
      expect(r.status, argv.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^xrate: /);
      expect(r.stderr).toMatch(msg);
    }
  });
});

describe('resume after a kill', () => {
  it('a replay killed with SIGKILL and resumed from its snapshot writes the same outputs as an uninterrupted one', async () => {
    // 600k events over 3h20m of event time (about 4 s to replay), crossing the 04:00 refresh.
    const log = p('resume.ndjson');
    await writeLog(log, { seed: 3, events: 600_000, badRate: 0.001, lateRate: 0.002, start: '2024-03-01T03:30:00Z', rate: 50 });
    const ref = p('ref.sqlite');
    const full = bin(['replay', log, '--db', ref, '--json'], { timeout: 120_000 });
    expect(full.status, full.stderr).toBe(0);
    const refSummary = JSON.parse(full.stdout) as Record<string, unknown>;
    expect(refSummary.rateChanges).toBeGreaterThan(10_000);

    // Start the replay, wait for a snapshot some way in, kill it.
    const db = p('killed.sqlite');
    const args = ['replay', log, '--db', db, '--snapshot-every', '10m', '--quiet'];
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    let done = false;
    void exited.then(() => (done = true));
    let snapLine = 0;
    const started = Date.now();
    while (!done && Date.now() - started < 60_000) {
      await new Promise((r) => setTimeout(r, 20));
      if (!existsSync(db)) continue;
      try {
        const s = query<{ line: number | null }>(db, 'SELECT max(line) AS line FROM snapshots WHERE final = 0')[0];
        if (s.line !== null && s.line >= 100_000) {
          snapLine = s.line;
          child.kill('SIGKILL');
          break;
        }
      } catch {
        // The schema is not there yet.
      }
    }
    const ex = await exited;
    expect(ex.signal, `the replay ended before it could be killed (exit ${ex.code}): ${stderr}`).toBe('SIGKILL');
    expect(snapLine).toBeGreaterThanOrEqual(100_000);
    // The database holds a consistent prefix: no final snapshot, the run still marked running.
    expect(query(db, 'SELECT 1 FROM snapshots WHERE final = 1')).toEqual([]);
    expect(query<{ status: string }>(db, 'SELECT status FROM runs ORDER BY id DESC LIMIT 1')[0].status).toBe('running');
    const partial = digestTables(db);
    const want = digestTables(ref);
    expect(partial.rates.rows).toBeGreaterThan(0);
    expect(partial.rates.rows).toBeLessThan(want.rates.rows);
    // Queries refuse the partial tables of the killed run rather than answer from them.
    const refused = bin(['rate', db, '--at', '2024-03-01T03:00:00Z', '--pair', 'BTC/USD']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /holds the partial outputs of replay run \d+, which did not complete \(status "killed \(its process \d+ is gone\)": /,
    );

    // Resume: the same outputs as the uninterrupted replay.
    const res = bin(['replay', log, '--db', db, '--resume', '--snapshot-every', '10m', '--json'], { timeout: 120_000 });
    expect(res.status, res.stderr).toBe(0);
    const s = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(s.resumed).toBe(true);
    // Opening the database to resume marked the killed run.
    expect(query<{ status: string }>(db, 'SELECT status FROM runs ORDER BY id').map((r) => r.status)).toEqual(['killed', 'complete']);
    for (const k of SUMMARY_COUNTS) expect(s[k], k).toEqual(refSummary[k]);
    const got = digestTables(db);
    for (const t of ['rates', 'ohlc', 'series', 'rejects'] as const) {
      if (got[t].sha256 !== want[t].sha256) expect.fail(`resumed ${t} differ from the reference: ${firstDifference(db, ref, t)}`);
      expect(got[t]).toEqual(want[t]);
    }
    expect(want.ohlc.rows).toBeGreaterThan(5_000);
    expect(want.series.rows).toBeGreaterThan(10);
    expect(want.rejects.rows).toBeGreaterThan(1000);
    // Queries on the resumed database answer as on the reference.
    const q = ['--at', '2024-03-01T05:00:00Z', '--pair', 'BTC/USD', '--pair', 'SOL/BTC'];
    expect(bin(['rate', db, ...q]).stdout).toBe(bin(['rate', ref, ...q]).stdout);

    // Resuming a complete replay changes nothing.
    const again = bin(['replay', log, '--db', db, '--resume']);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/nothing to resume: the replay into .* is already complete/);
    expect(digestTables(db)).toEqual(got);
  }, 150_000);
});
