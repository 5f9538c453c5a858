import { describe, expect, it } from 'vitest';
import { isEligible, isRefreshTick } from '../../../src/core/eligibility.js';

const S = 1_000_000;
const H4 = 4 * 3600 * S; // 14,400 s
const DAY0 = Date.UTC(2024, 0, 1) * 1000; // 2024-01-01T00:00Z, a multiple of 4 h (19723 days * 6)

describe('rule 8: refresh ticks', () => {
  it('refreshes at the first tick and at every multiple of 4 h since the epoch', () => {
    const t0 = DAY0 + 5 * S; // first tick 00:00:05
    expect(isRefreshTick(t0, t0, H4)).toBe(true); // T0
    expect(isRefreshTick(t0 + S, t0, H4)).toBe(false); // 00:00:06
    expect(isRefreshTick(DAY0 + H4, t0, H4)).toBe(true); // 04:00:00
    expect(isRefreshTick(DAY0 + H4 - S, t0, H4)).toBe(false); // 03:59:59
    expect(isRefreshTick(DAY0 + H4 + S, t0, H4)).toBe(false); // 04:00:01
    expect(isRefreshTick(DAY0 + 6 * H4, t0, H4)).toBe(true); // next midnight
    expect(DAY0 % H4).toBe(0);
  });
});

describe('rules 3, 4, 8: eligibility', () => {
  it('needs SPOT, a legitimate exchange, known assets and V > 0', () => {
    expect(isEligible(true, true, true, 0.5)).toBe(true);
    expect(isEligible(false, true, true, 0.5)).toBe(false); // not SPOT
    expect(isEligible(true, false, true, 0.5)).toBe(false); // not legitimate
    expect(isEligible(true, true, false, 0.5)).toBe(false); // assets unknown
    expect(isEligible(true, true, true, 0)).toBe(false); // no traded volume
    expect(isEligible(true, true, true, 1e-300)).toBe(true); // any positive volume
  });
});
