/**
 * The maximum line length (`--max-line-bytes`, default 1 MiB of UTF-8): a longer line (CSV row,
 * SQLite row) becomes a `line_too_long` reject while it is read, without being held whole, and
 * every later line keeps its number. Also the bound on `rejects.raw` for every reject.
 */
import { appendFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/io/source.js';
import { replay } from '../../../src/replay/replay.js';
import { startFollow } from '../../../src/service/live.js';
import { readAll, tempFiles } from './helpers.js';

const { path, file } = tempFiles('xrate-linelimit-');

const MiB = 1 << 20;
const msg = (bytes: number, max: number): string => `line of ${bytes} bytes exceeds the limit of ${max} bytes (--max-line-bytes)`;
/** The raw text kept for a line too long: its first 256 characters and its size. */
const cutRaw = (line: string): string => `${line.slice(0, 256)}… [truncated: ${Buffer.byteLength(line)} bytes in all]`;

/** A JSON object line of exactly `bytes` bytes of UTF-8: `{"p":"` + fill + padding `x` + `"}`. */
function obj(bytes: number, fill = ''): string {
  const pad = bytes - 8 - Buffer.byteLength(fill);
  if (pad < 0) throw new Error('too short');
  const s = `{"p":"${fill}${'x'.repeat(pad)}"}`;
  expect(Buffer.byteLength(s)).toBe(bytes);
  return s;
}

/** [line, 'ok' | reason] of each record. */
const kinds = (rs: SourceRecord[]): [number, string][] => rs.map((r) => [r.line, r.error === undefined ? 'ok' : (r.reason ?? 'bad_json')]);

describe('NDJSON: maximum line length', () => {
  it('accepts a line of exactly the limit and rejects limit + 1, counting UTF-8 bytes', async () => {
    const max = 100;
    const lines = [
      obj(100), // 1: exactly the limit
      obj(101), // 2: one byte over
      obj(100, 'é'.repeat(40)), // 3: 60 characters, 100 bytes
      obj(101, 'é'.repeat(40)), // 4: 61 characters, 101 bytes
      obj(100, '😀'.repeat(20)), // 5: 4-byte characters (surrogate pairs), 100 bytes
      obj(101, '€'.repeat(30)), // 6: 3-byte characters, 101 bytes
      '', // 7: blank
      obj(99, '€'), // 8
    ];
    const text = `${lines.join('\n')}\n`;
    const rs = await readAll(file('a.ndjson', text), { maxLineBytes: max });
    expect(kinds(rs)).toEqual([
      [1, 'ok'],
      [2, 'line_too_long'],
      [3, 'ok'],
      [4, 'line_too_long'],
      [5, 'ok'],
      [6, 'line_too_long'],
      [8, 'ok'],
    ]);
    expect(rs[1]).toEqual({ line: 2, raw: lines[1], error: msg(101, 100), reason: 'line_too_long' });
    expect(rs[3].error).toBe(msg(101, 100));
    expect(rs[0].record ?? rs[0].event).toBeDefined();
    // CRLF: the line ending is not part of the line.
    const crlf = await readAll(file('b.ndjson', `${lines.join('\r\n')}\r\n`), { maxLineBytes: max });
    expect(crlf).toEqual(rs);
    // A last line without a newline, and gzip.
    const last = await readAll(file('c.ndjson', text.slice(0, -1)), { maxLineBytes: max });
    expect(last).toEqual(rs);
    const gz = await readAll(file('d.ndjson.gz', gzipSync(text)), { maxLineBytes: max });
    expect(gz).toEqual(rs);
  });

  it('defaults to 1 MiB', async () => {
    const rs = await readAll(
      file('e.ndjson', `${obj(MiB)}\n${obj(MiB + 1)}\n${obj(MiB, '€'.repeat(100))}\n${obj(MiB + 1, '€'.repeat(100))}\n`),
    );
    expect(kinds(rs)).toEqual([
      [1, 'ok'],
      [2, 'line_too_long'],
      [3, 'ok'],
      [4, 'line_too_long'],
    ]);
    expect(rs[1].error).toBe(msg(MiB + 1, MiB));
    expect(rs[1].raw).toBe(cutRaw(obj(MiB + 1)));
    expect(rs[0].raw.length).toBe(MiB);
  });

  it('skips a line of many read chunks without holding it, and numbers the lines after it', async () => {
    const long = `{"type":"trade","symbol_id":"${'é€😀x'.repeat(700_000)}"}`; // 7 million bytes: 7 read chunks
    const before = [obj(50), obj(60)];
    const after = [obj(70), '', obj(80, '€'), obj(90)];
    for (const eol of ['\n', '\r\n']) {
      const text = [...before, long, ...after].join(eol) + eol;
      for (const [name, content] of [
        ['f.ndjson', text],
        ['f.ndjson.gz', gzipSync(text)],
      ] as const) {
        const rs = await readAll(file(name, content), { batchSize: 2 });
        expect(kinds(rs), `${name} ${JSON.stringify(eol)}`).toEqual([
          [1, 'ok'],
          [2, 'ok'],
          [3, 'line_too_long'],
          [4, 'ok'],
          [6, 'ok'],
          [7, 'ok'],
        ]);
        expect(rs[2]).toEqual({ line: 3, raw: cutRaw(long), error: msg(Buffer.byteLength(long), MiB), reason: 'line_too_long' });
        expect(rs.map((r) => r.raw)).toEqual([...before, cutRaw(long), after[0], after[2], after[3]]);
      }
    }
    // As the last line, without a newline; and with startLine past it.
    const rs = await readAll(file('g.ndjson', `${obj(50)}\n${long}`));
    expect(kinds(rs)).toEqual([
      [1, 'ok'],
      [2, 'line_too_long'],
    ]);
    expect(rs[1].error).toBe(msg(Buffer.byteLength(long), MiB));
    const resumed = await readAll(file('h.ndjson', `${obj(50)}\n${long}\n${obj(50)}\n`), { startLine: 3 });
    expect(kinds(resumed)).toEqual([[3, 'ok']]);
  });

  it('keeps a line of exactly the limit whose CR ends one read chunk and LF starts the next', async () => {
    // The file is read in 1 MiB chunks: the first chunk ends with the line's CR.
    const line = obj(MiB - 1);
    const rs = await readAll(file('i.ndjson', `${line}\r\n${obj(30)}\n`), { maxLineBytes: MiB - 1 });
    expect(kinds(rs)).toEqual([
      [1, 'ok'],
      [2, 'ok'],
    ]);
    const over = await readAll(file('j.ndjson', `${line}x\r\n${obj(30)}\n`), { maxLineBytes: MiB - 1 });
    expect(kinds(over)).toEqual([
      [1, 'line_too_long'],
      [2, 'ok'],
    ]);
    expect(over[0].error).toBe(msg(MiB, MiB - 1));
  });
});

describe('CSV: maximum line length', () => {
  const H = 'type,p';
  it('rejects a row over the limit at its line and reads on', async () => {
    const max = 50;
    const rows = [
      H, // 1
      `q,${'x'.repeat(48)}`, // 2: 50 bytes
      `q,${'x'.repeat(49)}`, // 3: 51 bytes
      `q,${'é'.repeat(24)}`, // 4: 50 bytes
      `q,${'é'.repeat(24)}x`, // 5: 51 bytes
      `q,"a\nb"`, // 6-7: a quoted field with a newline, within the limit
      `q,"${'y'.repeat(20)}\n${'z'.repeat(20)}\n${'w'.repeat(20)}"`, // 8-10: a row of 66 bytes across three lines
      'q,ok', // 11
    ];
    const text = `${rows.join('\n')}\n`;
    const rs = await readAll(file('a.csv', text), { maxLineBytes: max });
    expect(kinds(rs)).toEqual([
      [2, 'ok'],
      [3, 'line_too_long'],
      [4, 'ok'],
      [5, 'line_too_long'],
      [6, 'ok'],
      // The long row's first line; then, as for a quote never closed, the next lines are rows.
      [8, 'line_too_long'],
      [9, 'bad_json'],
      [10, 'bad_json'],
      [11, 'ok'],
    ]);
    expect(rs[1]).toEqual({ line: 3, raw: rows[2], error: msg(51, 50), reason: 'line_too_long' });
    expect(rs[5].error).toBe(
      'row starting on line 8 runs past the limit of 50 bytes (--max-line-bytes) over several lines (a quote never closed?)',
    );
    expect(rs[4].record).toEqual({ type: 'q', p: 'a\nb' });
    expect(rs[8].record).toEqual({ type: 'q', p: 'ok' });
    expect(await readAll(file('b.csv', text.replaceAll('\n', '\r\n')), { maxLineBytes: max })).toEqual(
      rs.map((r) => (r.line === 6 ? { ...r, record: { type: 'q', p: 'a\r\nb' } } : r)),
    );
    expect(await readAll(file('c.csv.gz', gzipSync(text)), { maxLineBytes: max })).toEqual(rs);
  });

  it('skips a line of many read chunks, quoted or not, and numbers the rows after it', async () => {
    const long = `q,${'€x'.repeat(1_500_000)}`; // 6 MB
    const quoted = `q,"${'€x'.repeat(1_500_000)}`; // a quote opened on a 6 MB line
    for (const l of [long, quoted]) {
      const text = `${H}\nq,1\n${l}\nq,2\n\nq,3\n`;
      for (const [name, content] of [
        ['d.csv', text],
        ['d.csv.gz', gzipSync(text)],
      ] as const) {
        const rs = await readAll(file(name, content));
        expect(kinds(rs), name).toEqual([
          [2, 'ok'],
          [3, 'line_too_long'],
          [4, 'ok'],
          [6, 'ok'],
        ]);
        expect(rs[1]).toEqual({ line: 3, raw: cutRaw(l), error: msg(Buffer.byteLength(l), MiB), reason: 'line_too_long' });
      }
    }
  });

  it('a quote never closed stops at the limit, far from the end of the file', async () => {
    const rows = [H, '"q,1'];
    for (let i = 0; i < 200_000; i++) rows.push(`q,${i}`);
    const rs = await readAll(file('e.csv', `${rows.join('\n')}\n`));
    expect(rs.length).toBe(200_001);
    expect(rs[0]).toMatchObject({ line: 2, reason: 'line_too_long', raw: '"q,1' });
    expect(rs[1]).toMatchObject({ line: 3, record: { type: 'q', p: '0' } });
  });

  it('a header over the limit cannot be read', async () => {
    await expect(readAll(file('f.csv', `type,${'p'.repeat(100)}\nq,1\n`), { maxLineBytes: 50 })).rejects.toThrow(
      /CSV header of .* cannot be read \(line 1: line of 105 bytes exceeds the limit of 50 bytes/,
    );
  });
});

/** A SQLite log `name` of trades, each row its symbol_id and price. */
function tradesDb(name: string, rows: [string, number][]): string {
  const p = path(name);
  const db = new Database(p);
  db.exec('CREATE TABLE events (type TEXT, symbol_id TEXT, price REAL)');
  const ins = db.prepare('INSERT INTO events VALUES (?, ?, ?)');
  for (const [symbol, price] of rows) ins.run('trade', symbol, price);
  db.close();
  return p;
}

describe('SQLite: maximum row length', () => {
  it('rejects a row whose values add up to more than the limit, without reading the huge value', async () => {
    const p = tradesDb('a.sqlite', [
      ['S', 1.5],
      ['é'.repeat(3 * MiB), 2],
      ['x'.repeat(40), 12.25], // 5 + 40 + 5 bytes
      ['x'.repeat(41), 12.25],
    ]);
    const rs = await readAll(p, { maxLineBytes: 50, batchSize: 2 });
    expect(kinds(rs)).toEqual([
      [1, 'ok'],
      [2, 'line_too_long'],
      [3, 'ok'],
      [4, 'line_too_long'],
    ]);
    expect(rs[1].error).toBe('row of 6291464 bytes exceeds the limit of 50 bytes (--max-line-bytes)');
    expect(rs[1].raw.length).toBeLessThan(400);
    expect(rs[1].raw).toMatch(/^\{"type":"trade","symbol_id":"éééé.*… \[truncated: 6291464 bytes in all\]$/);
    expect(rs[3].error).toBe('row of 51 bytes exceeds the limit of 50 bytes (--max-line-bytes)');
    expect(rs[3].raw).toBe(`{"type":"trade","symbol_id":"${'x'.repeat(41)}","price":12.25}`);
    expect(rs[2].record).toEqual({ type: 'trade', symbol_id: 'x'.repeat(40), price: 12.25 });
    expect(kinds(await readAll(p))).toEqual([
      [1, 'ok'],
      [2, 'line_too_long'],
      [3, 'ok'],
      [4, 'ok'],
    ]);
  });

  it('reads the pages without a row over the limit as they are, before and after one with', async () => {
    const p = tradesDb(
      'pages.sqlite',
      Array.from({ length: 7 }, (_, k): [string, number] => [k === 3 ? 'y'.repeat(60) : `S${k + 1}`, k + 1.5]),
    );
    const rs = await readAll(p, { maxLineBytes: 50, batchSize: 2 });
    expect(kinds(rs)).toEqual([
      [1, 'ok'],
      [2, 'ok'],
      [3, 'ok'],
      [4, 'line_too_long'],
      [5, 'ok'],
      [6, 'ok'],
      [7, 'ok'],
    ]);
    expect(rs.map((r) => r.record?.symbol_id)).toEqual(['S1', 'S2', 'S3', undefined, 'S5', 'S6', 'S7']);
    expect(rs[2].raw).toBe('{"type":"trade","symbol_id":"S3","price":3.5}');
    expect(rs[6].raw).toBe('{"type":"trade","symbol_id":"S7","price":7.5}');
    expect(rs[3].raw).toBe(`{"type":"trade","symbol_id":"${'y'.repeat(60)}","price":4.5}`);
  });
});

describe('replay: line_too_long rejects and bounded rejects.raw', () => {
  it('stores the reject with a bounded raw text; every raw text over 1024 characters is cut and marked', async () => {
    const long = `{"type":"trade","symbol_id":"${'x'.repeat(3 * MiB)}"}`;
    const badLong = `{"type":"trade", "p":"${'é'.repeat(3000)}", broken`; // invalid JSON of 3025 characters
    const badShort = `{"type":"trade", broken ${'y'.repeat(990)}`; // 1014 characters: kept whole
    const log = file('r.ndjson', `${[obj(40), long, badLong, badShort, obj(40)].join('\n')}\n`);
    const db = path('r.sqlite');
    const s = await replay({ inputs: [log], db });
    expect(s.eventsRead).toBe(5);
    expect(s.rejectsByReason).toEqual({ unknown_type: 2, line_too_long: 1, bad_json: 2 });
    const d = new Database(db, { readonly: true });
    const rows = d.prepare('SELECT line, reason, message, raw FROM rejects ORDER BY line').all() as {
      line: number;
      reason: string;
      message: string;
      raw: string;
    }[];
    d.close();
    expect(rows.map((r) => [r.line, r.reason])).toEqual([
      [1, 'unknown_type'],
      [2, 'line_too_long'],
      [3, 'bad_json'],
      [4, 'bad_json'],
      [5, 'unknown_type'],
    ]);
    expect(rows[1].message).toBe(msg(long.length, MiB));
    expect(rows[1].raw).toBe(cutRaw(long));
    expect(rows[2].raw).toBe(`${badLong.slice(0, 1024)}… [truncated: ${Buffer.byteLength(badLong)} bytes in all]`);
    expect(rows[3].raw).toBe(badShort);
    expect(rows[0].raw).toBe(obj(40));
  });

  it('passes maxLineBytes through', async () => {
    const log = file('s.ndjson', `${obj(40)}\n${obj(41)}\n`);
    const s = await replay({ inputs: [log], out: path('s.ndjson'), maxLineBytes: 40 });
    expect(s.rejectsByReason).toEqual({ unknown_type: 1, line_too_long: 1 });
  });
});

describe('serve --follow: maximum line length', () => {
  it('rejects a line over the limit as it is appended, without holding it', async () => {
    const log = file('live.ndjson', `${obj(40)}\n`);
    const db = path('live.sqlite');
    const f = startFollow({ log, db, pollMs: 3_600_000, maxLineBytes: MiB, warn: () => {} });
    try {
      const long = `{"type":"trade","p":"${'€'.repeat(MiB)}"}`; // 3 MiB + 23 bytes
      appendFileSync(log, long.slice(0, 2_000_000));
      f.poll();
      appendFileSync(log, long.slice(2_000_000));
      f.poll();
      expect(f.lines()).toBe(1);
      appendFileSync(log, `\n${obj(MiB)}\n${obj(MiB + 1)}\n`);
      f.poll();
      expect(f.lines()).toBe(4);
      expect(f.engine.getStats().rejects).toEqual({ unknown_type: 2, line_too_long: 2 });
    } finally {
      await f.provider.close();
    }
    const d = new Database(db, { readonly: true });
    const rows = d.prepare("SELECT line, message, raw FROM rejects WHERE reason = 'line_too_long' ORDER BY line").all();
    d.close();
    const long = `{"type":"trade","p":"${'€'.repeat(MiB)}"}`;
    expect(rows).toEqual([
      { line: 2, message: msg(Buffer.byteLength(long), MiB), raw: cutRaw(long) },
      { line: 4, message: msg(MiB + 1, MiB), raw: cutRaw(obj(MiB + 1)) },
    ]);
  });
});
