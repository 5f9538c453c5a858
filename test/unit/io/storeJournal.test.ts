/** The journal of a replay database: WAL for a replay's own, none on disk for a partition's scratch file; and its page cache. */
import { existsSync, mkdtempSync, openSync, readSync, rmSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ReplayStore, SMALL_PAGE_CACHE_KB } from '../../../src/io/store.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Bytes 18 and 19 of an SQLite file's header: 2 in WAL mode, 1 for a rollback journal. */
function fileFormat(path: string): [number, number] {
  const fd = openSync(path, 'r');
  const b = Buffer.alloc(20);
  readSync(fd, b, 0, 20, 0);
  closeSync(fd);
  return [b[18], b[19]];
}

describe('ReplayStore.open', () => {
  it('keeps a replay database in WAL mode', () => {
    const path = join(dir, 'replay.sqlite');
    const s = ReplayStore.open(path);
    expect(existsSync(`${path}-wal`)).toBe(true);
    s.close();
    expect(fileFormat(path)).toEqual([2, 2]);
  });

  it('writes a scratch database (a partition) with the journal in memory and no WAL, and reopens it in WAL mode', () => {
    const path = join(dir, 'partition.sqlite');
    const s = ReplayStore.open(path, { scratch: true });
    s.transaction(() => s.clearOutputs());
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(existsSync(`${path}-journal`)).toBe(false);
    s.close();
    expect(fileFormat(path)).toEqual([1, 1]);
    const again = ReplayStore.open(path);
    again.close();
    expect(fileFormat(path)).toEqual([2, 2]);
    const d = new Database(path, { readonly: true });
    expect(d.pragma('journal_mode', { simple: true })).toBe('wal');
    d.close();
  });

  it("keeps a small page cache for a partition's connection or when asked, better-sqlite3's default otherwise", () => {
    const cacheOf = (s: ReplayStore): unknown => (s as unknown as { conn: Database.Database }).conn.pragma('cache_size', { simple: true });
    const opened = [
      [ReplayStore.open(join(dir, 'cache-scratch.sqlite'), { scratch: true }), -SMALL_PAGE_CACHE_KB],
      [ReplayStore.open(join(dir, 'cache-asked.sqlite'), { pageCacheKb: 3000 }), -3000],
      [ReplayStore.open(join(dir, 'cache-default.sqlite')), -16000],
    ] as const;
    for (const [s, want] of opened) {
      expect(cacheOf(s)).toBe(want);
      s.close();
    }
  });
});
