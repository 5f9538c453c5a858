import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COLUMNS, CSV_HEADER, generateLog, parseArgs, Rng, writeLog } from '../../../scripts/gen-log.js';
import { parseJsonLine } from '../../../src/core/events.js';
import { isReject } from '../../../src/core/types.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-gen-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');
const TIME7 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/;

function parseAll(lines: string[]): (Record<string, unknown> | undefined)[] {
  return lines.map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  });
}

describe('Rng', () => {
  it('is deterministic and roughly uniform', () => {
    const a = new Rng(7);
    const b = new Rng(7);
    const xs = Array.from({ length: 10_000 }, () => a.uniform());
    expect(Array.from({ length: 10_000 }, () => b.uniform())).toEqual(xs);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.02);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new Rng(8).uniform()).not.toBe(new Rng(7).uniform());
  });
});

describe('generateLog', () => {
  it('is deterministic: the same seed gives the same bytes, another seed other bytes', () => {
    const opts = { seed: 3, events: 20_000, badRate: 0.01, lateRate: 0.005 };
    const a = [...generateLog(opts)].join('\n');
    const b = [...generateLog(opts)].join('\n');
    const c = [...generateLog({ ...opts, seed: 4 })].join('\n');
    expect(sha(a)).toBe(sha(b));
    expect(sha(c)).not.toBe(sha(a));
  });

  it('produces exactly the number of lines asked for', () => {
    expect([...generateLog({ seed: 1, events: 0 })].length).toBe(0);
    expect([...generateLog({ seed: 1, events: 5 })].length).toBe(5);
    expect([...generateLog({ seed: 1, events: 12_345, badRate: 0.05 })].length).toBe(12_345);
  });

  it('has a realistic mix: exchanges, symbols, quotes, trades, ranks, PERPs, undeclared markets', () => {
    const lines = [...generateLog({ seed: 1, events: 60_000 })];
    const evs = parseAll(lines) as Record<string, unknown>[];
    expect(evs.every((e) => e !== undefined)).toBe(true);
    const by = (t: string): Record<string, unknown>[] => evs.filter((e) => e.type === t);
    const ex = by('exchange');
    expect(ex.slice(0, 8).map((e) => e.exchange_id)).toEqual([
      'BINANCE',
      'COINBASE',
      'KRAKEN',
      'BITSTAMP',
      'OKX',
      'BYBIT',
      'GEMINI',
      'KUCOIN',
    ]);
    expect(new Set(ex.map((e) => e.rank)).size).toBe(3);
    expect(ex.filter((e) => e.legitimate === false).length).toBeGreaterThanOrEqual(1);
    const quotes = by('quote').length;
    const trades = by('trade').length;
    expect(quotes).toBeGreaterThan(trades);
    expect(trades).toBeGreaterThan(10_000);
    const symbols = by('symbol');
    expect(symbols.length).toBeGreaterThan(50);
    expect(symbols.some((s) => s.symbol_type === 'PERPETUAL')).toBe(true);
    const declared = new Set(symbols.map((s) => s.symbol_id));
    const used = new Set(evs.filter((e) => e.type === 'quote' || e.type === 'trade').map((e) => e.symbol_id as string));
    const undeclared = [...used].filter((s) => !declared.has(s));
    expect(undeclared.some((s) => /^[A-Z]+_SPOT_[A-Z]+_[A-Z]+$/.test(s))).toBe(true);
    expect(undeclared.some((s) => s.includes('_PERP_'))).toBe(true);
    // Times: 7 fractional digits, never decreasing (no late lines asked for).
    let prev = '';
    for (const e of evs) {
      expect(e.time).toMatch(TIME7);
      expect((e.time as string) >= prev).toBe(true);
      prev = e.time as string;
    }
    // Numbers: mostly JSON numbers, some decimal strings (KRAKEN always).
    const q = by('quote');
    expect(q.some((e) => typeof e.bid_price === 'number')).toBe(true);
    expect(q.some((e) => typeof e.bid_price === 'string' && !(e.symbol_id as string).startsWith('KRAKEN'))).toBe(true);
    expect(q.filter((e) => (e.symbol_id as string).startsWith('KRAKEN')).every((e) => typeof e.ask_size === 'string')).toBe(true);
    // Every book is valid: 0 < bid < ask, spread below 67%, sizes > 0.
    for (const e of q) {
      const bid = Number(e.bid_price);
      const ask = Number(e.ask_price);
      expect(bid).toBeGreaterThan(0);
      expect(ask).toBeGreaterThan(bid);
      expect((ask - bid) / ((ask + bid) / 2)).toBeLessThan(0.67);
      expect(Number(e.bid_size)).toBeGreaterThan(0);
    }
  });

  it('has consistent cross rates and one biased exchange', () => {
    const evs = parseAll([...generateLog({ seed: 5, events: 80_000 })]) as Record<string, unknown>[];
    const mids = new Map<string, number[]>();
    const pairs = new Map<string, number[]>(); // by BASE_QUOTE, biased exchange excluded
    for (const e of evs) {
      if (e.type !== 'quote') continue;
      const s = e.symbol_id as string;
      const m = (Number(e.bid_price) + Number(e.ask_price)) / 2;
      if (!mids.has(s)) mids.set(s, []);
      mids.get(s)!.push(m);
      const pair = s.replace(/^[A-Z]+_SPOT_/, '');
      if (s.includes('_SPOT_') && !s.startsWith('OKX_')) {
        if (!pairs.has(pair)) pairs.set(pair, []);
        pairs.get(pair)!.push(m);
      }
    }
    const mean = (xs: number[] | undefined): number => {
      if (xs === undefined) throw new Error('no such market');
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    };
    const avg = (s: string): number => mean(mids.get(s));
    const ratio = avg('OKX_SPOT_BTC_USDT') / avg('BINANCE_SPOT_BTC_USDT');
    expect(ratio).toBeGreaterThan(1.01);
    expect(ratio).toBeLessThan(1.03);
    const other = avg('BYBIT_SPOT_BTC_USDT') / avg('BINANCE_SPOT_BTC_USDT');
    expect(Math.abs(other - 1)).toBeLessThan(0.004);
    // ETH/BTC ~ ETH/USD / BTC/USD (averages over the same span; within 1%).
    const cross = mean(pairs.get('ETH_USD')) / mean(pairs.get('BTC_USD'));
    expect(Math.abs(cross / mean(pairs.get('ETH_BTC')) - 1)).toBeLessThan(0.01);
  });

  it('has stale stretches: some market is silent for minutes', () => {
    const evs = parseAll([...generateLog({ seed: 2, events: 100_000, exchanges: 4, assets: 6 })]) as Record<string, unknown>[];
    const last = new Map<string, number>();
    let maxGap = 0;
    for (const e of evs) {
      if (e.type !== 'quote' || !(e.symbol_id as string).endsWith('BTC_USD')) continue;
      const t = Date.parse(e.time as string);
      const p = last.get(e.symbol_id as string);
      if (p !== undefined) maxGap = Math.max(maxGap, t - p);
      last.set(e.symbol_id as string, t);
    }
    expect(maxGap).toBeGreaterThan(120_000);
  });

  it('every line parses as an event when no bad lines are asked for', () => {
    const lines = [...generateLog({ seed: 9, events: 20_000, stringRate: 0.5 })];
    const rejects = lines.map((l) => parseJsonLine(l)).filter(isReject);
    expect(rejects).toEqual([]);
  });

  it('writes bad and late lines when asked', () => {
    const lines = [...generateLog({ seed: 11, events: 50_000, badRate: 0.02, lateRate: 0.01 })];
    const evs = parseAll(lines);
    const invalid = evs.filter((e) => e === undefined).length;
    expect(invalid).toBeGreaterThan(20);
    const ok = evs.filter((e): e is Record<string, unknown> => e !== undefined);
    expect(ok.some((e) => e.type !== 'quote' && e.type !== 'trade' && e.type !== 'exchange' && e.type !== 'symbol')).toBe(true);
    expect(ok.some((e) => e.type === 'quote' && Number(e.bid_size) < 0)).toBe(true);
    expect(ok.some((e) => e.type === 'quote' && Number(e.bid_price) > Number(e.ask_price))).toBe(true);
    const wide = (e: Record<string, unknown>): boolean => {
      const b = Number(e.bid_price);
      const a = Number(e.ask_price);
      return (a - b) / ((a + b) / 2) > 0.67;
    };
    expect(ok.some((e) => e.type === 'quote' && wide(e))).toBe(true);
    const reasons = new Set(
      lines
        .map((l) => parseJsonLine(l))
        .filter(isReject)
        .map((r) => r.reason),
    );
    for (const r of ['bad_json', 'unknown_type', 'missing_field', 'bad_size', 'bad_price', 'bad_time']) expect(reasons).toContain(r);
    // Late lines: a time more than a second before the clock.
    let maxT = 0;
    let late = 0;
    for (const e of ok) {
      const t = Date.parse(e.time as string);
      if (!Number.isFinite(t)) continue;
      if (t < maxT - 1000) late++;
      maxT = Math.max(maxT, t);
    }
    expect(late).toBeGreaterThan(100);
    // Without the options: none.
    const clean = parseAll([...generateLog({ seed: 11, events: 20_000 })]);
    expect(clean.every((e) => e !== undefined)).toBe(true);
  });
});

