import { describe, expect, it } from 'vitest';
import { RateGraph, type PairView } from '../../../src/core/graph.js';

interface P {
  base: string;
  quote: string;
  rate: number;
  rank?: number;
  time?: number;
  used?: number;
  volume?: number;
  fresh?: boolean;
}

/**
 * Builds a graph over hand-made pairs. Assets are interned in `order` (ids follow it, NOT the
 * alphabet, so that tie-breaks by asset id string are really tested).
 */
function build(order: string[], pairs: P[]) {
  const id = (a: string) => {
    const i = order.indexOf(a);
    if (i < 0) throw new Error(a);
    return i;
  };
  const view: PairView = {
    count: pairs.length,
    base: Int32Array.from(pairs, (p) => id(p.base)),
    quote: Int32Array.from(pairs, (p) => id(p.quote)),
    rate: Float64Array.from(pairs, (p) => p.rate),
    time: Float64Array.from(pairs, (p) => p.time ?? 0),
    rank: Float64Array.from(pairs, (p) => p.rank ?? 0),
    used: Int32Array.from(pairs, (p) => p.used ?? 1),
    volume: Float64Array.from(pairs, (p) => p.volume ?? 1),
    fresh: Uint8Array.from(pairs, (p) => (p.fresh === false ? 0 : 1)),
  };
  const g = new RateGraph((i) => order[i]);
  g.sync(view, order.length, 1);
  const cross = (from: string, to: string, method: 'bfs' | 'layered' = 'bfs') => {
    const r = g.cross(id(from), id(to), view, method);
    return r && { ...r, path: r.path.map((i) => order[i]) };
  };
  return { g, view, cross };
}

describe('rule 12: direct, inverse and identity', () => {
  const { cross } = build(['BTC', 'USD'], [{ base: 'BTC', quote: 'USD', rate: 100, time: 5, rank: 2 }]);

  it('rate(X, X) = 1', () => {
    expect(cross('BTC', 'BTC')).toMatchObject({ rate: 1, path: ['BTC'], legs: [] });
  });

  it('a direct edge gives its rate, the other way 1 / rate', () => {
    const d = cross('BTC', 'USD')!;
    expect(d).toMatchObject({ rate: 100, time: 5, path: ['BTC', 'USD'], minRank: 2, fresh: true });
    expect(d.legs[0].inverted).toBe(false);
    const i = cross('USD', 'BTC')!;
    expect(i.rate).toBe(1 / 100);
    expect(i.legs[0]).toMatchObject({ inverted: true, rate: 0.01, pair: 0 });
  });
});

