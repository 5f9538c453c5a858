import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { D, refCrossRate, type RefEdge } from '../../../src/reference/index.js';

function e(base: string, quote: string, rate: string | number, rank = 0, nMarkets = 1, time = 0): RefEdge {
  return { base, quote, rate, rank, nMarkets, time };
}

describe('refCrossRate (rule 12)', () => {
  it('identity: rate 1, path [from], no time', () => {
    const r = refCrossRate([], 'BTC', 'BTC')!;
    expect(r.rate.toString()).toBe('1');
    expect(r.path).toEqual(['BTC']);
    expect(r.time).toBeUndefined();
  });

  it('direct edge both ways: r and 1/r', () => {
    const edges = [e('BTC', 'USD', '50000', 0, 3, 10)];
    const fwd = refCrossRate(edges, 'BTC', 'USD')!;
    expect(fwd.rate.toString()).toBe('50000');
    expect(fwd.path).toEqual(['BTC', 'USD']);
    expect(fwd.time).toBe(10);
    const back = refCrossRate(edges, 'USD', 'BTC')!;
    expect(back.rate.toString()).toBe('0.00002');
    expect(back.path).toEqual(['USD', 'BTC']);
  });

  it('inverse pairs: the higher rank wins', () => {
    const edges = [e('BTC', 'USD', '50000', 1, 9), e('USD', 'BTC', '0.00001', 2, 1)];
    expect(refCrossRate(edges, 'BTC', 'USD')!.rate.toString()).toBe('100000');
    expect(refCrossRate(edges, 'USD', 'BTC')!.rate.toString()).toBe('0.00001');
  });

  it('inverse pairs: same rank, more markets wins', () => {
    const edges = [e('BTC', 'USD', '50000', 1, 3), e('USD', 'BTC', '0.00001', 1, 5)];
    expect(refCrossRate(edges, 'BTC', 'USD')!.rate.toString()).toBe('100000');
  });

  it('inverse pairs: full tie, the base that sorts first wins (code-unit order)', () => {
    const edges = [e('USD', 'BTC', '0.00001', 1, 3), e('BTC', 'USD', '50000', 1, 3)];
    expect(refCrossRate(edges, 'BTC', 'USD')!.rate.toString()).toBe('50000');
    // 'B' (0x42) < 'a' (0x61), although localeCompare puts 'a' first
    const mixed = [e('a', 'B', '4', 0, 1), e('B', 'a', '2', 0, 1)];
    expect(refCrossRate(mixed, 'B', 'a')!.rate.toString()).toBe('2');
    expect(refCrossRate(mixed, 'a', 'B')!.rate.toString()).toBe('0.5');
  });

  it('two hops: product of the legs, time = oldest leg', () => {
    const edges = [e('ETH', 'BTC', '0.05', 0, 1, 7), e('BTC', 'USD', '50000', 0, 1, 5)];
    const r = refCrossRate(edges, 'ETH', 'USD')!;
    expect(r.rate.toString()).toBe('2500');
    expect(r.path).toEqual(['ETH', 'BTC', 'USD']);
    expect(r.time).toBe(5);
    const back = refCrossRate(edges, 'USD', 'ETH')!;
    expect(back.rate.toString()).toBe('0.0004');
    expect(back.path).toEqual(['USD', 'BTC', 'ETH']);
  });

  it('mixed directions: one rounding at 200 digits', () => {
    // X -> A = 3, A -> Y = 1/7 (pair Y/A)
    const r = refCrossRate([e('X', 'A', 3), e('Y', 'A', 7)], 'X', 'Y')!;
    expect(r.rate.eq(new D(3).div(7))).toBe(true);
  });

  it('fewest hops wins over rank', () => {
    const edges = [e('X', 'Y', '2', 0), e('X', 'A', '3', 9), e('A', 'Y', '5', 9)];
    const r = refCrossRate(edges, 'X', 'Y')!;
    expect(r.path).toEqual(['X', 'Y']);
    expect(r.rate.toString()).toBe('2');
  });

  it('among shortest paths, the highest lowest-edge rank wins', () => {
    // via A: ranks 5, 1 (min 1); via B: ranks 2, 2 (min 2)
    const edges = [e('X', 'A', '2', 5), e('A', 'Y', '3', 1), e('X', 'B', '5', 2), e('B', 'Y', '7', 2)];
    const r = refCrossRate(edges, 'X', 'Y')!;
    expect(r.path).toEqual(['X', 'B', 'Y']);
    expect(r.rate.toString()).toBe('35');
  });

  it('rank ties go to the lexicographically smallest asset sequence', () => {
    const edges = [e('X', 'B', '5', 1), e('B', 'Y', '7', 3), e('X', 'A', '2', 2), e('A', 'Y', '3', 1)];
    const r = refCrossRate(edges, 'X', 'Y')!;
    expect(r.path).toEqual(['X', 'A', 'Y']);
    expect(r.rate.toString()).toBe('6');
    // code-unit order: 'B' < 'a'
    const cu = [e('X', 'a', '2'), e('a', 'Y', '3'), e('X', 'B', '5'), e('B', 'Y', '7')];
    expect(refCrossRate(cu, 'X', 'Y')!.path).toEqual(['X', 'B', 'Y']);
  });

  it('lexicographic order looks past the first differing hop only when needed', () => {
    // X-A-D-Y and X-A-C-Y and X-B-C-Y, all rank 0: X-A-C-Y
    const edges = [e('X', 'A', 1), e('X', 'B', 1), e('A', 'D', 1), e('A', 'C', 1), e('B', 'C', 1), e('D', 'Y', 2), e('C', 'Y', 3)];
    const r = refCrossRate(edges, 'X', 'Y')!;
    expect(r.path).toEqual(['X', 'A', 'C', 'Y']);
    expect(r.rate.toString()).toBe('3');
  });

  it('the rank of an edge is the rank of the pair chosen for it', () => {
    // X-A: X/A rank 0 and A/X rank 4 -> A/X (rank 4) is used; X-B-Y has min rank 3
    const edges = [e('X', 'A', '2', 0), e('A', 'X', '0.25', 4), e('A', 'Y', '3', 4), e('X', 'B', '5', 3), e('B', 'Y', '7', 3)];
    const r = refCrossRate(edges, 'X', 'Y')!;
    expect(r.path).toEqual(['X', 'A', 'Y']);
    expect(r.rate.toString()).toBe('12'); // (1 / 0.25) * 3
  });

  it('unreachable or unknown assets give undefined', () => {
    const edges = [e('BTC', 'USD', 1), e('ETH', 'EUR', 1)];
    expect(refCrossRate(edges, 'BTC', 'EUR')).toBeUndefined();
    expect(refCrossRate(edges, 'BTC', 'XYZ')).toBeUndefined();
    expect(refCrossRate(edges, 'XYZ', 'BTC')).toBeUndefined();
  });

  it('rejects malformed edges', () => {
    expect(() => refCrossRate([e('A', 'B', 1), e('A', 'B', 2)], 'A', 'B')).toThrow(RangeError);
    expect(() => refCrossRate([e('A', 'B', 0)], 'A', 'B')).toThrow(RangeError);
    expect(() => refCrossRate([e('A', 'A', 1)], 'A', 'B')).toThrow(RangeError);
  });
});

