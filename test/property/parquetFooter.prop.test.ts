/**
 * A Parquet event log's footer read lean (src/io/parquetFooter.ts) gives what hyparquet's parse
 * of it says: each row group's rows, bytes, last line and its columns' byte ranges, types and
 * codecs, the columns that may be null, the key-value metadata; for files `xrate convert` wrote
 * (any row-group size, one input or several, merged) and one DuckDB wrote, whose row groups read
 * flat or not give the general decoder's batches. A footer cut short, or with a byte changed,
 * fails with an Error or reads as some footer, never otherwise. The Thrift reader skips a binary
 * field whole.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { type FileMetaData, parquetMetadata } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, describe, expect, it } from 'vitest';
import { type BatchColumns, eventAt } from '../../src/core/batch.js';
import { convertToParquet } from '../../src/io/parquetConvert.js';
import { readFooter } from '../../src/io/parquetFooter.js';
import { FLAT_COLUMNS, type Plans } from '../../src/io/parquetPlan.js';
import { parquetRawOf } from '../../src/io/parquetRead.js';
import { Compact } from '../../src/io/thriftCompact.js';
import { parquetBatches as batches, convertedLogs, rowsOf } from '../helpers/parquetBatches.js';
import { parquetLine } from '../helpers/parquetLines.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-parquet-footer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file's footer bytes (the Thrift FileMetaData). */
function footerBytes(path: string): Uint8Array {
  const b = readFileSync(path);
  const len = b.readUInt32LE(b.length - 8);
  return new Uint8Array(b.buffer, b.byteOffset + b.length - 8 - len, len);
}

/** Plans as names and numbers, comparable whatever the order the names were listed in. */
function shown(p: Plans): unknown {
  return {
    optional: p.optional,
    groups: p.groups.map((g) => ({
      rows: g.rows,
      compressed: g.compressed,
      lastLine: g.lastLine,
      unsupported: g.unsupported,
      columns:
        g.ranges && g.codes
          ? FLAT_COLUMNS.map((_, k) => [g.ranges![2 * k], g.ranges![2 * k + 1], p.names[g.codes![2 * k]], p.names[g.codes![2 * k + 1]]])
          : undefined,
    })),
  };
}

/** What hyparquet's parse of the footer says, as {@link shown} shows plans. */
function reference(md: FileMetaData): unknown {
  const optional = new Map(md.schema.map((e) => [e.name, e.repetition_type === 'OPTIONAL']));
  return {
    optional: FLAT_COLUMNS.map((n) => optional.get(n) ?? true),
    groups: md.row_groups.map((rg) => {
      const rows = Number(rg.num_rows);
      const columns: unknown[] = FLAT_COLUMNS.map(() => undefined);
      let lastLine: number | undefined;
      let unsupported: string | undefined;
      for (const c of rg.columns) {
        const m = c.meta_data!;
        const k = m.path_in_schema.length === 1 ? FLAT_COLUMNS.indexOf(m.path_in_schema[0]) : -1;
        if (k < 0) continue;
        if (m.path_in_schema[0] === 'line' && typeof m.statistics?.max_value === 'bigint') lastLine = Number(m.statistics.max_value);
        if (Number(m.num_values) !== rows) unsupported ??= 'parquet column chunk of another length than its row group';
        const dict = Number(m.dictionary_page_offset ?? 0);
        const from = dict > 0 ? dict : Number(m.data_page_offset);
        columns[k] = [from, from + Number(m.total_compressed_size), m.type, m.codec];
      }
      if (unsupported === undefined && columns.includes(undefined)) unsupported = 'parquet row group without every column';
      return {
        rows,
        compressed: Number(rg.total_compressed_size ?? 0n),
        lastLine,
        unsupported,
        columns: unsupported ? undefined : columns,
      };
    }),
  };
}