describe('rule 12: BFS path choice', () => {
  // Diamond X - A - Y and X - B - Y; ids: X, Y, B, A (B's id is smaller than A's)
  const diamond = (ra: [number, number], rb: [number, number]) =>
    build(
      ['X', 'Y', 'B', 'A'],
      [
        { base: 'X', quote: 'A', rate: 2, rank: ra[0], time: 10 },
        { base: 'A', quote: 'Y', rate: 3, rank: ra[1], time: 20 },
        { base: 'X', quote: 'B', rate: 4, rank: rb[0], time: 30 },
        { base: 'B', quote: 'Y', rate: 5, rank: rb[1], time: 40 },
      ],
    ).cross('X', 'Y')!;

  it('equal hops and ranks: the lexicographically smallest asset sequence (X, A, Y)', () => {
    const r = diamond([1, 1], [1, 1]);
    expect(r.path).toEqual(['X', 'A', 'Y']);
    expect(r.rate).toBe(6); // 2 * 3
    expect(r.time).toBe(10); // oldest leg
  });

  it('equal hops: the path whose lowest rank is highest wins over the alphabet', () => {
    const r = diamond([1, 1], [2, 2]);
    expect(r.path).toEqual(['X', 'B', 'Y']);
    expect(r.rate).toBe(20); // 4 * 5
    expect(r.time).toBe(30);
    expect(r.minRank).toBe(2);
  });

  it('compares the LOWEST rank of each path (3 and 0 loses to 1 and 1)', () => {
    const r = diamond([3, 0], [1, 1]);
    expect(r.path).toEqual(['X', 'B', 'Y']);
    expect(r.minRank).toBe(1);
  });

  it('fewest hops first, whatever the ranks', () => {
    const { cross } = build(
      ['X', 'Y', 'B'],
      [
        { base: 'X', quote: 'Y', rate: 7, rank: 0 },
        { base: 'X', quote: 'B', rate: 4, rank: 9 },
        { base: 'B', quote: 'Y', rate: 5, rank: 9 },
      ],
    );
    expect(cross('X', 'Y')).toMatchObject({ rate: 7, path: ['X', 'Y'] });
  });

  it('lexicographic order over the whole sequence at depth 3', () => {
    // X-A-D-Y and X-B-C-Y: (X, A, D, Y) < (X, B, C, Y) although C < D
    const { cross } = build(
      ['Y', 'D', 'C', 'B', 'A', 'X'],
      [
        { base: 'X', quote: 'A', rate: 2 },
        { base: 'A', quote: 'D', rate: 3 },
        { base: 'D', quote: 'Y', rate: 5 },
        { base: 'X', quote: 'B', rate: 7 },
        { base: 'B', quote: 'C', rate: 11 },
        { base: 'C', quote: 'Y', rate: 13 },
      ],
    );
    const r = cross('X', 'Y')!;
    expect(r.path).toEqual(['X', 'A', 'D', 'Y']);
    expect(r.rate).toBe(30); // 2 * 3 * 5
    expect(r.legs.map((l) => l.pair)).toEqual([0, 1, 2]);
  });

  it('walks edges backwards with 1 / rate and reports freshness of every leg', () => {
    // pairs BTC/USD = 100 and EUR/USD = 1.25: rate(BTC, EUR) = 100 * (1 / 1.25) = 80,
    // the second leg (USD -> EUR) walks EUR/USD backwards; time = older leg (3); fresh only if both are
    const { cross } = build(
      ['BTC', 'USD', 'EUR'],
      [
        { base: 'BTC', quote: 'USD', rate: 100, time: 7, fresh: true },
        { base: 'EUR', quote: 'USD', rate: 1.25, time: 3, fresh: false },
      ],
    );
    const r = cross('BTC', 'EUR')!;
    expect(r.rate).toBe(80);
    expect(r.time).toBe(3);
    expect(r.fresh).toBe(false);
    expect(r.legs.map((l) => l.inverted)).toEqual([false, true]);
    // and back: rate(EUR, BTC) = 1.25 / 100 = 0.0125
    expect(cross('EUR', 'BTC')!.rate).toBe(1.25 * (1 / 100));
  });

  it('no path: undefined (also for ids out of range)', () => {
    const { g, view, cross } = build(
      ['A', 'B', 'C', 'D'],
      [
        { base: 'A', quote: 'B', rate: 2 },
        { base: 'C', quote: 'D', rate: 3 },
      ],
    );
    expect(cross('A', 'D')).toBeUndefined();
    expect(cross('A', 'D', 'layered')).toBeUndefined();
    expect(g.cross(0, 99, view, 'bfs')).toBeUndefined();
    expect(g.cross(-1, 0, view, 'bfs')).toBeUndefined();
  });

  it('ignores pairs without a rate (NaN)', () => {
    const { cross, g } = build(
      ['A', 'B', 'C'],
      [
        { base: 'A', quote: 'B', rate: NaN },
        { base: 'A', quote: 'C', rate: 2 },
        { base: 'C', quote: 'B', rate: 3 },
      ],
    );
    expect(g.edges).toBe(2);
    expect(cross('A', 'B')).toMatchObject({ rate: 6, path: ['A', 'C', 'B'] });
  });
});

