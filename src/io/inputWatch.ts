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
import { expandInputs } from './inputs.js';
import { messageOf, XrateError } from '../core/errors.js';

/** Bytes read at each end of a file for its fingerprint. */
const EDGE_BYTES = 16 * 1024;

interface FileMark {
  path: string;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  fingerprint: string;
}

interface DirMark {
  path: string;
  files: string[];
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

function fingerprint(path: string, size: number): string {
  const h = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(Math.min(EDGE_BYTES, size));
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
  return h.digest('hex');
}

function markFile(path: string): FileMark | undefined {
  try {
    const st = statSync(path);
    if (!st.isFile()) return undefined;
    return { path, dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, fingerprint: fingerprint(path, st.size) };
  } catch {
    // Not there, or not readable: the reader says so when it opens it.
    return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Describes how `now` differs from `was`, or undefined when it does not. */
function fileChange(was: FileMark): string | undefined {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(was.path);
  } catch {
    return `input "${was.path}" was removed while the replay read it`;
  }
  const what: string[] = [];
  if (st.dev !== was.dev || st.ino !== was.ino) what.push('it was replaced by another file');
  if (st.size !== was.size) what.push(`its size went from ${was.size} to ${st.size} bytes`);
  if (st.mtimeMs !== was.mtimeMs)
    what.push(`it was modified at ${new Date(st.mtimeMs).toISOString()} (was ${new Date(was.mtimeMs).toISOString()})`);
  if (what.length === 0 && st.isFile() && fingerprint(was.path, st.size) !== was.fingerprint) what.push('its first or last bytes differ');
  return what.length === 0 ? undefined : `input "${was.path}" changed while the replay read it: ${what.join(', ')}`;
}

function dirChange(was: DirMark): string | undefined {
  let now: string[];
  try {
    now = expandInputs([was.path]);
  } catch (e) {
    return `input directory "${was.path}" changed while the replay read it: ${messageOf(e)}`;
  }
  const before = new Set(was.files);
  const after = new Set(now);
  const added = now.filter((f) => !before.has(f));
  const removed = was.files.filter((f) => !after.has(f));
  if (added.length === 0 && removed.length === 0) return undefined;
  const list = (xs: string[]): string => (xs.length > 3 ? `${xs.slice(0, 3).join(', ')} and ${xs.length - 3} more` : xs.join(', '));
  const what = [added.length > 0 ? `added ${list(added)}` : '', removed.length > 0 ? `removed ${list(removed)}` : ''].filter(
    (s) => s !== '',
  );
  return `the event logs of input directory "${was.path}" changed while the replay read them: ${what.join('; ')}`;
}

/**
 * Marks the inputs of a run: `given` as the user gave them (directories included), `files` the
 * files the run reads (`expandInputs(given)`). Call {@link InputWatch.check} once they have been read.
 *
 * @example
 * ```ts
 * const watch = watchInputs(['logs/'], expandInputs(['logs/']));
 * // ... read them ...
 * watch.check(); // throws `input "logs/a.ndjson" changed while the replay read it: ...`
 * ```
 */
export function watchInputs(given: readonly string[], files: readonly string[]): InputWatch {
  const dirs: DirMark[] = [];
  for (const p of given) if (isDirectory(p)) dirs.push({ path: p, files: expandInputs([p]) });
  const marks: FileMark[] = [];
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f)) continue;
    seen.add(f);
    const m = markFile(f);
    if (m) marks.push(m);
  }
  const changes = (): string[] => {
    const out: string[] = [];
    for (const d of dirs) {
      const c = dirChange(d);
      if (c) out.push(c);
    }
    for (const m of marks) {
      const c = fileChange(m);
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
