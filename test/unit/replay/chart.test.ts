/**
 * The chart data of `xrate plot` and the service's `/chart` at tick resolution (src/replay/chart.ts
 * through src/answers/chart.ts) on the demo log: per tick the engine's own answers (rate as
 * `xrate rate`, provenance as `xrate explain --at`), markets and exclusions as the provenance says,
 * candles as `xrate history`; from a replay database, the same chart when its run's log is still
 * there (replayed from a snapshot before the range when there is one), the rate only (and a note)
 * when not. Longer ranges: test/unit/answers/chart.test.ts.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLog } from '../../../scripts/gen-log.js';
import { parseTime, US_PER_SECOND } from '../../../src/core/time.js';
import { chartData } from '../../../src/answers/chart.js';
import { CHART_MAX_TICKS } from '../../../src/answers/chartResolution.js';
import type { ChartData } from '../../../src/replay/chart.js';
import { ReplayStore } from '../../../src/io/store.js';
import { queryExplain, queryHistory, queryRates } from '../../../src/replay/query.js';
import { replay } from '../../../src/replay/replay.js';

const DEMO = resolve('fixtures/demo/demo.ndjson.gz');
const dir = mkdtempSync(join(tmpdir(), 'xrate-chart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T = (s: string): number => parseTime(s)!;
const FROM = T('2024-03-01T04:20:00Z');
const TO = T('2024-03-01T04:30:00Z');
let log: ChartData;

beforeAll(async () => {
  log = await chartData({ inputs: [DEMO] }, { base: 'BTC', quote: 'USD', from: FROM, to: TO, periodId: '1MIN' });
}, 60_000);

describe('chartData from a log', () => {
  it('has one point per tick in [from, to], and the rate of each is the engine answer at that tick', async () => {
    expect(log.ticks.length).toBe(601);
    expect(log.ticks[0]).toBe(FROM / US_PER_SECOND);
    expect(log.ticks.at(-1)).toBe(TO / US_PER_SECOND);
    expect(log.rate.length).toBe(601);
    expect(log.point_provenance.length).toBe(601);
    for (const i of [0, 137, 600]) {
      const [r] = await queryRates({ inputs: [DEMO] }, (log.ticks[i] + 0.5) * US_PER_SECOND, [['BTC', 'USD']]);
      expect(log.rate[i]).toBe(r.rate);
    }
  });

  it('keeps the explanation of each stretch as xrate explain gives it at the stretch first tick', async () => {
    expect(log.provenance.length).toBeGreaterThan(10);
    const k = 5;
    const i = log.point_provenance.indexOf(k);
    expect(i).toBeGreaterThan(0);
    expect(log.point_provenance[i - 1]).toBe(k - 1);
    const want = await queryExplain({ inputs: [DEMO] }, ['BTC', 'USD'], log.ticks[i] * US_PER_SECOND);
    expect(log.provenance[k]).toEqual(want);
    // Indexes never go back, and each names an explanation whose rate is the point's.
    for (let j = 0; j < log.ticks.length; j++) {
      const p = log.point_provenance[j];
      if (j > 0) expect(p).toBeGreaterThanOrEqual(log.point_provenance[j - 1]);
      expect(log.provenance[p].rate).toBe(log.rate[j]);
    }
  });

  it('charts each used market at its price p and each left-out market at its midpoint, with the reason', () => {
    expect(log.markets_detail).toBe(true);
    expect(log.markets.map((m) => m.symbol_id)).toEqual(['KRAKEN_SPOT_BTC_USD']);
    for (let j = 0; j < log.ticks.length; j += 50) {
      const e = log.provenance[log.point_provenance[j]].legs[0].explanation;
      for (const m of e.used) expect(log.markets.find((x) => x.symbol_id === m.symbol_id)!.price[j]).toBe(m.price);
    }
    expect(new Set(log.exclusions.map((x) => x.reason))).toEqual(new Set(['rank', 'not_legitimate']));
    const x = log.exclusions[3];
    const e = log.provenance[log.point_provenance[x.t - log.ticks[0]]].legs[0].explanation;
    const m = e.excluded.find((y) => y.symbol_id === x.symbol_id)!;
    expect(m.reason).toBe(x.reason);
    expect(x.price).toBe((m.bid_price! + m.ask_price!) / 2);
  });

  it('has the candles xrate history gives', async () => {
    const want = await queryHistory({ inputs: [DEMO] }, ['BTC', 'USD'], '1MIN', FROM, TO, 2000);
    expect(log.candles).toEqual(want);
    expect(log.candles!.length).toBe(10);
  });

  it('inverts the markets of an inverse pair, and charts a cross rate without markets', async () => {
    const inv = await chartData({ inputs: [DEMO] }, { base: 'USD', quote: 'BTC', from: FROM, to: FROM + 60 * US_PER_SECOND });
    expect(inv.markets[0].price[10]).toBe(1 / log.markets[0].price[10]!);
    // The rate as written: the rounding of 1 / rate, as xrate rate gives it (not 1 / the rounded rate).
    const [r] = await queryRates({ inputs: [DEMO] }, (inv.ticks[10] + 0.5) * US_PER_SECOND, [['USD', 'BTC']]);
    expect(inv.rate[10]).toBe(r.rate);
    expect(Math.abs(inv.rate[10]! * log.rate[10]! - 1)).toBeLessThan(2e-14);
    const cross = await chartData({ inputs: [DEMO] }, { base: 'SOL', quote: 'BTC', from: FROM, to: FROM + 60 * US_PER_SECOND });
    expect(cross.markets).toEqual([]);
    expect(cross.rate.every((r) => r !== null)).toBe(true);
    expect(cross.provenance[0].kind).toBe('cross');
  });

  it('puts each tick at its place when the range starts before the log first tick', async () => {
    const log = join(dir, 'gen.ndjson');
    await writeLog(log, { seed: 3, events: 20_000, start: '2024-03-01T03:55:00Z', rate: 50 });
    const from = T('2024-03-01T03:54:50Z');
    const c = await chartData({ inputs: [log] }, { base: 'BTC', quote: 'USD', from, to: T('2024-03-01T04:00:20Z') });
    expect(c.ticks.length).toBe(331);
    const at = (iso: string): number => (T(iso) - from) / US_PER_SECOND;
    expect(c.rate.slice(0, at('2024-03-01T04:00:00Z')).every((r) => r === null)).toBe(true);
    for (const iso of ['2024-03-01T04:00:00Z', '2024-03-01T04:00:07Z', '2024-03-01T04:00:20Z']) {
      const [r] = await queryRates({ inputs: [log] }, T(iso), [['BTC', 'USD']]);
      expect(r.rate).not.toBe(null);
      expect(c.rate[at(iso)]).toBe(r.rate);
    }
  });

  it('charts at most 7200 ticks one by one, and a longer range by period', async () => {
    const q = { base: 'BTC', quote: 'USD' };
    const at = await chartData({ inputs: [DEMO] }, { ...q, from: FROM, to: FROM + (CHART_MAX_TICKS - 1) * US_PER_SECOND });
    expect([at.resolution, at.ticks.length]).toEqual(['tick', CHART_MAX_TICKS]);
    const over = await chartData({ inputs: [DEMO] }, { ...q, from: FROM, to: FROM + CHART_MAX_TICKS * US_PER_SECOND, points: 2000 });
    expect([over.resolution, over.ticks.length, over.markets_detail]).toEqual(['4SEC', 1800, false]);
  }, 60_000);

  it('has the weight share of each market of the pair, as the explanations give it', () => {
    expect(log.weight_share!.map((m) => m.symbol_id)).toEqual([
      'BITSTAMP_SPOT_BTC_USD',
      'COINBASE_SPOT_BTC_USD',
      'KRAKEN_SPOT_BTC_USD',
      'OKX_SPOT_BTC_USD',
    ]);
    for (let j = 0; j < log.ticks.length; j += 37) {
      const e = log.provenance[log.point_provenance[j]].legs[0].explanation;
      for (const m of log.weight_share!) {
        const used = e.used.find((x) => x.symbol_id === m.symbol_id);
        expect(m.share[j]).toBe(used ? used.weight_share : 0);
      }
      expect(log.markets_used![j]).toBe(e.used.length);
    }
  });

  it('refuses a bad range, a bad period and a pair without rate', async () => {
    const q = { base: 'BTC', quote: 'USD' };
    await expect(chartData({ inputs: [DEMO] }, { ...q, from: TO, to: FROM })).rejects.toThrow(/must be after/);
    await expect(chartData({ inputs: [DEMO] }, { ...q, from: FROM, to: TO, periodId: '7MIN' })).rejects.toThrow(/unknown period_id "7MIN"/);
    await expect(chartData({ inputs: [DEMO] }, { ...q, from: FROM, to: TO, periodId: '7MIN' })).rejects.toMatchObject({
      code: 'usage',
      field: 'period_id',
    });
    const e = await chartData({ inputs: [DEMO] }, { base: 'FOO', quote: 'USD', from: FROM, to: TO }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'no_data' });
    expect((e as Error).message).toBe('no rate for FOO/USD between 2024-03-01T04:20:00.0000000Z and 2024-03-01T04:30:00.0000000Z');
  });
});

/** The chart of the log as a database answers it. */
function asDatabase(c: ChartData): ChartData {
  return { ...c, source: 'database' };
}

