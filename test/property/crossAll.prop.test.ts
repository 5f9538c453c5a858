import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RateGraph, type PairView } from '../../src/core/graph.js';

/**
 * A random pair table over `n` assets: pairs with rates, ranks 0-2, markets used, times,
 * freshness; at most `maxPairs` pairs (few pairs make long paths, where the rank and
 * lexicographic tie-breaks bite).
 */
const tableOf = (maxPairs: number) =>
  fc
    .integer({ min: 2, max: 14 })
    .chain((n) =>
      fc.record({
        n: fc.constant(n),
        pairs: fc.uniqueArray(
          fc.record({
            b: fc.integer({ min: 0, max: n - 1 }),
            q: fc.integer({ min: 0, max: n - 1 }),
            rate: fc.double({ min: 1e-4, max: 1e4, noNaN: true }),
            rank: fc.integer({ min: 0, max: 2 }),
            used: fc.integer({ min: 1, max: 4 }),
            time: fc.integer({ min: 0, max: 1_000_000 }),
            fresh: fc.boolean(),
            volume: fc.double({ min: 0, max: 100, noNaN: true }),
            hasRate: fc.boolean(),
          }),
          { selector: (p) => `${p.b}/${p.q}`, maxLength: maxPairs },
        ),
      }),
    )
    .map(({ n, pairs }) => {
      const ps = pairs.filter((p) => p.b !== p.q);
      const view: PairView = {
        count: ps.length,
        base: Int32Array.from(ps, (p) => p.b),
        quote: Int32Array.from(ps, (p) => p.q),
        rate: Float64Array.from(ps, (p) => (p.hasRate ? p.rate : NaN)),
        time: Float64Array.from(ps, (p) => p.time),
        rank: Float64Array.from(ps, (p) => p.rank),
        used: Int32Array.from(ps, (p) => p.used),
        volume: Float64Array.from(ps, (p) => p.volume),
        fresh: Uint8Array.from(ps, (p) => (p.fresh ? 1 : 0)),
      };
      // Asset names deliberately not in id order, so the lexicographic tie-break is exercised.
      const names = Array.from({ length: n }, (_, i) => `A${String((i * 7) % n).padStart(2, '0')}-${i}`);
      return { n, view, names };
    });
const tableArb = tableOf(40);

