/**
 * The resolution of a chart (docs/service.md, "Chart"): one point per tick when the range holds
 * at most {@link CHART_MAX_TICKS} whole-second ticks, else the shortest exchange-rate period whose
 * buckets over the range are no more than the points the client can draw and that can be served.
 * The route, `xrate plot` and the docs agree through {@link chartResolution}.
 *
 * A period P is counted as ceil((to - from) / P) buckets: at least the number of P-buckets whose
 * start lies in [from, to) (the buckets a chart draws, as the history route answers them), and
 * growing with the range's length, so a longer range never gets a shorter period.
 *
 * @module
 */
import { XrateError } from '../core/errors.js';
import { EXCHANGE_RATE_PERIODS, type PeriodRecord } from '../core/periods.js';
import { ceilSecond, floorSecond, US_PER_SECOND } from '../core/time.js';

/** Most whole-second ticks a chart draws one by one (two hours of ticks); a longer range is drawn by period. */
export const CHART_MAX_TICKS = 7200;

/** Points a client may ask for: at least, at most, and by default. */
export const CHART_POINTS: Readonly<{ min: number; max: number; default: number }> = Object.freeze({ min: 50, max: 5000, default: 2000 });

/** A chart's resolution: one point per tick, or one per bucket of a period. */
export type ChartResolution =
  | { kind: 'tick'; id: 'tick'; points: number }
  | { kind: 'period'; id: string; period: PeriodRecord; points: number };

/** The whole-second ticks in [from, to] (µs). */
export function ticksIn(from: number, to: number): number {
  const first = ceilSecond(from);
  const last = floorSecond(to);
  return last >= first ? (last - first) / US_PER_SECOND + 1 : 0;
}

/** The buckets of `period` a chart of [from, to] counts (see the module description). */
export function bucketsIn(from: number, to: number, period: PeriodRecord): number {
  return Math.ceil((to - from) / (period.length_seconds * US_PER_SECOND));
}

/**
 * Checks the number of points a client asks for.
 *
 * @param field - the parameter or flag named in the error (`points`, `--width`)
 * @throws {@link XrateError} `usage` naming `field` when it is not an integer in {@link CHART_POINTS}
 */
export function checkPoints(points: number, field = 'points'): number {
  if (!Number.isInteger(points) || points < CHART_POINTS.min || points > CHART_POINTS.max) {
    throw new XrateError('usage', `${field} must be an integer in ${CHART_POINTS.min}..${CHART_POINTS.max}, got ${points}`, { field });
  }
  return points;
}

/**
 * The resolution of a chart of [from, to] (µs) drawn on `points` points: `tick` when the range
 * holds at most {@link CHART_MAX_TICKS} ticks, else the shortest exchange-rate period with at most
 * `points` buckets over the range for which `available` holds (what the data can serve: from a
 * replay database, a stored period or one rolled up from it). Undefined when none does.
 *
 * @example
 * ```ts
 * const day = 86_400_000_000;
 * chartResolution(0, day, 2000)?.id; // '1MIN'
 * chartResolution(0, 365 * day, 2000)?.id; // '6HRS'
 * chartResolution(0, 365 * day, 400)?.id; // '1DAY'
 * ```
 */
export function chartResolution(
  from: number,
  to: number,
  points: number,
  available: (p: PeriodRecord) => boolean = () => true,
): ChartResolution | undefined {
  const ticks = ticksIn(from, to);
  if (ticks <= CHART_MAX_TICKS) return { kind: 'tick', id: 'tick', points: ticks };
  for (const p of EXCHANGE_RATE_PERIODS) {
    const n = bucketsIn(from, to, p);
    if (n <= points && available(p)) return { kind: 'period', id: p.period_id, period: p, points: n };
  }
  return undefined;
}
