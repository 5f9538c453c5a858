/**
 * Timeseries periods and bucket arithmetic (docs/methodology.md section 5).
 *
 * Period records are those of the interface's `TimeseriesPeriod` schema, kept in snake_case
 * because `GET /v1/exchangerate/history/periods` returns them as they are. Buckets of
 * second-based periods (1SEC..10DAY) are aligned to the Unix epoch; buckets of month-based
 * periods (1MTH..6MTH, 1YRS..5YRS, metrics only) are aligned to UTC calendar months counted from
 * 1970-01, so a 3MTH bucket starts in January, April, July or October.
 *
 * All arithmetic is on integer microseconds held in a `number` (exact below 2^53 µs, i.e. until
 * year 2255) and is correct for negative (pre-1970) times. Calendar arithmetic uses a proleptic
 * Gregorian day count (no `Date`, no wall clock, no time zone).
 *
 * @module
 */

/** Microseconds per second (local: this module does not depend on `time.ts`). */
const US_PER_SECOND = 1_000_000;
/** Seconds per UTC day. */
const SECONDS_PER_DAY = 86_400;
/** Microseconds per UTC day. */
const US_PER_DAY = SECONDS_PER_DAY * US_PER_SECOND;

/**
 * One timeseries period, field for field the interface's `TimeseriesPeriod`.
 *
 * Why: docs/methodology.md section 5 says period ids and lengths are those of the interface
 * description; the records go on the wire unchanged, hence snake_case.
 * Exactly one of `length_seconds` / `length_months` is non-zero.
 *
 * @example
 * const p: PeriodRecord = {
 *   period_id: '1MIN', length_seconds: 60, length_months: 0,
 *   unit_count: 1, unit_name: 'minute', display_name: '1 Minute',
 * };
 */
export interface PeriodRecord {
  /** Period identifier, e.g. `1SEC`, `30MIN`, `2MTH`. */
  period_id: string;
  /** Length in seconds; 0 for month-based periods. */
  length_seconds: number;
  /** Length in calendar months; 0 for second-based periods. */
  length_months: number;
  /** Number of units, e.g. 30 for `30MIN`. */
  unit_count: number;
  /** Unit name: `second`, `minute`, `hour`, `day`, `month` or `year`. */
  unit_name: string;
  /** Human-readable name, e.g. `30 Minutes`. */
  display_name: string;
}

function makeRecord(count: number, suffix: string, unit: string, unitSeconds: number, unitMonths: number): PeriodRecord {
  const title = unit.charAt(0).toUpperCase() + unit.slice(1);
  return Object.freeze({
    period_id: `${count}${suffix}`,
    length_seconds: count * unitSeconds,
    length_months: count * unitMonths,
    unit_count: count,
    unit_name: unit,
    display_name: `${count} ${title}${count === 1 ? '' : 's'}`,
  });
}

/** OHLC periods stored by default for each tracked pair; any other period rolls up from these or, finer than all of them, is made from the pair's change series. */
export const DEFAULT_STORED_PERIODS: readonly string[] = Object.freeze(['1MIN', '1HRS', '1DAY']);

/**
 * The 33 exchange-rate periods (1SEC..30SEC, 1MIN..30MIN, 1HRS..12HRS, 1DAY..10DAY), in the
 * order and with the values of `GET /v1/exchangerate/history/periods` (specs/periods.json).
 *
 * Why: docs/methodology.md section 5 — exchange-rate timeseries use exactly the interface's period ids
 * and lengths. The array and its records are frozen.
 *
 * @example
 * EXCHANGE_RATE_PERIODS.length;        // 33
 * EXCHANGE_RATE_PERIODS[10].period_id;  // '1MIN'
 */
