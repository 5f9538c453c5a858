import { describe, expect, it } from 'vitest';
import { parallelProgressLine } from '../../../src/cli/progress.js';
import type { ParallelProgress } from '../../../src/replay/parallel.js';

const base: ParallelProgress = {
  stage: 'partitions',
  partitions: 2,
  done: 1,
  eventsRead: 750,
  eventsToRead: 1000,
  elapsedMs: 5000,
  stageElapsedMs: 3000,
};

describe('parallelProgressLine', () => {
  it('draws one bar over the records all partitions read, with partitions done', () => {
    const line = parallelProgressLine(base, 80);
    expect(line).toHaveLength(80);
    // Rate and ETA over the stage's time (the pre-scan before it read no partition's records).
    expect(line).toMatch(/^\[#+\.+\] 75% 750 ev 250 ev\/s partitions 1\/2 ETA 1s$/);
    const filled = line.indexOf('.') - 1;
    const width = line.indexOf(']') - 1;
    expect(filled / width).toBeCloseTo(0.75, 1);
  });

  it('says so when partitions run again, and never passes 100 %', () => {
    expect(parallelProgressLine({ ...base, stage: 'retrack', partitions: 1, done: 0, eventsRead: 1500 }, 100)).toMatch(
      /\] 100% 1,500 ev 500 ev\/s partitions run again to track more pairs 0\/1 ETA 0s$/,
    );
  });

  it('names the pre-scan and the merge, which have no bar', () => {
    expect(parallelProgressLine({ ...base, stage: 'prescan', elapsedMs: 61_000 }, 80)).toMatch(
      /^reading the inputs to plan the partitions\.\.\. 1m01s/,
    );
    expect(parallelProgressLine({ ...base, stage: 'merge' }, 80)).toMatch(/^merging the partitions\.\.\. 5s/);
  });
});
