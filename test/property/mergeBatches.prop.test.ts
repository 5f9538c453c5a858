/**
 * The merge over columnar batches (src/io/mergeBatches.ts) against the record merge
 * (src/io/merge.ts): on random inputs (quotes and trades with exact texts, records with a time
 * text, rows without a readable time, inputs in time order or not, any batch sizes), the merged
 * batches turned back row by row give the same records from the same inputs in the same order,
 * their raw texts copied into each batch, or the rows by reference into the inputs' batches (`rows()`),
 * and with inputs parked after their first batch and read again from their start when reached (the
 * same source, or one the merge opens again after letting the parked one go); with the batches the
 * merge gives back (`release`) written over at once, as a reader reusing their buffers would.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BatchColumns, eventAt, ROW_OTHER } from '../../src/core/batch.js';
import { type BatchSource, batchesOf, rawOf, recordAt } from '../../src/io/batch.js';
import { mergeSources } from '../../src/io/merge.js';
import { type MergedBatchSource, type MergedRows, mergeBatchSources } from '../../src/io/mergeBatches.js';
import type { EventSource, SourceRecord } from '../../src/io/source.js';

const RUNS = { seed: 2728, numRuns: 200 };
const T0 = 1_704_067_200_000_000;
const SYMBOLS = ['K_SPOT_BTC_USD', 'B_SPOT_ETH_USDT', 'C_SPOT_É_€'];

/** A record of one of the kinds readers give: a quote or trade event, a record with a time text, a reject. */
function rec(line: number, t: number | undefined, k: number): SourceRecord {
  if (t === undefined) return { line, raw: `garbage ${line}`, error: 'invalid JSON' };
  const time = T0 + t;
  const symbolId = SYMBOLS[k % 3];
  const dec = (v: number, text = String(v)) => ({ value: v, text });
  switch (k % 4) {
    case 0:
      return {
        line,
        raw: `{"type":"symbol","time":"${new Date(time / 1000).toISOString().replace('Z', `${String(time % 1000).padStart(3, '0')}Z`)}"}`,
        record: { type: 'symbol', time: new Date(time / 1000).toISOString().replace('Z', `${String(time % 1000).padStart(3, '0')}Z`) },
      };
    case 1:
      return {
        line,
        raw: `q ${line} ${symbolId}`,
        event: {
          type: 'quote',
          time,
          symbolId,
          bidPrice: dec(1.5, '1.50'),
          bidSize: dec(2),
          askPrice: dec(1.6),
          askSize: dec(0.1, '0.1000'),
        },
      };
    case 2:
      return { line, raw: `t ${line}`, event: { type: 'trade', time, symbolId, price: dec(k), size: dec(1), takerSide: 'SELL' } };
    default:
      return {
        line,
        raw: `tardis ${line}`,
        event: { type: 'trade', time, symbolId: 'XBT/USD', price: dec(2), size: dec(3) },
        venue: { exchange: 'kraken', symbol: 'XBT/USD' },
      };
  }
}

interface Input {
  times: (number | undefined)[];
  batch: number;
  /** Its quote and trade rows without raw bytes, their raw texts given by the source's `rawOf` (as a Parquet reader's). */
  rawless?: boolean;
}

function source(input: Input, closed: { n: number }): EventSource {
  const records = input.times.map((t, k) => rec(k * 2 + 1, t, k));
  return {
    format: 'ndjson',
    path: 'mem',
    totalBytes: records.length,
    bytesRead: () => 0,
    async *batches() {
      for (let i = 0; i < records.length; i += input.batch) {
        yield records.slice(i, i + input.batch);
        if (i % 3 === 0) yield [];
      }
    },
    close() {
      closed.n++;
    },
  };
}

