/**
 * Partitioned replays through the replay driver (docs/parallel.md): a generated log with bad and
 * late lines, pre-scanned and replayed in partitions into databases of their own, merges to the
 * serial replay's rate changes and rejects, and the partitions' own lines add up to its counts.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, cli, expectSameOutputs, SUMMARY_COUNTS } from './helpers.js';
import { writeLog } from '../../scripts/gen-log.js';
import { resolveConfig } from '../../src/core/config.js';
import { type PairRateChange, restoreEngine } from '../../src/core/engine.js';
import { mergeFinalSnapshot, warmUpUs } from '../../src/replay/partition.js';
import { mergeBuckets, mergeRateChanges, type PartitionBucket, trimFirstPerSeries } from '../../src/reference/index.js';
import { planPartitions, prescan, SYMBOL_WARM_UP_US } from '../../src/replay/prescan.js';
import { replay, type ReplaySummary } from '../../src/replay/replay.js';
import { missingTracksOf, replayParallel, runPartitionHere } from '../../src/replay/parallel.js';
import { type RateRow, ReplayStore } from '../../src/io/store.js';
import { COMPARED_TABLES } from '../../src/io/compareReplays.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-partition-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Short windows: a warm-up of about 2 hours inside a log of about 17. */
const config = { maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 };
const LOG = join(dir, 'log.ndjson');
/** The short configuration as a file, for the command. */
const CONFIG = join(dir, 'config.json');

/** The output tables of a merge without a run row of its own (the tables of a serial replay's outputs, the run aside). */
const OUTPUTS = COMPARED_TABLES.filter((t) => t !== 'runs');

function rates(db: string): PairRateChange[] {
  const d = new Database(db, { readonly: true });
  try {
    const rows = d.prepare('SELECT tick, base, quote, rate, time, rank, used, fresh, volume FROM rates ORDER BY rowid').all() as RateRow[];
    return rows.map((r) => ({ ...r, pair: -1, fresh: r.fresh === 1 }));
  } finally {
    d.close();
  }
}

function rejects(db: string): unknown[] {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare('SELECT input, source, line, reason, message, raw FROM rejects ORDER BY rowid').all();
  } finally {
    d.close();
  }
}

function buckets(db: string): PartitionBucket[] {
  const d = new Database(db, { readonly: true });
  try {
    const rows = d
      .prepare('SELECT base, quote, period_id, start, "end", time_open, time_close, open, high, low, close, count FROM ohlc')
      .all() as Record<string, number & string>[];
    return rows.map((r) => ({
      track: `${r.base}/${r.quote}`,
      period: r.period_id,
      bucket: {
        start: r.start,
        end: r.end,
        timeOpen: r.time_open,
        timeClose: r.time_close,
        open: r.open,
        high: r.high,
        low: r.low,
        close: r.close,
        count: r.count,
      },
    }));
  } finally {
    d.close();
  }
}

interface SeriesRow {
  base: string;
  quote: string;
  tick: number;
  rate: number | null;
  follow: number;
}

function series(db: string): SeriesRow[] {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare('SELECT base, quote, tick, rate, follow FROM series ORDER BY tick, base, quote').all() as SeriesRow[];
  } finally {
    d.close();
  }
}

interface Part {
  from?: number;
  db: string;
  summary: ReplaySummary;
}

/**
 * Replays `inputs` serially and in `n` partitions (phase 1, then phase 2 for the pairs a serial
 * replay tracks at a cut), merging the partitions into one database; files named after `name`.
 */
async function partitioned(inputs: string[], n: number, name: string, lastWarmUpUs?: number) {
  const serialDb = join(dir, `${name}-serial.sqlite`);
  const mergedDb = join(dir, `${name}-merged.sqlite`);
  const serial = await replay({ inputs, db: serialDb, config, ownMetrics: true });
  const H = warmUpUs(resolveConfig(config));
  const plan = planPartitions(await prescan(inputs), n, H, Math.max(H, lastWarmUpUs ?? H));
  const run = async (k: number, track: string[] = [], suffix = ''): Promise<Part> => {
    const p = plan[k];
    const db = join(dir, `${name}-part-${k}${suffix}.sqlite`);
    const start = { start: p.start, metadata: p.metadata.map((m) => m.event), clockUs: p.clockUs, markets: p.markets, track };
    const summary = await replay({ inputs, db, config, ownMetrics: true, from: p.from, to: p.to, partition: start });
    return { from: p.from, db, summary };
  };
  const parts: Part[] = [];
  // Phase 1: every partition at once (here one after the other).
  for (let k = 0; k < plan.length; k++) parts.push(await run(k));
  // Phase 2: a pair a serial replay tracks from its first rate on, which had a rate before a
  // partition's window but none at its cut, is tracked by that partition only when told.
  const missing = missingTracksOf(
    parts.map((p) => p.db),
    parts.map((p) => p.summary.trackedAtCut!),
  );
  let retracked = 0;
  for (let k = 1; k < parts.length; k++) {
    if (missing[k].length === 0) continue;
    retracked++;
    parts[k] = await run(k, missing[k], '-retracked');
  }
  const target = ReplayStore.open(mergedDb);
  try {
    target.mergePartitions(parts.map((p) => ({ path: p.db, from: p.from })));
  } finally {
    target.close();
  }
  return { serial, serialDb, mergedDb, parts, retracked, plan };
}

