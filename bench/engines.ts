/**
 * The warm engines of the engine benches (tick/*, apply/*, cross-all/L, tick/L+own-metrics): the
 * bench universe of a size (universe.ts, seed 42) applied up to T0, the first {@link TRACKED}
 * pairs tracked in the stored periods; each timed tick applies a new second of quotes first,
 * outside the timed part.
 *
 * @module
 */
import { createEngine, type Engine, type OwnMetricBatch } from '../src/core/engine.js';
import { Universe, type SizeName } from './universe.js';

export const S = 1_000_000;
/** 2024-03-01T00:00:00Z: a whole second; T0 = START + 1 s. */
export const START = 1_709_251_200 * S;
/** Share of markets that send a new quote in each benchmarked second. */
export const QUOTE_FRACTION = 0.2;
export const TRACKED = 1_000;
const STORED_PERIODS = ['1SEC', '1MIN', '1HRS', '1DAY'];

/** Points received by the warm engines' listeners (kept, so none is optimised away). */
export const received = {
  /** Own-metric data points (engines warmed with `ownMetrics`). */
  ownPoints: 0,
  /** Metric data points of the log (engines warmed with `keepMetrics`). */
  metricPoints: 0,
};

/**
 * A warm engine of `size`: with `ownMetrics`, a listener takes xrate's own metrics (the engine
 * computes them only then); with `keepMetrics`, one takes the log's metric points.
 */
export function warmEngine(size: SizeName, ownMetrics = false, keepMetrics = false): { engine: Engine; u: Universe; tick: number } {
  const u = new Universe(size, 42);
  const engine = createEngine(
    {},
    {
      ...(ownMetrics && {
        onOwnMetrics: (b: OwnMetricBatch) => {
          received.ownPoints += b.length;
        },
      }),
      ...(keepMetrics && { onMetric: () => void received.metricPoints++ }),
    },
  );
  for (const ev of u.warmup(START)) engine.apply(ev);
  engine.advanceTo(START + S);
  const pairs = engine.pairs().slice(0, TRACKED);
  for (const p of pairs) engine.track(p.base, p.quote, STORED_PERIODS);
  return { engine, u, tick: START + S };
}

/** V8's collector (the benches run with --expose-gc): the generators' garbage is collected outside timed parts. */
const gc = (globalThis as { gc?: (o?: { type: string }) => void }).gc;

/** Applies second T's quotes to a warm engine, then collects the generator's garbage (untimed). */
export function applySecond(engine: Engine, u: Universe, T: number): void {
  for (const q of u.secondOfQuotes(T, QUOTE_FRACTION)) engine.apply(q);
  gc?.({ type: 'minor' });
}

/** The timed tick of the tick benches: the tick at T and the cross rates from USD. */
export function tickAt(engine: Engine, T: number): void {
  engine.advanceTo(T);
  engine.ratesFrom('USD');
}
