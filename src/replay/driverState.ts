/**
 * The driver states the snapshots store, as is: a replay database written before must resume after,
 * so each shape, and the key order of its new-run literal, is part of the stored bytes.
 *
 * - A replay: `{outputOn, eventsRead, rateChanges, buckets, lastEventTime, lastSnapTick, seq,
 *   window, stopped}` (then the ingest's `metricEvents`, `positionEvents`, `venues` as they come).
 * - A replica: `{outputOn, eventsRead, rateChanges, buckets, replica: {stream, seq, inputs,
 *   lastEventTime, lastSnapTick}}`.
 * - A followed log stores `{follow: true, offset, stopped: true}` when it stops (it never resumes).
 *
 * @module
 */
import type { IngestState } from './ingest.js';
import type { ReorderWindow } from './reorder.js';

/** Where a state keeps the driver's clock marks (the state itself, or a part of it). */
export interface DriverMarks {
  /** Latest time of an accepted event, µs. */
  lastEventTime: number | null;
  /** Last tick at which a snapshot was taken, µs. */
  lastSnapTick: number | null;
  /** Whether reading stopped at `to` (a state without `to` never gets it). */
  stopped?: boolean;
}

/** A replay's reorder-window fields. */
export interface WindowState {
  /** Records pushed into the window so far (their order among equal times). */
  seq: number;
  /** The window's contents at the last snapshot. */
  window: ReturnType<ReorderWindow['toJSON']> | null;
}

/** What a replay carries between batches (see the module description). */
export interface ReplayState extends IngestState, DriverMarks, WindowState {
  stopped: boolean;
}

/** A new replay's state (its key order is stored). */
export function newReplayState(): ReplayState {
  return {
    outputOn: false,
    eventsRead: 0,
    rateChanges: 0,
    buckets: 0,
    lastEventTime: null,
    lastSnapTick: null,
    seq: 0,
    window: null,
    stopped: false,
  };
}

/** What a replica carries between batches (see the module description). */
export interface ReplicaState extends IngestState {
  replica: DriverMarks & {
    stream: string;
    /** Last sequence applied. */
    seq: number;
    /** Names of the logs seen, by input index (the `source` of rejects). */
    inputs: string[];
  };
}

/** A new replica's state of `stream` (its key order is stored). */
export function newReplicaState(stream: string): ReplicaState {
  return {
    outputOn: true,
    eventsRead: 0,
    rateChanges: 0,
    buckets: 0,
    replica: { stream, seq: 0, inputs: [], lastEventTime: null, lastSnapTick: null },
  };
}

/** Whether a stored driver state is a replica's. */
export function isReplicaState(d: unknown): d is ReplicaState {
  return typeof d === 'object' && d !== null && typeof (d as ReplicaState).replica?.stream === 'string';
}

/** A followed log's counters (not stored: it never resumes). */
export function newFollowState(): IngestState {
  return { outputOn: true, eventsRead: 0, rateChanges: 0, buckets: 0 };
}

/** What a followed log's snapshot stores: how far it read; `stopped`: the log may go on, so later times are not covered. */
export function followSnapshot(offset: number): { follow: true; offset: number; stopped: true } {
  return { follow: true, offset, stopped: true };
}
