/**
 * `xrate/replay`: the replay harness, the queries over logs and replay databases, and the readers
 * and writers they use. Every name is listed here on purpose; what is not is internal.
 *
 * @module
 */
export { replay, type ReplayOptions, type ReplayProgress, type ReplaySummary } from './replay.js';
export { DEFAULT_STORED_PERIODS } from '../core/periods.js';
export {
  queryRates,
  queryHistory,
  queryExplain,
  isDatabaseSource,
  HISTORY_MAX_LIMIT,
  type QuerySource,
  type RateAnswer,
} from './query.js';
export {
  ReplayDatabase,
  ReplayDatabaseError,
  type Coverage,
  type DatabaseFailure,
  type NotCovered,
  type ReplayDatabaseOptions,
  type RunInfo,
  type Series,
} from './database.js';
export { PairTable, EngineSource, type RateSource, type CachedRate, type ExchangeRate, type PairRow } from './rateSources.js';
export { ReorderWindow, type Positioned } from './reorder.js';
export { ReplayStore, type ReplayCheckpoint, type RunRow, type RateRow } from '../io/store.js';
export { openSource, detectFormat, type EventSource, type SourceRecord, type SourceFormat } from '../io/source.js';
export { RateFileWriter } from '../io/rateFile.js';
export type { Paths } from '../io/pathList.js';
export {
  replayParallel,
  runPartitionHere,
  runPartitionInWorker,
  type ParallelOptions,
  type ParallelProgress,
  type PartitionJob,
  type PartitionResult,
  type PartitionRunner,
} from './parallel.js';
export { compareReplays, replaysEqual, COMPARED_TABLES, type TableComparison } from '../io/compareReplays.js';
