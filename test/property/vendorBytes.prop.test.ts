/**
 * The byte readers of the vendor files (src/io/vendorBytes.ts): whatever the order their pulls
 * interleave in, the sizes they ask for, readers closed part way and files read again, the
 * inflaters a thread keeps and resets between files, a file's size told or not (its last read
 * then the short one, not an empty one after it): every reading read to its end gives exactly the
 * file's text (gzip of one member or several, or plain), and a broken gzip file throws, leaving
 * the readers of the other files as they were; no inflater is held once every reading is done,
 * failed or closed, and a small file's is let go with the pull that inflates its last bytes.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type ByteReader, inflatersHeld, openBytes } from '../../src/io/vendorBytes.js';

const RUNS = { seed: 4848, numRuns: 120 };
const dir = mkdtempSync(join(tmpdir(), 'xrate-vendor-bytes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file: its text, and how it is stored. */
interface FileSpec {
  text: Buffer;
  /** 0: plain; 1: gzip of one member; 2: two members; 3: gzip cut short (broken). */
  form: number;
  /** Compressed bytes read at a time (a read's size, some files exactly a multiple of it). */
  read: number;
  sized: boolean;
}

const fileSpec = fc.record({
  // Text that compresses little (random bytes) or much (repeated lines).
  text: fc.oneof(
    fc.uint8Array({ maxLength: 9000 }).map((a) => Buffer.from(a)),
    fc.tuple(fc.string({ maxLength: 40 }), fc.nat({ max: 2000 })).map(([s, n]) => Buffer.from(`${s}\n`.repeat(n))),
  ),
  form: fc.nat({ max: 3 }),
  read: fc.constantFrom(1, 7, 64, 4096),
  sized: fc.boolean(),
});

function store(path: string, f: FileSpec): void {
  if (f.form === 0) writeFileSync(path, f.text);
  else if (f.form === 1) writeFileSync(path, gzipSync(f.text));
  else if (f.form === 2) {
    const cut = f.text.length >> 1;
    writeFileSync(path, Buffer.concat([gzipSync(f.text.subarray(0, cut)), gzipSync(f.text.subarray(cut))]));
  } else {
    const z = gzipSync(f.text);
    writeFileSync(path, z.subarray(0, Math.max(1, z.length - 9)));
  }
}

/** A reading in progress: its reader, the text it gave, and whether it is to stop early. */
interface Reading {
  file: number;
  r: ByteReader;
  got: Buffer[];
  stopAfter: number;
  pulls: number;
}

describe('vendor byte readers', () => {
  it('give each file its text whatever the interleaving, early closes and reuse of inflaters', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fileSpec, { minLength: 1, maxLength: 5 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 20000 }), fc.nat({ max: 6 })), { minLength: 1, maxLength: 200 }),
        async (files, steps) => {
          const paths = files.map((f, i) => {
            const p = join(dir, `r${run}-${i}${f.form === 0 ? '.csv' : '.csv.gz'}`);
            store(p, f);
            return p;
          });
          run++;
          const open = (i: number, stopAfter: number): Reading => {
            const f = files[i];
            const size = f.sized ? statSync(paths[i]).size : undefined;
            const r = openBytes(paths[i], f.form !== 0, f.read, size) as ByteReader;
            return { file: i, r, got: [], stopAfter, pulls: 0 };
          };
          const held = inflatersHeld();
          const readings: (Reading | undefined)[] = files.map(() => undefined);
          const done: boolean[] = files.map(() => false);
          const check = (g: Reading): void => {
            const f = files[g.file];
            expect(Buffer.concat(g.got).equals(f.text)).toBe(true);
            done[g.file] = true;
          };
          for (const [pick, max, stop] of steps) {
            const i = pick % files.length;
            // A reading stopped early is closed and the file read again from its start.
            let g = readings[i] ?? open(i, stop === 0 ? 1 : Number.POSITIVE_INFINITY);
            readings[i] = g;
            if (g.pulls >= g.stopAfter) {
              g.r.close();
              g = open(i, Number.POSITIVE_INFINITY);
              readings[i] = g;
            }
            let chunk: Buffer | undefined;
            try {
              chunk = g.r.next(max);
            } catch (e) {
              expect(files[i].form).toBe(3);
              expect((e as Error).message).toMatch(/^cannot read ".*" \(gzip data broken/);
              readings[i] = undefined;
              continue;
            }
            g.pulls++;
            if (chunk === undefined) {
              check(g);
              readings[i] = undefined;
              continue;
            }
            expect(chunk.length).toBeLessThanOrEqual(max);
            // A view valid until the next pull: kept as a copy.
            g.got.push(Buffer.from(chunk));
          }
          // Every reading left open is read to its end.
          for (const g of readings) {
            if (g === undefined) continue;
            try {
              for (let c = g.r.next(1 << 17); c !== undefined; c = g.r.next(1 << 17)) g.got.push(Buffer.from(c));
            } catch (e) {
              expect(files[g.file].form).toBe(3);
              expect((e as Error).message).toMatch(/^cannot read ".*" \(gzip data broken/);
              continue;
            }
            // A file cut short (its trailer and more gone) never reads to its end.
            expect(files[g.file].form).not.toBe(3);
            check(g);
          }
          // Every reading done, failed or closed: no inflater is held.
          expect(inflatersHeld()).toBe(held);
        },
      ),
      RUNS,
    );
  });
});

describe('vendor byte readers of small gzip files', () => {
  it('let go of their inflater with the pull that inflates the last of the data, not at the next one', () => {
    // Small files, each inflated whole in one pull and left open (as a merge leaves the files of a
    // day until it reaches their rows): none holds its inflater (about 40 KB of zlib's memory)
    // meanwhile. A file read over several pulls holds it until its last.
    const paths = Array.from({ length: 50 }, (_v, i) => {
      const p = join(dir, `small-${i}.csv.gz`);
      writeFileSync(p, gzipSync(Buffer.from(`time,price\n${i},1.${i}\n`.repeat(20))));
      return p;
    });
    const held = inflatersHeld();
    const readers = paths.map((p) => {
      const r = openBytes(p, true, 1 << 15, statSync(p).size) as ByteReader;
      expect(r.next(1 << 17)?.toString()).toMatch(/^time,price\n/);
      return r;
    });
    expect(inflatersHeld()).toBe(held);
    const big = join(dir, 'small-big.csv.gz');
    writeFileSync(big, gzipSync(Buffer.from('time,price\n1,2\n'.repeat(1000))));
    const r = openBytes(big, true, 1 << 15, statSync(big).size) as ByteReader;
    expect(r.next(100)?.length).toBe(100);
    expect(inflatersHeld()).toBe(held + 1);
    r.close();
    expect(inflatersHeld()).toBe(held);
    for (const x of readers) {
      expect(x.next(1 << 17)).toBeUndefined();
      x.close();
    }
    expect(inflatersHeld()).toBe(held);
  });
});
