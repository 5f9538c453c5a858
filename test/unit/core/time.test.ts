import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ceilSecond,
  floorSecond,
  formatTime,
  parseDuration,
  parseTime,
  US_PER_DAY,
  US_PER_HOUR,
  US_PER_MINUTE,
  US_PER_SECOND,
} from '../../../src/core/time.js';

const T2024 = 1_704_067_200_000_000; // 2024-01-01T00:00:00Z

describe('constants', () => {
  it('are µs', () => {
    expect(US_PER_SECOND).toBe(1_000_000);
    expect(US_PER_MINUTE).toBe(60_000_000);
    expect(US_PER_HOUR).toBe(3_600_000_000);
    expect(US_PER_DAY).toBe(86_400_000_000);
  });
});

describe('floorSecond', () => {
  it('is the tick at or before a time, before 1970 too', () => {
    expect(floorSecond(T2024)).toBe(T2024);
    expect(floorSecond(T2024 + 999_999)).toBe(T2024);
    expect(floorSecond(T2024 - 1)).toBe(T2024 - US_PER_SECOND);
    expect(floorSecond(-1)).toBe(-US_PER_SECOND);
  });
});

describe('ceilSecond', () => {
  it('is the first tick at or after a time, before 1970 too', () => {
    expect(ceilSecond(T2024)).toBe(T2024);
    expect(ceilSecond(T2024 + 1)).toBe(T2024 + US_PER_SECOND);
    expect(ceilSecond(T2024 + 999_999)).toBe(T2024 + US_PER_SECOND);
    expect(ceilSecond(-1) === 0).toBe(true); // -0, as Math.ceil gives it
    expect(ceilSecond(-US_PER_SECOND - 1)).toBe(-US_PER_SECOND);
  });

  it('brackets every time with floorSecond, a second apart unless the time is a tick', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 52), max: 2 ** 52 }), (t) => {
        const lo = floorSecond(t);
        const hi = ceilSecond(t);
        expect(lo <= t && t <= hi).toBe(true);
        expect(hi - lo).toBe(t % US_PER_SECOND === 0 ? 0 : US_PER_SECOND);
      }),
      { seed: 2025 },
    );
  });
});