/** Input `input` as columnar batches; rawless, with its raw texts through `rawOf`. */
function columns(input: Input, closed: { n: number }): BatchSource {
  const src = batchesOf(source(input, closed));
  if (input.rawless !== true) return src;
  const texts = new WeakMap<BatchColumns, string[]>();
  return {
    ...src,
    async *batches() {
      for await (const b of src.batches()) {
        const raws = Array.from({ length: b.length }, (_v, i) => rawOf(b, i));
        const rawStart = b.rawStart.slice();
        for (let i = 0; i < b.length; i++) if (b.kind[i] !== ROW_OTHER) rawStart[i] = -1;
        const out = { ...b, rawStart };
        texts.set(out, raws);
        yield out;
      }
    },
    rawOf: (b, i) => (texts.get(b) as string[])[i],
    close: () => src.close(),
  };
}

const timeArb = fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined, freq: 8 });
const inputArb = (sorted: boolean) =>
  fc.record({
    times: fc.array(timeArb, { maxLength: 60 }).map((ts) => {
      if (!sorted) return ts;
      let t = 0;
      return ts.map((x) => {
        if (x === undefined) return undefined;
        t += x % 3;
        return t;
      });
    }),
    batch: fc.integer({ min: 1, max: 9 }),
    rawless: fc.boolean(),
  });

/** A record as plain data, `line` included. */
function plain(r: SourceRecord): Record<string, unknown> {
  const o: Record<string, unknown> = { line: r.line, raw: r.raw };
  for (const k of ['record', 'error', 'reason', 'event', 'venue'] as const) if (r[k] !== undefined) o[k] = r[k];
  return o;
}

async function oldMerge(inputs: Input[], batchSize: number): Promise<unknown[]> {
  const closed = { n: 0 };
  const out: unknown[] = [];
  for await (const b of mergeSources(
    inputs.map((i) => source(i, closed)),
    batchSize,
  ).batches())
    for (let k = 0; k < b.records.length; k++) out.push({ input: b.inputs[k], record: plain(b.records[k]) });
  return out;
}

async function newMerge(inputs: Input[], batchSize: number): Promise<unknown[]> {
  const closed = { n: 0 };
  const out: unknown[] = [];
  const m = mergeBatchSources(
    inputs.map((i) => columns(i, closed)),
    { batchSize },
  );
  for await (const b of m.batches()) {
    expect(b.length).toBeLessThanOrEqual(batchSize);
    expect(b.input?.length).toBe(b.length);
    const copy = structuredClone(b); // an output batch stands alone
    for (let i = 0; i < copy.length; i++) out.push({ input: copy.input![i], record: recordAt(copy, i) });
  }
  expect(closed.n).toBe(inputs.length);
  return out;
}

/**
 * The merge with inputs asked to park (`park`), some able to and some not: each parked after its
 * first batch, read again from its start when the merge reaches it, woken (`wake`) before that
 * (`wakeAhead` parked inputs ahead) in the order it is reached; the others kept as they are.
 */
