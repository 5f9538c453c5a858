/**
 * A snapshot's blob (snapshotBlob.ts) stored in parts: the first {@link PART_BYTES} in the
 * `state` of its `snapshots` row, the rest in rows of `snapshot_parts` (`snapshot_id`, `seq` from
 * 1, `data`), read back as their concatenation. SQLite copies a blob it is given, then copies it
 * again into the record it writes: a 42 MB blob inserted whole took 100 MB more at its insert,
 * at the end of a replay, when its memory peaks; in parts of 4 MB, 21 MB.
 *
 * A blob within one part is stored as before, and `snapshot_parts` is created with the first
 * snapshot that needs it: a database whose snapshots are small is the same as before it, and a
 * snapshot written before it reads as it did.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { PART_BYTES, packSnapshotParts } from './snapshotBlob.js';

const PARTS_SCHEMA = `CREATE TABLE IF NOT EXISTS snapshot_parts (
  snapshot_id INTEGER NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY (snapshot_id, seq)
) WITHOUT ROWID`;

/** A snapshot's insert, its id given (null: the next rowid). */
const INSERT =
  'INSERT INTO snapshots(id, run_id, batch, last_tick, input, line, final, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';
const PART_INSERT = 'INSERT INTO snapshot_parts(snapshot_id, seq, data) VALUES (?, ?, ?)';
/** The parts of no snapshot stored (deleted, or never stored: its batch rolled back). */
const DROP_ORPHAN_PARTS = 'DELETE FROM snapshot_parts WHERE snapshot_id NOT IN (SELECT id FROM snapshots)';

function hasParts(db: Database.Database): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'snapshot_parts'`).get() !== undefined;
}

/**
 * Inserts a snapshot row (run id, batch, last tick, input, line, final, blob, created at: the blob
 * a Buffer), its blob in parts when it is larger than one, then deletes all snapshots but the
 * newest two (enough to resume, bounded size) with their parts. With `early`, the blob is its
 * first part alone and the others are stored already, under the id given ({@link insertEarlyPart}).
 */
export function insertSnapshot(db: Database.Database, values: readonly unknown[], early?: number): void {
  const blob = values[6] as Buffer;
  const v = [early ?? null, ...values];
  v[7] = blob.length > PART_BYTES ? blob.subarray(0, PART_BYTES) : blob;
  const id = db.prepare(INSERT).run(v).lastInsertRowid;
  // Parts left by a snapshot that was not stored (its batch rolled back) are not this one's.
  if (early === undefined && hasParts(db)) db.prepare('DELETE FROM snapshot_parts WHERE snapshot_id = ?').run(id);
  if (blob.length > PART_BYTES) {
    db.exec(PARTS_SCHEMA);
    const part = db.prepare(PART_INSERT);
    for (let at = PART_BYTES, seq = 1; at < blob.length; at += PART_BYTES, seq++) part.run(id, seq, blob.subarray(at, at + PART_BYTES));
  }
  db.prepare('DELETE FROM snapshots WHERE id NOT IN (SELECT id FROM snapshots ORDER BY id DESC LIMIT 2)').run();
  if (hasParts(db)) db.prepare(DROP_ORPHAN_PARTS).run();
}

/**
 * Stores part `seq` (from 1) of the blob of the next snapshot, before its row: a writer thread
 * gets the parts as they are made, and the row with its batch (writerWorker.ts). Returns the id
 * the row is to take: the next rowid, as its part 1 is stored (the parts of a snapshot never
 * stored are dropped then). In the writer thread, its own transaction (the row's batch comes after);
 * on a connection (storeSnapshot), the row's.
 */
export function insertEarlyPart(db: Database.Database, part: Buffer, seq: number, id: number | undefined): number {
  if (seq === 1 || id === undefined) {
    db.exec(PARTS_SCHEMA);
    db.prepare(DROP_ORPHAN_PARTS).run();
    id = (db.prepare('SELECT coalesce(max(id), 0) + 1 AS id FROM snapshots').get() as { id: number }).id;
  }
  db.prepare(PART_INSERT).run(id, seq, part);
  return id;
}

/** Where {@link storeSnapshot} writes: a connection, or a writer thread in a batch's job. */
export interface SnapshotTarget {
  /** Part `seq` (from 1) of the blob of the snapshot of the current job, ahead of it. */
  snapshotPart(part: Buffer, seq: number): void;
  /** The snapshot row of the current job (its blob the first part). */
  saveSnapshot(values: unknown[]): void;
}

/**
 * Stores the snapshot of `value` (its blob made by snapshotBlob.ts) with the row `values` (the
 * blob's place, index 6, left empty): on `db` or through `thread`, each part of its blob stored
 * or handed on as it is made, so the blob is never whole in memory.
 */
export function storeSnapshot(to: Database.Database | SnapshotTarget, values: unknown[], value: unknown): void {
  if (!('snapshotPart' in to)) {
    // As the writer thread stores them (writerWorker.ts): each part as it is made, then the row;
    // each part's buffer the next one's (SQLite copies it).
    let early: number | undefined;
    packSnapshotParts(
      value,
      (part, seq) => {
        if (seq === 0) values[6] = part;
        else early = insertEarlyPart(to, part, seq, early);
      },
      { reuse: true },
    );
    insertSnapshot(to, values, early);
    return;
  }
  packSnapshotParts(value, (part, seq) => {
    if (seq === 0) values[6] = part;
    else to.snapshotPart(part, seq);
  });
  to.saveSnapshot(values);
}

/** Deletes every snapshot and its parts. */
export function deleteSnapshots(db: Database.Database): void {
  db.exec('DELETE FROM snapshots');
  if (hasParts(db)) db.exec('DELETE FROM snapshot_parts');
}

/**
 * The blob of snapshot `id` whose `state` is `first`, as a function reading its parts in order:
 * `first`, then the rows of its parts, if any, one at a time (a blob of tens of megabytes is
 * never whole; unpackSnapshot reads them twice).
 */
export function snapshotParts(db: Database.Database, id: number, first: Buffer): () => Iterable<Buffer> {
  if (!hasParts(db)) return () => [first];
  const rows = db.prepare('SELECT data FROM snapshot_parts WHERE snapshot_id = ? ORDER BY seq').pluck();
  return function* () {
    yield first;
    yield* rows.iterate(id) as IterableIterator<Buffer>;
  };
}