let serial: ReplaySummary;
let parts: Part[] = [];
let serialDb = '';
let mergedDb = '';
/** Partitions replayed again with the pairs a serial replay tracks at their cut. */
let retracked = 0;

beforeAll(async () => {
  await writeLog(LOG, { seed: 21, events: 30_000, rate: 0.5, badRate: 0.01, lateRate: 0.01 });
  writeFileSync(CONFIG, JSON.stringify(config));
  ({ serial, serialDb, mergedDb, parts, retracked } = await partitioned([LOG], 3, 'one'));
}, 120_000);

describe('a partitioned replay', () => {
  it('is cut in 3, the later partitions skipping the start of the log', () => {
    expect(parts).toHaveLength(3);
    expect(parts[2].summary.owned!.eventsRead).toBeLessThan(parts[2].summary.eventsRead);
  });

  it('merges to the serial rate changes, row for row', () => {
    const merged = mergeRateChanges(parts.map((p) => ({ from: p.from ?? 0, dumpsState: p.from !== undefined, changes: rates(p.db) })));
    const want = rates(serialDb);
    expect(want.length).toBeGreaterThan(1000);
    expect(merged).toEqual(want);
  });

  it('merges to the serial OHLC buckets (those straddling a cut joined) and change series', () => {
    expect(retracked).toBeGreaterThan(0);
    const want = buckets(serialDb);
    expect(want.length).toBeGreaterThan(100);
    expect(mergeBuckets(parts.map((p) => buckets(p.db)))).toEqual(mergeBuckets([want]));
    const wantSeries = series(serialDb);
    const merged = trimFirstPerSeries(
      parts.map((p) => series(p.db)),
      (r) => `${r.base}/${r.quote}`,
      (r) => `${r.rate} ${r.follow}`,
    );
    expect(merged).toEqual(wantSeries);
  });

  it('stores each reject once, in the partition that owns its line', () => {
    const want = rejects(serialDb);
    expect(want.length).toBeGreaterThan(300);
    expect(parts.flatMap((p) => rejects(p.db))).toEqual(want);
  });

  it("counts each line once: the partitions' own lines add up to the serial counts", () => {
    const sum = (f: (o: NonNullable<ReplaySummary['owned']>) => number) => parts.reduce((a, p) => a + f(p.summary.owned!), 0);
    expect(sum((o) => o.eventsRead)).toBe(serial.eventsRead);
    expect(sum((o) => o.eventsAccepted)).toBe(serial.eventsAccepted);
    expect(sum((o) => o.eventsRejected)).toBe(serial.eventsRejected);
    expect(sum((o) => o.quotesDiscarded)).toBe(serial.quotesDiscarded);
    const byReason: Record<string, number> = {};
    for (const p of parts)
      for (const [r, n] of Object.entries(p.summary.owned!.rejectsByReason)) byReason[r] = (byReason[r] ?? 0) + (n ?? 0);
    expect(byReason).toEqual(serial.rejectsByReason);
  });

  it("reads the partitions' databases as they are, never turning one into a WAL database (which syncs its whole file)", () => {
    for (const p of parts) {
      expect(existsSync(`${p.db}-wal`)).toBe(false);
      // The header's file format versions: 1 (a rollback journal's), where WAL's are 2.
      expect([...readFileSync(p.db).subarray(18, 20)]).toEqual([1, 1]);
    }
  });

  it('merges into one database whose every output table equals the serial one, row for row', () => {
    const rows = expectSameOutputs(mergedDb, serialDb, OUTPUTS);
    expect(rows.metric_points).toBeGreaterThan(10_000);
  });
});

