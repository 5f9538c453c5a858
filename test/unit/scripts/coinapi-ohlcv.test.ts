/**
 * The CoinAPI OHLCV conversion (scripts/coinapi-ohlcv.ts) and the argument parsing and table of
 * scripts/check-partitions.ts, on a few lines written here (made-up bars, not the data's).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { CHECKED, formatTable, parseArgs } from '../../../scripts/check-partitions.js';
import { barReader, barsToEvents, convertOhlcv, type OhlcvBar } from '../../../scripts/coinapi-ohlcv.js';
import { parseJsonLine } from '../../../src/core/events.js';
import { isReject } from '../../../src/core/types.js';
import { replay } from '../../../src/replay/replay.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-coinapi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER =
  'symbol_id,exchange,base,quote,time_period_start,time_period_end,time_open,time_close,price_open,price_high,price_low,price_close,volume_traded,trades_count';
/** Made-up bars, out of order: two hours, three markets, one bar with no volume, numbers in exponent form. */
const ROWS = [
  'ZEDEX_SPOT_AAA_BBB,ZEDEX,AAA,BBB,2020-01-01T01:00:00.0000000Z,2020-01-01T02:00:00.0000000Z,2020-01-01T01:00:05.0000000Z,2020-01-01T01:59:50.0000000Z,10.5,11,10,10.75,3.5,7',
  'ALPHEX_SPOT_AAA_BBB,ALPHEX,AAA,BBB,2020-01-01T00:00:00.0000000Z,2020-01-01T01:00:00.0000000Z,2020-01-01T00:00:01.0000000Z,2020-01-01T00:59:59.0000000Z,10,10.5,9.5,10.25,2,4',
  'ALPHEX_SPOT_CCC_AAA,ALPHEX,CCC,AAA,2020-01-01T00:00:00.0000000Z,2020-01-01T01:00:00.0000000Z,2020-01-01T00:10:00.0000000Z,2020-01-01T00:50:00.0000000Z,2e-05,2.5e-05,1.5e-05,2.000000000000001e-05,1.5e+3,9',
  'ZEDEX_SPOT_AAA_BBB,ZEDEX,AAA,BBB,2020-01-01T00:00:00.0000000Z,2020-01-01T01:00:00.0000000Z,2020-01-01T00:00:02.0000000Z,2020-01-01T00:59:58.0000000Z,10.2,10.6,10.1,10.4,0,0',
  'ALPHEX_SPOT_AAA_BBB,ALPHEX,AAA,BBB,2020-01-01T01:00:00.0000000Z,2020-01-01T02:00:00.0000000Z,2020-01-01T01:00:01.0000000Z,2020-01-01T01:59:59.0000000Z,10.25,10.9,10.2,10.8,1.25,3',
];

function bars(rows = ROWS, header = HEADER): OhlcvBar[] {
  const read = barReader(header);
  return rows.map((r, i) => read(r, i + 2)).filter((b): b is OhlcvBar => b !== undefined);
}

describe('barReader', () => {
  it('reads the columns by name, the numbers as plain decimals, exactly', () => {
    const [b, , c] = bars();
    expect(b).toEqual({
      symbolId: 'ZEDEX_SPOT_AAA_BBB',
      exchange: 'ZEDEX',
      base: 'AAA',
      quote: 'BBB',
      end: '2020-01-01T02:00:00.0000000Z',
      endUs: Date.parse('2020-01-01T02:00:00Z') * 1000,
      close: '10.75',
      volume: '3.5',
    });
    expect(c.close).toBe('0.00002000000000000001');
    expect(c.volume).toBe('1500');
    // Columns in another order: the same bar.
    const cols = HEADER.split(',');
    const order = [...cols.keys()].reverse();
    const reversed = bars(
      ROWS.map((r) => order.map((i) => r.split(',')[i]).join(',')),
      order.map((i) => cols[i]).join(','),
    );
    expect(reversed).toEqual(bars());
  });

  it('refuses a header without a needed column, a row with another number of fields, a bad time or number; skips empty lines', () => {
    expect(() => barReader(HEADER.replace('price_close', 'close'))).toThrow(/no column "price_close"/);
    const read = barReader(HEADER);
    expect(read('', 3)).toBeUndefined();
    expect(() => read(`${ROWS[0]},extra`, 4)).toThrow(/line 4: 15 fields where the header has 14/);
    expect(() => read(ROWS[0].replace('2020-01-01T02:00:00.0000000Z', 'yesterday'), 5)).toThrow(/line 5: time_period_end "yesterday"/);
    expect(() => read(ROWS[0].replace(',10.75,', ',ten,'), 6)).toThrow(/line 6: price_close "ten" is not a number/);
  });
});

