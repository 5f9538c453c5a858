/**
 * Answers from data, below the services: the rate providers over a replay database
 * ({@link DatabaseRateProvider}) or a live engine ({@link LiveRateProvider}), the wire objects they
 * answer with, and the no-data error ({@link noDataError}) the services answer as 550.
 *
 * @module
 */
export { DatabaseRateProvider, type DatabaseProviderOptions } from './databaseProvider.js';
export { LiveRateProvider } from './liveProvider.js';
export type { LiveMode } from './afterLastTick.js';
export { noDataError } from './noData.js';
export {
  timeseriesItem,
  type CachedRate,
  type ExchangeRate,
  type ExchangeRates,
  type ExchangeRatesRate,
  type HistoryQuery,
  type ProviderInfo,
  type RateProvider,
  type RateSource,
  type RatesQuery,
  type RunInfo,
  type TimeseriesItem,
} from './types.js';
export { EngineSource, PairTable } from '../replay/rateSources.js';
