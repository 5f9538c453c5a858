/**
 * xrate: cryptocurrency exchange rates computed per the methodology (docs/methodology.md).
 *
 * The public core API: the engine, the rule modules it composes, parsing and the period table.
 * The replay harness is exported from `xrate/replay`.
 *
 * @module
 */
export const VERSION = '0.1.0';
export * from './core/types.js';
export * from './core/config.js';
export * from './core/time.js';
export * from './core/decimal.js';
export * from './core/symbols.js';
export * from './core/events.js';
export * from './core/quoteFilter.js';
export * from './core/midpoint.js';
export * from './core/staleness.js';
export * from './core/eligibility.js';
export * from './core/ranking.js';
export * from './core/volumeWindow.js';
export * from './core/outliers.js';
export * from './core/pairRate.js';
export * from './core/graph.js';
export * from './core/periods.js';
export * from './core/ohlc.js';
export * from './core/provenance.js';
export * from './core/engine.js';
