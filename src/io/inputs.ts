/**
 * The inputs of a replay as files: a directory given as an input stands for the event logs under
 * it, read recursively.
 *
 * @module
 */
import { type Dirent, readdirSync, realpathSync, statSync } from 'node:fs';
import { normalize, resolve, sep } from 'node:path';
import { PathList, type Paths, surrogate } from './pathList.js';
import { detectFormat } from './detect.js';
import { XrateError } from '../core/errors.js';

/**
 * Byte order of two paths (their UTF-8 bytes), the order a directory's files are read in: -1, 0
 * or 1. UTF-8's byte order is the order of code points, which is that of UTF-16 code units where
 * no surrogate takes part: those are compared as they are, without encoding either path (the sort
 * of a directory of 60,000 files encoded two paths a comparison, about a million times, in buffers
 * of Node's pool: the listing grew the RSS by 15 MB more, and a merge of those files peaked 20 MB higher).
 */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let k = 0;
  while (k < n && a.charCodeAt(k) === b.charCodeAt(k)) k++;
  const x = k < a.length ? a.charCodeAt(k) : -1;
  const y = k < b.length ? b.charCodeAt(k) : -1;
  if (!surrogate(x) && !surrogate(y) && (k === 0 || !surrogate(a.charCodeAt(k - 1)))) return x < y ? -1 : x > y ? 1 : 0;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The files of `paths`, in order: a file (or anything that is not a directory) stands for itself;
 * a directory for every event log under it, recursively (symbolic links followed, each directory
 * once), sorted by full path in byte order. A directory's event logs are the files whose name says
 * a format (`.ndjson`, `.jsonl`, `.json`, `.csv`, each optionally `.gz`, and `.sqlite`,
 * `.sqlite3`, `.db`: `detectFormat`); other files are left out, and so are names starting with
 * `.`. A directory with no event log under it is an XrateError.
 *
 * @example
 * ```ts
 * expandInputs(['meta.ndjson', 'T-QUOTES']);
 * // ['meta.ndjson', 'T-QUOTES/D-20230701/E-BINANCE/IDDI-1+SC-BINANCE_SPOT_BTC_USDT+S-BTCUSDT.csv.gz', ...]
 * ```
 */
export function expandInputs(paths: readonly string[]): string[] {
  return flatList(paths.map((p) => expand(p)));
}

/**
 * The lists one after the other, in an array of exactly their length: `Array.prototype.flat`
 * grows its result as it goes, to about 1.44 times the room (a merge of 179,103 files held
 * 2.06 MB for the pointers of 1.43 MB).
 */
export function flatList(each: readonly Paths[]): string[] {
  let n = 0;
  for (const files of each) n += files.length;
  const out = new Array<string>(n);
  let k = 0;
  for (const files of each) for (let i = 0; i < files.length; i++) out[k++] = files.at(i) as string;
  return out;
}

/**
 * {@link expandInputs} path by path: the files each of `paths` stands for (a directory walked once
 * for a replay and for the watch of its inputs, src/io/inputWatch.ts), as views of one
 * {@link PathList} of them all (src/io/pathList.ts: `PathList.concat` of them is that list).
 */
export function expandEach(paths: readonly string[]): PathList[] {
  return viewsOf(paths.map((p) => expand(p)));
}

/** `lists` in one {@link PathList}, as a view of it each. */
function viewsOf(lists: readonly string[][]): PathList[] {
  const all = PathList.of(...lists);
  let at = 0;
  return lists.map((l) => {
    at += l.length;
    return all.slice(at - l.length, at);
  });
}

/**
 * The files each of `inputs` stands for: `listed` (as a caller listed them, `listInputs`), or
 * {@link expandEach} of them.
 * @throws XrateError (`usage`) when `listed` does not list as many inputs as there are
 */
