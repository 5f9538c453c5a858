/**
 * Shared helpers of the end-to-end tests: an in-process CLI runner with captured output, a
 * subprocess runner of `bin/xrate.js`, a small hand-written log in the three input formats,
 * and dumps of the replay database's output tables.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { run } from '../../src/cli/main.js';
import { parseTime } from '../../src/core/time.js';
import { COMPARED_TABLES, compareReplays } from '../../src/io/compareReplays.js';
import { capturedIo } from '../helpers/io.js';
import { type BinProcess, binStartAt } from '../helpers/process.js';

export type { BinProcess } from '../helpers/process.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'xrate.js');
/** The command npm links as `xrate` (a shell script that runs {@link BIN} in Node). */
export const COMMAND = join(ROOT, 'bin', 'xrate');
export const DEMO = join(ROOT, 'fixtures', 'demo', 'demo.ndjson.gz');

/** What one CLI run printed, and its exit code. */
export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI in-process (`run(argv, io)`), capturing stdout and stderr. */
export async function cli(...argv: string[]): Promise<CliResult> {
  const io = capturedIo();
  const code = await run(argv, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

/** Runs the CLI in-process and parses stdout as JSON (fails the test on a non-zero exit). */
export async function cliJson<T = unknown>(...argv: string[]): Promise<T> {
  const r = await cli(...argv);
  if (r.code !== 0) throw new Error(`xrate ${argv.join(' ')} exited ${r.code}: ${r.err}`);
  return JSON.parse(r.out) as T;
}

/** Runs `node bin/xrate.js ...argv` in a subprocess (`env`: added to this process's environment). */
export function bin(argv: string[], opts: { timeout?: number; env?: Record<string, string> } = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BIN, ...argv], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: opts.timeout ?? 60_000,
    env: opts.env && { ...process.env, ...opts.env },
  });
}

/** Starts `node bin/xrate.js ...argv` without waiting for it (`env`: added to this process's environment). */
export function binStart(argv: string[], env?: Record<string, string>): BinProcess {
  return binStartAt(BIN, ROOT, argv, env);
}

/** Row counts of the output tables, asserting first that `db` equals `want` in every one, row for row (compareReplays). */
export function expectSameOutputs(db: string, want: string, tables?: readonly string[]): Record<string, number> {
  const compared = compareReplays(want, db, { tables });
  expect(compared.map((t) => t.table)).toEqual(tables ?? COMPARED_TABLES);
  for (const t of compared) {
    expect(t.difference, t.table).toBeUndefined();
    expect(t.rows[1], t.table).toBe(t.rows[0]);
  }
  return Object.fromEntries(compared.map((t) => [t.table, t.rows[0]]));
}

/** The fields of a replay summary that two replays of one log share, however they ran (serial, resumed, partitioned). */
export const SUMMARY_COUNTS = [
  'eventsRead',
  'eventsAccepted',
  'eventsRejected',
  'rejectsByReason',
  'quotesDiscarded',
  'ticks',
  'firstTick',
  'lastTick',
  'pairsWithRate',
  'rateChanges',
  'buckets',
] as const;

