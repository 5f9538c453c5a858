/**
 * Charts of ranges longer than 7200 ticks (src/answers/chart.ts) on the demo log replayed with
 * xrate's own metrics: one point per bucket of the resolution's period, each the close of the
 * candle the history route gives; each market's weight share the stored point in force at the
 * bucket's end (read one by one here); the same chart from the log; inverse and cross pairs; no
 * weight shares without own metrics; the errors naming `points` and `period_id`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartData } from '../../../src/answers/chart.js';
import { DatabaseRateProvider } from '../../../src/answers/databaseProvider.js';
import { getPeriod } from '../../../src/core/periods.js';
import { parseTime, US_PER_SECOND } from '../../../src/core/time.js';
import { ReplayStore } from '../../../src/io/store.js';
import type { ChartData } from '../../../src/replay/chart.js';
import { queryRates } from '../../../src/replay/query.js';
import { replay } from '../../../src/replay/replay.js';

const DEMO = resolve('fixtures/demo/demo.ndjson.gz');
const dir = mkdtempSync(join(tmpdir(), 'xrate-chart-period-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const own = join(dir, 'own.sqlite');
const plain = join(dir, 'plain.sqlite');

const T = (s: string): number => parseTime(s)!;
/** Four hours (14401 ticks): by 10SEC at 2000 points. */
const Q = { base: 'BTC', quote: 'USD', from: T('2024-03-01T02:00:00Z'), to: T('2024-03-01T06:00:00Z') };
let db: ChartData;

beforeAll(async () => {
  await replay({ inputs: [DEMO], db: own });
  await replay({ inputs: [DEMO], db: plain, ownMetrics: false });
  db = await chartData({ inputs: [own] }, Q);
}, 120_000);

