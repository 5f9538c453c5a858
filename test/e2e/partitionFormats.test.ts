/**
 * Partitioned replays of every input format (docs/parallel.md): the same generated log, with bad
 * and late lines, as CSV (gzipped) and as an SQLite table, replayed in 3 partitions, gives the
 * serial replay's outputs, table by table, row for row.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { type ParallelProgress, replayParallel } from '../../src/replay/parallel.js';
import { replay, type ReplaySummary } from '../../src/replay/replay.js';
import { expectSameOutputs } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-formats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = { maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 };
const spec = { seed: 17, events: 100_000, rate: 0.5, badRate: 0.01, lateRate: 0.01 };

describe.each([
  ['CSV, gzipped', 'log.csv.gz'],
  ['SQLite', 'log.sqlite'],
])('a partitioned replay of %s', (_name, file) => {
  const log = join(dir, file);
  let serial: ReplaySummary;
  const serialDb = join(dir, `serial-${file}.db`);
  beforeAll(async () => {
    await writeLog(log, spec);
    serial = await replay({ inputs: [log], db: serialDb, config, ownMetrics: true });
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
    const rows = expectSameOutputs(db, serialDb);
    expect(rows.rates).toBeGreaterThan(1000);
    expect(rows.rejects).toBeGreaterThan(500);
    expect(rows.metric_points).toBeGreaterThan(1000);
    expect(s.eventsRead).toBe(serial.eventsRead);
    expect(s.rejectsByReason).toEqual(serial.rejectsByReason);
    expect(s.engine.symbols()).toEqual(serial.engine.symbols());
  }, 120_000);
});
