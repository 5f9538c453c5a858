/**
 * Vendor export → import round-trips events: random quotes and trades of one market written as a
 * CoinAPI flat file (either delimiter, ISO times or times of day with a 7th digit, optional
 * id_site_coinapi, CRLF) and as a tardis CSV file are read back by openSource as the same events
 * (times to the µs, decimals to their text, taker sides), in the same order, with their lines.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { formatTime } from '../../src/core/time.js';
import type { QuoteEvent, TradeEvent } from '../../src/core/types.js';
import { openSource, type SourceRecord } from '../../src/io/source.js';

const RUNS = { seed: 2023, numRuns: 60 };
const DAY0 = 1_688_169_600_000_000; // 2023-07-01T00:00:00Z
const dir = mkdtempSync(join(tmpdir(), 'xrate-vendor-rt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const dec = fc
  .tuple(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 0, max: 99_999_999 }), fc.integer({ min: 0, max: 8 }))
  .map(([i, f, d]) => (d === 0 ? String(i) : `${i}.${String(f).padStart(8, '0').slice(0, d)}`));
const price = dec.filter((s) => Number(s) > 0);

interface Row {
  quote: boolean;
  us: number;
  digit7: number;
  bid: string;
  bidSize: string;
  ask: string;
  askSize: string;
  side: 'BUY' | 'SELL' | 'UNKNOWN';
}

const rowArb = fc.record({
  quote: fc.boolean(),
  us: fc.integer({ min: 0, max: 86_400_000_000 - 1 }),
  digit7: fc.integer({ min: 0, max: 9 }),
  bid: price,
  bidSize: dec,
  ask: price,
  askSize: dec,
  side: fc.constantFrom('BUY', 'SELL', 'UNKNOWN'),
});

async function readAll(path: string): Promise<SourceRecord[]> {
  const src = openSource(path, { batchSize: 7 });
  const out: SourceRecord[] = [];
  for await (const b of src.batches()) out.push(...b);
  src.close();
  return out;
}

/** What each row must read back as: its event's fields, decimals as text. */
function expected(r: Row, symbolId: string): unknown {
  const time = DAY0 + r.us;
  return r.quote
    ? { type: 'quote', time, symbolId, bid: r.bid, bidSize: r.bidSize, ask: r.ask, askSize: r.askSize }
    : { type: 'trade', time, symbolId, price: r.bid, size: r.bidSize, side: r.side };
}

function got(rec: SourceRecord): unknown {
  const e = rec.event!;
  if (e.type === 'quote') {
    const q = e as QuoteEvent;
    return {
      type: 'quote',
      time: q.time,
      symbolId: q.symbolId,
      bid: q.bidPrice.text,
      bidSize: q.bidSize.text,
      ask: q.askPrice.text,
      askSize: q.askSize.text,
    };
  }
  const t = e as TradeEvent;
  return { type: 'trade', time: t.time, symbolId: t.symbolId, price: t.price.text, size: t.size.text, side: t.takerSide };
}

let n = 0;
describe('vendor files round-trip events', () => {
  it('CoinAPI flat files', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowArb, { minLength: 1, maxLength: 40 }),
        fc.constantFrom(';', ','),
        fc.boolean(),
        fc.boolean(),
        async (rows, d, timeOfDay, idSite) => {
          const base = join(dir, `c${n++}`, 'D-20230701', 'E-KRAKEN');
          mkdirSync(base, { recursive: true });
          const name = (t: string) => join(base, `IDDI-7+SC-KRAKEN_SPOT_BTC_USD+S-XBTUSD.${t}.csv`);
          const time = (r: Row): string => {
            const iso = `${formatTime(DAY0 + r.us).slice(0, 26)}${r.digit7}Z`;
            return timeOfDay ? iso.slice(11, 27) : iso;
          };
          const quotes = rows.filter((r) => r.quote);
          const trades = rows.filter((r) => !r.quote);
          const qh = [...(idSite ? ['id_site_coinapi'] : []), 'time_exchange', 'time_coinapi', 'ask_px', 'ask_sx', 'bid_px', 'bid_sx'].join(
            d,
          );
          const th = ['time_exchange', 'time_coinapi', 'guid', 'price', 'base_amount', 'taker_side'].join(d);
          writeFileSync(
            name('q'),
            `${[qh, ...quotes.map((r) => [...(idSite ? ['s1'] : []), time(r), time(r), r.ask, r.askSize, r.bid, r.bidSize].join(d))].join('\r\n')}\r\n`,
          );
          writeFileSync(
            name('t'),
            `${[th, ...trades.map((r) => [time(r), time(r), 'g', r.bid, r.bidSize, r.side].join(d))].join('\r\n')}\r\n`,
          );
          const q = await readAll(name('q'));
          const t = await readAll(name('t'));
          expect(q.map((r) => r.line)).toEqual(quotes.map((_r, k) => k + 2));
          expect(q.map(got)).toEqual(quotes.map((r) => expected(r, 'KRAKEN_SPOT_BTC_USD')));
          expect(t.map(got)).toEqual(trades.map((r) => expected(r, 'KRAKEN_SPOT_BTC_USD')));
        },
      ),
      RUNS,
    );
  });

  it('tardis CSV', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rowArb, { minLength: 1, maxLength: 40 }), async (rows) => {
        const base = join(dir, `t${n++}`);
        mkdirSync(base, { recursive: true });
        const quotes = rows.filter((r) => r.quote);
        const trades = rows.filter((r) => !r.quote);
        const us = (r: Row): number => DAY0 + r.us;
        writeFileSync(
          join(base, 'q.csv'),
          `${['exchange,symbol,timestamp,local_timestamp,ask_amount,ask_price,bid_price,bid_amount', ...quotes.map((r) => ['kraken', 'XBT/USD', us(r) - 5, us(r), r.askSize, r.ask, r.bid, r.bidSize].join(','))].join('\n')}\n`,
        );
        writeFileSync(
          join(base, 't.csv'),
          `${['exchange,symbol,timestamp,local_timestamp,id,side,price,amount', ...trades.map((r) => ['kraken', 'XBT/USD', us(r) - 5, us(r), 'i', r.side.toLowerCase(), r.bid, r.bidSize].join(','))].join('\n')}\n`,
        );
        const q = await readAll(join(base, 'q.csv'));
        const t = await readAll(join(base, 't.csv'));
        // The placeholder symbol id is the exchange's symbol; the ingest maps it (vendorCsv.test.ts).
        expect(q.map(got)).toEqual(quotes.map((r) => expected(r, 'XBT/USD')));
        expect(t.map(got)).toEqual(trades.map((r) => expected(r, 'XBT/USD')));
        for (const r of [...q, ...t]) expect(r.venue).toEqual({ exchange: 'kraken', symbol: 'XBT/USD' });
      }),
      RUNS,
    );
  });
});
