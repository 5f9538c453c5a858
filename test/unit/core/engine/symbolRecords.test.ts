import { describe, expect, it } from 'vitest';
import { restoreEngine, type SymbolRecord } from '../../../../src/core/engine.js';
import { parseEvent } from '../../../../src/core/events.js';
import { isReject, type XrateEvent } from '../../../../src/core/types.js';
import { ev, Scenario, us } from '../../../helpers/scenario.js';

// docs/methodology.md section 10: the symbol records and their derived values at a tick.
const K = 'KRAKEN_SPOT_BTC_USD';

function record(s: Scenario, id = K): SymbolRecord {
  const r = s.engine.symbols().find((x) => x.symbolId === id);
  if (!r) throw new Error(`no record of ${id}`);
  return r;
}

function symbolEvent(fields: Record<string, unknown>): XrateEvent {
  const e = parseEvent({
    type: 'symbol',
    exchange_id: 'KRAKEN',
    symbol_type: 'SPOT',
    asset_id_base: 'BTC',
    asset_id_quote: 'USD',
    ...fields,
  });
  if (isReject(e)) throw new Error(e.message);
  return e;
}

describe('symbol records: volumes', () => {
  it('volume_1hrs counts (T - 1 h, T]: a trade exactly 1 h before T is out, 1 µs later is in', () => {
    const s = new Scenario().feed(`
      t 00:00:00.5 ${K} 100 1
      t 01:00:00 ${K} 100 0.1
      t 01:00:00.000001 ${K} 100 0.2
      t 02:00:00 ${K} 100 4
    `);
    s.to('02:00:00');
    const r = record(s);
    expect(r.volume1hrs).toBe('4.2'); // 01:00:00 is exactly 1 h before: out
    expect(r.volume1day).toBe('5.3');
    s.to('02:00:01');
    expect(record(s).volume1hrs).toBe('4'); // ... and 01:00:00.000001 is out one second later
  });

  it('volume_1day counts (T - 24 h, T], exactly (0.1 + 0.2 = 0.3)', () => {
    const s = new Scenario().feed(`
      t 00:00:00.000001 ${K} 100 0.1
      t 00:00:01 ${K} 100 0.2
      t 2024-01-02T00:00:00.5Z ${K} 100 1e-8
    `);
    s.to('2024-01-01T00:00:01Z');
    expect(record(s).volume1day).toBe('0.3');
    s.to('2024-01-02T00:00:00Z');
    expect(record(s).volume1day).toBe('0.3'); // 00:00:00.000001 is 1 µs later than 24 h back: in
    s.to('2024-01-02T00:00:01Z');
    expect(record(s).volume1day).toBe('0.00000001'); // 00:00:01 is exactly 24 h back: out
    expect(record(s).volume1hrs).toBe('0.00000001');
  });

  it('the USD volumes use rate(base, USD) at T, fresh or carried, and are absent without one', () => {
    const s = new Scenario().feed(`
      t 00:00:00.5 ${K} 100 2
      q 00:00:00.6 ${K} 99 1 101 1
      t 00:00:00.7 KRAKEN_SPOT_FOO_BAR 3 5
    `);
    s.to('00:10:00'); // the quote is stale: BTC/USD carried
    expect(s.engine.rate('BTC', 'USD')?.fresh).toBe(false);
    const r = record(s);
    expect(r.volume1day).toBe('2');
    expect(r.volume1dayUsd).toBe(200);
    expect(r.volume1hrsUsd).toBe(200);
    const foo = record(s, 'KRAKEN_SPOT_FOO_BAR');
    expect(foo.volume1day).toBe('5');
    expect(foo.volume1dayUsd).toBeUndefined();
  });
});