export const EXCHANGE_RATE_PERIODS: readonly PeriodRecord[] = Object.freeze([
  ...[1, 2, 3, 4, 5, 6, 10, 15, 20, 30].map((n) => makeRecord(n, 'SEC', 'second', 1, 0)),
  ...[1, 2, 3, 4, 5, 6, 10, 15, 20, 30].map((n) => makeRecord(n, 'MIN', 'minute', 60, 0)),
  ...[1, 2, 3, 4, 6, 8, 12].map((n) => makeRecord(n, 'HRS', 'hour', 3600, 0)),
  ...[1, 2, 3, 5, 7, 10].map((n) => makeRecord(n, 'DAY', 'day', SECONDS_PER_DAY, 0)),
]);

/**
 * The calendar periods of the metrics endpoints: months 1MTH, 2MTH, 3MTH, 4MTH, 6MTH and years
 * 1YRS..5YRS (the "Month" and "Year" rows of the interface's period table). `length_seconds`
 * is 0 and `length_months` the number of months (12 per year).
 *
 * Why: docs/methodology.md section 5 — "metrics also month ids such as 1MTH, 2MTH"; month buckets are
 * aligned to calendar months. They are not exchange-rate periods. Frozen.
 *
 * @example
 * MONTH_PERIODS.map((p) => p.period_id);
 * // ['1MTH','2MTH','3MTH','4MTH','6MTH','1YRS','2YRS','3YRS','4YRS','5YRS']
 */
export const MONTH_PERIODS: readonly PeriodRecord[] = Object.freeze([
  ...[1, 2, 3, 4, 6].map((n) => makeRecord(n, 'MTH', 'month', 0, 1)),
  ...[1, 2, 3, 4, 5].map((n) => makeRecord(n, 'YRS', 'year', 0, 12)),
]);

const SECOND_BY_ID: ReadonlyMap<string, PeriodRecord> = new Map(EXCHANGE_RATE_PERIODS.map((p) => [p.period_id, p]));
const MONTH_BY_ID: ReadonlyMap<string, PeriodRecord> = new Map(MONTH_PERIODS.map((p) => [p.period_id, p]));

/**
 * Looks a period up by id, case-insensitively (`1min` finds `1MIN`). Month and year ids are
 * only found when `opts.months` is true (metrics); exchange-rate callers leave it unset so that
 * `1MTH` is an unknown period for them.
 *
 * Why: docs/methodology.md section 5 — the period ids are those of the interface description.
 *
 * @param id - the requested `period_id`; no trimming is done.
 * @param opts - `months: true` also accepts the ids of {@link MONTH_PERIODS}.
 * @returns the frozen record, or `undefined` when the id is unknown.
 * @example
 * getPeriod('1hrs')?.length_seconds;           // 3600
 * getPeriod('2MTH');                           // undefined
 * getPeriod('2MTH', { months: true })?.length_months; // 2
 */
export function getPeriod(id: string, opts?: { months?: boolean }): PeriodRecord | undefined {
  const key = id.toUpperCase();
  const p = SECOND_BY_ID.get(key);
  if (p !== undefined) return p;
  return opts?.months === true ? MONTH_BY_ID.get(key) : undefined;
}

/**
 * The period record of an exchange-rate `period_id` (case-insensitive: one of
 * {@link EXCHANGE_RATE_PERIODS}), or undefined for an unknown id or a month or year period.
 *
 * Why: the exchange-rate history accepts the 33 second-based periods only (docs/methodology.md
 * section 5); the CLI and the service validate `period_id` with this one function.
 *
 * @example
 * ```ts
 * exchangeRatePeriod('5min')?.length_seconds; // 300
 * exchangeRatePeriod('1MTH'); // undefined
 * ```
 */
export function exchangeRatePeriod(id: string): PeriodRecord | undefined {
  const p = getPeriod(id);
  return p && EXCHANGE_RATE_PERIODS.includes(p) ? p : undefined;
}

/**
 * Whether a period is calendar-based (month or year) rather than a fixed number of seconds.
 *
 * Why: docs/methodology.md section 5 — second periods align to the epoch, month periods to calendar
 * months, so callers need to tell them apart.
 *
 * @example
 * isMonthPeriod(getPeriod('1DAY')!);                  // false
 * isMonthPeriod(getPeriod('3MTH', { months: true })!); // true
 */
