/**
 * A partitioned replay whose partitions' final snapshots hold their trade bins as large strings
 * (src/io/snapshotBlob.ts: over LARGE_STRING characters of base64, stored apart): the earlier
 * partitions keep none in their final snapshots, the merge reads the last partition's bins once
 * the rows are merged (src/replay/parallel.ts); the outputs, final snapshot included, are the
 * serial replay's.
 */
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../scripts/gen-log.js';
import { PackedBytes } from '../../src/core/packedBytes.js';
import { LARGE_STRING } from '../../src/io/snapshotBlob.js';
import { ReplayStore } from '../../src/io/store.js';
import { ReplayDatabase } from '../../src/replay/database.js';
import { type PartitionRunner, replayParallel, runPartitionHere } from '../../src/replay/parallel.js';
import { replay, type ReplaySummary } from '../../src/replay/replay.js';
import { expectSameOutputs, SUMMARY_COUNTS } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-large-bins-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// 1.3 M events at 100 a second over 258 markets: 3.6 hours, whose final day of bins is about
// 1.1 MB (1.5 M characters of base64 in the cold bins). Cut 3 hours in, the first partition's
// cold bins (2 hours) would be a large string too; it is told to keep none.
const log = join(dir, 'log.ndjson');
let serial: ReplaySummary;
const spec = { seed: 5, events: 1_300_000, rate: 100, exchanges: 12, assets: 20 };

/** The final snapshot's cold trade bins in `db`, as they are stored (a large string: packed bytes). */
function coldBins(db: string): PackedBytes | string | undefined {
  const store = ReplayStore.open(db);
  try {
    const bins = store.latestSnapshot(undefined, { packed: true })?.engine.symbols?.bins;
    return bins === undefined || Array.isArray(bins) ? undefined : bins.cold;
  } finally {
    store.close();
  }
}

/** The trade bins' spill files this process holds open (unlinked at once: src/io/binSpill.ts), by name. */
function spillFiles(): Set<string> {
  const open = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.includes('xrate-bins-')) open.add(target);
    } catch {
      // closed meanwhile
    }
  }
  return open;
}

/** The spill a spill file is of: its name but the segment's number (xrate-bins-PID-SPILL-SEGMENT.tmp). */
function spillOf(file: string): string {
  return file.replace(/-\d+\.tmp.*$/, '');
}

/** Three hours after the first tick. */
const CUT = (): number => serial.firstTick! + 3 * 3_600_000_000;

describe('a partitioned replay whose final trade bins are large strings', () => {
  const serialDb = join(dir, 'serial.db');
  beforeAll(async () => {
    await writeLog(log, spec);
    serial = await replay({ inputs: [log], db: serialDb });
  }, 300_000);

  it('equals the serial replay, its final snapshot and engine included', async () => {
    const cold = coldBins(serialDb);
    expect(cold).toBeInstanceOf(PackedBytes);
    expect((cold as PackedBytes).base64Length).toBeGreaterThan(LARGE_STRING);
    const db = join(dir, 'parallel.db');
    const before = spillFiles();
    // The default runner, each partition's cold bins measured in its database as it returns.
    const sizes: number[] = [];
    const run: PartitionRunner = async (job, progress) => {
      const result = await runPartitionHere(job, progress);
      const c = coldBins(job.db);
      sizes[job.index] = c instanceof PackedBytes ? c.base64Length : (c?.length ?? 0);
      return result;
    };
    const s = await replayParallel({ inputs: [log], db, workers: 2, cuts: [CUT()], run });
    // The first partition's final snapshot keeps no trade bins (the final engine's are the last one's).
    expect(sizes).toHaveLength(2);
    expect(sizes[0]).toBe(0);
    expect(sizes[1]).toBeGreaterThan(LARGE_STRING);
    expectSameOutputs(db, serialDb);
    for (const k of SUMMARY_COUNTS) expect(s[k], k).toEqual(serial[k]);
    expect(s.engine.symbols()).toEqual(serial.engine.symbols());
    expect(s.engine.snapshot()).toEqual(serial.engine.snapshot());
    // The merge read the last partition's bins into spill files of their own (src/io/binSpill.ts),
    // closed once the final engine was restored: what is left open is that engine's spill alone.
    expect(new Set([...spillFiles()].filter((f) => !before.has(f)).map(spillOf)).size).toBeLessThanOrEqual(1);
    // Restored from the final snapshot as `xrate serve --db` and a resumed replay restore it (its
    // bins read into spill files too): the same engine.
    const served = ReplayDatabase.open(db);
    try {
      expect(served.restoreFinalEngine().snapshot()).toEqual(serial.engine.snapshot());
    } finally {
      served.close();
    }
    const resumed = await replay({ inputs: [log], db, resume: true });
    expect(resumed.alreadyComplete).toBe(true);
    expect(resumed.engine.snapshot()).toEqual(serial.engine.snapshot());
  }, 300_000);

  it("closes each partition's spill files as it ends", async () => {
    const before = spillFiles();
    const left: number[] = [];
    const opened = new Set<string>();
    // One partition at a time, in this process: the files each one opened, and those still open as it returns.
    const run: PartitionRunner = async (job, progress) => {
      const result = await runPartitionHere(job, (n) => {
        for (const f of spillFiles()) if (!before.has(f)) opened.add(f);
        progress?.(n);
      });
      left.push([...spillFiles()].filter((f) => !before.has(f)).length);
      return result;
    };
    await replayParallel({ inputs: [log], db: join(dir, 'closed.db'), workers: 1, cuts: [CUT()], run });
    expect(opened.size).toBeGreaterThan(0);
    expect(left).toEqual([0, 0]);
  }, 300_000);

  it('reads a partition snapshot whole when it holds another large string', async () => {
    const db = join(dir, 'odd.db');
    const note = 'n'.repeat(LARGE_STRING + 1);
    // The last partition's final snapshot given a large string besides its bins, which the merge carries into the final engine.
    const run: PartitionRunner = async (job, progress) => {
      const result = await runPartitionHere(job, progress);
      if (job.index === 1) {
        const store = ReplayStore.open(job.db);
        try {
          const cp = store.latestSnapshot(undefined, { packed: true })!;
          (cp.engine as unknown as Record<string, unknown>).note = note;
          store.transaction(() => store.saveSnapshot(1, cp, new Date(0).toISOString()));
        } finally {
          store.close();
        }
      }
      return result;
    };
    await replayParallel({ inputs: [log], db, workers: 2, cuts: [CUT()], run });
    expectSameOutputs(db, serialDb, ['rates', 'ohlc', 'rejects']);
    const store = ReplayStore.open(db);
    try {
      expect((store.latestSnapshot()!.engine as unknown as Record<string, unknown>).note).toBe(note);
    } finally {
      store.close();
    }
  }, 300_000);
});
