/**
 * The pre-scan over real files (src/replay/prescan.ts): one generated log written as NDJSON,
 * gzipped NDJSON, CSV and SQLite gives alike plans; bad lines are skipped, metadata events kept.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../../scripts/gen-log.js';
import { resolveConfig } from '../../../src/core/config.js';
import { warmUpUs } from '../../../src/replay/partition.js';
import { convertToParquet } from '../../../src/io/parquetConvert.js';
import { openSource } from '../../../src/io/source.js';
import { MINUTE_US, PrescanStats, planPartitions, prescan } from '../../../src/replay/prescan.js';
import { recordTime } from '../../../src/replay/prescanNdjson.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-prescan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('prescan', () => {
  it('plans alike from NDJSON, gzipped NDJSON, CSV and SQLite of one log', async () => {
    const opts = { seed: 5, events: 20_000, rate: 0.5, badRate: 0.01, lateRate: 0.01 };
    const plans = [];
    for (const name of ['log.ndjson', 'log.ndjson.gz', 'log.csv', 'log.sqlite']) {
      const path = join(dir, name);
      await writeLog(path, opts);
      const stats = await prescan([path]);
      // About 11 hours at 0.5 events/s: with a 2-hour warm-up, the later partitions skip records.
      const plan = planPartitions(
        stats,
        4,
        warmUpUs(resolveConfig({ maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 })),
      );
      plans.push({ events: stats.events, first: stats.first, last: stats.last, plan: JSON.parse(JSON.stringify(plan)) });
    }
    const [ndjson, gz, csv, sqlite] = plans;
    expect(ndjson.plan).toHaveLength(4);
    expect(ndjson.plan[3].start.order).toBeGreaterThan(0);
    expect(ndjson.plan[3].metadata.length).toBeGreaterThan(0);
    // Unreadable lines have no time: fewer events than lines. The NDJSON scan reads a line's time
    // without parsing the line, so a broken line with a readable time counts there (it only moves
    // a cut or a window's start by a line, never an output).
    expect(csv.events).toBeLessThan(20_000);
    expect(csv.events).toBeGreaterThan(19_000);
    expect(ndjson.events).toBeGreaterThanOrEqual(csv.events);
    expect(ndjson.events - csv.events).toBeLessThan(50);
    expect(gz).toEqual(ndjson);
    expect(sqlite.events).toBe(csv.events);
    const shape = (p: typeof ndjson) =>
      p.plan.map((x: { from?: number; clockUs?: number; metadata: unknown[] }) => [x.from, x.clockUs, x.metadata.length]);
    expect(shape(sqlite)).toEqual(shape(csv));
    expect(ndjson.plan.map((x: { metadata: unknown[] }) => x.metadata.length)).toEqual(
      csv.plan.map((x: { metadata: unknown[] }) => x.metadata.length),
    );
  });

  it('scans a Parquet log from its columns as from its records: row groups with rejects, and of quotes and trades alone', async () => {
    for (const [name, badRate] of [
      ['bad', 0.01],
      ['clean', 0],
    ] as const) {
      const log = join(dir, `for-parquet-${name}.csv`);
      await writeLog(log, { seed: 6, events: 20_000, rate: 0.5, badRate, lateRate: 0.01 });
      const parquet = join(dir, `${name}.parquet`);
      await convertToParquet([log], parquet, { rowGroupRows: badRate > 0 ? 4096 : 512 });
      // The reference: every record of the record reader, as the scan of other formats reads them.
      const want = new PrescanStats();
      const src = openSource(parquet, { batchSize: 512 });
      for await (const batch of src.batches())
        for (const rec of batch) {
          const { time, metadata, symbolId } = recordTime(rec);
          want.add(0, rec.line, time, metadata, symbolId);
        }
      src.close();
      const got = await prescan([parquet]);
      expect(got.events).toBeGreaterThan(19_000);
      expect(got).toEqual(want);
    }
  });

  it("cuts where told: the planner's own cuts give its plan; others whole seconds after the first tick, or refused", async () => {
    const path = join(dir, 'cuts.ndjson');
    await writeLog(path, { seed: 6, events: 10_000, rate: 0.5 });
    const stats = await prescan([path]);
    const H = warmUpUs(resolveConfig({ maxRateAgeSeconds: 1800, volumeWindowSeconds: 3600, refreshEverySeconds: 1800 }));
    const plan = planPartitions(stats, 3, H);
    const cuts = plan.slice(1).map((p) => p.from!);
    expect(planPartitions(stats, 7, H, H, cuts)).toEqual(plan);
    const off = cuts.map((c) => c + 1_817_000_000);
    const shifted = planPartitions(stats, 3, H, H, off);
    expect(shifted.map((p) => [p.from, p.to])).toEqual([
      [undefined, off[0] - 1],
      [off[0], off[1] - 1],
      [off[1], undefined],
    ]);
    // The window starts at least H before its cut (from its minute's start).
    expect(shifted[1].start.order).toBeGreaterThan(plan[1].start.order);
    const first = Math.ceil(stats.first / 1e6) * 1e6;
    for (const bad of [[cuts[0] + 1], [first], [cuts[1], cuts[0]], [cuts[0], cuts[0]]])
      expect(() => planPartitions(stats, 3, H, H, bad)).toThrow(/^cut .* is not a whole second after the first tick/);
  });

  it('reads NDJSON lines as the reader splits them: CRLF, blank lines, a BOM, spaced keys, metadata, broken lines', async () => {
    const path = join(dir, 'forms.ndjson');
    const lines = [
      '\uFEFF{"type":"exchange","time":"2024-03-01T00:00:00Z","exchange_id":"K","legitimate":true,"rank":1}',
      '',
      '{"type":"quote","time":"2024-03-01T00:00:01.5Z","symbol_id":"K_SPOT_BTC_USD","bid_price":1,"bid_size":1,"ask_price":2,"ask_size":1}\r',
      '   ',
      '{ "type" : "symbol", "time" : "2024-03-01T00:01:00Z", "symbol_id" : "K_SPOT_ETH_USD", "exchange_id" : "K", "symbol_type" : "SPOT", "asset_id_base" : "ETH", "asset_id_quote" : "USD" }',
      '{"time": "2024-03-01T00:02:00Z", "type": "trade", "symbol_id": "K_SPOT_BTC_USD", "price": "1", "size": "1"}',
      '{"type":"trade","symbol_id":"K_SPOT_BTC_USD","price":"1","size":"1"}',
      '{"type":"trade","time":"not a time"}',
      'not json at all',
      '{"type":"symbol","time":"2024-03-01T00:03:00Z"}',
    ];
    writeFileSync(path, `${lines.join('\n')}\n`);
    const stats = await prescan([path]);
    // Timed: the exchange, quote, symbol and trade lines; the incomplete symbol is a reject (no time kept).
    expect(stats.events).toBe(4);
    expect(stats.metadata.map((m) => [m.event.type, m.at.line, m.at.order])).toEqual([
      ['exchange', 1, 0],
      ['symbol', 5, 2],
    ]);
    const t0 = Date.parse('2024-03-01T00:00:00Z') * 1000;
    expect(stats.first).toBe(t0);
    expect(stats.last).toBe(t0 + 2 * MINUTE_US);
    expect(stats.firstAt.get(t0 / MINUTE_US + 2)).toEqual({ input: 0, line: 6, order: 3 });
    // The symbol ids named by timed records, in order of first sight (read in place or parsed).
    expect([...stats.symbols]).toEqual([
      ['K_SPOT_BTC_USD', 1],
      ['K_SPOT_ETH_USD', 2],
    ]);
  });
});
