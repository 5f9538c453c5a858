import { describe, expect, it } from 'vitest';
import { parseEvent, REJECT_REASONS } from '../../../src/core/events.js';
import { isReject, type Reject } from '../../../src/core/types.js';
import { asStrings, rej, T, trade, TUS } from './eventRecords.js';

const exchange = { type: 'exchange', time: T, exchange_id: 'KRAKEN', legitimate: true, rank: 3 };
const symbol = {
  type: 'symbol',
  time: T,
  symbol_id: 'KRAKEN_SPOT_BTC_USD',
  exchange_id: 'KRAKEN',
  symbol_type: 'SPOT',
  asset_id_base: 'BTC',
  asset_id_quote: 'USD',
  price_precision: 1,
  size_precision: 8,
  symbol_id_exchange: 'XXBTZUSD',
};
const quote = {
  type: 'quote',
  time: T,
  symbol_id: 'KRAKEN_SPOT_BTC_USD',
  bid_price: 42000.1,
  bid_size: 0.5,
  ask_price: 42000.2,
  ask_size: 1,
};

describe('valid events', () => {
  it('exchange', () => {
    expect(parseEvent(exchange)).toStrictEqual({
      type: 'exchange',
      time: TUS,
      exchangeId: 'KRAKEN',
      legitimate: true,
      rank: 3,
    });
  });

  it('symbol', () => {
    expect(parseEvent(symbol)).toStrictEqual({
      type: 'symbol',
      time: TUS,
      symbolId: 'KRAKEN_SPOT_BTC_USD',
      exchangeId: 'KRAKEN',
      symbolType: 'SPOT',
      assetIdBase: 'BTC',
      assetIdQuote: 'USD',
      pricePrecision: 1,
      sizePrecision: 8,
      symbolIdExchange: 'XXBTZUSD',
    });
  });

  it('symbol without optional fields has no such keys', () => {
    const { price_precision: _a, size_precision: _b, symbol_id_exchange: _c, ...min } = symbol;
    expect(parseEvent(min)).toStrictEqual({
      type: 'symbol',
      time: TUS,
      symbolId: 'KRAKEN_SPOT_BTC_USD',
      exchangeId: 'KRAKEN',
      symbolType: 'SPOT',
      assetIdBase: 'BTC',
      assetIdQuote: 'USD',
    });
    expect(parseEvent({ ...symbol, price_precision: '', size_precision: null, symbol_id_exchange: '' })).toStrictEqual(parseEvent(min));
  });

  it('quote', () => {
    expect(parseEvent(quote)).toStrictEqual({
      type: 'quote',
      time: TUS,
      symbolId: 'KRAKEN_SPOT_BTC_USD',
      bidPrice: { value: 42000.1, text: '42000.1' },
      bidSize: { value: 0.5, text: '0.5' },
      askPrice: { value: 42000.2, text: '42000.2' },
      askSize: { value: 1, text: '1' },
    });
  });

  it('trade, with and without taker_side', () => {
    expect(parseEvent(trade)).toStrictEqual({
      type: 'trade',
      time: TUS,
      symbolId: 'KRAKEN_SPOT_BTC_USD',
      price: { value: 42000.15, text: '42000.15' },
      size: { value: 0.25, text: '0.25' },
      takerSide: 'BUY',
    });
    const { taker_side: _t, ...noSide } = trade;
    expect(parseEvent(noSide)).not.toHaveProperty('takerSide');
    expect(parseEvent({ ...trade, taker_side: '' })).toStrictEqual(parseEvent(noSide));
  });

  it.each([exchange, symbol, quote, trade])('JSON-typed and all-string records give equal events (%#)', (r) => {
    const a = parseEvent(r);
    expect(isReject(a)).toBe(false);
    expect(parseEvent(asStrings(r))).toStrictEqual(a);
  });

  it('SQLite-style rows (numbers and null) give equal events', () => {
    expect(parseEvent({ ...exchange, legitimate: 1, rank: 3 })).toStrictEqual(parseEvent(exchange));
    expect(parseEvent({ ...trade, taker_side: null })).toStrictEqual(parseEvent({ ...trade, taker_side: undefined }));
  });

  it('numbers as strings keep their exact text', () => {
    const q = parseEvent({ ...quote, bid_price: '0.1000', bid_size: '1e-8', ask_price: ' 0.1001 ', ask_size: '00' });
    expect(q).toMatchObject({
      bidPrice: { value: 0.1, text: '0.1000' },
      bidSize: { value: 1e-8, text: '1e-8' },
      askPrice: { value: 0.1001, text: '0.1001' },
      askSize: { value: 0, text: '00' },
    });
  });

  it('ids are trimmed', () => {
    expect(parseEvent({ ...exchange, exchange_id: ' KRAKEN\t' })).toMatchObject({ exchangeId: 'KRAKEN' });
    expect(parseEvent({ ...trade, symbol_id: ' X ' })).toMatchObject({ symbolId: 'X' });
  });

  it('type is read case-insensitively and trimmed', () => {
    expect(parseEvent({ ...exchange, type: ' Exchange ' })).toStrictEqual(parseEvent(exchange));
  });

  it('time forms', () => {
    expect(parseEvent({ ...exchange, time: '2024-01-01' })).toMatchObject({ time: 1_704_067_200_000_000 });
    expect(parseEvent({ ...exchange, time: ' 2024-01-01T00:00:00+00:00 ' })).toMatchObject({
      time: 1_704_067_200_000_000,
    });
  });
});

