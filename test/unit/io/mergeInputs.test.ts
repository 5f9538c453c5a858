/**
 * openMergedInputs (src/io/mergeInputs.ts): the merge read in a worker thread gives the rows, raw
 * texts and input of each row that the merge in this thread gives (vendor files, an NDJSON log
 * and a CSV log whose records make their raw texts by a getter, rejects included); an input that
 * cannot be opened fails it with the same error; no worker is left running.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateLog, writeLog } from '../../../scripts/gen-log.js';
import { recordAt } from '../../../src/io/batch.js';
import { readerWorkers } from '../../../src/io/batchSource.js';
import { expandInputs } from '../../../src/io/inputs.js';
import { openMergedInputs } from '../../../src/io/mergeInputs.js';
import type { SourceRecord } from '../../../src/io/source.js';
import { exportVendor } from '../../helpers/vendorExport.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-merge-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Row {
  input: number;
  rec: SourceRecord;
}

/** The merged rows of `paths` read with `threads`, each record's raw text read, and the bytes read and in all. */
async function merged(paths: string[], threads: number, batchSize = 300): Promise<{ rows: Row[]; bytesRead: number; totalBytes: number }> {
  const m = openMergedInputs(paths, { threads, batchSize });
  const rows: Row[] = [];
  try {
    for await (const b of m.batches()) {
      expect(b.length).toBeLessThanOrEqual(batchSize);
      for (let i = 0; i < b.length; i++) {
        const r = recordAt(b, i);
        rows.push({ input: b.input![i], rec: { ...r, raw: r.raw } });
      }
    }
  } finally {
    m.close();
  }
  return { rows, bytesRead: m.bytesRead(), totalBytes: m.totalBytes };
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

describe('openMergedInputs', () => {
  it('gives in a worker thread the rows, raw texts and inputs it gives in this thread', async () => {
    const d = join(dir, 'mix');
    mkdirSync(d);
    const lines = [
      ...generateLog({ seed: 3, events: 4_000, exchanges: 3, assets: 4, start: '2024-03-01T22:00:00Z', rate: 1, badRate: 0.01 }),
    ];
    const x = exportVendor(lines, d, { vendor: 'coinapi', gzip: true });
    // A CSV log (its records make their raw texts when asked) with rows that cannot be read, and an
    // NDJSON log with bad lines.
    const csv = join(d, 'extra.csv');
    await writeLog(csv, { seed: 5, events: 800, start: '2024-03-01T23:00:00Z', badRate: 0.05 });
    appendFileSync(csv, 'quote,not a time\n');
    const ndjson = join(d, 'extra.ndjson');
    await writeLog(ndjson, { seed: 6, events: 800, start: '2024-03-02T01:00:00Z', badRate: 0.05 });
    const paths = expandInputs([x.meta, x.tree, csv, ndjson]);
    expect(paths.length).toBeGreaterThan(6);
    const here = await merged(paths, 1);
    const worker = await merged(paths, 2);
    expect(worker.rows.length).toBe(x.events + 800 + 1 + 800);
    expect(worker.rows).toEqual(here.rows);
    expect(worker.rows.some((r) => r.rec.error !== undefined && r.input === paths.indexOf(csv))).toBe(true);
    expect(worker.totalBytes).toBe(here.totalBytes);
    expect(worker.bytesRead).toBe(here.bytesRead);
    expect(readerWorkers()).toBe(0);
  });

  it('fails as the merge in this thread does when an input cannot be opened, and leaves no worker', async () => {
    const d = join(dir, 'missing');
    mkdirSync(d);
    const ok = join(d, 'a.ndjson');
    await writeLog(ok, { seed: 2, events: 100 });
    const paths = [ok, join(d, 'gone.csv.gz')];
    const here = await failure(() => merged(paths, 1));
    const worker = await failure(() => merged(paths, 2));
    expect(here?.message).toMatch(/gone\.csv\.gz/);
    expect(worker?.message).toBe(here?.message);
    expect((worker as { code?: string }).code).toBe((here as { code?: string }).code);
    expect(readerWorkers()).toBe(0);
  });

  it('stops its worker when the reading stops early or the merge is closed', async () => {
    const d = join(dir, 'stop');
    mkdirSync(d);
    const a = join(d, 'a.ndjson');
    const b = join(d, 'b.ndjson');
    await writeLog(a, { seed: 8, events: 5_000 });
    await writeLog(b, { seed: 9, events: 5_000 });
    const m = openMergedInputs([a, b], { threads: 2, batchSize: 100 });
    let seen = 0;
    for await (const batch of m.batches()) {
      seen += batch.length;
      expect(readerWorkers()).toBe(1);
      if (seen >= 300) break;
    }
    expect(readerWorkers()).toBe(0);
    const it2 = m.batches()[Symbol.asyncIterator]();
    expect((await it2.next()).value?.length).toBe(100);
    const pending = it2.next();
    m.close();
    await pending;
    expect((await it2.next()).done).toBe(true);
    expect(readerWorkers()).toBe(0);
  });
});
