import { describe, expect, it } from 'vitest';
import { refSpreadOk } from '../../../src/reference/index.js';

describe('refSpreadOk (rule 5)', () => {
  it('accepts a spread of exactly 0.67 (inclusive upper bound)', () => {
    // ask + bid = 200, ask - bid = 67 -> spreadPrc = 67 / 100 = 0.67
    expect(refSpreadOk('66.5', '133.5')).toBe(true);
    expect(refSpreadOk(66.5, 133.5)).toBe(true);
  });

  it('rejects a spread of 0.6700001', () => {
    // ask + bid = 200, ask - bid = 67.00001 -> spreadPrc = 0.6700001
    expect(refSpreadOk('66.499995', '133.500005')).toBe(false);
  });

  it('accepts a locked book (bid = ask, spreadPrc = 0)', () => {
    expect(refSpreadOk('100', '100')).toBe(true);
    expect(refSpreadOk('0.00000001', '0.00000001')).toBe(true);
  });

  it('rejects a crossed book (bid > ask)', () => {
    expect(refSpreadOk('100.00000001', '100')).toBe(false);
    expect(refSpreadOk(101, 100)).toBe(false);
  });

  it('accepts an ordinary spread and honours a custom maximum', () => {
    expect(refSpreadOk('99', '101')).toBe(true); // 0.02
    expect(refSpreadOk('99', '101', '0.02')).toBe(true);
    expect(refSpreadOk('99', '101', '0.0199999')).toBe(false);
    expect(refSpreadOk('99', '101', 0)).toBe(false);
    expect(refSpreadOk('100', '100', 0)).toBe(true);
  });

  it('decides on exact decimals, not floats', () => {
    // 0.1 and 0.2 as decimals: mid 0.15, spread 0.1 / 0.15 = 2/3 < 0.67
    expect(refSpreadOk(0.1, 0.2)).toBe(true);
    // ask + bid = 2, ask - bid = 0.67: exactly 0.67; a hair lower bid: just above
    expect(refSpreadOk('0.665', '1.335')).toBe(true);
    expect(refSpreadOk('0.6649999999999999999999', '1.335')).toBe(false);
  });

  it('rejects a quote without a positive mid', () => {
    expect(refSpreadOk('0', '0')).toBe(false);
  });
});
