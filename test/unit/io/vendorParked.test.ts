/**
 * A merge of thousands of vendor files reads each file's first batch to place it
 * (src/io/vendorBatches.ts `first`): what a file keeps after that batch is its parser, not its
 * inflate state or read buffers, even when the files are opened one after another without a turn
 * of the event loop (an inflater's close ends on a later turn); and once the merge parks it
 * (src/io/mergeBatches.ts), not even that, until the merge reaches it; a replay's merge lets its
 * source go too (src/replay/recordSource.ts `vendorMergeInputs`). A file gone by then says that
 * its first rows were read before.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import type { BatchColumns } from '../../../src/core/batch.js';
import { type BatchSource, recordAt } from '../../../src/io/batch.js';
import { mergeBatchSources, WAKE_AHEAD } from '../../../src/io/mergeBatches.js';
import { readAhead } from '../../../src/io/readAhead.js';
import { mergedVendorFile, openVendorBatches, type VendorBatchOptions } from '../../../src/io/vendorBatches.js';
import { sniffVendorFile, type VendorFile } from '../../../src/io/vendorSniff.js';
import { MERGE_READ_AHEAD_THREADS, vendorMergeInputs } from '../../../src/replay/recordSource.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-vendor-parked-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const FILES = 1500;

/** 1,500 CoinAPI quote files of 200 rows, file k's rows at second k: a merge reaches them one after another. */
function mergedFiles(): string[] {
  const paths = Array.from({ length: FILES }, (_v, k) => join(dir, 'merged', 'D-20230701', `IDDI-${k}+SC-K_SPOT_M${k}_B+S-M${k}B.csv.gz`));
  if (existsSync(paths[0])) return paths;
  mkdirSync(join(paths[0], '..'), { recursive: true });
  paths.forEach((p, k) => {
    const t = new Date(Date.UTC(2023, 6, 1, 0, 0, k)).toISOString().slice(11, 19);
    const rows = Array.from({ length: 200 }, (_v, j) => `${t}.${String(j).padStart(4, '0')};${t}.${j};1.5;2;1.4;3`);
    writeFileSync(p, gzipSync(`time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n${rows.join('\n')}\n`));
  });
  return paths;
}

