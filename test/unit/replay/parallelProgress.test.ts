/** The progress of a partitioned replay: stages in order, and a bar whose total is what the partitions read. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../../scripts/gen-log.js';
import { type ParallelProgress, type PartitionResult, replayParallel, runPartitionHere } from '../../../src/replay/parallel.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-parallel-progress-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('replayParallel progress', () => {
  it('reports the pre-scan, the partitions and the merge; the records to read are what the partitions read', async () => {
    const log = join(dir, 'log.ndjson');
    await writeLog(log, { seed: 4, events: 12_000, rate: 0.2 });
    const seen: ParallelProgress[] = [];
    const results: PartitionResult[] = [];
    let t = 0;
    await replayParallel({
      inputs: [log],
      db: join(dir, 'out.sqlite'),
      config: { maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 },
      workers: 2,
      run: async (job, progress) => {
        const r = await runPartitionHere(job, progress);
        results.push(r);
        return r;
      },
      onProgress: (p) => seen.push(p),
      progressEveryMs: 0,
      now: () => (t += 10),
    });
    const stages = seen.map((p) => p.stage).filter((s, i, a) => s !== a[i - 1]);
    expect(stages[0]).toBe('prescan');
    expect(stages[1]).toBe('partitions');
    expect(stages.at(-1)).toBe('merge');
    const parts = seen.filter((p) => p.stage === 'partitions');
    expect(parts[0]).toMatchObject({ partitions: 2, done: 0, eventsRead: 0 });
    const end = parts.at(-1)!;
    expect(end.done).toBe(2);
    expect(end.eventsRead).toBe(end.eventsToRead);
    // Reads in between, never past the total.
    expect(parts.some((p) => p.eventsRead > 0 && p.done === 0)).toBe(true);
    for (let i = 1; i < parts.length; i++) expect(parts[i].eventsRead).toBeLessThanOrEqual(parts[i].eventsToRead);
    // The pre-scan's count of the records each partition reads is their true count, to the minute.
    const read = results.slice(0, 2).reduce((a, r) => a + r.eventsRead, 0);
    expect(Math.abs(end.eventsToRead - read) / read).toBeLessThan(0.01);
  }, 60_000);
});