/** hyparquet's parse of the footer of `path`. */
function metadataOf(path: string): FileMetaData {
  const b = readFileSync(path);
  return parquetMetadata(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/** The key-value metadata as hyparquet's readers take it (`find`: a key's first value). */
function kvOf(md: FileMetaData): Map<string, string | undefined> {
  const kv = new Map<string, string | undefined>();
  for (const { key, value } of md.key_value_metadata ?? []) if (!kv.has(key)) kv.set(key, value);
  return kv;
}

describe("a Parquet event log's footer read lean (src/io/parquetFooter.ts)", () => {
  it('the Thrift reader skips a binary field whole, then reads the next', () => {
    // struct { 1: binary "abc", 2: i32 7 (zigzag 14), 3: list<bool> [true, false], 4: i64 -3 }, STOP
    const r = new Compact(Uint8Array.from([0x18, 3, 97, 98, 99, 0x15, 14, 0x19, 0x21, 1, 2, 0x16, 5, 0]), 0, 'test', 'its bytes');
    const got: number[] = [];
    r.struct((id) => {
      if (id === 2 || id === 4) got.push(r.zigzag());
      else return false;
      return true;
    });
    expect(got).toEqual([7, -3]);
    expect(r.pos).toBe(14);
    expect(() => new Compact(Uint8Array.from([0x18, 9, 97]), 0, 'test', 'its bytes').struct(() => false)).toThrow(
      /test runs past its bytes/,
    );
  });

  it("gives hyparquet's reading of converted logs: any row-group size, one input or several, merged or not", async () => {
    let k = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(parquetLine, { minLength: 1, maxLength: 60 }), { minLength: 1, maxLength: 2 }),
        fc.integer({ min: 1, max: 70 }),
        fc.boolean(),
        async (logs, rowGroupRows, merge) => {
          const { pq } = await convertedLogs(dir, `f${k++}`, logs, { rowGroupRows, merge });
          const bytes = footerBytes(pq);
          const md = metadataOf(pq);
          const footer = readFooter(bytes);
          expect(shown(footer.plans)).toEqual(reference(md));
          expect(footer.kv).toEqual(kvOf(md));
        },
      ),
      { seed: 20261129, numRuns: 40 },
    );
  }, 120_000);

  it('reads a log DuckDB wrote (its own encodings and statistics): the plans hyparquet reads, the batches of the general decoder', async () => {
    const log = join(dir, 'duck.ndjson');
    const lines = fc.sample(parquetLine, { seed: 7, numRuns: 10_000 });
    writeFileSync(log, `${lines.join('\n')}\n`);
    const pq = join(dir, 'duck-source.parquet');
    await convertToParquet([log], pq, { rowGroupRows: 1000 });
    const duck = join(dir, 'duck.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      await c.run(
        `COPY (SELECT * FROM read_parquet('${pq}') ORDER BY line) TO '${duck}' (FORMAT parquet, ROW_GROUP_SIZE 2048, KV_METADATA {'xrate.kind': 'events/1', 'xrate.lines': 'ascending', 'xrate.inputs': '["duck.ndjson"]'})`,
      );
    } finally {
      c.closeSync();
      db.closeSync();
    }
    const md = metadataOf(duck);
    expect(md.row_groups.length).toBeGreaterThan(1);
    const footer = readFooter(footerBytes(duck));
    expect(shown(footer.plans)).toEqual(reference(md));
    expect(footer.kv.get('xrate.kind')).toBe('events/1');
    const want = await batches(pq, { decoder: 'hyparquet' });
    expect(await batches(duck, { decoder: 'hyparquet' })).toHaveLength(md.row_groups.length);
    const _rows = (bs: BatchColumns[]) =>
      bs.flatMap((b) => Array.from(b.line, (line, i) => ({ line, event: eventAt(b, i) ?? null, raw: parquetRawOf(b, i) })));
    expect(rowsOf(await batches(duck, {}))).toEqual(rowsOf(want));
    // From a line: the same rows as the converted file's.
    const from = 4500;
    expect(rowsOf(await batches(duck, { startLine: from }))).toEqual(rowsOf(want).filter((r) => r.line >= from));
  }, 60_000);

  it('a key given twice in the key-value metadata: its first value, as hyparquet takes it', () => {
    const path = join(dir, 'twice.parquet');
    const buf = parquetWriteBuffer({
      columnData: [{ name: 'line', data: [1n, 2n], type: 'INT64' }],
      kvMetadata: [
        { key: 'xrate.kind', value: 'events/1' },
        { key: 'xrate.kind', value: 'other' },
        { key: 'x', value: 'y' },
      ],
    });
    writeFileSync(path, new Uint8Array(buf));
    const md = metadataOf(path);
    const kv = readFooter(footerBytes(path)).kv;
    expect(kv.get('xrate.kind')).toBe(md.key_value_metadata?.find((e) => e.key === 'xrate.kind')?.value);
    expect(kv).toEqual(
      new Map([
        ['xrate.kind', 'events/1'],
        ['x', 'y'],
      ]),
    );
  });

  it('a footer cut short fails with an Error; one with a byte changed fails so or reads as some footer', () => {
    const log = join(dir, 'damaged.ndjson');
    writeFileSync(log, `${fc.sample(parquetLine, { seed: 3, numRuns: 200 }).join('\n')}\n`);
    const pq = join(dir, 'damaged.parquet');
    return convertToParquet([log], pq, { rowGroupRows: 50 }).then(() => {
      const bytes = footerBytes(pq);
      for (let n = 0; n < bytes.length; n += 7) expect(() => readFooter(bytes.slice(0, n))).toThrow(Error);
      fc.assert(
        fc.property(fc.nat(bytes.length - 1), fc.integer({ min: 0, max: 255 }), (at, v) => {
          const b = bytes.slice();
          b[at] = v;
          try {
            readFooter(b);
          } catch (e) {
            expect(e).toBeInstanceOf(Error);
          }
        }),
        { seed: 5, numRuns: 2000 },
      );
    });
  });
});
