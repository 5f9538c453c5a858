import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { parseTime } from '../../../src/core/time.js';
import type { QuoteEvent, TradeEvent } from '../../../src/core/types.js';
import { openSource, type SourceRecord } from '../../../src/io/source.js';
import { coinapiPath, sniffVendor } from '../../../src/io/vendorCsv.js';
import { replay } from '../../../src/replay/replay.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-vendor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(rel: string, text: string, gzip = false): string {
  const p = join(dir, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, gzip ? gzipSync(text) : text);
  return p;
}

async function readAll(path: string, opts: Parameters<typeof openSource>[1] = {}): Promise<SourceRecord[]> {
  const src = openSource(path, opts);
  const out: SourceRecord[] = [];
  for await (const b of src.batches()) out.push(...b);
  src.close();
  return out;
}

function rejects(db: string): { source: string; line: number; reason: string; message: string; raw: string }[] {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare('SELECT source, line, reason, message, raw FROM rejects ORDER BY rowid').all() as never;
  } finally {
    d.close();
  }
}

const Q = 'T-QUOTES/D-20230701/E-BINANCE/IDDI-1+SC-BINANCE_SPOT_ETH_USDT+S-ETHUSDT.csv';

describe('sniffVendor and coinapiPath', () => {
  it('tells the four vendor layouts by their header, ; or , delimited, in any column order and case', () => {
    expect(sniffVendor('id_site_coinapi;time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\r')).toEqual({
      format: 'coinapi',
      data: 'quotes',
      delimiter: ';',
    });
    expect(sniffVendor('\uFEFFtime_exchange,time_coinapi,guid,price,base_amount,taker_side')).toEqual({
      format: 'coinapi',
      data: 'trades',
      delimiter: ',',
    });
    expect(sniffVendor('exchange,symbol,timestamp,local_timestamp,ask_amount,ask_price,bid_price,bid_amount')).toEqual({
      format: 'tardis',
      data: 'quotes',
      delimiter: ',',
    });
    expect(sniffVendor('EXCHANGE,SYMBOL,TIMESTAMP,LOCAL_TIMESTAMP,ID,SIDE,PRICE,AMOUNT')).toEqual({
      format: 'tardis',
      data: 'trades',
      delimiter: ',',
    });
    expect(sniffVendor('type,time,symbol_id,bid_price')).toBeUndefined();
    expect(sniffVendor('time_exchange;time_coinapi;foo')).toBeUndefined();
  });

  it('reads the symbol from SC- and the date from D-YYYYMMDD', () => {
    expect(coinapiPath(`data/${Q}.gz`)).toEqual({ symbolId: 'BINANCE_SPOT_ETH_USDT', date: '2023-07-01' });
    expect(coinapiPath('x/IDDI-1+S-ETHUSDT.csv')).toEqual({});
    expect(coinapiPath('D-2023071/SC-A_SPOT_B_C.csv')).toEqual({ symbolId: 'A_SPOT_B_C' });
  });
});

