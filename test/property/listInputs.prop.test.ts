/**
 * The listing of a command's inputs (src/io/inputs.ts `listInputs`) on random trees: directories
 * nested at random, event logs and other files, links to files and to directories (cycles
 * included) and dangling ones, the inputs given as files, directories, missing paths, in forms
 * that normalize alike (`dir/`, `./dir`, `dir/sub/..`), relative or absolute, some twice. It lists
 * what a walk joining each directory and name with `path.join` lists, and finds the duplicate a
 * map of every file's real path finds (the first file reached again, and the first way it came).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { comparePaths, expandEach, findDuplicateInput, flatList, listInputs } from '../../src/io/inputs.js';
import { detectFormat } from '../../src/io/source.js';

const root = mkdtempSync(join(tmpdir(), 'xrate-list-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The walk as it was written first: each path by `path.join`, sorted by comparePaths. */
function refExpand(p: string): string[] {
  let dir = false;
  try {
    dir = statSync(p).isDirectory();
  } catch {
    // missing
  }
  if (!dir) return [p];
  const files: string[] = [];
  const seen = new Set<string>();
  const walk = (d: string): void => {
    const real = realpathSync(d);
    if (seen.has(real)) return;
    seen.add(real);
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const full = join(d, e.name);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (!isDir && !isFile) {
        try {
          const st = statSync(full);
          isDir = st.isDirectory();
          isFile = st.isFile();
        } catch {
          continue;
        }
      }
      if (isDir) walk(full);
      else if (isFile && detectFormat(e.name) !== undefined) files.push(full);
    }
  };
  walk(p);
  if (files.length === 0) throw new Error('no event log');
  return files.sort(comparePaths);
}

/** Every file's real path in a map, as the check was written first. */
function refDuplicate(args: string[], each: string[][]) {
  const seen = new Map<string, { path: string; arg: string }>();
  for (let a = 0; a < args.length; a++)
    for (const path of each[a]) {
      let real: string;
      try {
        real = realpathSync(path);
      } catch {
        real = resolve(path);
      }
      const first = seen.get(real);
      if (first) return { real, first, second: { path, arg: args[a] } };
      seen.set(real, { path, arg: args[a] });
    }
  return undefined;
}

interface TreeSpec {
  /** Parent of directory k + 1 (directory 0 is the tree's root): an index below it. */
  parents: number[];
  /** Files: directory, name, extension. */
  files: [number, number, number][];
  /** Links: directory it is in, name, kind (0: to a file, 1: to a directory, 2: dangling), target. */
  links: [number, number, number, number][];
  /** Inputs: kind (0: directory, 1: file, 2: missing), which, form. */
  args: [number, number, number][];
  /** Run in the tree's root (a directory given as `.` or `d0/..` then). */
  inTree: boolean;
}

const EXT = ['.ndjson', '.csv', '.csv.gz', '.txt', '.JSONL'];
const NAMES = ['a', 'b', 'B', 'a-b', 'é', 'z z', '.h'];

const specArb: fc.Arbitrary<TreeSpec> = fc.integer({ min: 0, max: 5 }).chain((nd) =>
  fc.record({
    parents: fc.tuple(...Array.from({ length: nd }, (_v, k) => fc.integer({ min: 0, max: k }))),
    files: fc.array(fc.tuple(fc.nat(nd), fc.nat(NAMES.length - 1), fc.nat(EXT.length - 1)), { minLength: 1, maxLength: 12 }),
    links: fc.array(fc.tuple(fc.nat(nd), fc.nat(NAMES.length - 1), fc.nat(2), fc.nat(20)), { maxLength: 4 }),
    args: fc.array(fc.tuple(fc.nat(2), fc.nat(20), fc.nat(4)), { minLength: 1, maxLength: 4 }),
    inTree: fc.boolean(),
  }),
);

let trees = 0;

/** Makes the tree of `spec`; its arguments, as paths relative to the working directory or absolute. */
function build(spec: TreeSpec): string[] {
  const top = join(root, `t${trees++}`);
  const dirs = [top];
  for (let k = 0; k < spec.parents.length; k++) dirs.push(join(dirs[spec.parents[k]], `d${k}`));
  for (const d of dirs) mkdirSync(d, { recursive: true });
  const files: string[] = [];
  for (const [d, n, x] of spec.files) {
    const p = join(dirs[d], `${NAMES[n]}${EXT[x]}`);
    writeFileSync(p, '');
    files.push(p);
  }
  for (const [d, n, kind, t] of spec.links) {
    const p = join(dirs[d], `l${NAMES[n]}${kind === 1 ? '' : '.ndjson'}`);
    const target = kind === 0 ? files[t % files.length] : kind === 1 ? dirs[t % dirs.length] : join(top, 'gone.ndjson');
    try {
      symlinkSync(target, p);
    } catch {
      // the name is taken
    }
  }
  if (spec.inTree) process.chdir(top);
  const rel = (p: string): string => relative(process.cwd(), p) || '.';
  const form = (p: string, f: number): string =>
    f === 0 ? p : f === 1 ? rel(p) : f === 2 ? `${p}/` : f === 3 ? `${join(p, '..')}/./${p.split('/').at(-1)}` : `${rel(p)}/d0/..`;
  return spec.args.map(([kind, which, f]) => {
    // A directory's `d0/..` where it has a d0.
    if (kind === 0) return form(dirs[which % dirs.length], f === 4 && (which % dirs.length !== 0 || dirs.length === 1) ? 1 : f);
    if (kind === 1) return form(files[which % files.length], f === 2 || f === 4 ? 0 : f);
    return join(top, `missing${which}.ndjson`);
  });
}

describe('listInputs', () => {
  it("lists each input's files as a join of directory and name does, and finds the duplicate a map of real paths finds", () => {
    fc.assert(
      fc.property(specArb, (spec) => {
        const cwd = process.cwd();
        try {
          check(build(spec));
        } finally {
          process.chdir(cwd);
        }
      }),
      { seed: 5401, numRuns: 200 },
    );
  });
});

describe('flatList', () => {
  it("gives each list's paths in order, one after the other, as `flat()` does, in an array without holes", () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.string({ maxLength: 6 }), { maxLength: 8 }), { maxLength: 6 }), (each) => {
        const got = flatList(each);
        expect(got).toEqual(each.flat());
        expect(Object.keys(got).length).toBe(got.length);
      }),
      { seed: 5402, numRuns: 200 },
    );
  });
});

/** listInputs of `args` against the walk and the map of real paths as first written. */
function check(args: string[]): void {
  let want: string[][];
  try {
    want = args.map(refExpand);
  } catch {
    // A directory with no event log under it: refused by both.
    expect(() => listInputs(args)).toThrow(/holds no event log/);
    return;
  }
  const got = listInputs(args);
  expect(got.each.map((l) => [...l])).toEqual(want);
  expect(expandEach(args).map((l) => [...l])).toEqual(want);
  expect(got.duplicate).toEqual(refDuplicate(args, want));
  expect(findDuplicateInput(args)).toEqual(got.duplicate);
}