export function listedInputs(o: { inputs: readonly string[]; listed?: readonly Paths[] }): readonly Paths[] {
  if (o.listed === undefined) return expandEach(o.inputs);
  if (o.listed.length !== o.inputs.length)
    throw new XrateError('usage', `listed gives the files of ${o.listed.length} inputs, for ${o.inputs.length} inputs`, {
      field: 'listed',
    });
  return o.listed;
}

/**
 * The files `p` stands for ({@link expandInputs}), and with `reals` where each one's real path comes
 * from (symbolic links resolved; a path that does not exist as its absolute path): a plain file in
 * a directory from the directory's real path and its name, not resolved again file by file.
 */
function expand(p: string, reals?: RealPaths): string[] {
  let dir = false;
  try {
    dir = statSync(p).isDirectory();
  } catch {
    // Not there: the reader says so when it opens it.
  }
  if (!dir) {
    reals?.addOwn(realOf(p));
    return [p];
  }
  const found: Found = { files: [], dirOf: [], own: new Map(), reals };
  walk(p, found, new Set());
  const files = found.files;
  if (files.length === 0) {
    throw new XrateError(
      'input',
      `directory "${p}" holds no event log (files named .ndjson, .jsonl, .json, .csv, each optionally .gz, .sqlite, .sqlite3 or .db)`,
    );
  }
  const order = files.map((_, i) => i).sort((a, b) => comparePaths(files[a], files[b]));
  if (reals !== undefined)
    for (const i of order) {
      const d = found.dirOf[i];
      if (d >= 0) reals.addInDir(d);
      else reals.addOwn(found.own.get(i) as string);
    }
  return order.map((i) => files[i]);
}

/** The real path of `path` (symbolic links resolved), or its absolute path when it cannot be resolved. */
function realOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** One way a file was reached: its path, and the argument it came from (itself, or a directory). */
export interface InputPath {
  path: string;
  arg: string;
}

/** A file reached twice among the inputs of a command. */
export interface DuplicateInput {
  /** Its real path (symbolic links resolved). */
  real: string;
  first: InputPath;
  second: InputPath;
}

/**
 * The first file that `args` reach twice, directly or through directories (as
 * {@link expandInputs} reads them), by its real path: so `a.ndjson` and `./a.ndjson`, a symbolic
 * link and its target, a file and a directory holding it, or a directory given twice, all count.
 * Undefined when every file is reached once. A path that does not exist is compared as its
 * absolute path (the reader says it is missing).
 *
 * @example
 * ```ts
 * findDuplicateInput(['day.ndjson', 'logs']); // { real: '/data/logs/day.ndjson', first: {...}, second: {...} } when logs/day.ndjson is day.ndjson
 * ```
 */
export function findDuplicateInput(args: readonly string[]): DuplicateInput | undefined {
  return listInputs(args).duplicate;
}

/** The files each input stands for, and the first file they reach twice (see {@link listInputs}). */
export interface InputListing {
  /** The files of each input, as {@link expandEach} lists them. */
  each: PathList[];
  /** As {@link findDuplicateInput} finds it. */
  duplicate: DuplicateInput | undefined;
}

/**
 * {@link expandEach} and {@link findDuplicateInput} of `args` in one walk of their directories: a
 * command that refuses duplicate inputs hands the listing to the replay (`ReplayOptions.listed`).
 *
 * @example
 * ```ts
 * const { each, duplicate } = listInputs(['day.ndjson', 'logs']);
 * ```
 */
export function listInputs(args: readonly string[]): InputListing {
  const reals = new RealPaths();
  const lists = args.map((arg) => expand(arg, reals));
  const files = flatList(lists);
  const found = reals.firstDuplicate(files);
  const each = viewsOf(lists);
  if (found === undefined) return { each, duplicate: undefined };
  // The argument of a file by its place in the listing.
  const ends: number[] = [];
  for (const list of each) ends.push((ends.at(-1) ?? 0) + list.length);
  const way = (g: number): InputPath => ({ path: files[g], arg: args[ends.findIndex((e) => g < e)] });
  return { each, duplicate: { real: found.real, first: way(found.first), second: way(found.second) } };
}

