/**
 * Numbers written to the outside world (docs/methodology.md section 7, "Numbers on output"):
 * every rate and OHLC value that leaves xrate (the service's formats, the CLI, rate files,
 * charts' data, positions' P&L) is the double nearest to its 15-significant-digit rounding, so
 * that it prints as the shortest decimal of at most 15 significant digits: `62319.71`, not
 * `62319.70999999999`. The engine computes and the replay database stores the doubles as they
 * are; only their writers call these functions.
 *
 * @module
 */
import type { LegExplanation, PairExplanation, RateExplanation } from './provenance.js';

/** The largest 15-digit decimal below the largest double (a value rounding above it would overflow). */
const MAX_WIRE = 1.79769313486231e308;

/**
 * Above the smallest normal double (2.2e-308) by more than a 15-digit rounding moves a number:
 * from here up, the rounding is a normal double, whose 15 digits tell it from every other.
 */
const MIN_TRIMMED = 1e-307;

/**
 * The number as xrate writes it: `Number(x.toPrecision(15))`, whose shortest round-trip text
 * (`String`, `JSON.stringify`) has at most 15 significant digits and is within about 5e-15
 * relative of `x` (at most 1e-14). `wireNumber(wireNumber(x)) === wireNumber(x)`. A decimal of at
 * most 15 significant digits comes back as itself. -0 gives 0; NaN and ±Infinity come back as
 * they are (writers write no such number); a finite `x` never becomes infinite.
 *
 * Why: a rate is a float64 computation, and its last binary digits are noise that no decimal
 * input had (`62319.70999999999` for the midpoint of 62319.7 and 62319.72). Fifteen digits are
 * what a double always holds, so nothing else is lost.
 *
 * @example
 * ```ts
 * wireNumber(62319.70999999999); // 62319.71
 * wireNumber(131.00900000000001); // 131.009
 * wireNumber(1 / 3); // 0.333333333333333
 * ```
 */
export function wireNumber(x: number): number {
  const y = Number(x.toPrecision(15));
  if (y === Number.POSITIVE_INFINITY && x !== y) return MAX_WIRE;
  if (y === Number.NEGATIVE_INFINITY && x !== y) return -MAX_WIRE;
  return y;
}

/** {@link wireNumber} of a number that may be null (no rate): null stays null. */
export function wireRate(x: number | null): number | null {
  return x === null ? null : wireNumber(x);
}

/** The end of `s` before `end` without trailing zeros after its decimal point, nor the point itself. */
function trimmedEnd(s: string, end: number): number {
  let n = end;
  while (s.charCodeAt(n - 1) === 48 /* 0 */) n--;
  if (s.charCodeAt(n - 1) === 46 /* . */) n--;
  return n;
}

/**
 * The JSON text of {@link wireNumber}(x): `null` for NaN and ±Infinity (as `JSON.stringify`
 * writes them), else `String(wireNumber(x))`, made from
 * `x.toPrecision(15)` with its trailing zeros cut (no parse and no shortest-digits search), for
 * writers of many numbers (history answers, rate files).
 *
 * Why that is the same text: among normal doubles (from 1e-307 up, so that the rounding is one
 * too) and below 1e15, two decimals of 15 significant digits never round to the same double, so
 * the 15-digit rounding without its trailing zeros is the shortest text of its double; and there
 * `String` writes the plain form down to 1e-6 and the exponent form below, as `toPrecision`
 * does. Elsewhere (the subnormals, 1e15 and above) it is `String(wireNumber(x))`.
 *
 * @example
 * ```ts
 * wireText(62319.70999999999); // "62319.71"
 * wireText(1.2e-7); // "1.2e-7"
 * ```
 */
export function wireText(x: number): string {
  const a = x < 0 ? -x : x;
  if (a >= MIN_TRIMMED && a < 1e15) {
    const s = x.toPrecision(15);
    const e = s.indexOf('e');
    if (e < 0) return s.indexOf('.') < 0 ? s : s.slice(0, trimmedEnd(s, s.length));
    if (s.charCodeAt(e + 1) === 45 /* - */) return s.slice(0, trimmedEnd(s, e)) + s.slice(e);
    // Rounded up to 1e15: String writes it plain.
  }
  return Number.isFinite(x) ? String(wireNumber(x)) : 'null';
}

/** A pair's explanation with its rate as written ({@link wireNumber}). */
function wirePair(p: PairExplanation): PairExplanation {
  return { ...p, rate: wireRate(p.rate) };
}

/** A leg with its rates as written. */
function wireLeg(l: LegExplanation): LegExplanation {
  return { ...l, rate: wireNumber(l.rate), explanation: wirePair(l.explanation) };
}

/**
 * An explanation as written out: its rate, each leg's rate and each leg's pair rate rounded by
 * {@link wireNumber}; the markets' prices, volumes and weights and the outlier statistics are left
 * as computed (they are not rates). A new object; `e` is not changed.
 *
 * @example
 * ```ts
 * wireExplanation(engine.explain('SOL', 'USD')).rate; // 131.009 where the engine has 131.00900000000001
 * ```
 */
export function wireExplanation(e: RateExplanation): RateExplanation {
  return { ...e, rate: wireRate(e.rate), legs: e.legs.map(wireLeg) };
}
