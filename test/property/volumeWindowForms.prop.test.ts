/**
 * Rule 8's window in both of its forms (src/core/volumeWindow.ts): a ring of gcd(W, C) buckets
 * when that ring is short, the buckets trades went into when it is long (a cadence that does not
 * divide the window). Whatever W, C and the trades (in time order, a few markets), V at every
 * refresh equals the sum of the sizes with time in (R - W, R], as a float and exactly; a snapshot
 * taken anywhere restores to the same answers; and a ring-form snapshot (an earlier version's, of
 * a long ring) loads into the sparse form with the same answers.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DENSE_RING_MAX, VolumeWindow, type VolumeWindowJSON } from '../../src/core/volumeWindow.js';

const S = 1_000_000;

/** A ring-form snapshot of the buckets of a sparse one (what an earlier version wrote). */
function asRing(j: VolumeWindowJSON, ring: number): VolumeWindowJSON {
  const markets = j.markets ?? [];
  const capacity = Math.max(16, ...markets.map((m) => m + 1));
  const n = capacity * ring;
  const out: VolumeWindowJSON = {
    windowUs: j.windowUs,
    refreshUs: j.refreshUs,
    capacity,
    sums: new Array<number>(n).fill(0),
    index: new Array<number>(n).fill(NaN),
    exactMant: new Array<string>(n).fill('0'),
    exactExp: new Array<number>(n).fill(0),
  };
  j.index.forEach((b, i) => {
    const slot = markets[i] * ring + (((b % ring) + ring) % ring);
    out.index[slot] = b;
    out.sums[slot] = j.sums[i];
    out.exactMant[slot] = j.exactMant[i];
    out.exactExp[slot] = j.exactExp[i];
  });
  return JSON.parse(JSON.stringify(out)) as VolumeWindowJSON;
}

const roundTrip = (w: VolumeWindow): VolumeWindow => VolumeWindow.fromJSON(JSON.parse(JSON.stringify(w.toJSON())) as VolumeWindowJSON);

describe('VolumeWindow, ring and sparse forms', () => {
  it('give V of (R - W, R] at every refresh, through snapshots, in either form', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 900 * S }), fc.integer({ min: 1, max: 5000 })), {
          maxLength: 120,
        }),
        fc.integer({ min: 0, max: 40 }),
        (wSec, cSec, raw, snapAt) => {
          const W = wSec * S;
          const C = cSec * S;
          const trades = [...raw].sort((a, b) => a[1] - b[1]).map(([m, t, n]) => ({ m, t, text: String(n / 1000) }));
          let w = new VolumeWindow(W, C);
          expect(w.isSparse).toBe(w.ring > DENSE_RING_MAX);
          w.ensure(4);
          let next = 0;
          let refreshes = 0;
          const check = (R: number) => {
            for (let m = 0; m < 4; m++) {
              const inside = trades.slice(0, next).filter((x) => x.m === m && x.t > R - W && x.t <= R);
              const want = inside.reduce((a, x) => a + Number(x.text), 0);
              const exact = inside.reduce((a, x) => a + Math.round(Number(x.text) * 1000), 0);
              expect(w.sum(m, R)).toBeCloseTo(want, 9);
              const [mant, exp] = w.exactSum(m, R).split('e');
              expect(Number(BigInt(mant) * 10n ** BigInt(Number(exp) + 3))).toBe(exact);
            }
          };
          // Refreshes at multiples of C, each after every trade at or before it was added.
          for (let R = C; R <= 960 * S; R += C) {
            while (next < trades.length && trades[next].t <= R) {
              const x = trades[next++];
              w.add(x.m, x.t, Number(x.text), x.text);
            }
            check(R);
            if (++refreshes === snapAt) {
              const back = roundTrip(w);
              expect(JSON.stringify(back.toJSON())).toBe(JSON.stringify(w.toJSON()));
              if (w.isSparse) {
                const fromRing = VolumeWindow.fromJSON(asRing(w.toJSON(), w.ring));
                expect(fromRing.isSparse).toBe(true);
                for (let m = 0; m < 4; m++) expect(fromRing.exactSum(m, R)).toBe(w.exactSum(m, R));
              }
              w = back;
              check(R);
            }
          }
        },
      ),
      { seed: 20261128, numRuns: 300 },
    );
  });
});
