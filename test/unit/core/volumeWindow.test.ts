import { describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { decimalToScaled, VolumeWindow } from '../../../src/core/volumeWindow.js';

const S = 1_000_000;
const H = 3600 * S;
const W = 24 * H; // 24 h window
const C = 4 * H; // 4 h refresh
const DAY0 = Date.UTC(2024, 0, 1) * 1000; // a multiple of 4 h
const R = DAY0 + 24 * H + 4 * H; // refresh 2024-01-02T04:00:00Z

describe('VolumeWindow (rule 8)', () => {
  it('uses gcd(W, C) buckets, enough of them to cover the window plus a bucket either side', () => {
    const w = new VolumeWindow(W, C);
    expect(w.bucketUs).toBe(C); // gcd(24 h, 4 h) = 4 h
    expect(w.ring).toBeGreaterThanOrEqual(24 / 4 + 2);
    const w2 = new VolumeWindow(10 * S, 4 * S);
    expect(w2.bucketUs).toBe(2 * S); // gcd(10 s, 4 s) = 2 s
    expect(w2.ring).toBeGreaterThanOrEqual(10 / 2 + 2);
  });

  it('bucket i holds (i g, (i + 1) g]', () => {
    const w = new VolumeWindow(10 * S, 4 * S); // g = 2 s
    expect(w.bucketOf(0)).toBe(-1);
    expect(w.bucketOf(1)).toBe(0);
    expect(w.bucketOf(2 * S)).toBe(0);
    expect(w.bucketOf(2 * S + 1)).toBe(1);
  });

  it('is exact at both window edges: (R - 24 h, R]', () => {
    const w = new VolumeWindow(W, C);
    w.ensure(1);
    w.add(0, R - W, 1); // exactly 24 h before R: out
    w.add(0, R - W + 1, 2); // 1 µs later: in
    w.add(0, R, 4); // exactly at R: in
    w.add(0, R + 1, 8); // after R: out of V(R)
    // V(R) = 2 + 4 = 6
    expect(w.sum(0, R)).toBe(6);
    // V(R + 4 h): window (R - 20 h, R + 4 h]: R - 24 h + 1 µs is out, R and R + 1 µs in: 4 + 8 = 12
    expect(w.sum(0, R + C)).toBe(12);
    // V(R - 4 h): window (R - 28 h, R - 4 h]: both early trades: 1 + 2 = 3
    expect(w.sum(0, R - C)).toBe(3);
  });

  it('is exact at the edges of an unaligned window (10 s window, 4 s cadence)', () => {
    const w = new VolumeWindow(10 * S, 4 * S);
    w.ensure(1);
    const r = 12 * S; // refresh at 12 s: window (2 s, 12 s]
    w.add(0, 2 * S, 1); // out
    w.add(0, 2 * S + 1, 2); // in
    w.add(0, 7 * S + 500_000, 4); // in
    w.add(0, 12 * S, 8); // in
    expect(w.sum(0, r)).toBe(2 + 4 + 8);
    // at 16 s: (6 s, 16 s]: 4 + 8
    expect(w.sum(0, 16 * S)).toBe(12);
  });

  it('gives V at an unaligned first tick T0 (trades within the last second)', () => {
    const w = new VolumeWindow(W, C);
    w.ensure(1);
    w.add(0, DAY0 + 100_000, 0.25); // 00:00:00.1
    w.add(0, DAY0 + 500_000, 0.5); // 00:00:00.5
    expect(w.sum(0, DAY0 + S)).toBe(0.75); // T0 = 00:00:01
  });

  it('keeps markets apart', () => {
    const w = new VolumeWindow(W, C);
    w.ensure(3);
    w.add(0, R - H, 1);
    w.add(2, R - H, 5);
    expect(w.sum(0, R)).toBe(1);
    expect(w.sum(1, R)).toBe(0);
    expect(w.sum(2, R)).toBe(5);
    expect(w.sum(99, R)).toBe(0); // beyond capacity
  });

  it('forgets old buckets as the ring wraps (a trade 30 days ago is not counted)', () => {
    const w = new VolumeWindow(W, C);
    w.ensure(1);
    w.add(0, DAY0 + H, 7);
    const later = DAY0 + 30 * 24 * H;
    expect(w.sum(0, later)).toBe(0);
    // a trade in the same ring slot one ring later replaces the old bucket's sum
    w.add(0, DAY0 + H + w.ring * C, 3);
    const r = DAY0 + (w.ring + 1) * C; // the refresh right after it
    expect(w.sum(0, r)).toBe(3);
  });

  it('does not grow with trades: capacity is fixed for a fixed number of markets', () => {
    const w = new VolumeWindow(W, C);
    w.ensure(3);
    const size0 = w.toJSON().sums.length;
    expect(size0).toBe(16 * w.ring); // minimum capacity: 16 markets x ring buckets
    for (let i = 0; i < 20_000; i++) {
      const t = DAY0 + i * 600 * S; // one trade every 10 minutes for ~139 days
      w.add(i % 3, t, 1);
    }
    expect(w.toJSON().sums.length).toBe(size0);
    expect(w.toJSON().index.length).toBe(size0);
    // Last trade i = 19,999 at 11,999,400 s; next refresh r = ceil(11,999,400 / 14,400) * 14,400
    // = 834 * 14,400 = 12,009,600 s; window (11,923,200 s, 12,009,600 s] holds i = 19,873..19,999.
    // i = 19,872 (= r - 24 h exactly, and 19,872 % 3 = 0) is out. Market 0 has i % 3 = 0:
    // i = 19,875, 19,878, ..., 19,998 -> (19,998 - 19,875) / 3 + 1 = 42 trades of size 1.
    const r = DAY0 + 12_009_600 * S;
    expect(19_872 * 600 * S).toBe(r - W - DAY0);
    expect(w.sum(0, r)).toBe(42);
  });

  it('grows capacity by doubling when more markets appear, keeping the data', () => {
    const w = new VolumeWindow(W, C);
    w.ensure(1);
    w.add(0, R - H, 2);
    w.ensure(17); // 16 -> 32
    expect(w.toJSON().capacity).toBe(32);
    w.add(16, R - H, 3);
    expect(w.sum(0, R)).toBe(2);
    expect(w.sum(16, R)).toBe(3);
    w.ensure(5); // no shrink, no change
    expect(w.toJSON().capacity).toBe(32);
  });

  it('round-trips through JSON (empty slots are NaN, written as null)', () => {
    const w = new VolumeWindow(W, C);
    w.ensure(2);
    w.add(1, R - H, 1.5);
    w.add(1, R - 5 * H, 2.5);
    const back = VolumeWindow.fromJSON(JSON.parse(JSON.stringify(w.toJSON())));
    expect(back.sum(1, R)).toBe(4);
    expect(back.sum(0, R)).toBe(0);
    back.add(1, R, 1);
    expect(back.sum(1, R)).toBe(5);
  });

  it('keeps exact sums beside the floats (0.1 + 0.2 = 0.3), with the same window edges', () => {
    const w = new VolumeWindow(W, C);
    w.ensure(1);
    w.add(0, R - W, 5, '5'); // exactly 24 h before R: out
    w.add(0, R - 5 * H, 1.5, '1.5'); // mantissa 15, exponent -1
    w.add(0, R - 2 * H, 0.1, '0.1');
    w.add(0, R - 2 * H, 0.2, '0.2'); // this bucket's float sum is 0.30000000000000004
    w.add(0, R - H, 0.25, '0.25'); // a finer exponent in a later bucket: 25e-2
    // exactly 1.5 + 0.1 + 0.2 + 0.25 = 2.05
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(new Decimal(w.exactSum(0, R)).toString()).toBe('2.05');
    expect(w.sum(0, R)).toBe(1.5 + (0.1 + 0.2) + 0.25);
    expect(new Decimal(w.exactSum(5, R)).toString()).toBe('0'); // no trades
    expect(new Decimal(w.exactSum(99, R)).toString()).toBe('0'); // beyond capacity
    const back = VolumeWindow.fromJSON(JSON.parse(JSON.stringify(w.toJSON())));
    expect(new Decimal(back.exactSum(0, R)).toString()).toBe('2.05');
  });

  it('decimalToScaled splits a decimal text into mantissa and exponent', () => {
    expect(decimalToScaled('12.50')).toEqual([1250n, -2]);
    expect(decimalToScaled('1e-8')).toEqual([1n, -8]);
    expect(decimalToScaled('2.5E3')).toEqual([25n, 2]);
    expect(decimalToScaled(' +3 ')).toEqual([3n, 0]);
    expect(decimalToScaled('0')).toEqual([0n, 0]);
  });
});
