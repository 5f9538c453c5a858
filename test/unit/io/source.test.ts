import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { detectFormat, openSource, type SourceRecord } from '../../../src/io/source.js';
import { readAll, tempFiles } from './helpers.js';

const { path, file } = tempFiles('xrate-io-');

describe('detectFormat', () => {
  it.each([
    ['a.ndjson', 'ndjson'],
    ['a.jsonl', 'ndjson'],
    ['a.json', 'ndjson'],
    ['A.NDJSON.GZ', 'ndjson'],
    ['a.jsonl.gz', 'ndjson'],
    ['dir.v1/a.csv', 'csv'],
    ['a.csv.gz', 'csv'],
    ['a.sqlite', 'sqlite'],
    ['a.sqlite3', 'sqlite'],
    ['a.db', 'sqlite'],
    ['a.txt', undefined],
    ['a.gz', undefined],
    ['a.db.gz', undefined],
  ])('%s -> %s', (p, f) => {
    expect(detectFormat(p)).toBe(f);
  });
});

describe('openSource', () => {
  it('throws an `input` error for a missing file', () => {
    expect(() => openSource(path('nope.ndjson'))).toThrow(/^cannot open event log/);
    expect(() => openSource(path('nope.ndjson'))).toThrow(expect.objectContaining({ code: 'input', exitCode: 1 }));
  });

  it('sniffs the format of an unknown extension', async () => {
    const j = file('log.txt', '{"type":"quote"}\n');
    const c = file('log2.txt', 'type,time\nquote,2024\n');
    expect(openSource(j).format).toBe('ndjson');
    expect(openSource(c).format).toBe('csv');
    expect((await readAll(c))[0].record).toEqual({ type: 'quote', time: '2024' });
  });
});

