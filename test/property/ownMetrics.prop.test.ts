/**
 * xrate's own metrics (docs/methodology.md section 9) against independent readings of the engine:
 * after a random log, the latest XRATE_MARKET_WEIGHT_SHARE of every market of a direct pair is the
 * weight share `explainPair` gives it (0 when it is left out; a market that is not SPOT has none), XRATE_EXCHANGE_MARKETS_USED counts
 * the markets `explainPair` lists as used, XRATE_EXCHANGE_RANK is the rank explain reads, a point
 * is written only when its series' value changes, XRATE_ASSET_USD_RATE is `rate(asset, 'USD')` when
 * fresh, and taking the metrics changes no rate.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, type Engine, type OwnMetricBatch, restoreEngine } from '../../src/core/engine.js';
import { spreadOf } from '../../src/core/quoteFilter.js';
import type { MetricEvent } from '../../src/core/metrics/events.js';
import { logArb, recorder, TRACKED, type Log } from './arbitraries.js';

function replayLog(log: Log, withOwn: boolean): { engine: Engine; own: MetricEvent[]; changes: unknown[] } {
  const { rec, listener } = recorder();
  const own: MetricEvent[] = [];
  if (withOwn) listener.onOwnMetrics = (b) => void own.push(...b.events());
  const engine = createEngine(log.config, listener);
  for (const [b, q] of TRACKED) engine.track(b, q);
  for (const e of log.events) engine.apply(e);
  engine.advanceTo(log.end);
  return { engine, own, changes: rec.changes };
}

/** The latest value of every series, by "metric|exchange|symbol or asset". */
function latest(points: MetricEvent[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const p of points) {
    if (p.value.kind !== 'decimal') throw new Error('own metrics are decimals');
    m.set(`${p.metricId}|${p.exchangeId}|${p.symbolId ?? p.assetId ?? ''}`, p.value.dec.value);
  }
  return m;
}

