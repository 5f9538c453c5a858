/**
 * The inputs of a replay as files: a directory given as an input stands for the event logs under
 * it, read recursively.
 *
 * @module
 */
import { type Dirent, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { detectFormat } from './source.js';
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

/** Whether UTF-16 code unit `c` is half of a surrogate pair (or a lone one). */
function surrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdfff;
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
  return expandEach(paths).flat();
}

/**
 * {@link expandInputs} path by path: the files each of `paths` stands for (a directory walked once
 * for a replay and for the watch of its inputs, src/io/inputWatch.ts).
 */
export function expandEach(paths: readonly string[]): string[][] {
  return paths.map((p) => expand(p));
}

/**
 * The files `p` stands for ({@link expandInputs}), and with `reals` each file's real path too
 * (symbolic links resolved; a path that does not exist as its absolute path): a directory's real
 * path joined with the name of each plain file in it, not resolved again file by file.
 */
function expand(p: string, reals?: string[]): string[] {
  let dir = false;
  try {
    dir = statSync(p).isDirectory();
  } catch {
    // Not there: the reader says so when it opens it.
  }
  if (!dir) {
    reals?.push(realOf(p));
    return [p];
  }
  const found: Found = { files: [], reals: reals === undefined ? undefined : [] };
  walk(p, found, new Set());
  const files = found.files;
  if (files.length === 0) {
    throw new XrateError(
      'input',
      `directory "${p}" holds no event log (files named .ndjson, .jsonl, .json, .csv, each optionally .gz, .sqlite, .sqlite3 or .db)`,
    );
  }
  const order = files.map((_, i) => i).sort((a, b) => comparePaths(files[a], files[b]));
  const out = order.map((i) => files[i]);
  if (reals !== undefined) for (const i of order) reals.push((found.reals as string[])[i]);
  return out;
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
  const seen = new Map<string, InputPath>();
  for (const arg of args) {
    const reals: string[] = [];
    const files = expand(arg, reals);
    for (let k = 0; k < files.length; k++) {
      const path = files[k];
      const real = reals[k];
      const first = seen.get(real);
      if (first) return { real, first, second: { path, arg } };
      seen.set(real, { path, arg });
    }
  }
  return undefined;
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

/** The files a walk found, and their real paths when asked for. */
interface Found {
  files: string[];
  reals?: string[];
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
  for (const e of entries) {
    const name = e.name;
    if (name.startsWith('.')) continue;
    const full = join(dir, name);
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
      found.files.push(full);
      // A plain file's real path is its directory's and its name; a link's is resolved.
      found.reals?.push(e.isFile() ? join(real, name) : realOf(full));
    }
  }
}