describe('NDJSON reader', () => {
  it('reads records with physical line numbers, skipping blank lines', async () => {
    const p = file('a.ndjson', '{"type":"quote","n":1}\n\n   \n{"type":"trade","n":2.5,"s":"x"}\n\t\n{"n":null}\n');
    const rs = await readAll(p);
    expect(rs).toEqual([
      { line: 1, raw: '{"type":"quote","n":1}', record: { type: 'quote', n: 1 } },
      { line: 4, raw: '{"type":"trade","n":2.5,"s":"x"}', record: { type: 'trade', n: 2.5, s: 'x' } },
      { line: 6, raw: '{"n":null}', record: { n: null } },
    ]);
  });

  it('handles CRLF, a BOM and a last line without newline', async () => {
    const p = file('b.ndjson', '\uFEFF{"a":1}\r\n\r\n{"a":2}\r\n{"a":3}');
    const rs = await readAll(p);
    expect(rs.map((r) => [r.line, r.raw, r.record])).toEqual([
      [1, '{"a":1}', { a: 1 }],
      [3, '{"a":2}', { a: 2 }],
      [4, '{"a":3}', { a: 3 }],
    ]);
  });

  it('turns invalid JSON and non-objects into error records, never throwing', async () => {
    const p = file('c.ndjson', '{"a":1}\n{"a":\n[1,2]\n"str"\n42\nnull\n  {"b":2}  \n{bad}\n{"c":3}');
    const rs = await readAll(p);
    expect(rs.map((r) => r.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(rs[0].record).toEqual({ a: 1 });
    expect(rs[1].error).toMatch(/^invalid JSON/);
    expect(rs[1].raw).toBe('{"a":');
    expect(rs[2].error).toBe('not a JSON object (got an array)');
    expect(rs[3].error).toBe('not a JSON object (got a string)');
    expect(rs[4].error).toBe('not a JSON object (got a number)');
    expect(rs[5].error).toBe('not a JSON object (got null)');
    expect(rs[6].record).toEqual({ b: 2 });
    expect(rs[7].error).toMatch(/^invalid JSON/);
    expect(rs[8].record).toEqual({ c: 3 });
    for (const r of rs) expect((r.record === undefined) !== (r.error === undefined)).toBe(true);
  });

  it('reads gzip by name and by magic bytes', async () => {
    const text = '{"a":1}\n\n{"a":2}\n';
    const a = await readAll(file('d.ndjson.gz', gzipSync(text)));
    const b = await readAll(file('e.ndjson', gzipSync(text)));
    const c = await readAll(file('f.ndjson', text));
    expect(a).toEqual(c);
    expect(b).toEqual(c);
    expect(c.map((r) => r.line)).toEqual([1, 3]);
  });

  it('reads the same records whatever the bytes read at a time (chunkBytes), gzipped or not, CSV too', async () => {
    // Multi-byte characters, CRLF, a blank line and a long line fall across the small reads.
    const lines = Array.from({ length: 300 }, (_, i) =>
      i % 7 === 3 ? '' : JSON.stringify({ i, s: 'é€😀'.repeat(i % 5), pad: 'x'.repeat((i * 37) % 200) }),
    );
    const text = `${lines.join('\r\n')}\r\n`;
    const csv = `type,i,s\n${Array.from({ length: 300 }, (_, i) => `trade,${i},"é€,${'y'.repeat(i % 50)}"`).join('\n')}\n`;
    for (const [name, data] of [
      ['k.ndjson', text],
      ['k2.ndjson.gz', gzipSync(text)],
      ['k3.csv', csv],
      ['k4.csv.gz', gzipSync(csv)],
    ] as const) {
      const p = file(name, data);
      const want = await readAll(p);
      expect(want.length).toBeGreaterThan(250);
      for (const chunkBytes of [1, 7, 64, 1 << 16]) expect(await readAll(p, { chunkBytes }), `${name} ${chunkBytes}`).toEqual(want);
    }
  });

  it('splits into batches and honours startLine', async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ i }));
    const p = file('g.ndjson', `${lines.join('\n')}\n`);
    const src = openSource(p, { batchSize: 64 });
    const sizes: number[] = [];
    for await (const b of src.batches()) sizes.push(b.length);
    expect(sizes.slice(0, -1).every((s) => s === 64)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(src.bytesRead()).toBe(src.totalBytes);
    const rest = await readAll(p, { startLine: 990 });
    expect(rest.map((r) => r.line)).toEqual([990, 991, 992, 993, 994, 995, 996, 997, 998, 999, 1000]);
    expect(rest[0].record).toEqual({ i: 989 });
  });

  it('keeps multi-byte characters and lines intact across read chunks', async () => {
    // > 2 MiB so that the 1 MiB read chunks split lines and UTF-8 sequences.
    const lines: string[] = [];
    for (let i = 0, len = 0; len < 2_300_000; i++) {
      lines.push(JSON.stringify({ i, s: 'é€😀'.repeat(1 + (i % 7)), pad: 'x'.repeat(i % 13) }));
      len += lines[i].length + 1;
    }
    const p = file('h.ndjson', lines.join('\n'));
    const rs = await readAll(p, { batchSize: 1000 });
    expect(rs.length).toBe(lines.length);
    rs.forEach((r, k) => {
      expect(r.line).toBe(k + 1);
      expect(r.raw).toBe(lines[k]);
    });
    const gz = await readAll(file('h.ndjson.gz', gzipSync(lines.join('\n'))), { batchSize: 1000 });
    expect(gz).toEqual(rs);
  });

  it('can be read twice and closed early', async () => {
    const p = file('i.ndjson', Array.from({ length: 100 }, (_, i) => `{"i":${i}}`).join('\n'));
    const src = openSource(p, { batchSize: 10 });
    let n = 0;
    for await (const b of src.batches()) {
      n += b.length;
      break;
    }
    expect(n).toBe(10);
    const all: SourceRecord[] = [];
    for await (const b of src.batches()) all.push(...b);
    expect(all.length).toBe(100);
    let m = 0;
    for await (const b of src.batches()) {
      m += b.length;
      src.close();
    }
    expect(m).toBe(10);
  });
});