/**
 * The message refusing a {@link DuplicateInput}: the file, the two ways it was given, and the flag
 * that says it is meant.
 *
 * @example
 * ```ts
 * duplicateMessage(d, '--allow-duplicates');
 * // 'the same file is given twice, as "a.ndjson" and as "./a.ndjson" (/data/a.ndjson): its records would be applied twice; ...'
 * ```
 */
export function duplicateMessage(d: DuplicateInput, flag: string): string {
  const way = (p: InputPath) => (p.path === p.arg ? `"${p.path}"` : `"${p.path}" (in the directory "${p.arg}")`);
  const same = d.first.path === d.second.path && d.first.arg === d.second.arg;
  const what = same
    ? `${way(d.first)} is given twice (${d.real})`
    : `the same file is given twice, as ${way(d.first)} and as ${way(d.second)} (${d.real})`;
  return `${what}: its records would be applied twice; give it once, or add ${flag} if that is meant`;
}

/**
 * The files a walk found; with `reals`, where each one's real path comes from: its directory's
 * (`dirOf`, an index into `reals`' directories) and its name, or its own (`dirOf` -1, `own`: a link).
 */
interface Found {
  files: string[];
  dirOf: number[];
  own: Map<number, string>;
  reals?: RealPaths;
}

function walk(dir: string, found: Found, seen: Set<string>): void {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch (e) {
    throw new XrateError('input', `cannot read directory "${dir}": ${(e as Error).message}`);
  }
  if (seen.has(real)) return;
  seen.add(real);
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    throw new XrateError('input', `cannot read directory "${dir}": ${(e as Error).message}`);
  }
  /** This directory in `found.reals`, once it holds a file. */
  let at = -1;
  // What `join(dir, name)` gives, as the directory's normalized path and the name: a path made by
  // join is a tree of slices and concatenations of the text it normalized (about 440 bytes a file
  // kept alive, where the plain path takes 150: the listing of 180,000 files grew the RSS by 150 MB).
  const d = normalize(dir);
  const base = d === '.' ? '' : prefixOf(d);
  for (const e of entries) {
    const name = e.name;
    if (name.startsWith('.')) continue;
    const full = base + name;
    // The entry's type as the directory tells it; a link (or a type it does not tell) by what it leads to.
    let isDir = e.isDirectory();
    let isFile = e.isFile();
    if (!isDir && !isFile) {
      let st: ReturnType<typeof statSync>;
      try {
        st = statSync(full);
      } catch {
        continue; // a dangling link
      }
      isDir = st.isDirectory();
      isFile = st.isFile();
    }
    if (isDir) walk(full, found, seen);
    else if (isFile && detectFormat(name) !== undefined) {
      // Kept as one flat string: the concatenation is flattened at its first use (a call of the file
      // system), and kept its own 32 bytes in front of the flat copy (5.8 MB at 180,000 files).
      found.files.push([base, name].join(''));
      if (found.reals === undefined) continue;
      // A plain file's real path is its directory's and its name; a link's is resolved.
      if (e.isFile()) {
        if (at < 0) at = found.reals.addDir(real);
        found.dirOf.push(at);
      } else {
        found.own.set(found.dirOf.length, realOf(full));
        found.dirOf.push(-1);
      }
    }
  }
}

/** The path of directory `dir` as the start of its files' paths: with one separator after it. */
function prefixOf(dir: string): string {
  return dir.endsWith(sep) ? dir : dir + sep;
}

/** Where the name of a file begins in its path. */
function nameAt(path: string): number {
  return path.lastIndexOf(sep) + 1;
}

/** FNV-1a's offset basis and prime (32 bits). */
export const FNV_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a of `s`'s UTF-16 code units from `from`, continuing from hash `h`. */
export function fnv(h: number, s: string, from = 0): number {
  for (let i = from; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME) >>> 0;
  return h;
}