describe('barsToEvents', () => {
  it('writes the exchanges and symbols first, then per bar a trade and a locked quote of size 0, by time then symbol id; volume 0 left out', () => {
    const { events, stats } = barsToEvents(bars());
    const t1 = '2020-01-01T01:00:00.0000000Z';
    const t2 = '2020-01-01T02:00:00.0000000Z';
    expect(events).toEqual([
      { type: 'exchange', time: t1, exchange_id: 'ALPHEX', legitimate: true, rank: 0 },
      { type: 'exchange', time: t1, exchange_id: 'ZEDEX', legitimate: true, rank: 0 },
      ...[
        ['ALPHEX_SPOT_AAA_BBB', 'ALPHEX', 'AAA', 'BBB'],
        ['ALPHEX_SPOT_CCC_AAA', 'ALPHEX', 'CCC', 'AAA'],
        ['ZEDEX_SPOT_AAA_BBB', 'ZEDEX', 'AAA', 'BBB'],
      ].map(([symbol_id, exchange_id, asset_id_base, asset_id_quote]) => ({
        type: 'symbol',
        time: t1,
        symbol_id,
        exchange_id,
        symbol_type: 'SPOT',
        asset_id_base,
        asset_id_quote,
      })),
      ...(
        [
          [t1, 'ALPHEX_SPOT_AAA_BBB', '10.25', '2'],
          [t1, 'ALPHEX_SPOT_CCC_AAA', '0.00002000000000000001', '1500'],
          [t2, 'ALPHEX_SPOT_AAA_BBB', '10.8', '1.25'],
          [t2, 'ZEDEX_SPOT_AAA_BBB', '10.75', '3.5'],
        ] as const
      ).flatMap(([time, symbol_id, price, size]) => [
        { type: 'trade', time, symbol_id, price, size },
        { type: 'quote', time, symbol_id, bid_price: price, bid_size: '0', ask_price: price, ask_size: '0' },
      ]),
    ]);
    expect(stats).toEqual({ bars: 5, skipped: 1, events: 13, exchanges: 2, symbols: 3, first: t1, last: t2 });
    // Every event is one xrate reads.
    for (const e of events) expect(isReject(parseJsonLine(JSON.stringify(e))), JSON.stringify(e)).toBe(false);
    // The same bars in another order: the same log.
    expect(barsToEvents(bars([...ROWS].reverse())).events).toEqual(events);
  });

  it('leaves the quotes out when asked', () => {
    const { events, stats } = barsToEvents(bars(), { quotes: false });
    expect(events.filter((e) => e.type === 'quote')).toEqual([]);
    expect(events.filter((e) => e.type === 'trade')).toHaveLength(4);
    expect(stats.events).toBe(9);
    expect(barsToEvents([])).toEqual({ events: [], stats: { bars: 0, skipped: 0, events: 0, exchanges: 0, symbols: 0 } });
  });
});

describe('convertOhlcv', () => {
  it('converts a gzipped CSV into a log that xrate replays into rates (none from trades alone)', async () => {
    const csv = join(dir, 'bars.csv.gz');
    writeFileSync(csv, gzipSync(`${HEADER}\n${ROWS.join('\n')}\n`));
    const log = join(dir, 'log.ndjson');
    const stats = await convertOhlcv(csv, log);
    expect(stats.events).toBe(13);
    expect(
      readFileSync(log, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(barsToEvents(bars()).events);
    const s = await replay({ inputs: [log] });
    expect(s.eventsRejected).toBe(0);
    // At 02:00 both AAA/BBB markets quote, but ZEDEX traded first at 02:00: it is eligible only
    // from the next 4-hour refresh on (rule 8), so ALPHEX's close alone is the rate.
    expect(s.engine.rate('AAA', 'BBB')?.rate).toBe(10.8);
    // CCC/BBB through AAA: CCC/AAA (carried from 01:00) times AAA/BBB.
    expect(s.engine.rate('CCC', 'BBB')?.rate).toBeCloseTo(0.00002000000000000001 * 10.8, 15);
    const plainCsv = join(dir, 'bars.csv');
    writeFileSync(plainCsv, `${HEADER}\n${ROWS.join('\n')}\n`);
    await convertOhlcv(plainCsv, log, { quotes: false });
    expect((await replay({ inputs: [log] })).rateChanges).toBe(0);
    writeFileSync(plainCsv, '');
    await expect(convertOhlcv(plainCsv, log)).rejects.toThrow(/is empty/);
  });
});

describe('check-partitions', () => {
  it('parses its arguments', () => {
    expect(parseArgs(['--coinapi-ohlcv', 'd'])).toEqual({
      dir: 'd',
      workers: [2, 3, 4],
      keep: undefined,
      ownMetrics: true,
      tradesOnly: false,
      shift: 1817,
    });
    expect(
      parseArgs(['--coinapi-ohlcv', 'd', '--workers', '2,5', '--keep', 'o', '--no-own-metrics', '--trades-only', '--shift', '0']),
    ).toEqual({
      dir: 'd',
      workers: [2, 5],
      keep: 'o',
      ownMetrics: false,
      tradesOnly: true,
      shift: 0,
    });
    expect(() => parseArgs(['--coinapi-ohlcv', 'd', '--shift', '-1'])).toThrow(/--shift takes whole seconds/);
    expect(() => parseArgs([])).toThrow(/--coinapi-ohlcv DIR is required/);
    expect(() => parseArgs(['--coinapi-ohlcv', 'd', '--workers', '1,x'])).toThrow(/--workers takes whole numbers from 2 to 64/);
    expect(() => parseArgs(['--coinapi-ohlcv'])).toThrow(/--coinapi-ohlcv needs a value/);
    expect(() => parseArgs(['--coinapi-ohlcv', 'd', '--fast'])).toThrow(/unknown argument "--fast"/);
  });

  it('prints one row per table, one column per partition count, a difference by its row', () => {
    const tables = (diff: boolean) =>
      CHECKED.map((table, i) => ({
        table,
        rows: [i, i] as [number, number],
        ...(diff && table === 'ohlc' ? { difference: { index: 0, columns: ['count'] } } : {}),
      }));
    const text = formatTable([
      { label: '2 partitions', tables: tables(false) },
      { label: '3 partitions', tables: tables(true) },
    ]);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^table +serial rows +2 partitions +3 partitions$/);
    expect(lines).toHaveLength(2 + CHECKED.length);
    expect(lines.find((l) => l.startsWith('ohlc'))).toMatch(/equal \(1 rows\) +DIFFERS at row 0 \(1 rows\)$/);
    expect(lines.find((l) => l.startsWith('rates'))).toMatch(/equal \(0 rows\) +equal \(0 rows\)$/);
  });
});