describe('CSV reader', () => {
  const H = 'type,time,symbol_id,price,size';

  it('reads rows with the header names, as strings, with physical line numbers', async () => {
    const p = file(
      'a.csv',
      `${H}\ntrade,2024-01-01T00:00:00Z,X_SPOT_BTC_USD,42000.10,0.5\n\n` +
        `trade,"2024-01-01T00:00:01Z","a,b","multi\nline\r\nfield",""\n` +
        `trade,t,"say ""hi""",1,\n` +
        `quote,t,s,,2`,
    );
    const rs = await readAll(p);
    expect(rs.map((r) => r.line)).toEqual([2, 4, 7, 8]);
    expect(rs[0].record).toEqual({
      type: 'trade',
      time: '2024-01-01T00:00:00Z',
      symbol_id: 'X_SPOT_BTC_USD',
      price: '42000.10',
      size: '0.5',
    });
    expect(rs[0].raw).toBe(JSON.stringify(rs[0].record));
    expect(rs[1].record).toEqual({
      type: 'trade',
      time: '2024-01-01T00:00:01Z',
      symbol_id: 'a,b',
      price: 'multi\nline\r\nfield',
      size: '',
    });
    expect(rs[2].record).toEqual({ type: 'trade', time: 't', symbol_id: 'say "hi"', price: '1', size: '' });
    expect(rs[3].record).toEqual({ type: 'quote', time: 't', symbol_id: 's', price: '', size: '2' });
  });

  it('handles CRLF files, a BOM and blank rows', async () => {
    const p = file('b.csv', `\uFEFF${H}\r\n\r\ntrade,t,s,1,2\r\n,,,,\r\n  \r\ntrade,t,s,3,4\r\n`);
    const rs = await readAll(p);
    expect(rs.map((r) => [r.line, r.record?.price, r.record?.size])).toEqual([
      [3, '1', '2'],
      [6, '3', '4'],
    ]);
  });

  it('turns malformed rows into error records and reads on', async () => {
    const p = file(
      'c.csv',
      `${H}\ntrade,t,s,1,2\n"bad"x,t,s,1,2\ntrade,t,s,1\ntrade,t,s,1,2,3\ntrade,t,s,5,6\n"never closed,t,s,1,2\ntrade,t,s,7,8\n`,
    );
    const rs = await readAll(p);
    expect(rs.map((r) => r.line)).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(rs[1].error).toMatch(/after a closing quote/);
    expect(rs[1].raw).toBe('"bad"x,t,s,1,2');
    expect(rs[2].error).toBe('row has 4 fields, the header has 5');
    expect(rs[2].raw).toBe('trade,t,s,1');
    expect(rs[3].error).toBe('row has 6 fields, the header has 5');
    expect(rs[4].record?.price).toBe('5');
    // An unclosed quote at the end of the file: its first line is reported, then reading resumes.
    expect(rs[5].error).toBe('quoted field is never closed');
    expect(rs[6].record?.price).toBe('7');
    for (const r of rs) expect((r.record === undefined) !== (r.error === undefined)).toBe(true);
  });

  it('throws a clear error when the header has no type column', async () => {
    const p = file('d.csv', 'time,symbol_id\nt,s\n');
    await expect(readAll(p)).rejects.toThrow(/^CSV header must include "type"/);
  });

  it('reads gzipped CSV and honours startLine', async () => {
    const text = `${H}\ntrade,t,s,1,2\ntrade,t,s,3,4\ntrade,t,s,5,6\n`;
    const rs = await readAll(file('e.csv.gz', gzipSync(text)), { startLine: 3 });
    expect(rs.map((r) => [r.line, r.record?.price])).toEqual([
      [3, '3'],
      [4, '5'],
    ]);
  });

  it('agrees with fast-csv on well-formed input', async () => {
    const { parseString, writeToString } = await import('fast-csv');
    const cells = ['', 'a', 'a,b', 'say "hi"', 'x\ny', 'x\r\ny', ' padded ', '€', '"', ',', '0.5'];
    let s = 1;
    const rnd = (n: number): number => {
      s = (s * 1103515245 + 12345) % 2147483648;
      return s % n;
    };
    const rows: string[][] = [];
    for (let i = 0; i < 300; i++) rows.push([`t${i}`, ...Array.from({ length: 4 }, () => cells[rnd(cells.length)])]);
    rows[5] = ['t5', '', '', '', ''];
    const text = await writeToString(rows, { headers: ['type', 'a', 'b', 'c', 'd'], quoteColumns: false });
    const expected: Record<string, string>[] = [];
    await new Promise<void>((res, rej) => {
      parseString(text, { headers: true, ignoreEmpty: true, trim: false })
        .on('data', (r: Record<string, string>) => expected.push(r))
        .on('error', rej)
        .on('end', () => res());
    });
    const got = (await readAll(file('f.csv', text))).map((r) => r.record);
    expect(got).toEqual(expected.filter((r) => Object.values(r).some((v) => v.trim() !== '')));
    expect(got.length).toBe(300);
  });
});

