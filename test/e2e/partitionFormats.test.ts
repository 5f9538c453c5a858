/**
 * Partitioned replays of every input format (docs/parallel.md): the same generated log, with bad
 * and late lines, as CSV (gzipped) and as an SQLite table, replayed in 3 partitions, gives the
 * serial replay's outputs, table by table, row for row.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { type ParallelProgress, replayParallel } from '../../src/replay/parallel.js';
import { replay, type ReplaySummary } from '../../src/replay/replay.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-formats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = { maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 };
const TABLES: [string, string][] = [
  ['rates', 'rowid'],
  ['ohlc', 'base, quote, period_id, start'],
  ['series', 'base, quote, tick'],
  ['rejects', 'rowid'],
  ['metric_points', 'seq'],
];

function outputs(db: string): Record<string, unknown[]> {
  const d = new Database(db, { readonly: true });
  try {
    const all: Record<string, unknown[]> = {};
    for (const [name, order] of TABLES)
      all[name] = (d.prepare(`SELECT * FROM ${name} ORDER BY ${order}`).all() as Record<string, unknown>[]).map(({ batch: _b, ...r }) => r);
    return all;
  } finally {
    d.close();
  }
}

const spec = { seed: 17, events: 100_000, rate: 0.5, badRate: 0.01, lateRate: 0.01 };

describe.each([
  ['CSV, gzipped', 'log.csv.gz'],
  ['SQLite', 'log.sqlite'],
])('a partitioned replay of %s', (_name, file) => {
  const log = join(dir, file);
  let serial: ReplaySummary;
  let want: Record<string, unknown[]>;
  beforeAll(async () => {
    await writeLog(log, spec);
    const db = join(dir, `serial-${file}.db`);
    serial = await replay({ inputs: [log], db, config, ownMetrics: true });
    want = outputs(db);
  }, 120_000);

  it('equals the serial replay, every table row for row', async () => {
    const db = join(dir, `parallel-${file}.db`);
    let partitions = 0;
    const s = await replayParallel({
      inputs: [log],
      db,
      config,
      ownMetrics: true,
      workers: 3,
      onProgress: (p: ParallelProgress) => {
        if (p.stage === 'partitions') partitions = p.partitions;
      },
    });
    expect(partitions).toBe(3);
    const got = outputs(db);
    for (const [name] of TABLES) expect(got[name], name).toEqual(want[name]);
    expect(want.rates.length).toBeGreaterThan(1000);
    expect(want.rejects.length).toBeGreaterThan(500);
    expect(s.eventsRead).toBe(serial.eventsRead);
    expect(s.rejectsByReason).toEqual(serial.rejectsByReason);
    expect(s.engine.symbols()).toEqual(serial.engine.symbols());
  }, 120_000);
});
