/**
 * A merge of thousands of vendor files holds each file's first batch, and the file parked after it
 * (src/io/vendorBatches.ts `first`): what a parked file keeps is that batch and its parser, not its
 * inflate state or read buffers, even when the files are opened and parked one after another
 * without a turn of the event loop (an inflater's close ends on a later turn).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openVendorBatches } from '../../../src/io/vendorBatches.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-vendor-parked-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const FILES = 1500;

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
});
