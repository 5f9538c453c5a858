/**
 * Position and connectivity events through every replay path (docs/ems.md): the same log, with
 * position snapshots, closings, reachability changes and bad position lines mixed into a
 * generated market log, gives the same replay database, table by table and row for row,
 * - as NDJSON, CSV and an SQLite table;
 * - replayed serially and in 3 time partitions (docs/parallel.md);
 * - replayed whole, and interrupted after a snapshot then resumed;
 * and the final engine of each holds the same positions. A log without them is untouched: its
 * outputs and snapshots have no trace of them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { COMPARED_TABLES } from '../../src/io/compareReplays.js';
import { writeEventTable } from '../../src/io/sqliteSource.js';
import { parseTime } from '../../src/core/time.js';
import { ReplayStore } from '../../src/io/store.js';
import { replayParallel } from '../../src/replay/parallel.js';
import { replay, type ReplaySummary } from '../../src/replay/replay.js';
import { expectSameOutputs } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-positions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const p = (n: string) => join(dir, n);

const config = { maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 };
const ACCOUNTS = ['BINANCE', 'BINANCE~hedge', 'BINANCE/2574', 'KRAKEN', 'OKX'];
const SYMBOLS: [string, string | undefined][] = [
  ['BTCUSDT', 'BINANCE_SPOT_BTC_USDT'],
  ['ETHUSD', 'KRAKEN_SPOT_ETH_USD'],
  ['SOLBTC', 'BINANCE_SPOT_SOL_BTC'],
  ['PERP', 'BITMEX_PERP_BTC_USD'],
  ['CUSTOM', undefined],
];

/** The generated log with a position-related line before every 97th line, at that line's time. */
function withPositions(lines: string[]): string[] {
  const out: string[] = [];
  let k = 0;
  // A position opened in the first hour and never touched again, and an exchange down from then
  // on: the last partition's warm-up does not reach back to them.
  const first = /"time":"([^"]+)"/.exec(lines[5])?.[1];
  out.push(
    JSON.stringify({
      type: 'position',
      time: first,
      exchange_id: 'DERIBIT',
      symbol_id_exchange: 'BTC-PERPETUAL',
      avg_entry_price: 60000,
      quantity: 3,
      side: 'SELL',
    }),
  );
  out.push(JSON.stringify({ type: 'connectivity', time: first, exchange_id: 'HUOBI', reachable: false }));
  for (const l of lines) {
    const time = /"time":"([^"]+)"/.exec(l)?.[1];
    if (time && k++ % 97 === 0) {
      const n = k;
      const [sym, symbolId] = SYMBOLS[n % SYMBOLS.length];
      if (n % 23 === 0)
        out.push(JSON.stringify({ type: 'connectivity', time, exchange_id: ACCOUNTS[n % 2 === 0 ? 3 : 4], reachable: n % 3 !== 0 }));
      else if (n % 29 === 0)
        out.push(
          JSON.stringify({
            type: 'position',
            time,
            exchange_id: 'BINANCE~',
            symbol_id_exchange: sym,
            avg_entry_price: 1,
            quantity: 1,
            side: 'BUY',
          }),
        );
      else if (n % 31 === 0)
        out.push(
          JSON.stringify({
            type: 'position',
            time,
            exchange_id: 'OKX',
            symbol_id_exchange: sym,
            avg_entry_price: 1,
            quantity: -1,
            side: 'BUY',
          }),
        );
      else
        out.push(
          JSON.stringify({
            type: 'position',
            time,
            exchange_id: ACCOUNTS[n % ACCOUNTS.length],
            symbol_id_exchange: sym,
            ...(symbolId && { symbol_id: symbolId }),
            avg_entry_price: String(100 + (n % 13) * 7.25),
            quantity: n % 7 === 0 ? '0' : String((n % 5) + 0.5),
            side: n % 2 === 0 ? 'BUY' : 'SELL',
            ...(n % 4 === 0 && { leverage: 5, cross_margin: n % 8 === 0 }),
            ...(n % 6 === 0 && { raw_data: { n, venue: 'test' } }),
          }),
        );
    }
    out.push(l);
  }
  return out;
}

