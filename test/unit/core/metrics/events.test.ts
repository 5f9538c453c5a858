import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseEvent } from '../../../../src/core/events.js';
import {
  type MetricDefinitionEvent,
  type MetricEvent,
  metricScope,
  parseMetricDefinitionEvent,
  parseMetricEvent,
  seriesKey,
} from '../../../../src/core/metrics/events.js';
import { isReject, type Reject, type XrateEvent } from '../../../../src/core/types.js';
import { asStrings, T, TUS } from '../eventRecords.js';

function rej(r: MetricEvent | MetricDefinitionEvent | XrateEvent | Reject): Reject {
  if (!isReject(r)) throw new Error(`expected a reject, got ${JSON.stringify(r)}`);
  return r;
}

const metric = {
  type: 'metric',
  time: T,
  metric_id: 'FUNDING_RATE',
  exchange_id: 'BINANCE',
  symbol_id: 'BINANCE_PERP_BTC_USDT',
  value_decimal: '0.00010',
};
const full = {
  ...metric,
  asset_id: 'BTC',
  chain_id: 'ETH',
  network_id: 'MAINNET',
  recv_time: '2024-01-01T00:00:01Z',
};
const definition = { type: 'metric_definition', time: T, metric_id: 'FUNDING_RATE', description: 'Funding rate of a perpetual' };

describe('parseMetricEvent: valid events', () => {
  it('a decimal data point keeps its exact text', () => {
    expect(parseMetricEvent(metric)).toStrictEqual({
      type: 'metric',
      time: TUS,
      metricId: 'FUNDING_RATE',
      exchangeId: 'BINANCE',
      symbolId: 'BINANCE_PERP_BTC_USDT',
      value: { kind: 'decimal', dec: { value: 0.0001, text: '0.00010' } },
    });
  });

  it('every optional field, ids trimmed', () => {
    expect(parseMetricEvent({ ...full, exchange_id: ' BINANCE ', chain_id: 'ETH\t' })).toStrictEqual({
      type: 'metric',
      time: TUS,
      metricId: 'FUNDING_RATE',
      exchangeId: 'BINANCE',
      symbolId: 'BINANCE_PERP_BTC_USDT',
      assetId: 'BTC',
      chainId: 'ETH',
      networkId: 'MAINNET',
      recvTime: 1_704_067_201_000_000,
      value: { kind: 'decimal', dec: { value: 0.0001, text: '0.00010' } },
    });
  });

  it('absent optional fields (missing, null, blank) leave no keys', () => {
    const r = parseMetricEvent({ ...metric, symbol_id: null, asset_id: '', chain_id: '  ', network_id: undefined, recv_time: '' });
    expect(r).toStrictEqual({
      type: 'metric',
      time: TUS,
      metricId: 'FUNDING_RATE',
      exchangeId: 'BINANCE',
      value: { kind: 'decimal', dec: { value: 0.0001, text: '0.00010' } },
    });
  });

  it('a JSON number value_decimal keeps its shortest text', () => {
    expect(parseMetricEvent({ ...metric, value_decimal: 0.25 })).toMatchObject({
      value: { kind: 'decimal', dec: { value: 0.25, text: '0.25' } },
    });
  });

  it('a text value is kept as it is (not trimmed)', () => {
    const { value_decimal: _v, ...base } = metric;
    expect(parseMetricEvent({ ...base, value_text: ' OPEN ' })).toMatchObject({ value: { kind: 'text', text: ' OPEN ' } });
  });

  it('a time value is integer µs (7th digit floored)', () => {
    const { value_decimal: _v, ...base } = metric;
    expect(parseMetricEvent({ ...base, value_time: '2024-03-29T08:00:00.0000019Z' })).toMatchObject({
      value: { kind: 'time', us: 1_711_699_200_000_001 },
    });
  });

  it('the other value fields may be present but blank or null', () => {
    expect(parseMetricEvent({ ...metric, value_text: '', value_time: null })).toStrictEqual(parseMetricEvent(metric));
  });

  it('JSON-typed and all-string (CSV) records give equal events', () => {
    expect(parseMetricEvent(asStrings(full))).toStrictEqual(parseMetricEvent(full));
    expect(parseMetricEvent(asStrings({ ...metric, value_decimal: 1e-8 }))).toStrictEqual(
      parseMetricEvent({ ...metric, value_decimal: 1e-8 }),
    );
  });
});

