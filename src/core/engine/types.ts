/**
 * Public types of the engine (re-exported by the engine module): its outputs, listener, query
 * results, counters and snapshot format.
 *
 * @module
 */
import type { EngineConfig } from '../config.js';
import type { OhlcAggregatorSnapshot, OhlcBucket } from '../ohlc.js';
import type { PeriodRecord } from '../periods.js';
import type { MetricDefinitionEvent, MetricEvent } from '../metrics/events.js';
import type { PositionBookJSON } from '../positions/book.js';
import type { ConnectivityEvent, PositionEvent } from '../positions/events.js';
import type { RejectReason } from '../types.js';
import type { VolumeWindowJSON } from '../volumeWindow.js';
import type { ExchangeTableJSON } from './tables/exchanges.js';
import type { MarketTableJSON } from './tables/markets.js';
import type { PairTableJSON } from './tables/pairs.js';
import type { SymbolRecordsJSON } from './symbolRecords.js';
import type { OwnMetricBatch, OwnMetricsJSON } from './ownMetrics.js';

/** A pair rate that changed at a tick (emitted to {@link EngineListener.onPairRate}). */
export interface PairRateChange {
  /** Tick time, µs. */
  tick: number;
  pair: number;
  base: string;
  quote: string;
  /** New rate, or null when the carried rate expired (maxRateAge). */
  rate: number | null;
  /** Time of the rate (newest quote used), µs, or null. */
  time: number | null;
  rank: number | null;
  /** Markets used at the last computation. */
  used: number;
  /** Sum of V of the markets used (weights the layered cross method). */
  volume: number;
  /** Whether markets contributed at this tick. */
  fresh: boolean;
}

/** A pair whose OHLC buckets the engine keeps (docs/methodology.md section 5). */
export interface TrackedPair {
  readonly id: number;
  readonly base: string;
  readonly quote: string;
  readonly periods: readonly PeriodRecord[];
}

/** Receives the engine's outputs as they happen. All callbacks are optional. */
export interface EngineListener {
  /** After tick T is fully computed. */
  onTick?(tickUs: number): void;
  /** A pair's (rate, time, rank, used) changed at a tick. */
  onPairRate?(change: PairRateChange): void;
  /** An OHLC bucket of a tracked pair closed (or was flushed). */
  onBucket?(track: TrackedPair, period: PeriodRecord, bucket: OhlcBucket): void;
  /**
   * What is fed to a tracked pair's OHLC changed at tick T: from T on, until the next call, it is
   * `rate` (NaN: no fresh rate), or, with `follow`, the pair's own rate whenever it is fresh (what
   * its rate changes, `onPairRate`, say). Every bucket of every period follows from these changes
   * and the pair's rate changes (docs/methodology.md section 5; `resolveSeries`, `bucketsFromSeries`).
   */
  onSeries?(track: TrackedPair, tickUs: number, rate: number, follow: boolean): void;
  /**
   * A `metric` event was accepted (its time is after the last computed tick; the ticks before it
   * are computed). The engine keeps nothing of it: its series are the listener's to store.
   */
  onMetric?(event: MetricEvent): void;
  /** A `metric_definition` event was accepted. */
  onMetricDefinition?(event: MetricDefinitionEvent): void;
  /**
   * A `position` event was accepted (docs/methodology.md section 11); the engine's book holds it
   * already. `base` and `quote` are its symbol's assets as known at that moment (absent: none).
   */
  onPosition?(event: PositionEvent, assets: { base: string; quote: string } | undefined): void;
  /** A `connectivity` event was accepted. */
  onConnectivity?(event: ConnectivityEvent): void;
  /**
   * The data points of xrate's own metrics (ownMetrics.ts) written at a tick, as one batch of
   * columns (reused by the next tick: read it during the call; `batch.event(i)` gives a point as
   * a metric event), after the tick's OHLC and before `onTick`, when any series changed. The
   * engine computes them only for a listener that has this method.
   */
  onOwnMetrics?(batch: OwnMetricBatch): void;
}

/** Result of `Engine.rate`. */
export interface RateResult {
  base: string;
  quote: string;
  rate: number;
  /** µs: the pair's time (direct), the oldest leg's time (cross), or the tick (identity). */
  time: number;
  kind: 'identity' | 'direct' | 'inverse' | 'cross';
  /** Every leg had contributing markets at the last tick. */
  fresh: boolean;
  /** Asset ids along the path. */
  path: string[];
}

/** Counters kept by the engine. */
export interface EngineStats {
  /**
   * Accepted events by type (`metric_definition` counted as `metricDefinition`). `position` and
   * `connectivity` appear from the first such event on (a log without them keeps the version-1
   * counters, and snapshots, byte for byte).
   */
  events: {
    exchange: number;
    symbol: number;
    quote: number;
    trade: number;
    metric: number;
    metricDefinition: number;
    position?: number;
    connectivity?: number;
  };
  rejects: Partial<Record<RejectReason, number>>;
  /** Quotes discarded by rule 5 (the market keeps its previous accepted quote). */
  quotesDiscarded: number;
  ticks: number;
  refreshes: number;
}

/** Options of `Engine.rates`. */
export interface RatesOptions {
  /** Only these quote assets (default: every asset with a rate). */
  filter?: readonly string[];
  /** Return 1 / rate for each quote asset. */
  invert?: boolean;
}

/** Plain-JSON state of an engine (see `Engine.snapshot`); key order and values are part of the stored format. */
export interface EngineSnapshot {
  version: number;
  config: EngineConfig;
  t0: number | null;
  lastRefresh: number;
  nextTick: number | null;
  lastTick: number | null;
  stats: EngineStats;
  assets: string[];
  exchanges: ExchangeTableJSON;
  markets: MarketTableJSON;
  volume: VolumeWindowJSON;
  pairs: PairTableJSON;
  /** `last`, `follow`: the state of the change series (absent in snapshots written before it was kept). */
  tracked: { base: string; quote: string; periods: string[]; ohlc: OhlcAggregatorSnapshot; last?: number | null; follow?: boolean }[];
  autoTrack: string[] | null;
  forceEmit: boolean;
  /** Symbol records (absent in snapshots written before they were kept: restored empty). */
  symbols?: SymbolRecordsJSON;
  /** What xrate's own metrics last wrote (absent in older snapshots: nothing). */
  own?: OwnMetricsJSON;
  /** The position book (absent when it is empty, and in older snapshots: empty). */
  positions?: PositionBookJSON;
}