describe('rule 12: both B/Q and Q/B listed', () => {
  const both = (bq: Partial<P>, qb: Partial<P>) =>
    build(
      ['USD', 'BTC'],
      [
        { base: 'BTC', quote: 'USD', rate: 100, ...bq },
        { base: 'USD', quote: 'BTC', rate: 0.0125, ...qb }, // 1 / 0.0125 = 80
      ],
    ).cross('BTC', 'USD')!;

  it('the higher rank wins', () => {
    expect(both({ rank: 1 }, { rank: 2 }).rate).toBe(80);
    expect(both({ rank: 2 }, { rank: 1 }).rate).toBe(100);
  });

  it('then the one that used more markets', () => {
    expect(both({ used: 1 }, { used: 3 }).rate).toBe(80);
    expect(both({ used: 3 }, { used: 1 }).rate).toBe(100);
  });

  it('then the one whose base sorts first (BTC < USD)', () => {
    const r = both({}, {});
    expect(r.rate).toBe(100);
    expect(r.legs[0]).toMatchObject({ pair: 0, inverted: false });
  });

  it('one edge in the graph', () => {
    const { g } = build(
      ['USD', 'BTC'],
      [
        { base: 'BTC', quote: 'USD', rate: 100 },
        { base: 'USD', quote: 'BTC', rate: 0.0125 },
      ],
    );
    expect(g.edges).toBe(1);
    expect(g.model().edges()).toEqual(['BTC~USD']);
    expect(g.model().getEdgeAttribute('BTC~USD', 'pairs')).toEqual([0, 1]);
  });
});

describe('rule 12: layered option', () => {
  it('prices depth k as the volume-weighted mean over its edges to depth k - 1', () => {
    // X/A = 2, A/Y = 3 (V 1): via A 6; X/B = 4, B/Y = 1.25 (V 3): via B 5
    // price(Y) = (1 * 6 + 3 * 5) / (1 + 3) = 21 / 4 = 5.25
    const { cross } = build(
      ['X', 'Y', 'B', 'A'],
      [
        { base: 'X', quote: 'A', rate: 2, volume: 10, time: 10 },
        { base: 'A', quote: 'Y', rate: 3, volume: 1, time: 20 },
        { base: 'X', quote: 'B', rate: 4, volume: 10, time: 5, fresh: false },
        { base: 'B', quote: 'Y', rate: 1.25, volume: 3, time: 40, rank: 4 },
      ],
    );
    const r = cross('X', 'Y', 'layered')!;
    expect(r.rate).toBe(5.25);
    expect(r.method).toBe('layered');
    expect(r.time).toBe(5); // oldest time on any edge used
    expect(r.fresh).toBe(false); // X/B is carried
    expect(r.path).toEqual(['X', 'Y']);
    expect(r.legs.map((l) => l.pair).sort()).toEqual([1, 3]);
    expect(r.minRank).toBe(0);
  });

  it('falls back to the plain mean when the edges carry no volume', () => {
    // (6 + 5) / 2 = 5.5
    const { cross } = build(
      ['X', 'Y', 'B', 'A'],
      [
        { base: 'X', quote: 'A', rate: 2, volume: 0 },
        { base: 'A', quote: 'Y', rate: 3, volume: 0 },
        { base: 'X', quote: 'B', rate: 4, volume: 0 },
        { base: 'B', quote: 'Y', rate: 1.25, volume: 0 },
      ],
    );
    expect(cross('X', 'Y', 'layered')!.rate).toBe(5.5);
  });

  it('with a direct edge is the direct rate', () => {
    const { cross } = build(['X', 'Y'], [{ base: 'Y', quote: 'X', rate: 4 }]);
    expect(cross('X', 'Y', 'layered')!.rate).toBe(0.25);
  });
});

describe('RateGraph model and sync', () => {
  it('exports a sorted graphology graph and rebuilds only on a new version', () => {
    const { g, view } = build(
      ['Z', 'B', 'A', 'Q'],
      [
        { base: 'Z', quote: 'A', rate: 1 },
        { base: 'B', quote: 'A', rate: 1 },
      ],
    );
    const m = g.model();
    expect(m.nodes()).toEqual(['A', 'B', 'Z']); // Q has no edge
    expect(m.edges()).toEqual(['A~B', 'A~Z']);
    expect(g.model()).toBe(m); // cached
    view.rate[1] = NaN;
    g.sync(view, 4, 1); // same version: no rebuild
    expect(g.edges).toBe(2);
    g.sync(view, 4, 2);
    expect(g.edges).toBe(1);
    expect(g.model().edges()).toEqual(['A~Z']);
  });
});