/** The NDJSON lines as a CSV (header: every field seen; objects as their JSON text). */
function csvOf(lines: string[]): string {
  const recs = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const cols = [...new Set(recs.flatMap((r) => Object.keys(r)))];
  const cell = (v: unknown) => {
    if (v === undefined || v === null) return '';
    const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return `${cols.join(',')}\n${recs.map((r) => cols.map((c) => cell(r[c])).join(',')).join('\n')}\n`;
}

const LOG = p('log.ndjson');
let lines: string[];
let serial: ReplaySummary;
const SERIAL = p('serial.sqlite');

beforeAll(async () => {
  // About 28 h of event time at 0.3 events/s, with late lines; no malformed JSON (the CSV copy
  // is made by parsing each line).
  await writeLog(p('market.ndjson'), { seed: 23, events: 30_000, rate: 0.3, lateRate: 0.01 });
  lines = withPositions(readFileSync(p('market.ndjson'), 'utf8').trimEnd().split('\n'));
  writeFileSync(LOG, `${lines.join('\n')}\n`);
  serial = await replay({ inputs: [LOG], db: SERIAL, config });
}, 120_000);

const rejects = (db: string) => {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare('SELECT reason, message FROM rejects ORDER BY rowid').all();
  } finally {
    d.close();
  }
};

const count = (db: string, sql: string) => {
  const d = new Database(db, { readonly: true });
  try {
    return (d.prepare(sql).get() as { n: number }).n;
  } finally {
    d.close();
  }
};

