import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSymbolId, SYMBOL_TYPES, symbolTypeFromText } from '../../../src/core/symbols.js';

describe('parseSymbolId patterns', () => {
  it('SPOT', () => {
    expect(parseSymbolId('BITSTAMP_SPOT_BTC_USD')).toStrictEqual({
      symbolId: 'BITSTAMP_SPOT_BTC_USD',
      exchangeId: 'BITSTAMP',
      symbolType: 'SPOT',
      assetIdBase: 'BTC',
      assetIdQuote: 'USD',
    });
  });

  it('FUTURES', () => {
    expect(parseSymbolId('BITMEX_FTS_BTC_USD_240329')).toStrictEqual({
      symbolId: 'BITMEX_FTS_BTC_USD_240329',
      exchangeId: 'BITMEX',
      symbolType: 'FUTURES',
      assetIdBase: 'BTC',
      assetIdQuote: 'USD',
      extra: { delivery: '240329' },
    });
  });

  it('OPTION', () => {
    expect(parseSymbolId('DERIBIT_OPT_BTC_USD_240329_60000_C')).toStrictEqual({
      symbolId: 'DERIBIT_OPT_BTC_USD_240329_60000_C',
      exchangeId: 'DERIBIT',
      symbolType: 'OPTION',
      assetIdBase: 'BTC',
      assetIdQuote: 'USD',
      extra: { expiry: '240329', strike: '60000', side: 'C' },
    });
    expect(parseSymbolId('DERIBIT_OPT_ETH_USD_240329_3500.5_P')?.extra).toStrictEqual({
      expiry: '240329',
      strike: '3500.5',
      side: 'P',
    });
  });

  it('PERPETUAL and DPERPETUAL', () => {
    expect(parseSymbolId('BINANCEFTS_PERP_BTC_USDT')).toStrictEqual({
      symbolId: 'BINANCEFTS_PERP_BTC_USDT',
      exchangeId: 'BINANCEFTS',
      symbolType: 'PERPETUAL',
      assetIdBase: 'BTC',
      assetIdQuote: 'USDT',
    });
    expect(parseSymbolId('OKEX_DPERP_BTC_USD')).toStrictEqual({
      symbolId: 'OKEX_DPERP_BTC_USD',
      exchangeId: 'OKEX',
      symbolType: 'DPERPETUAL',
      assetIdBase: 'BTC',
      assetIdQuote: 'USD',
    });
  });

  it('INDEX (index id may contain _)', () => {
    expect(parseSymbolId('COINAPI_IDX_BTC')).toStrictEqual({
      symbolId: 'COINAPI_IDX_BTC',
      exchangeId: 'COINAPI',
      symbolType: 'INDEX',
      extra: { indexId: 'BTC' },
    });
    expect(parseSymbolId('COINAPI_IDX_BTC_USD_VWAP')?.extra).toStrictEqual({
      indexId: 'BTC_USD_VWAP',
    });
  });

  it('CREDIT', () => {
    expect(parseSymbolId('BITFINEX_CRE_USD')).toStrictEqual({
      symbolId: 'BITFINEX_CRE_USD',
      exchangeId: 'BITFINEX',
      symbolType: 'CREDIT',
      assetIdBase: 'USD',
    });
  });

  it('CONTRACT (contract id may contain _)', () => {
    expect(parseSymbolId('DERIBIT_COT_BTC_FS_29MAR24_PERP')).toStrictEqual({
      symbolId: 'DERIBIT_COT_BTC_FS_29MAR24_PERP',
      exchangeId: 'DERIBIT',
      symbolType: 'CONTRACT',
      extra: { contractId: 'BTC_FS_29MAR24_PERP' },
    });
  });

  it('OPTION_COMBINATION and FUTURES_COMBINATION', () => {
    expect(parseSymbolId('DERIBIT_OPTCMB_BTC_USD_240329_60000_C_240329_65000_C')).toStrictEqual({
      symbolId: 'DERIBIT_OPTCMB_BTC_USD_240329_60000_C_240329_65000_C',
      exchangeId: 'DERIBIT',
      symbolType: 'OPTION_COMBINATION',
      extra: { legs: 'BTC_USD_240329_60000_C_240329_65000_C' },
    });
    expect(parseSymbolId('DERIBIT_FTSCMB_BTC_USD_240329_240628')).toStrictEqual({
      symbolId: 'DERIBIT_FTSCMB_BTC_USD_240329_240628',
      exchangeId: 'DERIBIT',
      symbolType: 'FUTURES_COMBINATION',
      extra: { legs: 'BTC_USD_240329_240628' },
    });
  });

  it('exchange ids containing _', () => {
    expect(parseSymbolId('FOO_BAR_SPOT_BTC_USD')).toStrictEqual({
      symbolId: 'FOO_BAR_SPOT_BTC_USD',
      exchangeId: 'FOO_BAR',
      symbolType: 'SPOT',
      assetIdBase: 'BTC',
      assetIdQuote: 'USD',
    });
    expect(parseSymbolId('A_B_C_IDX_X_Y')?.exchangeId).toBe('A_B_C');
  });

  it('the first type token wins (a later token is data)', () => {
    expect(parseSymbolId('X_SPOT_SPOT_PERP')).toMatchObject({
      exchangeId: 'X',
      symbolType: 'SPOT',
      assetIdBase: 'SPOT',
      assetIdQuote: 'PERP',
    });
    // A type token as the first part is the exchange id, not the type.
    expect(parseSymbolId('SPOT_SPOT_BTC_USD')).toMatchObject({ exchangeId: 'SPOT', assetIdBase: 'BTC' });
  });
});