describe('parseTime accepted forms', () => {
  it.each([
    ['2024-01-01', T2024],
    ['2024-01-01T00:00', T2024],
    ['2024-01-01T00:00:00', T2024],
    ['2024-01-01T00:00:00Z', T2024],
    ['2024-01-01T00:00:00z', T2024],
    ['2024-01-01t00:00:00Z', T2024],
    ['2024-01-01 00:00:00', T2024],
    ['2024-01-01 00:00:00Z', T2024],
    ['2024-01-01T00:00Z', T2024],
    ['2024-01-01T00:00:00+00:00', T2024],
    ['2024-01-01T00:00:00-00:00', T2024],
    ['2024-01-01T00:00:00+0000', T2024],
    ['2024-01-01T00:00:00+00', T2024],
    ['2024-01-01T00:00:00 00:00', T2024], // URL-decoded "+"
    ['2024-01-01 00:00:00 00:00', T2024],
    ['2024-01-01T00:00 00:00', T2024],
    ['2024-01-01T00:00:00.1Z', T2024 + 100_000],
    ['2024-01-01T00:00:00.12Z', T2024 + 120_000],
    ['2024-01-01T00:00:00.123Z', T2024 + 123_000],
    ['2024-01-01T00:00:00.1234Z', T2024 + 123_400],
    ['2024-01-01T00:00:00.12345Z', T2024 + 123_450],
    ['2024-01-01T00:00:00.123456Z', T2024 + 123_456],
    ['2024-01-01T00:00:00.1234567Z', T2024 + 123_456],
    ['2024-01-01T00:00:00.1234569Z', T2024 + 123_456], // truncated, not rounded
    ['2024-01-01T00:00:00.9999999Z', T2024 + 999_999],
    ['2024-01-01T00:00:00.0000001Z', T2024],
    ['2024-01-01T00:00:00.1234567', T2024 + 123_456],
    ['2024-01-01T00:00:00.5+00:00', T2024 + 500_000],
    ['2024-01-01T23:59:59Z', T2024 + US_PER_DAY - US_PER_SECOND],
    ['1970-01-01T00:00:00Z', 0],
  ])('%s', (text, us) => {
    expect(parseTime(text)).toBe(us);
  });

  it('applies offsets: local time minus offset is UTC', () => {
    expect(parseTime('2024-01-01T05:30:00+05:30')).toBe(T2024);
    expect(parseTime('2024-01-01T05:30:00+0530')).toBe(T2024);
    expect(parseTime('2024-01-01T05:00:00+05')).toBe(T2024);
    expect(parseTime('2023-12-31T18:30:00-05:30')).toBe(T2024);
    expect(parseTime('2023-12-31T19:00:00-05')).toBe(T2024);
    expect(parseTime('2024-01-01T00:00:00+01:00')).toBe(T2024 - US_PER_HOUR);
    expect(parseTime('2024-01-01T05:30:00 05:30')).toBe(T2024);
    expect(parseTime('2024-01-01T00:00:00+23:59')).toBe(T2024 - 23 * US_PER_HOUR - 59 * US_PER_MINUTE);
  });

  it('handles leap years', () => {
    expect(parseTime('2024-02-29')).toBe(parseTime('2024-03-01')! - US_PER_DAY);
    expect(parseTime('2000-02-29')).toBe(951_782_400_000_000);
    expect(parseTime('2024-12-31')).toBe(T2024 + 365 * US_PER_DAY);
  });

  it('handles times before 1970', () => {
    expect(parseTime('1969-12-31T23:59:59.999999Z')).toBe(-1);
    expect(parseTime('1969-12-31T23:59:59.9999999Z')).toBe(-1); // floor of -0.1 µs
    expect(parseTime('1969-12-31')).toBe(-US_PER_DAY);
    expect(parseTime('1900-01-01')).toBe(-2_208_988_800_000_000);
    expect(parseTime('1700-03-01T00:00:00Z')).toBe(-8_515_238_400_000_000);
  });

  it('agrees with Date.UTC on day boundaries', () => {
    for (let y = 1700; y <= 2250; y += 7) {
      for (const [m, d] of [
        [1, 1],
        [2, 28],
        [3, 1],
        [12, 31],
      ]) {
        const text = `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
        expect(parseTime(text)).toBe(Date.UTC(y, m - 1, d) * 1000);
      }
    }
  });
});

describe('parseTime rejected forms', () => {
  it.each([
    '',
    'garbage',
    '2024',
    '2024-01',
    '2024-1-01',
    '2024-01-1',
    '24-01-01',
    '2024/01/01',
    '20240101',
    '2024-00-01',
    '2024-13-01',
    '2024-01-00',
    '2024-01-32',
    '2024-02-30',
    '2023-02-29',
    '1900-02-29',
    '2024-04-31',
    '2024-01-01T',
    '2024-01-01T00',
    '2024-01-01T0:00',
    '2024-01-01T24:00:00Z',
    '2024-01-01T23:60:00Z',
    '2024-01-01T23:59:60Z',
    '2024-01-01T00:00:00.Z',
    '2024-01-01T00:00:00.',
    '2024-01-01T00:00:00.12345678Z',
    '2024-01-01T00:00:00.12345678',
    '2024-01-01T00:00.5Z',
    '2024-01-01X00:00:00Z',
    '2024-01-01T00:00:00ZZ',
    '2024-01-01T00:00:00Z ',
    ' 2024-01-01T00:00:00Z',
    '2024-01-01Z',
    '2024-01-01T00:00:00+24:00',
    '2024-01-01T00:00:00+00:60',
    '2024-01-01T00:00:00+0',
    '2024-01-01T00:00:00+000',
    '2024-01-01T00:00:00+00:0',
    '2024-01-01T00:00:00+00:00:00',
    '2024-01-01T00:00:00 0000',
    '2024-01-01T00:00:00 00',
    '2024-01-01T00:00:00 ',
    '2024-01-01T00:00:00 00:00Z',
    '2024-01-01T00:00:00UTC',
    '2024-01-01T00:00:00GMT+1',
    '２０２４-01-01',
    '0000-01-01', // not a safe integer of µs
    '9999-12-31T23:59:59Z',
    '1600-01-01',
  ])('%j', (text) => {
    expect(parseTime(text)).toBeUndefined();
  });

  it('never throws on random strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (s) => {
        const r = parseTime(s);
        expect(r === undefined || Number.isSafeInteger(r)).toBe(true);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });
});

describe('formatTime', () => {
  it('always prints 7 fractional digits', () => {
    expect(formatTime(T2024 + 123_456)).toBe('2024-01-01T00:00:00.1234560Z');
    expect(formatTime(T2024)).toBe('2024-01-01T00:00:00.0000000Z');
    expect(formatTime(0)).toBe('1970-01-01T00:00:00.0000000Z');
    expect(formatTime(951_782_400_000_001)).toBe('2000-02-29T00:00:00.0000010Z');
  });

  it('handles negative times with floor division', () => {
    expect(formatTime(-1)).toBe('1969-12-31T23:59:59.9999990Z');
    expect(formatTime(-US_PER_DAY)).toBe('1969-12-31T00:00:00.0000000Z');
    expect(formatTime(-US_PER_DAY - 1)).toBe('1969-12-30T23:59:59.9999990Z');
    expect(formatTime(-2_208_988_800_000_000)).toBe('1900-01-01T00:00:00.0000000Z');
  });

  it('handles the ends of the safe range', () => {
    expect(formatTime(Number.MAX_SAFE_INTEGER)).toBe('2255-06-05T23:47:34.7409910Z');
    expect(formatTime(Number.MIN_SAFE_INTEGER)).toBe('1684-07-28T00:12:25.2590090Z');
    expect(parseTime(formatTime(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseTime(formatTime(Number.MIN_SAFE_INTEGER))).toBe(Number.MIN_SAFE_INTEGER);
  });

  it('matches Date#toISOString at ms resolution', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8_000_000_000_000, max: 8_000_000_000_000 }), (ms) => {
        const iso = new Date(ms).toISOString(); // e.g. 2024-01-01T00:00:00.123Z
        expect(formatTime(ms * 1000)).toBe(`${iso.slice(0, 23)}0000Z`);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });

  it('throws RangeError on non-safe-integer input', () => {
    expect(() => formatTime(1.5)).toThrow(RangeError);
    expect(() => formatTime(Number.NaN)).toThrow(RangeError);
    expect(() => formatTime(2 ** 53)).toThrow(RangeError);
  });
});

describe('round trips', () => {
  // The brief's range [0, 253402300799999999] (up to 9999-12-31) exceeds 2^53: µs are only
  // exact up to Number.MAX_SAFE_INTEGER (2255-06-05), so the property uses the safe range.
  it('parseTime(formatTime(us)) === us for non-negative safe µs', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (us) => {
        expect(parseTime(formatTime(us))).toBe(us);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });

  it('parseTime(formatTime(us)) === us for any safe µs (incl. before 1970)', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (us) => {
        expect(parseTime(formatTime(us))).toBe(us);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });

  it('formatTime(parseTime(text)) is the canonical text', () => {
    expect(formatTime(parseTime('2024-01-01T05:30:00.1234567+05:30')!)).toBe('2024-01-01T00:00:00.1234560Z');
  });
});

describe('parseDuration', () => {
  it.each([
    ['301s', 301 * US_PER_SECOND],
    ['4h', 4 * US_PER_HOUR],
    ['24h', 24 * US_PER_HOUR],
    ['1h30m', 90 * US_PER_MINUTE],
    ['500ms', 500_000],
    ['1d', US_PER_DAY],
    ['1d4h', 28 * US_PER_HOUR],
    ['2m30s500ms', 150_500_000],
    ['250us', 250],
    ['250µs', 250],
    ['301', 301 * US_PER_SECOND],
    ['0', 0],
    ['0s', 0],
    ['1.5h', 90 * US_PER_MINUTE],
    ['0.5s', 500_000],
    ['.25', 250_000],
    ['0.000001', 1],
    [' 4h ', 4 * US_PER_HOUR],
  ])('%j', (text, us) => {
    expect(parseDuration(text)).toBe(us);
  });

  it.each([
    '',
    '   ',
    'h',
    's4',
    '4x',
    '4 h',
    '-1s',
    '+1s',
    '1e3',
    '1s1s',
    '30m1h',
    '1h 30m',
    '1.',
    '0.0000001',
    '0.0000001s',
    '1.2.3s',
    '4H',
    '1h30',
    '99999999999999999999d',
  ])('rejects %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});