describe('rule 12: all-targets search', () => {
  for (const method of ['bfs', 'layered'] as const) {
    it(`crossAll equals cross for every target (${method})`, () => {
      fc.assert(
        fc.property(tableArb, ({ n, view, names }) => {
          const g = new RateGraph((i) => names[i]);
          g.sync(view, n, 1);
          const out = { rate: new Float64Array(n), time: new Float64Array(n), fresh: new Uint8Array(n) };
          for (let from = 0; from < n; from++) {
            g.crossAll(from, view, method, 1, out);
            for (let to = 0; to < n; to++) {
              if (to === from) {
                expect(out.rate[to]).toBe(1);
                continue;
              }
              const r = g.cross(from, to, view, method, 1);
              if (!r) {
                expect(out.rate[to], `${from}->${to}`).toBeNaN();
                continue;
              }
              // Same path, so the same product up to the order of the multiplications.
              expect(Math.abs(out.rate[to] - r.rate) <= 1e-12 * Math.abs(r.rate), `${from}->${to}: ${out.rate[to]} vs ${r.rate}`).toBe(
                true,
              );
              expect(out.time[to]).toBe(r.time);
              expect(out.fresh[to] === 1).toBe(r.fresh);
            }
          }
        }),
        { seed: 42, numRuns: 300 },
      );
    });
  }

  for (const method of ['bfs', 'layered'] as const) {
    it(`crossAllTo equals cross from every source, exactly, tick after tick (${method})`, () => {
      /** crossAllTo(to) against cross(from, to) for every source, at tick `stamp` of `view`. */
      const check = (g: RateGraph, n: number, to: number, view: PairView, stamp: number) => {
        const out = { rate: new Float64Array(n), time: new Float64Array(n), fresh: new Uint8Array(n) };
        g.crossAllTo(to, view, method, stamp, out);
        for (let from = 0; from < n; from++) {
          const r = g.cross(from, to, view, method, stamp);
          if (!r) {
            expect(out.rate[from], `${from}->${to}`).toBeNaN();
            continue;
          }
          // The same path, multiplied in the same order: the same double.
          expect(out.rate[from], `${from}->${to}`).toBe(r.rate);
          expect(out.time[from]).toBe(r.time);
          expect(out.fresh[from] === 1).toBe(r.fresh);
        }
      };
      fc.assert(
        fc.property(fc.oneof(tableArb, tableOf(16)), fc.nat(), ({ n, view, names }, seed) => {
          // The next tick: ranks, rates and freshness change on the same topology (kept paths must follow).
          const rank = Float64Array.from(view.rank, (r, i) => ((seed >> (i % 20)) & 1 ? (r + 1) % 3 : r));
          const rate = Float64Array.from(view.rate, (r, i) => (i % 2 ? r * 1.5 : r));
          const fresh = Uint8Array.from(view.fresh, (f, i) => ((seed >> ((i + 3) % 20)) & 1 ? 1 - f : f));
          const next: PairView = { ...view, rank, rate, fresh };
          const g = new RateGraph((i) => names[i]);
          g.sync(view, n, 1);
          let stamp = 0;
          for (let to = 0; to < n; to++) {
            // Each target at two ticks in a row, then back to the first table.
            for (const v of [view, next, view]) {
              for (let pr = 0; pr < view.count; pr++) g.notePairChanged(pr);
              check(g, n, to, v, ++stamp);
            }
          }
        }),
        { seed: 42, numRuns: method === 'bfs' ? 1000 : 300 },
      );
    });
  }

  it('crossAll on kept search trees equals a fresh search, exactly, tick after tick (bfs)', () => {
    fc.assert(
      fc.property(fc.oneof(tableArb, tableOf(16)), fc.nat(), ({ n, view, names }, seed) => {
        // Ticks on one topology: rates, times and freshness change at every tick, ranks at some.
        const tickView = (t: number): PairView => ({
          ...view,
          rank: t % 3 === 2 ? Float64Array.from(view.rank, (r, i) => ((seed >> (i % 20)) & 1 ? (r + 1) % 3 : r)) : view.rank,
          rate: Float64Array.from(view.rate, (r, i) => ((i + t) % 2 ? r * (1 + t / 7) : r)),
          time: Float64Array.from(view.time, (x, i) => x + ((i * t) % 5)),
          fresh: Uint8Array.from(view.fresh, (f, i) => ((seed >> ((i + t) % 20)) & 1 ? 1 - f : f)),
        });
        const kept = new RateGraph((i) => names[i]);
        kept.sync(view, n, 1);
        const out = { rate: new Float64Array(n), time: new Float64Array(n), fresh: new Uint8Array(n) };
        const ref = { rate: new Float64Array(n), time: new Float64Array(n), fresh: new Uint8Array(n) };
        for (let t = 0; t < 6; t++) {
          const v = tickView(t);
          for (let pr = 0; pr < view.count; pr++) kept.notePairChanged(pr);
          const fresh = new RateGraph((i) => names[i]);
          fresh.sync(v, n, 1);
          // The same source twice in a row (kept trees), then the next one.
          for (const from of [seed % n, seed % n, (seed + t) % n]) {
            kept.crossAll(from, v, 'bfs', t, out);
            fresh.crossAll(from, v, 'bfs', t, ref);
            for (let a = 0; a < n; a++) {
              expect(Object.is(out.rate[a], ref.rate[a]), `${from}->${a} at ${t}: ${out.rate[a]} vs ${ref.rate[a]}`).toBe(true);
              if (Number.isNaN(ref.rate[a])) continue;
              expect(out.time[a]).toBe(ref.time[a]);
              expect(out.fresh[a]).toBe(ref.fresh[a]);
            }
          }
        }
      }),
      { seed: 42, numRuns: 1000 },
    );
  });
});
