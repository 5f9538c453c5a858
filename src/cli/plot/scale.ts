/**
 * Axes of `xrate plot`'s charts: linear scales, "nice" value ticks (1, 2 or 5 times a power of
 * ten) and UTC time ticks (whole seconds, minutes, hours or days).
 *
 * @module
 */

/** A linear map of [d0, d1] onto [r0, r1] (a degenerate domain maps to the middle of the range). */
export function linearScale(d0: number, d1: number, r0: number, r1: number): (v: number) => number {
  if (d1 === d0) return () => (r0 + r1) / 2;
  const k = (r1 - r0) / (d1 - d0);
  return (v) => r0 + (v - d0) * k;
}

/** Value ticks of an axis: the domain widened to whole steps, and each tick. */
export interface NiceTicks {
  /** The step: 1, 2 or 5 times a power of ten. */
  step: number;
  /** Decimals that write every tick exactly at this step. */
  decimals: number;
  /** Ticks, ascending, every one in [lo, hi]. */
  ticks: number[];
  /** The domain widened to whole steps (lo <= min, hi >= max). */
  lo: number;
  hi: number;
}

/**
 * About `count` nice ticks covering [min, max] (min <= max, both finite). A single value gets a
 * domain of one step around it.
 *
 * @example
 * ```ts
 * niceTicks(62310.5, 62388, 5); // { step: 20, ticks: [62300, 62320, ..., 62400], lo: 62300, hi: 62400, decimals: 0 }
 * ```
 */
export function niceTicks(min: number, max: number, count = 6): NiceTicks {
  // A span under a billionth of the values is drawn as that (floats hold about 16 digits).
  const span = Math.max(max - min, Math.max(Math.abs(min), Math.abs(max)) * 1e-9, Number.MIN_VALUE * 1e3);
  const raw = span / Math.max(1, count);
  const pow = 10 ** Math.floor(Math.log10(raw));
  const f = raw / pow;
  const mult = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  const step = mult * pow;
  const decimals = Math.min(100, Math.max(0, -Math.floor(Math.log10(step) + 1e-9)));
  const at = (k: number): number => Number((k * step).toPrecision(12));
  let k0 = Math.floor(min / step);
  let k1 = Math.ceil(max / step);
  if (at(k0) > min) k0--;
  if (at(k1) < max) k1++;
  if (k1 === k0) {
    k0--;
    k1++;
  }
  const ticks: number[] = [];
  for (let k = k0; k <= k1; k++) ticks.push(at(k));
  return { step, decimals, ticks, lo: ticks[0], hi: ticks[ticks.length - 1] };
}

/** Steps of time ticks, seconds. */
const TIME_STEPS = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800, 2592000, 7776000, 15552000,
  31536000,
];

/**
 * Time ticks (unix seconds) inside [t0, t1]: about `count` of them at a whole step of
 * {@link TIME_STEPS}, aligned to UTC, with their labels (`HH:MM:SS`, `HH:MM` or a date).
 *
 * @example
 * ```ts
 * timeTicks(1709265600, 1709269200, 6).labels; // ['04:00', '04:10', ..., '05:00']
 * ```
 */
export function timeTicks(t0: number, t1: number, count = 6): { step: number; ticks: number[]; labels: string[] } {
  const span = Math.max(1, t1 - t0);
  const step = TIME_STEPS.find((s) => span / s <= count) ?? TIME_STEPS[TIME_STEPS.length - 1];
  const ticks: number[] = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) ticks.push(t);
  return { step, ticks, labels: ticks.map((t) => timeLabel(t, step)) };
}

/** A tick's label at `step`: seconds shown only when the step is under a minute, the date from a day on. */
export function timeLabel(t: number, step: number): string {
  const iso = new Date(t * 1000).toISOString();
  if (step >= 86_400) return iso.slice(0, 10);
  if (step >= 60) return iso.slice(11, 16);
  return iso.slice(11, 19);
}
