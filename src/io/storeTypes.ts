/**
 * The shapes a replay database's store hands out (its row writers, its stored positions, the
 * counts of a partition merge), declared apart from the modules that make them over
 * better-sqlite3: the published declarations of `xrate/replay` name these, so a consumer
 * type-checks them without better-sqlite3's types (a development dependency of xrate).
 *
 * @module
 */
import type { EngineSnapshot, OwnMetricBatch, PairRateChange } from '../core/engine.js';
import type { MetricDefinitionEvent, MetricEvent, SeriesKey } from '../core/metrics/events.js';
import type { MetricsSource } from '../core/metrics/source.js';
import type { OhlcBucket } from '../core/ohlc.js';
import type { PositionBook } from '../core/positions/book.js';
import type { ConnectivityEvent, PositionEvent } from '../core/positions/events.js';
import type { TimeUs } from '../core/types.js';

/**
 * The stored metrics a replay database reads back (`ReplayStore.metrics()`, made by metricStore.ts),
 * with the reads of a chart's summary: the value of a series in force at given times.
 */
export interface StoredMetrics extends MetricsSource {
  /** The decimal value of series `key` in force at each of `times` (µs): its latest point at or before the time, null when none. */
  valuesAt(key: SeriesKey, times: readonly TimeUs[]): (number | null)[];
  /** Whether series `key` has a point at or before `at` (default: any). */
  hasSeries(key: SeriesKey, at?: TimeUs): boolean;
}

/** Writers of metric rows (call inside the batch's transaction). */
export interface MetricRowWriters {
  point(e: MetricEvent, seq: number, batch: number): void;
  /** The points of one tick of xrate's own metrics, the rows `point` writes for each `b.event(i)`, seq `seq + i`. */
  ownPoints(b: OwnMetricBatch, seq: number, batch: number): void;
  definition(e: MetricDefinitionEvent, seq: number, batch: number): void;
}

/** Writers of position rows (call inside the batch's transaction). */
export interface PositionRowWriters {
  position(e: PositionEvent, assets: { base: string; quote: string } | undefined, seq: number, batch: number): void;
  connectivity(e: ConnectivityEvent, seq: number, batch: number): void;
}

/** The writers of a replay's output rows (call inside the batch's transaction). */
export interface RowWriters extends MetricRowWriters, PositionRowWriters {
  rate(c: PairRateChange, batch: number): void;
  bucket(base: string, quote: string, periodId: string, b: OhlcBucket, batch: number): void;
  /** A change of a tracked pair's OHLC series: `rate` from `tick` on (NaN: none), or its own fresh rate (`follow`). */
  series(base: string, quote: string, tick: number, rate: number, follow: boolean, batch: number): void;
  reject(input: number, source: string, line: number, reason: string, message: string, raw: string, batch: number): void;
}

/** The stored positions and connectivity changes of a replay database, read back as of a time. */
export interface PositionHistory {
  /**
   * The book as of `at` (µs): every stored event with time <= `at` (every one without `at`)
   * applied in log order, the same reducer the engine runs.
   */
  bookAt(at?: TimeUs): PositionBook;
  /** Rows stored (positions and connectivity changes). */
  count(): number;
}

/** A partition's database and its cut (the first: none). */
export interface PartitionOutput {
  path: string;
  from?: number;
}

/** How many rows the merge wrote, by table. */
export interface MergedCounts {
  rateChanges: number;
  buckets: number;
  series: number;
  rejects: number;
  metricRows: number;
  /** Rows of `positions` and `connectivity`. */
  positionRows: number;
}

/** A row of `runs`. */
export interface RunRow {
  id: number;
  started_at: string;
  finished_at: string | null;
  status: string;
  inputs: string;
  config: string;
  options: string;
  events_read: number | null;
  events_accepted: number | null;
  events_rejected: number | null;
  rejects_by_reason: string | null;
  quotes_discarded: number | null;
  ticks: number | null;
  first_tick: number | null;
  last_tick: number | null;
  pairs_with_rate: number | null;
  rate_changes: number | null;
  buckets: number | null;
  duration_ms: number | null;
  resumed: number;
  /** 1 when the replay stopped at its --to before the end of its input. */
  stopped: number;
  /** Process id and host name of the process that ran it (null in databases written before they were kept). */
  pid?: number | null;
  host?: string | null;
}

/** A row of `rates`: the state of one pair from `tick` on. */
export interface RateRow {
  tick: number;
  base: string;
  quote: string;
  rate: number | null;
  time: number | null;
  rank: number | null;
  used: number;
  fresh: number;
  volume: number;
}

/** Where a replay stood when a snapshot was taken, and what it carried besides the engine. */
export interface ReplayCheckpoint {
  /** Index of the input being read. */
  input: number;
  /** Last line (row) of that input consumed. */
  line: number;
  /** Batch counter (rows of later batches are discarded on resume). */
  batch: number;
  /** Whether the replay had reached the end of every input. */
  final: boolean;
  engine: EngineSnapshot;
  /** Driver state: counters, reorder buffer, warm-up flag (opaque to the store). */
  driver: unknown;
}

/**
 * SQLite's page cache, KiB, of a connection that reads or writes each page about once, alongside
 * others: a partitioned replay's (each partition's, and the merge's), SQLite's own default where
 * better-sqlite3 builds it with 16 MB. The partitions run at once, and the memory a cache took
 * stays the process's after its connection closes: at 100 M events with `--workers 2`, the
 * replay's peak fell by about 20 MB, in no more time (one instrumented run each: docs/performance.md).
 */
export const SMALL_PAGE_CACHE_KB = 2000;

/** How ReplayStore.open opens a replay database. */
export interface StoreOpenOptions {
  /** Read only: the database must exist. */
  readonly?: boolean;
  /**
   * A database thrown away when its writer fails (a partition of a partitioned replay): the
   * rollback journal in memory and no syncs, so each page is written once, where the WAL writes
   * it twice; a crash can leave it corrupt, and no other connection may read it while it is
   * written. Its page cache is {@link SMALL_PAGE_CACHE_KB}.
   */
  scratch?: boolean;
  /**
   * The batches' rows written and committed by a thread of their own (writerThread.ts; not with
   * `scratch` or `readonly`), for a replay whose connection reads nothing while it writes.
   */
  writerThread?: boolean;
  /**
   * xrate's own metric points gathered over batches into chunks of about that many points
   * (metricChunks.ts), every chunk written at the latest in the batch of the next snapshot: for an
   * offline replay, where event time runs far ahead of the wall clock (a live run writes its
   * chunks at every batch, so readers see its points at once).
   */
  ownChunkPoints?: number;
  /**
   * SQLite's page cache of the connection (and of the databases it attaches), KiB: by default a
   * `scratch` one's {@link SMALL_PAGE_CACHE_KB}, others better-sqlite3's build default (16 MB).
   */
  pageCacheKb?: number;
}
