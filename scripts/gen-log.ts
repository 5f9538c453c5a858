/**
 * Seeded generator of realistic synthetic event logs in xrate's event format
 * (docs/methodology.md section 1), as a library and as a CLI.
 *
 * ```
 * npx tsx scripts/gen-log.ts --seed 1 --events 1000000 --out out/log.ndjson \
 *   [--exchanges 8] [--assets 12] [--start 2024-03-01T00:00:00Z] [--rate 20 | --duration 3h] \
 *   [--format ndjson|csv|sqlite] [--bad-rate 0.001] [--late-rate 0.0005] [--string-rate 0.05]
 * ```
 * (`--out` ending in `.gz` gzips NDJSON and CSV; the format defaults from the name.)
 *
 * The model (all of it deterministic from the seed; the PRNG is xoshiro128**, no Math.random):
 * - Assets: the quote currencies USD, USDT, EUR (and BTC, which is also a base) plus base assets
 *   (ETH, SOL, XRP, ...). Each asset has one true USD price: BTC/USD is a geometric random walk,
 *   every other crypto asset is BTC/USD times its own random walk against BTC (so assets are
 *   correlated), and USDT and EUR mean-revert around 1.0003 and 1.085. Every market's fair price
 *   is a ratio of these, so cross rates are consistent.
 * - Exchanges (BINANCE, COINBASE, KRAKEN, ...) each list a subset of pairs in their own quote
 *   currencies, with three rank levels (KRAKEN rank 2; most rank 1; small ones rank 0). One
 *   exchange (OKX when there are at least 5) quotes about 2% above the fair price: an outlier
 *   candidate. One exchange (the last) has `legitimate: false`. With at least 4 exchanges and an
 *   expected span over an hour, BITSTAMP is marked not legitimate for 15 minutes at 55% of the
 *   span (a kill switch).
 * - Markets quote around the fair price with their own spread (1-30 bp, wider for small pairs),
 *   a small mean-reverting deviation and lognormal sizes, rounded to a tick and lot size that
 *   suit the price level; most book updates change one side only. Trades hit the bid or the ask. Events arrive as a Poisson process of
 *   `rate` events per second overall, split over markets by activity (some markets are sparse);
 *   every market falls silent now and then for 2 to 12 minutes (stale stretches).
 * - Timestamps have 7 fractional digits, at the exchange's precision (ms, µs or 100 ns), never
 *   decreasing except for the deliberate late lines.
 * - `exchange` events, and `symbol` events for about 85% of the markets, come first; the other
 *   markets are known only from their `{EXCH}_SPOT_{BASE}_{QUOTE}` id. One market is listed
 *   partway through (its `symbol` event comes then). Two PERP markets quote too (never used for
 *   rates), one with a `symbol` event and one known from its id.
 * - Numbers are JSON numbers, or decimal strings for KRAKEN and for `stringRate` of other lines.
 * - With `badRate` > 0 that fraction of lines is bad: invalid JSON, negative size, zero price,
 *   missing field, unknown type, bad time, unknown symbol, crossed book, spread > 67%. With
 *   `lateRate` > 0 that fraction of lines has a time 2 to 60 s earlier than the clock.
 *
 * The three output formats carry the same rows. A line that is invalid JSON in NDJSON is written
 * to CSV as a malformed row (a closing quote followed by `!`), which the CSV reader reports as
 * unreadable, and to SQLite as a row whose `type` column holds the broken text (an unknown type).
 *
 * @module
 */

import { createWriteStream, statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createGzip } from 'node:zlib';
import type { Writable } from 'node:stream';
import { COLUMNS, type GenOptions } from './gen-log/columns.js';
import { CSV_HEADER, rowToCsv, rowToNdjson } from './gen-log/format.js';
import { generateRows } from './gen-log/model.js';

export { COLUMNS, type Column, type GenOptions, type GenRow } from './gen-log/columns.js';
export { Rng } from './gen-log/rng.js';
export { generateRows } from './gen-log/model.js';

export { CSV_HEADER, rowToCsv, rowToNdjson } from './gen-log/format.js';

/**
 * The log as NDJSON lines (without newlines), deterministic from `opts.seed`.
 *
 * @example
 * ```ts
 * const lines = [...generateLog({ seed: 1, events: 1000, badRate: 0.01 })];
 * ```
 */
export function* generateLog(opts: GenOptions): Generator<string> {
  for (const row of generateRows(opts)) yield rowToNdjson(row);
}

/** Output formats of {@link writeLog}. */
export type LogFormat = 'ndjson' | 'csv' | 'sqlite';

/** What {@link writeLog} wrote. */
export interface WriteResult {
  path: string;
  format: LogFormat;
  /** Lines (NDJSON), data rows (CSV) or table rows (SQLite). */
  events: number;
  /** File size in bytes. */
  bytes: number;
}

function formatOf(path: string): LogFormat {
  const p = path.toLowerCase().replace(/\.gz$/, '');
  if (p.endsWith('.csv')) return 'csv';
  if (/\.(sqlite|sqlite3|db)$/.test(p)) return 'sqlite';
  return 'ndjson';
}

async function writeText(path: string, gzip: boolean, lines: Iterable<string>): Promise<number> {
  const file = createWriteStream(path);
  let out: Writable = file;
  if (gzip) {
    const gz = createGzip({ level: 9 });
    gz.pipe(file);
    out = gz;
  }
  const done = new Promise<void>((resolve, reject) => {
    file.on('finish', resolve);
    file.on('error', reject);
    out.on('error', reject);
  });
  let n = 0;
  let buf = '';
  for (const line of lines) {
    buf += `${line}\n`;
    n++;
    if (buf.length >= 1 << 20) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once('drain', r));
      buf = '';
    }
  }
  if (buf.length > 0) out.write(buf);
  out.end();
  await done;
  return n;
}