/**
 * The real paths of the files of a listing, in its order, without a string of each: a plain file in
 * a walked directory is that directory (its real path, kept once) and the name that ends its path;
 * a link, or a file given itself, keeps its own. {@link firstDuplicate} finds files with one real
 * path by a hash of it, sorted: the check of tens of thousands of files held a real path, an object
 * and an entry of a map for each (the listing of 60,053 files peaked at 156 MB of RSS for it).
 */
class RealPaths {
  /** Real paths of the directories that hold files, each with the separator after it ({@link prefixOf}), and their hashes. */
  private readonly dirs: string[] = [];
  private readonly dirHash: number[] = [];
  /** Per file: its directory (an index into `dirs`), or -1: its own real path, in `own`. */
  private dirOf = new Int32Array(1024);
  private readonly own = new Map<number, string>();
  private n = 0;

  /** A directory's real path (`realpathSync`), kept for the files found in it; its index. */
  addDir(real: string): number {
    const prefix = prefixOf(real);
    this.dirs.push(prefix);
    this.dirHash.push(fnv(FNV_BASIS, prefix));
    return this.dirs.length - 1;
  }

  /** The next file: a plain file in directory `d` (of {@link addDir}). */
  addInDir(d: number): void {
    this.push(d);
  }

  /** The next file: one with its own real path. */
  addOwn(real: string): void {
    this.own.set(this.n, real);
    this.push(-1);
  }

  private push(d: number): void {
    if (this.n === this.dirOf.length) {
      const grown = new Int32Array(2 * this.n);
      grown.set(this.dirOf);
      this.dirOf = grown;
    }
    this.dirOf[this.n++] = d;
  }

  /** The real path of file `g`, at `path` in the listing. */
  real(g: number, path: string): string {
    const d = this.dirOf[g];
    if (d < 0) return this.own.get(g) as string;
    return this.dirs[d] + path.slice(nameAt(path));
  }

  /** The hash of file `g`'s real path ({@link real}, not made). */
  private hash(g: number, path: string): number {
    const d = this.dirOf[g];
    if (d < 0) return fnv(FNV_BASIS, this.own.get(g) as string);
    return fnv(this.dirHash[d], path, nameAt(path));
  }

  /**
   * Of the files `paths` (the listing, each file's path in order), the first whose real path an
   * earlier one has, and the earliest of those (its `first`), as indexes; undefined when none.
   */
  firstDuplicate(paths: readonly string[]): { real: string; first: number; second: number } | undefined {
    const n = this.n;
    // Each file's hash and place in one number, sorted: the place in the low bits (2^53 in all).
    const placeBits = Math.max(1, Math.ceil(Math.log2(n + 1)));
    const hashBits = Math.min(32, 53 - placeBits);
    const drop = 2 ** (32 - hashBits);
    const room = 2 ** placeBits;
    const keys = new Float64Array(n);
    for (let g = 0; g < n; g++) keys[g] = Math.floor(this.hash(g, paths[g]) / drop) * room + g;
    keys.sort();
    let second = -1;
    let first = -1;
    for (let i = 0; i < n; ) {
      const h = Math.floor(keys[i] / room);
      let j = i + 1;
      while (j < n && Math.floor(keys[j] / room) === h) j++;
      if (j - i > 1) {
        // One hash, the files in their order: a file is a duplicate of the earliest with its real path.
        const members: number[] = [];
        for (let k = i; k < j; k++) members.push(keys[k] - h * room);
        const real = members.map((g) => this.real(g, paths[g]));
        for (let b = 1; b < members.length; b++) {
          const a = real.indexOf(real[b]);
          if (a < b && (second < 0 || members[b] < second)) {
            second = members[b];
            first = members[a];
          }
        }
      }
      i = j;
    }
    return second < 0 ? undefined : { real: this.real(first, paths[first]), first, second };
  }
}
