/**
 * The summary's and progress line's counts (src/cli/progress.ts `fmtInt`) are written as
 * `Math.round(n).toLocaleString('en-US')` writes them, without the locale's number formatting:
 * for whole numbers of every size and sign, fractions that round either way, and the values that
 * are not finite.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fmtInt } from '../../src/cli/progress.js';

const asLocale = (n: number): string => Math.round(n).toLocaleString('en-US');

describe('fmtInt', () => {
  it('writes what toLocaleString("en-US") writes, for any number', () => {
    const numbers = fc.oneof(
      fc.integer(),
      fc.integer({ min: 0, max: 10_000_000 }),
      fc.double({ noNaN: false }),
      fc.bigInt({ min: -(10n ** 22n), max: 10n ** 22n }).map(Number),
      fc.constantFrom(0, -0, 0.5, -0.5, 999.5, 1e21, -1e21, 1e21 - 65536, Number.MAX_SAFE_INTEGER, Infinity, -Infinity, NaN),
    );
    fc.assert(
      fc.property(numbers, (n) => {
        expect(fmtInt(n)).toBe(asLocale(n));
      }),
      { seed: 20261203, numRuns: 5000 },
    );
  });

  it('puts a comma between each group of three digits', () => {
    expect([0, 7, 999, 1000, 12_345, 1_204_331, 500_045].map(fmtInt)).toEqual(['0', '7', '999', '1,000', '12,345', '1,204,331', '500,045']);
  });
});
