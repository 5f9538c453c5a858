/**
 * The inputs of a replay as files: a directory given as an input stands for the event logs under
 * it, read recursively.
 *
 * @module
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { detectFormat } from './source.js';

/** Byte order of two paths (their UTF-8 bytes), the order a directory's files are read in. */
export function comparePaths(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The files of `paths`, in order: a file (or anything that is not a directory) stands for itself;
 * a directory for every event log under it, recursively (symbolic links followed, each directory
 * once), sorted by full path in byte order. A directory's event logs are the files whose name says
 * a format (`.ndjson`, `.jsonl`, `.json`, `.csv`, each optionally `.gz`, and `.sqlite`,
 * `.sqlite3`, `.db`: `detectFormat`); other files are left out, and so are names starting with
 * `.`. A directory with no event log under it is an `xrate:` error.
 *
 * @example
 * ```ts
 * expandInputs(['meta.ndjson', 'T-QUOTES']);
 * // ['meta.ndjson', 'T-QUOTES/D-20230701/E-BINANCE/IDDI-1+SC-BINANCE_SPOT_BTC_USDT+S-BTCUSDT.csv.gz', ...]
 * ```
 */
export function expandInputs(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    let dir = false;
    try {
      dir = statSync(p).isDirectory();
    } catch {
      // Not there: the reader says so when it opens it.
    }
    if (!dir) {
      out.push(p);
      continue;
    }
    const files: string[] = [];
    walk(p, files, new Set());
    if (files.length === 0) {
      throw new Error(
        `xrate: directory "${p}" holds no event log (files named .ndjson, .jsonl, .json, .csv, each optionally .gz, .sqlite, .sqlite3 or .db)`,
      );
    }
    files.sort(comparePaths);
    for (const f of files) out.push(f);
  }
  return out;
}

function walk(dir: string, files: string[], seen: Set<string>): void {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch (e) {
    throw new Error(`xrate: cannot read directory "${dir}": ${(e as Error).message}`);
  }
  if (seen.has(real)) return;
  seen.add(real);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw new Error(`xrate: cannot read directory "${dir}": ${(e as Error).message}`);
  }
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const full = join(dir, name);
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(full);
    } catch {
      continue; // a dangling link
    }
    if (st.isDirectory()) walk(full, files, seen);
    else if (st.isFile() && detectFormat(name) !== undefined) files.push(full);
  }
}
