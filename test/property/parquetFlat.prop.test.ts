/**
 * The flat decoder of Parquet event logs (src/io/parquetColumns.ts, the default of
 * openParquetBatches) gives the very batches hyparquet's general decoder gives (every column,
 * raw bytes included), whatever the row-group size, the inputs (one, several, merged), the
 * line a read starts from and the replay's batch size, on new buffers or on those of batches before
 * (a reader worker's pool); and a row group it cannot read (an encoding it does not know) is read
 * by hyparquet. Read for times only (a pre-scan), a row group of quotes and trades alone gives each
 * row's line, time, kind and symbol as the whole batch has them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type BatchColumns, BufferPool, batchTransferList, ROW_OTHER } from '../../src/core/batch.js';
import { convertToParquet } from '../../src/io/parquetConvert.js';
import { openParquetBatches, type ParquetReadOptions } from '../../src/io/parquetRead.js';
import { rebatched } from '../../src/io/rebatch.js';
import { parquetMetadata } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { EVENT_COLUMNS, PARQUET_EVENTS_KIND, PARQUET_KIND_KEY } from '../../src/io/parquetSchema.js';
import { parquetBatches as batches, convertedLogs, rowsOf } from '../helpers/parquetBatches.js';
import { marketLine, parquetLine } from '../helpers/parquetLines.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-parquet-flat-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * {@link batches} read on a pool as a replay's reader worker reads them: each batch taken (copied),
 * then its buffers given back for the next ones, written over first so that a cell a batch does
 * not write shows.
 */
async function pooled(path: string, opts: ParquetReadOptions): Promise<BatchColumns[]> {
  const pool = new BufferPool(0);
  const pq = openParquetBatches(path, { ...opts, pool });
  const src = opts.batchSize === undefined ? pq : rebatched(pq, opts.batchSize);
  const out: BatchColumns[] = [];
  try {
    for await (const b of src.batches()) {
      out.push(structuredClone(b));
      for (const buf of batchTransferList(b)) {
        new Uint8Array(buf).fill(0xab);
        pool.put(buf);
      }
    }
  } finally {
    src.close();
  }
  return out;
}

/** Each row of `bs` as a pre-scan reads it: line, time, kind and symbol; another row whole. */
function timesOf(bs: BatchColumns[]): unknown[] {
  return bs.flatMap((b) =>
    Array.from({ length: b.length }, (_, i) =>
      b.kind[i] === ROW_OTHER
        ? { line: b.line[i], other: b.others[b.otherIndex[i]] }
        : { line: b.line[i], time: b.time[i], kind: b.kind[i], symbol: b.symbols[b.symbol[i]] },
    ),
  );
}

