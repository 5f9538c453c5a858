/**
 * The JSON of a metric history written from its bucket columns (src/service/metricHistory.ts):
 * the bytes of `JSON.stringify` of the wire items, for every time format, any period, window and
 * limit, in runs of any length; and the test that lets a sum's exact text stand for its float.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDec } from '../../src/core/decimal.js';
import { formatTimeAs, type TimeFormat } from '../../src/core/metrics/timeFormat.js';
import { type MetricPointColumns, metricTimeseriesColumns } from '../../src/core/metrics/timeseries.js';
import { getPeriod } from '../../src/core/periods.js';
import { formatTime } from '../../src/core/time.js';
import { isOwnJson, metricHistoryJson, type TimeWriter } from '../../src/service/metricHistory.js';

const US = 1_000_000;
const T0 = Date.UTC(2024, 1, 29, 23, 59, 50) * 1000;

/** Decimal texts of every kind: exact sums that are their float's JSON or not, exponents, zeros, long digits. */
const DEC_TEXTS = [
  '0',
  '-0',
  '0.0120',
  '0.012',
  '1',
  '-7.5',
  '1e-8',
  '0.000001',
  '0.0000001',
  '123456789012345',
  '1234567890123456',
  '0.30000000000000001',
  '1e21',
  '42.000',
  '-0.000',
  '99999999999999999999999',
  '1.7976931348623157e308',
];

/** A point: its time, and its decimal text (null: a text or time value). */
const pointArb = fc.record({
  dt: fc.oneof(fc.constant(US), fc.constant(0), fc.integer({ min: 1, max: 3 * US }), fc.integer({ min: 0, max: 40 * 86_400 * US })),
  text: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...DEC_TEXTS) }, { weight: 1, arbitrary: fc.constant(null) }),
});

/** Points in time order as columns, from `start` (µs). */
function columnsOf(points: { dt: number; text: string | null }[], start: number): MetricPointColumns {
  let time = start;
  const times: number[] = [];
  for (const p of points) {
    time += p.dt;
    times.push(time);
  }
  return {
    times,
    values: points.map((p) => (p.text === null ? null : parseDec(p.text)!.value)),
    texts: points.map((p) => p.text),
  };
}

const WRITERS: [string, TimeWriter][] = [
  ['iso', formatTime],
  ...(['unix_sec', 'unix_millisec', 'unix_microsec', 'unix_nanosec'] as TimeFormat[]).map((f): [string, TimeWriter] => [
    f,
    (us) => formatTimeAs(us, f),
  ]),
];

describe('metricHistoryJson', () => {
  it('is the bytes of JSON.stringify of the items, whatever the runs it is written in', () => {
    fc.assert(
      fc.property(
        fc.array(pointArb, { maxLength: 120 }),
        fc.integer({ min: -3 * 86_400, max: 3 * 86_400 }),
        fc.constantFrom('1SEC', '2SEC', '1MIN', '1DAY', '1MTH', '1YRS'),
        fc.constantFrom(...WRITERS),
        fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }),
        fc.integer({ min: 1, max: 40 }),
        (points, offset, pid, [, time], limit, run) => {
          const period = getPeriod(pid, { months: true })!;
          const cols = metricTimeseriesColumns(columnsOf(points, T0 + offset * US), { period, ...(limit !== undefined && { limit }) });
          const items = Array.from({ length: cols.length }, (_, i) => cols.item(i, time));
          const json = metricHistoryJson(cols, time);
          expect(json.length).toBe(cols.length);
          const pieces: Buffer[] = [];
          for (let from = 0; from < json.length; from += run) pieces.push(json.json(from, Math.min(from + run, json.length)));
          expect(`[${Buffer.concat(pieces).toString('latin1')}]`).toBe(JSON.stringify(items));
        },
      ),
      { seed: 42, numRuns: 400 },
    );
  });

  it('writes times before 1970, and a history of one second after another (every bucket one point)', () => {
    for (const [name, time] of WRITERS) {
      for (const start of [-5 * US, T0]) {
        const points = Array.from({ length: 300 }, (_, i) => ({ dt: US, text: DEC_TEXTS[i % DEC_TEXTS.length] }));
        const cols = metricTimeseriesColumns(columnsOf(points, start), { period: getPeriod('1SEC')! });
        const items = Array.from({ length: cols.length }, (_, i) => cols.item(i, time));
        const json = metricHistoryJson(cols, time);
        expect(`[${json.json(0, json.length).toString('latin1')}]`, name).toBe(JSON.stringify(items));
      }
    }
  });

  it('a time it cannot write throws when it is made, before any byte is written', () => {
    const last = Number.MAX_SAFE_INTEGER - 10;
    const cols = metricTimeseriesColumns({ times: [0, last], values: [1, 2], texts: ['1', '2'] }, { period: getPeriod('1DAY')! });
    expect(() => metricHistoryJson(cols, formatTime)).toThrow(RangeError);
    expect(() => metricHistoryJson(cols, (us) => formatTimeAs(us, 'unix_nanosec'))).not.toThrow();
  });
});

describe('isOwnJson', () => {
  it('true only for a text that JavaScript writes for its own float', () => {
    const digits = fc.stringMatching(/^[0-9]{0,18}$/);
    const textArb = fc.oneof(
      fc.tuple(fc.boolean(), digits, digits).map(([neg, int, frac]) => `${neg ? '-' : ''}${int}${frac === '' ? '' : `.${frac}`}`),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
      fc.constantFrom(...DEC_TEXTS, '', '-', '.', '0.', '.5', '+1', '01', '1.', '1.50', '-0.0'),
    );
    fc.assert(
      fc.property(textArb, (text) => {
        if (isOwnJson(text)) expect(String(Number(text))).toBe(text);
      }),
      { seed: 42, numRuns: 5000 },
    );
  });

  it('takes the texts a one-point bucket of most series has', () => {
    for (const t of ['0', '0.012', '-7.5', '42', '0.000001', '123456789012345', '-0.1', '99.99']) expect(isOwnJson(t), t).toBe(true);
    for (const t of ['-0', '0.0120', '0.0000001', '1234567890123456', '1e-8', '0.30000000000000001', '+1', '01', '1.', '.5', ''])
      expect(isOwnJson(t), t).toBe(false);
  });
});
