/**
 * Numbers on output (src/core/wire.ts): the rounding to 15 significant digits and its text, on
 * the values the demo log gives and on the edge cases (integers, tiny rates, exponents, -0,
 * non-finite numbers, the ends of the double range), and explanations with their rates rounded.
 */
import { describe, expect, it } from 'vitest';
import type { RateExplanation } from '../../../src/core/provenance.js';
import { wireExplanation, wireNumber, wireRate, wireText } from '../../../src/core/wire.js';

describe('wireNumber and wireText', () => {
  it('drop the binary noise of computed rates', () => {
    for (const [x, text] of [
      [62319.70999999999, '62319.71'],
      [62439.619999999995, '62439.62'],
      [62299.755000000005, '62299.755'],
      [131.00900000000001, '131.009'],
      [0.1 + 0.2, '0.3'],
      [11 / 102, '0.107843137254902'],
      [1 / 3, '0.333333333333333'],
    ] as const) {
      expect(wireNumber(x)).toBe(Number(text));
      expect(wireText(x)).toBe(text);
      expect(JSON.stringify(wireNumber(x))).toBe(text);
    }
  });

  it('keep numbers of at most 15 significant digits as they are, integers included', () => {
    for (const x of [0, 1, 2, 100, 62000, 62319.71, 0.00000193065, 123456789012345, 999999999999999, 1e21, 1.5e300, 5e-300]) {
      expect(wireNumber(x)).toBe(x);
      expect(wireText(x)).toBe(String(x));
      expect(wireNumber(-x)).toBe(x === 0 ? 0 : -x);
    }
  });

  it('round larger integers to 15 digits, written plain below 1e21', () => {
    expect(wireText(123456789012345680)).toBe('123456789012346000');
    expect(wireText(999999999999999.9)).toBe('1000000000000000');
    expect(wireText(1.2345678901234568e21)).toBe('1.23456789012346e+21');
  });

  it('keep 15 significant digits of very small rates, in JSON number syntax', () => {
    expect(wireText(1.2345678901234566e-9)).toBe('1.23456789012346e-9');
    expect(wireText(1e-9)).toBe('1e-9');
    expect(wireText(1e-7)).toBe('1e-7');
    expect(wireText(1.0000000000000001e-7)).toBe('1e-7');
    expect(wireText(0.000001)).toBe('0.000001');
    expect(wireText(9.999999999999997e-7)).toBe('0.000001');
    expect(wireText(-2.5e-8)).toBe('-2.5e-8');
    expect(JSON.parse(wireText(1.2345678901234566e-9))).toBe(wireNumber(1.2345678901234566e-9));
  });

  it('write -0 as 0, and NaN and Infinity never as numbers', () => {
    expect(Object.is(wireNumber(-0), 0)).toBe(true);
    expect(wireText(-0)).toBe('0');
    expect(wireNumber(Number.NaN)).toBeNaN();
    expect(wireNumber(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
    for (const x of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) expect(wireText(x)).toBe('null');
    expect(wireRate(null)).toBe(null);
    expect(wireRate(62319.70999999999)).toBe(62319.71);
  });

  it('never turn the largest doubles into Infinity, and keep the subnormals', () => {
    expect(wireNumber(Number.MAX_VALUE)).toBe(1.79769313486231e308);
    expect(wireNumber(-Number.MAX_VALUE)).toBe(-1.79769313486231e308);
    expect(wireText(Number.MAX_VALUE)).toBe('1.79769313486231e+308');
    expect(wireNumber(Number.MIN_VALUE)).toBe(Number.MIN_VALUE);
    expect(wireText(Number.MIN_VALUE)).toBe('5e-324');
    expect(wireText(2.2250738585072014e-308)).toBe('2.2250738585072e-308');
  });
});

describe('wireExplanation', () => {
  const noisy = 131.00900000000001;
  const pair = {
    asset_id_base: 'SOL',
    asset_id_quote: 'USD',
    tick: '2024-03-01T05:54:11.0000000Z',
    rate: noisy,
    time: '2024-03-01T05:54:01.1846200Z',
    fresh: true,
    rank: 2,
    weighting: 'trade_x_passive',
    passive_fallback: false,
    outliers: null,
    used: [{ symbol_id: 'COINBASE_SPOT_SOL_USD', exchange_id: 'COINBASE', rank: 2, price: noisy, volume: 903.5124000000002 }],
    excluded: [],
  };
  const e: RateExplanation = {
    asset_id_base: 'SOL',
    asset_id_quote: 'USD',
    tick: pair.tick,
    kind: 'direct',
    rate: noisy,
    time: pair.time,
    fresh: true,
    method: 'bfs',
    path: ['SOL', 'USD'],
    legs: [
      { pair: 'SOL/USD', from: 'SOL', to: 'USD', inverted: false, rate: noisy, time: pair.time, rank: 2, fresh: true, explanation: pair },
    ],
  };

  it('rounds the rate, each leg rate and each leg pair rate, and leaves prices, volumes and the input alone', () => {
    const w = wireExplanation(e);
    expect(w.rate).toBe(131.009);
    expect(w.legs[0].rate).toBe(131.009);
    expect(w.legs[0].explanation.rate).toBe(131.009);
    expect(w.legs[0].explanation.used[0]).toEqual(pair.used[0]);
    expect(e.rate).toBe(noisy);
    expect(e.legs[0].explanation.rate).toBe(noisy);
    expect(JSON.stringify(w)).not.toContain('"rate":131.00900000000001');
  });

  it('keeps a null rate null', () => {
    const none = wireExplanation({ ...e, kind: 'none', rate: null, legs: [], message: 'no path' });
    expect(none.rate).toBe(null);
    expect(wireExplanation({ ...e, legs: [{ ...e.legs[0], explanation: { ...pair, rate: null } }] }).legs[0].explanation.rate).toBe(null);
  });
});