describe('parseSymbolId duplicates', () => {
  it.each([
    ['BITSTAMP_SPOT_BTC_USD_2', 'SPOT', '2'],
    ['COINBASE_SPOT_ETH_USD_X', 'SPOT', 'X'],
    ['KRAKEN_SPOT_BTC_USD_', 'SPOT', ''],
    ['KRAKEN_SPOT_BTC_USD_A_B', 'SPOT', 'A_B'],
    ['KRAKEN_SPOT_BTC_USD__', 'SPOT', '_'],
    ['X_PERP_BTC_USD_2', 'PERPETUAL', '2'],
    ['X_DPERP_BTC_USD_2', 'DPERPETUAL', '2'],
    ['X_FTS_BTC_USD_240329_2', 'FUTURES', '2'],
    ['X_OPT_BTC_USD_240329_100_P_2', 'OPTION', '2'],
    ['X_CRE_USD_2', 'CREDIT', '2'],
    ['X_CRE_USD_', 'CREDIT', ''],
  ])('%s', (id, type, suffix) => {
    const info = parseSymbolId(id);
    expect(info?.symbolType).toBe(type);
    expect(info?.duplicateSuffix).toBe(suffix);
    expect(info?.symbolId).toBe(id);
  });

  it('keeps base and quote of a duplicate SPOT', () => {
    expect(parseSymbolId('BITSTAMP_SPOT_BTC_USD_2')).toStrictEqual({
      symbolId: 'BITSTAMP_SPOT_BTC_USD_2',
      exchangeId: 'BITSTAMP',
      symbolType: 'SPOT',
      assetIdBase: 'BTC',
      assetIdQuote: 'USD',
      duplicateSuffix: '2',
    });
  });

  it('variable patterns only recognise a trailing bare _', () => {
    expect(parseSymbolId('X_IDX_FOO_')).toStrictEqual({
      symbolId: 'X_IDX_FOO_',
      exchangeId: 'X',
      symbolType: 'INDEX',
      extra: { indexId: 'FOO' },
      duplicateSuffix: '',
    });
    expect(parseSymbolId('X_COT_A_2')?.extra).toStrictEqual({ contractId: 'A_2' });
    expect(parseSymbolId('X_COT_A_2')?.duplicateSuffix).toBeUndefined();
  });

  it('no duplicate suffix when there is none', () => {
    expect('duplicateSuffix' in parseSymbolId('X_SPOT_A_B')!).toBe(false);
  });
});

describe('parseSymbolId malformed', () => {
  it.each([
    '',
    'BITSTAMP',
    'BITSTAMP_BTC_USD',
    'SPOT_BTC_USD',
    'BITSTAMP_SPOT',
    'BITSTAMP_SPOT_BTC',
    'BITSTAMP_SPOT_BTC_',
    'BITSTAMP_SPOT__USD',
    '_SPOT_BTC_USD',
    'FOO__SPOT_BTC_USD',
    'bitstamp_spot_btc_usd', // tokens are upper case
    'X_FTS_BTC_USD',
    'X_FTS_BTC_USD_2403',
    'X_FTS_BTC_USD_24032A',
    'X_FTS_BTC_USD_2403299',
    'X_OPT_BTC_USD_240329_100',
    'X_OPT_BTC_USD_240329_100_X',
    'X_OPT_BTC_USD_240329_100_c',
    'X_OPT_BTC_USD_240329__C',
    'X_OPT_BTC_USD_24032_100_C',
    'X_PERP_BTC',
    'X_DPERP_BTC',
    'X_IDX',
    'X_IDX_',
    'X_IDX__',
    'X_IDX_A__B',
    'X_CRE',
    'X_CRE_',
    'X_COT',
    'X_COT_',
    'X_OPTCMB',
    'X_FTSCMB_',
  ])('%j', (id) => {
    expect(parseSymbolId(id)).toBeUndefined();
  });

  it('never throws and keeps the id', () => {
    const part = fc.constantFrom(
      'SPOT',
      'FTS',
      'OPT',
      'PERP',
      'DPERP',
      'IDX',
      'CRE',
      'COT',
      'OPTCMB',
      'FTSCMB',
      'BTC',
      '',
      '240329',
      'C',
      'P',
      '1',
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 9 }), (parts) => {
        const id = parts.join('_');
        const info = parseSymbolId(id);
        if (info) {
          expect(info.symbolId).toBe(id);
          expect(SYMBOL_TYPES).toContain(info.symbolType);
          expect(info.exchangeId.length).toBeGreaterThan(0);
        }
      }),
      { seed: 42, numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.string(), (s) => {
        parseSymbolId(s);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });
});

describe('symbolTypeFromText', () => {
  it('maps every type, case-insensitively', () => {
    for (const t of SYMBOL_TYPES) {
      expect(symbolTypeFromText(t)).toBe(t);
      expect(symbolTypeFromText(t.toLowerCase())).toBe(t);
      expect(symbolTypeFromText(` ${t[0]}${t.slice(1).toLowerCase()} `)).toBe(t);
    }
  });

  it('rejects other values', () => {
    for (const s of ['', 'SWAP', 'FTS', 'PERP', 'CONTACT', 'SPOT_', 'OPTION COMBINATION']) {
      expect(symbolTypeFromText(s)).toBeUndefined();
    }
  });

  it('SYMBOL_TYPES lists the ten types once each', () => {
    expect(SYMBOL_TYPES).toHaveLength(10);
    expect(new Set(SYMBOL_TYPES).size).toBe(10);
    expect(Object.isFrozen(SYMBOL_TYPES)).toBe(true);
  });
});
