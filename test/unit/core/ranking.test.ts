import { describe, expect, it } from 'vitest';
import { topRank, usesRank } from '../../../src/core/ranking.js';

describe('rule 9: ranking', () => {
  it('the pair uses the highest rank among its candidates', () => {
    expect(topRank(Float64Array.of(1, 2, 2, 0), 4)).toBe(2);
    expect(topRank(Float64Array.of(-3, -1), 2)).toBe(-1); // negative ranks are ranks too
    expect(topRank([5], 1)).toBe(5);
  });

  it('only the first n candidates count (the scratch holds stale values beyond)', () => {
    expect(topRank(Float64Array.of(1, 9), 1)).toBe(1);
  });

  it('no candidate: no rank', () => {
    expect(topRank(new Float64Array(0), 0)).toBe(-Infinity);
  });

  it('a candidate is used only at the pair rank', () => {
    expect(usesRank(2, 2)).toBe(true);
    expect(usesRank(1, 2)).toBe(false);
    expect(usesRank(3, 2)).toBe(false);
  });
});
