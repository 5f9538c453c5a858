import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, resolveConfig, type EngineConfig } from '../../../src/core/config.js';
import { XrateError } from '../../../src/core/errors.js';
import { createEngine } from '../../../src/core/engine.js';

const bad = (c: unknown) => () => resolveConfig(c as Partial<EngineConfig>);

/** What `f` throws. */
function catchOf(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('it did not throw');
}

describe('config defaults', () => {
  it('are the methodology numbers, in µs where derived', () => {
    const c = resolveConfig();
    expect(c).toMatchObject({
      maxSpread: '0.67',
      maxSpreadText: '0.67',
      maxSpreadValue: 0.67,
      staleAfterSeconds: 301,
      staleAfterUs: 301_000_000,
      volumeWindowUs: 86_400_000_000,
      refreshEveryUs: 14_400_000_000,
      maxRateAgeUs: 86_400_000_000,
      weighting: 'trade_x_passive',
      outliers: 'weighted_sigma',
      outlierSigmas: 3,
      outlierMinMarkets: 3,
      crossMethod: 'bfs',
    });
    expect(Object.isFrozen(DEFAULT_CONFIG)).toBe(true);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('merges overrides', () => {
    const c = resolveConfig({ staleAfterSeconds: 60, maxSpread: 0.5, weighting: 'microprice', outliers: 'mad', crossMethod: 'layered' });
    expect(c.staleAfterUs).toBe(60_000_000);
    expect(c.maxSpreadText).toBe('0.5');
    expect(c.maxSpreadValue).toBe(0.5);
    expect(resolveConfig({ maxSpread: ' 0.10 ' }).maxSpreadText).toBe('0.10');
    expect(resolveConfig({ staleAfterSeconds: 0, maxRateAgeSeconds: 0 }).staleAfterUs).toBe(0);
  });
});

describe('config validation: `config` errors naming the field', () => {
  it('refuses unknown keys', () => {
    expect(bad({ staleAfterSecond: 5 })).toThrow(XrateError);
    expect(catchOf(bad({ staleAfterSecond: 5 }))).toMatchObject({ code: 'config', field: 'config.staleAfterSecond' });
    expect(catchOf(bad({ outlierSigmas: 0 }))).toMatchObject({ code: 'config', field: 'config.outlierSigmas', exitCode: 2 });
    expect(bad({ staleAfterSecond: 5 })).toThrow(/^unknown config key "staleAfterSecond"/);
  });

  it('refuses a bad weighting, outlier or cross method', () => {
    expect(bad({ weighting: 'volume' })).toThrow(
      /^config\.weighting must be one of trade_x_passive, trade, passive, microprice, got "volume"$/,
    );
    expect(bad({ outliers: 'iqr' })).toThrow(/^config\.outliers must be one of/);
    expect(bad({ crossMethod: 'dfs' })).toThrow(/^config\.crossMethod must be one of bfs, layered/);
  });

  it('refuses negative, fractional or non-number seconds', () => {
    expect(bad({ staleAfterSeconds: -1 })).toThrow(/^config\.staleAfterSeconds must be a non-negative integer number of seconds, got -1$/);
    expect(bad({ maxRateAgeSeconds: -5 })).toThrow(/^config\.maxRateAgeSeconds /);
    expect(bad({ volumeWindowSeconds: 0 })).toThrow(/^config\.volumeWindowSeconds must be a positive integer/);
    expect(bad({ refreshEverySeconds: 1.5 })).toThrow(/^config\.refreshEverySeconds /);
    expect(bad({ refreshEverySeconds: '60' })).toThrow(/^config\.refreshEverySeconds /);
  });

  it('refuses a bad maxSpread', () => {
    expect(bad({ maxSpread: '-0.1' })).toThrow(/^config\.maxSpread must be a non-negative decimal/);
    expect(bad({ maxSpread: 'abc' })).toThrow(/^config\.maxSpread /);
    expect(bad({ maxSpread: Infinity })).toThrow(/^config\.maxSpread /);
    expect(bad({ maxSpread: true })).toThrow(/^config\.maxSpread /);
  });

  it('refuses bad outlier numbers', () => {
    expect(bad({ outlierSigmas: 0 })).toThrow(/^config\.outlierSigmas must be a positive number/);
    expect(bad({ outlierSigmas: NaN })).toThrow(/^config\.outlierSigmas /);
    expect(bad({ outlierMinMarkets: 1 })).toThrow(/^config\.outlierMinMarkets must be an integer >= 2, got 1$/);
    expect(bad({ outlierMinMarkets: 2.5 })).toThrow(/^config\.outlierMinMarkets /);
  });

  it('refuses a config that is not an object', () => {
    expect(bad(null)).toThrow(/^config must be an object, got null$/);
    expect(bad([1])).toThrow(/^config must be an object/);
  });

  it('is checked when an engine is created', () => {
    expect(() => createEngine({ weighting: 'bogus' as never })).toThrow(/^config\.weighting/);
    try {
      createEngine({ foo: 1 } as never);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(XrateError);
      expect(e).toMatchObject({ name: 'XrateError', code: 'config' });
    }
  });
});
