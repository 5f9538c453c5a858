/**
 * The replay driver (src/replay/driver.ts) fed by a scripted in-memory record source: in event time
 * it writes what `replay()` writes from the same log, row for row, whatever the batches (with
 * `from`/`to`, a reorder window, snapshots), and a partition makes the same reports from columns as
 * from records; on the wall clock it ticks through the injected clock
 * minus the lag, and not while the log's event time is far behind it (warned once).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../../scripts/gen-log.js';
import { US_PER_SECOND } from '../../../src/core/time.js';
import { compareReplays } from '../../../src/io/compareReplays.js';
import { TimeCache } from '../../../src/io/fastNdjson.js';
import { LineLimit } from '../../../src/io/lineLimit.js';
import { lineRecord } from '../../../src/io/ndjson.js';
import type { SourceRecord } from '../../../src/io/source.js';
import { ReplayStore } from '../../../src/io/store.js';
import { Driver } from '../../../src/replay/driver.js';
import { newFollowState, newReplayState } from '../../../src/replay/driverState.js';
import { PartitionRun, type PartitionStart } from '../../../src/replay/partitionRun.js';
import type { PolledSource, RecordSource, SourceBatch } from '../../../src/replay/recordSource.js';
import { DEFAULT_STORED_PERIODS } from '../../../src/core/periods.js';
import { type ReplaySummary, replay } from '../../../src/replay/replay.js';
import { EventTimeTicks, WallClockTicks } from '../../../src/replay/ticks.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-driver-'));
const LOG = join(dir, 'log.ndjson');
const CONFIG = { maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 };
let records: SourceRecord[] = [];
let n = 0;

beforeAll(async () => {
  await writeLog(LOG, { seed: 11, events: 6000, rate: 0.2 });
  // Rejects too: a line that is no JSON, and a line repeated late, every 500 lines.
  const lines = readFileSync(LOG, 'utf8').split('\n');
  const text = lines.map((l, i) => (i > 0 && i % 500 === 0 ? `{not json\n${l}\n${lines[i - 300]}` : l)).join('\n');
  writeFileSync(LOG, text);
  records = readRecords(text);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The records of an NDJSON text, as the readers make them. */
function readRecords(text: string): SourceRecord[] {
  const out: SourceRecord[] = [];
  const limit = new LineLimit(1 << 20);
  const times = new TimeCache();
  let start = 0;
  for (let line = 1; start < text.length; line++) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    const rec = lineRecord(text, start, end, line, limit, times);
    if (rec !== undefined) out.push(rec);
    start = end + 1;
  }
  return out;
}

/** A batch of records of input 0. */
function batchOf(recs: readonly SourceRecord[]): SourceBatch {
  return {
    feed(sink) {
      let line = 0;
      for (const r of recs) {
        line = r.line;
        if (!sink.record(r, 0)) break;
      }
      return { input: 0, line };
    },
  };
}

/** The records in batches of the given sizes, in turn (the last size repeats). */
function scripted(recs: readonly SourceRecord[], sizes: readonly number[]): RecordSource {
  return {
    async *batches() {
      let k = 0;
      for (let i = 0; i < recs.length; k++) {
        const size = sizes[Math.min(k, sizes.length - 1)];
        yield batchOf(recs.slice(i, i + size));
        i += size;
      }
    },
  };
}

interface RunOptions {
  from?: number;
  to?: number;
  reorderWindowUs?: number;
  snapshotEveryUs?: number;
}

/** A replay composed by hand: the driver over the scripted source, into `db`. */
async function driverRun(db: string, sizes: readonly number[], o: RunOptions): Promise<void> {
  const store = ReplayStore.open(db);
  try {
    const st = newReplayState();
    const driver = new Driver({
      inputs: [LOG],
      state: st,
      marks: st,
      windowState: st,
      reorderWindowUs: o.reorderWindowUs,
      config: CONFIG,
      store,
      // As replay() does when it writes a database.
      ownMetrics: true,
      clear: 'first-batch',
      from: o.from,
      periods: DEFAULT_STORED_PERIODS,
      snapshotEveryUs: o.snapshotEveryUs,
      ticks: new EventTimeTicks({ to: o.to }),
      now: () => 0,
      started: 0,
    });
    driver.beginRun({});
    driver.start();
    await driver.consume(scripted(records, sizes));
    driver.finish();
    driver.finishRun(driver.ingest.totals(), 0);
  } finally {
    store.close();
  }
}

/** The tables that differ between replay() and the driver run with the same options; the rows replay() wrote by table. */
async function differences(sizes: readonly number[], o: RunOptions): Promise<{ differ: string[]; rows: Record<string, number> }> {
  const a = join(dir, `replay-${++n}.sqlite`);
  const b = join(dir, `driver-${n}.sqlite`);
  await replay({ inputs: [LOG], db: a, config: CONFIG, batchSize: 1000, ...o });
  await driverRun(b, sizes, o);
  const tables = compareReplays(a, b);
  return {
    differ: tables.filter((t) => t.difference !== undefined).map((t) => `${t.table}: ${JSON.stringify(t.difference)}`),
    rows: Object.fromEntries(tables.map((t) => [t.table, t.rows[0]])),
  };
}

/** The time of the record at index `i` (a valid event's). */
function timeAt(i: number): number {
  for (let k = i; k < records.length; k++) {
    const e = records[k].event;
    if (e !== undefined) return e.time;
    const t = records[k].record?.time;
    if (typeof t === 'string') return Date.parse(t) * 1000;
  }
  throw new Error('no time');
}

