/**
 * Parquet through the command line: `xrate convert LOG... --out FILE.parquet` then `xrate replay
 * FILE.parquet` gives the outputs of replaying the LOGs -- rates, OHLC, series, rejects with their
 * lines, reasons, messages and raw texts, the run's counts -- for NDJSON with bad, late and unknown
 * lines, gzip, CSV, SQLite, vendor files, directories and --merge; DuckDB (an independent reader)
 * reads what convert and `replay --out FILE.parquet` write; bad flags exit 2 naming the flag.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, describe, expect, it } from 'vitest';
import { generateLog } from '../../scripts/gen-log.js';
import { formatTime } from '../../src/core/time.js';
import { convertToParquet } from '../../src/io/parquetConvert.js';
import { openParquetBatches } from '../../src/io/parquetRead.js';
import { EVENT_COLUMNS } from '../../src/io/parquetSchema.js';
import { wireText } from '../../src/core/wire.js';
import { exportVendor } from '../helpers/vendorExport.js';
import { cli, DEMO, dumpTables, query, SUMMARY_COUNTS, type Tables, writeSmallLogs } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-parquet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const p = (name: string): string => join(dir, name);

/** Lines that are rejected: a late one, unknown symbols, far in the future (they never move the clock). */
const GARBAGE = [
  '{"type":"quote","time":"2025-03-01T00:00:11Z","symbol_id":"???","bid_price":1,"bid_size":1,"ask_price":1.01,"ask_size":1}',
  '{"type":"trade","time":"2025-03-01T00:00:11Z","symbol_id":"NO SUCH MARKET","price":"1.000","size":1}',
];

/** The output tables, the rejects in the order they were met and without what names the input files (`source`, `input`). */
function outputs(db: string): Tables {
  return { ...dumpTables(db), rejects: query(db, 'SELECT line, reason, message, raw FROM rejects ORDER BY rowid') };
}

async function summary(args: string[]): Promise<Record<string, unknown>> {
  const r = await cli('replay', ...args, '--json');
  expect(r.code, r.err).toBe(0);
  const s = JSON.parse(r.out) as Record<string, unknown>;
  return Object.fromEntries(SUMMARY_COUNTS.map((k) => [k, s[k]]));
}

let n = 0;
/** Replays `inputs`, converts them, replays the Parquet file; expects the same outputs; returns the first replay's database. */
async function sameAsConverted(inputs: string[], flags: string[] = [], replayFlags: string[] = []): Promise<{ db: string; pq: string }> {
  const k = n++;
  const want = p(`want-${k}.sqlite`);
  const got = p(`got-${k}.sqlite`);
  const pq = p(`conv-${k}.parquet`);
  const a = await summary([...inputs, ...flags, ...replayFlags, '--db', want]);
  const c = await cli('convert', ...inputs, ...flags, '--out', pq, '--quiet');
  expect(c.code, c.err).toBe(0);
  expect(c.err).toBe('');
  const b = await summary([pq, ...replayFlags, '--db', got]);
  expect(b).toEqual(a);
  expect(outputs(got)).toEqual(outputs(want));
  return { db: want, pq };
}

