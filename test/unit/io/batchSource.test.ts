/**
 * openBatchSource (src/io/batchSource.ts): every format's batches give openSource's records, in
 * this thread and in a worker; opening and reading fail as openSource does, with its messages;
 * no reader worker is left running after a read, a stop, a failure or a close.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import type { BatchColumns } from '../../../src/core/batch.js';
import { recordAt } from '../../../src/io/batch.js';
import { openBatchSource, readerWorkers } from '../../../src/io/batchSource.js';
import { openSource, type SourceRecord } from '../../../src/io/source.js';
import { writeLog } from '../../../scripts/gen-log.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-batch-source-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A record as plain fields, its raw text read: a CSV or SQLite record makes its raw text when
 * asked (a getter), which a comparison of own fields would not see.
 */
function plain(r: SourceRecord): SourceRecord {
  return { ...r, raw: r.raw };
}

async function recordsOf(path: string, threads: number, batchSize = 500): Promise<SourceRecord[]> {
  const src = openBatchSource(path, { threads, batchSize });
  const out: SourceRecord[] = [];
  try {
    for await (const b of src.batches()) for (let i = 0; i < b.length; i++) out.push(plain(recordAt(b, i)));
  } finally {
    src.close();
  }
  return out;
}

async function reference(path: string, batchSize = 500): Promise<SourceRecord[]> {
  const src = openSource(path, { batchSize });
  const out: SourceRecord[] = [];
  for await (const b of src.batches()) out.push(...b.map(plain));
  src.close();
  return out;
}

/** The error `f` fails with. */
async function failure(f: () => Promise<unknown>): Promise<Error | undefined> {
  try {
    await f();
  } catch (e) {
    return e as Error;
  }
  return undefined;
}

describe('openBatchSource', () => {
  it.each(['ndjson', 'ndjson.gz', 'csv', 'csv.gz', 'sqlite'])('reads a %s log as openSource does, in 1 and 2 threads', async (ext) => {
    const path = join(dir, `log.${ext}`);
    await writeLog(path, { seed: 4, events: 3_000, badRate: 0.02 });
    const want = await reference(path);
    expect(want.length).toBeGreaterThanOrEqual(3_000);
    for (const threads of [1, 2]) {
      expect(await recordsOf(path, threads)).toEqual(want);
      expect(readerWorkers()).toBe(0);
    }
  });

  it.each([1, 2])('recycles the buffers of the batches taken, their records unchanged (%i threads)', async (threads) => {
    const path = join(dir, `recycle-${threads}.ndjson`);
    await writeLog(path, { seed: 6, events: 60_000, badRate: 0.02 });
    const src = openBatchSource(path, { threads, batchSize: 700, recycle: true });
    const got: SourceRecord[] = [];
    const taken: BatchColumns[] = [];
    const buffers = new Set<ArrayBuffer>();
    for await (const b of src.batches()) {
      // A batch's columns are views of one buffer, its raw bytes too.
      expect(new Set([b.kind.buffer, b.line.buffer, b.v.buffer, b.textCells.buffer, b.rawEnd.buffer, b.raw.buffer]).size).toBe(1);
      buffers.add(b.kind.buffer as ArrayBuffer);
      for (let i = 0; i < b.length; i++) got.push(plain(recordAt(b, i)));
      taken.push(b);
    }
    src.close();
    expect(got).toEqual(await reference(path));
    expect(taken.length).toBeGreaterThan(60);
    if (threads === 1) {
      // In this thread: the batches are built on a few buffers (those of one read's batches), again and again.
      expect(buffers.size).toBeLessThan(taken.length / 4);
    } else {
      // From a worker: each batch taken went back to it (detached here), the last one too.
      for (const b of taken) expect(b.kind.buffer.byteLength).toBe(0);
    }
  });

  it('keeps every batch whole without recycle', async () => {
    const path = join(dir, 'keep.ndjson');
    await writeLog(path, { seed: 6, events: 5_000 });
    for (const threads of [1, 2]) {
      const src = openBatchSource(path, { threads, batchSize: 700 });
      const taken: BatchColumns[] = [];
      for await (const b of src.batches()) taken.push(b);
      src.close();
      const got = taken.flatMap((b) => Array.from({ length: b.length }, (_, i) => plain(recordAt(b, i))));
      expect(got).toEqual(await reference(path));
    }
  });

  it('gives a source the format, size and bytes read of the input', async () => {
    const path = join(dir, 'sizes.ndjson.gz');
    await writeLog(path, { seed: 5, events: 2_000 });
    for (const threads of [1, 2]) {
      const src = openBatchSource(path, { threads });
      for await (const _ of src.batches());
      expect([src.format, src.totalBytes, src.bytesRead()]).toEqual(['ndjson', openSource(path).totalBytes, src.totalBytes]);
      src.close();
    }
  });

  it('fails to open a missing file with the message of openSource', () => {
    const path = join(dir, 'missing.ndjson');
    const want = (() => {
      try {
        openSource(path);
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(want).toMatch(/^cannot open event log/);
    for (const threads of [1, 2]) expect(() => openBatchSource(path, { threads })).toThrow(want);
    expect(() => openBatchSource(path, { threads: 0 })).toThrow(/threads/);
  });

  it.each(['ndjson', 'csv'])('fails reading a cut %s gzip stream as openSource does, after the same records', async (format) => {
    const text =
      format === 'ndjson'
        ? Array.from(
            { length: 20_000 },
            (_, i) => `{"type":"trade","time":"2024-03-01T00:00:01Z","symbol_id":"X_SPOT_A_B","price":"${i + 1}","size":"1"}\n`,
          ).join('')
        : `type,time,symbol_id,price,size\n${Array.from({ length: 20_000 }, (_, i) => `trade,2024-03-01T00:00:01Z,X_SPOT_A_B,${i + 1},1\n`).join('')}`;
    const gz = gzipSync(text);
    const path = join(dir, `cut.${format}.gz`);
    writeFileSync(path, gz.subarray(0, Math.floor(gz.length / 2)));
    const got: SourceRecord[] = [];
    const want: SourceRecord[] = [];
    const wantErr = await failure(async () => {
      const src = openSource(path, { batchSize: 512 });
      for await (const b of src.batches()) want.push(...b.map(plain));
    });
    expect(wantErr?.message).toMatch(/the last line read whole was line \d+$/);
    for (const threads of [1, 2]) {
      got.length = 0;
      const err = await failure(async () => {
        const src = openBatchSource(path, { batchSize: 512, threads });
        for await (const b of src.batches()) for (let i = 0; i < b.length; i++) got.push(plain(recordAt(b, i)));
      });
      expect(err?.message).toBe(wantErr?.message);
      expect(got).toEqual(want);
      expect(readerWorkers()).toBe(0);
    }
  });

  it('leaves no worker running when the reading stops early or the source is closed', async () => {
    const path = join(dir, 'stop.ndjson');
    await writeLog(path, { seed: 6, events: 20_000 });
    const src = openBatchSource(path, { threads: 2, batchSize: 100 });
    let seen = 0;
    for await (const b of src.batches()) {
      seen += b.length;
      expect(readerWorkers()).toBe(1);
      if (seen >= 300) break;
    }
    expect(readerWorkers()).toBe(0);
    // Closed while a batch is awaited: the read ends quietly.
    const it2 = src.batches()[Symbol.asyncIterator]();
    const first = (await it2.next()).value as BatchColumns;
    expect(first.length).toBe(100);
    const pending = it2.next();
    src.close();
    await pending;
    expect((await it2.next()).done).toBe(true);
    expect(readerWorkers()).toBe(0);
  });
});
