/**
 * xrate's own metrics on small logs whose values can be worked out by hand (docs/methodology.md
 * section 9): weight shares of two markets, a market left out, counts per exchange, ranks, the
 * spread of a quote rule 5 discards, and a market that a symbol event moves to another exchange.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, type OwnMetricBatch } from '../../../../src/core/engine.js';
import type { MetricEvent } from '../../../../src/core/metrics/events.js';
import { parseEvent } from '../../../../src/core/events.js';
import { isReject, type XrateEvent } from '../../../../src/core/types.js';

const event = (r: Record<string, unknown>): XrateEvent => {
  const e = parseEvent(r);
  if (isReject(e)) throw new Error(e.message);
  return e;
};
const t = (s: string) => `2024-01-01T00:00:${s}Z`;
const quote = (time: string, id: string, bid: string, ask: string, size = '1') =>
  event({ type: 'quote', time: t(time), symbol_id: id, bid_price: bid, bid_size: size, ask_price: ask, ask_size: size });
const trade = (time: string, id: string) => event({ type: 'trade', time: t(time), symbol_id: id, price: '100', size: '1' });

/**
 * The latest value of each own series after the events, by "metric exchange id". The logs start
 * after 00:00:00, so T0 is 00:00:01 and the trades before it make the markets eligible there.
 */
function run(events: XrateEvent[], until: string): Map<string, number> {
  const points: MetricEvent[] = [];
  const e = createEngine({ weighting: 'passive' }, { onOwnMetrics: (b) => void points.push(...b.events()) });
  for (const x of events) e.apply(x);
  e.advanceTo(Date.parse(t(until)) * 1000);
  const out = new Map<string, number>();
  for (const p of points)
    if (p.value.kind === 'decimal') out.set(`${p.metricId} ${p.exchangeId} ${p.symbolId ?? ''}`.trim(), p.value.dec.value);
  return out;
}

