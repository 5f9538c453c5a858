/**
 * comparePaths (src/io/inputs.ts) orders two paths as their UTF-8 bytes do, for any strings:
 * ASCII, characters above U+E000, surrogate pairs and lone surrogates (which UTF-8 encodes as
 * U+FFFD), one a prefix of the other or not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { comparePaths } from '../../src/io/inputs.js';

/** The order it must give: the paths' UTF-8 bytes compared. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Code units chosen near the boundaries that matter: ASCII, U+D7FF, surrogates, U+E000 and up. */
const unitArb = fc.oneof(
  fc.constantFrom(0x2f, 0x41, 0x61, 0x7f, 0xe9, 0xd7ff, 0xd800, 0xd83d, 0xdbff, 0xdc00, 0xde00, 0xdfff, 0xe000, 0xfffd, 0xffff),
  fc.integer({ min: 0, max: 0xffff }),
);
const pathArb = fc.array(unitArb, { maxLength: 8 }).map((units) => String.fromCharCode(...units));

describe('comparePaths', () => {
  it('is the byte order of the paths in UTF-8', () => {
    fc.assert(
      fc.property(pathArb, pathArb, pathArb, (prefix, a, b) => {
        expect(comparePaths(prefix + a, prefix + b)).toBe(byBytes(prefix + a, prefix + b));
        expect(comparePaths(prefix + a, prefix)).toBe(byBytes(prefix + a, prefix));
        expect(comparePaths(prefix, prefix + b)).toBe(byBytes(prefix, prefix + b));
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts as the bytes sort, pairs and characters above U+E000 included', () => {
    const names = ['a', 'ab', 'a\u{1F600}', 'a\uE000', 'a\uFFFD', 'a\uD83D', 'a\uDE00', 'é', 'z', '', '\u{10000}x', '\uFFFFx'];
    const sorted = [...names].sort(comparePaths);
    expect(sorted).toEqual([...names].sort(byBytes));
    // A surrogate pair (U+1F600) comes after U+E000 and U+FFFD in bytes, before them in code units.
    expect(sorted.indexOf('a\u{1F600}')).toBeGreaterThan(sorted.indexOf('a\uFFFD'));
  });
});