describe('field values', () => {
  it.each([
    [true, true],
    [false, false],
    ['true', true],
    ['TRUE', true],
    ['False', false],
    ['1', true],
    ['0', false],
    [1, true],
    [0, false],
  ])('legitimate %j', (v, b) => {
    expect(parseEvent({ ...exchange, legitimate: v })).toMatchObject({ legitimate: b });
  });

  it.each([
    [undefined, 0],
    [null, 0],
    ['', 0],
    [0, 0],
    [-0, 0],
    ['-0', 0],
    [5, 5],
    [-5, -5],
    ['7', 7],
    ['-7', -7],
    ['+7', 7],
    [' 7 ', 7],
  ])('rank %j', (v, n) => {
    const e = parseEvent({ ...exchange, rank: v });
    expect(e).toMatchObject({ rank: n });
    expect(Object.is((e as { rank: number }).rank, n)).toBe(true);
  });

  it('symbol_type case-insensitive', () => {
    expect(parseEvent({ ...symbol, symbol_type: 'perpetual' })).toMatchObject({ symbolType: 'PERPETUAL' });
  });

  it.each(['BUY', 'SELL', 'BUY_ESTIMATED', 'SELL_ESTIMATED', 'UNKNOWN'])('taker_side %s', (s) => {
    expect(parseEvent({ ...trade, taker_side: s.toLowerCase() })).toMatchObject({ takerSide: s });
  });

  it('precisions accept 0 and integer strings', () => {
    expect(parseEvent({ ...symbol, price_precision: 0, size_precision: '12' })).toMatchObject({
      pricePrecision: 0,
      sizePrecision: 12,
    });
  });
});

describe('boundaries', () => {
  it('size 0 is accepted, "-0" too (as 0)', () => {
    for (const s of [0, '0', '0.000', '-0', -0, '0e5']) {
      const q = parseEvent({ ...quote, bid_size: s, ask_size: s });
      expect(isReject(q)).toBe(false);
      expect(Object.is((q as { bidSize: { value: number } }).bidSize.value, 0)).toBe(true);
      expect(isReject(parseEvent({ ...trade, size: s }))).toBe(false);
    }
  });

  it('price 0 is rejected', () => {
    for (const p of [0, '0', '0.0', '-0']) {
      expect(rej(parseEvent({ ...quote, bid_price: p })).reason).toBe('bad_price');
      expect(rej(parseEvent({ ...quote, ask_price: p })).reason).toBe('bad_price');
      expect(rej(parseEvent({ ...trade, price: p })).reason).toBe('bad_price');
    }
  });

  it('tiny positive prices are fine; one that underflows to 0 is rejected with a clear message', () => {
    expect(isReject(parseEvent({ ...trade, price: '1e-300' }))).toBe(false);
    const r = rej(parseEvent({ ...trade, price: '1e-400' }));
    expect(r.reason).toBe('bad_price');
    expect(r.message).toContain('underflow');
  });

  it('a negative size that underflows to -0 is still negative', () => {
    expect(rej(parseEvent({ ...trade, size: '-1e-400' })).reason).toBe('bad_size');
    expect(isReject(parseEvent({ ...trade, size: '-0e-400' }))).toBe(false);
  });
});