function newestMtime(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * Makes sure dist/ (run by bin/xrate.js) is at least as new as src/: rebuilds with tsc (what
 * `npm run build` runs) when it is not. A lock directory keeps test files that run in parallel
 * from building at the same time.
 */
export function ensureBuilt(): void {
  const main = join(ROOT, 'dist', 'cli', 'main.js');
  const fresh = (): boolean => existsSync(main) && newestMtime(join(ROOT, 'dist')) >= newestMtime(join(ROOT, 'src'));
  if (fresh()) return;
  const lock = join(tmpdir(), `xrate-e2e-build-${createHash('sha1').update(ROOT).digest('hex').slice(0, 12)}.lock`);
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another test file is building: wait for it (or for a stale lock to age out).
      const st = statSync(lock, { throwIfNoEntry: false });
      if (Date.now() > deadline || (st && Date.now() - st.mtimeMs > 120_000)) break;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
      if (!existsSync(lock) && fresh()) return;
    }
  }
  try {
    if (fresh()) return;
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    // tsc still emits JavaScript on type errors (noEmitOnError is off): a type error elsewhere in
    // src/ (work in progress) should not stop the CLI tests, so only report it.
    if (r.status !== 0) console.warn(`e2e: npm run build reported errors (dist was emitted anyway):\n${r.stdout}${r.stderr}`);
    if (!existsSync(main)) throw new Error(`e2e: ${main} is missing after the build: run npm run build`);
  } finally {
    try {
      rmdirSync(lock);
    } catch {
      /* already gone */
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A small hand-written log.

/** Columns of the small log's CSV and SQLite versions. */
export const SMALL_COLUMNS = [
  'type',
  'time',
  'exchange_id',
  'legitimate',
  'rank',
  'symbol_id',
  'symbol_type',
  'asset_id_base',
  'asset_id_quote',
  'symbol_id_exchange',
  'bid_price',
  'bid_size',
  'ask_price',
  'ask_size',
  'price',
  'size',
] as const;

type Row = Record<string, string | number | boolean> | { broken: string };

const D = '2024-01-01T00:00:';
/**
 * The small log, one entry per line. Line 5 is not JSON, line 9 has a negative size, line 11 is
 * 1 s late (its time is before the tick of 00:00:02, computed when line 10 was applied). BTC/USD
 * trades on a market named `BN-BTC-USD`, known only from its `symbol` event (line 3), whose
 * `symbol_id_exchange` holds a comma (quoted in CSV). ETH/USD trades on `KRAKEN_SPOT_ETH_USD`,
 * known from its id. Trades come before T0 = 00:00:01, so both markets are eligible from T0 on.
 */
export const SMALL_ROWS: Row[] = [
  { type: 'exchange', time: `${D}00.1Z`, exchange_id: 'BINANCE', legitimate: true, rank: 1 },
  { type: 'exchange', time: `${D}00.1Z`, exchange_id: 'KRAKEN', legitimate: true, rank: 1 },
  {
    type: 'symbol',
    time: `${D}00.2Z`,
    symbol_id: 'BN-BTC-USD',
    exchange_id: 'BINANCE',
    symbol_type: 'SPOT',
    asset_id_base: 'BTC',
    asset_id_quote: 'USD',
    symbol_id_exchange: 'BTC,USD',
  },
  { type: 'trade', time: `${D}00.5Z`, symbol_id: 'BN-BTC-USD', price: 100, size: 1 },
  { broken: '{"type":"trade", this is not json' },
  { type: 'trade', time: `${D}00.6Z`, symbol_id: 'KRAKEN_SPOT_ETH_USD', price: 10, size: 2 },
  { type: 'quote', time: `${D}01.2Z`, symbol_id: 'BN-BTC-USD', bid_price: 99, bid_size: 1, ask_price: 101, ask_size: 1 },
  { type: 'quote', time: `${D}01.3Z`, symbol_id: 'KRAKEN_SPOT_ETH_USD', bid_price: 9.9, bid_size: 2, ask_price: 10.1, ask_size: 2 },
  { type: 'trade', time: `${D}01.4Z`, symbol_id: 'BN-BTC-USD', price: 100, size: -1 },
  { type: 'quote', time: `${D}02.5Z`, symbol_id: 'BN-BTC-USD', bid_price: 101, bid_size: 1, ask_price: 103, ask_size: 1 },
  { type: 'quote', time: `${D}01.5Z`, symbol_id: 'KRAKEN_SPOT_ETH_USD', bid_price: 19.9, bid_size: 2, ask_price: 20.1, ask_size: 2 },
  { type: 'quote', time: `${D}03.1Z`, symbol_id: 'KRAKEN_SPOT_ETH_USD', bid_price: 10.9, bid_size: 2, ask_price: 11.1, ask_size: 2 },
  { type: 'quote', time: `${D}04.7Z`, symbol_id: 'BN-BTC-USD', bid_price: 104, bid_size: 1, ask_price: 106, ask_size: 1 },
];

/** The NDJSON text of {@link SMALL_ROWS}. */
export function smallNdjson(): string {
  return `${SMALL_ROWS.map((r) => ('broken' in r ? (r.broken as string) : JSON.stringify(r))).join('\n')}\n`;
}

function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** The CSV text of {@link SMALL_ROWS} (header on line 1; the broken line is a malformed row). */
export function smallCsv(): string {
  const lines = [SMALL_COLUMNS.join(',')];
  for (const r of SMALL_ROWS) {
    if ('broken' in r) lines.push(`"${(r.broken as string).replace(/"/g, '""')}"!${','.repeat(SMALL_COLUMNS.length - 1)}`);
    else lines.push(SMALL_COLUMNS.map((c) => (r[c] === undefined ? '' : csvField(String(r[c])))).join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** Writes {@link SMALL_ROWS} as a SQLite `events` table (the broken line: its text as `type`). */
export function writeSmallSqlite(path: string): void {
  const db = new Database(path);
  try {
    db.exec(`CREATE TABLE events (${SMALL_COLUMNS.map((c) => `"${c}" TEXT`).join(', ')})`);
    const ins = db.prepare(`INSERT INTO events VALUES (${SMALL_COLUMNS.map(() => '?').join(', ')})`);
    for (const r of SMALL_ROWS) {
      if ('broken' in r) ins.run(r.broken, ...SMALL_COLUMNS.slice(1).map(() => null));
      else ins.run(...SMALL_COLUMNS.map((c) => (r[c] === undefined ? null : String(r[c]))));
    }
  } finally {
    db.close();
  }
}

/** Writes the small log in every format into `dir`; returns the paths. */
export function writeSmallLogs(dir: string): { ndjson: string; csv: string; sqlite: string } {
  const ndjson = join(dir, 'small.ndjson');
  const csv = join(dir, 'small.csv');
  const sqlite = join(dir, 'small.sqlite');
  writeFileSync(ndjson, smallNdjson());
  writeFileSync(csv, smallCsv());
  writeSmallSqlite(sqlite);
  return { ndjson, csv, sqlite };
}

// ---------------------------------------------------------------------------------------------
// The replay database's outputs.

export const RATE_COLS = 'tick, base, quote, rate, time, rank, used, fresh';
export const OHLC_COLS = 'base, quote, period_id, start, "end", time_open, time_close, open, high, low, close, count';
export const REJECT_COLS = 'input, source, line, reason, message, raw';
export const SERIES_COLS = 'base, quote, tick, rate, follow';

/** Canonical reads of the output tables (every column but `batch`). */
const CANONICAL = {
  rates: `SELECT ${RATE_COLS} FROM rates ORDER BY tick, base, quote, rowid`,
  ohlc: `SELECT ${OHLC_COLS} FROM ohlc ORDER BY base, quote, period_id, start`,
  series: `SELECT ${SERIES_COLS} FROM series ORDER BY base, quote, tick`,
  rejects: `SELECT ${REJECT_COLS} FROM rejects ORDER BY input, line, rowid`,
} as const;

/** The output tables of a replay database (every column but `batch`), in a canonical order. */
export interface Tables {
  rates: Record<string, unknown>[];
  ohlc: Record<string, unknown>[];
  /** The tracked pairs' OHLC change series. */
  series: Record<string, unknown>[];
  rejects: Record<string, unknown>[];
}

/** Reads the rates, ohlc, series and rejects tables (without `batch`). */
export function dumpTables(path: string): Tables {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return {
      rates: db.prepare(CANONICAL.rates).all() as Record<string, unknown>[],
      ohlc: db.prepare(CANONICAL.ohlc).all() as Record<string, unknown>[],
      series: db.prepare(CANONICAL.series).all() as Record<string, unknown>[],
      rejects: db.prepare(CANONICAL.rejects).all() as Record<string, unknown>[],
    };
  } finally {
    db.close();
  }
}

/** Row count and SHA-256 of one output table (every column but `batch`, canonical order). */
export interface TableDigest {
  rows: number;
  sha256: string;
}

/**
 * Digests of the rates, ohlc, series and rejects tables: a cheap way to compare large databases (loading
 * and deep-comparing hundreds of thousands of rows is slow). Use {@link firstDifference} to say
 * where two differ.
 */
export function digestTables(path: string): Record<keyof Tables, TableDigest> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const out = {} as Record<keyof Tables, TableDigest>;
    for (const [name, sql] of Object.entries(CANONICAL) as [keyof Tables, string][]) {
      const h = createHash('sha256');
      let rows = 0;
      for (const r of db.prepare(sql).raw(true).iterate()) {
        h.update(JSON.stringify(r));
        h.update('\n');
        rows++;
      }
      out[name] = { rows, sha256: h.digest('hex') };
    }
    return out;
  } finally {
    db.close();
  }
}

/** The first row where `table` differs between two databases (for failure messages). */
export function firstDifference(a: string, b: string, table: keyof Tables): string | undefined {
  const da = new Database(a, { readonly: true, fileMustExist: true });
  const db = new Database(b, { readonly: true, fileMustExist: true });
  try {
    const ia = da.prepare(CANONICAL[table]).raw(true).iterate() as IterableIterator<unknown[]>;
    const ib = db.prepare(CANONICAL[table]).raw(true).iterate() as IterableIterator<unknown[]>;
    for (let i = 0; ; i++) {
      const x = ia.next();
      const y = ib.next();
      if (x.done && y.done) return undefined;
      const sx = x.done ? '(end)' : JSON.stringify(x.value);
      const sy = y.done ? '(end)' : JSON.stringify(y.value);
      if (sx !== sy) {
        ia.return?.();
        ib.return?.();
        return `${table} row ${i}: ${sx} vs ${sy}`;
      }
    }
  } finally {
    da.close();
    db.close();
  }
}

/** Runs one query against a replay database (read-only). */
export function query<T = Record<string, unknown>>(path: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** ISO time with exactly 7 fractional digits, as the CLI prints it. */
export const TIME7 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/;

/** µs since the epoch of an ISO time. */
export function us(iso: string): number {
  const t = parseTime(iso);
  if (t === undefined) throw new Error(`bad time ${iso}`);
  return t;
}
