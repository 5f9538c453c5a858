/**
 * The columns of the generated logs and the generator's options and row type (see scripts/gen-log.ts).
 *
 * @module
 */

/** Columns of the CSV and SQLite formats, in order. */
export const COLUMNS = [
  'type',
  'time',
  'exchange_id',
  'legitimate',
  'rank',
  'symbol_id',
  'symbol_type',
  'asset_id_base',
  'asset_id_quote',
  'bid_price',
  'bid_size',
  'ask_price',
  'ask_size',
  'price',
  'size',
  'taker_side',
] as const;

/** A column name. */
export type Column = (typeof COLUMNS)[number];

export const C = {
  type: 0,
  time: 1,
  exchange_id: 2,
  legitimate: 3,
  rank: 4,
  symbol_id: 5,
  symbol_type: 6,
  asset_id_base: 7,
  asset_id_quote: 8,
  bid_price: 9,
  bid_size: 10,
  ask_price: 11,
  ask_size: 12,
  price: 13,
  size: 14,
  taker_side: 15,
} as const;

/** Columns whose values are JSON numbers in NDJSON (unless the row has string numbers). */
export const NUMERIC = new Set<number>([C.rank, C.bid_price, C.bid_size, C.ask_price, C.ask_size, C.price, C.size]);

/** Options of {@link generateLog}. */
export interface GenOptions {
  /** PRNG seed (any integer). */
  seed: number;
  /** Number of lines to produce, all included (exchange, symbol, bad and late lines). */
  events: number;
  /** Number of exchanges, 1 to 12 (default 8). */
  exchanges?: number;
  /** Number of assets including USD, USDT and EUR, 4 to 23 (default 12). */
  assets?: number;
  /** Start time, ISO 8601 UTC (default `2024-03-01T00:00:00Z`); whole seconds are used. */
  start?: string;
  /** Mean events per second over all markets (default 20). */
  rate?: number;
  /** Fraction of lines that are malformed or invalid (default 0). */
  badRate?: number;
  /** Fraction of lines that come late, 2 to 60 s before the clock (default 0). */
  lateRate?: number;
  /** Fraction of lines (outside KRAKEN, which always uses strings) with numbers as decimal strings (default 0.05). */
  stringRate?: number;
}

/**
 * One generated line, format-neutral: `cols` in {@link COLUMNS} order (`undefined` = absent), or
 * `broken` text for a line that is not valid JSON.
 */
export interface GenRow {
  cols: (string | undefined)[];
  /** Numbers are written as JSON strings in NDJSON. */
  strNums: boolean;
  /** Raw text of an invalid-JSON line (then `cols` is empty). */
  broken?: string;
}