describe('chartData over more than 7200 ticks', () => {
  it('has a point per bucket of the resolution, each the close of the candle the history route gives', () => {
    expect([db.resolution, db.period_id, db.ticks.length, db.source, db.markets_detail]).toEqual([
      '10SEC',
      '10SEC',
      1440,
      'database',
      false,
    ]);
    expect(db.ticks[0]).toBe(Q.from / US_PER_SECOND);
    expect(db.ticks[1] - db.ticks[0]).toBe(10);
    expect(db.note).toContain('the range holds 14401 ticks, more than the 7200 charted one by one: each point is a 10SEC bucket');
    expect([db.markets, db.exclusions, db.provenance]).toEqual([[], [], []]);
    expect(db.point_provenance.every((p) => p === -1)).toBe(true);
    const provider = new DatabaseRateProvider(ReplayStore.open(own, { readonly: true }));
    const items = provider.history('BTC', 'USD', { period: getPeriod('10SEC')!, from: Q.from, to: Q.to, limit: 5000 });
    provider.close();
    expect(db.candles).toEqual(items);
    const close = new Map(items.map((k) => [T(k.time_period_start) / US_PER_SECOND, k.rate_close]));
    expect(close.size).toBeGreaterThan(500);
    expect(db.rate).toEqual(db.ticks.map((t) => close.get(t) ?? null));
  });

  it("has each market's stored weight share in force at each bucket's end, and counts the markets with a share", () => {
    const store = ReplayStore.open(own, { readonly: true });
    const metrics = store.metrics();
    expect(db.weight_share!.map((m) => m.symbol_id)).toEqual([
      'BITSTAMP_SPOT_BTC_USD',
      'COINBASE_SPOT_BTC_USD',
      'KRAKEN_SPOT_BTC_USD',
      'OKX_SPOT_BTC_USD',
    ]);
    for (const m of db.weight_share!) {
      // Every stored point of the series, read one by one: the last at or before each bucket's last µs.
      const pts = metrics.points({ metric_id: 'XRATE_MARKET_WEIGHT_SHARE', exchange_id: m.exchange_id, symbol_id: m.symbol_id }, 0, Q.to);
      db.ticks.forEach((t, i) => {
        const end = (t + 10) * US_PER_SECOND;
        const last = pts.filter((p) => p.time < end).at(-1);
        expect(m.share[i]).toBe(last && last.value.kind === 'decimal' ? last.value.dec.value : null);
      });
    }
    store.close();
    // KRAKEN's rank keeps the others out: a share of 1, theirs 0.
    expect(db.weight_share!.map((m) => m.share.at(-1))).toEqual([0, 0, 1, 0]);
    db.ticks.forEach((_, i) => {
      const shares = db.weight_share!.map((m) => m.share[i]);
      expect(db.markets_used![i]).toBe(shares.every((v) => v === null) ? null : shares.filter((v) => v !== null && v > 0).length);
    });
  });

  it('is the chart of the log, whose replay computes the same buckets and weight shares', async () => {
    const log = await chartData({ inputs: [DEMO] }, Q);
    expect(log).toEqual({ ...db, source: 'log' });
  }, 60_000);

  it('inverts the buckets of an inverse pair, and charts a cross pair by its rate at each bucket end', async () => {
    const inv = await chartData({ inputs: [own] }, { ...Q, base: 'USD', quote: 'BTC' });
    expect(inv.resolution).toBe('10SEC');
    inv.ticks.forEach((_, i) => {
      if (db.rate[i] === null) expect(inv.rate[i]).toBe(null);
      else expect(Math.abs(inv.rate[i]! * db.rate[i]! - 1)).toBeLessThan(1e-13);
    });
    expect(inv.weight_share).toEqual(db.weight_share);
    const cross = await chartData({ inputs: [own] }, { ...Q, base: 'LTC', quote: 'EUR', points: 500 });
    expect([cross.resolution, cross.candles, cross.weight_share, cross.markets_used]).toEqual(['30SEC', null, null, null]);
    expect(cross.note).toContain('no candles: the database keeps no OHLC of LTC/EUR');
    expect(cross.note).toContain('no weight shares: a cross rate: its markets are its legs');
    // After the last tick (05:54:11) no bucket, as for a stored series.
    expect(cross.rate.slice(469)).toEqual(new Array(11).fill(null));
    for (const i of [300, 350, 468]) {
      const at = (cross.ticks[i] + 29) * US_PER_SECOND;
      const [r] = await queryRates({ inputs: [own] }, at, [['LTC', 'EUR']]);
      expect(cross.rate[i]).toBe(r.rate);
    }
  });

  it('has no weight shares from a database replayed with --no-own-metrics, and says why', async () => {
    const c = await chartData({ inputs: [plain] }, Q);
    expect({ ...c, note: db.note }).toEqual({ ...db, weight_share: null, markets_used: null });
    expect(c.note).toContain('no weight shares: the database stores no weight shares of its markets');
  });

  it('takes period_id as the resolution, and refuses bad points, too many candles and a range too long for its points', async () => {
    const h = await chartData({ inputs: [own] }, { ...Q, periodId: '1HRS' });
    expect([h.resolution, h.ticks.length, h.candles!.length]).toEqual(['1HRS', 4, 2]); // BTC/USD has a rate from 04:00
    const refusals: [object, string, string][] = [
      [{ points: 49 }, 'points', 'points must be an integer in 50..5000, got 49'],
      [{ points: 2.5 }, 'points', 'points must be an integer in 50..5000, got 2.5'],
      [{ periodId: '1SEC' }, 'period_id', 'period 1SEC gives 14400 candles over the range, more than 5000: choose a longer one'],
      [{ periodId: '1MIN', base: 'LTC', quote: 'EUR' }, 'period_id', 'period 1MIN cannot be served: the database keeps no OHLC of LTC/EUR'],
      [{ to: Q.from + 2000 * 86_400 * US_PER_SECOND, points: 50 }, 'points', 'the range needs 200 points even at 10DAY'],
    ];
    for (const [more, field, message] of refusals) {
      const e = await chartData({ inputs: [own] }, { ...Q, ...more }).catch((x: unknown) => x);
      expect(e).toMatchObject({ code: 'usage', field });
      expect((e as Error).message.startsWith(message)).toBe(true);
    }
    const none = await chartData({ inputs: [own] }, { ...Q, base: 'FOO' }).catch((x: unknown) => x);
    expect(none).toMatchObject({ code: 'no_data' });
  });
});
