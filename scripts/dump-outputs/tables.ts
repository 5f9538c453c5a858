/**
 * Every table of a SQLite file written out as text, one file per table, rows ordered by all their
 * columns, with the columns that hold wall-clock or machine values replaced by a token.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { WALL } from './normalise.js';

/**
 * Columns whose values are the wall clock or the machine (src/io/store.ts, src/io/keyDb.ts):
 * masked whatever they hold. Keys are random: their hash and prefix are masked too.
 */
const MASKED: Record<string, readonly string[]> = {
  runs: ['started_at', 'finished_at', 'duration_ms', 'pid', 'host'],
  snapshots: ['created_at'],
  api_keys: ['key_hash', 'key_prefix', 'created_at', 'revoked_at'],
  api_key_usage: ['second'],
};

/** Blobs up to this many bytes are written in hex; longer ones as their length and SHA-256. */
const HEX_MAX = 2048;

function cell(v: unknown, norm: (s: string) => string): string {
  if (v === null) return 'NULL';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? `${v}.0` : String(v);
  if (typeof v === 'string') return JSON.stringify(norm(v));
  if (Buffer.isBuffer(v)) {
    if (v.length <= HEX_MAX) return `x'${v.toString('hex')}'`;
    return `blob(${v.length} bytes, sha256 ${createHash('sha256').update(v).digest('hex')})`;
  }
  return JSON.stringify(v);
}

/**
 * Writes `DIR/<table>.txt` for every table of the database at `path`; returns the table names.
 *
 * @example
 * ```ts
 * dumpTables('out/xrate.sqlite', 'dump/db/demo', (s) => s);
 * ```
 */
export function dumpTables(path: string, dir: string, norm: (s: string) => string): string[] {
  mkdirSync(dir, { recursive: true });
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").all() as { name: string }[]).map(
      (t) => t.name,
    );
    for (const table of tables) {
      const cols = (db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((c) => c.name);
      const masked = new Set(MASKED[table] ?? []);
      const order = cols.map((_c, i) => String(i + 1)).join(', ');
      const stmt = db.prepare(`SELECT * FROM "${table}" ORDER BY ${order}`).raw(true).safeIntegers(true);
      const lines = [`# ${table}: ${cols.join(' | ')}${masked.size > 0 ? ` (masked: ${[...masked].join(', ')})` : ''}`];
      let n = 0;
      for (const row of stmt.iterate() as Iterable<unknown[]>) {
        lines.push(row.map((v, i) => (masked.has(cols[i]) && v !== null ? WALL : cell(v, norm))).join(' | '));
        n++;
      }
      lines.push(`# ${n} rows`);
      writeFileSync(join(dir, `${table}.txt`), `${lines.join('\n')}\n`);
    }
    return tables;
  } finally {
    db.close();
  }
}