describe('writeLog', () => {
  it('writes the same rows as NDJSON, CSV and SQLite, reproducibly', async () => {
    const opts = { seed: 21, events: 3000, badRate: 0.02 };
    const nd = await writeLog(join(dir, 'a.ndjson'), opts);
    const nd2 = await writeLog(join(dir, 'b.ndjson'), opts);
    expect(sha(readFileSync(nd.path))).toBe(sha(readFileSync(nd2.path)));
    expect(readFileSync(nd.path, 'utf8')).toBe(`${[...generateLog(opts)].join('\n')}\n`);
    const csv = await writeLog(join(dir, 'a.csv'), opts);
    const csvText = readFileSync(csv.path, 'utf8').split('\n');
    expect(csvText[0]).toBe(CSV_HEADER);
    expect(CSV_HEADER).toBe(
      'type,time,exchange_id,legitimate,rank,symbol_id,symbol_type,asset_id_base,asset_id_quote,bid_price,bid_size,ask_price,ask_size,price,size,taker_side',
    );
    expect(csvText.length).toBe(3002);
    const gz = await writeLog(join(dir, 'a.csv.gz'), opts);
    expect(gz.bytes).toBeLessThan(csv.bytes);
    const sq = await writeLog(join(dir, 'a.sqlite'), opts);
    expect([nd.events, csv.events, gz.events, sq.events]).toEqual([3000, 3000, 3000, 3000]);
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(sq.path, { readonly: true });
    const cols = (db.prepare('PRAGMA table_info(events)').all() as { name: string; type: string }[]).map((c) => `${c.name}:${c.type}`);
    expect(cols).toEqual(COLUMNS.map((c) => `${c}:TEXT`));
    const first = db.prepare('SELECT * FROM events WHERE rowid = 1').get() as Record<string, unknown>;
    expect(first).toMatchObject({ type: 'exchange', legitimate: 'true', rank: '1', symbol_id: null });
    db.close();
  });
});

describe('parseArgs', () => {
  it('reads the CLI options', () => {
    const { out, opts } = parseArgs([
      '--seed',
      '1',
      '--events',
      '1000',
      '--out',
      'x.csv',
      '--duration',
      '1h',
      '--bad-rate=0.001',
      '--format',
      'csv',
    ]);
    expect(out).toBe('x.csv');
    expect(opts).toMatchObject({ seed: 1, events: 1000, rate: 1000 / 3600, badRate: 0.001, format: 'csv' });
    expect(() => parseArgs(['--seed', '1'])).toThrow(/usage/);
    expect(() => parseArgs(['--seed', '1', '--events', '1', '--out', 'x', '--colour', 'red'])).toThrow(/unknown option/);
  });
});
