/**
 * The API keys of the rate service in SQLite: the `api_keys` table (keys stored as SHA-256 hashes,
 * never in clear) and `api_key_usage` (request cost per key and second, the sliding 24-hour
 * window of the limits). By default they live in the replay database's file.
 *
 * This module holds the statements only; what a key means (rights, JWT material, caching) is the
 * service's `KeyStore`.
 *
 * @module
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { XrateError } from '../core/errors.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS api_keys (
  id INTEGER PRIMARY KEY,
  key_hash TEXT NOT NULL UNIQUE,
  key_prefix TEXT NOT NULL,
  name TEXT NOT NULL,
  rights TEXT NOT NULL,
  request_limit INTEGER NOT NULL,
  overage INTEGER NOT NULL DEFAULT 0,
  concurrency INTEGER NOT NULL,
  jwt_kind TEXT,
  jwt_key TEXT,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS api_key_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS api_key_usage (
  key_id INTEGER NOT NULL,
  second INTEGER NOT NULL,
  cost INTEGER NOT NULL,
  PRIMARY KEY (key_id, second)
) WITHOUT ROWID;
`;

/** A row of `api_keys`. */
export interface KeyRow {
  id: number;
  key_hash: string;
  key_prefix: string;
  name: string;
  rights: string;
  request_limit: number;
  overage: number;
  concurrency: number;
  jwt_kind: string | null;
  jwt_key: string | null;
  created_at: string;
  revoked_at: string | null;
}

/** The columns of a new key. */
export type NewKeyRow = Omit<KeyRow, 'id' | 'jwt_kind' | 'jwt_key' | 'revoked_at'>;

/** A row of `api_key_usage`: the cost charged to a key in one second (unix seconds). */
export interface UsageRow {
  key_id: number;
  second: number;
  cost: number;
}

/**
 * Keys stored before the metrics and symbols families existed listed their rights; one made with
 * every right then listed these five. Such keys are given `all` (every right, the families added
 * since included), once, recorded in `api_key_meta`; a key restricted to some of them stays so.
 */
function migrateRights(db: Database.Database): void {
  const done = db.prepare(`SELECT value FROM api_key_meta WHERE key = 'rights_all'`).get();
  if (done) return;
  db.transaction(() => {
    db.prepare(`UPDATE api_keys SET rights = 'all' WHERE rights = 'rate,rates,periods,history,explain'`).run();
    db.prepare(`INSERT INTO api_key_meta(key, value) VALUES ('rights_all', '1')`).run();
  })();
}

/** The keys database (see the module description). */
export class KeyDatabase {
  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
  ) {}

  /**
   * Opens the file, creating it, its folder and the tables when missing.
   * @throws XrateError when the file cannot be opened
   */
  static open(path: string): KeyDatabase {
    let db: Database.Database;
    try {
      mkdirSync(dirname(resolve(path)), { recursive: true });
      db = new Database(path);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 5000');
      db.exec(SCHEMA);
      migrateRights(db);
    } catch (e) {
      throw new XrateError('input', `cannot open the keys database "${path}": ${(e as Error).message}`);
    }
    return new KeyDatabase(db, path);
  }

  /** Whether the database is still open. */
  get isOpen(): boolean {
    return this.db.open;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** SQLite's `data_version`: it changes when another connection commits to the file. */
  dataVersion(): number {
    return this.db.pragma('data_version', { simple: true }) as number;
  }

  /** Keys not revoked. */
  activeKeys(): KeyRow[] {
    return this.db.prepare('SELECT * FROM api_keys WHERE revoked_at IS NULL').all() as KeyRow[];
  }

  /** Number of keys not revoked. */
  activeCount(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM api_keys WHERE revoked_at IS NULL').get() as { n: number }).n;
  }

  /** Inserts a key; returns its id. */
  insert(k: NewKeyRow): number {
    const r = this.db
      .prepare(
        `INSERT INTO api_keys(key_hash, key_prefix, name, rights, request_limit, overage, concurrency, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(k.key_hash, k.key_prefix, k.name, k.rights, k.request_limit, k.overage, k.concurrency, k.created_at);
    return Number(r.lastInsertRowid);
  }

  /** The id of the key with this id or this hash (active or revoked), or undefined. */
  findId(ref: { id: number } | { hash: string }): number | undefined {
    const r = (
      'id' in ref
        ? this.db.prepare('SELECT id FROM api_keys WHERE id = ?').get(ref.id)
        : this.db.prepare('SELECT id FROM api_keys WHERE key_hash = ?').get(ref.hash)
    ) as { id: number } | undefined;
    return r?.id;
  }

  /** Marks a key revoked at `at`; false when it was already revoked or does not exist. */
  revoke(id: number, at: string): boolean {
    return this.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id).changes > 0;
  }

  /** Sets (or with nulls clears) the JWT verification key of a key. */
  setJwt(id: number, kind: string | null, key: string | null): void {
    this.db.prepare('UPDATE api_keys SET jwt_kind = ?, jwt_key = ? WHERE id = ?').run(kind, key, id);
  }

  /** Every key with the cost charged to it in the seconds after `since`. */
  keysWithUsage(since: number): (KeyRow & { used: number })[] {
    return this.db
      .prepare(
        `SELECT k.*, COALESCE((SELECT SUM(cost) FROM api_key_usage u WHERE u.key_id = k.id AND u.second > ?), 0) AS used
         FROM api_keys k ORDER BY k.id`,
      )
      .all(since) as (KeyRow & { used: number })[];
  }

  /** Usage rows of the seconds after `since`, by key, oldest first. */
  usageSince(since: number): UsageRow[] {
    return this.db
      .prepare('SELECT key_id, second, cost FROM api_key_usage WHERE second > ? ORDER BY key_id, second')
      .all(since) as UsageRow[];
  }

  /** Adds usage and drops the rows of seconds at or before `dropThrough`, in one transaction. */
  addUsage(rows: readonly { keyId: number; second: number; cost: number }[], dropThrough: number): void {
    const up = this.db.prepare(
      'INSERT INTO api_key_usage(key_id, second, cost) VALUES (?, ?, ?) ON CONFLICT(key_id, second) DO UPDATE SET cost = cost + excluded.cost',
    );
    const prune = this.db.prepare('DELETE FROM api_key_usage WHERE second <= ?');
    this.db.transaction(() => {
      for (const r of rows) up.run(r.keyId, r.second, r.cost);
      prune.run(dropThrough);
    })();
  }
}
