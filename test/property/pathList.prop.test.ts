/**
 * Paths kept as columns (src/io/pathList.ts): a PathList gives back every path it was made of, as
 * it was (directories, names of any characters, lone surrogates and separators included), through
 * its views and their concatenation, and writes as the array of them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PathList } from '../../src/io/pathList.js';

/** Path-like strings: segments of a few characters from an alphabet with separators, dots, non-ASCII and surrogates. */
const pathArb = fc
  .array(fc.constantFrom('a', 'b', 'D-2023', '.', '/', '//', '\\', 'é', '€', '日本', '😀', '\ud800', '\udfff', '', ' ', '+', 'csv.gz'), {
    maxLength: 8,
  })
  .map((xs) => xs.join(''));

const listsArb = fc.array(fc.array(pathArb, { maxLength: 10 }), { maxLength: 5 });

describe('PathList', () => {
  it('gives back each path it was made of, in order, and writes as their array', () => {
    fc.assert(
      fc.property(listsArb, (lists) => {
        const all = lists.flat();
        const p = PathList.of(...lists);
        expect(p.length).toBe(all.length);
        for (let i = 0; i < all.length; i++) expect(p.at(i)).toBe(all[i]);
        expect([...p]).toEqual(all);
        expect(JSON.stringify(p)).toBe(JSON.stringify(all));
        expect(p.at(all.length)).toBeUndefined();
        expect(p.at(-1)).toBeUndefined();
      }),
      { seed: 5403, numRuns: 300 },
    );
  });

  it('views: a slice gives its paths; the concatenation of consecutive views is one view of the whole', () => {
    fc.assert(
      fc.property(listsArb, fc.nat(), fc.nat(), (lists, x, y) => {
        const all = lists.flat();
        const p = PathList.of(all);
        const from = all.length === 0 ? 0 : x % (all.length + 1);
        const to = from + (all.length === 0 ? 0 : y % (all.length - from + 1));
        expect([...p.slice(from, to)]).toEqual(all.slice(from, to));
        // Views of each list, made from the whole, and concatenated again.
        const starts = lists.map((_l, k) => lists.slice(0, k).reduce((n, x) => n + x.length, 0));
        const views = lists.map((l, k) => p.slice(starts[k], starts[k] + l.length));
        expect(views.map((v) => [...v])).toEqual(lists);
        const joined = PathList.concat(views);
        expect([...joined]).toEqual(all);
        // Lists that are not consecutive views of one list: copied into columns of their own.
        const mixed = PathList.concat([...views].reverse());
        expect([...mixed]).toEqual([...lists].reverse().flat());
        expect([...PathList.concat(lists)]).toEqual(all);
      }),
      { seed: 5404, numRuns: 300 },
    );
  });
});