describe('symbol records: times and price', () => {
  it('data_* are the first and last accepted quote and trade at or before T', () => {
    const s = new Scenario().feed(`
      q 00:00:00.2 ${K} 99 1 101 1
      t 00:00:00.5 ${K} 100.5 1
      q 00:00:01.5 ${K} 98 1 102 1
      t 00:00:01.7 ${K} 101 1
    `);
    s.to('00:00:01');
    let r = record(s);
    expect([r.dataStart, r.dataEnd]).toEqual([us('00:00:00.2'), us('00:00:00.5')]);
    expect([r.dataQuoteStart, r.dataQuoteEnd, r.dataTradeStart, r.dataTradeEnd]).toEqual([
      us('00:00:00.2'),
      us('00:00:00.2'),
      us('00:00:00.5'),
      us('00:00:00.5'),
    ]);
    expect(r.price).toBe('100.5');
    s.to('00:00:02');
    r = record(s);
    expect([r.dataEnd, r.dataQuoteEnd, r.dataTradeEnd]).toEqual([us('00:00:01.7'), us('00:00:01.5'), us('00:00:01.7')]);
    expect(r.price).toBe('101');
  });

  it('an event after the last tick does not count yet (the record is as of the tick)', () => {
    const s = new Scenario().feed(`
      t 00:00:00.5 ${K} 100 1
      t 00:00:01.5 ${K} 200 2
    `);
    // applied, but the tick 00:00:02 is not computed: the record is as of 00:00:01
    const r = record(s);
    expect([r.dataTradeEnd, r.price, r.volume1hrs]).toEqual([us('00:00:00.5'), '100', '1']);
  });

  it('price is the quote midpoint, exact, until the first trade', () => {
    const s = new Scenario().feed(`
      q 00:00:00.2 ${K} 0.1 1 0.2 1
      t 00:00:01.5 ${K} 0.17 1
    `);
    s.to('00:00:01');
    expect(record(s).price).toBe('0.15');
    s.to('00:00:02');
    expect(record(s).price).toBe('0.17');
  });

  it('a quote the spread filter discards is accepted: it counts for the quote times, not for the price', () => {
    const s = new Scenario().feed(`
      q 00:00:00.2 ${K} 99 1 101 1
      q 00:00:00.4 ${K} 100 1 300 1
    `);
    s.to('00:00:01');
    expect(s.engine.getStats().quotesDiscarded).toBe(1);
    const r = record(s);
    expect(r.dataQuoteEnd).toBe(us('00:00:00.4'));
    expect(r.price).toBe('100');
  });

  it('the last trade wins ties by log order; a later trade read earlier in the second still wins', () => {
    const s = new Scenario().feed(`
      t 00:00:00.9 ${K} 300 1
      t 00:00:00.5 ${K} 100 1
      t 00:00:00.9 ${K} 200 1
    `);
    s.to('00:00:01');
    expect(record(s).price).toBe('200');
  });
});

describe('symbol records: declarations and listing', () => {
  it("unions the symbol events (later fields win); active is the latest event's", () => {
    const s = new Scenario();
    s.engine.apply(symbolEvent({ time: '2024-01-01T00:00:00Z', symbol_id: K, symbol_id_exchange: 'XXBTZUSD', price_precision: 1 }));
    s.engine.apply(symbolEvent({ time: '2024-01-01T00:00:00.5Z', symbol_id: K, asset_id_base_exchange: 'XBT', active: false }));
    s.to('00:00:01');
    expect(record(s)).toMatchObject({ symbolIdExchange: 'XXBTZUSD', assetIdBaseExchange: 'XBT', pricePrecision: 1, active: false });
    s.engine.apply(symbolEvent({ time: '2024-01-01T00:00:01.5Z', symbol_id: K, price_precision: 2 }));
    s.to('00:00:02');
    expect(record(s)).toMatchObject({ symbolIdExchange: 'XXBTZUSD', pricePrecision: 2, active: true });
  });

  it('a later event without the optional fields, at the same time or later, keeps them (also through a snapshot)', () => {
    const full = { symbol_id: K, price_precision: 2, size_precision: 8, symbol_id_exchange: 'XXBTZUSD', option_strike_price: '0.5' };
    const kept = { pricePrecision: 2, sizePrecision: 8, symbolIdExchange: 'XXBTZUSD', optionStrikePrice: '0.5', active: true };
    const s = new Scenario();
    s.engine.apply(symbolEvent({ time: '2024-01-01T00:00:00Z', ...full }));
    s.engine.apply(symbolEvent({ time: '2024-01-01T00:00:00Z', symbol_id: K }));
    s.to('00:00:00');
    expect(record(s)).toMatchObject(kept);
    s.engine.apply(symbolEvent({ time: '2024-01-01T00:00:00.5Z', symbol_id: K, price_precision: null, symbol_id_exchange: '' }));
    // Not yet at its tick: pending in the snapshot, settled in the restored engine.
    const restored = new Scenario({}, restoreEngine(JSON.parse(JSON.stringify(s.engine.snapshot()))));
    for (const x of [s, restored]) {
      x.engine.apply(symbolEvent({ time: '2024-01-01T00:00:02Z', symbol_id: K, size_precision: 6 }));
      x.to('00:00:02');
      expect(record(x)).toMatchObject({ ...kept, sizePrecision: 6 });
    }
  });

  it('a symbol known only from an id is a record, active; an id no quote or trade has reached yet is not', () => {
    const s = new Scenario().feed(`
      q 00:00:00.2 BINANCE_PERP_BTC_USDT 99 1 101 1
      t 00:00:01.5 KRAKEN_SPOT_ETH_USD 10 1
    `);
    const ids = s.engine.symbols().map((r) => r.symbolId);
    expect(ids).toEqual(['BINANCE_PERP_BTC_USDT']);
    expect(s.engine.symbols()[0]).toMatchObject({ exchangeId: 'BINANCE', symbolType: 'PERPETUAL', assetIdBase: 'BTC', active: true });
  });

  it('delisting hides the record from the active ones; its quotes still apply and the rates do not change', () => {
    const rows = `
      t 00:00:00.5 ${K} 100 1
      q 00:00:00.6 ${K} 99 1 101 1
      t 00:00:00.7 BITSTAMP_SPOT_BTC_USD 100 1
      q 00:00:00.8 BITSTAMP_SPOT_BTC_USD 101 1 103 1
      q 00:00:01.5 ${K} 97 1 99 1
    `;
    const plain = new Scenario().feed(rows).to('00:00:02');
    const delisted = new Scenario();
    delisted.engine.apply(symbolEvent({ time: '2024-01-01T00:00:00.4Z', symbol_id: K, active: 'false' }));
    delisted.feed(rows).to('00:00:02');
    expect(delisted.rate('BTC', 'USD')).toBe(plain.rate('BTC', 'USD'));
    expect(delisted.changes).toEqual(plain.changes);
    expect(delisted.engine.symbols({ activeOnly: true }).map((r) => r.symbolId)).toEqual(['BITSTAMP_SPOT_BTC_USD']);
    expect(record(delisted)).toMatchObject({ active: false, dataQuoteEnd: us('00:00:01.5'), price: '100' });
  });

  it('filters by symbol id prefix, exchange and asset, ignoring case', () => {
    const s = new Scenario().feed(`
      t 00:00:00.5 ${K} 100 1
      t 00:00:00.5 KRAKEN_SPOT_ETH_EUR 100 1
      t 00:00:00.5 BITSTAMP_SPOT_ETH_USD 100 1
    `);
    s.to('00:00:01');
    const ids = (f: Parameters<typeof s.engine.symbols>[0]) => s.engine.symbols(f).map((r) => r.symbolId);
    expect(ids({ symbolIds: ['kraken_spot_'] })).toEqual(['KRAKEN_SPOT_BTC_USD', 'KRAKEN_SPOT_ETH_EUR']);
    expect(ids({ exchangeIds: ['bitstamp'] })).toEqual(['BITSTAMP_SPOT_ETH_USD']);
    expect(ids({ assetIds: ['usd', 'XYZ'] })).toEqual(['BITSTAMP_SPOT_ETH_USD', 'KRAKEN_SPOT_BTC_USD']);
    expect(ids({ exchangeIds: ['NOPE'] })).toEqual([]);
  });

  it('empty before the first tick', () => {
    const s = new Scenario();
    s.engine.apply(ev(`t 00:00:00.5 ${K} 100 1`));
    expect(s.engine.symbols()).toEqual([]);
  });
});

