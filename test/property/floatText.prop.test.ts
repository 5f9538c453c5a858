/**
 * Floats read as their shortest texts without making the strings: floatTextLong
 * (src/core/engine/tables/markets.ts) answers `String(v).length > 15`, and ExactSums.addFloat(v)
 * (src/core/decimal.ts) sums exactly what add(String(v)) sums, mantissa and exponent alike; for
 * random doubles, decimals of up to 18 significant digits at every scale, and the floats next to
 * them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExactSums } from '../../src/core/decimal.js';
import { FLOAT64_EXACT_CHARS, floatTextLong } from '../../src/core/engine/tables/markets.js';

const decimalArb = fc
  .record({ digits: fc.bigInt({ min: 0n, max: 10n ** 18n }), scale: fc.integer({ min: -4, max: 22 }) })
  .map(({ digits, scale }) => Number(`${digits}e${-scale}`));

/** The float next to v, up or down. */
function nextTo(v: number, up: boolean): number {
  const b = new Float64Array([v]);
  const i = new BigInt64Array(b.buffer);
  i[0] += up ? 1n : -1n;
  return b[0];
}

/** A float from an arbitrary value, or the float next to it (`step`). */
function near(x: number, step: number): number {
  return step === 0 || x === 0 || !Number.isFinite(x) ? x : nextTo(x, step > 0);
}

describe('ExactSums.addFloat', () => {
  it('sums what add(String(v)) sums, to the same mantissa and exponent', () => {
    const sizeArb = fc.oneof(decimalArb, fc.double({ min: 0, max: 1e16, noNaN: true }), fc.constant(0));
    fc.assert(
      fc.property(fc.array(fc.tuple(sizeArb, fc.constantFrom(0, 0, 1, -1)), { minLength: 1, maxLength: 30 }), (xs) => {
        const byFloat = new ExactSums(1);
        const byText = new ExactSums(1);
        for (const [x, step] of xs) {
          const v = near(x, step);
          byFloat.addFloat(0, v);
          byText.add(0, String(v));
          expect([byFloat.mantissa(0), byFloat.exponent(0)]).toEqual([byText.mantissa(0), byText.exponent(0)]);
        }
      }),
      { seed: 8, numRuns: 3000 },
    );
  });
});

describe('floatTextLong', () => {
  it('is String(v).length > 15 for every float', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double({ noNaN: true }), decimalArb), fc.constantFrom(0, 1, -1), (x, step) => {
        const v = near(x, step);
        expect(floatTextLong(v)).toBe(String(v).length > FLOAT64_EXACT_CHARS);
      }),
      { seed: 5, numRuns: 20000 },
    );
  });

  it('at the edges: powers of ten, 15 and 16 characters, the plain-notation bounds', () => {
    const cases = [1e-6, 1e-7, 9.99999999999e12, 1e13, 0.1 + 0.2, 12345678901234.5, 1234567890123.45, 0.0000012345678, 99.99999999999999];
    for (let k = -8; k <= 16; k++) cases.push(10 ** k, nextTo(10 ** k, true), nextTo(10 ** k, false));
    for (const v of cases) expect(floatTextLong(v), String(v)).toBe(String(v).length > FLOAT64_EXACT_CHARS);
  });
});