describe('the driver in event time', () => {
  it('writes what replay() writes, in batches of any size', async () => {
    expect(records.length).toBeGreaterThan(5000);
    const { differ, rows } = await differences([1, 7, 300, 4096], {});
    expect(differ).toEqual([]);
    expect(rows.rates).toBeGreaterThan(100);
    expect(rows.rejects).toBeGreaterThan(0);
  });

  it('with from and to: warm-up, output from the cut, the stop at to', async () => {
    const from = Math.ceil(timeAt(1500) / US_PER_SECOND) * US_PER_SECOND;
    const to = Math.floor(timeAt(4500) / US_PER_SECOND) * US_PER_SECOND;
    const { differ, rows } = await differences([250, 33], { from, to, snapshotEveryUs: 600 * US_PER_SECOND });
    expect(differ).toEqual([]);
    expect(rows.rates).toBeGreaterThan(0);
    expect(rows.runs).toBe(1);
  });

  it('through a reorder window, with snapshots', async () => {
    const { differ, rows } = await differences([999, 5], { reorderWindowUs: 2 * US_PER_SECOND, snapshotEveryUs: 300 * US_PER_SECOND });
    expect(differ).toEqual([]);
    expect(rows.rates).toBeGreaterThan(100);
  });
});

describe("a partition's reports", () => {
  it('are the same whether its rows come as columns (replay) or as records', async () => {
    // Where later windows would start: quote and trade lines (the log has bad and late lines).
    const at = [1000, 2503, 4000].map((i) => ({ input: 0, line: records[i].line }));
    expect(at.map((p) => records.find((r) => r.line === p.line)?.event?.type)).toEqual(
      at.map(() => expect.stringMatching(/^(quote|trade)$/)),
    );
    const part: PartitionStart = { start: { input: 0, line: 0 }, metadata: [], reportAt: at };
    const columns = await replay({ inputs: [LOG], config: CONFIG, batchSize: 1000, partition: part });
    // The same partition through the driver, record by record.
    const st = newReplayState();
    const partition = new PartitionRun(part, false);
    const driver = new Driver({
      inputs: [LOG],
      state: st,
      marks: st,
      windowState: st,
      config: CONFIG,
      clear: 'first-batch',
      periods: DEFAULT_STORED_PERIODS,
      ticks: new EventTimeTicks({}),
      partition,
      now: () => 0,
      started: 0,
    });
    driver.start();
    await driver.consume(scripted(records, [333]));
    driver.finish();
    const byRecords = {} as ReplaySummary;
    partition.summarize(byRecords, driver.ingest, st.eventsRead, st.stopped);
    expect(columns.carried?.map((c) => c.at)).toEqual(at);
    expect(columns.carried).toEqual(byRecords.carried);
    // Each report is the state at its own line: the clock moves on from one to the next.
    const clocks = columns.carried!.map((c) => c.clockUs!);
    expect(clocks[0]).toBeLessThan(clocks[1]);
    expect(clocks[1]).toBeLessThan(clocks[2]);
    expect(columns.carried![0].markets.length).toBeGreaterThan(0);
  });
});

describe('the driver on the wall clock', () => {
  it('ticks through the clock minus the lag after each read, never while the log is far behind (warned once)', () => {
    let clockMs = 0;
    const warnings: string[] = [];
    const driver = new Driver({
      inputs: ['live'],
      state: newFollowState(),
      marks: { lastEventTime: null, lastSnapTick: null },
      config: CONFIG,
      clear: 'at-begin',
      periods: DEFAULT_STORED_PERIODS,
      ticks: new WallClockTicks({
        now: () => clockMs,
        lagUs: US_PER_SECOND,
        maxCatchUpUs: 3600 * US_PER_SECOND,
        warn: (m) => warnings.push(m),
      }),
      now: () => clockMs,
      started: 0,
    });
    driver.beginRun({});
    driver.start();
    const pending: SourceRecord[][] = [records.slice(0, 400)];
    const source: PolledSource = {
      read(onBatch) {
        for (const recs of pending.splice(0)) onBatch(batchOf(recs));
      },
    };
    const engine = driver.engine;
    expect(driver.lastEventTime).toBeNull();

    // Two hours ahead of the log: the ticks follow event time only, and the warning is given once.
    clockMs = timeAt(399) / 1000 + 2 * 3600 * 1000;
    driver.poll(source);
    const eventTick = engine.lastTickTime!;
    const lastEvent = driver.lastEventTime!;
    expect(eventTick).toBeLessThanOrEqual(lastEvent);
    driver.poll(source);
    expect(engine.lastTickTime).toBe(eventTick);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/more than 3600 s behind the wall clock/);

    // Within reach: through the clock minus the lag, to the whole second.
    clockMs = lastEvent / 1000 + 30_500;
    driver.poll(source);
    const target = lastEvent + 29_500_000;
    expect(engine.lastTickTime).toBe(Math.floor(target / US_PER_SECOND) * US_PER_SECOND);

    // Less than a second later: no new tick, and no batch for it.
    const batch = driver.ingest.batch;
    clockMs += 400;
    driver.poll(source);
    expect(driver.ingest.batch).toBe(batch);

    // New records are read, then the clock ticks on.
    pending.push(records.slice(400, 450));
    clockMs = timeAt(449) / 1000 + 5000;
    driver.poll(source);
    expect(driver.lastEventTime).toBeGreaterThan(lastEvent);
    expect(engine.lastTickTime).toBe(Math.floor((clockMs * 1000 - US_PER_SECOND) / US_PER_SECOND) * US_PER_SECOND);
    expect(warnings).toHaveLength(1);
  });
});
