/**
 * The field maps of a file's rows made by one object literal: the CSV and SQLite readers give each
 * row as a record of its columns (`SourceRecord.record`), the columns named by the file (a CSV
 * header, a table's columns). Made by assigning the columns one by one, a record is built through
 * the names' lookups, a check of each name, and a new property at each step; {@link recordMaker}
 * writes, once a file, a function returning `{ "name": value, ... }` of the file's columns, so
 * that every record of the file is made at once with one shape (2 M SQLite rows of 16 columns:
 * within the noise of reading the rows, where the assignments took 0.9-1.1 s more).
 *
 * The record is the one the assignments made: the same names in the same order (a name twice, a
 * view's: its first place, its last value), `__proto__` and unnamed columns left out. In a process
 * that allows no code made from strings (`node --disallow-code-generation-from-strings`), the
 * records are made by the assignments.
 *
 * @module
 */

/** Makes the record of a row of values: value `from + k` under name `k`. */
export type RecordMaker = (values: readonly unknown[]) => Record<string, unknown>;

/**
 * The {@link RecordMaker} of columns `names` (undefined: a column left out), their values from
 * index `from` of a row on, each through `convert` when given (a SQLite BLOB read as text).
 *
 * @example
 * ```ts
 * const make = recordMaker(['type', undefined, 'price'], 1);
 * make([7, 'trade', 'x', '1.5']); // { type: 'trade', price: '1.5' }
 * ```
 */
export function recordMaker(names: readonly (string | undefined)[], from = 0, convert?: (v: unknown) => unknown): RecordMaker {
  const fields: string[] = [];
  names.forEach((name, k) => {
    if (name === undefined || name === '__proto__') return;
    // A JSON string is a JavaScript string literal: any name is a quoted key.
    const value = `v[${from + k}]`;
    fields.push(`${JSON.stringify(name)}: ${convert ? `c(${value})` : value}`);
  });
  let make: (c: unknown, v: readonly unknown[]) => Record<string, unknown>;
  try {
    // One literal of the file's columns (see the module description).
    make = new Function('c', 'v', `return { ${fields.join(', ')} };`) as typeof make;
  } catch {
    // A process that allows no code made from strings (`node --disallow-code-generation-from-strings`): the assignments.
    return (values) => assign(names, from, convert, values);
  }
  return (values) => make(convert, values);
}

/** The record of `values` made by assigning each named column in turn (what {@link recordMaker}'s literal equals). */
function assign(
  names: readonly (string | undefined)[],
  from: number,
  convert: ((v: unknown) => unknown) | undefined,
  values: readonly unknown[],
): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (let k = 0; k < names.length; k++) {
    const name = names[k];
    if (name === undefined || name === '__proto__') continue;
    const v = values[from + k];
    record[name] = convert ? convert(v) : v;
  }
  return record;
}
