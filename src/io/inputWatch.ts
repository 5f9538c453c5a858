/**
 * What a replay relied on in its inputs, taken before it reads them and checked once it has read
 * them: a run whose input changed under it (a file truncated, appended to, rewritten or replaced; a
 * directory whose event logs changed) fails with a message naming the file and what changed,
 * instead of being stored as complete (docs/methodology.md section 1.6).
 *
 * Per file: its identity (device, inode), size, modification time, and a fingerprint of its first
 * and last {@link EDGE_BYTES} bytes (an edit that keeps the size and the time still changes them
 * where a log is written: at its end); per directory given as an input: the list of event logs
 * under it.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { HEAP_CHECK_EVERY } from './heapBudget.js';
import { comparePaths, expandInputs, FNV_BASIS, flatList, fnv } from './inputs.js';
import { PathList, type Paths } from './pathList.js';
import { messageOf, XrateError } from '../core/errors.js';

/** Bytes read at each end of a file for its fingerprint. */
const EDGE_BYTES = 16 * 1024;

interface DirMark {
  path: string;
  files: Paths;
}

/** The inputs of a run as they were when it began (see {@link watchInputs}). */
export interface InputWatch {
  /**
   * What changed since the watch began, one sentence per input that changed (empty: nothing did).
   */
  changes(): string[];
  /** Throws an XrateError naming every input that changed, if any did. */
  check(): void;
}

/**
 * The bytes a fingerprint reads, one buffer for every file (the hash copies what it is given): a
 * merge of tens of thousands of files made a buffer of up to 16 KiB each, hundreds of megabytes of
 * memory waiting for a collection before the replay began.
 */
let edges: Buffer | undefined;

/**
 * The fingerprint of a file's first and last {@link EDGE_BYTES} bytes: the first {@link DIGEST}
 * bytes of their SHA-256.
 */
function fingerprint(path: string, size: number): Buffer {
  const h = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    edges ??= Buffer.allocUnsafe(EDGE_BYTES);
    const buf = edges.subarray(0, Math.min(EDGE_BYTES, size));
    const read = (at: number): void => {
      let n = 0;
      while (n < buf.length) {
        const k = readSync(fd, buf, n, buf.length - n, at + n);
        if (k === 0) break;
        n += k;
      }
      h.update(buf.subarray(0, n));
    };
    read(0);
    if (size > EDGE_BYTES) read(size - buf.length);
  } finally {
    closeSync(fd);
  }
  return h.digest().subarray(0, DIGEST);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Numbers kept of a file: its device, inode, size and modification time. */
const NUMS = 4;
/**
 * Bytes of a fingerprint: 64 bits of the SHA-256 (an edit that keeps a file's size and time goes
 * unseen once in 2^64; the whole hash took 24 bytes more a file, 4.3 MB at 180,000 files).
 */
const DIGEST = 8;

/**
 * The files' marks (identity, size, modification time, fingerprint), in columns: a merge of tens
 * of thousands of files holds one a file, where an object of numbers and a hex text took about 200
 * bytes each.
 */
class FileMarks {
  /** The files marked, the first {@link count}: their indices in `files`. */
  private readonly fileOf: Int32Array;
  /** Files marked. */
  count = 0;
  private readonly nums: Float64Array;
  private readonly digests: Uint8Array;

  /** Room for every one of `files` (a file given twice, or not marked, leaves its room unused). */
  constructor(private readonly files: Paths) {
    const capacity = files.length;
    this.fileOf = new Int32Array(capacity);
    this.nums = new Float64Array(NUMS * capacity);
    this.digests = new Uint8Array(DIGEST * capacity);
  }

  /**
   * Marks file `i` of the files, at `path`; a path that is not there, or not a readable file, is
   * not marked (the reader says so when it opens it).
   */
  add(i: number, path: string): void {
    let nums: number[];
    let digest: Buffer;
    try {
      const st = statSync(path);
      if (!st.isFile()) return;
      nums = [st.dev, st.ino, st.size, st.mtimeMs];
      digest = fingerprint(path, st.size);
    } catch {
      return;
    }
    const k = this.count++;
    this.nums.set(nums, NUMS * k);
    this.digests.set(digest, DIGEST * k);
    this.fileOf[k] = i;
  }

  /** How file `k` differs now from its mark, or undefined when it does not. */
  change(k: number): string | undefined {
    const path = this.files.at(this.fileOf[k]) as string;
    const [dev, ino, size, mtimeMs] = this.nums.subarray(NUMS * k, NUMS * (k + 1));
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(path);
    } catch {
      return `input "${path}" was removed while the replay read it`;
    }
    const what: string[] = [];
    if (st.dev !== dev || st.ino !== ino) what.push('it was replaced by another file');
    if (st.size !== size) what.push(`its size went from ${size} to ${st.size} bytes`);
    if (st.mtimeMs !== mtimeMs)
      what.push(`it was modified at ${new Date(st.mtimeMs).toISOString()} (was ${new Date(mtimeMs).toISOString()})`);
    if (what.length === 0 && st.isFile() && !fingerprint(path, st.size).equals(this.digests.subarray(DIGEST * k, DIGEST * (k + 1))))
      what.push('its first or last bytes differ');
    return what.length === 0 ? undefined : `input "${path}" changed while the replay read it: ${what.join(', ')}`;
  }
}

