/**
 * A run's summary (src/replay/summary.ts): its inputs given as an array, or kept as columns
 * (src/io/pathList.ts) and made an array when first read, give the same summary: the same keys in
 * the same order, the same JSON, a copy by spread, and an array that can be set.
 */
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/core/engine.js';
import { PathList } from '../../../src/io/pathList.js';
import type { RunTotals } from '../../../src/replay/ingest.js';
import { runSummary } from '../../../src/replay/summary.js';

const TOTALS: RunTotals = {
  eventsRead: 3,
  eventsAccepted: 2,
  eventsRejected: 1,
  rejectsByReason: { bad_json: 1 },
  quotesDiscarded: 0,
  ticks: 1,
  firstTick: 1_000_000,
  lastTick: 1_000_000,
  pairsWithRate: 1,
  rateChanges: 1,
  buckets: 2,
};

describe('runSummary', () => {
  it('gives the inputs kept as columns as the array given would be, once read', () => {
    const paths = ['meta.ndjson', 'tree/D-20230701/a.csv.gz', 'tree/D-20230701/b.csv.gz', 'tree/D-20230702/a.csv.gz'];
    const engine = createEngine({});
    const time = { started: 1000, ended: 3000 };
    const flags = { resumed: false, alreadyComplete: false };
    const plain = runSummary(paths, TOTALS, engine, time, flags);
    const columns = runSummary(PathList.of(paths), TOTALS, engine, time, flags);
    expect(Object.keys(columns)).toEqual(Object.keys(plain));
    const { engine: _a, peakRssMb: _b, ...restPlain } = plain;
    const { engine: _c, peakRssMb: _d, ...restColumns } = columns;
    expect(restColumns).toEqual(restPlain);
    expect(columns.inputs).toEqual(paths);
    // Read once: the same array each time after.
    expect(columns.inputs).toBe(columns.inputs);
    expect(JSON.stringify({ ...columns, engine: undefined, peakRssMb: 0 })).toBe(
      JSON.stringify({ ...plain, engine: undefined, peakRssMb: 0 }),
    );
    const other = runSummary(PathList.of(paths), TOTALS, engine, time, flags);
    other.inputs = ['x.ndjson'];
    expect(other.inputs).toEqual(['x.ndjson']);
    expect(Object.keys(other)).toEqual(Object.keys(plain));
  });
});
