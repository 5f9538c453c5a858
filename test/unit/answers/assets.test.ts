/** The one asset lookup of the answers (src/answers/assets.ts): exact, else equal ignoring case. */
import { describe, expect, it } from 'vitest';
import { AssetResolver } from '../../../src/answers/assets.js';

describe('AssetResolver', () => {
  const r = new AssetResolver(['BTC', 'USD', 'eth', 'ETH', 'usdt', 'BTC']);

  it('takes a known id as it is, and finds an id that differs only in case', () => {
    expect(r.resolve('BTC')).toBe('BTC');
    expect(r.resolve('btc')).toBe('BTC');
    expect(r.resolve('Usd')).toBe('USD');
    expect(r.resolve('USDT')).toBe('usdt');
    expect(r.resolveFirst('bTc')).toBe('BTC');
  });

  it('answers an exact id even when others equal it ignoring case', () => {
    expect(r.resolve('eth')).toBe('eth');
    expect(r.resolve('ETH')).toBe('ETH');
    expect(r.resolveFirst('ETH')).toBe('ETH');
  });

  it('resolve refuses an ambiguous spelling; resolveFirst takes the id given first', () => {
    expect(r.resolve('Eth')).toBeUndefined();
    expect(r.resolveFirst('Eth')).toBe('eth');
    expect(new AssetResolver(['ETH', 'eth']).resolveFirst('Eth')).toBe('ETH');
  });

  it('knows nothing else', () => {
    expect(r.resolve('XRP')).toBeUndefined();
    expect(r.resolveFirst('XRP')).toBeUndefined();
    expect(new AssetResolver([]).resolve('BTC')).toBeUndefined();
  });
});