describe("xrate's own metrics", () => {
  it('agree with explain and the exchange table, change nothing else, and are written only on change', () => {
    let checked = 0;
    let usdChecked = 0;
    fc.assert(
      fc.property(logArb(), (log) => {
        const plain = replayLog(log, false);
        const { engine, own, changes } = replayLog(log, true);
        expect(changes).toEqual(plain.changes);

        // Written only on change: two consecutive points of a series never carry the same value.
        const last = new Map<string, number>();
        for (const p of own) {
          const k = `${p.metricId}|${p.exchangeId}|${p.symbolId ?? p.assetId ?? ''}`;
          const v = p.value.kind === 'decimal' ? p.value.dec.value : Number.NaN;
          expect(Object.is(last.get(k), v), k).toBe(false);
          last.set(k, v);
          expect(p.time % 1_000_000).toBe(0); // at a tick
        }

        const now = latest(own);
        const usedBy = new Map<string, number>();
        const ranks = new Map<string, number>();
        for (const pr of engine.pairs()) {
          const x = engine.explainPair(pr.base, pr.quote);
          if (x === undefined) continue;
          for (const u of x.used) {
            expect(now.get(`XRATE_MARKET_WEIGHT_SHARE|${u.exchange_id}|${u.symbol_id}`), u.symbol_id).toBe(u.weight_share);
            usedBy.set(u.exchange_id, (usedBy.get(u.exchange_id) ?? 0) + 1);
            ranks.set(u.exchange_id, u.rank);
            checked++;
          }
          for (const e of x.excluded) {
            // A market of another type (rule 3) is in no pair: it has no share at all.
            if (e.reason === 'not_spot') continue;
            expect(now.get(`XRATE_MARKET_WEIGHT_SHARE|${e.exchange_id}|${e.symbol_id}`), e.symbol_id).toBe(0);
            ranks.set(e.exchange_id, e.rank);
          }
        }
        // rate(asset, USD) as the engine answers it, whenever it is fresh; USD itself has no series.
        for (const a of engine.assetIds()) {
          const r = engine.rate(a, 'USD');
          if (a === 'USD') expect(now.has(`XRATE_ASSET_USD_RATE|XRATE|${a}`)).toBe(false);
          else if (r?.fresh) {
            expect(now.get(`XRATE_ASSET_USD_RATE|XRATE|${a}`), a).toBe(r.rate);
            usdChecked++;
          }
        }
        for (const [x, n] of usedBy) expect(now.get(`XRATE_EXCHANGE_MARKETS_USED|${x}|`), x).toBe(n);
        for (const [x, r] of ranks) expect(now.get(`XRATE_EXCHANGE_RANK|${x}|`), x).toBe(r);
        // The spread of each market's last quote, kept or discarded by rule 5.
        const lastQuote = new Map<string, { bid: number; ask: number; exchange: string }>();
        const lastTick = engine.lastTickTime ?? Number.NEGATIVE_INFINITY;
        for (const e of log.events) {
          // A quote read after the last computed tick is written at the next one.
          if (e.type !== 'quote' || e.time > lastTick) continue;
          const m = log.markets.find((k) => k.id === e.symbolId);
          if (m) lastQuote.set(e.symbolId, { bid: e.bidPrice.value, ask: e.askPrice.value, exchange: m.exchange });
        }
        for (const [id, q] of lastQuote) {
          expect(now.get(`XRATE_MARKET_SPREAD|${q.exchange}|${id}`), id).toBe(spreadOf(q.bid, q.ask));
          checked++;
        }
      }),
      { seed: 42, numRuns: 100 },
    );
    expect(checked).toBeGreaterThan(100);
    expect(usdChecked).toBeGreaterThan(50);
  });

  it('after emitAllAtNextTick the next computed tick writes every series that has a value', () => {
    let forcedTicks = 0;
    fc.assert(
      fc.property(logArb(), fc.nat(), (log, at) => {
        const key = (p: MetricEvent): string => `${p.metricId}|${p.exchangeId}|${p.symbolId ?? p.assetId ?? ''}`;
        const before = new Set<string>();
        let forced: Set<string> | undefined;
        let usdFresh: string[] = [];
        let asked = false;
        let engine: Engine | undefined;
        const listener = {
          onOwnMetrics: (b: OwnMetricBatch) => {
            const points = b.events();
            if (asked && forced === undefined) {
              forced = new Set(points.map(key));
              // The rates to USD fresh at this tick (the engine's state is that of the tick).
              usdFresh = engine!.assetIds().filter((a) => a !== 'USD' && engine!.rate(a, 'USD')?.fresh === true);
            } else if (!asked) for (const p of points) before.add(key(p));
          },
        };
        engine = createEngine(log.config, listener);
        for (const [b, q] of TRACKED) engine.track(b, q);
        const stop = at % log.events.length;
        log.events.forEach((e, i) => {
          engine!.apply(e);
          if (i === stop) {
            engine!.emitAllAtNextTick();
            asked = true;
          }
        });
        engine.advanceTo(log.end);
        if (forced === undefined) return;
        forcedTicks++;
        // Every series written before has a value still (a rate to USD only while fresh).
        for (const k of before) if (!k.startsWith('XRATE_ASSET_USD_RATE|')) expect(forced.has(k), k).toBe(true);
        for (const a of usdFresh) expect(forced.has(`XRATE_ASSET_USD_RATE|XRATE|${a}`), a).toBe(true);
      }),
      { seed: 11, numRuns: 100 },
    );
    expect(forcedTicks).toBeGreaterThan(50);
  });

  it('a replay stopped and resumed from a snapshot writes the points an uninterrupted one writes', () => {
    fc.assert(
      fc.property(logArb(), fc.nat(), (log, at) => {
        const whole = replayLog(log, true).own;
        const own: MetricEvent[] = [];
        const listener = { onOwnMetrics: (b: OwnMetricBatch) => void own.push(...b.events()) };
        let engine = createEngine(log.config, listener);
        const stop = at % log.events.length;
        log.events.forEach((e, i) => {
          engine.apply(e);
          if (i === stop) engine = restoreEngine(JSON.parse(JSON.stringify(engine.snapshot())), listener);
        });
        engine.advanceTo(log.end);
        expect(own).toEqual(whole);
      }),
      { seed: 7, numRuns: 100 },
    );
  });
});
