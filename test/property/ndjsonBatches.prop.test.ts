/**
 * The NDJSON reader on bytes (src/io/ndjsonBatches.ts) against the record-at-a-time reader: for
 * any text, its batches turned back into records (recordAt) are the records openSource gives,
 * in the same batches, with the bytes cut into chunks anywhere (inside a multi-byte character,
 * between CR and LF), invalid UTF-8 at line ends, from any start line, with any line limit; plain
 * and gzipped through
 * openBatchSource, in this thread and in a worker.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { BatchBuilder, type BatchColumns } from '../../src/core/batch.js';
import { recordAt } from '../../src/io/batch.js';
import { openBatchSource } from '../../src/io/batchSource.js';
import { jsonNumberAt } from '../../src/io/jsonNumbers.js';
import { ByteLineParser } from '../../src/io/ndjsonBytes.js';
import { SymbolDict } from '../../src/io/symbolDict.js';
import { parseTime } from '../../src/core/time.js';
import { ndjsonBatches } from '../../src/io/ndjsonBatches.js';
import { openSource, type SourceRecord } from '../../src/io/source.js';
import { generateLog } from '../../scripts/gen-log.js';
import { num, quoteLineWith, time, tradeLineWith } from './ndjsonLines.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-ndjson-batches-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Decimal strings that are JSON number literals (or nearly), for the string-decimal path. */
const strNum = fc.oneof(
  fc.double({ min: -1e6, max: 1e9, noNaN: true, noDefaultInfinity: true }).map((x) => `"${JSON.stringify(x)}"`),
  fc.constantFrom(
    '"0"',
    '"-0"',
    '"0.0"',
    '"1.50"',
    '"1e-7"',
    '"2.5E+3"',
    '"0.30000000000000004"',
    '"123456789012345678"',
    '"9007199254740993"',
    '"1e400"',
    '"01"',
    '"+1"',
    '".5"',
    '"1."',
    '"1e22"',
    '"1e23"',
    '"4.35e-23"',
    '"é1"',
  ),
);
const anyNum = fc.oneof(num, strNum, num);
const quote = quoteLineWith(anyNum);
const trade = tradeLineWith(anyNum);

const odd = fc.constantFrom(
  '',
  '   ',
  '\t',
  '\uFEFF{"type":"trade"}',
  '{"type":"quote","time":"2024-03-01T00:00:01',
  '{"a":"x\\"}',
  '{"type":"trade","time":"2024-03-01T00:00:01Z","symbol_id":"K\\u005fSPOT_BTC_USD","price":1,"size":1}',
  '{"type":"trade","time":"2024-03-01T00:00:01Z","symbol_id":"K_SPOT_BTC_USD","price":1,"size":1,"note":"é ü \u2028 😀"}',
  '{"type":"trade","time":"2024-03-01T00:00:01Z","symbol_id":"K_SPOT_BTÇ_USD","price":1,"size":1}',
  '{"type":"trade","time":"2024-03-01T00:00:01Z","symbol_id":"K_SPOT_BTC_USD","price":1,"size":1}\r',
  '{"type":"trade","time":"2024-03-01T00:00:01Z","symbol_id":"K_SPOT_BTC_USD","price":1,"size":1} x',
  '{}',
  '[1]',
  'null',
  '"😀"',
  'not json',
  '\u00a0',
);
const pad = fc.tuple(fc.nat({ max: 900 }), fc.constantFrom('x', 'é', '😀')).map(([n, c]) => `{"type":"trade","pad":"${c.repeat(n)}"}`);
const logLine = fc.constantFrom(...generateLog({ seed: 5, events: 300, badRate: 0.02 }));
const lineArb = fc.oneof(quote, trade, odd, logLine, logLine, pad);

/** Invalid UTF-8 put at the end of a line now and then (a sequence cut short, a stray byte). */
const badArb = fc.constantFrom(undefined, undefined, undefined, undefined, [0xe2, 0x82], [0xff], [0xc3], [0xf0, 0x9f, 0x98]);

/** The bytes of lines, each ended by LF or CR LF, the last one maybe not ended. */
const textArb = fc
  .tuple(fc.array(fc.tuple(lineArb, badArb, fc.constantFrom('\n', '\r\n', '\n')), { minLength: 1, maxLength: 30 }), fc.boolean())
  .map(([lines, ended]) => {
    const parts = lines.map(([l, bad, e]) => Buffer.concat([Buffer.from(l), Buffer.from(bad ?? []), Buffer.from(e)]));
    const all = Buffer.concat(parts);
    const end = lines[lines.length - 1][2].length;
    return ended ? all : all.subarray(0, all.length - end);
  });