/** Whether `files` are in the order of comparePaths (a listing given to a replay may not be). */
function inOrder(files: Paths): boolean {
  let before = files.at(0);
  for (let k = 1; k < files.length; k++) {
    const f = files.at(k) as string;
    if (comparePaths(before as string, f) > 0) return false;
    before = f;
  }
  return true;
}

/**
 * The paths met so far among a list's, by a hash of each: a set of the paths themselves held a
 * string of each (the list keeps them as columns: src/io/pathList.ts), 23 MB at 180,000 files.
 */
class SeenPaths {
  /** A hash's first path, as its index in `files`. */
  private readonly first = new Map<number, number>();
  /** The paths met whose hash a path met before them has (a handful, if any). */
  private readonly more = new Set<string>();

  constructor(private readonly files: Paths) {}

  /** Whether `path`, the one at `i` in the list, was met before; it is met from now on. */
  met(i: number, path: string): boolean {
    const h = fnv(FNV_BASIS, path);
    const j = this.first.get(h);
    if (j === undefined) {
      this.first.set(h, i);
      return false;
    }
    if (this.files.at(j) === path || this.more.has(path)) return true;
    this.more.add(path);
    return false;
  }
}

function dirChange(was: DirMark): string | undefined {
  let now: string[];
  try {
    now = expandInputs([was.path]);
  } catch (e) {
    return `input directory "${was.path}" changed while the replay read it: ${messageOf(e)}`;
  }
  // Both listings in the order of comparePaths: compared in one pass (sets of both held every
  // path of a directory of tens of thousands of files twice more).
  const added: string[] = [];
  const removed: string[] = [];
  const before: Paths = inOrder(was.files) ? was.files : flatList([was.files]).sort(comparePaths);
  let i = 0;
  let j = 0;
  let b = before.at(0);
  while (i < before.length || j < now.length) {
    const c = i === before.length ? 1 : j === now.length ? -1 : comparePaths(b as string, now[j]);
    if (c === 0) {
      b = before.at(++i);
      j++;
    } else if (c < 0) {
      removed.push(b as string);
      b = before.at(++i);
    } else added.push(now[j++]);
  }
  if (added.length === 0 && removed.length === 0) return undefined;
  const list = (xs: string[]): string => (xs.length > 3 ? `${xs.slice(0, 3).join(', ')} and ${xs.length - 3} more` : xs.join(', '));
  const what = [added.length > 0 ? `added ${list(added)}` : '', removed.length > 0 ? `removed ${list(removed)}` : ''].filter(
    (s) => s !== '',
  );
  return `the event logs of input directory "${was.path}" changed while the replay read them: ${what.join('; ')}`;
}

/**
 * Marks the inputs of a run: `given` as the user gave them (directories included), `each` the
 * files each of them stands for (`expandEach(given)`: the files the run reads, each directory's
 * listed as the run walked it, not walked again). Call {@link InputWatch.check} once they have
 * been read. `keepHeap` (a replay's heap budget) is called every `HEAP_CHECK_EVERY` files marked
 * or checked (src/io/heapBudget.ts): tens of thousands of files' marks made garbage enough to
 * grow the heap past 150 MB.
 *
 * @example
 * ```ts
 * const watch = watchInputs(['logs/'], expandEach(['logs/']));
 * // ... read them ...
 * watch.check(); // throws `input "logs/a.ndjson" changed while the replay read it: ...`
 * ```
 */
export function watchInputs(given: readonly string[], each: readonly Paths[], keepHeap?: () => void): InputWatch {
  const dirs: DirMark[] = [];
  // A directory's files as the run listed them (a view of the run's list: a merge of tens of
  // thousands of files held each path twice when the watch listed them again).
  given.forEach((p, k) => {
    if (isDirectory(p)) dirs.push({ path: p, files: each[k] });
  });
  // The files listed, in one list (the run's, src/io/pathList.ts), marked once each.
  const files = PathList.concat(each);
  const marks = new FileMarks(files);
  const seen = new SeenPaths(files);
  for (let i = 0; i < files.length; i++) {
    const f = files.at(i) as string;
    if (seen.met(i, f)) continue;
    if ((i + 1) % HEAP_CHECK_EVERY === 0) keepHeap?.();
    marks.add(i, f);
  }
  const changes = (): string[] => {
    const out: string[] = [];
    for (const d of dirs) {
      const c = dirChange(d);
      if (c) out.push(c);
    }
    for (let k = 0; k < marks.count; k++) {
      if (k % HEAP_CHECK_EVERY === HEAP_CHECK_EVERY - 1) keepHeap?.();
      const c = marks.change(k);
      if (c) out.push(c);
    }
    return out;
  };
  return {
    changes,
    check(): void {
      const c = changes();
      if (c.length > 0)
        throw new XrateError('input_changed', `${c.join('; ')}; the run is not complete: replay the inputs again once they are final`);
    },
  };
}
