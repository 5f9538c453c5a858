import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  EXCHANGE_RATE_PERIODS,
  MONTH_PERIODS,
  bucketEnd,
  bucketStart,
  bucketStartAtOrAfter,
  getPeriod,
  isMonthPeriod,
  isRollupOf,
  periodLengthUs,
  type PeriodRecord,
} from '../../../src/core/periods.js';

/** The interface's 33 period records, copied unchanged from its published description (see test/service/fixtures/README.md). */
const SPEC_PATH = fileURLToPath(new URL('../../service/fixtures/periods.json', import.meta.url));
const US = 1_000_000;
const DAY = 86_400 * US;
const utc = (y: number, m: number, d = 1, h = 0, mi = 0, s = 0): number => Date.UTC(y, m - 1, d, h, mi, s) * 1000;
const P = (id: string): PeriodRecord => {
  const p = getPeriod(id, { months: true });
  if (!p) throw new Error(`no period ${id}`);
  return p;
};

describe('EXCHANGE_RATE_PERIODS', () => {
  it('equals the published periods.json (order and values)', () => {
    const spec: unknown = JSON.parse(readFileSync(SPEC_PATH, 'utf8'));
    expect(EXCHANGE_RATE_PERIODS).toEqual(spec);
    // Same key order on the wire.
    expect(JSON.stringify(EXCHANGE_RATE_PERIODS)).toBe(JSON.stringify(spec));
  });

  it('has the 33 documented ids, second-based, frozen', () => {
    expect(EXCHANGE_RATE_PERIODS.map((p) => p.period_id)).toEqual(
      (
        '1SEC 2SEC 3SEC 4SEC 5SEC 6SEC 10SEC 15SEC 20SEC 30SEC ' +
        '1MIN 2MIN 3MIN 4MIN 5MIN 6MIN 10MIN 15MIN 20MIN 30MIN ' +
        '1HRS 2HRS 3HRS 4HRS 6HRS 8HRS 12HRS 1DAY 2DAY 3DAY 5DAY 7DAY 10DAY'
      ).split(' '),
    );
    for (const p of EXCHANGE_RATE_PERIODS) {
      expect(p.length_months).toBe(0);
      expect(p.length_seconds).toBeGreaterThan(0);
      expect(Object.isFrozen(p)).toBe(true);
    }
    expect(Object.isFrozen(EXCHANGE_RATE_PERIODS)).toBe(true);
    expect(P('1DAY')).toMatchObject({ length_seconds: 86_400, unit_name: 'day', display_name: '1 Day' });
  });
});

describe('MONTH_PERIODS', () => {
  it('lists the month and year ids of the metrics endpoints', () => {
    expect(MONTH_PERIODS.map((p) => p.period_id)).toEqual('1MTH 2MTH 3MTH 4MTH 6MTH 1YRS 2YRS 3YRS 4YRS 5YRS'.split(' '));
    expect(P('1MTH')).toEqual({
      period_id: '1MTH',
      length_seconds: 0,
      length_months: 1,
      unit_count: 1,
      unit_name: 'month',
      display_name: '1 Month',
    });
    expect(P('2MTH').display_name).toBe('2 Months');
    expect(P('3YRS')).toMatchObject({ length_months: 36, unit_count: 3, unit_name: 'year', display_name: '3 Years' });
    for (const p of MONTH_PERIODS) expect(isMonthPeriod(p)).toBe(true);
  });
});

describe('getPeriod', () => {
  it('finds ids case-insensitively', () => {
    expect(getPeriod('1MIN')?.length_seconds).toBe(60);
    expect(getPeriod('1min')?.period_id).toBe('1MIN');
    expect(getPeriod('10Day')?.length_seconds).toBe(864_000);
  });
  it('finds month ids only with opts.months', () => {
    expect(getPeriod('1MTH')).toBeUndefined();
    expect(getPeriod('1mth', { months: false })).toBeUndefined();
    expect(getPeriod('1mth', { months: true })?.length_months).toBe(1);
    expect(getPeriod('1MIN', { months: true })?.length_seconds).toBe(60);
  });
  it('rejects unknown or padded ids', () => {
    for (const id of ['', '7SEC', '1 MIN', ' 1MIN', '1MINS', '60SEC', '5MTH', '6YRS']) {
      expect(getPeriod(id, { months: true })).toBeUndefined();
    }
  });
});

