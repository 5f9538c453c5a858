/**
 * `xrate/replay`: the replay harness and the queries over logs and replay databases.
 * @module
 */
export * from './replay.js';
export * from './query.js';
export * from './reorder.js';
export { ReplayStore, type ReplayCheckpoint, type RunRow, type RateRow } from '../io/store.js';
export { openSource, detectFormat, type EventSource, type SourceRecord, type SourceFormat } from '../io/source.js';
export { RateFileWriter } from '../io/rateFile.js';
