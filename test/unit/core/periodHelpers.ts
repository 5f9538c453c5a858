/** Shared by the period and timeseries tests: µs per second, UTC dates in µs, periods by id. */
import { getPeriod, type PeriodRecord } from '../../../src/core/periods.js';

export const US = 1_000_000;

/** The UTC time y-m-d h:mi:s in µs (month 1-12). */
export const utc = (y: number, m: number, d = 1, h = 0, mi = 0, s = 0): number => Date.UTC(y, m - 1, d, h, mi, s) * 1000;

/** The period `id` (month ids included); throws when there is none. */
export const P = (id: string): PeriodRecord => {
  const p = getPeriod(id, { months: true });
  if (!p) throw new Error(`no period ${id}`);
  return p;
};
