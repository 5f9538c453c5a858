/**
 * The engine snapshot (docs/methodology.md section 7): the whole state as plain JSON, so that
 * restoring it and continuing gives exactly the outputs of an uninterrupted run. Snapshots are
 * stored gzipped in replay databases: the keys, their order and the values are a stored format.
 *
 * @module
 */
import type { EngineConfig } from '../config.js';
import type { SymbolType } from '../types.js';
import type { EngineState } from './state.js';
import type { Tracking } from './tracking.js';
import type { EngineSnapshot } from './types.js';
import { XrateError } from '../errors.js';

/** Version of the {@link EngineSnapshot} format; restore refuses any other. */
export const SNAPSHOT_VERSION = 1;

/** The state as an {@link EngineSnapshot}. */
export function takeSnapshot(state: EngineState, tracking: Tracking, packed = false): EngineSnapshot {
  const c = state.config;
  const config: EngineConfig = {
    maxSpread: c.maxSpread,
    staleAfterSeconds: c.staleAfterSeconds,
    volumeWindowSeconds: c.volumeWindowSeconds,
    refreshEverySeconds: c.refreshEverySeconds,
    weighting: c.weighting,
    outliers: c.outliers,
    outlierSigmas: c.outlierSigmas,
    outlierMinMarkets: c.outlierMinMarkets,
    maxRateAgeSeconds: c.maxRateAgeSeconds,
    crossMethod: c.crossMethod,
  };
  return {
    version: SNAPSHOT_VERSION,
    config,
    t0: state.t0 ?? null,
    lastRefresh: state.lastRefresh,
    nextTick: state.nextTick ?? null,
    lastTick: state.lastTick ?? null,
    stats: structuredClone(state.stats),
    assets: [...state.assets.names],
    exchanges: state.exchanges.toJSON(),
    markets: state.markets.toJSON(),
    volume: state.markets.window.toJSON(),
    pairs: state.pairs.toJSON(),
    tracked: tracking.toJSON(),
    autoTrack: tracking.autoTrackPeriods ? [...tracking.autoTrackPeriods] : null,
    forceEmit: state.forceEmit,
    symbols: state.symbolRecords.toJSON(state.markets.index.size, state.lastTick ?? state.t0, packed),
    own: state.ownMetrics.toJSON(),
    // Only when there is something: a log without position events keeps its snapshots as they were.
    ...(state.positions.isEmpty ? {} : { positions: state.positions.toJSON() }),
  };
}

/** Throws the XrateError for a snapshot of another version (or not a snapshot). */
export function checkSnapshotVersion(snap: EngineSnapshot): void {
  if (!snap || snap.version !== SNAPSHOT_VERSION) {
    throw new XrateError('input', `unsupported engine snapshot version ${JSON.stringify(snap?.version)} (expected ${SNAPSHOT_VERSION})`);
  }
}

/**
 * Loads a snapshot into the state and tracking of a fresh engine built with the snapshot's
 * config. Tables are rebuilt in id order (assets, exchanges, pairs, then markets), so every id is
 * the one it had; every pair is recomputed at the next tick.
 */
export function restoreSnapshot(state: EngineState, tracking: Tracking, snap: EngineSnapshot): void {
  state.t0 = snap.t0 ?? undefined;
  state.lastRefresh = snap.lastRefresh;
  state.nextTick = snap.nextTick ?? undefined;
  state.lastTick = snap.lastTick ?? undefined;
  // A snapshot from before the metric types has no counts for them: they start at 0.
  const events = { ...state.stats.events, ...snap.stats.events };
  Object.assign(state.stats, structuredClone(snap.stats), { events });
  for (const a of snap.assets) state.assets.intern(a);
  state.exchanges.restore(snap.exchanges);
  const P = snap.pairs;
  for (let pr = 0; pr < P.base.length; pr++) state.pairs.ensure(P.base[pr], P.quote[pr]);
  const M = snap.markets;
  const assets = state.assets.names;
  for (let m = 0; m < M.names.length; m++) {
    const b = M.base[m];
    const q = M.quote[m];
    state.defineMarket(
      M.names[m],
      state.exchanges.index.names[M.exchange[m]],
      M.type[m] as SymbolType,
      b >= 0 ? assets[b] : undefined,
      q >= 0 ? assets[q] : undefined,
    );
  }
  state.pairs.restore(P);
  state.markets.restore(M, snap.volume);
  // Move both counters off their fresh-engine values so the graph rebuilds its topology (its
  // version starts at -1) and caches edge data under a valid (>= 0) tick stamp.
  state.topologyVersion = 1;
  state.tickCounter = 1;
  state.allDirty = true;
  state.graph.sync(state.pairs.view(), state.assets.size, state.topologyVersion);
  tracking.restore(snap.tracked, snap.autoTrack);
  state.forceEmit = snap.forceEmit === true;
  state.symbolRecords.restore(snap.symbols, M.names.length, state.lastTick ?? state.t0);
  state.ownMetrics.restore(snap.own);
  state.positions.restore(snap.positions);
}
