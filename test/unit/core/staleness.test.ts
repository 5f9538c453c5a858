import { describe, expect, it } from 'vitest';
import { isFresh } from '../../../src/core/staleness.js';

const S = 1_000_000;

describe('rule 7: staleness', () => {
  it('age exactly 301 s is fresh, 301.000001 s is stale', () => {
    // quote at 0, tick at 301 s: age 301 s <= 301 s
    expect(isFresh(301 * S, 0, 301 * S)).toBe(true);
    // tick at 301 s + 1 µs: age 301.000001 s > 301 s
    expect(isFresh(301 * S + 1, 0, 301 * S)).toBe(false);
  });

  it('works at real epoch times (integer µs, no float error)', () => {
    const q = Date.UTC(2024, 0, 1) * 1000 + 999_999; // 00:00:00.999999
    expect(isFresh(q + 301 * S, q, 301 * S)).toBe(true);
    expect(isFresh(q + 301 * S + 1, q, 301 * S)).toBe(false);
  });

  it('age 0 is fresh; staleAfter 0 keeps only quotes of the tick itself', () => {
    expect(isFresh(5 * S, 5 * S, 301 * S)).toBe(true);
    expect(isFresh(5 * S, 5 * S, 0)).toBe(true);
    expect(isFresh(5 * S, 5 * S - 1, 0)).toBe(false);
  });
});
