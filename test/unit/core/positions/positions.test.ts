/**
 * Positions (docs/methodology.md section 11): parsing of `position` and `connectivity` records,
 * the account separator, the book (replacement, closing, tagged accounts, filters), unrealized
 * P&L (BUY/SELL sign, cross-quote, no rate), and the engine's book through the clock rules and
 * snapshots.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, restoreEngine } from '../../../../src/core/engine.js';
import { parseEvent } from '../../../../src/core/events.js';
import { accountMatches, isZeroQuantity, PositionBook } from '../../../../src/core/positions/book.js';
import { splitAccount, type PositionEvent } from '../../../../src/core/positions/events.js';
import { positionAssets, unrealizedPnl } from '../../../../src/core/positions/pnl.js';
import { parseTime } from '../../../../src/core/time.js';
import { isReject, type XrateEvent } from '../../../../src/core/types.js';
import { asStrings } from '../eventRecords.js';

const T0 = '2024-03-01T00:00:00Z';
const at = (s: string) => `2024-03-01T${s}Z`;

function pos(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'position',
    time: T0,
    exchange_id: 'BINANCE~hedge',
    symbol_id_exchange: 'BTCUSDT',
    symbol_id: 'BINANCE_SPOT_BTC_USDT',
    avg_entry_price: '60000',
    quantity: '0.5',
    side: 'BUY',
    ...over,
  };
}

function ev(r: Record<string, unknown>): XrateEvent {
  const e = parseEvent(r);
  if (isReject(e)) throw new Error(e.message);
  return e;
}

describe('splitAccount', () => {
  it('splits at the first separator character, keeps later ones in the tag', () => {
    expect(splitAccount('BINANCE~hedge')).toEqual({ id: 'BINANCE~hedge', exchangeId: 'BINANCE', tag: 'hedge' });
    expect(splitAccount('BITSTAMP/7c17-74bd')).toEqual({ id: 'BITSTAMP/7c17-74bd', exchangeId: 'BITSTAMP', tag: '7c17-74bd' });
    expect(splitAccount('KRAKEN')).toEqual({ id: 'KRAKEN', exchangeId: 'KRAKEN' });
    for (const sep of '~/.,:;#$%^&*-_+=') expect(splitAccount(`X${sep}t`)).toEqual({ id: `X${sep}t`, exchangeId: 'X', tag: 't' });
  });
  it('refuses an empty exchange part, an empty tag and white space', () => {
    expect(splitAccount('~hedge')).toMatch(/exchange part .* is empty/);
    expect(splitAccount('BINANCE~')).toMatch(/tag after "~" is empty/);
    expect(splitAccount('BINANCE hedge')).toMatch(/white space/);
  });
});

describe('parsing position and connectivity records', () => {
  it('reads every field, the same from NDJSON values and from CSV strings', () => {
    const r = pos({ leverage: 3, cross_margin: 'true', liquidation_price: '41000.5', raw_data: '{"id":7}' });
    const e = ev(r);
    expect(e).toEqual({
      type: 'position',
      time: parseTime(T0),
      account: 'BINANCE~hedge',
      symbolIdExchange: 'BTCUSDT',
      symbolId: 'BINANCE_SPOT_BTC_USDT',
      avgEntryPrice: { value: 60000, text: '60000' },
      quantity: { value: 0.5, text: '0.5' },
      side: 'BUY',
      leverage: { value: 3, text: '3' },
      crossMargin: true,
      liquidationPrice: { value: 41000.5, text: '41000.5' },
      rawData: { id: 7 },
    });
    expect(ev(asStrings(r))).toEqual(e);
    expect(ev({ ...r, raw_data: { id: 7 } })).toEqual(e);
    expect(ev(pos({ side: 'sell' }))).toMatchObject({ side: 'SELL' });
    expect(ev({ type: 'connectivity', time: T0, exchange_id: 'KRAKEN', reachable: '0' })).toEqual({
      type: 'connectivity',
      time: parseTime(T0),
      exchangeId: 'KRAKEN',
      reachable: false,
    });
  });

  it.each([
    [{ quantity: '-0.1' }, 'bad_size', 'quantity'],
    [{ quantity: '-1e-400' }, 'bad_size', 'quantity'],
    [{ quantity: 'abc' }, 'bad_number', 'quantity'],
    [{ avg_entry_price: '-5' }, 'bad_price', 'avg_entry_price'],
    [{ avg_entry_price: 'NaN' }, 'bad_number', 'avg_entry_price'],
    [{ side: 'LONG' }, 'bad_field', 'side'],
    [{ side: undefined }, 'missing_field', 'side'],
    [{ exchange_id: '~hedge' }, 'bad_field', 'exchange_id'],
    [{ exchange_id: 'BINANCE~' }, 'bad_field', 'exchange_id'],
    [{ exchange_id: undefined }, 'missing_field', 'exchange_id'],
    [{ symbol_id_exchange: '' }, 'missing_field', 'symbol_id_exchange'],
    [{ leverage: '-2' }, 'bad_field', 'leverage'],
    [{ leverage: '2x' }, 'bad_number', 'leverage'],
    [{ cross_margin: 'maybe' }, 'bad_field', 'cross_margin'],
    [{ time: 'yesterday' }, 'bad_time', 'time'],
  ])('rejects %j with %s', (over, reason, field) => {
    const r = parseEvent(pos(over));
    expect(isReject(r) && [r.reason, r.field]).toEqual([reason, field]);
    expect(isReject(r) && r.message).toMatch(new RegExp(`^position: .*${field}`));
  });

  it('accepts quantity 0 and "-0" (a closing snapshot)', () => {
    expect(ev(pos({ quantity: '-0' }))).toMatchObject({ quantity: { text: '-0' } });
    expect(isZeroQuantity({ value: 0, text: '0.000' })).toBe(true);
    expect(isZeroQuantity({ value: 0, text: '1e-400' })).toBe(false);
  });

  it('rejects a connectivity event naming an account, a bad id or a bad boolean', () => {
    const c = (over: Record<string, unknown>) =>
      parseEvent({ type: 'connectivity', time: T0, exchange_id: 'KRAKEN', reachable: true, ...over });
    expect(c({ exchange_id: 'KRAKEN~a' })).toMatchObject({ reason: 'bad_field', field: 'exchange_id' });
    expect(c({ exchange_id: '-x' })).toMatchObject({ reason: 'bad_field', field: 'exchange_id' });
    expect(c({ reachable: 'yes' })).toMatchObject({ reason: 'bad_field', field: 'reachable' });
    expect(c({ reachable: null })).toMatchObject({ reason: 'missing_field', field: 'reachable' });
  });
});

describe('the book', () => {
  const p = (over: Record<string, unknown>) => ev(pos(over)) as PositionEvent;

  it('keeps the latest snapshot per account and symbol, closes at quantity 0, sorts accounts and symbols', () => {
    const b = new PositionBook();
    b.apply(p({ quantity: '1' }));
    b.apply(p({ quantity: '2', avg_entry_price: '61000' })); // replaces
    b.apply(p({ exchange_id: 'BINANCE', symbol_id_exchange: 'ETHUSDT' }));
    b.apply(p({ exchange_id: 'BINANCE', symbol_id_exchange: 'ADAUSDT' }));
    b.apply(p({ exchange_id: 'KRAKEN', symbol_id_exchange: 'XBTUSD' }));
    b.apply(p({ exchange_id: 'BINANCE', symbol_id_exchange: 'ADAUSDT', quantity: '0' })); // closes
    const open = b.open();
    expect(open.map((a) => [a.account, a.exchangeId, a.positions.map((x) => x.event.symbolIdExchange)])).toEqual([
      ['BINANCE', 'BINANCE', ['ETHUSDT']],
      ['BINANCE~hedge', 'BINANCE', ['BTCUSDT']],
      ['KRAKEN', 'KRAKEN', ['XBTUSD']],
    ]);
    expect(open[1].positions[0].event.quantity.text).toBe('2');
    expect(b.open('BINANCE').map((a) => a.account)).toEqual(['BINANCE', 'BINANCE~hedge']);
    expect(b.open('BINANCE~hedge').map((a) => a.account)).toEqual(['BINANCE~hedge']);
    expect(b.open('BINANCE~other')).toEqual([]);
    b.apply(p({ quantity: '0' }));
    expect(b.open('BINANCE~hedge')).toEqual([]);
    // Closing what is not open changes nothing.
    b.apply(p({ exchange_id: 'OKX', quantity: '0' }));
    expect(b.open().map((a) => a.account)).toEqual(['BINANCE', 'KRAKEN']);
  });

  it('matches accounts by exact id or by bare exchange', () => {
    expect(accountMatches('BINANCE~hedge', 'BINANCE')).toBe(true);
    expect(accountMatches('BINANCE', 'BINANCE')).toBe(true);
    expect(accountMatches('BINANCE~hedge', 'BINANCE~hedge')).toBe(true);
    expect(accountMatches('BINANCE~hedge', 'BINANCE~main')).toBe(false);
    expect(accountMatches('BINANCEUS', 'BINANCE')).toBe(false);
  });

  it('tracks reachability from the latest connectivity event, and round-trips through JSON', () => {
    const b = new PositionBook();
    expect(b.isEmpty).toBe(true);
    const c = (x: string, reachable: boolean) => b.applyConnectivity({ type: 'connectivity', time: 0, exchangeId: x, reachable });
    c('KRAKEN', false);
    c('OKX', false);
    c('OKX', true);
    c('BITMEX', false);
    expect(b.unreachable()).toEqual(['BITMEX', 'KRAKEN']);
    b.apply(p({ raw_data: '{"a":[1,2]}', cross_margin: false }), { base: 'BTC', quote: 'USDT' });
    const r = new PositionBook();
    r.restore(JSON.parse(JSON.stringify(b.toJSON())));
    expect(r.toJSON()).toEqual(b.toJSON());
    expect(r.open()).toEqual(b.open());
    expect(r.unreachable()).toEqual(['BITMEX', 'KRAKEN']);
  });
});

describe('unrealized P&L', () => {
  it('is (m - avg) x quantity x s, s = +1 for BUY and -1 for SELL', () => {
    expect(unrealizedPnl(60000, 0.5, 'BUY', 62000)).toBe(1000);
    expect(unrealizedPnl(60000, 0.5, 'SELL', 62000)).toBe(-1000);
    expect(unrealizedPnl(60000, 0.5, 'SELL', 58000)).toBe(1000);
    expect(unrealizedPnl(1e308, 10, 'BUY', -1e308)).toBeUndefined();
  });
  it('takes base and quote from the symbol id pattern, else from the symbol record', () => {
    const none = () => undefined;
    expect(positionAssets('BINANCE_SPOT_BTC_USDT', none)).toEqual({ base: 'BTC', quote: 'USDT' });
    expect(positionAssets('BITMEX_PERP_BTC_USD', none)).toEqual({ base: 'BTC', quote: 'USD' });
    expect(positionAssets('MY_CONTRACT', () => ({ base: 'ETH', quote: 'USD' }))).toEqual({ base: 'ETH', quote: 'USD' });
    expect(positionAssets('MY_CONTRACT', none)).toBeUndefined();
    expect(positionAssets(undefined, () => ({ base: 'X', quote: 'Y' }))).toBeUndefined();
  });
});

describe('positions in the engine', () => {
  // Two markets: BTC/USD at 62000 and USDT/USD at 0.5 (a made-up rate, so cross results are distinct).
  function engineWith(extra: Record<string, unknown>[]) {
    const e = createEngine();
    const lines: Record<string, unknown>[] = [
      { type: 'trade', time: at('00:00:00.5'), symbol_id: 'A_SPOT_BTC_USD', price: 62000, size: 1 },
      { type: 'quote', time: at('00:00:00.5'), symbol_id: 'A_SPOT_BTC_USD', bid_price: 61990, bid_size: 1, ask_price: 62010, ask_size: 1 },
      { type: 'trade', time: at('00:00:00.5'), symbol_id: 'A_SPOT_USDT_USD', price: 0.5, size: 1 },
      { type: 'quote', time: at('00:00:00.5'), symbol_id: 'A_SPOT_USDT_USD', bid_price: 0.49, bid_size: 1, ask_price: 0.51, ask_size: 1 },
      {
        type: 'symbol',
        time: at('00:00:00.5'),
        symbol_id: 'MYFUT',
        exchange_id: 'A',
        symbol_type: 'FUTURES',
        asset_id_base: 'BTC',
        asset_id_quote: 'USD',
      },
      ...extra,
    ];
    for (const l of lines) expect(e.apply(ev(l))).toBeUndefined();
    e.advanceTo(parseTime(at('00:00:03'))!);
    return e;
  }

  it('values positions at rate(base, quote): direct, cross-quote, from a symbol record, none without a rate', () => {
    const e = engineWith([
      pos({
        time: at('00:00:01.5'),
        exchange_id: 'A~long',
        symbol_id_exchange: 'BTCUSD',
        symbol_id: 'A_SPOT_BTC_USD',
        avg_entry_price: 60000,
        quantity: 2,
      }),
      pos({
        time: at('00:00:01.5'),
        exchange_id: 'A~short',
        symbol_id_exchange: 'BTCUSD',
        symbol_id: 'A_SPOT_BTC_USD',
        avg_entry_price: 60000,
        quantity: 2,
        side: 'SELL',
      }),
      // BTC/USDT has no market: the cross rate BTC -> USD -> USDT = 62000 / 0.5 = 124000.
      pos({ time: at('00:00:01.5'), exchange_id: 'B', symbol_id_exchange: 'BTCUSDT', avg_entry_price: 120000, quantity: 1 }),
      pos({ time: at('00:00:01.5'), exchange_id: 'B', symbol_id_exchange: 'FUT', symbol_id: 'MYFUT', avg_entry_price: 61000, quantity: 1 }),
      pos({
        time: at('00:00:01.5'),
        exchange_id: 'B',
        symbol_id_exchange: 'DOGEUSD',
        symbol_id: 'B_SPOT_DOGE_USD',
        avg_entry_price: 1,
        quantity: 1,
      }),
      pos({ time: at('00:00:01.5'), exchange_id: 'B', symbol_id_exchange: 'NOID', symbol_id: undefined, avg_entry_price: 1, quantity: 1 }),
    ]);
    const v = e.valuedPositions();
    const pnl = Object.fromEntries(
      v.flatMap((a) => a.positions.map((p) => [`${a.account} ${p.position.event.symbolIdExchange}`, p.unrealizedPnl])),
    );
    expect(pnl['A~long BTCUSD']).toBeCloseTo(4000, 6);
    expect(pnl['A~short BTCUSD']).toBeCloseTo(-4000, 6);
    expect(pnl['B BTCUSDT']).toBeCloseTo(4000, 6);
    expect(pnl['B FUT']).toBeCloseTo(1000, 6);
    expect('B DOGEUSD' in pnl && pnl['B DOGEUSD']).toBeUndefined();
    expect('B NOID' in pnl && pnl['B NOID']).toBeUndefined();
    expect(v.find((a) => a.account === 'B')!.positions.find((p) => p.position.event.symbolIdExchange === 'DOGEUSD')).not.toHaveProperty(
      'unrealizedPnl',
    );
    expect(e.getStats().events.position).toBe(6);
  });

  it('changes no rate, follows the clock rules, and survives a snapshot', () => {
    const plain = engineWith([]);
    const withPos = engineWith([
      pos({ time: at('00:00:01.2') }),
      { type: 'connectivity', time: at('00:00:01.3'), exchange_id: 'KRAKEN', reachable: false },
    ]);
    expect(withPos.rates('BTC')).toEqual(plain.rates('BTC'));
    expect(plain.snapshot()).not.toHaveProperty('positions');
    expect(plain.getStats().events).not.toHaveProperty('position');
    // Late: at or before the last tick.
    expect(withPos.apply(ev(pos({ time: at('00:00:02') })))).toMatchObject({ reason: 'late' });
    expect(withPos.unreachableExchanges()).toEqual(['KRAKEN']);
    const restored = restoreEngine(JSON.parse(JSON.stringify(withPos.snapshot())));
    expect(restored.positions()).toEqual(withPos.positions());
    expect(restored.unreachableExchanges()).toEqual(['KRAKEN']);
    expect(restored.valuedPositions()).toEqual(withPos.valuedPositions());
    expect(restored.getStats().events).toEqual(withPos.getStats().events);
  });
});
