/**
 * The decimal.js reference implementation ("oracle") of methodology rules 5, 6, 11, 1 and 12
 * (docs/methodology.md section 7). Written from the text of the methodology alone, independently of the fast
 * engine, for clarity rather than speed; property tests hold the engine to it within 1e-9
 * relative error. Boundaries (spread, 3 sigma, MAD) are decided exactly. Beside them, the in-memory
 * merge of a partitioned replay's outputs, the reference of the SQL merge of its databases.
 *
 * @module
 */
export { D, type RefNum, toD } from './decimal.js';
export { refSpreadOk } from './spread.js';
export {
  type RefMarket,
  type RefPriceWeight,
  type RefWeighting,
  refMarketPriceWeight,
  refWeightedMean,
} from './weight.js';
export { MAD_SCALE, type RefOutliers, type RefPairOptions, type RefPairResult, refPairRate } from './pairRate.js';
export { type RefCrossResult, type RefEdge, refCrossRate } from './cross.js';
export {
  mergeBuckets,
  mergeOwnMetricPoints,
  mergeRateChanges,
  type PartitionBucket,
  type PartitionChanges,
  type PartitionPoints,
  trimFirstPerSeries,
} from './partitionMerge.js';
