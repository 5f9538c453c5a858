/** Shared by the event parser tests: a time in the log's form and in µs, a trade, the reject of a parse, and CSV-style records. */
import { isReject, type Reject, type XrateEvent } from '../../../src/core/types.js';

export const T = '2024-01-01T00:00:00.1234567Z';
export const TUS = 1_704_067_200_123_456;

/** The same record with every value as a CSV reader would give it. */
export function asStrings(r: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) out[k] = v === null || v === undefined ? '' : String(v);
  return out;
}

/** A valid trade, as a log line's object. */
export const trade = {
  type: 'trade',
  time: T,
  symbol_id: 'KRAKEN_SPOT_BTC_USD',
  price: 42000.15,
  size: 0.25,
  taker_side: 'BUY',
};

/** The reject a parse gave (fails the test if it gave an event). */
export function rej(r: XrateEvent | Reject): Reject {
  if (!isReject(r)) throw new Error(`expected a reject, got ${JSON.stringify(r)}`);
  return r;
}
