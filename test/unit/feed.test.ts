/**
 * The live feed's messages (src/distributed/feed.ts): a record published and read back is the same
 * record (its text, line, log, and the reader's reject when there was one); subjects are valid
 * NATS subjects of the stream; the URL and stream-name checks.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  controlSubject,
  decodeMessage,
  encodeRecord,
  endMessage,
  eventSubject,
  exchangeOf,
  streamSubjects,
} from '../../src/distributed/feed.js';
import { isNatsUrl, isStreamName } from '../../src/distributed/names.js';
import type { SourceRecord } from '../../src/io/source.js';

const SEED = { seed: 20261124, numRuns: 300 };

describe('a record on the stream', () => {
  it('reads back as it was published (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.string({ minLength: 1, maxLength: 60 }).filter((s) => !/[\r\n]/.test(s) && s.trim() === s),
        fc.option(fc.record({ reason: fc.constantFrom('bad_json', 'line_too_long'), error: fc.string({ minLength: 1, maxLength: 80 }) }), {
          nil: undefined,
        }),
        (raw, line, input, reject) => {
          const rec: SourceRecord = reject
            ? { line, raw, error: reject.error, reason: reject.reason as 'bad_json' }
            : { line, raw, record: {} };
          const m = encodeRecord(rec, input);
          const back = decodeMessage(m.headers, m.data);
          expect(back.kind).toBe('record');
          if (back.kind !== 'record') return;
          expect(back.raw).toBe(raw);
          expect(back.line).toBe(line);
          expect(back.input).toBe(input);
          if (reject) {
            expect(back.reject?.reason).toBe(reject.reason);
            // A header is one line: line breaks of the message become spaces.
            expect(back.reject?.error).toBe(reject.error.replace(/[\r\n]+/g, ' ').trim() || 'unreadable record');
          } else expect(back.reject).toBeUndefined();
        },
      ),
      SEED,
    );
  });

  it('the end-of-run message, and an unknown control message, are told apart from records', () => {
    const end = endMessage();
    expect(decodeMessage(end.headers, end.data)).toEqual({ kind: 'end' });
    end.headers.set('Xrate-Control', 'pause');
    expect(decodeMessage(end.headers, '')).toEqual({ kind: 'unknown', why: 'unknown control message "pause"' });
    // A message without headers (published by another tool) is a record of an unnamed log.
    expect(decodeMessage(undefined, '{"type":"quote"}')).toEqual({
      kind: 'record',
      input: 'nats',
      line: 0,
      raw: '{"type":"quote"}',
      reject: undefined,
    });
  });
});

describe('subjects', () => {
  it('one token per exchange, under the stream, whatever the exchange id (property)', () => {
    fc.assert(
      fc.property(fc.option(fc.string({ maxLength: 30 }), { nil: undefined }), (ex) => {
        const s = eventSubject('RATES', ex);
        expect(s.startsWith('RATES.ev.')).toBe(true);
        const token = s.slice('RATES.ev.'.length);
        expect(token.length).toBeGreaterThan(0);
        expect(token).not.toMatch(/[.*>\s]/);
      }),
      SEED,
    );
    expect(eventSubject('RATES', 'BINANCE.hedge')).toBe('RATES.ev.BINANCE_hedge');
    expect(eventSubject('RATES', undefined)).toBe('RATES.ev._');
    expect(controlSubject('RATES')).toBe('RATES.ctl');
    expect(streamSubjects('RATES')).toEqual(['RATES.>']);
  });

  it("an event's exchange: its exchange_id, else its symbol's prefix", () => {
    expect(exchangeOf({ line: 1, raw: '', record: { exchange_id: 'KRAKEN' } })).toBe('KRAKEN');
    expect(exchangeOf({ line: 1, raw: '', record: { symbol_id: 'BINANCE_SPOT_BTC_USDT' } })).toBe('BINANCE');
    expect(exchangeOf({ line: 1, raw: '', record: { metric_id: 'X' } })).toBeUndefined();
    expect(exchangeOf({ line: 1, raw: 'garbage', error: 'bad' })).toBeUndefined();
  });
});

describe('flags', () => {
  it('NATS URLs and stream names', () => {
    expect(isNatsUrl('nats://127.0.0.1:4222')).toBe(true);
    expect(isNatsUrl('nats://a:4222,nats://b:4222')).toBe(true);
    expect(isNatsUrl('tls://nats.example:4222')).toBe(true);
    expect(isNatsUrl('redis://127.0.0.1:6379')).toBe(false);
    expect(isNatsUrl('127.0.0.1:4222')).toBe(false);
    expect(isStreamName('XRATE')).toBe(true);
    expect(isStreamName('rates-2024_a')).toBe(true);
    expect(isStreamName('a.b')).toBe(false);
    expect(isStreamName('')).toBe(false);
    expect(isStreamName('x'.repeat(65))).toBe(false);
  });
});
