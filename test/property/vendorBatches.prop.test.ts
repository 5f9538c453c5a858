/**
 * The columnar vendor reader (src/io/vendorBatches.ts) against the record-at-a-time one
 * (openSource, src/io/vendorCsv.ts): for any CoinAPI or tardis file, well formed or not (bad
 * values, wrong field counts, blank lines, quotes, lines over the limit, CRLF, a byte order
 * mark, non-ASCII text, gzip), its batches turned back row by row (`recordAt`) equal the records
 * openSource gives, rejects and raw texts included, whatever the batch size. So do its batches
 * with a short first one (`first`, read from the first lines the sniff read or not: `head`), or
 * built on a pool's buffers holding garbage (`pool`, as a merge gives its batches back), and
 * those a merge's read-ahead worker reads (src/io/readAhead.ts),
 * files pulled in any order, errors included.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type BatchColumns, BufferPool } from '../../src/core/batch.js';
import { recordAt } from '../../src/io/batch.js';
import { openSource, type SourceRecord } from '../../src/io/source.js';
import { readerWorkers } from '../../src/io/batchSource.js';
import { readAhead } from '../../src/io/readAhead.js';
import { openVendorBatches, type VendorBatchOptions } from '../../src/io/vendorBatches.js';
import { sniffVendorFile } from '../../src/io/vendorSniff.js';

const RUNS = { seed: 2727, numRuns: 150 };
const dir = mkdtempSync(join(tmpdir(), 'xrate-vendor-batches-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A record as plain data (openSource's good vendor rows are objects whose raw is a getter). */
function plain(r: SourceRecord): Record<string, unknown> {
  const o: Record<string, unknown> = { line: r.line, raw: r.raw };
  for (const k of ['record', 'error', 'reason', 'event', 'venue'] as const) if (r[k] !== undefined) o[k] = r[k];
  return o;
}

async function viaRecords(
  path: string,
  maxLineBytes: number,
  time: 'receive' | 'exchange',
  startLine: number,
  batchSize = 4096,
): Promise<unknown> {
  const src = openSource(path, { maxLineBytes, time, startLine, batchSize });
  const out: Record<string, unknown>[] = [];
  try {
    for await (const b of src.batches()) for (const r of b) out.push(plain(r));
  } catch (e) {
    return { error: (e as Error).message, out };
  } finally {
    src.close();
  }
  return out;
}

async function viaBatches(
  path: string,
  maxLineBytes: number,
  time: 'receive' | 'exchange',
  startLine: number,
  batchSize: number,
  first?: number,
  head?: Uint8Array,
  /** Batches built on a pool of buffers filled with garbage, each given back (and filled again) once read. */
  pooled = false,
): Promise<unknown> {
  const pool = pooled ? new BufferPool(0, 4) : undefined;
  for (const n of pool ? [64, 1000, 5000, 20000] : []) pool?.put(new Uint8Array(n).fill(0xa5).buffer);
  const src = openVendorBatches(path, { maxLineBytes, time, startLine, batchSize, first, head, pool });
  const out: Record<string, unknown>[] = [];
  try {
    for await (const b of src.batches()) {
      // Structured-clone values only (a worker thread transfers them).
      const copy = structuredClone(b);
      for (let i = 0; i < copy.length; i++) out.push(recordAt(copy, i) as unknown as Record<string, unknown>);
      // Pooled: columns and raw bytes in one buffer, from the pool, given back written over.
      if (pool) expect(b.raw.buffer).toBe(b.kind.buffer);
      pool?.put(new Uint8Array(b.kind.buffer).fill(0x5a).buffer as ArrayBuffer);
    }
  } catch (e) {
    return { error: (e as Error).message, out };
  } finally {
    src.close();
  }
  return out;
}

