/**
 * The replay driver (src/replay/driver.ts) gives the same outputs whatever its batches and however
 * often it is killed and resumed: a log read in random batch sizes, snapshotted at a random cadence,
 * abandoned after random numbers of batches (as a `kill -9` would leave its database) and resumed
 * from the newest snapshot each time, writes the rows of one straight run (rates, OHLC, rejects,
 * the run's counts) and leaves an engine with the same rates; with or without a reorder window,
 * `from` and `to`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { PairRateChange } from '../../src/core/engine.js';
import { US_PER_SECOND } from '../../src/core/time.js';
import { compareReplays } from '../../src/io/compareReplays.js';
import type { SourceRecord } from '../../src/io/source.js';
import { ReplayStore } from '../../src/io/store.js';
import { Driver } from '../../src/replay/driver.js';
import { newReplayState, type ReplayState } from '../../src/replay/driverState.js';
import type { RecordSource } from '../../src/replay/recordSource.js';
import { DEFAULT_STORED_PERIODS } from '../../src/core/periods.js';
import { EventTimeTicks } from '../../src/replay/ticks.js';
import { type Log, logArb } from './arbitraries.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-driver-prop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** The log's events as records of input 0 (every 37th followed by a late repeat of an earlier one). */
function recordsOf(log: Log): SourceRecord[] {
  const out: SourceRecord[] = [];
  log.events.forEach((event, i) => {
    out.push({ line: out.length + 1, raw: `event ${i}`, event });
    if (i >= 5 && i % 37 === 0) out.push({ line: out.length + 1, raw: `late ${i - 5}`, event: log.events[i - 5] });
  });
  return out;
}

/** Records from index `start` on, in batches of the given sizes in turn (cycled), at most `limit` batches. */
function scripted(recs: readonly SourceRecord[], start: number, sizes: readonly number[], limit = Infinity): RecordSource {
  return {
    async *batches() {
      let k = 0;
      for (let i = start; i < recs.length && k < limit; k++) {
        const batch = recs.slice(i, i + sizes[k % sizes.length]);
        i += batch.length;
        yield {
          feed(sink) {
            let line = 0;
            for (const r of batch) {
              line = r.line;
              if (!sink.record(r, 0)) break;
            }
            return { input: 0, line };
          },
        };
      }
    },
  };
}

interface Plan {
  from?: number;
  to?: number;
  reorderWindowUs: number;
  snapshotEveryUs?: number;
}

/**
 * One life of a replay into `db`: resumed from its newest snapshot if it has one, reading at most
 * `limit` batches; one that reads to the end (or stops at `to`) finishes the run. The final rates
 * when it finished (or found the run complete).
 */
async function life(db: string, log: Log, recs: readonly SourceRecord[], sizes: readonly number[], plan: Plan, limit = Infinity) {
  const store = ReplayStore.open(db);
  try {
    const cp = store.latestSnapshot();
    const st: ReplayState = cp ? (cp.driver as ReplayState) : newReplayState();
    const driver = new Driver({
      inputs: ['log'],
      state: st,
      marks: st,
      windowState: st,
      reorderWindowUs: plan.reorderWindowUs,
      resume: cp,
      config: log.config,
      store,
      clear: 'first-batch',
      from: plan.from,
      periods: DEFAULT_STORED_PERIODS,
      snapshotEveryUs: plan.snapshotEveryUs,
      ticks: new EventTimeTicks({ to: plan.to }),
      now: () => 0,
      started: 0,
    });
    // Already complete (a life that stopped at `to`): its engine, as replay() answers then.
    if (cp?.final) return driver.engine.pairs() as PairRateChange[];
    driver.beginRun({});
    driver.start();
    let read = 0;
    await driver.consume(scripted(recs, cp ? cp.line : 0, sizes, limit), () => read++);
    if (read >= limit && !driver.stopped) return undefined; // killed: the database as it was left
    driver.finish();
    driver.finishRun(driver.ingest.totals(), 0);
    return driver.engine.pairs() as PairRateChange[];
  } finally {
    store.close();
  }
}

describe('the driver, straight or in pieces', () => {
  it('random batches, snapshots and kills with resumes give the outputs of one straight run', async () => {
    await fc.assert(
      fc.asyncProperty(
        logArb({ maxSteps: 150 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 3 }),
        fc.constantFrom(undefined, 1, 5, 30, 120),
        fc.constantFrom(0, 0, 2),
        fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
        fc.option(fc.double({ min: 0, max: 1.2, noNaN: true }), { nil: undefined }),
        async (log, sizes, kills, snapSeconds, windowSeconds, fromAt, toAt) => {
          const span = log.end - log.first;
          const plan: Plan = {
            reorderWindowUs: windowSeconds * US_PER_SECOND,
            snapshotEveryUs: snapSeconds === undefined ? undefined : snapSeconds * US_PER_SECOND,
            from: fromAt === undefined ? undefined : Math.ceil((log.first + fromAt * span) / US_PER_SECOND) * US_PER_SECOND,
            to: toAt === undefined ? undefined : Math.floor((log.first + toAt * span) / US_PER_SECOND) * US_PER_SECOND,
          };
          const recs = recordsOf(log);
          const straight = join(dir, `straight-${++n}.sqlite`);
          const pieces = join(dir, `pieces-${n}.sqlite`);
          try {
            const whole = await life(straight, log, recs, [4096], { ...plan, snapshotEveryUs: undefined });
            for (const k of kills) await life(pieces, log, recs, sizes, plan, k);
            const last = await life(pieces, log, recs, [...sizes].reverse(), plan);
            const differ = compareReplays(straight, pieces).filter((t) => t.difference !== undefined);
            expect(differ).toEqual([]);
            expect(JSON.stringify(last)).toBe(JSON.stringify(whole));
          } finally {
            for (const db of [straight, pieces]) for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
          }
        },
      ),
      { seed: 42, numRuns: 60 },
    );
  });
});