describe('a partitioned replay of several inputs', () => {
  it('reads them one after another (one gzipped), positions per input, and merges to the serial replay', async () => {
    // One log cut into two files at a line: the second partition's window starts in the second.
    const whole = join(dir, 'two.ndjson');
    await writeLog(whole, { seed: 22, events: 16_000, rate: 0.4, badRate: 0.01 });
    const lines = readFileSync(whole, 'utf8').split('\n');
    const a = join(dir, 'two-a.ndjson');
    const b = join(dir, 'two-b.ndjson.gz');
    writeFileSync(a, `${lines.slice(0, 3_000).join('\n')}\n`);
    writeFileSync(b, gzipSync(lines.slice(3_000).join('\n')));
    const r = await partitioned([a, b], 2, 'two');
    expect(r.plan[1].start.input).toBe(1);
    expect(r.plan[1].metadata.length).toBeGreaterThan(0);
    expect(r.parts[1].summary.owned!.eventsRead).toBeLessThan(r.parts[1].summary.eventsRead);
    const rows = expectSameOutputs(r.mergedDb, r.serialDb, OUTPUTS);
    expect(rows.rates).toBeGreaterThan(500);
  }, 120_000);
});

describe('the final engine of a partitioned replay', () => {
  it('answers the symbol records of the serial one: markets quiet since long known, first and last times, prices, 24-hour volumes', async () => {
    // 40 hours: the last partition's window (24 h for the volumes) starts well after the log.
    const log = join(dir, 'long.ndjson');
    await writeLog(log, { seed: 23, events: 36_000, rate: 0.25, badRate: 0.005 });
    // A market that quotes and trades in the first hour only, then never again.
    const quiet = 'KRAKEN_SPOT_QQQ_USD';
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n');
    const t0 = Date.parse('2024-03-01T00:00:00Z');
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    const extra = [
      { type: 'trade', time: at(600.5), symbol_id: quiet, price: '7.25', size: '3' },
      { type: 'quote', time: at(601.5), symbol_id: quiet, bid_price: '7.2', bid_size: '1', ask_price: '7.3', ask_size: '1' },
      { type: 'trade', time: at(3000.5), symbol_id: quiet, price: '7.5', size: '2' },
    ];
    for (const e of extra) {
      const i = lines.findIndex((l) => {
        try {
          return Date.parse(JSON.parse(l).time) > Date.parse(e.time);
        } catch {
          return false;
        }
      });
      lines.splice(i, 0, JSON.stringify(e));
    }
    writeFileSync(log, `${lines.join('\n')}\n`);
    const r = await partitioned([log], 3, 'long', SYMBOL_WARM_UP_US);
    expect(r.plan[2].start.order).toBeGreaterThan(0);
    expect(r.plan[2].markets.length).toBeGreaterThan(0);
    const snaps = r.parts.map((p) => p.summary.engine.snapshot());
    const merged = restoreEngine(mergeFinalSnapshot(snaps[snaps.length - 1], snaps.slice(0, -1)));
    const want = r.serial.engine.symbols();
    expect(want.length).toBeGreaterThan(10);
    expect(merged.symbols()).toEqual(want);
    const q = want.find((x) => x.symbolId === quiet);
    expect(q?.price).toBe('7.5');
    // Without the earlier partitions the last one's records differ (first times at least).
    expect(restoreEngine(snaps[snaps.length - 1]).symbols()).not.toEqual(want);
  }, 120_000);
});

describe('replayParallel', () => {
  it('writes one database equal to the serial replay, with its counts, run row and final engine', async () => {
    const db = join(dir, 'parallel.sqlite');
    const done: number[] = [];
    const s = await replayParallel({
      inputs: [LOG],
      db,
      config,
      ownMetrics: true,
      workers: 3,
      onPartitionDone: (j) => void done.push(j.index),
    });
    // A third partition would read the whole log again (the last one warms up over 24 h): the plan keeps two.
    expect(done.length).toBeGreaterThanOrEqual(2);
    expectSameOutputs(db, serialDb);
    for (const k of SUMMARY_COUNTS) expect(s[k], k).toEqual(serial[k]);
    const store = ReplayStore.open(db);
    try {
      const run = store.latestCompleteRun()!;
      expect(run.events_read).toBe(serial.eventsRead);
      expect(run.rate_changes).toBe(serial.rateChanges);
      const final = restoreEngine(store.latestSnapshot()!.engine);
      expect(final.symbols()).toEqual(serial.engine.symbols());
      expect(final.rate('BTC', 'USD')).toEqual(serial.engine.rate('BTC', 'USD'));
    } finally {
      store.close();
    }
    // The partitions' own databases are gone; the target keeps the WAL (merged without it).
    expect(readdirSync(dir).filter((f) => f.startsWith('parallel.sqlite.part-'))).toEqual([]);
    const file = new Database(db, { readonly: true });
    expect(file.pragma('journal_mode', { simple: true })).toBe('wal');
    file.close();
    // Into an existing database: its outputs are replaced, the rest (earlier runs, keys) kept.
    await replayParallel({ inputs: [LOG], db, config, ownMetrics: true, workers: 3 });
    expectSameOutputs(db, serialDb);
    const again = ReplayStore.open(db);
    try {
      const d = new Database(db, { readonly: true });
      expect(d.prepare('SELECT id FROM runs').all()).toHaveLength(2);
      d.close();
      expect(restoreEngine(again.latestSnapshot()!.engine).symbols()).toEqual(serial.engine.symbols());
    } finally {
      again.close();
    }
  }, 120_000);
});

