/** Shared by the event parser tests: a time in the log's form and in µs, and CSV-style records. */

export const T = '2024-01-01T00:00:00.1234567Z';
export const TUS = 1_704_067_200_123_456;

/** The same record with every value as a CSV reader would give it. */
export function asStrings(r: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) out[k] = v === null || v === undefined ? '' : String(v);
  return out;
}
