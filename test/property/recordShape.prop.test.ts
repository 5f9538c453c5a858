/**
 * recordMaker (src/io/recordShape.ts): the record it makes of a row is the one the readers made by
 * assigning the columns one by one (names, their order, values, a name twice, `__proto__` and
 * unnamed columns left out), for any names, quotes, backslashes, line breaks and U+2028 included.
 */
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordMaker } from '../../src/io/recordShape.js';

/** The record made as the readers made it before: column k's value assigned under its name. */
function assigned(names: readonly (string | undefined)[], row: readonly unknown[], from: number, convert = (v: unknown) => v) {
  const record: Record<string, unknown> = {};
  names.forEach((name, k) => {
    if (name !== undefined && name !== '__proto__') record[name] = convert(row[from + k]);
  });
  return record;
}

const nameArb = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom(
    'type',
    'time',
    '__proto__',
    'constructor',
    'a"b',
    'a\\b',
    'line\nbreak',
    '\u2028',
    '0',
    '10',
    '2',
    ['$', '{x}'].join(''),
    '`',
  ),
  fc.constant(undefined),
);
const valueArb = fc.oneof(fc.string(), fc.double(), fc.integer(), fc.constant(null), fc.constant(undefined));

describe('recordMaker', () => {
  it('makes the record that assigning each named column makes', () => {
    fc.assert(
      fc.property(
        fc.array(nameArb, { maxLength: 12 }),
        fc.integer({ min: 0, max: 2 }),
        fc.array(valueArb, { minLength: 14, maxLength: 14 }),
        (names, from, row) => {
          const made = recordMaker(names, from)(row);
          const want = assigned(names, row, from);
          expect(Object.getPrototypeOf(made)).toBe(Object.prototype);
          expect(Object.keys(made)).toEqual(Object.keys(want));
          expect(made).toEqual(want);
          expect(JSON.stringify(made)).toBe(JSON.stringify(want));
        },
      ),
      { seed: 31, numRuns: 3000 },
    );
  });

  it('makes the same record in a process that allows no code made from strings (by assignments)', () => {
    const names = ['type', undefined, '__proto__', 'a"b', 'type'];
    const row = [0, 'quote', 'x', 'y', 'z', 'trade'];
    const code = `import { recordMaker } from './src/io/recordShape.ts';
      process.stdout.write(JSON.stringify(recordMaker(${JSON.stringify(names)}.map((n) => n ?? undefined), 1)(${JSON.stringify(row)})));`;
    const out = execFileSync(
      process.execPath,
      ['--disallow-code-generation-from-strings', '--import', 'tsx', '--input-type=module', '-e', code],
      {
        encoding: 'utf8',
      },
    );
    expect(JSON.parse(out)).toEqual(assigned(names, row, 1));
    expect(out).toBe(JSON.stringify(recordMaker(names, 1)(row)));
  });

  it('gives each value through the conversion when one is given', () => {
    const upper = (v: unknown) => (typeof v === 'string' ? v.toUpperCase() : v);
    const make = recordMaker(['type', undefined, 'symbol_id', 'type'], 1, upper);
    expect(make([9, 'quote', 'skip', 'x_spot', 'trade'])).toEqual({ type: 'TRADE', symbol_id: 'X_SPOT' });
    expect(Object.keys(make([9, 'a', 'b', 'c', 'd']))).toEqual(['type', 'symbol_id']);
  });
});
