/**
 * What the rate service asks of its data: the {@link RateProvider} interface and the wire objects
 * of its answers (the market-data interface's shapes).
 *
 * @module
 */
import type { SymbolFilter, SymbolRecord } from '../core/engine.js';
import { toTimeseriesItem, type OhlcBucket } from '../core/ohlc.js';
import type { PeriodRecord } from '../core/periods.js';
import type { RateExplanation } from '../core/provenance.js';
import { formatTime } from '../core/time.js';
import type { CachedRate, ExchangeRate, RateSource } from '../replay/rateSources.js';
import type { RunInfo } from '../replay/database.js';

export type { CachedRate, ExchangeRate, RateSource, RunInfo };

/** One entry of {@link ExchangeRates}. */
export interface ExchangeRatesRate {
  time: string;
  asset_id_quote: string;
  rate: number;
}

/** The interface's all-rates object. */
export interface ExchangeRates {
  asset_id_base: string;
  rates: ExchangeRatesRate[];
}

/** The interface's ExchangeRatesTimeseriesItem. */
export interface TimeseriesItem {
  time_period_start: string;
  time_period_end: string;
  time_open: string | null;
  time_close: string | null;
  rate_open: number | null;
  rate_high: number | null;
  rate_low: number | null;
  rate_close: number | null;
}

/** Options of {@link RateProvider.rates}. */
export interface RatesQuery {
  /** µs; undefined = current. */
  at?: number;
  /** Only these quote assets. */
  filter?: readonly string[];
  /** 1 / rate for each quote asset. */
  invert?: boolean;
}

/** Options of {@link RateProvider.history}. */
export interface HistoryQuery {
  period: PeriodRecord;
  /** µs, inclusive: buckets whose start lies in [from, to). */
  from: number;
  /** µs, exclusive; undefined = through the end of the data. */
  to?: number;
  /** At most this many items (1..100000). */
  limit: number;
}

/** What a provider serves, for the start-up banner and `/v1/...` consumers. */
export interface ProviderInfo {
  mode: 'database' | 'replay' | 'follow' | 'replica';
  /** Database path. */
  source: string;
  firstTick: number | undefined;
  lastTick: number | undefined;
  pairs: number;
}

/**
 * The rate service's data source. Methods throw a {@link noDataError} (answered as 550) when the requested item
 * has no data, and return plain wire objects otherwise.
 */
export interface RateProvider {
  info(): ProviderInfo;
  /** rate(base, quote) as of the last tick at or before `at` (µs), or the current rate. */
  rate(base: string, quote: string, at?: number): CachedRate;
  /** Every rate of `base` (sorted by quote asset), as of `q.at` or now. */
  rates(base: string, q: RatesQuery): ExchangeRates;
  /** OHLC timeseries of rate(base, quote). */
  history(base: string, quote: string, q: HistoryQuery): TimeseriesItem[] | Promise<TimeseriesItem[]>;
  /**
   * The buckets of {@link history}, inverted as its items are ({@link timeseriesItem} of each is
   * the item), read as they are consumed: the service takes them a slice at a time, with a turn
   * of the event loop in between. Checks and their 550s happen at the call.
   */
  historyBuckets?(base: string, quote: string, q: HistoryQuery): Iterator<OhlcBucket>;
  /** Provenance of rate(base, quote) (current, or at `at` when the provider keeps that state). */
  explain(base: string, quote: string, at?: number): RateExplanation | Promise<RateExplanation>;
  /**
   * The symbol records passing `filter` as of the last tick at or before `at` (or the last tick):
   * the engine's (docs/methodology.md section 10); a 550 for a time whose records the provider
   * cannot know exactly.
   */
  symbols(at: number | undefined, filter: SymbolFilter): SymbolRecord[];
  /** Releases the database (and stops a live feed). */
  close(): void | Promise<void>;
}

/** The wire item of a bucket (times with 7 fractional digits, rates as written: core/ohlc.ts). */
export function timeseriesItem(b: OhlcBucket): TimeseriesItem {
  return toTimeseriesItem(b, formatTime);
}

/** Buckets of rate(quote, base) from those of rate(base, quote): 1/x is decreasing, so high and low swap. */
export function invertBucket(b: OhlcBucket): OhlcBucket {
  return { ...b, open: 1 / b.open, high: 1 / b.low, low: 1 / b.high, close: 1 / b.close };
}
