/**
 * parseJsonLine (a line of a log as an event or a reject) and parseEvent's promise never to throw,
 * whatever the fields and values (the rest of parseEvent: events.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseEvent, parseJsonLine, REJECT_REASONS } from '../../../src/core/events.js';
import { isReject, type Reject, type XrateEvent } from '../../../src/core/types.js';
import { rej, T, trade } from './eventRecords.js';

describe('parseJsonLine', () => {
  it('parses a valid line', () => {
    expect(parseJsonLine(JSON.stringify(trade))).toStrictEqual(parseEvent(trade));
    expect(parseJsonLine('{"type":"exchange","time":"2024-01-01","exchange_id":"KRAKEN","legitimate":true}')).toStrictEqual({
      type: 'exchange',
      time: 1_704_067_200_000_000,
      exchangeId: 'KRAKEN',
      legitimate: true,
      rank: 0,
    });
  });

  it('keeps the shortest round-trip text of JSON numbers', () => {
    expect(parseJsonLine('{"type":"trade","time":"2024-01-01","symbol_id":"X","price":0.1000,"size":1E2}')).toMatchObject({
      price: { value: 0.1, text: '0.1' },
      size: { value: 100, text: '100' },
    });
  });

  it.each([
    ['', 'line is not valid JSON'],
    ['{', 'line is not valid JSON'],
    ['{"type":"trade",}', 'line is not valid JSON'],
    ['[1,2]', 'line must be a JSON object, got an array'],
    ['null', 'line must be a JSON object, got null'],
    ['42', 'line must be a JSON object, got number'],
    ['"trade"', 'line must be a JSON object, got string'],
    ['true', 'line must be a JSON object, got boolean'],
  ])('bad_json %j', (line, msg) => {
    const r = rej(parseJsonLine(line));
    expect(r.reason).toBe('bad_json');
    expect(r.message.startsWith(msg)).toBe(true);
  });

  it('passes other rejects through', () => {
    expect(rej(parseJsonLine('{"type":"nope"}')).reason).toBe('unknown_type');
    expect(rej(parseJsonLine('{"type":"trade","time":"2024-01-01","symbol_id":"X","price":1e999,"size":1}')).reason).toBe('bad_number');
  });
});

describe('never throws', () => {
  const keys = fc.constantFrom(
    'type',
    'time',
    'exchange_id',
    'legitimate',
    'rank',
    'symbol_id',
    'symbol_type',
    'asset_id_base',
    'asset_id_quote',
    'price_precision',
    'size_precision',
    'symbol_id_exchange',
    'bid_price',
    'bid_size',
    'ask_price',
    'ask_size',
    'price',
    'size',
    'taker_side',
    '__proto__',
    'constructor',
  );
  const check = (r: XrateEvent | Reject): void => {
    if (isReject(r)) {
      expect(REJECT_REASONS).toContain(r.reason);
      expect(typeof r.message).toBe('string');
    } else {
      expect(['exchange', 'symbol', 'quote', 'trade']).toContain(r.type);
      expect(Number.isSafeInteger(r.time)).toBe(true);
    }
  };

  it('on fc.anything()', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        check(parseEvent(v as never));
      }),
      { seed: 42, numRuns: 1000 },
    );
  });

  it('on dictionaries of anything with event keys and types', () => {
    const value = fc.oneof(
      fc.anything(),
      fc.constantFrom('exchange', 'symbol', 'quote', 'trade', T, '2024-01-01', 'SPOT', 'BUY', '1', '-1', '0', 'true', ''),
      fc.double(),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.dictionary(keys, value), fc.constantFrom('exchange', 'symbol', 'quote', 'trade'), (d, type) => {
        check(parseEvent(d));
        check(parseEvent({ ...d, type }));
        check(parseEvent({ ...d, type, time: T }));
      }),
      { seed: 42, numRuns: 1000 },
    );
  });

  it('on null-prototype and exotic values', () => {
    const o = Object.create(null) as Record<string, unknown>;
    o.type = Object.create(null);
    check(parseEvent(o));
    const cyclic: Record<string, unknown> = { type: 'x' };
    cyclic.type = cyclic;
    check(parseEvent(cyclic));
    check(parseEvent({ type: Symbol('q') }));
    check(parseEvent({ type: 10n }));
    check(parseEvent({ ...trade, price: 10n, size: Symbol('s') }));
    const throwing = {
      get type(): string {
        throw new Error('boom');
      },
    };
    check(parseEvent(throwing));
  });

  it('on random JSON lines', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string()), (line) => {
        check(parseJsonLine(line));
      }),
      { seed: 42, numRuns: 1000 },
    );
  });
});
