/**
 * Numbers written by the built command (docs/methodology.md section 7): the demo log's noisy
 * doubles (BTC/USD 62299.755000000005 at 05:53:37, the 1DAY open 62439.619999999995, SOL/USD
 * 131.00900000000001) are printed with at most 15 significant digits by `xrate rate`, `history`,
 * `explain`, `metrics` (xrate's own USD rates), `demo`, and in `--out` rate files (NDJSON and CSV,
 * partitioned runs the same bytes), while the replay database keeps them as computed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wireNumber } from '../../src/core/wire.js';
import { ReplayStore } from '../../src/io/store.js';
import { bin, DEMO, ensureBuilt, query } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-e2e-numbers-'));
const db = join(dir, 'demo.sqlite');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the built command; its stdout (the test fails on a non-zero exit). */
function xrate(...argv: string[]): string {
  const r = bin(argv, { timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

beforeAll(() => {
  ensureBuilt();
  xrate('replay', DEMO, '--db', db);
}, 120_000);

describe('the replay database', () => {
  it('keeps the doubles as computed', () => {
    expect(
      query(db, "SELECT rate FROM rates WHERE base = 'BTC' AND quote = 'USD' AND tick = ?", Date.UTC(2024, 2, 1, 5, 53, 37) * 1000),
    ).toEqual([{ rate: 62299.755000000005 }]);
    expect(query(db, "SELECT open FROM ohlc WHERE base = 'BTC' AND quote = 'USD' AND period_id = '1DAY'")).toEqual([
      { open: 62439.619999999995 },
    ]);
    // xrate's own points are stored as columns (metric_chunks): read through the store.
    const store = ReplayStore.open(db, { readonly: true });
    try {
      const sol = store.metrics().current({ metric_id: 'XRATE_ASSET_USD_RATE', asset_id: 'SOL' });
      expect(sol.map((p) => (p.value.kind === 'decimal' ? p.value.dec.value : undefined))).toEqual([131.00900000000001]);
    } finally {
      store.close();
    }
  });
});

describe('the CLI prints rates rounded to 15 significant digits', () => {
  const RATE = '[{"asset_id_base":"BTC","asset_id_quote":"USD","rate":62299.755,"time":"2024-03-01T05:53:36.1999520Z"}]\n';

  it('xrate rate, from the database and from the log', () => {
    expect(xrate('rate', db, '--at', '2024-03-01T05:53:40Z', '--pair', 'BTC/USD')).toBe(RATE);
    expect(xrate('rate', DEMO, '--at', '2024-03-01T05:53:40Z', '--pair', 'BTC/USD')).toBe(RATE);
  });

  it('xrate history', () => {
    expect(xrate('history', db, '--pair', 'BTC/USD', '--period', '1DAY', '--from', '2024-03-01', '--to', '2024-03-02')).toBe(
      '[{"time_period_start":"2024-03-01T00:00:00.0000000Z","time_period_end":"2024-03-02T00:00:00.0000000Z",' +
        '"time_open":"2024-03-01T04:00:00.0000000Z","time_close":"2024-03-01T05:54:11.0000000Z",' +
        '"rate_open":62439.62,"rate_high":62689.96,"rate_low":62107.81,"rate_close":62319.71}]\n',
    );
  });

  it('xrate explain: the rates; the market price as computed', () => {
    const out = xrate('explain', db, '--pair', 'SOL/USD');
    expect(out.match(/"rate": [^,]+,/g)).toEqual(['"rate": 131.009,', '"rate": 131.009,', '"rate": 131.009,']);
    expect(out).toContain('"price": 131.00900000000001,');
  });

  it("xrate metrics: xrate's own USD rate as every rate is written", () => {
    const out = xrate('metrics', db, 'asset/current', 'asset_id=SOL');
    expect(out).toContain('"asset_id":"SOL","metric_id":"XRATE_ASSET_USD_RATE","value_decimal":131.009}');
  });

  it('xrate demo: the table and the cross rate', () => {
    const out = xrate('demo', '--db', join(dir, 'demo-run.sqlite'));
    expect(out).toMatch(/^BTC\/USDT +62319\.4783361727 +2024-03-01T05:54:09\.8160000Z/m);
    expect(out).toMatch(/^ADA\/USD +0\.709348057866714 /m);
    expect(out).toContain('SOL/BTC = 0.00210220811361285 via SOL -> USD -> BTC\n');
  });
});

describe('rate files (--out)', () => {
  it('NDJSON and CSV carry the rounded rate; a partitioned run writes the same bytes', () => {
    const nd = join(dir, 'rates.ndjson');
    const csv = join(dir, 'rates.csv');
    const parted = join(dir, 'rates-workers.ndjson');
    xrate('replay', DEMO, '--out', nd);
    xrate('replay', DEMO, '--out', csv);
    xrate('replay', DEMO, '--out', parted, '--workers', '2');
    const lines = readFileSync(nd, 'utf8').split('\n');
    expect(lines).toContain(
      '{"tick":"2024-03-01T05:53:37.0000000Z","asset_id_base":"BTC","asset_id_quote":"USD","rate":62299.755,' +
        '"time":"2024-03-01T05:53:36.1999520Z","rank":2,"used":1,"fresh":true}',
    );
    expect(readFileSync(csv, 'utf8').split('\n')).toContain(
      '2024-03-01T05:53:37.0000000Z,BTC,USD,62299.755,2024-03-01T05:53:36.1999520Z,2,1,true',
    );
    expect(readFileSync(parted).equals(readFileSync(nd))).toBe(true);
    // Every rate of the file is written as it rounds.
    let n = 0;
    for (const l of lines) {
      const t = /"rate":([^,]+),/.exec(l)?.[1];
      if (t === undefined || t === 'null') continue;
      expect(String(wireNumber(Number(t)))).toBe(t);
      n++;
    }
    expect(n).toBeGreaterThan(20_000);
  }, 240_000);
});
