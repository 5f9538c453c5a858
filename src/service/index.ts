/**
 * The rate service (`xrate serve`): the exchange-rate HTTP endpoints of the market-data interface
 * over a replay database or a live engine. See docs/service.md.
 *
 * @module
 */
export { createService, type ServiceOptions } from './server.js';
export {
  DatabaseRateProvider,
  LiveRateProvider,
  PairTable,
  EngineSource,
  type RateProvider,
  type RateSource,
  type ExchangeRate,
  type ExchangeRates,
  type ExchangeRatesRate,
  type TimeseriesItem,
  type CachedRate,
  type RatesQuery,
  type HistoryQuery,
  type ProviderInfo,
  type DatabaseProviderOptions,
} from '../answers/index.js';
export { exchangeRatePeriod } from '../core/periods.js';
export { startReplay, startFollow, type FollowOptions, type Follower, type ReplayServeOptions } from './live.js';
export {
  KeyStore,
  RIGHTS,
  JWT_ALGORITHMS,
  DEFAULT_LIMIT,
  DEFAULT_CONCURRENCY,
  hashKey,
  generateKey,
  parseRights,
  parseJwtKey,
  type ApiKey,
  type Right,
  type KeyListing,
} from '../http/keys.js';
export { Limiter, WINDOW_SECONDS, HEAVY_LIMIT, DEFAULT_HEAVY_CONCURRENCY } from './limits.js';
export { RedisKeyStore } from '../http/redisKeys.js';
export { LIMITS_UNREACHABLE, DEFAULT_REPLICA_TTL_MS } from './redisLimits.js';
export { Authenticator, stripPathKey } from '../http/auth.js';
export {
  negotiate,
  render,
  prefersMsgpack,
  formatTimeCustom,
  csvOptions,
  CONTENT_TYPES,
  type OutputFormat,
  type CsvOptions,
  type PayloadKind,
} from '../http/format/index.js';
export { NO_DATA, NO_DATA_TEXT } from '../http/errors.js';
export { answerSymbols, toV1Symbol, type SymbolSource } from './symbols.js';
export { startService, DEFAULT_DB, type ServeOptions, type RunningService, type ServiceIo } from '../app/serve.js';