describe('symbol records: snapshots', () => {
  const rows = `
    q 00:00:00.2 ${K} 0.1 1 0.2 1
    t 00:00:00.5 ${K} 100 0.1
    t 00:00:01.5 ${K} 101 0.2
    t 00:00:02.5 KRAKEN_SPOT_ETH_USD 10 7
  `;

  it('a snapshot round trip keeps the records, and continuing gives the same records as without it', () => {
    const whole = new Scenario();
    whole.engine.apply(symbolEvent({ time: '2024-01-01T00:00:00Z', symbol_id: K, option_strike_price: '1.50' }));
    whole.feed(rows);
    const snap = JSON.parse(JSON.stringify(whole.engine.snapshot()));
    const resumed = restoreEngine(snap);
    expect(resumed.symbols()).toEqual(whole.engine.symbols());
    const more = [ev(`t 00:00:03.5 ${K} 102 0.3`), symbolEvent({ time: '2024-01-01T00:00:03.6Z', symbol_id: K, active: false })];
    for (const e of more) {
      whole.engine.apply(e);
      resumed.apply(e);
    }
    whole.to('00:00:05');
    resumed.advanceTo(us('00:00:05'));
    expect(resumed.symbols()).toEqual(whole.engine.symbols());
    expect(record(whole)).toMatchObject({ volume1hrs: '0.6', active: false, optionStrikePrice: '1.50' });
    expect(JSON.stringify(resumed.snapshot())).toBe(JSON.stringify(whole.engine.snapshot()));
  });

  it('a snapshot written before the records existed restores, every market a record with no data', () => {
    const s = new Scenario().feed(rows).to('00:00:03');
    const { symbols: _gone, ...old } = s.engine.snapshot();
    const e = restoreEngine(JSON.parse(JSON.stringify(old)));
    expect(e.rate('BTC', 'USD')).toEqual(s.engine.rate('BTC', 'USD'));
    const r = e.symbols();
    expect(r.map((x) => x.symbolId)).toEqual(['KRAKEN_SPOT_BTC_USD', 'KRAKEN_SPOT_ETH_USD']);
    expect(r[1]).toMatchObject({ exchangeId: 'KRAKEN', symbolType: 'SPOT', volume1day: '0', active: true });
    expect(r[1].dataStart).toBeUndefined();
  });
});