async function parkedMerge(
  inputs: Input[],
  parkable: boolean[],
  batchSize: number,
  wakeAhead: number,
  lazy: false | 'open' | 'reopen' = false,
  /** Rows by reference (`rows()`), and batches given back (`release`: written over at once). */
  opts: { rows?: boolean; release?: boolean } = {},
): Promise<unknown[]> {
  const closed = { n: 0 };
  const out: unknown[] = [];
  const readings = inputs.map(() => 0);
  const parks = inputs.map(() => 0);
  const woken: number[] = [];
  /** The non-empty batches the inputs gave, with their inputs; those the merge gave back (`release`). */
  const given = new Map<BatchColumns, number>();
  const released = new Set<BatchColumns>();
  const release = (i: number, b: BatchColumns): void => {
    expect(given.get(b)).toBe(i);
    expect(released.has(b)).toBe(false);
    released.add(b);
    // Written over, as a buffer that builds another batch would be.
    for (const a of [b.kind, b.line, b.time, b.symbol, b.side, b.v, b.otherIndex, b.raw, b.rawStart, b.rawEnd]) a.fill(3);
  };
  /** Input k's merge time at its start: its first row's (-Infinity when that row has none). */
  const firstTime = (k: number): number => {
    const t = inputs[k].times[0];
    return t === undefined ? Number.NEGATIVE_INFINITY : T0 + t;
  };
  const sources = inputs.map((input, k): BatchSource => {
    const src = batchesOf(source(input, closed));
    const read: BatchSource = {
      ...src,
      async *batches() {
        readings[k]++;
        // Read again only after a park, and once woken (`wakeAhead` before it is reached).
        if (readings[k] > 1) {
          expect(parks[k]).toBe(1);
          expect(woken).toContain(k);
        }
        for await (const b of src.batches()) {
          if (b.length > 0) given.set(b, k);
          yield b;
        }
      },
      close: () => src.close(),
    };
    return {
      ...read,
      // Asked once, after the first batch; an input that cannot let go says so and is kept.
      park() {
        parks[k]++;
        return parkable[k];
      },
      wake(time: number) {
        expect(parkable[k]).toBe(true);
        expect(readings[k]).toBe(1);
        expect(parks[k]).toBe(1);
        expect(time).toBe(firstTime(k));
        woken.push(k);
      },
    };
  });
  // Lazy: each input opened as the merge places it, in order, once, after the one before was placed (read, and parked if it could).
  const opened: number[] = [];
  /** Inputs opened again (`reopen`): each once parked, before it is woken or read again. */
  const reopened: number[] = [];
  const inputsGiven = lazy
    ? {
        length: sources.length,
        open(i: number): BatchSource {
          expect(i).toBe(opened.length);
          if (i > 0 && inputs[i - 1].times.length > 0) {
            expect(readings[i - 1]).toBe(1);
            expect(parks[i - 1]).toBe(1);
          }
          opened.push(i);
          return sources[i];
        },
        // Let go once parked: the same input again (its readings and wakes counted as one source's).
        reopen:
          lazy === 'reopen'
            ? (i: number): BatchSource => {
                expect(parkable[i] && parks[i] === 1 && readings[i] === 1).toBe(true);
                expect(woken).not.toContain(i);
                reopened.push(i);
                return sources[i];
              }
            : undefined,
        release: opts.release ? release : undefined,
      }
    : sources;
  const m = mergeBatchSources(inputsGiven, { batchSize, wakeAhead });
  if (opts.rows) for await (const r of m.rows()) out.push(...referenced(m, r));
  else
    for await (const b of m.batches()) {
      const copy = structuredClone(b);
      for (let i = 0; i < copy.length; i++) out.push({ input: copy.input![i], record: recordAt(copy, i) });
    }
  // Copied rows: every batch given back once the merge leaves it; by reference, all but those of
  // the last rows (given back when the next rows are asked for, which they are not).
  if (opts.release && !opts.rows) expect(released.size).toBe(given.size);
  if (!opts.release) expect(released.size).toBe(0);
  for (let k = 0; k < inputs.length; k++) {
    const rows = inputs[k].times.length;
    // An input with rows: asked to park once; parked, it is read twice, woken before it was read again.
    expect(parks[k]).toBe(rows > 0 ? 1 : 0);
    expect(readings[k]).toBe(parkable[k] && rows > 0 ? 2 : 1);
  }
  // Woken in the order of the parked inputs' first rows' times (then inputs): the order they are reached in.
  const order = [...woken].sort((a, b) => firstTime(a) - firstTime(b) || a - b);
  expect(woken).toEqual(order);
  expect(new Set(woken).size).toBe(woken.length);
  expect(woken.length).toBe(parks.filter((n, k) => n > 0 && parkable[k]).length);
  if (lazy) expect(opened).toEqual(inputs.map((_, k) => k));
  // Opened again once each, in the order woken (a source is opened again to be woken).
  expect(reopened).toEqual(lazy === 'reopen' ? woken : []);
  expect(m.totalBytes).toBe(inputs.reduce((s, i) => s + i.times.length, 0));
  return out;
}