describe('chartData from a replay database', () => {
  it('replays the run recorded log: the same chart', async () => {
    const db = join(dir, 'demo.sqlite');
    await replay({ inputs: [DEMO], db, ownMetrics: false });
    const c = await chartData({ inputs: [db] }, { base: 'BTC', quote: 'USD', from: FROM, to: TO, periodId: '1MIN' });
    expect(c).toEqual(asDatabase(log));
  });

  it('with own metrics (the default), the stored weight shares: those the explanations give, read when the log is gone', async () => {
    const copy = join(dir, 'own.ndjson.gz');
    copyFileSync(DEMO, copy);
    const db = join(dir, 'own.sqlite');
    await replay({ inputs: [copy], db });
    rmSync(copy);
    const c = await chartData({ inputs: [db] }, { base: 'BTC', quote: 'USD', from: FROM, to: TO, periodId: '1MIN' });
    expect(c.markets_detail).toBe(false);
    expect([c.weight_share, c.markets_used]).toEqual([log.weight_share, log.markets_used]);
  });

  it('replays from the newest snapshot before the range: the chart of a whole replay', async () => {
    // The log as plain NDJSON, replayed with snapshots; then its lines before the snapshot are
    // spoilt (the same number of lines): a whole replay of it no longer gives the chart, and
    // the database's chart, which reads on from the snapshot, still does.
    const plain = join(dir, 'snap.ndjson');
    writeFileSync(plain, gunzipSync(readFileSync(DEMO)));
    const db = join(dir, 'snap.sqlite');
    await replay({ inputs: [plain], db, snapshotEveryUs: 600 * US_PER_SECOND });
    const store = ReplayStore.open(db, { readonly: true });
    const cp = store.latestSnapshot(Number.MAX_SAFE_INTEGER);
    store.close();
    expect(cp!.line).toBeGreaterThan(1000);
    // Its last tick (05:48:40) and the range just after it.
    const from = cp!.engine.lastTick! + 20 * US_PER_SECOND;
    const q = { base: 'BTC', quote: 'USD', from, to: from + 240 * US_PER_SECOND, periodId: '1MIN' };
    const want = asDatabase(await chartData({ inputs: [plain] }, q));
    expect(want.rate.every((r) => r !== null)).toBe(true);
    const lines = readFileSync(plain, 'utf8').split('\n');
    for (let i = 0; i < cp!.line; i++) lines[i] = '{}';
    writeFileSync(plain, lines.join('\n'));
    const whole = await chartData({ inputs: [plain] }, q);
    expect(whole.rate).not.toEqual(want.rate);
    expect(await chartData({ inputs: [db] }, q)).toEqual(want);
  }, 60_000);

  it('past its last tick, charts what the log gives (the final engine advanced), markets included', async () => {
    const db = join(dir, 'demo.sqlite');
    const q = { base: 'ETH', quote: 'BTC', from: T('2024-03-01T05:50:00Z'), to: T('2024-03-01T06:00:00Z'), periodId: '1MIN' };
    const fromLog = await chartData({ inputs: [DEMO] }, q);
    const fromDb = await chartData({ inputs: [db] }, q);
    expect(fromDb).toEqual(asDatabase(fromLog));
    expect(fromDb.markets_detail).toBe(true);
    expect(fromDb.rate.at(-1)).not.toBe(null);
  });

  it('has the rate only, and says why, when the run log is gone', async () => {
    const copy = join(dir, 'moved.ndjson.gz');
    copyFileSync(DEMO, copy);
    const db = join(dir, 'moved.sqlite');
    await replay({ inputs: [copy], db, ownMetrics: false });
    rmSync(copy);
    const c = await chartData({ inputs: [db] }, { base: 'BTC', quote: 'USD', from: FROM, to: TO, periodId: '1MIN' });
    expect(c.markets_detail).toBe(false);
    expect(c.note).toContain(`the log its run read, "${copy}", is not found`);
    expect(c.rate).toEqual(log.rate);
    expect(c.candles).toEqual(log.candles);
    expect(c.markets).toEqual([]);
    expect(c.exclusions).toEqual([]);
    expect(c.point_provenance.every((p) => p === -1)).toBe(true);
    // Nor weight shares: the database stores none.
    expect([c.weight_share, c.markets_used]).toEqual([null, null]);
    expect(c.note).toContain(
      '; no weight shares: the database stores no weight shares of its markets (xrate’s own metrics: a replay stores them unless --no-own-metrics)',
    );
  });
});