describe('bucketStart / bucketEnd, second periods', () => {
  it('aligns to the epoch; a tick at a bucket start begins that bucket', () => {
    const m = P('1MIN');
    expect(bucketStart(60 * US, m)).toBe(60 * US);
    expect(bucketEnd(60 * US, m)).toBe(120 * US);
    expect(bucketStart(60 * US - 1, m)).toBe(0);
    expect(bucketEnd(60 * US - 1, m)).toBe(60 * US);
    expect(bucketStart(0, m)).toBe(0);
    expect(bucketStart(utc(2024, 3, 5, 13, 7, 59) + 999_999, P('15MIN'))).toBe(utc(2024, 3, 5, 13, 0));
    expect(bucketStart(utc(2024, 3, 5, 13, 7), P('8HRS'))).toBe(utc(2024, 3, 5, 8, 0));
  });

  it('floors negative times', () => {
    const s = P('1SEC');
    expect(bucketStart(-1, s)).toBe(-US);
    expect(bucketEnd(-1, s)).toBe(0);
    expect(bucketStart(-US, s)).toBe(-US);
    expect(Object.is(bucketStart(-US, s), -US)).toBe(true);
    expect(bucketStart(-US - 1, s)).toBe(-2 * US);
    expect(bucketStart(-1, P('7DAY'))).toBe(-7 * DAY);
    expect(bucketStart(-7 * DAY, P('7DAY'))).toBe(-7 * DAY);
  });

  it('never returns -0', () => {
    expect(Object.is(bucketStart(0, P('1SEC')), 0)).toBe(true);
    expect(Object.is(bucketStart(-0, P('1SEC')), 0)).toBe(true);
  });

  it('is exact at large times (year 2200)', () => {
    const t = utc(2200, 12, 31, 23, 59, 59) + 999_999;
    expect(bucketStart(t, P('1SEC'))).toBe(t - 999_999);
    expect(bucketEnd(t, P('1DAY'))).toBe(utc(2201, 1, 1));
  });

  it('periodLengthUs', () => {
    expect(periodLengthUs(P('1SEC'))).toBe(US);
    expect(periodLengthUs(P('10DAY'))).toBe(10 * DAY);
    expect(() => periodLengthUs(P('1MTH'))).toThrow(RangeError);
  });

  it('rejects malformed records', () => {
    const bad = { ...P('1SEC'), length_seconds: 0 };
    expect(() => bucketStart(0, bad)).toThrow(RangeError);
    const both = { ...P('1SEC'), length_months: 1 };
    expect(() => bucketEnd(0, both)).toThrow(RangeError);
  });
});

describe('bucketStart / bucketEnd, month periods', () => {
  it('1MTH: calendar months incl. leap February', () => {
    const m = P('1MTH');
    expect(bucketStart(utc(2024, 2, 29, 23, 59, 59), m)).toBe(utc(2024, 2, 1));
    expect(bucketEnd(utc(2024, 2, 29, 23, 59, 59), m)).toBe(utc(2024, 3, 1));
    expect(bucketEnd(utc(2024, 2, 1), m) - bucketStart(utc(2024, 2, 1), m)).toBe(29 * DAY);
    expect(bucketEnd(utc(2023, 2, 1), m) - bucketStart(utc(2023, 2, 1), m)).toBe(28 * DAY);
    expect(bucketEnd(utc(2100, 2, 1), m) - bucketStart(utc(2100, 2, 1), m)).toBe(28 * DAY);
    expect(bucketEnd(utc(2000, 2, 1), m) - bucketStart(utc(2000, 2, 1), m)).toBe(29 * DAY);
    // A tick exactly at a month start belongs to the new month.
    expect(bucketStart(utc(2024, 3, 1), m)).toBe(utc(2024, 3, 1));
    expect(bucketStart(utc(2024, 3, 1) - 1, m)).toBe(utc(2024, 2, 1));
    expect(bucketEnd(utc(2024, 12, 31, 23), m)).toBe(utc(2025, 1, 1));
  });

  it('3MTH aligns to Jan/Apr/Jul/Oct, 2MTH/4MTH/6MTH to months since 1970-01', () => {
    const q = P('3MTH');
    for (let mo = 1; mo <= 12; mo++) {
      const qs = 1 + 3 * Math.floor((mo - 1) / 3);
      expect(bucketStart(utc(2023, mo, 15), q)).toBe(utc(2023, qs));
      expect(bucketEnd(utc(2023, mo, 15), q)).toBe(qs === 10 ? utc(2024, 1) : utc(2023, qs + 3));
    }
    expect(bucketStart(utc(2024, 2, 10), P('2MTH'))).toBe(utc(2024, 1));
    expect(bucketStart(utc(2024, 8, 10), P('4MTH'))).toBe(utc(2024, 5));
    expect(bucketStart(utc(2024, 6, 30), P('6MTH'))).toBe(utc(2024, 1));
    expect(bucketEnd(utc(2024, 7, 1), P('6MTH'))).toBe(utc(2025, 1));
  });

  it('years: 1YRS on Jan 1, 2YRS on even years, 5YRS from 1970', () => {
    expect(bucketStart(utc(2023, 7, 4), P('1YRS'))).toBe(utc(2023, 1));
    expect(bucketEnd(utc(2023, 7, 4), P('1YRS'))).toBe(utc(2024, 1));
    expect(bucketStart(utc(2023, 7, 4), P('2YRS'))).toBe(utc(2022, 1));
    expect(bucketStart(utc(2024, 7, 4), P('5YRS'))).toBe(utc(2020, 1));
    expect(bucketEnd(utc(2024, 7, 4), P('5YRS'))).toBe(utc(2025, 1));
  });

  it('works before 1970 and before 1600 (proleptic Gregorian)', () => {
    expect(bucketStart(-1, P('1MTH'))).toBe(utc(1969, 12));
    expect(bucketStart(-1, P('3MTH'))).toBe(utc(1969, 10));
    expect(bucketStart(-1, P('1YRS'))).toBe(utc(1969, 1));
    expect(bucketStart(-1, P('2YRS'))).toBe(utc(1968, 1));
    expect(bucketStart(utc(1600, 2, 29, 12), P('1MTH'))).toBe(utc(1600, 2, 1));
    expect(bucketEnd(utc(1600, 2, 29, 12), P('1MTH'))).toBe(utc(1600, 3, 1));
  });

  it('agrees with Date for every month 1890..2110, ±1 µs around each month start', () => {
    const m = P('1MTH');
    for (let y = 1890; y <= 2110; y++) {
      for (let mo = 1; mo <= 12; mo++) {
        const s = utc(y, mo);
        const next = mo === 12 ? utc(y + 1, 1) : utc(y, mo + 1);
        const prev = mo === 1 ? utc(y - 1, 12) : utc(y, mo - 1);
        expect(bucketStart(s, m)).toBe(s);
        expect(bucketEnd(s, m)).toBe(next);
        expect(bucketStart(s - 1, m)).toBe(prev);
        expect(bucketEnd(s - 1, m)).toBe(s);
      }
    }
  });
});

