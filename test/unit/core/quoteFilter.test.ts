import { describe, expect, it } from 'vitest';
import { parseDec } from '../../../src/core/decimal.js';
import { spreadAccepted, spreadAcceptedExact, spreadOf } from '../../../src/core/quoteFilter.js';
import type { Dec } from '../../../src/core/types.js';

const d = (t: string): Dec => parseDec(t)!;
/** Rule 5 with the default maxSpread "0.67". */
const ok = (bid: string, ask: string): boolean => spreadAccepted(d(bid), d(ask), '0.67', 0.67);

describe('spreadOf (display only)', () => {
  it('is (ask - bid) / mid', () => {
    // (101 - 99) / ((101 + 99) / 2) = 2 / 100 = 0.02
    expect(spreadOf(99, 101)).toBe(0.02);
    // (267 - 133) / 200 = 134 / 200 = 0.67
    expect(spreadOf(133, 267)).toBe(0.67);
    // crossed: (99 - 101) / 100 = -0.02
    expect(spreadOf(101, 99)).toBe(-0.02);
  });
});

describe('rule 5 spread filter (spreadAccepted)', () => {
  it('keeps spread exactly 0.67 (bid 133, ask 267: 134 / 200 = 0.67)', () => {
    expect(ok('133', '267')).toBe(true);
  });

  it('discards spread 0.6700001 (bid 132.99999, ask 267.00001: 134.00002 / 200)', () => {
    // 2 (a - b) = 268.00004 > 0.67 (a + b) = 0.67 * 400 = 268
    expect(ok('132.99999', '267.00001')).toBe(false);
  });

  it('keeps exactly-0.67 texts whose float spread reads 0.6700000000000002', () => {
    // 9.443 = 0.071 * 133, 18.957 = 0.071 * 267: exact spread (18.957 - 9.443) / 14.2 = 9.514 / 14.2 = 0.67.
    expect(spreadOf(9.443, 18.957)).toBeGreaterThan(0.67); // the naive float test would discard it
    expect(ok('9.443', '18.957')).toBe(true);
    // 12.901 = 0.097 * 133, 25.899 = 0.097 * 267
    expect(spreadOf(12.901, 25.899)).toBeGreaterThan(0.67);
    expect(ok('12.901', '25.899')).toBe(true);
  });

  it('discards texts just above 0.67 whose floats are exactly at 0.67', () => {
    // ask 267.00000000000000001 is the float 267, so floats give exactly 134 / 200 = 0.67;
    // exactly 2 (a - b) = 268.00000000000000002 > 0.67 (a + b) = 268.0000000000000000067.
    expect(Number('267.00000000000000001')).toBe(267);
    expect(ok('133', '267.00000000000000001')).toBe(false);
    // bid 132.99999999999999999 is the float 133: a - b = 134.00000000000000001,
    // 2 (a - b) = 268.00000000000000002 > 0.67 * 399.99999999999999999 = 267.99999999999999999330
    expect(ok('132.99999999999999999', '267')).toBe(false);
    // and just below: ask 266.99999999999999999 gives spread < 0.67, kept
    expect(ok('133', '266.99999999999999999')).toBe(true);
  });

  it('keeps a locked book (spread 0) and discards a crossed one', () => {
    expect(ok('100', '100')).toBe(true);
    // same value, different texts: 100 vs 100.0 is still locked
    expect(ok('100', '100.0')).toBe(true);
    expect(ok('101', '99')).toBe(false); // spread -0.02
    // crossed by less than a float can see: ask < bid exactly, floats equal
    expect(Number('99.999999999999999999')).toBe(100);
    expect(ok('100', '99.999999999999999999')).toBe(false);
  });

  it('keeps ordinary quotes and discards wide ones far from the boundary', () => {
    expect(ok('99', '101')).toBe(true); // 0.02
    expect(ok('50', '150')).toBe(false); // 100 / 100 = 1
  });

  it('honours another maxSpread', () => {
    // 0.02 <= 0.02 kept, 0.0201 not: bid 98.995, ask 101.005 gives 2.01 / 100 = 0.0201
    expect(spreadAccepted(d('99'), d('101'), '0.02', 0.02)).toBe(true);
    expect(spreadAccepted(d('98.995'), d('101.005'), '0.02', 0.02)).toBe(false);
    // maxSpread 0: only locked books
    expect(spreadAccepted(d('100'), d('100'), '0', 0)).toBe(true);
    expect(spreadAccepted(d('100'), d('100.000001'), '0', 0)).toBe(false);
  });
});

describe('spreadAcceptedExact', () => {
  it('decides on decimals', () => {
    expect(spreadAcceptedExact('133', '267', '0.67')).toBe(true);
    expect(spreadAcceptedExact('133', '267.000001', '0.67')).toBe(false);
    expect(spreadAcceptedExact('100', '100', '0.67')).toBe(true);
    expect(spreadAcceptedExact('100.0000001', '100', '0.67')).toBe(false);
  });
});
