/**
 * Lists of file paths kept as columns: a merge of a year of vendor files lists 180,000 paths,
 * about 115 bytes each as strings in the JavaScript heap (20 MB, held for the whole run, and as
 * much again of room by the replay's heap budget). A {@link PathList} keeps each directory's path
 * once and each distinct name once, as UTF-8 bytes outside the heap; a path is two indices (8
 * bytes), its string made when it is asked for (`at`), as a file is opened or named.
 *
 * @module
 */

/** Paths by index: an array of them, or a {@link PathList}. */
export interface Paths {
  readonly length: number;
  /** The path at `i`, or undefined out of range. */
  at(i: number): string | undefined;
}

/** Where the name of `path` begins: after its last separator (`/`, and `\` on Windows). */
function nameStart(path: string, windows: boolean): number {
  let k = path.lastIndexOf('/');
  if (windows) k = Math.max(k, path.lastIndexOf('\\'));
  return k + 1;
}

const WINDOWS = process.platform === 'win32';

/** Whether UTF-16 code unit `c` is half of a surrogate pair (or a lone one). */
export function surrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdfff;
}

/**
 * Whether `s` has half of a surrogate pair (or a lone one): a name that UTF-8 cannot carry as it
 * is (a lone surrogate) is kept as a string; file names read from a directory never have one.
 */
function hasSurrogate(s: string): boolean {
  for (let k = 0; k < s.length; k++) if (surrogate(s.charCodeAt(k))) return true;
  return false;
}

/** A {@link PathList}'s columns, shared by the lists that are views of them. */
interface Columns {
  /** Each directory's path, with its separator (`''`: a path with none). */
  readonly dirs: readonly string[];
  /** Each path's directory, its index in `dirs`. */
  readonly dirOf: Int32Array;
  /** Each path's name, its index among the names. */
  readonly nameOf: Int32Array;
  /** Where each name ends in `names` (it begins where the one before ends). */
  readonly ends: Int32Array;
  /** The names' UTF-8 bytes, each name once. */
  readonly names: Buffer;
  /** Names kept as strings, by their index: those UTF-8 cannot carry (see `hasSurrogate`). */
  readonly odd: ReadonlyMap<number, string> | undefined;
}

/**
 * File paths in columns (see the module description), in the order given: each directory once,
 * and each name once (a vendor's tree repeats its file names in every day's directory: a year of
 * 180,000 CoinAPI files has a few hundred names), a path being a directory's index and a name's,
 * 8 bytes. A list can be a view of another's columns ({@link PathList.slice}): the files of each
 * input of a replay are views of the one list of all of them.
 *
 * @example
 * ```ts
 * const files = PathList.of(['T-QUOTES/D-20230701/a.csv.gz', 'T-QUOTES/D-20230701/b.csv.gz']);
 * files.length; // 2
 * files.at(1); // 'T-QUOTES/D-20230701/b.csv.gz'
 * ```
 */
export class PathList implements Paths, Iterable<string> {
  private constructor(
    private readonly cols: Columns,
    /** This list's first path in `cols`. */
    private readonly start: number,
    readonly length: number,
  ) {}

  /** The paths of `lists`, one list after the other, in columns of their own. */
  static of(...lists: readonly Paths[]): PathList {
    let n = 0;
    for (const l of lists) n += l.length;
    const dirOf = new Int32Array(n);
    const nameOf = new Int32Array(n);
    const dirs: string[] = [];
    const dirIndex = new Map<string, number>();
    const nameIndex = new Map<string, number>();
    let k = 0;
    let lastDir = -1;
    for (const l of lists)
      for (let i = 0; i < l.length; i++, k++) {
        const p = l.at(i) as string;
        const s = nameStart(p, WINDOWS);
        // Paths of one directory come together: the last one's is tried first.
        let d = lastDir;
        if (d < 0 || dirs[d].length !== s || !p.startsWith(dirs[d])) {
          const dir = p.slice(0, s);
          d = dirIndex.get(dir) ?? -1;
          if (d < 0) {
            d = dirs.push(dir) - 1;
            dirIndex.set(dir, d);
          }
          lastDir = d;
        }
        dirOf[k] = d;
        const name = p.slice(s);
        let m = nameIndex.get(name);
        if (m === undefined) {
          m = nameIndex.size;
          nameIndex.set(name, m);
        }
        nameOf[k] = m;
      }
    // The names' bytes, in the order of their indices (a map's), in a buffer made at its size.
    let bytes = 0;
    for (const name of nameIndex.keys()) bytes += Buffer.byteLength(name);
    const names = Buffer.allocUnsafe(bytes);
    const ends = new Int32Array(nameIndex.size);
    let odd: Map<number, string> | undefined;
    let at = 0;
    let m = 0;
    for (const name of nameIndex.keys()) {
      if (hasSurrogate(name) && Buffer.from(name).toString() !== name) {
        odd ??= new Map();
        odd.set(m, name);
      } else at += names.write(name, at);
      ends[m++] = at;
    }
    return new PathList({ dirs, dirOf, nameOf, ends, names: at === bytes ? names : names.subarray(0, at), odd }, 0, n);
  }

  /**
   * The paths of `lists` one after the other: a view when they are views of one list's columns,
   * each following the one before (as a replay's inputs are); else in columns of their own.
   */
  static concat(lists: readonly Paths[]): PathList {
    const first = lists[0];
    if (first instanceof PathList) {
      let end = first.start + first.length;
      let k = 1;
      for (; k < lists.length; k++) {
        const l = lists[k];
        if (!(l instanceof PathList) || l.cols !== first.cols || l.start !== end) break;
        end += l.length;
      }
      if (k === lists.length) return new PathList(first.cols, first.start, end - first.start);
    }
    return PathList.of(...lists);
  }

  /** The paths from `from` up to `to` (not included), a view of these columns. */
  slice(from: number, to: number): PathList {
    const a = Math.max(0, Math.min(from, this.length));
    const b = Math.max(a, Math.min(to, this.length));
    return new PathList(this.cols, this.start + a, b - a);
  }

  /** The path at `i` (0 to `length` - 1; no negative indices), or undefined out of range. */
  at(i: number): string | undefined {
    if (!(i >= 0 && i < this.length)) return undefined;
    const k = this.start + Math.floor(i);
    const c = this.cols;
    const m = c.nameOf[k];
    const name = c.odd?.get(m) ?? c.names.toString('utf8', m === 0 ? 0 : c.ends[m - 1], c.ends[m]);
    return c.dirs[c.dirOf[k]] + name;
  }

  *[Symbol.iterator](): Iterator<string> {
    for (let i = 0; i < this.length; i++) yield this.at(i) as string;
  }

  /** The paths as an array (how `JSON.stringify` writes the list). */
  toJSON(): string[] {
    return [...this];
  }
}