describe('isRollupOf', () => {
  it('second periods nest when lengths divide', () => {
    expect(isRollupOf(P('1HRS'), P('1MIN'))).toBe(true);
    expect(isRollupOf(P('1MIN'), P('1SEC'))).toBe(true);
    expect(isRollupOf(P('1MIN'), P('1MIN'))).toBe(true);
    expect(isRollupOf(P('1MIN'), P('1HRS'))).toBe(false);
    expect(isRollupOf(P('10SEC'), P('4SEC'))).toBe(false);
    expect(isRollupOf(P('7DAY'), P('2DAY'))).toBe(false);
    expect(isRollupOf(P('10DAY'), P('2DAY'))).toBe(true);
    for (const p of EXCHANGE_RATE_PERIODS) expect(isRollupOf(p, P('1SEC'))).toBe(true);
  });
  it('months nest in months when counts divide; days-or-less dividing a day nest in months', () => {
    expect(isRollupOf(P('6MTH'), P('3MTH'))).toBe(true);
    expect(isRollupOf(P('6MTH'), P('4MTH'))).toBe(false);
    expect(isRollupOf(P('1YRS'), P('4MTH'))).toBe(true);
    expect(isRollupOf(P('1YRS'), P('6MTH'))).toBe(true);
    expect(isRollupOf(P('5YRS'), P('2YRS'))).toBe(false);
    expect(isRollupOf(P('1MTH'), P('1DAY'))).toBe(true);
    expect(isRollupOf(P('1MTH'), P('8HRS'))).toBe(true);
    expect(isRollupOf(P('1MTH'), P('2DAY'))).toBe(false);
    expect(isRollupOf(P('3MTH'), P('7DAY'))).toBe(false);
    expect(isRollupOf(P('1DAY'), P('1MTH'))).toBe(false);
  });
});

describe('bucketStartAtOrAfter', () => {
  it('is the time itself on a boundary, else the next boundary (seconds and months)', () => {
    const min = getPeriod('1MIN')!;
    expect(bucketStartAtOrAfter(60 * US, min)).toBe(60 * US);
    expect(bucketStartAtOrAfter(60 * US + 1, min)).toBe(120 * US);
    expect(bucketStartAtOrAfter(-1, min)).toBe(0);
    const mth = getPeriod('1MTH', { months: true })!;
    expect(bucketStartAtOrAfter(Date.UTC(2024, 1, 1) * 1000, mth)).toBe(Date.UTC(2024, 1, 1) * 1000);
    expect(bucketStartAtOrAfter(Date.UTC(2024, 1, 10) * 1000, mth)).toBe(Date.UTC(2024, 2, 1) * 1000);
  });
});
