/**
 * The generator's rows as NDJSON lines and CSV rows (see scripts/gen-log.ts).
 *
 * @module
 */
import { C, COLUMNS, NUMERIC, type GenRow } from './columns.js';

/**
 * One row as an NDJSON line (no newline): keys in {@link COLUMNS} order, absent columns left out,
 * numbers as JSON numbers unless `strNums`, `legitimate` as a JSON boolean.
 */
export function rowToNdjson(row: GenRow): string {
  if (row.broken !== undefined) return row.broken;
  const cols = row.cols;
  let s = '{';
  for (let i = 0; i < COLUMNS.length; i++) {
    const v = cols[i];
    if (v === undefined) continue;
    if (s.length > 1) s += ',';
    s += `"${COLUMNS[i]}":`;
    if (i === C.legitimate) s += v === 'true' || v === 'false' ? v : JSON.stringify(v);
    else if (NUMERIC.has(i) && !row.strNums && isJsonNumber(v)) s += v;
    else s += JSON.stringify(v);
  }
  return `${s}}`;
}

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
function isJsonNumber(v: string): boolean {
  return JSON_NUMBER.test(v);
}

function csvField(v: string | undefined): string {
  if (v === undefined) return '';
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** The CSV header row (no newline). */
export const CSV_HEADER = COLUMNS.join(',');

/** One row as a CSV row (no newline); an invalid-JSON row becomes a malformed CSV row. */
export function rowToCsv(row: GenRow): string {
  if (row.broken !== undefined) {
    return `"${row.broken.replace(/"/g, '""')}"!${','.repeat(COLUMNS.length - 1)}`;
  }
  let s = csvField(row.cols[0]);
  for (let i = 1; i < COLUMNS.length; i++) s += `,${csvField(row.cols[i])}`;
  return s;
}
