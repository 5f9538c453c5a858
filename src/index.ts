/**
 * xrate: cryptocurrency exchange rates computed per the methodology (docs/methodology.md).
 *
 * The public core API: the engine, the rule modules it composes, parsing and the period table.
 * Every name is listed here on purpose; what is not listed is internal and may change. The replay
 * harness is exported from `xrate/replay`, the rate service from `xrate/service`.
 *
 * @module
 */
export { VERSION } from './version.js';

// Events, rejects and their parsing (docs/methodology.md section 1).
export {
  isReject,
  type TimeUs,
  type Dec,
  type SymbolType,
  type SymbolInfo,
  type ExchangeEvent,
  type SymbolEvent,
  type QuoteEvent,
  type TakerSide,
  type TradeEvent,
  type XrateEvent,
  type RejectReason,
  type Reject,
} from './core/types.js';
export { REJECT_REASONS, takerSideOf, parseEvent, parseJsonLine } from './core/events.js';
export { SYMBOL_TYPES, symbolTypeFromText, parseSymbolId } from './core/symbols.js';
export { parseDec, type ExactDecimal } from './core/decimal.js';

// Numbers on output: rates as xrate writes them (docs/methodology.md section 7).
export { wireNumber, wireText, wireExplanation } from './core/wire.js';

// Positions (docs/methodology.md section 11, docs/ems.md).
export {
  ACCOUNT_SEPARATORS,
  splitAccount,
  parsePositionEvent,
  parseConnectivityEvent,
  type Account,
  type PositionSide,
  type PositionEvent,
  type ConnectivityEvent,
} from './core/positions/events.js';
export {
  PositionBook,
  accountMatches,
  isZeroQuantity,
  type AccountPositions,
  type BookPosition,
  type PositionBookJSON,
} from './core/positions/book.js';
export { positionAssets, unrealizedPnl, valuePositions, type ValuedPosition } from './core/positions/pnl.js';
export { US_PER_SECOND, US_PER_MINUTE, US_PER_HOUR, US_PER_DAY, parseTime, formatTime, parseDuration } from './core/time.js';

// Errors: one table of codes, each with its exit code and HTTP status.
export { ERROR_CODES, XrateError, isXrateError, type ErrorCode, type XrateErrorDetails } from './core/errors.js';

// Configuration (docs/methodology.md section 8).
export {
  DEFAULT_CONFIG,
  resolveConfig,
  type Weighting,
  type OutlierMethod,
  type CrossMethod,
  type EngineConfig,
  type ResolvedConfig,
} from './core/config.js';

// The engine.
export {
  Engine,
  createEngine,
  restoreEngine,
  type PairRateChange,
  type TrackedPair,
  type EngineListener,
  type RateResult,
  type EngineStats,
  type RatesOptions,
  type EngineSnapshot,
  type SymbolFilter,
  type SymbolRecord,
} from './core/engine.js';
export type { CrossLeg, CrossResult } from './core/graph.js';
export type {
  MarketProvenance,
  OutlierProvenance,
  PairExplanation,
  LegExplanation,
  RateExplanation,
  NoRateReason,
  NoRateExplanation,
} from './core/provenance.js';

// The rules as pure functions (docs/methodology.md section 3).
export { spreadOf, spreadAccepted } from './core/quoteFilter.js';
export { midpoint, passiveVolume, microprice, marketPrice, marketWeight, PASSIVE_WEIGHTINGS } from './core/midpoint.js';
export { isFresh } from './core/staleness.js';
export { isRefreshTick, isEligible, type ExclusionReason } from './core/eligibility.js';
export { topRank, usesRank } from './core/ranking.js';
export { VolumeWindow, type VolumeWindowJSON } from './core/volumeWindow.js';
export { MAD_SCALE, removeOutliers, type ExactPriceWeight, type OutlierStats } from './core/outliers.js';
export { computePairRate, type PairResult } from './core/pairRate.js';

// Periods and OHLC (docs/methodology.md section 5).
export {
  EXCHANGE_RATE_PERIODS,
  MONTH_PERIODS,
  getPeriod,
  isMonthPeriod,
  periodLengthUs,
  bucketStart,
  bucketEnd,
  bucketStartAtOrAfter,
  isRollupOf,
  type PeriodRecord,
} from './core/periods.js';
export {
  OhlcAggregator,
  rollUp,
  rollUpTicks,
  toTimeseriesItem,
  type OhlcBucket,
  type OhlcAggregatorSnapshot,
  type ExchangeRatesTimeseriesItem,
} from './core/ohlc.js';
export {
  bucketsFromSeries,
  resolveSeries,
  type RateChangePoint,
  type SeriesBucketQuery,
  type SeriesPoint,
  type StoredSeriesPoint,
} from './core/ohlcSeries.js';
