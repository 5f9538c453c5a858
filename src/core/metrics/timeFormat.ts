/**
 * `time_format` of the metric history endpoints: times as integer Unix timestamps.
 *
 * METHODOLOGY section 10: "`time_format` (unix_sec, unix_millisec, unix_microsec, unix_nanosec)
 * writes times as integers, floored to the unit". The interface only says "If set, returned values
 * will be in unix timestamp format (valid values: unix_sec, unix_millisec, unix_microsec,
 * unix_nanosec)" (specs/market-data-rest.openapi.json, `time_format` of `/v1/metrics/.../history`),
 * with no type.
 *
 * **Reading.** Seconds, milliseconds and microseconds are JavaScript numbers (exact: a time is at
 * most 2^53 µs). Nanoseconds are a string of decimal digits (`"1704067200123456000"`), always,
 * whatever the value: any time after 1970-04-15 is more than 2^53 ns, which a double cannot hold
 * exactly, and a type that depends on the value would trip clients. The digits form a valid JSON
 * number, so a writer may put them in JSON unquoted to emit an integer.
 *
 * @module
 */

import { US_PER_SECOND } from '../time.js';
import type { TimeUs } from '../types.js';

/**
 * The `time_format` values of the interface.
 *
 * @example
 * ```ts
 * const f: TimeFormat = 'unix_millisec';
 * ```
 */
export type TimeFormat = 'unix_sec' | 'unix_millisec' | 'unix_microsec' | 'unix_nanosec';

const TIME_FORMATS: readonly TimeFormat[] = ['unix_sec', 'unix_millisec', 'unix_microsec', 'unix_nanosec'];

/**
 * The `time_format` named exactly by `text`, or undefined for anything else (other case,
 * surrounding spaces, other names: the caller answers 400).
 *
 * Why: METHODOLOGY section 10 — the four unix formats of `time_format`.
 *
 * @example
 * ```ts
 * parseTimeFormat('unix_sec');   // 'unix_sec'
 * parseTimeFormat('unix');       // undefined
 * ```
 */
export function parseTimeFormat(text: string): TimeFormat | undefined {
  return TIME_FORMATS.find((f) => f === text);
}

/** Floor of `a / b` for integers, exact (the subtraction leaves a multiple of `b`). */
function floorDiv(a: number, b: number): number {
  const r = a % b;
  return (a - (r < 0 ? r + b : r)) / b + 0; // `+ 0` turns a -0 into 0
}

/**
 * A time (integer µs since the epoch) as a Unix timestamp in the unit of `fmt`, floored
 * (towards the past, also before 1970): a number for seconds, milliseconds and microseconds,
 * a string of decimal digits (with `-` before 1970) for nanoseconds.
 *
 * Why: METHODOLOGY section 10 — "writes times as integers, floored to the unit"; nanoseconds
 * beyond 2^53 are not exact in a double, hence the digit string (see the module's Reading).
 *
 * @param us - integer µs since 1970-01-01T00:00:00Z
 * @param fmt - the unit
 * @returns the timestamp
 *
 * @example
 * ```ts
 * formatTimeAs(1704067200123456, 'unix_sec');      // 1704067200
 * formatTimeAs(1704067200123456, 'unix_millisec'); // 1704067200123
 * formatTimeAs(-1, 'unix_sec');                    // -1
 * formatTimeAs(1704067200123456, 'unix_nanosec');  // '1704067200123456000'
 * ```
 */
export function formatTimeAs(us: TimeUs, fmt: TimeFormat): number | string {
  switch (fmt) {
    case 'unix_sec':
      return floorDiv(us, US_PER_SECOND);
    case 'unix_millisec':
      return floorDiv(us, 1000);
    case 'unix_microsec':
      return us + 0;
    case 'unix_nanosec':
      return us === 0 ? '0' : `${us}000`;
  }
}
