import { describe, expect, it } from 'vitest';
import { marketPrice, marketWeight, microprice, midpoint, PASSIVE_WEIGHTINGS, passiveVolume } from '../../../src/core/midpoint.js';

describe('rule 6: price and weight of a market', () => {
  it('midpoint = (bid + ask) / 2', () => {
    expect(midpoint(99, 101)).toBe(100);
    expect(midpoint(133, 267)).toBe(200);
    expect(midpoint(100, 100)).toBe(100); // locked
  });

  it('passive volume q = bid_size + ask_size', () => {
    expect(passiveVolume(1.5, 2)).toBe(3.5);
    expect(passiveVolume(0, 0)).toBe(0);
  });

  it('microprice = (bid * ask_size + ask * bid_size) / (bid_size + ask_size)', () => {
    // (99 * 1 + 101 * 3) / 4 = 402 / 4 = 100.5
    expect(microprice(99, 101, 3, 1)).toBe(100.5);
    // (99 * 3 + 101 * 1) / 4 = 398 / 4 = 99.5
    expect(microprice(99, 101, 1, 3)).toBe(99.5);
    // equal sizes: the midpoint
    expect(microprice(99, 101, 2, 2)).toBe(100);
    // both sizes unknown (0): the plain midpoint
    expect(microprice(99, 101, 0, 0)).toBe(100);
    // one size 0: (99 * 0 + 101 * 2) / 2 = 101 (all size on the bid: the ask)
    expect(microprice(99, 101, 2, 0)).toBe(101);
  });

  it('marketPrice uses the microprice only for the microprice weighting', () => {
    expect(marketPrice('microprice', 99, 101, 3, 1)).toBe(100.5);
    expect(marketPrice('trade_x_passive', 99, 101, 3, 1)).toBe(100);
    expect(marketPrice('trade', 99, 101, 3, 1)).toBe(100);
    expect(marketPrice('passive', 99, 101, 3, 1)).toBe(100);
  });

  it('marketWeight: V*q, V, q, and V for microprice', () => {
    // V = 10, q = 2
    expect(marketWeight('trade_x_passive', 10, 2)).toBe(20);
    expect(marketWeight('trade', 10, 2)).toBe(10);
    expect(marketWeight('passive', 10, 2)).toBe(2);
    expect(marketWeight('microprice', 10, 2)).toBe(10);
  });

  it('only the weightings that use q fall back to V when q = 0', () => {
    expect([...PASSIVE_WEIGHTINGS].sort()).toEqual(['passive', 'trade_x_passive']);
  });
});
