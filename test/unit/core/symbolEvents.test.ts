import { describe, expect, it } from 'vitest';
import { parseEvent } from '../../../src/core/events.js';
import { isReject, type Reject, type XrateEvent } from '../../../src/core/types.js';

// Version-2 fields of the `symbol` event (docs/methodology.md section 10).
const base = {
  type: 'symbol',
  time: '2024-01-01T00:00:00Z',
  symbol_id: 'DERIBIT_OPT_BTC_USD_240329_60000_C',
  exchange_id: 'DERIBIT',
  symbol_type: 'OPTION',
  asset_id_base: 'BTC',
  asset_id_quote: 'USD',
};

function rej(r: XrateEvent | Reject): Reject {
  if (!isReject(r)) throw new Error(`expected a reject, got ${JSON.stringify(r)}`);
  return r;
}

describe('symbol event, version 2 fields', () => {
  it('parses every new field', () => {
    const e = parseEvent({
      ...base,
      asset_id_base_exchange: ' XBT ',
      asset_id_quote_exchange: 'ZUSD',
      future_delivery_time: '2024-03-29T08:00:00Z',
      option_type_is_call: 'true',
      option_strike_price: '60000.50',
      option_expiration_time: '2024-03-29',
      active: 0,
    });
    expect(e).toMatchObject({
      assetIdBaseExchange: 'XBT',
      assetIdQuoteExchange: 'ZUSD',
      futureDeliveryTime: 1_711_699_200_000_000,
      optionTypeIsCall: true,
      optionStrikePrice: { value: 60000.5, text: '60000.50' },
      optionExpirationTime: 1_711_670_400_000_000,
      active: false,
    });
  });

  it('adds no key for an absent (or blank) field: a version-1 event is unchanged', () => {
    const v1 = parseEvent(base);
    expect(Object.keys(v1)).toEqual(['type', 'time', 'symbolId', 'exchangeId', 'symbolType', 'assetIdBase', 'assetIdQuote']);
    const blank = {
      asset_id_base_exchange: '',
      future_delivery_time: null,
      option_type_is_call: ' ',
      option_strike_price: '',
      active: null,
    };
    expect(parseEvent({ ...base, ...blank })).toStrictEqual(v1);
  });

  it('reads booleans as the other boolean fields do', () => {
    for (const [v, b] of [
      [true, true],
      ['FALSE', false],
      ['1', true],
      [0, false],
    ] as const) {
      expect(parseEvent({ ...base, active: v })).toMatchObject({ active: b });
      expect(parseEvent({ ...base, option_type_is_call: v })).toMatchObject({ optionTypeIsCall: b });
    }
  });

  it.each([
    ['active', 'yes', 'bad_field'],
    ['active', 2, 'bad_field'],
    ['option_type_is_call', 'call', 'bad_field'],
    ['asset_id_base_exchange', 7, 'bad_field'],
    ['asset_id_quote_exchange', true, 'bad_field'],
    ['future_delivery_time', '2024-13-01', 'bad_time'],
    ['option_expiration_time', 'tomorrow', 'bad_time'],
    ['option_strike_price', '1,5', 'bad_number'],
    ['option_strike_price', 'NaN', 'bad_number'],
  ])('%s = %j is a %s reject naming the field', (field, value, reason) => {
    const r = rej(parseEvent({ ...base, [field]: value }));
    expect(r.reason).toBe(reason);
    expect(r.field).toBe(field);
    expect(r.message).toContain(`symbol: field "${field}"`);
  });

  it('a bad new field is reported after the version-1 fields are checked', () => {
    expect(rej(parseEvent({ ...base, symbol_type: 'X', active: 'x' })).field).toBe('symbol_type');
  });
});
