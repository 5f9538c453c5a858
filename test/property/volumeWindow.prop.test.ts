/**
 * Exact traded volume (rule 8, docs/methodology.md section 7): the volume window keeps each
 * bucket's exact sum as a float64 integer mantissa while it is a safe integer and as a BigInt
 * beyond. Whatever the sizes (few or many digits, exponents, sums past 2^53), the exact sums and
 * the snapshot equal those of a plain BigInt sum, also after a snapshot round trip.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimalToScaled, VolumeWindow } from '../../src/core/volumeWindow.js';

const S = 1_000_000;
const H = 3600 * S;

/** Exact sum of decimal texts as `${mantissa}e${exponent}` in lowest exponent form, by BigInt alone. */
function referenceSum(texts: string[]): bigint[] {
  let mant = 0n;
  let exp = 0;
  for (const t of texts) {
    const [m, e] = decimalToScaled(t);
    if (m === 0n) continue;
    if (mant === 0n) {
      mant = m;
      exp = e;
    } else if (e >= exp) mant += m * 10n ** BigInt(e - exp);
    else {
      mant = mant * 10n ** BigInt(exp - e) + m;
      exp = e;
    }
  }
  return [mant, BigInt(exp)];
}

/** Value of `${m}e${e}` as [mantissa, exponent] with trailing zeros of the mantissa removed. */
function normal(text: string): string {
  const [m, e] = text.split('e');
  let mant = BigInt(m);
  let exp = Number(e);
  if (mant === 0n) return '0';
  while (mant % 10n === 0n) {
    mant /= 10n;
    exp++;
  }
  return `${mant}e${exp}`;
}

const sizeText = fc.oneof(
  fc.integer({ min: 0, max: 10_000_000 }).map((n) => String(n / 1000)),
  fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 25n }), fc.integer({ min: 0, max: 20 })).map(([m, d]) => {
    const s = m.toString().padStart(d + 1, '0');
    return d === 0 ? s : `${s.slice(0, s.length - d)}.${s.slice(s.length - d)}`;
  }),
  fc.constantFrom('0', '0.0', '1e-8', '2.5E3', '9007199254740991', '9007199254740993', '0.30000000000000004', '+1.5'),
);

describe('VolumeWindow exact sums', () => {
  it('equal a BigInt sum of the same texts, also after a snapshot round trip', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 1, max: 20 * H }), sizeText), { maxLength: 60 }),
        (trades) => {
          const w = new VolumeWindow(24 * H, 4 * H);
          w.ensure(3);
          const sorted = [...trades].sort((a, b) => a[1] - b[1]);
          const R = 24 * H;
          for (const [m, t, text] of sorted) w.add(m, t, Number(text), text);
          const copy = VolumeWindow.fromJSON(JSON.parse(JSON.stringify(w.toJSON())));
          expect(JSON.stringify(copy.toJSON())).toBe(JSON.stringify(w.toJSON()));
          for (let m = 0; m < 3; m++) {
            const inWindow = sorted.filter(([mm, t]) => mm === m && t > R - 24 * H && t <= R).map(([, , text]) => text);
            const [mant, exp] = referenceSum(inWindow);
            const want = normal(`${mant}e${exp}`);
            expect(normal(w.exactSum(m, R))).toBe(want);
            expect(normal(copy.exactSum(m, R))).toBe(want);
          }
        },
      ),
      { seed: 20261123, numRuns: 400 },
    );
  });

  it('stay exact when one bucket sums past 2^53 (float64 mantissa to BigInt)', () => {
    const big = fc.oneof(
      fc.constantFrom('999999999999999', '99999999999.9999', '0.999999999999999', '4503599627370496', '1'),
      fc.bigInt({ min: 10n ** 13n, max: 10n ** 15n - 1n }).map((m) => `${m / 1000n}.${(m % 1000n).toString().padStart(3, '0')}`),
    );
    fc.assert(
      fc.property(fc.array(big, { minLength: 2, maxLength: 40 }), (texts) => {
        const w = new VolumeWindow(24 * H, 4 * H);
        w.ensure(1);
        const R = 24 * H;
        texts.forEach((text, i) => {
          w.add(0, R - i * S, Number(text), text);
        });
        const [mant, exp] = referenceSum(texts);
        expect(normal(w.exactSum(0, R))).toBe(normal(`${mant}e${exp}`));
        expect(normal(VolumeWindow.fromJSON(JSON.parse(JSON.stringify(w.toJSON()))).exactSum(0, R))).toBe(normal(`${mant}e${exp}`));
      }),
      { seed: 20261123, numRuns: 300 },
    );
  });
});