describe('the flat decoder of Parquet event logs (src/io/parquetColumns.ts)', () => {
  it('gives the batches of the general decoder: any row-group size, one input or several, merged or not, any start line', async () => {
    let k = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(parquetLine, { minLength: 1, maxLength: 80 }), { minLength: 1, maxLength: 2 }),
        fc.integer({ min: 1, max: 90 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 40 }),
        async (logs, rowGroupRows, merge, from, batchSize) => {
          const { paths, pq } = await convertedLogs(dir, `f${k++}`, logs, { rowGroupRows, merge });
          const want = await batches(pq, { decoder: 'hyparquet' });
          // Read flat, every row group (no fall back to hyparquet).
          expect(await batches(pq, { decoder: 'flat-only' })).toEqual(want);
          // Cut into a replay's batches: the flat decoder's own cut, then the rebatching; on
          // buffers of batches before, as a reader worker builds them.
          const cut = await batches(pq, { decoder: 'hyparquet', batchSize });
          expect(await batches(pq, { batchSize })).toEqual(cut);
          expect(await pooled(pq, { batchSize })).toEqual(cut);
          if (paths.length === 1) {
            const wantFrom = await batches(pq, { decoder: 'hyparquet', startLine: from, batchSize });
            // The rows from that line on are those of the whole file (row groups before left unread).
            expect(rowsOf(wantFrom)).toEqual(rowsOf(want).filter((r) => r.line >= from));
            expect(await batches(pq, { startLine: from, batchSize })).toEqual(wantFrom);
            expect(await pooled(pq, { startLine: from, batchSize })).toEqual(wantFrom);
          }
        },
      ),
      { seed: 20261128, numRuns: 60 },
    );
  }, 180_000);

  it("read for times only (a pre-scan): every row's line, time, kind and symbol as read whole, other rows and rejects whole", async () => {
    let k = 0;
    let lean = 0;
    await fc.assert(
      fc.asyncProperty(
        // Mostly quotes and trades: many row groups have no other row.
        fc.array(
          fc.array(fc.oneof({ arbitrary: marketLine, weight: 8 }, { arbitrary: parquetLine, weight: 1 }), { minLength: 1, maxLength: 80 }),
          {
            minLength: 1,
            maxLength: 2,
          },
        ),
        fc.integer({ min: 1, max: 40 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 60 }),
        async (logs, rowGroupRows, merge, batchSize, from) => {
          const { paths, pq } = await convertedLogs(dir, `t${k++}`, logs, { rowGroupRows, merge });
          const want = timesOf(await batches(pq, { batchSize }));
          const got = await batches(pq, { batchSize, timesOnly: true });
          expect(timesOf(got)).toEqual(want);
          expect(timesOf(await pooled(pq, { batchSize, timesOnly: true }))).toEqual(want);
          // From a line (one input: its lines ascend), the rows from that line on.
          if (paths.length === 1)
            expect(timesOf(await batches(pq, { batchSize, timesOnly: true, startLine: from }))).toEqual(
              timesOf(await batches(pq, { batchSize, startLine: from })),
            );
          // What shows a batch read for times only: a quote or trade row without its raw text.
          lean += got.filter((b) => b.length > 0 && b.rawEnd.every((e, i) => e === -1 && b.kind[i] !== ROW_OTHER)).length;
        },
      ),
      { seed: 20261129, numRuns: 60 },
    );
    expect(lean).toBeGreaterThan(20);
  }, 180_000);

  it("read from a line, the row groups wholly before it are not read (the line column's statistics)", async () => {
    const lines: string[] = [];
    for (let i = 0; i < 400; i++) {
      const t = `2024-03-01T00:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`;
      lines.push(i === 150 ? 'not json' : `{"type":"trade","time":"${t}","symbol_id":"S_SPOT_BTC_USD","price":${100 + i},"size":"1"}`);
    }
    const log = join(dir, 'skip.ndjson');
    writeFileSync(log, `${lines.join('\n')}\n`);
    const pq = join(dir, 'skip.parquet');
    await convertToParquet([log], pq, { rowGroupRows: 100 });
    const whole = rowsOf(await batches(pq, {}));
    // The pages of the first two row groups (lines 1-200) written over: they cannot be decoded.
    const bytes = readFileSync(pq);
    const md = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    for (const rg of md.row_groups.slice(0, 2))
      for (const c of rg.columns) {
        const m = c.meta_data!;
        const from = Number(m.dictionary_page_offset ?? m.data_page_offset);
        bytes.fill(0xff, from, from + Number(m.total_compressed_size));
      }
    const broken = join(dir, 'skip-broken.parquet');
    writeFileSync(broken, bytes);
    for (const from of [201, 250, 400]) {
      for (const decoder of ['flat-only', 'hyparquet'] as const) {
        const src = openParquetBatches(broken, { startLine: from, decoder });
        const got: BatchColumns[] = [];
        for await (const b of src.batches()) got.push(b);
        expect(src.bytesRead()).toBe(src.totalBytes);
        src.close();
        expect(rowsOf(got)).toEqual(whole.filter((r) => r.line >= from));
      }
    }
    // From a line within a written-over row group, or from the start, the file cannot be read.
    await expect(batches(broken, { startLine: 200, decoder: 'flat-only' })).rejects.toThrow();
    await expect(batches(broken, { decoder: 'flat-only' })).rejects.toThrow();
  });

  it('many distinct symbols (plain, not dictionary, pages), long row groups', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const t = `2024-03-01T00:00:${String(Math.floor(i / 100)).padStart(2, '0')}.${String(i % 100).padStart(2, '0')}00000Z`;
      lines.push(`{"type":"trade","time":"${t}","symbol_id":"S_SPOT_A${i}_USD","price":${1 + i / 7},"size":"0.${i}0"}`);
    }
    const log = join(dir, 'many.ndjson');
    writeFileSync(log, `${lines.join('\n')}\n`);
    const pq = join(dir, 'many.parquet');
    await convertToParquet([log], pq, { rowGroupRows: 2048 });
    const got = await batches(pq, { decoder: 'flat-only' });
    expect(got).toEqual(await batches(pq, { decoder: 'hyparquet' }));
    expect(got.reduce((n, b) => n + b.length, 0)).toBe(3000);
  });

  /** A one-row-group event log written by hyparquet-writer, with `opts` for some columns (else as convert writes them). */
  function writeLog(
    path: string,
    opts: Record<string, { codec?: 'UNCOMPRESSED' | 'SNAPPY'; encoding?: 'DELTA_BINARY_PACKED' | 'PLAIN' }>,
  ): void {
    const rows = 50;
    const cell = (name: string, i: number): unknown => {
      if (name === 'line') return BigInt(i + 1);
      if (name === 'input' || name === 'raw_form') return name === 'raw_form' ? 1 : 0;
      if (name === 'type') return i % 3 === 0 ? 'quote' : 'trade';
      if (name === 'time') return 1709251200000000n + BigInt(i * 1000);
      if (name === 'symbol_id') return `K_SPOT_A${i % 4}_USD`;
      const quote = i % 3 === 0;
      if (['bid_price', 'bid_size', 'ask_price', 'ask_size'].includes(name)) return quote ? 1 + i / 8 : null;
      if (name === 'price' || name === 'size') return quote ? null : 2 + i / 16;
      if (name === 'taker_side') return quote || i % 2 === 0 ? null : 'BUY';
      return null;
    };
    const buf = parquetWriteBuffer({
      schema: [{ name: 'root', num_children: EVENT_COLUMNS.length }, ...EVENT_COLUMNS.map(({ write: _, ...e }) => e)] as never,
      columnData: EVENT_COLUMNS.map((c) => ({
        name: c.name,
        data: Array.from({ length: rows }, (_, i) => cell(c.name, i)) as never,
        ...(opts[c.name] ?? c.write),
      })),
      kvMetadata: [
        { key: PARQUET_KIND_KEY, value: PARQUET_EVENTS_KIND },
        { key: 'xrate.inputs', value: '["x"]' },
      ],
    });
    writeFileSync(path, new Uint8Array(buf));
  }

  it('uncompressed, plain or delta-packed pages; an encoding the flat decoder does not read (delta-packed INT32) read by hyparquet', async () => {
    const plain = join(dir, 'uncompressed.parquet');
    writeLog(plain, Object.fromEntries(EVENT_COLUMNS.map((c) => [c.name, { codec: 'UNCOMPRESSED' as const }])));
    const snappy = join(dir, 'snappy.parquet');
    writeLog(snappy, { line: { encoding: 'PLAIN', codec: 'SNAPPY' }, time: { encoding: 'PLAIN', codec: 'SNAPPY' } });
    const int32 = join(dir, 'delta-int32.parquet');
    writeLog(int32, { raw_form: { encoding: 'DELTA_BINARY_PACKED' } });
    for (const path of [plain, snappy, int32]) {
      const got = await batches(path, {});
      expect(got).toEqual(await batches(path, { decoder: 'hyparquet' }));
      expect(got[0].length).toBe(50);
      expect([got[0].kind[0], got[0].v[0], got[0].line[49]]).toEqual([1, 1, 50]);
      expect([got[0].kind[1], got[0].v[4], got[0].side[1]]).toEqual([2, 2 + 1 / 16, 1]);
    }
    // The first two read flat; the third's row group by hyparquet, since flat it cannot be.
    for (const path of [plain, snappy]) expect(await batches(path, { decoder: 'flat-only' })).toEqual(await batches(path, {}));
    await expect(batches(int32, { decoder: 'flat-only' })).rejects.toThrow(/cannot read/);
  });
});