describe('rejects', () => {
  const cases: [string, Record<string, unknown>, Reject['reason'], string | undefined, string][] = [
    [
      'no type',
      { ...trade, type: undefined },
      'unknown_type',
      'type',
      'missing event type (expected exchange, symbol, quote, trade, metric or metric_definition)',
    ],
    [
      'empty type',
      { ...trade, type: '' },
      'unknown_type',
      'type',
      'missing event type (expected exchange, symbol, quote, trade, metric or metric_definition)',
    ],
    [
      'unknown type',
      { ...trade, type: 'foo' },
      'unknown_type',
      'type',
      'unknown event type "foo" (expected exchange, symbol, quote, trade, metric or metric_definition)',
    ],
    [
      'numeric type',
      { ...trade, type: 3 },
      'unknown_type',
      'type',
      'unknown event type 3 (expected exchange, symbol, quote, trade, metric or metric_definition)',
    ],
    ['missing size', { ...trade, size: undefined }, 'missing_field', 'size', 'trade: missing required field "size"'],
    ['empty size', { ...trade, size: '' }, 'missing_field', 'size', 'trade: missing required field "size"'],
    ['blank size', { ...trade, size: '  ' }, 'missing_field', 'size', 'trade: missing required field "size"'],
    ['null price', { ...trade, price: null }, 'missing_field', 'price', 'trade: missing required field "price"'],
    ['missing time', { ...quote, time: undefined }, 'missing_field', 'time', 'quote: missing required field "time"'],
    ['missing symbol_id', { ...quote, symbol_id: '' }, 'missing_field', 'symbol_id', 'quote: missing required field "symbol_id"'],
    [
      'missing legitimate',
      { ...exchange, legitimate: undefined },
      'missing_field',
      'legitimate',
      'exchange: missing required field "legitimate"',
    ],
    [
      'missing exchange_id',
      { ...symbol, exchange_id: null },
      'missing_field',
      'exchange_id',
      'symbol: missing required field "exchange_id"',
    ],
    ['missing symbol_type', { ...symbol, symbol_type: '' }, 'missing_field', 'symbol_type', 'symbol: missing required field "symbol_type"'],
    [
      'missing asset_id_base',
      { ...symbol, asset_id_base: '' },
      'missing_field',
      'asset_id_base',
      'symbol: missing required field "asset_id_base"',
    ],
    [
      'missing asset_id_quote',
      { ...symbol, asset_id_quote: undefined },
      'missing_field',
      'asset_id_quote',
      'symbol: missing required field "asset_id_quote"',
    ],
    ['missing ask_size', { ...quote, ask_size: undefined }, 'missing_field', 'ask_size', 'quote: missing required field "ask_size"'],
    [
      'bad time',
      { ...quote, time: '2024-02-30' },
      'bad_time',
      'time',
      'quote: field "time" must be an ISO 8601 UTC time such as "2024-01-01T00:00:00.1234567Z", got "2024-02-30"',
    ],
    [
      'numeric time',
      { ...quote, time: 1704067200 },
      'bad_time',
      'time',
      'quote: field "time" must be an ISO 8601 UTC time such as "2024-01-01T00:00:00.1234567Z", got 1704067200',
    ],
    [
      '8 fraction digits',
      { ...quote, time: '2024-01-01T00:00:00.12345678Z' },
      'bad_time',
      'time',
      'quote: field "time" must be an ISO 8601 UTC time such as "2024-01-01T00:00:00.1234567Z", got "2024-01-01T00:00:00.12345678Z"',
    ],
    [
      'a well-formed time past the range (µs exact in a double)',
      { ...quote, time: '2300-01-01T00:00:00Z' },
      'bad_time',
      'time',
      'quote: field "time" "2300-01-01T00:00:00Z" is outside the times xrate can hold (1684-07-28T00:12:25.2590090Z to 2255-06-05T23:47:34.7409910Z: microseconds since 1970 kept exactly in a double)',
    ],
    [
      'bad number',
      { ...quote, bid_size: 'abc' },
      'bad_number',
      'bid_size',
      'quote: field "bid_size" must be a finite decimal number, got "abc"',
    ],
    ['hex number', { ...trade, price: '0x10' }, 'bad_number', 'price', 'trade: field "price" must be a finite decimal number, got "0x10"'],
    ['overflow', { ...trade, price: '1e400' }, 'bad_number', 'price', 'trade: field "price" must be a finite decimal number, got "1e400"'],
    ['boolean number', { ...trade, size: true }, 'bad_number', 'size', 'trade: field "size" must be a finite decimal number, got true'],
    [
      'object number',
      { ...trade, size: { v: 1 } },
      'bad_number',
      'size',
      'trade: field "size" must be a finite decimal number, got {"v":1}',
    ],
    ['negative bid', { ...quote, bid_price: '-1' }, 'bad_price', 'bid_price', 'quote: field "bid_price" must be > 0, got "-1"'],
    ['zero ask', { ...quote, ask_price: 0 }, 'bad_price', 'ask_price', 'quote: field "ask_price" must be > 0, got "0"'],
    ['negative trade price', { ...trade, price: -5 }, 'bad_price', 'price', 'trade: field "price" must be > 0, got "-5"'],
    ['negative bid_size', { ...quote, bid_size: '-0.1' }, 'bad_size', 'bid_size', 'quote: field "bid_size" must be >= 0, got "-0.1"'],
    ['negative ask_size', { ...quote, ask_size: -1 }, 'bad_size', 'ask_size', 'quote: field "ask_size" must be >= 0, got "-1"'],
    ['negative trade size', { ...trade, size: '-2' }, 'bad_size', 'size', 'trade: field "size" must be >= 0, got "-2"'],
    [
      'legitimate yes',
      { ...exchange, legitimate: 'yes' },
      'bad_field',
      'legitimate',
      'exchange: field "legitimate" must be a boolean (true, false, 1 or 0), got "yes"',
    ],
    [
      'legitimate 2',
      { ...exchange, legitimate: 2 },
      'bad_field',
      'legitimate',
      'exchange: field "legitimate" must be a boolean (true, false, 1 or 0), got 2',
    ],
    ['rank 1.5', { ...exchange, rank: 1.5 }, 'bad_field', 'rank', 'exchange: field "rank" must be an integer, got 1.5'],
    ['rank "1.0"', { ...exchange, rank: '1.0' }, 'bad_field', 'rank', 'exchange: field "rank" must be an integer, got "1.0"'],
    ['rank "x"', { ...exchange, rank: 'x' }, 'bad_field', 'rank', 'exchange: field "rank" must be an integer, got "x"'],
    ['rank true', { ...exchange, rank: true }, 'bad_field', 'rank', 'exchange: field "rank" must be an integer, got true'],
    [
      'rank huge',
      { ...exchange, rank: '99999999999999999999' },
      'bad_field',
      'rank',
      'exchange: field "rank" must be an integer, got "99999999999999999999"',
    ],
    [
      'symbol_type',
      { ...symbol, symbol_type: 'SWAP' },
      'bad_field',
      'symbol_type',
      'symbol: field "symbol_type" must be one of SPOT, FUTURES, OPTION, PERPETUAL, DPERPETUAL, INDEX, CREDIT, CONTRACT, OPTION_COMBINATION, FUTURES_COMBINATION, got "SWAP"',
    ],
    [
      'taker_side',
      { ...trade, taker_side: 'LONG' },
      'bad_field',
      'taker_side',
      'trade: field "taker_side" must be one of BUY, SELL, BUY_ESTIMATED, SELL_ESTIMATED, UNKNOWN, got "LONG"',
    ],
    [
      'taker_side number',
      { ...trade, taker_side: 1 },
      'bad_field',
      'taker_side',
      'trade: field "taker_side" must be one of BUY, SELL, BUY_ESTIMATED, SELL_ESTIMATED, UNKNOWN, got 1',
    ],
    [
      'negative precision',
      { ...symbol, price_precision: -1 },
      'bad_field',
      'price_precision',
      'symbol: field "price_precision" must be a non-negative integer, got -1',
    ],
    [
      'fractional precision',
      { ...symbol, size_precision: '2.5' },
      'bad_field',
      'size_precision',
      'symbol: field "size_precision" must be a non-negative integer, got "2.5"',
    ],
    [
      'numeric exchange_id',
      { ...exchange, exchange_id: 5 },
      'bad_field',
      'exchange_id',
      'exchange: field "exchange_id" must be a string, got 5',
    ],
    ['numeric symbol_id', { ...trade, symbol_id: 7 }, 'bad_field', 'symbol_id', 'trade: field "symbol_id" must be a string, got 7'],
    [
      'numeric asset',
      { ...symbol, asset_id_base: 1 },
      'bad_field',
      'asset_id_base',
      'symbol: field "asset_id_base" must be a string, got 1',
    ],
    [
      'numeric symbol_id_exchange',
      { ...symbol, symbol_id_exchange: 1 },
      'bad_field',
      'symbol_id_exchange',
      'symbol: field "symbol_id_exchange" must be a string, got 1',
    ],
  ];

  it.each(cases)('%s', (_name, record, reason, field, message) => {
    const r = rej(parseEvent(record));
    expect(r.reason).toBe(reason);
    expect(r.field).toBe(field);
    expect(r.message).toBe(message);
    expect(r.kind).toBe('reject');
  });

  it('CSV (all strings) rejects the same way', () => {
    for (const [, record, reason, field] of cases) {
      if (Object.values(record).some((v) => typeof v === 'object' && v !== null)) continue;
      if ([true, 2, 1, 1.5, 5, 7, 3, -1, 1704067200].includes(record[field ?? ''] as never)) continue;
      const r = rej(parseEvent(asStrings(record)));
      expect(r.reason).toBe(reason);
      expect(r.field).toBe(field);
    }
  });

  it('the first failing field in table order wins', () => {
    expect(rej(parseEvent({ type: 'quote' })).field).toBe('time');
    expect(rej(parseEvent({ type: 'quote', time: T })).field).toBe('symbol_id');
    expect(rej(parseEvent({ ...quote, bid_price: -1, ask_price: 'x' })).field).toBe('bid_price');
  });

  it('long values are shortened in messages', () => {
    const r = rej(parseEvent({ ...trade, price: 'x'.repeat(500) }));
    expect(r.message.length).toBeLessThan(150);
    expect(r.message.endsWith('...')).toBe(true);
  });

  it('a non-object record is bad_json', () => {
    for (const v of [null, undefined, 5, 'x', [1]]) {
      expect(rej(parseEvent(v as never)).reason).toBe('bad_json');
    }
  });

  it('REJECT_REASONS lists every reason once', () => {
    expect([...REJECT_REASONS].sort()).toStrictEqual(
      [
        'bad_json',
        'line_too_long',
        'unknown_type',
        'missing_field',
        'bad_time',
        'bad_number',
        'bad_price',
        'bad_size',
        'bad_field',
        'unknown_symbol',
        'late',
      ].sort(),
    );
    expect(Object.isFrozen(REJECT_REASONS)).toBe(true);
  });
});