const optsArb = fc.record({
  batchSize: fc.integer({ min: 1, max: 9 }),
  startLine: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 35 })),
  maxLineBytes: fc.oneof(fc.constant(1 << 20), fc.integer({ min: 1, max: 1200 })),
});

let run = 0;
function file(bytes: Uint8Array, gz = false): string {
  const p = join(dir, `${run++}.ndjson${gz ? '.gz' : ''}`);
  writeFileSync(p, gz ? gzipSync(bytes) : bytes);
  return p;
}

/** The reference: openSource's batches of records. */
async function reference(path: string, o: { batchSize: number; startLine: number; maxLineBytes: number }): Promise<SourceRecord[][]> {
  const src = openSource(path, o);
  const out: SourceRecord[][] = [];
  for await (const b of src.batches()) out.push(b);
  src.close();
  return out;
}

function records(batches: BatchColumns[]): SourceRecord[][] {
  return batches.map((b) => Array.from({ length: b.length }, (_, i) => recordAt(b, i)));
}

/** `bytes` as one chunk. */
async function* oneChunk(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

async function collect(it: AsyncIterable<BatchColumns>): Promise<BatchColumns[]> {
  const out: BatchColumns[] = [];
  for await (const b of it) out.push(b);
  return out;
}

describe('NDJSON on bytes into batches', () => {
  it('gives the records (and batches) of openSource, wherever the bytes are cut', async () => {
    let rows = 0;
    let columnar = 0;
    await fc.assert(
      fc.asyncProperty(textArb, optsArb, fc.array(fc.nat(), { maxLength: 8 }), async (text, o, cuts) => {
        const bytes = text;
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        // Each chunk in the same buffer, as a file is read: a chunk is gone once the next is asked for.
        async function* chunks(): AsyncGenerator<Uint8Array> {
          const reused = Buffer.alloc(bytes.length + 1);
          let from = 0;
          for (const c of [...at, bytes.length]) {
            if (c > from) {
              bytes.copy(reused, 0, from, c);
              reused.fill(0x0a, c - from);
              yield reused.subarray(0, c - from);
            }
            from = Math.max(from, c);
          }
        }
        const got = await collect(ndjsonBatches(chunks(), o));
        expect(records(got)).toEqual(await reference(file(bytes), o));
        for (const b of got) {
          rows += b.length;
          columnar += b.kind.filter((k) => k !== 3).length;
        }
      }),
      { seed: 20261125, numRuns: 400 },
    );
    expect(columnar).toBeGreaterThan(rows / 10);
  });

  it('reads plain and gzipped files the same through openBatchSource, in this thread and in a worker', async () => {
    await fc.assert(
      fc.asyncProperty(textArb, optsArb, fc.boolean(), fc.constantFrom(1, 2), async (text, o, gz, threads) => {
        const path = file(text, gz);
        const src = openBatchSource(path, { ...o, threads });
        const got = await collect(src.batches());
        src.close();
        expect(records(got)).toEqual(await reference(path, o));
      }),
      { seed: 7, numRuns: 24 },
    );
  });

  it('reads lines of a shape seen before as any line: values of any kind, and lines that only start like it', async () => {
    // A few shapes (keys, their order, spaces, keys not read, duplicates), each line one of them
    // with values of every kind, sometimes cut, lengthened or followed by more: the shapes kept by
    // the byte parser meet lines that match them up to any byte.
    const key = fc.constantFrom(
      'type',
      'time',
      'symbol_id',
      'bid_price',
      'bid_size',
      'ask_price',
      'ask_size',
      'price',
      'size',
      'taker_side',
      'note',
      'x',
    );
    const QUOTE_KEYS = ['type', 'time', 'symbol_id', 'bid_price', 'bid_size', 'ask_price', 'ask_size'];
    const TRADE_KEYS = ['type', 'time', 'symbol_id', 'price', 'size', 'taker_side'];
    const keysArb = fc.oneof(
      fc.shuffledSubarray(QUOTE_KEYS, { minLength: 7 }),
      fc.shuffledSubarray(TRADE_KEYS, { minLength: 5 }),
      fc.constant(QUOTE_KEYS),
      fc.constant(TRADE_KEYS),
      fc.uniqueArray(key, { minLength: 1, maxLength: 8 }),
    );
    const shape = fc.record({
      keys: keysArb,
      extra: fc.option(key, { nil: undefined }),
      colon: fc.constantFrom(':', ':', ': ', ' :'),
      comma: fc.constantFrom(',', ',', ', '),
      open: fc.constantFrom('{', '{', '{ '),
      close: fc.constantFrom('}', '}', ' }', '}  '),
    });
    const odd = fc.oneof(
      num,
      strNum,
      time,
      fc.constantFrom('"quote"', '"trade"', '"Quote"', '"BUY"', '"sell"', '"a\\"b"', '"tab\tin"', '"é"', '""', '"x'),
      fc.constantFrom('null', 'true', 'false', 'nul', '{}', '[1]', '-', '1e', '"', '1.5x'),
      // A literal followed by bytes a number runs over: not a JSON number.
      fc.constantFrom('01', '-01', '1-2', '1.5.5', '2e5e1', '0-', '1E+', '3.25e-1-', '7+', '00'),
    );
    /** A value for `k` that the fast path reads, mostly; any value now and then. */
    const valueFor = (k: string, type: string): fc.Arbitrary<string> => {
      const good: Record<string, fc.Arbitrary<string>> = {
        type: fc.constant(type),
        time: fc.constantFrom('"2024-03-01T00:00:01.5Z"', '"2024-03-01T00:00:01.25Z"', '"2024-03-01T00:00:02Z"'),
        symbol_id: fc.constantFrom('"K_SPOT_BTC_USD"', '"A_SPOT_ETH_BTC"'),
        taker_side: fc.constantFrom('"BUY"', '"SELL"', 'null'),
      };
      const positive = fc.double({ min: 1e-7, max: 1e9, noNaN: true }).map((x) => JSON.stringify(x));
      const number = fc.oneof(
        positive,
        positive.map((x) => `"${x}"`),
        num,
        strNum,
      );
      return fc.oneof({ arbitrary: good[k] ?? number, weight: 8 }, { arbitrary: odd, weight: 1 });
    };
    const tail = fc.constantFrom('', '', '', '', '', '', ' ', 'x', ',', '}', '-cut');
    const text = fc
      .array(shape, { minLength: 1, maxLength: 3 })
      .chain((shapes) =>
        fc.array(
          fc.nat({ max: shapes.length - 1 }).chain((pick) => {
            const sh = shapes[pick];
            const keys: string[] = sh.extra === undefined ? [...sh.keys] : [...sh.keys, sh.extra];
            const type = keys.includes('bid_price') ? '"quote"' : '"trade"';
            return fc.tuple(fc.tuple(...keys.map((k) => valueFor(k, type))), tail).map(([vals, end]) => {
              const line = `${sh.open}${keys.map((k, i) => `"${k}"${sh.colon}${vals[i]}`).join(sh.comma)}${sh.close}`;
              return end === '-cut' ? line.slice(0, -2) : line + end;
            });
          }),
          { minLength: 1, maxLength: 40 },
        ),
      )
      .map((lines) => lines.join('\n'));
    let columnar = 0;
    await fc.assert(
      fc.asyncProperty(text, async (t) => {
        const o = { batchSize: 7, startLine: 1, maxLineBytes: 1 << 20 };
        const bytes = Buffer.from(t);
        const got = await collect(ndjsonBatches(oneChunk(new Uint8Array(bytes)), o));
        expect(records(got)).toEqual(await reference(file(bytes), o));
        for (const b of got) columnar += b.kind.filter((k) => k !== 3).length;
      }),
      { seed: 20261128, numRuns: 600 },
    );
    expect(columnar).toBeGreaterThan(300);
  });

  it('looks up symbol ids by their bytes: hundreds of one length, alike but in their first bytes', async () => {
    // 18 bytes each (four words and two bytes, the last six alike), and 120 of them cut short
    // by 1 to 9 bytes: the look-up's table grows and its searches meet other ids, which only
    // their first bytes or their length tell apart.
    const whole = Array.from({ length: 700 }, (_, n) => `${n.toString(36).padStart(4, '0')}_SPOT_BTC_USDT`);
    const ids = [...whole, ...whole.slice(0, 120).map((id, n) => id.slice(0, id.length - 1 - (n % 9)))];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: ids.length - 1 }), { minLength: 1500, maxLength: 2500 }),
        fc.integer({ min: 1, max: 600 }),
        async (picks, batchSize) => {
          const t = picks
            .map(
              (n, i) =>
                `{"type":"trade","time":"2024-03-01T00:00:${String(i % 60).padStart(2, '0')}Z","symbol_id":"${ids[n]}","price":1.5,"size":2}`,
            )
            .join('\n');
          const o = { batchSize, startLine: 1, maxLineBytes: 1 << 20 };
          const bytes = Buffer.from(t);
          const got = await collect(ndjsonBatches(oneChunk(bytes), o));
          expect(got.every((b) => b.kind.every((k) => k !== 3))).toBe(true);
          expect(records(got)).toEqual(await reference(file(bytes), o));
        },
      ),
      { seed: 29, numRuns: 12 },
    );
  });

  it('gives each symbol id its own index, in a table that starts with two slots', () => {
    // Ids of a few letters (many share a start, or all but their end), looked up in batches of
    // new generations: each look-up searches past others of every length.
    const id = fc.string({ unit: fc.constantFrom('A', 'B', '_'), minLength: 1, maxLength: 13 });
    fc.assert(
      fc.property(fc.array(fc.tuple(id, fc.nat({ max: 7 })), { minLength: 1, maxLength: 300 }), (looks) => {
        const dict = new SymbolDict(2);
        let bb = new BatchBuilder();
        let gen = 0;
        let found: [number, string][] = [];
        // The batch's dictionary, once finished, holds each id where its look-up said.
        const check = () => {
          const symbols = bb.finish(new Uint8Array(0)).symbols;
          for (const [at, s] of found) expect(symbols[at]).toBe(s);
          found = [];
        };
        for (const [s, pad] of looks) {
          if (pad === 0) {
            check();
            bb = new BatchBuilder();
            gen++;
          }
          const b = Buffer.from(`${'x'.repeat(pad)}${s}~`);
          found.push([dict.index(b, new DataView(b.buffer, b.byteOffset, b.byteLength), pad, pad + s.length, bb, gen), s]);
        }
        check();
      }),
      { seed: 31, numRuns: 300 },
    );
  });

  it('reads each time as parseTime does, whatever the times read before', () => {
    // Times near one another (same minute, same second, the next ones) in every shape, and odd ones.
    const near = fc
      .tuple(
        fc.constantFrom(
          '2024-03-01T00:00',
          '2024-03-01T00:01',
          '2024-02-29T23:59',
          '2023-02-29T10:00',
          '2255-06-05T23:47',
          '1684-01-01T00:00',
        ),
        fc.constantFrom(':00', ':07', ':59', ':60', ':5', ':a1', ''),
        fc.constantFrom('', '.1', '.123456', '.1234567', '.12345678', '.', '.12a'),
        fc.constantFrom('Z', 'Z', 'z', '+00:00', '', 'ZZ'),
      )
      .map(([m, sec, f, z]) => m + sec + f + z);
    fc.assert(
      fc.property(fc.array(near, { minLength: 1, maxLength: 40 }), (ts) => {
        const p = new ByteLineParser();
        for (const t of ts) expect(p.timeAt(Buffer.from(t), 0, t.length), t).toBe(parseTime(t));
      }),
      { seed: 5, numRuns: 2000 },
    );
  });

  it('computes each JSON number literal as Number does', () => {
    const lit = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
      fc
        .tuple(fc.bigInt({ min: 0n, max: 10n ** 25n }), fc.nat({ max: 30 }), fc.integer({ min: -40, max: 40 }), fc.boolean())
        .map(([m, d, e, neg]) => {
          const s = m.toString().padStart(d + 1, '0');
          const int = s.slice(0, s.length - d).replace(/^0+(?=\d)/, '');
          return `${neg ? '-' : ''}${int}${d > 0 ? `.${s.slice(s.length - d)}` : ''}${e !== 0 ? `e${e}` : ''}`;
        }),
    );
    fc.assert(
      fc.property(lit, (s) => {
        expect(Object.is(jsonNumberAt(Buffer.from(s), 0, s.length), Number(s)), s).toBe(true);
      }),
      { seed: 11, numRuns: 5000 },
    );
    for (const bad of ['', '-', '01', '1.', '.5', '1e', '+1', '1e+', '--1'])
      expect(jsonNumberAt(Buffer.from(bad), 0, bad.length)).toBeNaN();
  });
});
