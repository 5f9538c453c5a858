/**
 * The Parquet event log (`xrate convert`, docs/formats.md "Parquet event logs"): its columns, and
 * the canonical raw text of a quote or trade row.
 *
 * One row per record of the converted inputs, in replay order. Quotes and trades are typed columns
 * (time as TIMESTAMP(µs, UTC), ids dictionary-encoded, decimals as DOUBLE with the exact text
 * listed in `texts` only where it is not `String(value)`, the rule of src/core/batch.ts); every
 * other record is kept whole as JSON in `other`; a record the conversion could not read keeps its
 * reject (`reject_reason`, `reject_message`) and its raw text. The raw text of a row is stored only
 * where it is not one of the canonical renderings ({@link canonicalRaw}): `raw_form` says which.
 *
 * @module
 */
import { formatTime } from '../core/time.js';
import type { QuoteEvent, TradeEvent } from '../core/types.js';

/** The key-value metadata key marking an xrate event log, and its value. */
export const PARQUET_KIND_KEY = 'xrate.kind';
export const PARQUET_EVENTS_KIND = 'events/1';
/** The key-value metadata key listing the converted inputs (a JSON array of paths). */
export const PARQUET_INPUTS_KEY = 'xrate.inputs';

/**
 * The key-value metadata key saying whether the lines ascend through the file (`ascending`: one
 * input, so a replay can resume from a line) or not (`mixed`: several inputs, or merged).
 */
export const PARQUET_LINES_KEY = 'xrate.lines';

/** `raw_form`: the raw text is in the `raw` column. */
export const RAW_STORED = 0;
/** `raw_form`: the canonical NDJSON line, decimals as JSON numbers ({@link canonicalRaw}). */
export const RAW_NUMBERS = 1;
/** `raw_form`: the canonical NDJSON line, decimals as JSON strings. */
export const RAW_STRINGS = 2;
/** `raw_form`: an `other` row whose raw text is its record as JSON (a CSV or SQLite row). */
export const RAW_RECORD = 3;

/** True when `head` (a file's first bytes) starts with the Parquet magic bytes `PAR1`. */
export function isParquetHead(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x50 && head[1] === 0x41 && head[2] === 0x52 && head[3] === 0x31;
}

/** Decimal columns of quote and trade rows, in cell order (quote cells 0-3, trade cells 0-1). */
export const QUOTE_DEC_COLUMNS = ['bid_price', 'bid_size', 'ask_price', 'ask_size'] as const;
export const TRADE_DEC_COLUMNS = ['price', 'size'] as const;

/** A Parquet schema element (the subset of the format's SchemaElement this file uses). */
export interface SchemaElementLike {
  name: string;
  type?: 'INT32' | 'INT64' | 'DOUBLE' | 'BYTE_ARRAY';
  repetition_type?: 'REQUIRED' | 'OPTIONAL';
  converted_type?: 'UTF8' | 'JSON';
  logical_type?: { type: 'TIMESTAMP'; isAdjustedToUTC: boolean; unit: 'MICROS' };
  num_children?: number;
  /** How the writer encodes the column (not part of the schema): default dictionary or PLAIN, snappy. */
  write?: { encoding?: 'DELTA_BINARY_PACKED'; codec?: 'UNCOMPRESSED' };
}

const str = (name: string): SchemaElementLike => ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' });
const dbl = (name: string): SchemaElementLike => ({ name, type: 'DOUBLE', repetition_type: 'OPTIONAL' });

/** Ascending integers (lines, times): their deltas bit-packed, small enough without compression. */
const DELTA = { encoding: 'DELTA_BINARY_PACKED', codec: 'UNCOMPRESSED' } as const;

/** The leaf columns of an event log, in file order. */
export const EVENT_COLUMNS: readonly SchemaElementLike[] = [
  { name: 'line', type: 'INT64', repetition_type: 'REQUIRED', write: DELTA },
  { name: 'input', type: 'INT32', repetition_type: 'REQUIRED' },
  str('type'),
  {
    name: 'time',
    type: 'INT64',
    repetition_type: 'OPTIONAL',
    logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
    write: DELTA,
  },
  str('symbol_id'),
  ...QUOTE_DEC_COLUMNS.map(dbl),
  ...TRADE_DEC_COLUMNS.map(dbl),
  str('taker_side'),
  { name: 'texts', type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type: 'OPTIONAL' },
  { name: 'other', type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type: 'OPTIONAL' },
  str('reject_reason'),
  str('reject_message'),
  { name: 'raw_form', type: 'INT32', repetition_type: 'REQUIRED' },
  str('raw'),
];

/**
 * The canonical NDJSON line of a quote or trade: the fields in the order xrate's logs write them,
 * the time with 7 fractional digits, each decimal its exact text, as a JSON number (`quoted`
 * false) or string. A row whose raw text is this needs no `raw` cell.
 *
 * @example
 * ```ts
 * canonicalRaw(trade, false); // '{"type":"trade","time":"2024-03-01T00:00:00.5657370Z","symbol_id":"X","price":3390.01,"size":0.5,"taker_side":"SELL"}'
 * ```
 */
export function canonicalRaw(e: QuoteEvent | TradeEvent, quoted: boolean): string {
  const d = quoted ? (t: string) => `"${t}"` : (t: string) => t;
  const head = `{"type":"${e.type}","time":"${formatTime(e.time)}","symbol_id":${JSON.stringify(e.symbolId)}`;
  if (e.type === 'quote') {
    return `${head},"bid_price":${d(e.bidPrice.text)},"bid_size":${d(e.bidSize.text)},"ask_price":${d(e.askPrice.text)},"ask_size":${d(e.askSize.text)}}`;
  }
  const side = e.takerSide === undefined ? '' : `,"taker_side":"${e.takerSide}"`;
  return `${head},"price":${d(e.price.text)},"size":${d(e.size.text)}${side}}`;
}