describe('parseMetricEvent: rejects', () => {
  it.each(['time', 'metric_id', 'exchange_id'])('missing %s → missing_field', (f) => {
    for (const absent of [undefined, null, '', '  ']) {
      const r = rej(parseMetricEvent({ ...metric, [f]: absent }));
      expect(r).toStrictEqual({ kind: 'reject', reason: 'missing_field', message: `metric: missing required field "${f}"`, field: f });
    }
  });

  it('no value at all → missing_field naming the three fields', () => {
    const { value_decimal: _v, ...base } = metric;
    for (const r of [base, { ...base, value_decimal: '', value_text: null, value_time: ' ' }]) {
      expect(rej(parseMetricEvent(r))).toStrictEqual({
        kind: 'reject',
        reason: 'missing_field',
        message: 'metric: missing required field "value_decimal", "value_text" or "value_time" (exactly one)',
      });
    }
  });

  it('two or three values → bad_field naming those given', () => {
    expect(rej(parseMetricEvent({ ...metric, value_time: T }))).toStrictEqual({
      kind: 'reject',
      reason: 'bad_field',
      message: 'metric: exactly one of "value_decimal", "value_text", "value_time" may be given, got "value_decimal", "value_time"',
    });
    const r = rej(parseMetricEvent({ ...metric, value_text: 'x', value_time: T }));
    expect(r.reason).toBe('bad_field');
    expect(r.message).toMatch(/got "value_decimal", "value_text", "value_time"$/);
  });

  it('bad time, recv_time and value_time → bad_time naming the field, in the wording of the other events', () => {
    for (const field of ['time', 'recv_time']) {
      const r = rej(parseMetricEvent({ ...full, [field]: '2024-13-01T00:00:00Z' }));
      expect(r).toMatchObject({ reason: 'bad_time', field });
      expect(r.message).toBe(
        `metric: field "${field}" must be an ISO 8601 UTC time such as "2024-01-01T00:00:00.1234567Z", got "2024-13-01T00:00:00Z"`,
      );
    }
    const { value_decimal: _v, ...base } = metric;
    expect(rej(parseMetricEvent({ ...base, value_time: 1704067200 }))).toMatchObject({ reason: 'bad_time', field: 'value_time' });
    expect(rej(parseMetricEvent({ ...base, value_time: 'soon' }))).toMatchObject({ reason: 'bad_time', field: 'value_time' });
  });

  it('time messages equal those of a trade, prefix aside (also out of range)', () => {
    const trade = { type: 'trade', symbol_id: 'X_SPOT_A_B', price: 1, size: 1 };
    for (const bad of ['2024-13-01T00:00:00Z', '2300-01-01T00:00:00Z', 12, true]) {
      const m = rej(parseMetricEvent({ ...metric, time: bad }));
      const t = rej(parseEvent({ ...trade, time: bad }));
      expect(m.message).toBe(t.message.replace(/^trade:/, 'metric:'));
      expect(m.reason).toBe(t.reason);
    }
  });

  it('bad value_decimal → bad_number, with the message of a bad trade price', () => {
    for (const bad of ['1,5', 'NaN', '1e400', true, '0x10']) {
      const r = rej(parseMetricEvent({ ...metric, value_decimal: bad }));
      expect(r).toMatchObject({ reason: 'bad_number', field: 'value_decimal' });
      const t = rej(parseEvent({ type: 'trade', time: T, symbol_id: 'X_SPOT_A_B', price: bad, size: 1 }));
      expect(r.message).toBe(t.message.replace(/^trade: field "price"/, 'metric: field "value_decimal"'));
    }
  });

  it('negative and zero decimals are values like any other', () => {
    expect(parseMetricEvent({ ...metric, value_decimal: '-0.5' })).toMatchObject({ value: { dec: { value: -0.5, text: '-0.5' } } });
    expect(parseMetricEvent({ ...metric, value_decimal: 0 })).toMatchObject({ value: { dec: { value: 0, text: '0' } } });
  });

  it('non-string ids and value_text → bad_field', () => {
    for (const field of ['metric_id', 'exchange_id', 'symbol_id', 'asset_id', 'chain_id', 'network_id']) {
      const r = rej(parseMetricEvent({ ...full, [field]: 7 }));
      expect(r).toStrictEqual({ kind: 'reject', reason: 'bad_field', message: `metric: field "${field}" must be a string, got 7`, field });
    }
    const { value_decimal: _v, ...base } = metric;
    expect(rej(parseMetricEvent({ ...base, value_text: 42 }))).toStrictEqual({
      kind: 'reject',
      reason: 'bad_field',
      message: 'metric: field "value_text" must be a string, got 42',
      field: 'value_text',
    });
  });

  it('the first failing check in table order wins', () => {
    const { value_decimal: _v, ...noValue } = metric;
    expect(rej(parseMetricEvent({ ...noValue, time: 'x' })).reason).toBe('bad_time');
    expect(rej(parseMetricEvent({ ...noValue, time: 'x', metric_id: '' })).reason).toBe('bad_time');
    expect(rej(parseMetricEvent({ ...noValue, exchange_id: '' })).field).toBe('exchange_id');
    expect(rej(parseMetricEvent({ ...metric, recv_time: 'x', value_decimal: 'y' })).field).toBe('recv_time');
    expect(rej(parseMetricEvent({ ...metric, symbol_id: 1, asset_id: 2 })).field).toBe('symbol_id');
  });

  it('never throws, whatever the record (property)', () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.jsonValue());
    const field = fc.constantFrom(
      'time',
      'metric_id',
      'exchange_id',
      'symbol_id',
      'asset_id',
      'recv_time',
      'value_decimal',
      'value_text',
      'value_time',
      'description',
    );
    fc.assert(
      fc.property(fc.dictionary(field, value), (rec) => {
        const m = parseMetricEvent({ ...metric, ...rec });
        const d = parseMetricDefinitionEvent({ ...definition, ...rec });
        for (const r of [m, d]) if (isReject(r)) expect(r.message.length).toBeGreaterThan(0);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });
});

describe('parseMetricDefinitionEvent', () => {
  it('a definition; the description is kept as it is', () => {
    expect(parseMetricDefinitionEvent({ ...definition, metric_id: ' FUNDING_RATE', description: ' Rate ' })).toStrictEqual({
      type: 'metric_definition',
      time: TUS,
      metricId: 'FUNDING_RATE',
      description: ' Rate ',
    });
  });

  it.each(['time', 'metric_id', 'description'])('missing %s → missing_field', (f) => {
    expect(rej(parseMetricDefinitionEvent({ ...definition, [f]: ' ' }))).toStrictEqual({
      kind: 'reject',
      reason: 'missing_field',
      message: `metric_definition: missing required field "${f}"`,
      field: f,
    });
  });

  it('bad time → bad_time; non-string id or description → bad_field', () => {
    expect(rej(parseMetricDefinitionEvent({ ...definition, time: '2024-02-30' }))).toMatchObject({ reason: 'bad_time', field: 'time' });
    expect(rej(parseMetricDefinitionEvent({ ...definition, metric_id: 3 }))).toMatchObject({ reason: 'bad_field', field: 'metric_id' });
    expect(rej(parseMetricDefinitionEvent({ ...definition, description: ['a'] }))).toStrictEqual({
      kind: 'reject',
      reason: 'bad_field',
      message: 'metric_definition: field "description" must be a string, got ["a"]',
      field: 'description',
    });
  });
});

describe('metricScope and seriesKey', () => {
  it('symbol when a symbol_id (even with an asset_id), asset when only an asset_id, else exchange', () => {
    expect(metricScope({ symbolId: 'S', assetId: 'BTC' })).toBe('symbol');
    expect(metricScope({ symbolId: 'S' })).toBe('symbol');
    expect(metricScope({ assetId: 'BTC' })).toBe('asset');
    expect(metricScope({})).toBe('exchange');
  });

  it('scope of parsed events', () => {
    const { symbol_id: _s, ...exchangeLevel } = metric;
    const e = parseMetricEvent(exchangeLevel) as MetricEvent;
    expect(metricScope(e)).toBe('exchange');
    expect(metricScope(parseMetricEvent({ ...exchangeLevel, asset_id: 'BTC' }) as MetricEvent)).toBe('asset');
    expect(metricScope(parseMetricEvent(full) as MetricEvent)).toBe('symbol');
  });

  it('key = (metric_id, exchange_id, symbol_id or "", asset_id or ""); chain and network are not part of it', () => {
    expect(seriesKey(parseMetricEvent(full) as MetricEvent)).toStrictEqual({
      metric_id: 'FUNDING_RATE',
      exchange_id: 'BINANCE',
      symbol_id: 'BINANCE_PERP_BTC_USDT',
      asset_id: 'BTC',
    });
    expect(seriesKey({ metricId: 'M', exchangeId: 'X' })).toStrictEqual({ metric_id: 'M', exchange_id: 'X', symbol_id: '', asset_id: '' });
    const a = parseMetricEvent({ ...full, chain_id: 'A' }) as MetricEvent;
    const b = parseMetricEvent({ ...full, chain_id: 'B', network_id: '' }) as MetricEvent;
    expect(seriesKey(a)).toStrictEqual(seriesKey(b));
  });
});
