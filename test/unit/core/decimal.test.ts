import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { compareDecText, ExactDecimal, parseDec } from '../../../src/core/decimal.js';

describe('parseDec numbers', () => {
  it.each([
    [1, '1'],
    [0.1, '0.1'],
    [2.5, '2.5'],
    [-3, '-3'],
    [1e-8, '1e-8'],
    [1e21, '1e+21'],
    [123456.789, '123456.789'],
    [0, '0'],
  ])('%s', (v, text) => {
    expect(parseDec(v)).toEqual({ value: v, text });
  });

  it('normalizes -0 to 0 (text "0")', () => {
    const d = parseDec(-0)!;
    expect(Object.is(d.value, 0)).toBe(true);
    expect(d.text).toBe('0');
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])('rejects %s', (v) => {
    expect(parseDec(v)).toBeUndefined();
  });

  it('the text of a number round-trips to the same float', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (v) => {
        const d = parseDec(v)!;
        expect(Number(d.text)).toBe(v === 0 ? 0 : v);
        expect(parseDec(d.text)).toEqual(d);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });
});

describe('parseDec strings', () => {
  it.each([
    ['1', 1, '1'],
    ['1.', 1, '1.'],
    ['.5', 0.5, '.5'],
    ['1.50', 1.5, '1.50'],
    ['0.1000', 0.1, '0.1000'],
    ['-2', -2, '-2'],
    ['+2', 2, '+2'],
    ['1e-8', 1e-8, '1e-8'],
    ['2.5E+3', 2500, '2.5E+3'],
    ['2.5e3', 2500, '2.5e3'],
    ['.5e1', 5, '.5e1'],
    ['  42.0  ', 42, '42.0'],
    ['\t7\n', 7, '7'],
    ['00012', 12, '00012'],
    ['1e-400', 0, '1e-400'], // finite (underflows): accepted, exact text kept
    ['123456789012345678901234567890', 1.2345678901234568e29, '123456789012345678901234567890'],
  ])('%j', (v, value, text) => {
    expect(parseDec(v)).toEqual({ value, text });
  });

  it('"-0" keeps its text and has value 0', () => {
    const d = parseDec('-0')!;
    expect(d.text).toBe('-0');
    expect(Object.is(d.value, 0)).toBe(true);
  });

  it.each([
    '',
    '   ',
    'NaN',
    'nan',
    'Infinity',
    '-Infinity',
    '0x10',
    '0b1',
    '0o7',
    '1_000',
    '1.2.3',
    '.',
    '-',
    '+',
    '-.',
    'e5',
    '.e5',
    '1e',
    '1e+',
    '1e5.5',
    '1 000',
    '1,5',
    '--1',
    '+-1',
    '1e400',
    '-1e400',
    'abc',
    '1a',
    '１',
  ])('rejects %j', (v) => {
    expect(parseDec(v)).toBeUndefined();
  });

  it('accepts surrounding non-ASCII whitespace that String#trim removes', () => {
    expect(parseDec('\u00a01.5\u2003')).toEqual({ value: 1.5, text: '1.5' });
  });

  it.each([[true], [false], [null], [undefined], [{}], [[]], [[1]], [10n], [Symbol('x')], [() => 1]])(
    'rejects non-number non-string %s',
    (v) => {
      expect(parseDec(v)).toBeUndefined();
    },
  );

  it('agrees with decimal.js on what a decimal literal is', () => {
    const lit = fc
      .tuple(
        fc.constantFrom('', '+', '-'),
        fc.stringMatching(/^[0-9]{0,4}$/),
        fc.constantFrom('', '.'),
        fc.stringMatching(/^[0-9]{0,4}$/),
        fc.constantFrom('', 'e', 'E', 'e+', 'e-', 'x'),
        fc.stringMatching(/^[0-9]{0,3}$/),
      )
      .map((p) => p.join(''));
    fc.assert(
      fc.property(lit, (s) => {
        let ok: boolean;
        try {
          new Decimal(s);
          ok = s.length > 0 && Number.isFinite(Number(s));
        } catch {
          ok = false;
        }
        const d = parseDec(s);
        expect(d !== undefined).toBe(ok);
        if (d) expect(d.value).toBe(Number(s) === 0 ? 0 : Number(s));
      }),
      { seed: 42, numRuns: 1000 },
    );
  });

  it('never throws', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        parseDec(v);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });
});

describe('compareDecText', () => {
  it.each([
    ['1', '2', -1],
    ['2', '1', 1],
    ['1', '1', 0],
    ['0.1', '0.10', 0],
    ['0.1', '1e-1', 0],
    ['-0', '0', 0],
    ['.5', '0.5', 0],
    ['1.', '1', 0],
    ['+3', '3', 0],
    ['-1', '1', -1],
    ['-2', '-1', -1],
    ['0.30000000000000001', '0.3', 1],
    ['0.67', '0.670000000000000000000000001', -1],
    ['1e-400', '0', 1],
    ['1e400', '9'.repeat(400), 1],
    ['2.5E+3', '2500', 0],
  ] as const)('%s vs %s', (a, b, r) => {
    expect(compareDecText(a, b)).toBe(r);
  });

  it('is antisymmetric and agrees with float order when floats differ', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.double({ noNaN: true, noDefaultInfinity: true }), (x, y) => {
        const a = parseDec(x)!.text;
        const b = parseDec(y)!.text;
        const c = compareDecText(a, b);
        expect(compareDecText(b, a)).toBe(-c === 0 ? 0 : -c);
        expect(c).toBe(x < y ? -1 : x > y ? 1 : 0);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });
});

describe('ExactDecimal', () => {
  it('is a separate clone with the exact configuration', () => {
    expect(ExactDecimal.precision).toBe(1000);
    expect(ExactDecimal.rounding).toBe(Decimal.ROUND_HALF_EVEN);
    expect(Decimal.precision).toBe(20); // the global default is untouched
  });

  it('sums and multiplies exactly and prints without exponent', () => {
    expect(new ExactDecimal('0.1').plus('0.2').toString()).toBe('0.3');
    expect(new ExactDecimal('1e-30').toString()).toBe(`0.${'0'.repeat(29)}1`);
    expect(new ExactDecimal('1e30').toString()).toBe(`1${'0'.repeat(30)}`);
    const a = new ExactDecimal('123456789.123456789');
    const p = a.times(a).times(a).times(a);
    expect(p.div(a).div(a).div(a).eq(a)).toBe(true);
    // spread of bid 1, ask 2.01 exactly: (ask - bid) / ((ask + bid) / 2) vs 0.67
    const spread = new ExactDecimal('2.01').minus('1').div(new ExactDecimal('2.01').plus('1').div(2));
    expect(spread.cmp('0.67')).toBe(1);
  });
});