export function isMonthPeriod(period: PeriodRecord): boolean {
  return period.length_months > 0;
}

function checkPeriod(period: PeriodRecord): void {
  const s = period.length_seconds;
  const m = period.length_months;
  const okS = Number.isSafeInteger(s) && s > 0 && m === 0;
  const okM = Number.isSafeInteger(m) && m > 0 && s === 0;
  if (!okS && !okM) {
    throw new RangeError(`period ${period.period_id}: exactly one of length_seconds / length_months must be a positive integer`);
  }
}

/**
 * Length of a second-based period in microseconds.
 *
 * Why: docs/methodology.md section 5 — buckets of second periods are [k·L, (k+1)·L) µs from the epoch.
 * Month periods have no fixed length and throw.
 *
 * @throws RangeError for a month period or a malformed record.
 * @example
 * periodLengthUs(getPeriod('1MIN')!); // 60_000_000
 */
export function periodLengthUs(period: PeriodRecord): number {
  checkPeriod(period);
  if (period.length_months > 0) {
    throw new RangeError(`period ${period.period_id} is month-based and has no fixed length`);
  }
  return period.length_seconds * US_PER_SECOND;
}

// ---------------------------------------------------------------------------------------------
// Integer helpers (exact for integer inputs below 2^53 in magnitude, any sign).

/** Non-negative remainder of `a` by a positive `b`. */
function modPos(a: number, b: number): number {
  const r = a % b;
  return r < 0 ? r + b : r;
}

/** Floor of `a / b` for a positive `b` (exact: `a - mod` is a multiple of `b`). */
function floorDiv(a: number, b: number): number {
  return (a - modPos(a, b)) / b;
}

/** Days since 1970-01-01 of the proleptic Gregorian date y-m-d (m 1..12). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = floorDiv(yy, 400);
  const yoe = yy - era * 400; // [0, 399]
  const mp = m > 2 ? m - 3 : m + 9; // March = 0
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1; // [0, 365]
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy; // [0, 146096]
  return era * 146_097 + doe - 719_468;
}

/** Months since 1970-01 of the UTC day `days` (days since 1970-01-01). */
function monthIndexOfDay(days: number): number {
  const z = days + 719_468;
  const era = floorDiv(z, 146_097);
  const doe = z - era * 146_097; // [0, 146096]
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365); // [0, 399]
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100)); // [0, 365]
  const mp = Math.floor((5 * doy + 2) / 153); // [0, 11], March = 0
  const m = mp < 10 ? mp + 3 : mp - 9; // [1, 12]
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return (y - 1970) * 12 + (m - 1);
}

/** Microseconds since the epoch of the first instant of month `mi` (months since 1970-01). */
function monthStartUs(mi: number): number {
  const yo = floorDiv(mi, 12);
  return daysFromCivil(1970 + yo, mi - yo * 12 + 1, 1) * US_PER_DAY;
}

/** First month index of the `n`-month block that holds time `timeUs`. */
function alignedMonthIndex(timeUs: number, n: number): number {
  const mi = monthIndexOfDay(floorDiv(timeUs, US_PER_DAY));
  return mi - modPos(mi, n);
}

/**
 * Start (inclusive, µs) of the bucket of `period` that contains `timeUs`.
 *
 * Second periods: the largest multiple of the period length ≤ `timeUs` (floor division, so
 * `-1` µs belongs to the bucket starting at `-L`). Month periods: the first instant (UTC) of
 * the calendar month that starts the `length_months` block holding `timeUs`, blocks counted
 * from 1970-01 (3MTH → Jan/Apr/Jul/Oct, 1YRS → January, 2YRS → even years).
 *
 * Why: docs/methodology.md section 5 — "Buckets are aligned to the Unix epoch (UTC); month buckets to
 * calendar months". A tick exactly at a bucket start belongs to that (new) bucket.
 *
 * @throws RangeError for a malformed period record.
 * @example
 * bucketStart(90_500_000, getPeriod('1MIN')!); // 60_000_000
 * bucketStart(-1, getPeriod('1SEC')!);         // -1_000_000
 * // 2024-05-17 → 2024-04-01T00:00:00Z
 * bucketStart(Date.UTC(2024, 4, 17) * 1000, getPeriod('3MTH', { months: true })!);
 * // === Date.UTC(2024, 3, 1) * 1000
 */