describe("xrate's own metrics", () => {
  const A = 'KRAKEN_SPOT_BTC_USD';
  const B = 'BITSTAMP_SPOT_BTC_USD';

  it('weight shares w / sum(w), markets used per exchange, ranks and spreads', () => {
    const m = run(
      [
        event({ type: 'exchange', time: t('00.05'), exchange_id: 'KRAKEN', legitimate: true, rank: 1 }),
        event({ type: 'exchange', time: t('00.05'), exchange_id: 'BITSTAMP', legitimate: true, rank: 1 }),
        trade('00.1', A),
        trade('00.1', B),
        quote('00.5', A, '99', '101', '1'), // q = 2
        quote('00.5', B, '99', '101', '3'), // q = 6
      ],
      '02',
    );
    expect(m.get(`XRATE_MARKET_WEIGHT_SHARE KRAKEN ${A}`)).toBe(0.25);
    expect(m.get(`XRATE_MARKET_WEIGHT_SHARE BITSTAMP ${B}`)).toBe(0.75);
    expect(m.get('XRATE_EXCHANGE_MARKETS_USED KRAKEN')).toBe(1);
    expect(m.get('XRATE_EXCHANGE_RANK BITSTAMP')).toBe(1);
    expect(m.get(`XRATE_MARKET_SPREAD KRAKEN ${A}`)).toBe(0.02);
    expect(m.get(`XRATE_MARKET_VOLUME_24H KRAKEN ${A}`)).toBe(1);
  });

  it('a market left out has share 0 and is not counted; a discarded quote still sets the spread', () => {
    const m = run(
      [
        trade('00.1', A),
        trade('00.1', B),
        quote('00.5', A, '99', '101'),
        quote('00.5', B, '99', '101'),
        quote('01.5', B, '50', '150'), // spread 1 > 0.67: discarded, B keeps its quote
        event({ type: 'exchange', time: t('02.5'), exchange_id: 'BITSTAMP', legitimate: false }),
      ],
      '04',
    );
    expect(m.get(`XRATE_MARKET_SPREAD BITSTAMP ${B}`)).toBe(1);
    expect(m.get(`XRATE_MARKET_WEIGHT_SHARE BITSTAMP ${B}`)).toBe(0);
    expect(m.get(`XRATE_MARKET_WEIGHT_SHARE KRAKEN ${A}`)).toBe(1);
    expect(m.get('XRATE_EXCHANGE_MARKETS_USED BITSTAMP')).toBe(0);
    expect(m.get('XRATE_EXCHANGE_MARKETS_USED KRAKEN')).toBe(1);
  });

  it('a market moved to another exchange by a symbol event is counted for the new one only', () => {
    const M = 'X_SPOT_BTC_USD';
    const symbol = (time: string, exchange: string) =>
      event({
        type: 'symbol',
        time: t(time),
        symbol_id: M,
        exchange_id: exchange,
        symbol_type: 'SPOT',
        asset_id_base: 'BTC',
        asset_id_quote: 'USD',
      });
    const m = run(
      [symbol('00.05', 'OLDX'), trade('00.1', M), quote('00.5', M, '99', '101'), symbol('01.5', 'NEWX'), quote('02.5', M, '99', '101')],
      '06',
    );
    expect(m.get('XRATE_EXCHANGE_MARKETS_USED OLDX')).toBe(0);
    expect(m.get('XRATE_EXCHANGE_MARKETS_USED NEWX')).toBe(1);
  });

  it('emitAllAtNextTick writes every series that has a value at the next tick, changed or not', () => {
    const points: MetricEvent[] = [];
    const e = createEngine({ weighting: 'passive' }, { onOwnMetrics: (b) => void points.push(...b.events()) });
    for (const x of [trade('00.1', A), trade('00.1', B), quote('00.5', A, '99', '101'), quote('00.5', B, '99', '101', '3')]) e.apply(x);
    e.advanceTo(Date.parse(t('05')) * 1000);
    const key = (p: MetricEvent) => `${p.metricId} ${p.exchangeId} ${p.symbolId ?? p.assetId ?? ''}`;
    const series = new Map(points.map((p) => [key(p), p.value.kind === 'decimal' ? p.value.dec.text : '']));
    // Nothing changes after 00:00:01: no point since.
    expect(points.every((p) => p.time <= Date.parse(t('01')) * 1000)).toBe(true);
    points.length = 0;
    e.emitAllAtNextTick();
    e.apply(quote('05.5', A, '99', '101')); // the same quote again: a computed tick, nothing changed
    e.advanceTo(Date.parse(t('06')) * 1000);
    expect(new Map(points.map((p) => [key(p), p.value.kind === 'decimal' ? p.value.dec.text : '']))).toEqual(series);
    expect(points.every((p) => p.time === Date.parse(t('06')) * 1000)).toBe(true);
    // And after it, only changes again.
    points.length = 0;
    e.apply(quote('06.5', A, '99', '101'));
    e.advanceTo(Date.parse(t('07')) * 1000);
    expect(points).toEqual([]);
  });

  it('a tick cut short by a listener that throws leaves the next ticks writing every share changed', () => {
    const points: MetricEvent[] = [];
    const at = (s: string) => Date.parse(t(s)) * 1000;
    const C = 'KRAKEN_SPOT_ETH_USD';
    const D = 'BITSTAMP_SPOT_ETH_USD';
    let fail = true;
    // At the first tick at 00:00:02 the pairs are computed, then the rates' listener throws before
    // the own metrics are written; the tick is done again when the engine is advanced again.
    const e = createEngine(
      { weighting: 'passive' },
      {
        onOwnMetrics: (b: OwnMetricBatch) => void points.push(...b.events()),
        onPairRate: (r) => {
          if (r.tick === at('02') && fail) {
            fail = false;
            throw new Error('listener');
          }
        },
      },
    );
    const setUp = [A, B, C, D].map((m) => trade('00.1', m));
    for (const m of [A, B, C, D]) setUp.push(quote('00.5', m, '99', '101'));
    for (const x of setUp) e.apply(x);
    e.advanceTo(at('01'));
    e.apply(quote('01.5', A, '99', '101', '3')); // BTC/USD 0.75 and 0.25 at 00:00:02
    expect(() => e.advanceTo(at('02'))).toThrow('listener');
    points.length = 0;
    e.apply(quote('01.6', A, '99', '101', '7')); // BTC/USD 0.875 and 0.125
    e.apply(quote('01.6', C, '99', '101', '3')); // ETH/USD 0.75 and 0.25
    e.advanceTo(at('02'));
    const shares = new Map(
      points
        .filter((p) => p.metricId === 'XRATE_MARKET_WEIGHT_SHARE')
        .map((p) => [p.symbolId, p.value.kind === 'decimal' ? p.value.dec.value : Number.NaN]),
    );
    expect(shares).toEqual(
      new Map([
        [A, 0.875],
        [B, 0.125],
        [C, 0.75],
        [D, 0.25],
      ]),
    );
  });
});
