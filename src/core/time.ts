/**
 * Event times: ISO 8601 parsing and formatting to and from integer microseconds.
 *
 * docs/methodology.md section 7 holds every time as an integer number of microseconds since the
 * Unix epoch (UTC) and prints output times with 7 fractional digits. Section 1 fixes which
 * ISO 8601 forms an event's `time` may take. Everything here is pure and allocation-light:
 * it runs once per event on the hot path.
 *
 * A `number` holds µs exactly up to 2^53 - 1, i.e. between about 1684-08 and 2255-06
 * (see `TimeUs` in types.ts); times outside that span are rejected by {@link parseTime}.
 *
 * @module
 */

import type { TimeUs } from './types.js';

/**
 * Microseconds in one second.
 *
 * Why: times are integer µs (docs/methodology.md section 7), so every duration constant is in µs.
 *
 * @example
 * ```ts
 * const stale = 301 * US_PER_SECOND; // rule 7 staleness limit
 * ```
 */
export const US_PER_SECOND = 1_000_000;

/**
 * Microseconds in one minute.
 *
 * Why: integer-µs durations (docs/methodology.md section 7), e.g. minute OHLC periods (section 5).
 *
 * @example
 * ```ts
 * const fiveMin = 5 * US_PER_MINUTE;
 * ```
 */
export const US_PER_MINUTE = 60 * US_PER_SECOND;

/**
 * Microseconds in one hour.
 *
 * Why: integer-µs durations (docs/methodology.md section 7), e.g. the 4 h refresh of rule 8.
 *
 * @example
 * ```ts
 * const refreshEvery = 4 * US_PER_HOUR; // rule 8
 * ```
 */
export const US_PER_HOUR = 60 * US_PER_MINUTE;

/**
 * Microseconds in one day.
 *
 * Why: integer-µs durations (docs/methodology.md section 7), e.g. the 24 h volume window of rule 8.
 *
 * @example
 * ```ts
 * const window = US_PER_DAY; // trades in (R - 24 h, R]
 * ```
 */
export const US_PER_DAY = 24 * US_PER_HOUR;

/**
 * The tick at or before `t`: its whole second, in µs.
 *
 * Why: ticks are whole seconds (docs/methodology.md section 2), so a time asked for is answered
 * as of the last tick at or before it.
 *
 * @example
 * ```ts
 * floorSecond(1_700_000_000_500_000); // 1_700_000_000_000_000
 * ```
 */
export function floorSecond(t: TimeUs): TimeUs {
  return Math.floor(t / US_PER_SECOND) * US_PER_SECOND;
}

/**
 * The first tick at or after `t`: its whole second rounded up, in µs (the first tick that counts an
 * event at `t`; where a replay's last ticks end).
 *
 * @example
 * ```ts
 * ceilSecond(1_700_000_000_500_000); // 1_700_000_001_000_000
 * ```
 */
export function ceilSecond(t: TimeUs): TimeUs {
  return Math.ceil(t / US_PER_SECOND) * US_PER_SECOND;
}

const SECONDS_PER_DAY = 86_400;
const POW10: readonly number[] = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];

/** Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian; H. Hinnant's algorithm). */
function daysFromCivil(y: number, m: number, d: number): number {
  if (m <= 2) y -= 1;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function isLeap(y: number): boolean {
  return (y & 3) === 0 && (y % 100 !== 0 || y % 400 === 0);
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return isLeap(y) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Two ASCII digits at i, i+1 as a number, or -1. */
function d2(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  // Written so that NaN (charCodeAt past the end) is rejected too.
  if (!(a >= 0 && a <= 9 && b >= 0 && b <= 9)) return -1;
  return a * 10 + b;
}

/**
 * Parse an ISO 8601 time into integer microseconds since the Unix epoch (UTC).
 *
 * Accepted: `YYYY-MM-DD` (midnight UTC), `YYYY-MM-DDTHH:MM`, `YYYY-MM-DDTHH:MM:SS`, the last
 * with `.` and 1 to 7 fractional digits; `T` may also be `t` or a space. Optional zone: `Z`,
 * `z`, `+HH:MM`, `-HH:MM`, `+HHMM`, `-HHMM`, `+HH`, `-HH`, or none (= UTC); a `+` that arrived
 * URL-decoded as a space is accepted when the space is followed by `HH:MM` at the very end.
 * A 7th fractional digit (100 ns) is truncated toward the past (floor) — times are integer µs.
 * Ranges are checked (month, day of month with leap years, hour 0-23, minute and second 0-59,
 * offset up to 23:59). Returns `undefined` for anything else, and for times whose µs count is
 * not a safe integer; never throws.
 *
 * Why: docs/methodology.md section 1 (event `time`: ISO 8601 UTC, 0 to 7 fractional digits, `Z` or
 * `+00:00` or no zone, bare date = midnight) and section 7 (times held as integer µs).
 *
 * @param text - the time text, without surrounding whitespace
 * @returns µs since epoch, or `undefined` when `text` is not an accepted time
 *
 * @example
 * ```ts
 * parseTime('2024-01-01T00:00:00.1234567Z'); // 1704067200123456
 * parseTime('2024-01-01');                    // 1704067200000000
 * parseTime('2024-01-01T05:30+05:30');        // 1704067200000000
 * parseTime('2024-02-30');                    // undefined
 * ```
 */
export function parseTime(text: string): TimeUs | undefined {
  const us = parseTimeUnchecked(text);
  return us !== undefined && Number.isSafeInteger(us) ? us : undefined;
}

/**
 * The first and last time xrate can hold: µs since the epoch are exact in a double up to 2^53
 * (docs/methodology.md section 7), which spans the years 1684 to 2255.
 */
export const TIME_RANGE: { readonly first: TimeUs; readonly last: TimeUs } = Object.freeze({
  first: -Number.MAX_SAFE_INTEGER,
  last: Number.MAX_SAFE_INTEGER,
});

/**
 * Whether `text` is a well-formed ISO 8601 time that {@link parseTime} refuses only because it
 * lies outside {@link TIME_RANGE} (so a reject can say so rather than call it malformed).
 */
export function isTimeOutOfRange(text: string): boolean {
  const us = parseTimeUnchecked(text);
  return us !== undefined && !Number.isSafeInteger(us);
}

/** {@link parseTime} without the range check: µs (possibly beyond 2^53), or undefined when malformed. */
function parseTimeUnchecked(text: string): number | undefined {
  const len = text.length;
  if (len < 10 || len > 40) return undefined;
  // Year: 4 digits.
  const y1 = d2(text, 0);
  const y2 = d2(text, 2);
  if (y1 < 0 || y2 < 0 || text.charCodeAt(4) !== 45 /* - */ || text.charCodeAt(7) !== 45) {
    return undefined;
  }
  const year = y1 * 100 + y2;
  const month = d2(text, 5);
  if (month < 1 || month > 12) return undefined;
  const day = d2(text, 8);
  if (day < 1 || day > daysInMonth(year, month)) return undefined;

  let hour = 0;
  let minute = 0;
  let second = 0;
  let frac = 0; // µs
  let offsetMin = 0;

  if (len > 10) {
    const sep = text.charCodeAt(10);
    if (sep !== 84 /* T */ && sep !== 116 /* t */ && sep !== 32 /* space */) return undefined;
    if (len < 16) return undefined;
    hour = d2(text, 11);
    if (hour < 0 || hour > 23 || text.charCodeAt(13) !== 58 /* : */) return undefined;
    minute = d2(text, 14);
    if (minute < 0 || minute > 59) return undefined;
    let pos = 16;
    if (pos < len && text.charCodeAt(pos) === 58 /* : */) {
      second = d2(text, 17);
      if (second < 0 || second > 59) return undefined;
      pos = 19;
      if (pos < len && text.charCodeAt(pos) === 46 /* . */) {
        pos++;
        const start = pos;
        let v = 0;
        while (pos < len) {
          const c = text.charCodeAt(pos) - 48;
          if (!(c >= 0 && c <= 9)) break;
          if (pos - start >= 7) return undefined; // 8th fractional digit
          v = v * 10 + c;
          pos++;
        }
        const n = pos - start;
        if (n === 0) return undefined; // "." with no digit
        // 7 digits = units of 100 ns: truncate (floor, v >= 0) to whole µs.
        frac = n === 7 ? Math.floor(v / 10) : v * POW10[6 - n];
      }
    }
    if (pos < len) {
      const z = text.charCodeAt(pos);
      if (z === 90 /* Z */ || z === 122 /* z */) {
        if (pos + 1 !== len) return undefined;
      } else if (z === 43 /* + */ || z === 45 /* - */ || z === 32 /* space, a decoded + */) {
        const rest = len - pos - 1;
        const oh = d2(text, pos + 1);
        if (oh < 0 || oh > 23) return undefined;
        let om = 0;
        if (z === 32) {
          // Only " HH:MM" at the very end.
          if (rest !== 5 || text.charCodeAt(pos + 3) !== 58) return undefined;
          om = d2(text, pos + 4);
        } else if (rest === 2) {
          om = 0;
        } else if (rest === 4) {
          om = d2(text, pos + 3);
        } else if (rest === 5 && text.charCodeAt(pos + 3) === 58) {
          om = d2(text, pos + 4);
        } else {
          return undefined;
        }
        if (om < 0 || om > 59) return undefined;
        offsetMin = oh * 60 + om;
        if (z === 45) offsetMin = -offsetMin;
      } else {
        return undefined;
      }
    }
  }

  // Local time - offset = UTC. All terms are small exact integers.
  const secs = daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offsetMin * 60;
  // secs * 1e6 is exact (a multiple of 64 below 2^59); the sum is correctly rounded, so it is
  // exact whenever the true result is a safe integer, and unsafe otherwise.
  return secs * US_PER_SECOND + frac;
}

const PAD2: readonly string[] = Array.from({ length: 100 }, (_, i) => (i < 10 ? '0' : '') + i);

/**
 * Format integer microseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.fffffffZ`.
 *
 * Always 7 fractional digits; the 7th is always `0` because times are held as µs. Times before
 * 1970 (negative) are handled with floor division. Throws a `RangeError` when `us` is not a
 * safe integer (a programming error, never a data error: every parsed time is one).
 *
 * Why: docs/methodology.md section 7 (output timestamps have 7 fractional digits; byte-identical
 * outputs, so the text depends only on the integer, never on the process time zone).
 *
 * @param us - integer µs since 1970-01-01T00:00:00Z
 * @returns the UTC time text
 *
 * @example
 * ```ts
 * formatTime(1704067200123456); // "2024-01-01T00:00:00.1234560Z"
 * formatTime(-1);               // "1969-12-31T23:59:59.9999990Z"
 * ```
 */
export function formatTime(us: TimeUs): string {
  if (!Number.isSafeInteger(us)) throw new RangeError(`formatTime: not a safe integer µs: ${us}`);
  let days = Math.floor(us / US_PER_DAY);
  let rem = us - days * US_PER_DAY;
  // The float quotient can round across a day boundary; fix it on the exact remainder.
  if (rem < 0) {
    days -= 1;
    rem += US_PER_DAY;
  } else if (rem >= US_PER_DAY) {
    days += 1;
    rem -= US_PER_DAY;
  }
  const secOfDay = Math.floor(rem / US_PER_SECOND);
  const micros = rem - secOfDay * US_PER_SECOND;
  const hour = Math.floor(secOfDay / 3600);
  const minute = Math.floor((secOfDay - hour * 3600) / 60);
  const second = secOfDay - hour * 3600 - minute * 60;
  // Few pieces: a text written many times (a long history's) is cheap to copy.
  const clock = `${PAD2[hour]}:${PAD2[minute]}:${PAD2[second]}`;
  return dateText(days) + clock + (micros === 0 ? '.0000000Z' : fractionText(micros));
}

/** The day last written by {@link dateText}, and its text: times written in a row mostly share their day. */
let lastDay = Number.NaN;
let lastDayText = '';

/** `YYYY-MM-DDT` of a day (days since 1970-01-01). */
function dateText(days: number): string {
  if (days === lastDay) return lastDayText;
  // Civil date from days (H. Hinnant's algorithm).
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  // Safe-integer µs are years 1684..2255: always 4 digits.
  lastDay = days;
  lastDayText = `${PAD2[Math.floor(year / 100)]}${PAD2[year % 100]}-${PAD2[month]}-${PAD2[day]}T`;
  return lastDayText;
}

/** `.fffffffZ` of the µs of a second (the 7th digit always 0). */
function fractionText(micros: number): string {
  const f1 = Math.floor(micros / 10_000);
  const f2 = Math.floor((micros - f1 * 10_000) / 100);
  const f3 = micros - f1 * 10_000 - f2 * 100;
  return `.${PAD2[f1]}${PAD2[f2]}${PAD2[f3]}0Z`;
}

const DURATION_UNITS: Readonly<Record<string, bigint>> = {
  d: 86_400_000_000n,
  h: 3_600_000_000n,
  m: 60_000_000n,
  s: 1_000_000n,
  ms: 1_000n,
  us: 1n,
  µs: 1n,
};

/**
 * Parse a duration such as `"301s"`, `"4h"`, `"1h30m"`, `"500ms"`, `"1d"` into integer µs.
 *
 * Units: `d`, `h`, `m`, `s`, `ms`, `us` (or `µs`). A plain number means seconds. Several
 * components may be chained, each unit at most once and from larger to smaller
 * (`1d4h`, `1h30m`, `2m30s500ms`). Components may have a fraction (`1.5h`, `0.5s`) as long as the
 * total is a whole number of µs. Surrounding whitespace is ignored. Negative or empty durations,
 * unknown units and totals that are not a safe integer give `undefined`; never throws.
 *
 * Why: the defaults of docs/methodology.md (rule 7's 301 s, rule 8's 4 h and 24 h, rule 13's
 * `maxRateAge`) are options of `EngineConfig` and the CLI, and times are integer µs (section 7).
 *
 * @param text - the duration text
 * @returns the duration in µs, or `undefined`
 *
 * @example
 * ```ts
 * parseDuration('301s');  // 301_000_000
 * parseDuration('1h30m'); // 5_400_000_000
 * parseDuration('0.25');  // 250_000 (plain number = seconds)
 * ```
 */
export function parseDuration(text: string): number | undefined {
  if (typeof text !== 'string') return undefined;
  const s = text.trim();
  const len = s.length;
  if (len === 0) return undefined;
  let total = 0n;
  let pos = 0;
  let lastUnit = Infinity;
  while (pos < len) {
    // Number: digits [. digits]
    const numStart = pos;
    while (pos < len && isDigit(s.charCodeAt(pos))) pos++;
    const intEnd = pos;
    let fracDigits = '';
    if (pos < len && s.charCodeAt(pos) === 46 /* . */) {
      pos++;
      const fs = pos;
      while (pos < len && isDigit(s.charCodeAt(pos))) pos++;
      if (pos === fs) return undefined; // "1." has no fraction digit
      fracDigits = s.slice(fs, pos);
    }
    if (intEnd === numStart && fracDigits.length === 0) return undefined;
    const intDigits = s.slice(numStart, intEnd);
    // Unit: letters up to the next digit or dot.
    const unitStart = pos;
    while (pos < len) {
      const c = s.charCodeAt(pos);
      if (isDigit(c) || c === 46) break;
      pos++;
    }
    let unitUs: bigint | undefined;
    if (unitStart === pos) {
      // Plain number: seconds, only as the whole text.
      if (numStart !== 0 || pos !== len) return undefined;
      unitUs = DURATION_UNITS.s;
    } else {
      const unit = s.slice(unitStart, pos);
      unitUs = Object.hasOwn(DURATION_UNITS, unit) ? DURATION_UNITS[unit] : undefined;
      if (unitUs === undefined) return undefined;
    }
    const u = Number(unitUs);
    if (u >= lastUnit) return undefined; // repeated unit or wrong order
    lastUnit = u;
    total += (intDigits.length > 0 ? BigInt(intDigits) : 0n) * unitUs;
    if (fracDigits.length > 0) {
      const scale = 10n ** BigInt(fracDigits.length);
      const num = BigInt(fracDigits) * unitUs;
      if (num % scale !== 0n) return undefined; // not a whole number of µs
      total += num / scale;
    }
  }
  if (total > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return Number(total);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