/** The heap and array buffers held once the streams closed on a later turn are gone and a collection ran. */
async function heldBytes(): Promise<number> {
  await new Promise((r) => setTimeout(r, 20));
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** How a merge in the replay's thread opens a vendor file to place it (src/replay/recordSource.ts). */
const PLACING = { batchSize: 256, first: 1 };

/**
 * The files of {@link mergedFiles} sniffed as a replay sniffs them (each file's head kept until the
 * merge places the file) and merged through `sourceOf`: the bytes held a file once the merge has
 * placed them all (what the tests before let go gone first: closed streams end on later turns),
 * and the rows of all, each file's read in order.
 */
async function placedMerge(sourceOf: (path: string, f: VendorFile) => BatchSource): Promise<{ held: number; rows: number }> {
  const paths = mergedFiles();
  let before = await heldBytes();
  // Settled: two measures in a row within 32 KiB (about 20 bytes a file; 256 KiB let the noise of
  // other tests' leftovers reach 150 bytes a file either way).
  for (let k = 0, was = Number.POSITIVE_INFINITY; k < 40 && Math.abs(was - before) > 1 << 15; k++) {
    was = before;
    before = await heldBytes();
  }
  const sniffed = paths.map((p) => ({ p, f: sniffVendorFile(p) }));
  const m = mergeBatchSources(
    sniffed.map(({ p, f }) => sourceOf(p, f)),
    { batchSize: 64 },
  );
  try {
    const it = m.batches()[Symbol.asyncIterator]();
    // Every file placed; the merge is in the first file's rows.
    const first = await it.next();
    expect(first.value?.input?.[63]).toBe(0);
    // The sniffs' heads go with the files placed: only the sources hold them.
    sniffed.length = 0;
    // The least of a few measures: what closed streams let go on later turns gone.
    let after = await heldBytes();
    for (let k = 0; k < 4; k++) after = Math.min(after, await heldBytes());
    const held = (after - before) / FILES;
    return { held, rows: await restInOrder(it, first.value?.length ?? 0) };
  } finally {
    m.close();
  }
}

/** The merged batches left in `it`, their inputs reached in order (file k's rows before file k + 1's): the rows in all, `rows` so far. */
async function restInOrder(it: AsyncIterator<BatchColumns>, rows: number): Promise<number> {
  let last = 0;
  for (let r = await it.next(); !r.done; r = await it.next()) {
    rows += r.value.length;
    for (let i = 0; i < r.value.length; i++) {
      expect(r.value.input![i]).toBeGreaterThanOrEqual(last);
      last = r.value.input![i];
    }
  }
  return rows;
}

describe('parked vendor files', () => {
  it('keep no read buffer each: 1,500 parked in one turn hold less than 8 MB of array buffers', async () => {
    const rows = Array.from({ length: 200 }, (_v, k) => `12:00:00.${String(k).padStart(4, '0')};12:00:00.${k};1.5;2;1.4;3`);
    const gz = gzipSync(`time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n${rows.join('\n')}\n`);
    const paths = Array.from({ length: FILES }, (_v, k) => join(dir, 'D-20230701', `IDDI-${k}+SC-K_SPOT_A${k}_B+S-A${k}B.csv.gz`));
    mkdirSync(join(paths[0], '..'), { recursive: true });
    for (const p of paths) writeFileSync(p, gz);
    gc();
    const before = process.memoryUsage().arrayBuffers;
    const held: unknown[] = [];
    for (const p of paths) {
      const it = openVendorBatches(p, { batchSize: 256, first: 16 }).batches()[Symbol.asyncIterator]();
      const first = await it.next();
      expect(first.value?.length).toBe(16);
      held.push(it, first.value);
    }
    gc();
    const grown = process.memoryUsage().arrayBuffers - before;
    // The first batches and parsers: about 2.5 KB a file (with each file's read buffer, about 19 KB).
    expect(grown).toBeLessThan(8 << 20);
    expect(held.length).toBe(2 * FILES);
  });

  it('hold little each once a merge has placed and parked them: 1,500 files, under 2 KB a file', async () => {
    const paths = mergedFiles();
    const sniffed = paths.map((p) => ({ p, f: sniffVendorFile(p) }));
    const before = await heldBytes();
    const m = mergeBatchSources(
      sniffed.map(({ p, f }) => openVendorBatches(p, { batchSize: 256, first: 1, kind: f.kind, size: f.size, gzip: f.gzip })),
      { batchSize: 64 },
    );
    const it = m.batches()[Symbol.asyncIterator]();
    // Every file placed; the merge is in the first file's rows.
    const first = await it.next();
    expect(first.value?.input?.[63]).toBe(0);
    const grown = (await heldBytes()) - before;
    // Parked whole, a file holds its source and its place in the merge, about 1 KB; with its parser
    // and first batch, about 6 KB.
    expect(grown / FILES).toBeLessThan(2048);
    // And each is read again from its start when reached: all 200 rows of every file, in order.
    expect(await restInOrder(it, first.value?.length ?? 0)).toBe(200 * FILES);
    m.close();
  });

  for (const threads of [1, MERGE_READ_AHEAD_THREADS])
    it(`are let go by a replay's merge once parked and once read (${threads} thread${threads > 1 ? 's' : ''}): no source of 1,500 files alive then`, async () => {
      // The inputs as a replay's merge opens them (sniffed as placed; read ahead in a worker with
      // threads enough), each source they give watched.
      const inputs = vendorMergeInputs(mergedFiles(), { threads });
      const placing: WeakRef<BatchSource>[] = [];
      const reading: WeakRef<BatchSource>[] = [];
      /**
       * How many of `refs` are alive once collections on later turns let go what they can (a
       * worker's hand-off ends on a later turn). None is dereferenced before: that would keep it
       * alive through the job.
       */
      const settled = async (refs: WeakRef<BatchSource>[]): Promise<number> => {
        for (let k = 0; k < 3; k++) await heldBytes();
        return refs.filter((r) => r.deref() !== undefined).length;
      };
      const m = mergeBatchSources(
        {
          length: inputs.length,
          open(i) {
            const src = inputs.open(i);
            placing.push(new WeakRef(src));
            return src;
          },
          reopen(i) {
            const src = (inputs.reopen as (i: number) => BatchSource)(i);
            reading.push(new WeakRef(src));
            return src;
          },
        },
        { batchSize: 64 },
      );
      try {
        // In a function of its own: a finished generator (the merge's) keeps its last registers,
        // a cursor among them, while it is referenced.
        const rows = await (async (): Promise<number> => {
          const it = m.batches()[Symbol.asyncIterator]();
          // Every file placed; the merge is in the first file's rows.
          const first = await it.next();
          expect(first.value?.input?.[63]).toBe(0);
          expect(placing.length).toBe(FILES);
          // Parked, a file is its place in the merge and its format and size in columns; the files
          // woken ahead of the merge are read by new sources.
          expect(await settled(placing)).toBe(0);
          expect(reading.length).toBeGreaterThan(0);
          expect(reading.length).toBeLessThanOrEqual(WAKE_AHEAD + 1);
          return restInOrder(it, first.value?.length ?? 0);
        })();
        expect(rows).toBe(200 * FILES);
        // Each read again once, its source let go once read.
        expect(reading.length).toBe(FILES);
        expect(await settled(reading)).toBe(0);
      } finally {
        m.close();
        inputs.close();
      }
    });

  it("hold only their place through the merge's own source: 1,500 files, under 256 bytes a file", async () => {
    // Read as a merge in the replay's thread reads them.
    const { held, rows } = await placedMerge((p, f) => mergedVendorFile(p, f.kind!, f.size, f.gzip, f.head, PLACING));
    // The source (about 100 bytes) and the file's place in the merge; its head, parser, reading
    // and cursor let go (the source of the test above holds about 1 KB, a cursor about 250 bytes).
    expect(held).toBeLessThan(256);
    expect(rows).toBe(200 * FILES);
  });

  it('placed here and read by a read-ahead worker, hold little more here: 1,500 files, under 512 bytes a file', async () => {
    // Read as a merge reads them with its read-ahead worker (threads enough): placed in this thread
    // from the sniffed lines, read by the worker once parked.
    const ra = readAhead();
    try {
      const { held, rows } = await placedMerge((p, f) =>
        ra.addPlaced(
          { path: p, opts: { batchSize: 256, kind: f.kind, size: f.size, gzip: f.gzip } },
          mergedVendorFile(p, f.kind!, f.size, f.gzip, f.head, PLACING),
        ),
      );
      // The two sources and the file's place: what the worker holds of a file is in its own heap.
      expect(held).toBeLessThan(512);
      expect(rows).toBe(200 * FILES);
    } finally {
      ra.close();
    }
  });

  it('a file gone before it is read again says its first rows were read before, here or in the worker', async () => {
    const rows = Array.from({ length: 40 }, (_v, k) => `12:00:00.${String(k).padStart(4, '0')};12:00:00.${k};1.5;2;1.4;3`);
    const gz = gzipSync(`time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n${rows.join('\n')}\n`);
    /** Its first row read, then parked; `gone`: the file deleted before it is read again. Its lines read again, or the error. */
    const parkedThen = async (name: string, ahead: boolean, gone: boolean): Promise<number[] | string> => {
      const p = join(dir, 'gone', 'D-20230701', `IDDI-1+SC-K_SPOT_A_B+S-${name}-${ahead}.csv.gz`);
      mkdirSync(join(p, '..'), { recursive: true });
      writeFileSync(p, gz);
      const f = sniffVendorFile(p);
      const opts: VendorBatchOptions = { batchSize: 256, first: 1, kind: f.kind, size: f.size, gzip: f.gzip };
      const ra = ahead ? readAhead() : undefined;
      const src = ra ? ra.add({ path: p, opts: { ...opts, size: f.size } }) : openVendorBatches(p, opts);
      try {
        const it = src.batches()[Symbol.asyncIterator]();
        expect((await it.next()).value?.length).toBe(1);
        expect(src.park?.()).toBe(true);
        await it.return?.(undefined);
        if (gone) rmSync(p);
        const lines: number[] = [];
        for await (const b of src.batches()) for (let i = 0; i < b.length; i++) lines.push(recordAt(b, i).line);
        return lines;
      } catch (e) {
        return (e as Error).message;
      } finally {
        src.close();
        ra?.close();
      }
    };
    for (const ahead of [false, true]) {
      expect(await parkedThen('KEPT', ahead, false)).toEqual(Array.from({ length: 40 }, (_v, k) => k + 2));
      expect(await parkedThen('GONE', ahead, true)).toMatch(
        /^cannot read ".*GONE.*": ENOENT.*; its first rows were read before \(to place it in a merge\): was it moved or changed since\?$/,
      );
    }
  });
});