/** DuckDB's answer to `sql` (an independent reader of the Parquet files). */
async function duck(sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    const r = await con.runAndReadAll(sql);
    return r.getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

describe('xrate convert, then xrate replay FILE.parquet', () => {
  const lines = [...generateLog({ seed: 7, events: 8000, start: '2024-03-01T03:56:00Z', rate: 20, badRate: 0.02, lateRate: 0.01 })];
  const LOG = p('log.ndjson');
  writeFileSync(LOG, `${[...lines.slice(0, 4000), GARBAGE[0], ...lines.slice(4000), GARBAGE[1]].join('\n')}\n`);

  it('NDJSON with bad lines, late events and unknown symbols: the same outputs, rejects with their raw texts', async () => {
    const { db } = await sameAsConverted([LOG], [], ['--track', 'BTC/USD']);
    const rejects = query<{ reason: string; raw: string }>(db, 'SELECT reason, raw FROM rejects');
    const reasons = new Set(rejects.map((r) => r.reason));
    for (const r of ['bad_json', 'late', 'unknown_symbol']) expect(reasons, r).toContain(r);
    expect(rejects.map((r) => r.raw)).toContain(GARBAGE[1]);
    expect(query<{ n: number }>(db, 'SELECT count(*) AS n FROM rates')[0].n).toBeGreaterThan(100);
    expect(query<{ n: number }>(db, 'SELECT count(*) AS n FROM ohlc')[0].n).toBeGreaterThan(0);
  }, 120_000);

  it('row groups of any size against any batch size, read in this thread or a worker: the outputs of the NDJSON replay', async () => {
    // A file of one row group of 65,536 rows (what convert writes) cut into batches of 1000 rows,
    // and one of 700-row groups, whose batches straddle them.
    const want = p('rg-want.sqlite');
    expect((await cli('replay', LOG, '--batch-size', '1000', '--db', want, '--quiet')).code).toBe(0);
    const small = p('rg-700.parquet');
    await convertToParquet([LOG], small, { rowGroupRows: 700 });
    const big = p('rg-65536.parquet');
    expect((await cli('convert', LOG, '--out', big, '--quiet')).code).toBe(0);
    let k = 0;
    for (const pq of [big, small]) {
      for (const threads of ['1', '2']) {
        const got = p(`rg-got-${k++}.sqlite`);
        const r = await cli('replay', pq, '--batch-size', '1000', '--threads', threads, '--db', got, '--quiet');
        expect(r.code, r.err).toBe(0);
        expect(outputs(got)).toEqual(outputs(want));
      }
    }
  }, 240_000);

  it('a file as the previous convert wrote it (line and time PLAIN and snappy-compressed) replays as the NDJSON log', async () => {
    const pq = p('now.parquet');
    expect((await cli('convert', LOG, '--out', pq, '--quiet')).code).toBe(0);
    // The same rows and metadata rewritten with every column in hyparquet-writer's default encoding.
    const bytes = readFileSync(pq);
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const md = parquetMetadata(file);
    const rows = (await parquetReadObjects({ file, parsers: { timestampFromMicroseconds: (us: bigint) => us } })) as Record<
      string,
      unknown
    >[];
    const old = p('previous.parquet');
    const out = parquetWriteBuffer({
      schema: [{ name: 'root', num_children: EVENT_COLUMNS.length }, ...EVENT_COLUMNS.map(({ write: _, ...e }) => e)] as never,
      columnData: EVENT_COLUMNS.map((c) => ({ name: c.name, data: rows.map((r) => r[c.name] ?? null) as never })),
      rowGroupSize: 65536,
      kvMetadata: md.key_value_metadata,
    });
    writeFileSync(old, new Uint8Array(out));
    const oldBytes = readFileSync(old);
    const oldMd = parquetMetadata(oldBytes.buffer.slice(oldBytes.byteOffset, oldBytes.byteOffset + oldBytes.byteLength));
    expect(oldMd.row_groups[0].columns[0].meta_data?.encodings).toEqual(['PLAIN']);
    expect(md.row_groups[0].columns[0].meta_data?.encodings).toEqual(['DELTA_BINARY_PACKED']);
    const want = p('prev-want.sqlite');
    const got = p('prev-got.sqlite');
    expect((await cli('replay', LOG, '--db', want, '--quiet')).code).toBe(0);
    expect((await cli('replay', old, '--db', got, '--quiet')).code).toBe(0);
    expect(outputs(got)).toEqual(outputs(want));
  }, 120_000);

  it('gzip, CSV and SQLite inputs, one after another and merged', async () => {
    const small = writeSmallLogs(dir);
    await sameAsConverted([DEMO]);
    await sameAsConverted([small.csv]);
    await sameAsConverted([small.sqlite]);
    await sameAsConverted([small.ndjson, small.csv, small.sqlite], ['--allow-duplicates']);
    await sameAsConverted([small.ndjson, LOG], ['--merge']);
  }, 120_000);

  it('a file of several inputs cannot be read from a line (its lines do not ascend); one of a single input can', async () => {
    mkdirSync(p('lines'));
    const small = writeSmallLogs(p('lines'));
    const one = p('one.parquet');
    const two = p('two.parquet');
    expect((await cli('convert', small.ndjson, '--out', one, '--quiet')).code).toBe(0);
    expect((await cli('convert', small.ndjson, small.csv, '--out', two, '--quiet')).code).toBe(0);
    const lines = async (path: string, startLine: number): Promise<number[]> => {
      const src = openParquetBatches(path, { startLine });
      const out: number[] = [];
      for await (const b of src.batches()) out.push(...b.line);
      src.close();
      return out;
    };
    expect(await lines(one, 10)).toEqual([10, 11, 12, 13]);
    await expect(lines(two, 10)).rejects.toThrow(/its lines do not ascend/);
    expect((await lines(two, 1)).length).toBe(26);
  });

  it('vendor files (CoinAPI flat files, tardis CSV) in directories, merged, by either time', async () => {
    const log = [...generateLog({ seed: 11, events: 3000, exchanges: 3, assets: 4, start: '2024-03-01T23:00:00Z', rate: 1 })];
    for (const [vendor, time] of [
      ['coinapi', 'receive'],
      ['tardis', 'exchange'],
    ] as const) {
      const d = p(`v-${vendor}`);
      mkdirSync(d);
      const x = exportVendor(log, d, { vendor, time, gzip: true });
      await sameAsConverted([x.meta, x.tree], ['--merge', '--time', time]);
    }
  }, 120_000);

  it('a file starting with PAR1 is read as Parquet whatever its name; directories take .parquet files', async () => {
    const { pq } = await sameAsConverted([DEMO]);
    const odd = p('demo-events.log');
    writeFileSync(odd, Buffer.from(await import('node:fs').then((fs) => fs.readFileSync(pq))));
    const a = await summary([pq, '--db', p('odd-a.sqlite')]);
    const b = await summary([odd, '--db', p('odd-b.sqlite')]);
    expect(b).toEqual(a);
    const d = p('pq-dir');
    mkdirSync(d);
    writeFileSync(join(d, 'demo.parquet'), Buffer.from(await import('node:fs').then((fs) => fs.readFileSync(pq))));
    expect(await summary([d, '--db', p('odd-c.sqlite')])).toEqual(a);
  }, 60_000);
});

describe('DuckDB reads what xrate writes', () => {
  it('the event log: one row per line, quotes and trades as typed columns, exact texts where they differ', async () => {
    const log = p('duck.ndjson');
    writeFileSync(
      log,
      [
        '{"type":"exchange","time":"2024-03-01T00:00:00Z","exchange_id":"K","legitimate":true}',
        '{"type":"quote","time":"2024-03-01T00:00:01.5Z","symbol_id":"K_SPOT_BTC_USD","bid_price":"100.50","bid_size":1,"ask_price":101,"ask_size":2}',
        '{"type":"trade","time":"2024-03-01T00:00:02.0000010Z","symbol_id":"K_SPOT_BTC_USD","price":100.75,"size":0.25,"taker_side":"BUY"}',
        'not json',
        '',
      ].join('\n'),
    );
    const pq = p('duck.parquet');
    expect((await cli('convert', log, '--out', pq, '--quiet')).code).toBe(0);
    const rows = await duck(
      `SELECT line, type, epoch_us(time) AS us, symbol_id, bid_price, ask_size, price, size, taker_side, texts::VARCHAR AS texts, reject_reason, raw_form, raw FROM '${pq}' ORDER BY line`,
    );
    expect(rows.map((r) => [r.line, r.type])).toEqual([
      ['1', 'exchange'],
      ['2', 'quote'],
      ['3', 'trade'],
      ['4', null],
    ]);
    expect(rows[1]).toMatchObject({ us: '1709251201500000', symbol_id: 'K_SPOT_BTC_USD', bid_price: 100.5, ask_size: 2, price: null });
    expect(JSON.parse(rows[1].texts as string)).toEqual({ bid_price: '100.50' });
    expect(rows[2]).toMatchObject({ us: '1709251202000001', price: 100.75, size: 0.25, taker_side: 'BUY', texts: null, raw: null });
    expect(rows[3]).toMatchObject({ reject_reason: 'bad_json', raw: 'not json' });
  });

  it('replay --out FILE.parquet: the rate changes of --out FILE.ndjson and of the database; with --track, the OHLC buckets of the database', async () => {
    const log = p('out.ndjson');
    writeFileSync(log, `${[...generateLog({ seed: 5, events: 6000, start: '2024-03-01T03:56:00Z', rate: 20 })].join('\n')}\n`);
    const track = ['--track', 'BTC/USD', '--track', 'ETH/USD'];
    const db = p('out.sqlite');
    expect((await cli('replay', log, ...track, '--db', db, '--quiet')).code).toBe(0);
    expect((await cli('replay', log, ...track, '--out', p('out.ndjson.out.ndjson'), '--quiet')).code).toBe(0);
    const r = await cli('replay', log, ...track, '--out', p('rates.parquet'), '--quiet');
    expect(r.code, r.err).toBe(0);
    const got = await duck(
      `SELECT epoch_us(tick) AS tick, asset_id_base, asset_id_quote, rate, epoch_us(time) AS time, rank, used, fresh FROM '${p('rates.parquet')}'`,
    );
    const ndjson = (await import('node:fs')).readFileSync(p('out.ndjson.out.ndjson'), 'utf8').trim().split('\n');
    expect(got.length).toBe(ndjson.length);
    expect(got.length).toBeGreaterThan(100);
    // Each row, written as the NDJSON output writes it, is its line.
    got.forEach((g, i) => {
      const line =
        `{"tick":"${formatTime(Number(g.tick))}","asset_id_base":${JSON.stringify(g.asset_id_base)},"asset_id_quote":${JSON.stringify(g.asset_id_quote)},` +
        `"rate":${g.rate === null ? 'null' : wireText(g.rate as number)},"time":${g.time === null ? 'null' : `"${formatTime(Number(g.time))}"`},` +
        `"rank":${g.rank === null ? 'null' : JSON.stringify(g.rank)},"used":${g.used},"fresh":${g.fresh === 1}}`;
      expect(line, `row ${i}`).toBe(ndjson[i]);
    });
    const rates = query<Record<string, unknown>>(db, 'SELECT tick, base, quote, rate, time, rank, used, fresh FROM rates ORDER BY rowid');
    expect(got.map((g) => [Number(g.tick), g.asset_id_base, g.asset_id_quote, g.rate, g.time === null ? null : Number(g.time)])).toEqual(
      rates.map((x) => [x.tick, x.base, x.quote, x.rate, x.time]),
    );
    const ohlc = await duck(
      `SELECT asset_id_base AS base, asset_id_quote AS quote, period_id, epoch_us(time_period_start) AS start, epoch_us(time_period_end) AS "end",
        epoch_us(time_open) AS time_open, epoch_us(time_close) AS time_close, rate_open AS open, rate_high AS high, rate_low AS low,
        rate_close AS close, count FROM '${p('rates.ohlc.parquet')}' ORDER BY base, quote, period_id, start`,
    );
    const want = dumpTables(db).ohlc;
    expect(want.length).toBeGreaterThan(3);
    expect(
      ohlc.map((o) => ({
        ...o,
        start: Number(o.start),
        end: Number(o.end),
        time_open: Number(o.time_open),
        time_close: Number(o.time_close),
        count: Number(o.count),
      })),
    ).toEqual(want);
  }, 120_000);
});

describe('usage errors exit 2 naming the flag', () => {
  it.each([
    ['no --out', [], '--out'],
    ['--out not .parquet', ['--out', 'x.ndjson'], '--out'],
    ['a bad --time', ['--out', 'x.parquet', '--time', 'sideways'], '--time'],
    ['a bad --format', ['--out', 'x.parquet', '--format', 'xml'], '--format'],
    ['--format parquet', ['--out', 'x.parquet', '--format', 'parquet'], '--format'],
    ['a bad --max-line-bytes', ['--out', 'x.parquet', '--max-line-bytes', '0'], '--max-line-bytes'],
    ['an unknown flag', ['--out', 'x.parquet', '--sideways'], '--sideways'],
  ])('convert: %s', async (_label, flags, flag) => {
    const r = await cli('convert', DEMO, ...flags);
    expect(r.code).toBe(2);
    expect(r.err).toContain(flag);
  });

  it('convert: --out one of the inputs', async () => {
    const pq = p('self.parquet');
    expect((await cli('convert', DEMO, '--out', pq, '--quiet')).code).toBe(0);
    const r = await cli('convert', pq, '--out', pq);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--out');
  });

  it('replay: --out of another kind', async () => {
    const r = await cli('replay', DEMO, '--out', p('x.txt'));
    expect(r.code).toBe(2);
    expect(r.err).toContain('--out must name a .ndjson, .csv or .parquet file');
  });
});