describe('CoinAPI flat files', () => {
  it('reads quotes with times of day on the folder date, a 7th digit truncated, gzipped, CRLF, ; delimited', async () => {
    const p = write(
      `a/${Q}.gz`,
      'id_site_coinapi;time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\r\n' +
        'site;00:00:00.1000000;00:00:00.2345679;1880.5;2.5;1880.25;0.75\r\n' +
        'site;23:59:59.9999999;23:59:59.9999999;1881;1;1880;3\r\n',
      true,
    );
    const recs = await readAll(p);
    expect(recs.map((r) => r.line)).toEqual([2, 3]);
    const q = recs[0].event as QuoteEvent;
    expect(q).toMatchObject({ type: 'quote', symbolId: 'BINANCE_SPOT_ETH_USDT', time: parseTime('2023-07-01T00:00:00.234567Z') });
    expect([q.askPrice.text, q.askSize.text, q.bidPrice.text, q.bidSize.text]).toEqual(['1880.5', '2.5', '1880.25', '0.75']);
    expect(recs[1].event!.time).toBe(parseTime('2023-07-01T23:59:59.999999Z'));
    expect(recs[0].raw).toBe('site;00:00:00.1000000;00:00:00.2345679;1880.5;2.5;1880.25;0.75');
    // By the exchange's time.
    const ex = await readAll(p, { time: 'exchange' });
    expect(ex[0].event!.time).toBe(parseTime('2023-07-01T00:00:00.1Z'));
  });

  it('reads trades with ISO times, , delimited, taker sides as CoinAPI writes them', async () => {
    const p = write(
      'b/T-TRADES/D-20230701/E-KRAKEN/IDDI-9+SC-KRAKEN_SPOT_BTC_USD+S-XBT-USD.csv',
      'time_exchange,time_coinapi,guid,price,base_amount,taker_side\n' +
        '2023-07-01T12:00:00.1234560Z,2023-07-01T12:00:00.2345670Z,550e8400,30000.50,0.1,BUY\n' +
        '2023-07-01T12:00:01.1234567Z,2023-07-01T12:00:01.2345678Z,550e8401,30001.00,0.05,SELL_ESTIMATED\n' +
        '2023-07-01T12:00:02Z,2023-07-01T12:00:02Z,550e8402,30001.00,0.05,\n',
    );
    const recs = await readAll(p);
    const t = recs.map((r) => r.event as TradeEvent);
    expect(t.map((e) => e.takerSide)).toEqual(['BUY', 'SELL_ESTIMATED', undefined]);
    expect(t[0]).toMatchObject({ symbolId: 'KRAKEN_SPOT_BTC_USD', time: parseTime('2023-07-01T12:00:00.234567Z') });
    expect(t[1].time).toBe(parseTime('2023-07-01T12:00:01.234567Z'));
    expect(t[0].price.text).toBe('30000.50');
  });

  it('turns every bad row into a reject with its file, line, reason and raw text, and reads on', async () => {
    const p = write(
      `c/${Q}`,
      'time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n' +
        '00:00:01.0000000;00:00:01.0000000;1880.5;2.5;1880.25;0.75\n' +
        '00:00:02.0000000;00:00:02.0000000;-1;2.5;1880.25;0.75\n' + // 3: bad price
        '00:00:03.0000000;00:00:03.0000000;1880.5;2.5;1880.25;\n' + // 4: empty bid_sx
        '00:00:04.0000000;25:00:00.0000000;1880.5;2.5;1880.25;0.75\n' + // 5: bad time
        '00:00:05.0000000;00:00:05.0000000;1880.5;2.5\n' + // 6: too few fields
        '\n' + // 7: blank
        '00:00:08.0000000;00:00:08.0000000;1880.5;x;1880.25;0.75\n' + // 8: bad size
        '00:00:09.0000000;00:00:09.0000000;1881.5;2.5;1881.25;0.75\n',
    );
    const db = join(dir, 'c.sqlite');
    const s = await replay({ inputs: [p], db });
    expect(s.eventsRead).toBe(7);
    expect(s.eventsAccepted).toBe(2);
    const r = rejects(db);
    expect(r.map((x) => [x.line, x.reason])).toEqual([
      [3, 'bad_price'],
      [4, 'missing_field'],
      [5, 'bad_time'],
      [6, 'bad_json'],
      [8, 'bad_number'],
    ]);
    for (const x of r) expect(x.source).toBe(p);
    expect(r[0].message).toContain('column "ask_px"');
    expect(r[1].message).toContain('column "bid_sx"');
    expect(r[2].message).toContain('column "time_coinapi"');
    expect(r[3].message).toContain('the header has 6');
    expect(r[0].raw).toBe('00:00:02.0000000;00:00:02.0000000;-1;2.5;1880.25;0.75');
  });

  it('a file name without SC- and a time of day without a D- folder are rejects, row by row', async () => {
    const a = write('d/E-X/IDDI-1+S-ETHUSDT.csv', 'time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n00:00:01;00:00:01;2;1;1;1\n');
    const b = write(
      'd/E-X/IDDI-1+SC-X_SPOT_A_B.csv',
      'time_exchange;time_coinapi;ask_px;ask_sx;bid_px;bid_sx\n00:00:01;00:00:01;2;1;1;1\n',
    );
    const db = join(dir, 'd.sqlite');
    const s = await replay({ inputs: [a, b], db });
    expect(s.eventsRejected).toBe(2);
    const r = rejects(db);
    expect(r.map((x) => [x.source, x.line, x.reason])).toEqual([
      [a, 2, 'unknown_symbol'],
      [b, 2, 'bad_time'],
    ]);
    expect(r[0].message).toContain('SC-');
    expect(r[1].message).toContain('D-YYYYMMDD');
  });

  it('a header without a required column stops the run, naming the file and the column', async () => {
    const p = write('e/SC-X_SPOT_A_B.csv', 'time_exchange;time_coinapi;ask_px;ask_sx;bid_px\n00:00:01;00:00:01;2;1;1\n');
    await expect(readAll(p)).rejects.toThrow(/CoinAPI quotes file ".*SC-X_SPOT_A_B.csv" has no column "bid_sx"/);
  });
});

