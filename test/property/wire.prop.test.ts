/**
 * Numbers on output (src/core/wire.ts, docs/methodology.md section 7): for every finite double
 * the written number has at most 15 significant digits, is within 1e-14 of the computed one,
 * rounds to itself and is written as its shortest text; a decimal of at most 15 significant
 * digits, or such a decimal a few units in the last place off (float noise), is written as that
 * decimal in JavaScript's (and JSON's) number syntax.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { wireNumber, wireText } from '../../src/core/wire.js';

const RUNS = { seed: 42, numRuns: 3000 };

/** Significant digits of a number's text (leading and trailing zeros not counted). */
function significantDigits(text: string): number {
  const mantissa = text.replace(/^-/, '').split('e')[0].replace('.', '');
  return mantissa.replace(/^0+/, '').replace(/0+$/, '').length;
}

/** A decimal 0.D x 10^n: D 1 to 15 digits, neither leading nor trailing zero; n keeps it a normal double. */
const decimalArb = fc.record({
  negative: fc.boolean(),
  digits: fc
    .tuple(
      fc.integer({ min: 1, max: 9 }),
      fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 13 }),
      fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
    )
    .map(([first, middle, last]) => `${first}${middle.join('')}${last ?? ''}`.replace(/0+$/, '')),
  n: fc.oneof(fc.integer({ min: -290, max: 300 }), fc.integer({ min: -8, max: 23 })),
});

/** The decimal's value as text. */
function decimalText(d: { negative: boolean; digits: string; n: number }): string {
  return `${d.negative ? '-' : ''}0.${d.digits}e${d.n}`;
}

/**
 * The decimal written as ECMAScript's Number::toString writes its double (JSON.stringify too),
 * from the digits and the point's place alone: plain from 1e-6 to below 1e21, else d.ddde±x.
 */
function shortestForm(d: { negative: boolean; digits: string; n: number }): string {
  const { digits: D, n } = d;
  const k = D.length;
  let body: string;
  if (k <= n && n <= 21) body = D + '0'.repeat(n - k);
  else if (0 < n && n <= 21) body = `${D.slice(0, n)}.${D.slice(n)}`;
  else if (-6 < n && n <= 0) body = `0.${'0'.repeat(-n)}${D}`;
  else {
    const e = n - 1;
    body = `${k === 1 ? D : `${D[0]}.${D.slice(1)}`}e${e < 0 ? '-' : '+'}${Math.abs(e)}`;
  }
  return (d.negative ? '-' : '') + body;
}

/** `x` moved by `k` units in the last place (away from zero for k > 0). */
function ulpsAway(x: number, k: number): number {
  const f = new Float64Array([x]);
  const bits = new BigInt64Array(f.buffer);
  bits[0] += BigInt(k);
  return f[0];
}

describe('wireNumber and wireText (property)', () => {
  it('for any finite double: at most 15 significant digits, within 1e-14, idempotent, written as its shortest text', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const y = wireNumber(x);
        expect(Number.isFinite(y)).toBe(true);
        expect(significantDigits(String(y))).toBeLessThanOrEqual(15);
        expect(Math.abs(y - x)).toBeLessThanOrEqual(Math.abs(x) * 1e-14);
        expect(wireNumber(y)).toBe(y);
        expect(wireText(x)).toBe(String(y));
        expect(wireText(x)).toBe(JSON.stringify(y));
        expect(wireText(y)).toBe(wireText(x));
      }),
      RUNS,
    );
  });

  it('a decimal of at most 15 significant digits is written as itself, in shortest form', () => {
    fc.assert(
      fc.property(decimalArb, (d) => {
        const x = Number(decimalText(d));
        const want = shortestForm(d);
        expect(wireNumber(x)).toBe(x);
        expect(String(wireNumber(x))).toBe(want);
        expect(wireText(x)).toBe(want);
      }),
      RUNS,
    );
  });

  it('such a decimal off by float noise (up to 2 units in the last place) is written as the decimal', () => {
    fc.assert(
      fc.property(decimalArb, fc.integer({ min: -2, max: 2 }), (d, k) => {
        const exact = Number(decimalText(d));
        const x = ulpsAway(exact, k);
        expect(wireNumber(x)).toBe(exact);
        expect(wireText(x)).toBe(shortestForm(d));
      }),
      RUNS,
    );
  });
});
