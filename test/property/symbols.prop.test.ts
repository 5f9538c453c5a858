/**
 * Symbol records (docs/methodology.md section 10): the values the engine derives at a tick equal a
 * brute-force recomputation from the accepted events; a record's declared fields are the union of
 * its `symbol` events (each field the last value given, through snapshots too); and `symbol`
 * events with the version-2 optional fields change no rate.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/core/config.js';
import { ExactDecimal } from '../../src/core/decimal.js';
import { createEngine, restoreEngine, type Engine, type SymbolRecord } from '../../src/core/engine.js';
import { parseEvent } from '../../src/core/events.js';
import { spreadAccepted } from '../../src/core/quoteFilter.js';
import { isReject, type QuoteEvent, type SymbolEvent, type TradeEvent, type XrateEvent } from '../../src/core/types.js';
import { logArb, recorder, US, type Log } from './arbitraries.js';

const HOUR = 3600 * US;
const DAY = 24 * HOUR;

/** The log with its times stretched `k` times away from its first event (whole seconds stay whole). */
function stretched(log: Log, k: number): Log {
  const at = (x: number) => log.first + (x - log.first) * k;
  return { ...log, events: log.events.map((e) => ({ ...e, time: at(e.time) }) as XrateEvent), end: at(log.end) };
}

/** What section 10 says a market's derived values are at T, from its accepted events in log order. */
function bruteForce(accepted: readonly XrateEvent[], id: string, T: number, engine: Engine, maxSpread: [string, number]) {
  const mine = accepted.filter((e) => e.time <= T && 'symbolId' in e && e.symbolId === id);
  const quotes = mine.filter((e): e is QuoteEvent => e.type === 'quote');
  const trades = mine.filter((e): e is TradeEvent => e.type === 'trade');
  const times = (xs: readonly { time: number }[]) => xs.map((x) => x.time);
  const min = (xs: number[]) => (xs.length ? Math.min(...xs) : undefined);
  const max = (xs: number[]) => (xs.length ? Math.max(...xs) : undefined);
  const sum = (from: number) =>
    trades
      .filter((x) => x.time > from)
      .reduce((a, x) => a.plus(x.size.text), new ExactDecimal(0))
      .toString();
  // The last trade by time, ties to the later line; else the last quote rule 5 kept (the last read).
  const lastTrade = trades.reduce<TradeEvent | undefined>((a, x) => (!a || x.time >= a.time ? x : a), undefined);
  const kept = quotes.filter((q) => spreadAccepted(q.bidPrice, q.askPrice, maxSpread[0], maxSpread[1]));
  const lastKept = kept[kept.length - 1];
  const price = lastTrade
    ? new ExactDecimal(lastTrade.price.text).toString()
    : lastKept
      ? new ExactDecimal(lastKept.bidPrice.text).plus(lastKept.askPrice.text).div(2).toString()
      : undefined;
  return {
    dataStart: min([...times(quotes), ...times(trades)]),
    dataEnd: max([...times(quotes), ...times(trades)]),
    dataQuoteStart: min(times(quotes)),
    dataQuoteEnd: max(times(quotes)),
    dataTradeStart: min(times(trades)),
    dataTradeEnd: max(times(trades)),
    volume1hrs: sum(T - HOUR),
    volume1day: sum(T - DAY),
    price,
    usd: engine.rate(id.split('_')[2], 'USD')?.rate,
  };
}

function derived(r: SymbolRecord) {
  const { dataStart, dataEnd, dataQuoteStart, dataQuoteEnd, dataTradeStart, dataTradeEnd } = r;
  return {
    dataStart,
    dataEnd,
    dataQuoteStart,
    dataQuoteEnd,
    dataTradeStart,
    dataTradeEnd,
    volume1hrs: new ExactDecimal(r.volume1hrs!).toString(),
    volume1day: new ExactDecimal(r.volume1day!).toString(),
    price: r.price === undefined ? undefined : new ExactDecimal(r.price).toString(),
  };
}

