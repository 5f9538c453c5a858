/**
 * A snapshot's blob stored in parts (src/io/snapshotParts.ts): a blob over one part is stored in
 * its row and `snapshot_parts` rows and read back byte for byte, on the store's connection and by
 * its writer thread alike; only the newest two snapshots and their parts are kept; clearing the
 * outputs drops them all; a database whose snapshots fit one part has no `snapshot_parts` table.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { PART_BYTES } from '../../../src/io/snapshotBlob.js';
import { type ReplayCheckpoint, ReplayStore } from '../../../src/io/store.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-snapshot-parts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A checkpoint whose engine holds `bytes` random bytes as hex (gzip cannot shrink them below half). */
function checkpoint(batch: number, bytes: number): ReplayCheckpoint {
  const engine = { lastTick: batch * 1e6, blob: randomBytes(bytes).toString('hex') };
  return { input: 0, line: batch * 10, batch, final: false, engine: engine as never, driver: { n: batch } };
}

function query<T>(path: string, sql: string): T[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

const hasPartsTable = (path: string): boolean => query(path, `SELECT name FROM sqlite_master WHERE name = 'snapshot_parts'`).length === 1;

describe('snapshots stored in parts', () => {
  for (const writerThread of [false, true]) {
    it(`read back whole, the newest two kept with their parts (${writerThread ? 'writer thread' : 'own connection'})`, () => {
      const path = join(dir, `parts-${n++}.sqlite`);
      const s = ReplayStore.open(path, { writerThread });
      const run = s.beginRun(['log'], {}, {}, '2024-01-01T00:00:00Z', false);
      // About 1.3, 2.4 and 1.5 parts of blob (hex of random bytes gzips to about half its length).
      const sizes = [Math.round(PART_BYTES * 1.3), Math.round(PART_BYTES * 2.4), Math.round(PART_BYTES * 1.5)];
      const saved: ReplayCheckpoint[] = [];
      sizes.forEach((bytes, i) => {
        const cp = checkpoint(i + 1, bytes);
        saved.push(cp);
        s.begin();
        s.saveSnapshot(run, cp, '2024-01-01T00:00:00Z');
        s.commit();
        const back = s.latestSnapshot();
        expect(back?.batch).toBe(i + 1);
        expect(back?.engine).toEqual(cp.engine);
        expect(back?.driver).toEqual(cp.driver);
      });
      s.close();
      const rows = query<{ id: number; len: number }>(path, 'SELECT id, length(state) AS len FROM snapshots ORDER BY id');
      expect(rows.map((r) => r.len)).toEqual([PART_BYTES, PART_BYTES]);
      const parts = query<{ snapshot_id: number; seq: number; len: number }>(
        path,
        'SELECT snapshot_id, seq, length(data) AS len FROM snapshot_parts ORDER BY snapshot_id, seq',
      );
      // Only the kept snapshots' parts, numbered from 1, all full but each snapshot's last.
      expect([...new Set(parts.map((p) => p.snapshot_id))]).toEqual(rows.map((r) => r.id));
      for (const r of rows) {
        const own = parts.filter((p) => p.snapshot_id === r.id);
        expect(own.map((p) => p.seq)).toEqual(own.map((_p, k) => k + 1));
        expect(own.slice(0, -1).every((p) => p.len === PART_BYTES)).toBe(true);
      }
      // Read on a read-only connection, as `xrate serve --db` does.
      const ro = ReplayStore.open(path, { readonly: true });
      expect(ro.latestSnapshot()?.engine).toEqual(saved[2].engine);
      ro.close();
      const again = ReplayStore.open(path, { writerThread });
      again.begin();
      again.clearOutputs(run);
      again.commit();
      again.close();
      expect(query(path, 'SELECT 1 FROM snapshots')).toEqual([]);
      expect(query(path, 'SELECT 1 FROM snapshot_parts')).toEqual([]);
    });
  }

  it("of a batch rolled back are not another snapshot's, whatever its size (writer thread)", () => {
    const path = join(dir, `rollback-${n++}.sqlite`);
    const s = ReplayStore.open(path, { writerThread: true });
    const run = s.beginRun(['log'], {}, {}, '2024-01-01T00:00:00Z', false);
    for (const [bytes, rolledBack] of [
      [PART_BYTES * 2, true],
      [1000, false],
      [PART_BYTES * 3, true],
      [Math.round(PART_BYTES * 1.2), false],
    ] as const) {
      const cp = checkpoint(bytes, bytes);
      s.begin();
      s.saveSnapshot(run, cp, '2024-01-01T00:00:00Z');
      if (rolledBack) {
        s.rollback();
        continue;
      }
      s.commit();
      expect(s.latestSnapshot()?.engine).toEqual(cp.engine);
    }
    s.close();
    const ids = query<{ id: number }>(path, 'SELECT id FROM snapshots ORDER BY id').map((r) => r.id);
    const owners = query<{ snapshot_id: number }>(path, 'SELECT DISTINCT snapshot_id FROM snapshot_parts').map((r) => r.snapshot_id);
    expect(owners.every((o) => ids.includes(o))).toBe(true);
  });

  it('are not made for a snapshot of one part: no snapshot_parts table', () => {
    const path = join(dir, `small-${n++}.sqlite`);
    const s = ReplayStore.open(path);
    const run = s.beginRun(['log'], {}, {}, '2024-01-01T00:00:00Z', false);
    const cp = checkpoint(1, 1000);
    s.begin();
    s.saveSnapshot(run, cp, '2024-01-01T00:00:00Z');
    s.commit();
    expect(s.latestSnapshot()?.engine).toEqual(cp.engine);
    s.close();
    expect(hasPartsTable(path)).toBe(false);
  });
});
