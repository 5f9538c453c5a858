/**
 * The schema of the replay database (store.ts): its tables and indexes, the columns added to it
 * since the first version (the rows of `runs` and `rates` as read back: storeTypes.ts).
 *
 * @module
 */
import { hostname } from 'node:os';
import type Database from 'better-sqlite3';
import { METRIC_SCHEMA, METRIC_TABLES } from './metricStore.js';
import { POSITION_SCHEMA, POSITION_TABLES } from './positionStore.js';

/** The tables a replay writes, each row with its batch (cleared by a new replay, cut back by a resume). */
export const OUTPUT_TABLES = ['rates', 'ohlc', 'series', 'rejects', ...METRIC_TABLES, ...POSITION_TABLES];

/** Version of the schema below, kept in `meta`. */
const SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL,
  inputs TEXT NOT NULL,
  config TEXT NOT NULL,
  options TEXT NOT NULL,
  events_read INTEGER, events_accepted INTEGER, events_rejected INTEGER,
  rejects_by_reason TEXT, quotes_discarded INTEGER,
  ticks INTEGER, first_tick INTEGER, last_tick INTEGER,
  pairs_with_rate INTEGER, rate_changes INTEGER, buckets INTEGER,
  duration_ms REAL, resumed INTEGER NOT NULL DEFAULT 0,
  stopped INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS rates (
  tick INTEGER NOT NULL, base TEXT NOT NULL, quote TEXT NOT NULL,
  rate REAL, time INTEGER, rank REAL, used INTEGER NOT NULL, fresh INTEGER NOT NULL,
  volume REAL NOT NULL DEFAULT 0, batch INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS rates_pair_tick ON rates(base, quote, tick);
CREATE TABLE IF NOT EXISTS ohlc (
  base TEXT NOT NULL, quote TEXT NOT NULL, period_id TEXT NOT NULL,
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, time_open INTEGER NOT NULL, time_close INTEGER NOT NULL,
  open REAL NOT NULL, high REAL NOT NULL, low REAL NOT NULL, close REAL NOT NULL, count INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  PRIMARY KEY (base, quote, period_id, start)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS series (
  base TEXT NOT NULL, quote TEXT NOT NULL, tick INTEGER NOT NULL, rate REAL,
  follow INTEGER NOT NULL DEFAULT 0, batch INTEGER NOT NULL,
  PRIMARY KEY (base, quote, tick)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rejects (
  input INTEGER NOT NULL, source TEXT NOT NULL, line INTEGER NOT NULL,
  reason TEXT NOT NULL, message TEXT NOT NULL, raw TEXT NOT NULL, batch INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshots (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, batch INTEGER NOT NULL,
  last_tick INTEGER, input INTEGER NOT NULL, line INTEGER NOT NULL,
  final INTEGER NOT NULL, state BLOB NOT NULL, created_at TEXT NOT NULL
);
`;

/** Columns added after the first schema: added in place to a database written before. */
function migrate(db: Database.Database): void {
  const has = (table: string, col: string): boolean =>
    (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).some((c) => c.name === col);
  if (!has('runs', 'stopped')) db.exec('ALTER TABLE runs ADD COLUMN stopped INTEGER NOT NULL DEFAULT 0');
  if (!has('rates', 'volume')) db.exec('ALTER TABLE rates ADD COLUMN volume REAL NOT NULL DEFAULT 0');
  if (!has('runs', 'pid')) db.exec('ALTER TABLE runs ADD COLUMN pid INTEGER');
  if (!has('runs', 'host')) db.exec('ALTER TABLE runs ADD COLUMN host TEXT');
  if (!has('series', 'follow')) db.exec('ALTER TABLE series ADD COLUMN follow INTEGER NOT NULL DEFAULT 0');
}

/**
 * Creates what a replay database lacks of the schema (tables, indexes, the columns added since)
 * and records the schema version, in a database opened for writing.
 */
export function createSchema(db: Database.Database): void {
  db.exec(SCHEMA);
  db.exec(METRIC_SCHEMA);
  db.exec(POSITION_SCHEMA);
  migrate(db);
  db.prepare(`INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)`).run(String(SCHEMA_VERSION));
}

/**
 * Whether a run marked `running` is known to have died: it was started on this machine by a
 * process that no longer exists (killed, or crashed without closing its run). Unknown (another
 * machine, no pid recorded) counts as alive.
 */
export function runIsDead(run: { status: string; pid?: number | null; host?: string | null }): boolean {
  if (run.status !== 'running' || run.pid === null || run.pid === undefined || run.host !== hostname()) return false;
  if (run.pid === process.pid) return false;
  try {
    process.kill(run.pid, 0);
    return false;
  } catch (e) {
    return (e as { code?: string }).code === 'ESRCH';
  }
}