describe('tardis CSV files', () => {
  const SYMBOLS =
    '{"type":"symbol","time":"2020-02-22T00:00:00Z","symbol_id":"BINANCEFTS_PERP_BTC_USDT","exchange_id":"BINANCE-FUTURES","symbol_type":"PERPETUAL","asset_id_base":"BTC","asset_id_quote":"USDT","symbol_id_exchange":"BTCUSDT"}\n';

  it('reads the real files of the fixtures: every row an accepted event once the symbol is mapped', async () => {
    const sym = write('f/symbols.ndjson', SYMBOLS);
    const db = join(dir, 'f.sqlite');
    const s = await replay({ inputs: [sym, 'fixtures/tardis'], merge: true, db });
    expect(s.inputs).toEqual([
      sym,
      'fixtures/tardis/binance-futures/quotes/2020-02-22_BTCUSDT.csv',
      'fixtures/tardis/binance-futures/trades/2020-02-22_BTCUSDT.csv',
    ]);
    expect(s.eventsRead).toBe(801);
    expect(s.eventsRejected).toBe(0);
    expect(s.eventsAccepted).toBe(801);
    const rec = s.engine.symbols().find((r) => r.symbolId === 'BINANCEFTS_PERP_BTC_USDT');
    expect(rec?.symbolIdExchange).toBe('BTCUSDT');
    const recs = await readAll('fixtures/tardis/binance-futures/trades/2020-02-22_BTCUSDT.csv');
    expect(recs[0].event).toMatchObject({ type: 'trade', time: 1582329602418379, takerSide: 'BUY' });
    expect(recs[0].venue).toEqual({ exchange: 'binance-futures', symbol: 'BTCUSDT' });
    expect((await readAll('fixtures/tardis/binance-futures/trades/2020-02-22_BTCUSDT.csv', { time: 'exchange' }))[0].event!.time).toBe(
      1582329602111000,
    );
  });

  it('bad rows and rows of a market no symbol event maps are rejects with file and line (merged)', async () => {
    const sym = write('g/symbols.ndjson', SYMBOLS);
    const p = write(
      'g/t/trades.csv.gz',
      'exchange,symbol,timestamp,local_timestamp,id,side,price,amount\n' +
        'binance-futures,BTCUSDT,1582329602111000,1582329602418379,1,buy,9682,0.132\n' +
        'binance-futures,BTCUSDT,1582329602111000,1582329602418380,2,BUYER,9682,0.132\n' + // 3: side
        'binance-futures,BTCUSDT,1582329602111000,x,3,sell,9682,0.132\n' + // 4: time
        'binance-futures,ETHUSDT,1582329602111000,1582329602418381,4,unknown,200,1\n' + // 5: unmapped
        'binance-futures,BTCUSDT,1582329602111000,1582329602418382,5,sell,0,0.132\n' + // 6: price 0
        ',BTCUSDT,1582329602111000,1582329602418383,6,sell,9682,0.132\n' + // 7: no exchange
        'BINANCE-futures,BTCUSDT,1582329602111000,1582329602418384,7,unknown,9682,0.132\n',
      true,
    );
    const db = join(dir, 'g.sqlite');
    const s = await replay({ inputs: [sym, p], db, merge: true });
    expect(s.eventsAccepted).toBe(3);
    const r = rejects(db);
    expect(r.map((x) => [x.line, x.reason])).toEqual([
      [3, 'bad_field'],
      [4, 'bad_time'],
      [5, 'unknown_symbol'],
      [6, 'bad_price'],
      [7, 'missing_field'],
    ]);
    for (const x of r) expect(x.source).toBe(p);
    expect(r[0].message).toContain('column "side"');
    expect(r[2].message).toContain('exchange "binance-futures" symbol "ETHUSDT"');
    expect(r[2].raw).toBe('binance-futures,ETHUSDT,1582329602111000,1582329602418381,4,unknown,200,1');
  });

  it('with a reorder window, a row read before the symbol event that maps it is mapped when released', async () => {
    const sym = write('r/symbols.ndjson', SYMBOLS);
    const trades = 'fixtures/tardis/binance-futures/trades/2020-02-22_BTCUSDT.csv';
    // The symbol event (00:00:00) stays in the 5-second window while the first rows (00:00:02 on) are read.
    const s = await replay({ inputs: [sym, trades], reorderWindowUs: 5_000_000, db: join(dir, 'r.sqlite') });
    expect([s.eventsRead, s.eventsAccepted, s.eventsRejected]).toEqual([401, 401, 0]);
    // A row no symbol event maps is still a reject, when released.
    const other = write(
      'r/eth.csv',
      'exchange,symbol,timestamp,local_timestamp,id,side,price,amount\nbinance-futures,ETHUSDT,1582329602111000,1582329602418381,4,unknown,200,1\n',
    );
    const db = join(dir, 'r2.sqlite');
    const s2 = await replay({ inputs: [sym, other], reorderWindowUs: 5_000_000, db });
    expect(s2.rejectsByReason).toEqual({ unknown_symbol: 1 });
    expect(rejects(db).map((x) => [x.source, x.line])).toEqual([[other, 2]]);
  });

  it('quotes with an empty side are rejects (missing field, named by its tardis column)', async () => {
    const sym = write('h/symbols.ndjson', SYMBOLS);
    const p = write(
      'h/quotes.csv',
      'exchange,symbol,timestamp,local_timestamp,ask_amount,ask_price,bid_price,bid_amount\n' +
        'binance-futures,BTCUSDT,1582329601096000,1582329603502092,0.84,9682,9681.92,0.67\n' +
        'binance-futures,BTCUSDT,1582329601096000,1582329603502093,0.84,9682,,\n',
    );
    const db = join(dir, 'h.sqlite');
    await replay({ inputs: [sym, p], db });
    const r = rejects(db);
    expect(r.map((x) => [x.line, x.reason])).toEqual([[3, 'missing_field']]);
    expect(r[0].message).toContain('column "bid_price"');
  });
});