describe('CsvSplitter', () => {
  it('gives the same rows wherever the text is cut into chunks', async () => {
    const { CsvSplitter } = await import('../../../src/io/csv.js');
    const text = 'type,a\r\nq,"x,\r\ny"\n\nq,"a""b"\nq,""\n"bad"!,z\nq,last';
    const whole = new CsvSplitter();
    const ref = [...whole.push(text), ...whole.end()];
    expect(ref.map((r) => r.line)).toEqual([1, 2, 5, 6, 7, 8]);
    for (let cut = 0; cut <= text.length; cut++) {
      for (const cut2 of [cut, Math.min(text.length, cut + 1), Math.min(text.length, cut + 3)]) {
        const sp = new CsvSplitter();
        const rows = [...sp.push(text.slice(0, cut)), ...sp.push(text.slice(cut, cut2)), ...sp.push(text.slice(cut2)), ...sp.end()];
        expect(rows, `cut at ${cut}/${cut2}`).toEqual(ref);
      }
    }
  });
});

describe('SQLite reader', () => {
  function makeDb(name: string, rows: (string | number | null)[][], table = 'events'): string {
    const p = path(name);
    const db = new Database(p);
    db.exec(`CREATE TABLE ${table} (type TEXT, time TEXT, price TEXT, size REAL)`);
    const ins = db.prepare(`INSERT INTO ${table} VALUES (?, ?, ?, ?)`);
    for (const r of rows) ins.run(r);
    db.close();
    return p;
  }

  it('reads rows in rowid order with rowid as line, passing NULLs and empty strings through', async () => {
    const p = makeDb('a.sqlite', [
      ['trade', 't1', '1.5', 2],
      ['quote', 't2', null, null],
      ['trade', '', '', 0.25],
    ]);
    const src = openSource(p);
    expect(src.format).toBe('sqlite');
    expect(src.totalRecords).toBe(3);
    const rs: SourceRecord[] = [];
    for await (const b of src.batches()) rs.push(...b);
    expect(src.bytesRead()).toBe(src.totalBytes);
    src.close();
    expect(rs.map((r) => ({ line: r.line, raw: r.raw, record: r.record }))).toEqual([
      { line: 1, raw: '{"type":"trade","time":"t1","price":"1.5","size":2}', record: { type: 'trade', time: 't1', price: '1.5', size: 2 } },
      {
        line: 2,
        raw: '{"type":"quote","time":"t2","price":null,"size":null}',
        record: { type: 'quote', time: 't2', price: null, size: null },
      },
      { line: 3, raw: '{"type":"trade","time":"","price":"","size":0.25}', record: { type: 'trade', time: '', price: '', size: 0.25 } },
    ]);
    const rest = await readAll(p, { startLine: 2, batchSize: 1 });
    expect(rest.map((r) => r.line)).toEqual([2, 3]);
  });

  it('throws a clear error without an events table, or for a file that is not SQLite', () => {
    const p = makeDb('b.db', [['trade', 't', '1', 1]], 'trades');
    expect(() => openSource(p)).toThrow(/^SQLite file .* has no "events" table/);
    const q = file('c.db', 'this is not a database, just text that is long enough to fill a page header');
    expect(() => openSource(q)).toThrow(expect.objectContaining({ code: 'input' }));
  });
});