/** Independent check: enumerate every simple path, keep the rule 12 winner. */
function bruteForce(edges: RefEdge[], from: string, to: string): string[] | undefined {
  const pick = new Map<string, RefEdge>();
  for (const x of edges) {
    const k = [x.base, x.quote].sort().join('|');
    const o = pick.get(k);
    const better =
      o === undefined ||
      x.rank > o.rank ||
      (x.rank === o.rank && (x.nMarkets > o.nMarkets || (x.nMarkets === o.nMarkets && x.base < o.base)));
    if (better) pick.set(k, x);
  }
  const rankOf = (a: string, b: string): number | undefined => pick.get([a, b].sort().join('|'))?.rank;
  const assets = [...new Set(edges.flatMap((x) => [x.base, x.quote]))];
  let best: { path: string[]; min: number } | undefined;
  const go = (path: string[], min: number): void => {
    const u = path[path.length - 1];
    if (u === to) {
      const cand = { path: [...path], min };
      if (
        best === undefined ||
        cand.path.length < best.path.length ||
        (cand.path.length === best.path.length &&
          (cand.min > best.min || (cand.min === best.min && cand.path.join('\u0000') < best.path.join('\u0000'))))
      ) {
        best = cand;
      }
      return;
    }
    for (const v of assets) {
      const r = rankOf(u, v);
      if (r === undefined || path.includes(v)) continue;
      path.push(v);
      go(path, Math.min(min, r));
      path.pop();
    }
  };
  go([from], Infinity);
  return best?.path;
}

describe('refCrossRate agrees with an all-simple-paths brute force', () => {
  it('on random small graphs', () => {
    const asset = fc.constantFrom('A', 'B', 'C', 'D', 'E', 'F', 'a', 'b');
    const edge = fc.record({
      base: asset,
      quote: asset,
      rate: fc.integer({ min: 1, max: 1000 }),
      rank: fc.integer({ min: 0, max: 2 }),
      nMarkets: fc.integer({ min: 1, max: 2 }),
      time: fc.integer({ min: 0, max: 100 }),
    });
    const graph = fc.array(edge, { maxLength: 14 }).map((es) => {
      const seen = new Set<string>();
      return es.filter((x) => {
        const k = `${x.base}|${x.quote}`;
        if (x.base === x.quote || seen.has(k)) return false;
        seen.add(k);
        return true;
      });
    });
    fc.assert(
      fc.property(graph, asset, asset, (edges, from, to) => {
        const got = refCrossRate(edges, from, to);
        if (from === to) {
          expect(got!.path).toEqual([from]);
          return;
        }
        const want = bruteForce(edges, from, to);
        expect(got?.path).toEqual(want);
      }),
      { numRuns: 500 },
    );
  });
});