export function bucketStart(timeUs: number, period: PeriodRecord): number {
  checkPeriod(period);
  const n = period.length_months;
  if (n > 0) return monthStartUs(alignedMonthIndex(timeUs, n));
  const len = period.length_seconds * US_PER_SECOND;
  return timeUs - modPos(timeUs, len) + 0; // `+ 0` turns a -0 into 0
}

/**
 * End (exclusive, µs) of the bucket of `period` that contains `timeUs`; it is the start of the
 * next bucket.
 *
 * Why: docs/methodology.md section 5 — buckets are half-open `[start, end)`; `end` is the
 * `time_period_end` of a timeseries item.
 *
 * @throws RangeError for a malformed period record.
 * @example
 * bucketEnd(90_500_000, getPeriod('1MIN')!); // 120_000_000
 * // 2024-02-10 → 2024-03-01T00:00:00Z (leap February)
 * bucketEnd(Date.UTC(2024, 1, 10) * 1000, getPeriod('1MTH', { months: true })!);
 */
export function bucketEnd(timeUs: number, period: PeriodRecord): number {
  checkPeriod(period);
  const n = period.length_months;
  if (n > 0) return monthStartUs(alignedMonthIndex(timeUs, n) + n);
  const len = period.length_seconds * US_PER_SECOND;
  return timeUs - modPos(timeUs, len) + len;
}

/**
 * Start (µs) of the first bucket of `period` that starts at or after `timeUs`: `timeUs` itself on a
 * boundary, else the end of the bucket holding it.
 *
 * Why: docs/methodology.md section 5 — a history from T answers the buckets whose start lies at or
 * after T.
 *
 * @example
 * bucketStartAtOrAfter(60_000_000, getPeriod('1MIN')!); // 60_000_000
 * bucketStartAtOrAfter(61_000_000, getPeriod('1MIN')!); // 120_000_000
 */
export function bucketStartAtOrAfter(timeUs: number, period: PeriodRecord): number {
  return bucketStart(timeUs, period) === timeUs ? timeUs : bucketEnd(timeUs, period);
}

/**
 * Whether every bucket of `fine` nests exactly in one bucket of `coarse`, so that `coarse` can
 * be computed by rolling `fine` up.
 *
 * - second in second: `fine` length divides `coarse` length (both epoch-aligned);
 * - month in month: `fine` months divide `coarse` months (both aligned to 1970-01);
 * - second in month: `fine` length divides 86 400 s (month starts are UTC midnights, and the
 *   gcd of all month-start offsets is exactly one day);
 * - month in second: never.
 *
 * Why: docs/methodology.md section 5 — "Every period must equal the roll-up of the 1SEC series"; this
 * tells which roll-ups are exact.
 *
 * @throws RangeError for a malformed period record.
 * @example
 * isRollupOf(getPeriod('1HRS')!, getPeriod('1MIN')!); // true
 * isRollupOf(getPeriod('1MIN')!, getPeriod('1HRS')!); // false
 * isRollupOf(getPeriod('1MTH', { months: true })!, getPeriod('1DAY')!); // true
 * isRollupOf(getPeriod('1MTH', { months: true })!, getPeriod('2DAY')!); // false
 */
export function isRollupOf(coarse: PeriodRecord, fine: PeriodRecord): boolean {
  checkPeriod(coarse);
  checkPeriod(fine);
  const cm = coarse.length_months;
  const fm = fine.length_months;
  if (cm > 0) {
    return fm > 0 ? cm % fm === 0 : SECONDS_PER_DAY % fine.length_seconds === 0;
  }
  if (fm > 0) return false;
  return coarse.length_seconds % fine.length_seconds === 0;
}
