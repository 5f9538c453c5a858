/**
 * The merge of inputs by event time (src/io/merge.ts) against a stable sort: for inputs each in
 * time order, the merged records are those of a stable sort of all records by (time, input index,
 * line); a record without a readable time sorts with the time of the record before it in its
 * input. For inputs that go back in time, every record still comes out exactly once and each
 * input's records in their own order. However the inputs are cut into batches.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventSource, SourceRecord } from '../../src/io/source.js';
import { mergeSources, recordTime } from '../../src/io/merge.js';

const RUNS = { seed: 1515, numRuns: 300 };
const T0 = 1_704_067_200_000_000;

/** An input: records with a time (µs after T0) or none (an unreadable line), and its batch sizes. */
interface Input {
  times: (number | undefined)[];
  batch: number;
}

/** A record as a reader gives it: NDJSON records carry `time` as text, parsed events `event.time`, rejects nothing. */
function rec(line: number, t: number | undefined, k: number): SourceRecord {
  if (t === undefined) return { line, raw: 'garbage', error: 'invalid JSON' };
  const time = T0 + t;
  if (k % 2 === 0)
    return {
      line,
      raw: '',
      record: { type: 'quote', time: new Date(time / 1000).toISOString().replace('Z', `${String(time % 1000).padStart(3, '0')}Z`) },
    };
  return {
    line,
    raw: '',
    event: { type: 'trade', time, symbolId: 'X_SPOT_A_B', price: { value: 1, text: '1' }, size: { value: 1, text: '1' } } as never,
  };
}

/** An in-memory source of `input`, lines numbered 1.. with a gap now and then (blank lines). */
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
        if (i % 3 === 0) yield []; // an empty batch now and then
      }
    },
    close() {
      closed.n++;
    },
  };
}

const timeArb = fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined, freq: 8 });
const inputArb = (sorted: boolean) =>
  fc.record({
    times: fc.array(timeArb, { maxLength: 60 }).map((ts) => {
      if (!sorted) return ts;
      // In time order: a running sum of steps (times repeat: ties), unreadable ones kept in place.
      let t = 0;
      return ts.map((x) => {
        if (x === undefined) return undefined;
        t += x % 3;
        return t;
      });
    }),
    batch: fc.integer({ min: 1, max: 7 }),
  });

async function merged(inputs: Input[], batchSize: number): Promise<{ input: number; line: number }[]> {
  const closed = { n: 0 };
  const m = mergeSources(
    inputs.map((i) => source(i, closed)),
    batchSize,
  );
  const out: { input: number; line: number }[] = [];
  for await (const b of m.batches()) {
    expect(b.records.length).toBeLessThanOrEqual(batchSize);
    expect(b.inputs.length).toBe(b.records.length);
    for (let k = 0; k < b.records.length; k++) out.push({ input: b.inputs[k], line: b.records[k].line });
  }
  expect(closed.n).toBe(inputs.length);
  return out;
}

describe('mergeSources', () => {
  it('equals a stable sort by (time, input, line) of inputs in time order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(inputArb(true), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 50 }),
        async (inputs, batchSize) => {
          const all: { input: number; line: number; key: number }[] = [];
          inputs.forEach((inp, i) => {
            let key = Number.NEGATIVE_INFINITY;
            inp.times.forEach((t, k) => {
              if (t !== undefined) key = T0 + t;
              all.push({ input: i, line: k * 2 + 1, key });
            });
          });
          const want = [...all]
            .sort((a, b) => a.key - b.key || a.input - b.input || a.line - b.line)
            .map(({ input, line }) => ({ input, line }));
          expect(await merged(inputs, batchSize)).toEqual(want);
        },
      ),
      RUNS,
    );
  });

  it('loses nothing and keeps each input in its own order when inputs go back in time', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(inputArb(false), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 50 }),
        async (inputs, batchSize) => {
          const out = await merged(inputs, batchSize);
          expect(out.length).toBe(inputs.reduce((s, i) => s + i.times.length, 0));
          inputs.forEach((inp, i) => {
            expect(out.filter((r) => r.input === i).map((r) => r.line)).toEqual(inp.times.map((_t, k) => k * 2 + 1));
          });
        },
      ),
      RUNS,
    );
  });

  it('reads the time of a parsed event, of a record (ISO text), and none of an unreadable line', () => {
    expect(recordTime(rec(1, 5, 1))).toBe(T0 + 5);
    expect(recordTime(rec(1, 123_456, 0))).toBe(T0 + 123_456);
    expect(recordTime(rec(1, undefined, 0))).toBeUndefined();
    expect(recordTime({ line: 1, raw: '', record: { time: 12 } })).toBeUndefined();
  });
});