describe('replayParallel at cuts of its caller', () => {
  it('cut off the minute, between events, merges to the serial replay too', async () => {
    const db = join(dir, 'parallel-cuts.sqlite');
    const cuts: number[] = [];
    await replayParallel({ inputs: [LOG], db, config, workers: 3, onPartitionDone: (j) => void (j.from && cuts.push(j.from)) });
    expect(cuts.length).toBeGreaterThan(0);
    expect(cuts.every((c) => c % 60_000_000 === 0)).toBe(true);
    const off = [...new Set(cuts)].sort((a, b) => a - b).map((c) => c + 1_817_000_000);
    const at: number[] = [];
    await replayParallel({
      inputs: [LOG],
      db,
      config,
      ownMetrics: true,
      workers: 2,
      cuts: off,
      onPartitionDone: (j) => void (j.from && at.push(j.from)),
    });
    expect([...new Set(at)].sort((a, b) => a - b)).toEqual(off);
    expectSameOutputs(db, serialDb);
  }, 120_000);
});

describe('replayParallel into a new database', () => {
  it('gives it its name only once it is complete: a merge that fails leaves no database', async () => {
    const db = join(dir, 'failing.sqlite');
    // A column of the later partitions' OHLC renamed: their merge fails.
    const run = async (job: Parameters<typeof runPartitionHere>[0]) => {
      const r = await runPartitionHere(job);
      if (job.index > 0) {
        const d = new Database(job.db);
        d.exec('ALTER TABLE ohlc RENAME COLUMN high TO hi');
        d.close();
      }
      return r;
    };
    await expect(replayParallel({ inputs: [LOG], db, config, track: ['BTC/USD'], workers: 3, run })).rejects.toThrow(/high/);
    expect(existsSync(db)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.startsWith('failing.sqlite'))).toEqual([]);
  }, 120_000);
});

describe('xrate replay --workers', () => {
  it('replays in worker threads into one database equal to the serial one; a bad value is a usage error', async () => {
    const db = join(dir, 'cli-workers.sqlite');
    // The built command (worker threads run the compiled modules).
    const r = bin(['replay', LOG, '--db', db, '--config', CONFIG, '--workers', '3', '--json'], { timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as { eventsRead: number; rateChanges: number };
    expect(s.eventsRead).toBe(serial.eventsRead);
    expect(s.rateChanges).toBe(serial.rateChanges);
    expectSameOutputs(db, serialDb);
    const bad = await cli('replay', LOG, '--db', db, '--workers', 'many');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--workers must be a whole number from 1 to 256 or "auto", got "many"/);
    const from = await cli('replay', LOG, '--db', db, '--from', '2024-03-01T05:00:00Z', '--workers', '2');
    expect(from.code).toBe(2);
    expect(from.err).toMatch(/partitioned replays \(--workers, --queue\) do not work with --from yet/);
  }, 120_000);

  it.each(['ndjson', 'csv'])(
    'writes with --out a .%s rate file byte for byte the serial one, and nothing beside it',
    async (ext) => {
      const sub = join(dir, `out-${ext}`);
      mkdirSync(sub);
      const want = join(sub, `serial.${ext}`);
      const got = join(sub, `workers.${ext}`);
      const s = await cli('replay', LOG, '--out', want, '--config', CONFIG, '--json');
      expect(s.code, s.err).toBe(0);
      const r = bin(['replay', LOG, '--out', got, '--config', CONFIG, '--workers', '3', '--json'], { timeout: 120_000 });
      expect(r.status, r.stderr).toBe(0);
      const a = readFileSync(want);
      expect(a.length).toBeGreaterThan(100_000);
      expect(readFileSync(got).equals(a)).toBe(true);
      expect(JSON.parse(r.stdout).rateChanges).toBe(JSON.parse(s.out).rateChanges);
      expect(readdirSync(sub).sort()).toEqual([`serial.${ext}`, `workers.${ext}`]);
    },
    120_000,
  );
});