/** Rows by reference, each as a record of its input's batch, its raw text from the merge's `rawOfRow`. */
function referenced(m: MergedBatchSource, r: MergedRows): unknown[] {
  const out: unknown[] = [];
  for (let k = 0; k < r.length; k++) {
    const b = r.batches[k];
    const i = r.rows[k];
    const record = b.kind[i] === ROW_OTHER ? recordAt(b, i) : { line: b.line[i], raw: m.rawOfRow(b, i, r.input[k]), event: eventAt(b, i) };
    out.push({ input: r.input[k], record });
  }
  return out;
}

/** The merge's rows by reference (`rows()`): each row as a record of its input's batch, its raw text from the merge's `rawOfRow`. */
async function referencedMerge(inputs: Input[], batchSize: number): Promise<unknown[]> {
  const closed = { n: 0 };
  const out: unknown[] = [];
  const m = mergeBatchSources(
    inputs.map((i) => columns(i, closed)),
    { batchSize },
  );
  for await (const r of m.rows()) {
    expect(r.length).toBeLessThanOrEqual(batchSize);
    out.push(...referenced(m, r));
  }
  expect(closed.n).toBe(inputs.length);
  return out;
}

describe('mergeBatchSources', () => {
  for (const sorted of [true, false]) {
    it(`gives the record merge's rows, inputs and order (inputs ${sorted ? 'in time order' : 'going back in time'})`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(inputArb(sorted), { minLength: 1, maxLength: 6 }),
          fc.integer({ min: 1, max: 50 }),
          fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
          fc.integer({ min: 1, max: 4 }),
          async (inputs, batchSize, parkable, wakeAhead) => {
            const want = await oldMerge(inputs, batchSize);
            expect(await newMerge(inputs, batchSize)).toEqual(want);
            expect(await referencedMerge(inputs, batchSize)).toEqual(want);
            expect(await parkedMerge(inputs, parkable, batchSize, wakeAhead)).toEqual(want);
            expect(await parkedMerge(inputs, parkable, batchSize, wakeAhead, 'open')).toEqual(want);
            expect(await parkedMerge(inputs, parkable, batchSize, wakeAhead, 'reopen')).toEqual(want);
            // Batches given back and written over: copied rows, and rows by reference read as handed out.
            expect(await parkedMerge(inputs, parkable, batchSize, wakeAhead, 'open', { release: true })).toEqual(want);
            expect(await parkedMerge(inputs, parkable, batchSize, wakeAhead, 'reopen', { rows: true, release: true })).toEqual(want);
            expect(await parkedMerge(inputs, parkable, batchSize, wakeAhead, 'open', { rows: true })).toEqual(want);
          },
        ),
        RUNS,
      );
    });
  }

  it('merges more than 65,536 inputs, each row naming its own (the input column is 32-bit)', async () => {
    const n = 70_000;
    const closed = { n: 0 };
    // Input k's one row at time (k * 7919) mod 1000: the inputs' rows interleave across the whole range.
    const time = (k: number): number => (k * 7919) % 1000;
    const m = mergeBatchSources(
      Array.from({ length: n }, (_v, k) => batchesOf(source({ times: [time(k)], batch: 1 }, closed))),
      { batchSize: 4096 },
    );
    const got: number[] = [];
    for await (const b of m.batches()) for (let i = 0; i < b.length; i++) got.push(b.input![i]);
    const want = Array.from({ length: n }, (_v, k) => k).sort((a, b) => time(a) - time(b) || a - b);
    expect(got).toEqual(want);
    expect(Math.max(...got)).toBe(n - 1);
    expect(closed.n).toBeGreaterThanOrEqual(n);
  });

  it('sums sizes and closes every input when closed early', async () => {
    const closed = { n: 0 };
    const m = mergeBatchSources(
      [batchesOf(source({ times: [1, 2, 3], batch: 1 }, closed)), batchesOf(source({ times: [1], batch: 1 }, closed))],
      {
        batchSize: 1,
      },
    );
    expect(m.totalBytes).toBe(4);
    for await (const _b of m.batches()) break;
    m.close();
    expect(closed.n).toBeGreaterThanOrEqual(2);
  });
});