/**
 * Writes a generated log to `path` as NDJSON, CSV (header row of {@link COLUMNS}) or SQLite
 * (table `events` with those columns, all TEXT; absent values are NULL). The format comes from
 * `format` or the name (`.csv`, `.sqlite`/`.sqlite3`/`.db`, else NDJSON); a name ending in `.gz`
 * gzips NDJSON and CSV. An existing file is replaced. All three carry the same rows.
 *
 * @example
 * ```ts
 * await writeLog('out/log.csv', { seed: 7, events: 10_000 });
 * ```
 */
export async function writeLog(path: string, opts: GenOptions & { format?: LogFormat }): Promise<WriteResult> {
  const format = opts.format ?? formatOf(path);
  const gzip = path.toLowerCase().endsWith('.gz');
  let events: number;
  if (format === 'ndjson') {
    events = await writeText(path, gzip, generateLog(opts));
  } else if (format === 'csv') {
    const lines = function* (): Generator<string> {
      yield CSV_HEADER;
      for (const row of generateRows(opts)) yield rowToCsv(row);
    };
    events = (await writeText(path, gzip, lines())) - 1;
  } else {
    if (gzip) throw new Error('gen-log: SQLite output cannot be gzipped');
    events = await writeSqlite(path, opts);
  }
  return { path, format, events, bytes: statSync(path).size };
}

async function writeSqlite(path: string, opts: GenOptions): Promise<number> {
  const { writeEventTable } = await import('../src/io/sqliteSource.js');
  const rows = function* (): Generator<(string | null)[]> {
    for (const row of generateRows(opts)) {
      const vals: (string | null)[] = new Array(COLUMNS.length).fill(null);
      if (row.broken !== undefined) vals[0] = row.broken;
      else for (let i = 0; i < COLUMNS.length; i++) vals[i] = row.cols[i] ?? null;
      yield vals;
    }
  };
  return writeEventTable(path, COLUMNS, rows());
}

// ---------------------------------------------------------------------------------------------
// CLI.

const USAGE = `usage: npx tsx scripts/gen-log.ts --seed N --events N --out FILE
  [--exchanges 8] [--assets 12] [--start 2024-03-01T00:00:00Z] [--rate 20 | --duration 3h]
  [--format ndjson|csv|sqlite] [--bad-rate 0] [--late-rate 0] [--string-rate 0.05]`;

/** Parses `3h`, `90m`, `45s`, `2d` or plain seconds. */
function parseSpan(s: string): number {
  const m = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(s.trim());
  if (!m) throw new Error(`gen-log: bad duration "${s}"`);
  const k = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * k;
}

/** Parses CLI arguments into writeLog's options and the output path. */
export function parseArgs(argv: string[]): { out: string; opts: GenOptions & { format?: LogFormat } } {
  const a = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (!k.startsWith('--')) throw new Error(`gen-log: unexpected argument "${k}"\n${USAGE}`);
    const eq = k.indexOf('=');
    if (eq > 0) a.set(k.slice(2, eq), k.slice(eq + 1));
    else {
      const v = argv[i + 1];
      if (v === undefined) throw new Error(`gen-log: ${k} needs a value\n${USAGE}`);
      a.set(k.slice(2), v);
      i++;
    }
  }
  const known = new Set([
    'seed',
    'events',
    'out',
    'exchanges',
    'assets',
    'start',
    'rate',
    'duration',
    'format',
    'bad-rate',
    'late-rate',
    'string-rate',
  ]);
  for (const k of a.keys()) if (!known.has(k)) throw new Error(`gen-log: unknown option --${k}\n${USAGE}`);
  const num = (k: string): number | undefined => {
    const v = a.get(k);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new Error(`gen-log: --${k} must be a number, got "${v}"`);
    return n;
  };
  const out = a.get('out');
  const seed = num('seed');
  const events = num('events');
  if (out === undefined || seed === undefined || events === undefined) throw new Error(USAGE);
  const fmt = a.get('format');
  if (fmt !== undefined && fmt !== 'ndjson' && fmt !== 'csv' && fmt !== 'sqlite') {
    throw new Error(`gen-log: --format must be ndjson, csv or sqlite`);
  }
  let rate = num('rate');
  const dur = a.get('duration');
  if (dur !== undefined) rate = events / parseSpan(dur);
  return {
    out,
    opts: {
      seed,
      events,
      exchanges: num('exchanges'),
      assets: num('assets'),
      start: a.get('start'),
      rate,
      badRate: num('bad-rate'),
      lateRate: num('late-rate'),
      stringRate: num('string-rate'),
      format: fmt as LogFormat | undefined,
    },
  };
}

async function main(): Promise<void> {
  const { out, opts } = parseArgs(process.argv.slice(2));
  const t = performance.now();
  const r = await writeLog(out, opts);
  const s = (performance.now() - t) / 1000;
  process.stderr.write(
    `gen-log: wrote ${r.events} events to ${r.path} (${r.format}, ${r.bytes} bytes) in ${s.toFixed(2)} s ` +
      `(${Math.round(r.events / s)} events/s)\n`,
  );
}

const invoked = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) {
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