describe('symbol records (property)', () => {
  it('the derived values at a tick equal a brute-force recomputation from the accepted events', () => {
    fc.assert(
      fc.property(
        logArb({ maxSteps: 80 }),
        fc.constantFrom(1, 37, 600),
        fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 4 }),
        (raw, k, cuts) => {
          const log = stretched(raw, k);
          const engine = createEngine(log.config);
          const cfg = resolveConfig(log.config);
          const accepted: XrateEvent[] = [];
          const stops = new Set(cuts.map((c) => Math.floor((c / 1000) * log.events.length)));
          const checkAt = (e: Engine) => {
            const T = e.lastTickTime;
            if (T === undefined) return;
            for (const r of e.symbols()) {
              const want = bruteForce(accepted, r.symbolId, T, e, [cfg.maxSpreadText, cfg.maxSpreadValue]);
              const { usd, ...rest } = want;
              expect(derived(r), `${r.symbolId} at ${T}`).toEqual(rest);
              const day = usd === undefined ? undefined : new ExactDecimal(rest.volume1day).times(usd).toNumber();
              expect(r.volume1dayUsd).toBe(day);
            }
            const ids = new Set(accepted.filter((x) => x.time <= T && 'symbolId' in x).map((x) => (x as SymbolEvent).symbolId));
            expect(e.symbols().map((r) => r.symbolId)).toEqual([...ids].sort());
          };
          // At a stop: here, and, on a copy of the engine (restored from its snapshot), at the
          // window edges of a few trades: the tick that ends 1 h or 24 h after the trade's second,
          // and the next one, where the trade leaves the window.
          const check = () => {
            checkAt(engine);
            const trades = accepted.filter((x) => x.type === 'trade');
            const edges = trades.slice(-3).flatMap((x) => {
              const s = Math.ceil(x.time / US) * US;
              return [s + HOUR - US, s + HOUR, s + DAY - US, s + DAY];
            });
            const last = engine.lastTickTime ?? 0;
            const copy = restoreEngine(JSON.parse(JSON.stringify(engine.snapshot())));
            for (const T of [...new Set(edges)].filter((x) => x > last).sort((a, b) => a - b)) {
              copy.advanceTo(T);
              if (accepted.every((x) => x.time <= T)) checkAt(copy);
            }
          };
          log.events.forEach((e, i) => {
            if (stops.has(i)) check();
            if (engine.apply(e) === undefined) accepted.push(e);
          });
          check();
          engine.advanceTo(log.end + 2 * HOUR);
          check();
        },
      ),
      { seed: 42, numRuns: 120 },
    );
  });

  it('a record is the union of its symbol events: each field the last value given at or before the tick', () => {
    // The optional fields of a symbol event, the record field each becomes, and a few values.
    const FIELDS = {
      price_precision: ['pricePrecision', [0, 2, 8]],
      size_precision: ['sizePrecision', [1, 6]],
      symbol_id_exchange: ['symbolIdExchange', ['XXBTZUSD', 'XBTUSD']],
      asset_id_base_exchange: ['assetIdBaseExchange', ['XBT', 'BTC']],
      asset_id_quote_exchange: ['assetIdQuoteExchange', ['ZUSD', 'USD']],
      future_delivery_time: ['futureDeliveryTime', ['2024-03-29T08:00:00Z', '2025-01-01']],
      option_type_is_call: ['optionTypeIsCall', [true, false]],
      option_strike_price: ['optionStrikePrice', ['60000', '0.5']],
      option_expiration_time: ['optionExpirationTime', ['2024-06-28T08:00:00Z']],
      active: ['active', [false, true]],
    } as const;
    type Field = keyof typeof FIELDS;
    const names = Object.keys(FIELDS) as Field[];
    const IDS = ['KRAKEN_SPOT_BTC_USD', 'KRAKEN_SPOT_ETH_USD'];
    // An event: its symbol, the µs since the previous event (0: the same time), some of the fields, and whether to look before it.
    const eventArb = fc.record({
      symbol: fc.nat(IDS.length - 1),
      dt: fc.constantFrom(0, 0, 250_000, US, 1_500_000),
      fields: fc.record(
        Object.fromEntries(names.map((f) => [f, fc.constantFrom(...(FIELDS[f][1] as readonly unknown[]))])) as Record<
          Field,
          fc.Arbitrary<unknown>
        >,
        { requiredKeys: [] },
      ),
      check: fc.boolean(),
      snapshot: fc.boolean(),
    });
    /** The record field of a value given as in a log (times in µs, the strike price's exact text). */
    const recordValue = (f: Field, v: unknown): unknown => {
      if (f === 'future_delivery_time' || f === 'option_expiration_time') return Date.parse(v as string) * 1000;
      return v;
    };
    fc.assert(
      fc.property(fc.array(eventArb, { minLength: 1, maxLength: 30 }), (drawn) => {
        let time = Date.UTC(2024, 0, 1) * 1000;
        const events = drawn.map((d) => {
          time += d.dt;
          const symbolId = IDS[d.symbol];
          const [, base, quote] = symbolId.split('_').slice(1);
          const e = parseEvent({
            type: 'symbol',
            time: new Date(time / 1000).toISOString().replace('Z', `${String(time % 1000).padStart(3, '0')}Z`),
            symbol_id: symbolId,
            exchange_id: 'KRAKEN',
            symbol_type: 'SPOT',
            asset_id_base: base,
            asset_id_quote: quote,
            ...d.fields,
          });
          if (isReject(e)) throw new Error(e.message);
          return { e, d };
        });
        let engine = createEngine({});
        const expectUnion = (T: number) => {
          const records = engine.symbols();
          const known = IDS.filter((id) => events.some((x) => x.e.time <= T && (x.e as SymbolEvent).symbolId === id));
          expect(records.map((r) => r.symbolId)).toEqual(known);
          for (const r of records) {
            const mine = events.filter((x) => x.e.time <= T && (x.e as SymbolEvent).symbolId === r.symbolId);
            for (const f of names) {
              const given = mine.filter((x) => x.d.fields[f] !== undefined);
              const last = given.length === 0 ? undefined : recordValue(f, given[given.length - 1].d.fields[f]);
              // `active` is the latest event's (absent: listed again), every other field the last one given.
              const want = f === 'active' ? mine[mine.length - 1].d.fields.active !== false : last;
              expect(r[FIELDS[f][0]], `${r.symbolId} ${f} at ${T}`).toEqual(want);
            }
          }
        };
        events.forEach(({ e, d }) => {
          // Before it: the tick before its time (the last whole second before it), if one is left.
          const T = (Math.ceil(e.time / US) - 1) * US;
          if (d.check && T >= (engine.lastTickTime ?? -Infinity)) {
            engine.advanceTo(T);
            if (engine.lastTickTime !== undefined) expectUnion(engine.lastTickTime);
          }
          if (d.snapshot) engine = restoreEngine(JSON.parse(JSON.stringify(engine.snapshot())));
          expect(engine.apply(e)).toBeUndefined();
        });
        engine.advanceTo(Math.ceil(time / US) * US);
        expectUnion(engine.lastTickTime!);
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it('symbol events with the version-2 optional fields change no rate', () => {
    const extra = fc.record(
      {
        active: fc.boolean(),
        symbol_id_exchange: fc.constantFrom('x1', 'x2'),
        asset_id_base_exchange: fc.constantFrom('XBT', 'b'),
        asset_id_quote_exchange: fc.constantFrom('ZUSD', 'q'),
        future_delivery_time: fc.constantFrom('2024-03-29T08:00:00Z', '2025-01-01'),
        option_type_is_call: fc.boolean(),
        option_strike_price: fc.constantFrom('60000', '0.5'),
        option_expiration_time: fc.constantFrom('2024-03-29', '2024-06-28T08:00:00Z'),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(logArb({ declare: true, maxSteps: 80 }), fc.array(fc.tuple(fc.nat(), extra), { maxLength: 12 }), (log, adds) => {
        const run = (events: readonly XrateEvent[]) => {
          const { rec, listener } = recorder();
          const e = createEngine(log.config, listener);
          for (const x of events) e.apply(x);
          e.advanceTo(log.end);
          return rec;
        };
        const declared = log.events.slice(0, log.afterDeclarations).filter((e): e is SymbolEvent => e.type === 'symbol');
        const events = [...log.events];
        // Insert each re-declaration (same market fields, plus version-2 ones) just before an event
        // after the declarations, at that event's time: it moves no clock.
        for (const [n, fields] of [...adds].sort((a, b) => b[0] - a[0])) {
          const after = log.events.length - log.afterDeclarations;
          if (declared.length === 0 || after === 0) break;
          const i = log.afterDeclarations + (n % after);
          const d = declared[n % declared.length];
          const p = (s: string) => Date.parse(s) * 1000;
          const e: SymbolEvent = {
            ...d,
            time: events[i].time,
            ...(fields.active === undefined ? {} : { active: fields.active }),
            ...(fields.symbol_id_exchange === undefined ? {} : { symbolIdExchange: fields.symbol_id_exchange }),
            ...(fields.asset_id_base_exchange === undefined ? {} : { assetIdBaseExchange: fields.asset_id_base_exchange }),
            ...(fields.asset_id_quote_exchange === undefined ? {} : { assetIdQuoteExchange: fields.asset_id_quote_exchange }),
            ...(fields.future_delivery_time === undefined ? {} : { futureDeliveryTime: p(fields.future_delivery_time) }),
            ...(fields.option_type_is_call === undefined ? {} : { optionTypeIsCall: fields.option_type_is_call }),
            ...(fields.option_strike_price === undefined
              ? {}
              : { optionStrikePrice: { value: Number(fields.option_strike_price), text: fields.option_strike_price } }),
            ...(fields.option_expiration_time === undefined ? {} : { optionExpirationTime: p(fields.option_expiration_time) }),
          };
          events.splice(i, 0, e);
        }
        expect(run(events)).toEqual(run(log.events));
      }),
      { seed: 42, numRuns: 80 },
    );
  });
});