const plainDec = fc.oneof(
  fc.integer({ min: 0, max: 10_000_000 }).map((n) => String(n / 100)),
  fc.constantFrom('62000.5', '0.00012', '1', '0', '100', '0.000001'),
);
const dec = fc.oneof(
  { weight: 6, arbitrary: plainDec },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '62000.50',
      '007',
      '0.0',
      '1e-7',
      '0.0000001',
      '-1',
      '-0',
      '',
      ' 2',
      'abc',
      '.5',
      '5.',
      '12345678901234567890.5',
      '1234567890123456',
      'NaN',
      '1.2.3',
      '０',
    ),
  },
);
const frac = fc.integer({ min: 0, max: 9_999_999 }).map((n) =>
  String(n)
    .padStart(7, '0')
    .slice(0, 1 + (n % 7)),
);
const clock = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 59 }), frac)
  .map(([h, m, s, f]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}.${f}`);
const coinapiTime = fc.oneof(
  { weight: 5, arbitrary: clock.map((c) => `2023-07-01T${c}Z`) },
  { weight: 3, arbitrary: clock },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '2023-07-01T12:00:00Z',
      '12:00:00',
      '12:00',
      '2023-07-01T12:00:00.12345678Z',
      '2023-07-01T25:00:00Z',
      '2023-07-01 12:00:00',
      '',
      ' 12:00:00.5',
      '2023-07-01T12:00:00+01:00',
    ),
  },
);
const tardisTime = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 1_688_169_600_000_000, max: 1_688_255_999_999_999 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('', '-5', '12a', '99999999999999999', '0', '9999999999999999', ' 1688169600000000') },
);
const coinapiSide = fc.constantFrom('BUY', 'SELL', 'BUY_ESTIMATED', 'SELL_ESTIMATED', 'UNKNOWN', '', 'buy', 'BUYX', ' SELL');
const tardisSide = fc.constantFrom('buy', 'sell', 'unknown', '', 'BUY', 'Sell', 'x');
const word = fc.constantFrom('g1', 'abc-def', 'é', 'a b', '"q"', '"a;b"', '"open', 'x'.repeat(120));
const name = fc.constantFrom('binance', 'kraken', '', ' kraken');
const sym = fc.constantFrom('BTCUSDT', 'XBT/USD', '');

interface FileCase {
  format: 'coinapi' | 'tardis';
  quotes: boolean;
  header: string[];
  rows: string[][];
  delimiter: string;
  crlf: boolean;
  bom: boolean;
  gzip: boolean;
  blankLines: number[];
  pathKind: number;
}

function coinapiRow(quotes: boolean) {
  return quotes
    ? fc.tuple(fc.constantFrom('s1', ''), coinapiTime, coinapiTime, dec, dec, dec, dec)
    : fc.tuple(coinapiTime, coinapiTime, word, dec, dec, coinapiSide);
}
function tardisRow(quotes: boolean) {
  return quotes
    ? fc.tuple(name, sym, tardisTime, tardisTime, dec, dec, dec, dec)
    : fc.tuple(name, sym, tardisTime, tardisTime, word, tardisSide, dec, dec);
}

const caseArb: fc.Arbitrary<FileCase> = fc
  .tuple(fc.constantFrom('coinapi', 'tardis') as fc.Arbitrary<'coinapi' | 'tardis'>, fc.boolean())
  .chain(([format, quotes]) => {
    const header =
      format === 'coinapi'
        ? quotes
          ? ['id_site_coinapi', 'time_exchange', 'time_coinapi', 'ask_px', 'ask_sx', 'bid_px', 'bid_sx']
          : ['time_exchange', 'time_coinapi', 'guid', 'price', 'base_amount', 'taker_side']
        : quotes
          ? ['exchange', 'symbol', 'timestamp', 'local_timestamp', 'ask_amount', 'ask_price', 'bid_price', 'bid_amount']
          : ['exchange', 'symbol', 'timestamp', 'local_timestamp', 'id', 'side', 'price', 'amount'];
    const good = (format === 'coinapi' ? coinapiRow(quotes) : tardisRow(quotes)) as fc.Arbitrary<string[]>;
    // Now and then a row with a field too many or too few.
    const row = fc.oneof(
      { weight: 12, arbitrary: good },
      { weight: 1, arbitrary: good.map((r) => [...r, 'extra']) },
      { weight: 1, arbitrary: good.map((r) => r.slice(1)) },
    );
    return fc.record({
      format: fc.constant(format),
      quotes: fc.constant(quotes),
      header: fc.constant(header),
      rows: fc.array(row, { maxLength: 60 }),
      delimiter: format === 'coinapi' ? fc.constantFrom(';', ',') : fc.constant(','),
      crlf: fc.boolean(),
      bom: fc.boolean(),
      gzip: fc.boolean(),
      blankLines: fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 3 }),
      pathKind: fc.integer({ min: 0, max: 5 }),
    });
  });

let n = 0;
function writeCase(c: FileCase): string {
  const eol = c.crlf ? '\r\n' : '\n';
  const lines = c.rows.map((r) => r.join(c.delimiter));
  for (const k of c.blankLines) lines.splice(Math.min(k, lines.length), 0, k % 2 === 0 ? '' : c.delimiter.repeat(3));
  const text = `${c.bom ? '\uFEFF' : ''}${c.header.join(c.delimiter)}${eol}${lines.join(eol)}${c.pathKind === 5 ? '' : eol}`;
  const sub =
    c.format === 'tardis'
      ? `t${n}`
      : c.pathKind === 0
        ? `c${n}/T-QUOTES/E-X` // no D- folder: times of day are rejects
        : c.pathKind === 1
          ? `c${n}/D-20230701/E-X/IDDI-1+S-XBTUSD` // no SC- part: every row a reject
          : `c${n}/D-20230701/E-X/IDDI-1+SC-KRAKEN_SPOT_BTC_USD+S-XBTUSD`;
  n++;
  const path = join(dir, `${sub}.csv${c.gzip ? '.gz' : ''}`);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, c.gzip ? gzipSync(text) : text);
  return path;
}

describe('openVendorBatches equals openSource row by row', () => {
  it('for any vendor file, any batch size, line limit, start line and time column', async () => {
    await fc.assert(
      fc.asyncProperty(
        caseArb,
        fc.integer({ min: 1, max: 70 }),
        fc.constantFrom(1 << 20, 60, 100),
        fc.constantFrom('receive', 'exchange') as fc.Arbitrary<'receive' | 'exchange'>,
        fc.constantFrom(1, 1, 5),
        async (c, batchSize, maxLineBytes, time, startLine) => {
          const path = writeCase(c);
          const want = await viaRecords(path, maxLineBytes, time, startLine);
          const got = await viaBatches(path, maxLineBytes, time, startLine, batchSize);
          expect(got).toEqual(want);
          expect(await viaBatches(path, maxLineBytes, time, startLine, batchSize, 1, undefined, true)).toEqual(want);
        },
      ),
      RUNS,
    );
  });

  it('reads a header it cannot use as openSource does: the same error', async () => {
    const p = join(dir, 'nohdr', 'D-20230701', 'IDDI-1+SC-K_SPOT_A_B+S-AB.csv');
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, 'time_exchange;time_coinapi;ask_px\n12:00:00;12:00:00;1\n');
    expect(await viaBatches(p, 1 << 20, 'receive', 1, 10)).toEqual(await viaRecords(p, 1 << 20, 'receive', 1));
    expect(() => openVendorBatches(join(dir, 'missing.csv'))).toThrow(/cannot open event log/);
    const x = join(dir, 'xrate.csv');
    writeFileSync(x, 'type,time\n');
    expect(() => openVendorBatches(x)).toThrow(/is not a vendor file/);
  });

  it('stops at broken gzip data with the last line read whole, as openSource does', async () => {
    const p = join(dir, 'broken', 'D-20230701', 'IDDI-1+SC-K_SPOT_A_B+S-AB.csv.gz');
    mkdirSync(join(p, '..'), { recursive: true });
    const rows = Array.from({ length: 3000 }, (_v, k) => `12:00:00.${String(k).padStart(4, '0')};12:00:00.${k};1.5;2;1.4;3`);
    const gz = gzipSync(`time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n${rows.join('\n')}\n`);
    writeFileSync(p, gz.subarray(0, gz.length - 200));
    const got = (await viaBatches(p, 1 << 20, 'receive', 1, 100)) as { error: string; out: unknown[] };
    const want = (await viaRecords(p, 1 << 20, 'receive', 1, 1)) as { error: string; out: unknown[] };
    expect(got.error).toMatch(/unexpected end of file; the last line read whole was line \d+/);
    expect(want.error).toMatch(/unexpected end of file; the last line read whole was line \d+/);
    // The rows handed over before the break are the record reader's first rows (it hands each over as read).
    expect(got.out.length).toBeGreaterThan(0);
    expect(got.out).toEqual(want.out.slice(0, got.out.length));
  });
});

/** Each file's rows (and error) as its batches give them, read through a read-ahead worker, the files pulled in the order `schedule` picks. */
async function viaReadAhead(paths: string[], opts: VendorBatchOptions, schedule: number[], head = false): Promise<unknown[]> {
  const ra = readAhead();
  const its = paths.map((path) => {
    const f = sniffVendorFile(path);
    return ra
      .add({ path, opts: { ...opts, kind: f.kind, size: f.size, gzip: f.gzip, head: head ? f.head : undefined } })
      .batches()
      [Symbol.asyncIterator]();
  });
  const out: { rows: unknown[]; error?: string }[] = paths.map(() => ({ rows: [] }));
  const open = paths.map((_, i) => i);
  try {
    for (let k = 0; open.length > 0; k++) {
      const at = schedule.length === 0 ? 0 : schedule[k % schedule.length] % open.length;
      const i = open[at];
      try {
        const r = await its[i].next();
        if (r.done) open.splice(at, 1);
        else for (let j = 0; j < r.value.length; j++) out[i].rows.push(recordAt(r.value, j));
      } catch (e) {
        out[i].error = (e as Error).message;
        open.splice(at, 1);
      }
    }
  } finally {
    ra.close();
  }
  return out;
}

/**
 * Each file read for its short first batch (`opts.first`), parked (`park`, the reading ended, woken
 * with `wake` when `wake`), and read again whole: its rows and error then, or the error of its first
 * batch. `ahead`: read by a read-ahead worker; `placed`: the first batch read here, the rest by the
 * worker (`addPlaced`).
 */
async function viaParked(
  paths: string[],
  opts: VendorBatchOptions,
  where: 'here' | 'ahead' | 'placed',
  wake: boolean,
  head = false,
): Promise<unknown[]> {
  const ra = where === 'here' ? undefined : readAhead();
  const out: { rows: unknown[]; error?: string }[] = [];
  try {
    const srcs = paths.map((path) => {
      const f = sniffVendorFile(path);
      const o = { ...opts, kind: f.kind, size: f.size, gzip: f.gzip, head: head ? f.head : undefined };
      if (ra === undefined) return openVendorBatches(path, o);
      return where === 'ahead' ? ra.add({ path, opts: o }) : ra.addPlaced({ path, opts: o }, openVendorBatches(path, o));
    });
    const parked: boolean[] = [];
    for (const src of srcs) {
      const it = src.batches()[Symbol.asyncIterator]();
      try {
        await it.next();
        src.park?.();
        await it.return?.(undefined);
        parked.push(true);
      } catch (e) {
        out.push({ rows: [], error: (e as Error).message });
        parked.push(false);
        continue;
      }
      out.push({ rows: [] });
    }
    if (wake) for (let i = 0; i < srcs.length; i++) if (parked[i]) srcs[i].wake?.(i);
    for (let i = 0; i < srcs.length; i++) {
      if (!parked[i]) continue;
      try {
        for await (const b of srcs[i].batches()) for (let j = 0; j < b.length; j++) out[i].rows.push(recordAt(b, j));
      } catch (e) {
        out[i].error = (e as Error).message;
      }
    }
    for (const src of srcs) src.close();
  } finally {
    ra?.close();
  }
  return out;
}

/** A file's rows and error as openVendorBatches gives them in this thread. */
async function inThread(path: string, opts: VendorBatchOptions): Promise<{ rows: unknown[]; error?: string }> {
  const got = await viaBatches(
    path,
    opts.maxLineBytes as number,
    opts.time as 'receive',
    opts.startLine as number,
    opts.batchSize as number,
  );
  return Array.isArray(got) ? { rows: got } : { rows: (got as { out: unknown[] }).out, error: (got as { error: string }).error };
}

describe("a merge's vendor files read ahead in a worker", () => {
  it('give the rows and errors of openVendorBatches, with a short first batch or not, pulled in any order, parked or not', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(caseArb, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 0, max: 20 }),
        fc.constantFrom(1 << 20, 60),
        fc.constantFrom(1, 3),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.constantFrom('here', 'ahead', 'placed'),
        async (cases, batchSize, first, maxLineBytes, startLine, schedule, where) => {
          const paths = cases.map(writeCase);
          const opts: VendorBatchOptions = { batchSize, maxLineBytes, startLine, time: 'receive' };
          const want = await Promise.all(paths.map((p) => inThread(p, opts)));
          // A short first batch, the file parked after it and opened again: the same rows and error.
          // So with the first lines the sniff read given (`head`): the first batch from them, the rest read past them.
          for (let i = 0; i < paths.length; i++) {
            for (const head of [undefined, sniffVendorFile(paths[i]).head]) {
              const split = await viaBatches(paths[i], maxLineBytes, 'receive', startLine, batchSize, first, head);
              expect(
                Array.isArray(split)
                  ? { rows: split }
                  : { rows: (split as { out: unknown[] }).out, error: (split as { error: string }).error },
              ).toEqual(want[i]);
            }
          }
          expect(await viaReadAhead(paths, opts, schedule)).toEqual(want);
          expect(await viaReadAhead(paths, { ...opts, first }, schedule)).toEqual(want);
          expect(await viaReadAhead(paths, { ...opts, first }, schedule, true)).toEqual(want);
          // Parked after the first batch and read again from the start, here or in the worker (the first
          // batch too, or only what follows it), woken or not.
          for (const head of [false, true]) {
            const parked = (await viaParked(paths, { ...opts, first }, where, schedule.length % 2 === 0, head)) as typeof want;
            parked.forEach((got, i) => {
              // A file that fails within its first batch fails there (a merge stops at it).
              if (got.rows.length === 0 && got.error !== undefined && want[i].error !== undefined) expect(got.error).toBe(want[i].error);
              else expect(got).toEqual(want[i]);
            });
          }
        },
      ),
      { seed: 2729, numRuns: 40 },
    );
  }, 240_000);

  it('hold no reader of a parked file: opened again at the next pull, past the text read, or failing to', async () => {
    const rows = Array.from({ length: 400 }, (_v, k) => `12:00:00.${String(k).padStart(4, '0')};12:00:00.${k};1.5;2;1.4;3`);
    const text = `time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n${rows.join('\n')}\n`;
    for (const gzip of [false, true]) {
      for (const ahead of [false, true]) {
        for (const change of ['deleted', 'cut'] as const) {
          const name = `parked-${gzip}-${ahead}-${change}`;
          const p = join(dir, name, 'D-20230701', `IDDI-1+SC-K_SPOT_A_B+S-AB.csv${gzip ? '.gz' : ''}`);
          mkdirSync(join(p, '..'), { recursive: true });
          writeFileSync(p, gzip ? gzipSync(text) : text);
          const f = sniffVendorFile(p);
          const opts: VendorBatchOptions = { batchSize: 256, first: 16, kind: f.kind, size: f.size, gzip: f.gzip };
          const ra = ahead ? readAhead() : undefined;
          const src = ra ? ra.add({ path: p, opts: { ...opts, size: f.size } }) : openVendorBatches(p, opts);
          const it = src.batches()[Symbol.asyncIterator]();
          try {
            const first = await it.next();
            expect(first.value?.length).toBe(16);
            // Changed while parked: gone, or cut within the text read already (a reader kept open would read on).
            if (change === 'deleted') rmSync(p);
            else writeFileSync(p, gzip ? gzipSync(text.slice(0, 100)) : text.slice(0, 100));
            await expect(it.next()).rejects.toThrow(
              new RegExp(
                `^cannot read ".*${name}.*": ${change === 'deleted' ? 'ENOENT' : 'it ended before the \\d+ bytes of text read from it already'}.*; the last line read whole was line 17$`,
              ),
            );
          } finally {
            src.close();
            ra?.close();
          }
        }
      }
    }
  });

  it("read no parked file's next batch before the merge reaches the file or pulls the batch", async () => {
    const rows = (px: string) =>
      Array.from({ length: 60 }, (_v, k) => `12:00:00.${String(k).padStart(4, '0')};12:00:00.${k};${px};2;1.4;3`);
    const text = (px: string) => `time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n${rows(px).join('\n')}\n`;
    const askPrices = (b: BatchColumns) => Array.from({ length: b.length }, (_v, i) => recordAt(b, i).raw.split(';')[2]);
    // More files than the asks held back before they are posted (readAhead.ts), so asks would reach the worker.
    const paths = Array.from({ length: 12 }, (_v, k) => join(dir, 'deferred', 'D-20230701', `IDDI-${k}+SC-K_SPOT_A_B${k}+S-AB${k}.csv.gz`));
    mkdirSync(join(paths[0], '..'), { recursive: true });
    for (const p of paths) writeFileSync(p, gzipSync(text('1.5')));
    const ra = readAhead();
    const srcs = paths.map((p) => {
      const f = sniffVendorFile(p);
      return ra.add({ path: p, opts: { batchSize: 256, first: 16, kind: f.kind, size: f.size, gzip: f.gzip } });
    });
    const its = srcs.map((s) => s.batches()[Symbol.asyncIterator]());
    try {
      for (const it of its) expect(askPrices((await it.next()).value as BatchColumns)).toEqual(Array(16).fill('1.5'));
      // Time for the worker to read whatever it was asked for; then the files change.
      await new Promise((r) => setTimeout(r, 300));
      for (const p of paths) writeFileSync(p, gzipSync(text('1.6')));
      for (const it of its) expect(askPrices((await it.next()).value as BatchColumns)).toEqual(Array(44).fill('1.6'));
    } finally {
      ra.close();
    }
  });

  it('let a file go whole when parked: read again from its start, as it is then, woken or not', async () => {
    const rows = (px: string, n: number) =>
      Array.from({ length: n }, (_v, k) => `12:00:00.${String(k).padStart(4, '0')};12:00:00.${k};${px};2;1.4;3`);
    const text = (px: string, n: number) => `time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n${rows(px, n).join('\n')}\n`;
    const askPrices = (b: BatchColumns) => Array.from({ length: b.length }, (_v, i) => recordAt(b, i).raw.split(';')[2]);
    for (const where of ['here', 'ahead', 'placed']) {
      const paths = Array.from({ length: 12 }, (_v, k) =>
        join(dir, `let-go-${where}`, 'D-20230701', `IDDI-${k}+SC-K_SPOT_A_B${k}+S-AB${k}.csv.gz`),
      );
      mkdirSync(join(paths[0], '..'), { recursive: true });
      for (const p of paths) writeFileSync(p, gzipSync(text('1.5', 60)));
      const ra = where === 'here' ? undefined : readAhead();
      const srcs = paths.map((p) => {
        const f = sniffVendorFile(p);
        const opts = { batchSize: 256, first: 16, kind: f.kind, size: f.size, gzip: f.gzip };
        if (ra === undefined) return openVendorBatches(p, opts);
        // Placed: the first batch read here, the file read again by the worker.
        return where === 'ahead' ? ra.add({ path: p, opts }) : ra.addPlaced({ path: p, opts }, openVendorBatches(p, opts));
      });
      try {
        for (const src of srcs) {
          const it = src.batches()[Symbol.asyncIterator]();
          expect(askPrices((await it.next()).value as BatchColumns)).toEqual(Array(16).fill('1.5'));
          src.park?.();
          await it.return?.(undefined);
        }
        // Changed while parked (shorter, other prices): read again whole from the start, in whole batches.
        for (const p of paths) writeFileSync(p, gzipSync(text('1.6', 40)));
        for (let k = 0; k < srcs.length; k += 2) srcs[k].wake?.(k);
        for (const src of srcs) {
          const got: BatchColumns[] = [];
          for await (const b of src.batches()) got.push(b);
          expect(got.map((b) => b.length)).toEqual([40]);
          expect(askPrices(got[0])).toEqual(Array(40).fill('1.6'));
        }
      } finally {
        for (const src of srcs) src.close();
        ra?.close();
      }
    }
  });

  it('do not let a file go while its next batch is being read ahead: without a short first batch, a read-ahead refuses to park', async () => {
    const p = join(dir, 'no-park', 'D-20230701', 'IDDI-1+SC-K_SPOT_A_B+S-AB.csv.gz');
    mkdirSync(join(p, '..'), { recursive: true });
    const rows = Array.from({ length: 2000 }, (_v, k) => `12:00:00.${String(k).padStart(4, '0')};12:00:00.${k};1.5;2;1.4;3`);
    writeFileSync(p, gzipSync(`time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n${rows.join('\n')}\n`));
    const f = sniffVendorFile(p);
    const ra = readAhead();
    const src = ra.add({ path: p, opts: { batchSize: 256, kind: f.kind, size: f.size, gzip: f.gzip } });
    try {
      const lengths: number[] = [];
      for await (const b of src.batches()) {
        // Its next batch is asked for as this one comes: it cannot let go, and reads on.
        if (lengths.length === 0) expect(src.park?.()).toBe(false);
        lengths.push(b.length);
      }
      expect(lengths.length).toBeGreaterThan(2);
      expect(lengths.reduce((x, y) => x + y, 0)).toBe(2000);
    } finally {
      ra.close();
    }
  });

  it('stop a broken gzip file with the error the replay thread gives, after the same rows', async () => {
    const p = join(dir, 'broken-ahead', 'D-20230701', 'IDDI-1+SC-K_SPOT_A_B+S-AB.csv.gz');
    mkdirSync(join(p, '..'), { recursive: true });
    const rows = Array.from({ length: 6000 }, (_v, k) => `12:00:00.${String(k).padStart(4, '0')};12:00:00.${k};1.5;2;1.4;3`);
    const gz = gzipSync(`time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n${rows.join('\n')}\n`);
    writeFileSync(p, Buffer.concat([gz.subarray(0, 3000), Buffer.alloc(64, 7), gz.subarray(3064)]));
    const opts: VendorBatchOptions = { batchSize: 256, maxLineBytes: 1 << 20, startLine: 1, time: 'receive' };
    const want = await inThread(p, opts);
    expect(want.error).toMatch(
      /gzip data broken near byte \d+ of the file, after \d+ bytes of text.*; the last line read whole was line \d+/,
    );
    expect(want.rows.length).toBeGreaterThan(0);
    expect(await viaReadAhead([p], opts, [])).toEqual([want]);
  });

  it('stops its worker once every source has ended or been closed', async () => {
    const paths = [0, 1, 2].map((k) =>
      writeCase({
        format: 'coinapi',
        quotes: false,
        header: ['time_exchange', 'time_coinapi', 'guid', 'price', 'base_amount', 'taker_side'],
        rows: Array.from({ length: 50 }, (_v, j) => [`12:00:0${k}.${j}`, `12:00:0${k}.${j}`, 'g', '1.5', '2', 'BUY']),
        delimiter: ';',
        crlf: false,
        bom: false,
        gzip: k === 1,
        blankLines: [],
        pathKind: 2,
      }),
    );
    // The workers of the tests before end as they exit (terminate() is asynchronous).
    const settled = async (n: number) => {
      for (let k = 0; k < 200 && readerWorkers() !== n; k++) await new Promise((r) => setTimeout(r, 10));
      return readerWorkers();
    };
    expect(await settled(0)).toBe(0);
    const before = 0;
    const ra = readAhead();
    const srcs = paths.map((path) => {
      const f = sniffVendorFile(path);
      return ra.add({ path, opts: { batchSize: 8, kind: f.kind, size: f.size, gzip: f.gzip } });
    });
    expect(readerWorkers()).toBe(before + 1);
    let rows = 0;
    for await (const b of srcs[0].batches()) rows += b.length;
    expect(rows).toBe(50);
    const it1 = srcs[1].batches()[Symbol.asyncIterator]();
    expect((await it1.next()).done).toBe(false);
    await it1.return?.(undefined);
    expect(readerWorkers()).toBe(before + 1);
    srcs[2].close();
    // The last source gone, the worker is terminated.
    expect(await settled(before)).toBe(before);
  });
});