describe('position events through the replay', () => {
  it('are stored, with their rejects, and the final engine holds the book of the stored rows', () => {
    expect(count(SERIAL, 'SELECT count(*) AS n FROM positions')).toBeGreaterThan(200);
    expect(count(SERIAL, 'SELECT count(*) AS n FROM connectivity')).toBeGreaterThan(5);
    expect(count(SERIAL, 'SELECT count(*) AS n FROM rejects WHERE message LIKE \'position: field "exchange_id"%\'')).toBeGreaterThan(5);
    expect(count(SERIAL, "SELECT count(*) AS n FROM rejects WHERE reason = 'bad_size' AND message LIKE 'position:%'")).toBeGreaterThan(5);
    const store = ReplayStore.open(SERIAL, { readonly: true });
    try {
      const book = store.positions().bookAt();
      expect(book.open()).toEqual(serial.engine.positions());
      expect(book.unreachable()).toEqual(serial.engine.unreachableExchanges());
      expect(serial.engine.positions().length).toBeGreaterThan(2);
    } finally {
      store.close();
    }
  });

  it('give the same database from NDJSON, CSV and SQLite', async () => {
    writeFileSync(p('log.csv'), csvOf(lines));
    const recs = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const cols = [...new Set(recs.flatMap((r) => Object.keys(r)))];
    writeEventTable(
      p('log.sqlite'),
      cols,
      recs.map((r) => cols.map((c) => (r[c] === undefined ? null : typeof r[c] === 'object' ? JSON.stringify(r[c]) : String(r[c])))),
    );
    for (const f of ['log.csv', 'log.sqlite']) {
      const db = p(`${f}.db`);
      const s = await replay({ inputs: [p(f)], db, config });
      // Rejects name their own file, line and raw text: compared by reason and message.
      const rows = expectSameOutputs(
        db,
        SERIAL,
        COMPARED_TABLES.filter((t) => t !== 'rejects'),
      );
      expect(rows.positions).toBeGreaterThan(200);
      expect(rejects(db)).toEqual(rejects(SERIAL));
      expect(s.engine.positions()).toEqual(serial.engine.positions());
    }
  }, 120_000);

  it('give the same database replayed in 3 partitions', async () => {
    const db = p('parallel.sqlite');
    const s = await replayParallel({ inputs: [LOG], db, config, workers: 3 });
    const rows = expectSameOutputs(db, SERIAL);
    expect(rows.positions).toBeGreaterThan(200);
    expect(rows.connectivity).toBeGreaterThan(5);
    expect(s.engine.positions()).toEqual(serial.engine.positions());
    expect(s.engine.unreachableExchanges()).toEqual(serial.engine.unreachableExchanges());
    // A position's symbol_id names a market the pre-scan hands to later partitions: no symbol
    // record, rate or pair comes of it.
    expect(s.engine.symbols()).toEqual(serial.engine.symbols());
    expect(s.engine.pairs()).toEqual(serial.engine.pairs());
  }, 120_000);

  it('give the same database when the replay is interrupted after a snapshot and resumed', async () => {
    const db = p('resumed.sqlite');
    const half = Math.floor(count(SERIAL, 'SELECT count(*) AS n FROM positions') / 2);
    let written = 0;
    await expect(
      replay({
        inputs: [LOG],
        db,
        config,
        batchSize: 500,
        snapshotEveryUs: 3600 * 1_000_000,
        listener: {
          onPosition: () => {
            if (++written === half) throw new Error('interrupted');
          },
        },
      }),
    ).rejects.toThrow(/interrupted/);
    // The batch that failed was rolled back; the run is left as a killed process leaves it.
    const d = new Database(db);
    d.prepare(`UPDATE runs SET status = 'killed' WHERE status = 'running'`).run();
    d.close();
    expect(count(db, 'SELECT count(*) AS n FROM positions')).toBeLessThan(half);
    const s = await replay({ inputs: [LOG], db, batchSize: 500, snapshotEveryUs: 3600 * 1_000_000, resume: true });
    expect(s.resumed).toBe(true);
    expectSameOutputs(db, SERIAL);
    expect(s.engine.positions()).toEqual(serial.engine.positions());
  }, 120_000);

  it('replayed with --from, the stored rows start from the book of the warm-up', async () => {
    const db = p('from.sqlite');
    const times = lines.map((l) => /"time":"([^"]+)"/.exec(l)?.[1]).filter((t): t is string => t !== undefined);
    const from = parseTime(times[Math.floor(times.length / 2)])!;
    const s = await replay({ inputs: [LOG], db, config, from });
    expect(s.engine.positions()).toEqual(serial.engine.positions());
    const [fromStore, serialStore] = [ReplayStore.open(db, { readonly: true }), ReplayStore.open(SERIAL, { readonly: true })];
    try {
      // Every tick from --from on: the same book as the serial replay's rows give.
      for (const T of [from, from + 3600e6, undefined]) {
        const [a, b] = [fromStore.positions().bookAt(T), serialStore.positions().bookAt(T)];
        expect(a.open(), String(T)).toEqual(b.open());
        expect(a.unreachable(), String(T)).toEqual(b.unreachable());
      }
      expect(fromStore.positions().bookAt(from).open().length).toBeGreaterThan(2);
    } finally {
      fromStore.close();
      serialStore.close();
    }
  }, 120_000);

  it('leave no trace in the outputs or the snapshots of a log without them', async () => {
    const db = p('market.sqlite');
    const s = await replay({ inputs: [p('market.ndjson')], db, config, snapshotEveryUs: 3600 * 1_000_000 });
    expect(count(db, 'SELECT count(*) AS n FROM positions') + count(db, 'SELECT count(*) AS n FROM connectivity')).toBe(0);
    expect(s.engine.snapshot()).not.toHaveProperty('positions');
    expect(s.engine.getStats().events).not.toHaveProperty('position');
    expect(Object.keys(s.engine.getStats().events)).toEqual(['exchange', 'symbol', 'quote', 'trade', 'metric', 'metricDefinition']);
    // Rates are the log's, position lines or not.
    expect(expectSameOutputs(db, SERIAL, ['rates', 'ohlc', 'series']).rates).toBeGreaterThan(1000);
  }, 120_000);
});
