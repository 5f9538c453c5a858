/**
 * Metric events (docs/methodology.md section 10) through the engine and into the stores:
 * - inserted anywhere in a log (at the time of the event they precede, so never late and never
 *   making another event late), they change no rate, no bucket and no engine state, and reach
 *   the listener in log order;
 * - the replay database's metrics (io/metricStore.ts) answer every query exactly as the in-memory
 *   metrics of the same events (replay/memoryMetrics.ts), which is how a log is answered, the
 *   columns a long history reads included; the listing is the ids of the points and definitions
 *   (xrate's own only with a point) and each series' first and last point times are its spans.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type EngineListener } from '../../src/core/engine.js';
import { parseDec } from '../../src/core/decimal.js';
import { type MetricEvent, type MetricValue, seriesKey } from '../../src/core/metrics/events.js';
import { byCodeUnit, type MetricFilter, pointColumnsOf } from '../../src/core/metrics/source.js';
import { asOfTick } from '../../src/io/metricStore.js';
import { ReplayStore } from '../../src/io/store.js';
import { MemoryMetrics } from '../../src/replay/memoryMetrics.js';
import { logArb, recorder, TRACKED, type Log } from './arbitraries.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-metrics-prop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function newEngine(log: Log, listener: EngineListener): Engine {
  const e = createEngine(log.config, listener);
  for (const [b, q] of TRACKED) e.track(b, q);
  return e;
}

const metricArb: fc.Arbitrary<DrawnMetric> = fc.record({
  metricId: fc.constantFrom('M1', 'M2', 'XRATE_EXCHANGE_RANK'),
  exchangeId: fc.constantFrom('X', 'Y'),
  symbolId: fc.constantFrom(undefined, 'X_PERP_BTC_USD'),
  assetId: fc.constantFrom(undefined, 'BTC', 'ETH'),
  recvDelay: fc.constantFrom(undefined, 0, 250_000),
  value: fc.oneof(
    fc.integer({ min: -1000, max: 1000 }).map((n) => ({ kind: 'decimal' as const, dec: parseDec(`${n / 100}`)! })),
    fc.constantFrom({ kind: 'text' as const, text: 'open' }, { kind: 'time' as const, us: 1_700_000_000_123_456 }),
  ),
});

/** The drawn fields of a metric event. */
interface DrawnMetric {
  metricId: string;
  exchangeId: string;
  symbolId?: string;
  assetId?: string;
  recvDelay?: number;
  value: MetricValue;
}

/** A metric event at `time` from its drawn fields (absent fields left out). */
function metricAt(m: DrawnMetric, time: number): MetricEvent {
  return {
    type: 'metric',
    time,
    metricId: m.metricId,
    exchangeId: m.exchangeId,
    ...(m.symbolId !== undefined && { symbolId: m.symbolId }),
    ...(m.assetId !== undefined && { assetId: m.assetId }),
    ...(m.recvDelay !== undefined && { recvTime: time + m.recvDelay }),
    value: m.value,
  };
}

const insertsArb = fc.array(fc.record({ pos: fc.nat(), metric: metricArb }), { minLength: 1, maxLength: 25 });

describe('metric events', () => {
  it('change no rate, bucket or engine state, and reach the listener in log order', () => {
    fc.assert(
      fc.property(logArb(), insertsArb, (log, inserts) => {
        const plain = recorder();
        const a = newEngine(log, plain.listener);
        for (const x of log.events) a.apply(x);
        a.advanceTo(log.end);
        a.flush();

        const mixed = recorder();
        const seen: MetricEvent[] = [];
        const b = newEngine(log, { ...mixed.listener, onMetric: (e) => seen.push(e) });
        const n = log.events.length;
        const sent: MetricEvent[] = [];
        for (let i = 0; i < n; i++) {
          for (const ins of inserts) {
            if (ins.pos % n !== i) continue;
            const e = metricAt(ins.metric, log.events[i].time);
            expect(b.apply(e)).toBeUndefined();
            sent.push(e);
          }
          b.apply(log.events[i]);
        }
        b.advanceTo(log.end);
        b.flush();

        expect(seen).toEqual(sent);
        expect(mixed.rec.changes).toEqual(plain.rec.changes);
        expect(mixed.rec.buckets).toEqual(plain.rec.buckets);
        const state = (e: Engine) => {
          const { stats: _stats, ...rest } = e.snapshot() as unknown as { stats: unknown };
          return JSON.stringify(rest);
        };
        expect(state(b)).toBe(state(a));
      }),
      { seed: 42, numRuns: 60 },
    );
  });

  it('a metric event at or before the last computed tick is late', () => {
    const e = createEngine({}, {});
    e.apply(metricAt({ metricId: 'M', exchangeId: 'X', value: { kind: 'text', text: 'a' } }, 10_500_000));
    e.advanceTo(12_000_000);
    const late = e.apply(metricAt({ metricId: 'M', exchangeId: 'X', value: { kind: 'text', text: 'b' } }, 12_000_000));
    expect(late?.reason).toBe('late');
  });

  it('the database answers as the log does (every query, any tick)', () => {
    let run = 0;
    const filterArb: fc.Arbitrary<MetricFilter> = fc.record(
      {
        scope: fc.constantFrom('symbol', 'asset', 'exchange'),
        metric_id: fc.constantFrom('M1', 'M2', 'XRATE_EXCHANGE_RANK'),
        exchange_id: fc.constantFrom('X', 'Y'),
        symbol_id: fc.constantFrom('', 'X_PERP_BTC_USD'),
        asset_id: fc.constantFrom('', 'BTC'),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.array(fc.record({ metric: metricArb, dt: fc.integer({ min: 0, max: 1_500_000 }), def: fc.boolean() }), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.array(
          fc.record({
            filter: filterArb,
            at: fc.option(fc.integer({ min: 0, max: 40_000_000 }), { nil: undefined }),
            span: fc.nat(40_000_000),
          }),
          {
            minLength: 1,
            maxLength: 8,
          },
        ),
        (events, queries) => {
          const mem = new MemoryMetrics([{ metric_id: 'XRATE_EXCHANGE_RANK', description: 'rank' }]);
          const points: MetricEvent[] = [];
          const defined: { id: string; time: number }[] = [];
          const store = ReplayStore.open(join(dir, `m${run++}.sqlite`));
          const w = store.writers();
          let time = 1_000_000;
          let seq = 0;
          store.transaction(() => {
            for (const x of events) {
              time += x.dt;
              const e = metricAt(x.metric, time);
              mem.addPoint(e);
              points.push(e);
              w.point(e, ++seq, 1);
              if (x.def) {
                const d = { type: 'metric_definition' as const, time, metricId: x.metric.metricId, description: `d${seq}` };
                mem.addDefinition(d);
                defined.push({ id: d.metricId, time });
                w.definition(d, ++seq, 1);
              }
            }
          });
          const db = store.metrics([{ metric_id: 'XRATE_EXCHANGE_RANK', description: 'rank' }]);
          const strip = (ps: { seq: number }[]) => ps.map(({ seq: _s, ...p }) => p);
          for (const q of queries) {
            expect(db.listing(q.at)).toEqual(mem.listing(q.at));
            // The listing: the ids of the points and definitions as of the tick, sorted (an own
            // metric only with a point: XRATE_EXCHANGE_RANK is not listed otherwise).
            const tick = asOfTick(q.at);
            const ids = [
              ...points.filter((e) => e.time <= tick).map((e) => e.metricId),
              ...defined.filter((d) => d.time <= tick).map((d) => d.id),
            ];
            expect(db.listing(q.at).map((d) => d.metric_id)).toEqual([...new Set(ids)].sort(byCodeUnit));
            // The spans: the first and last point time of each series as of the tick.
            const spans = db.spans(q.filter, q.at);
            expect(spans).toEqual(mem.spans(q.filter, q.at));
            expect(spans.map(({ first: _f, last: _l, ...key }) => key)).toEqual(db.series(q.filter, q.at));
            for (const sp of spans) {
              const times = points
                .filter(
                  (e) =>
                    e.time <= tick &&
                    JSON.stringify(seriesKey(e)) ===
                      JSON.stringify(
                        seriesKey({
                          metricId: sp.metric_id,
                          exchangeId: sp.exchange_id,
                          symbolId: sp.symbol_id || undefined,
                          assetId: sp.asset_id || undefined,
                        }),
                      ),
                )
                .map((e) => e.time);
              expect([sp.first, sp.last]).toEqual([Math.min(...times), Math.max(...times)]);
            }
            expect(db.series(q.filter, q.at)).toEqual(mem.series(q.filter, q.at));
            expect(strip(db.current(q.filter, q.at))).toEqual(strip(mem.current(q.filter, q.at)));
            const from = q.at ?? 0;
            expect(strip(db.points(q.filter, from, from + q.span))).toEqual(strip(mem.points(q.filter, from, from + q.span)));
            // The columns a long history reads: those of the same points.
            const columns = db.pointColumns(q.filter, from, from + q.span);
            expect(columns).toEqual(mem.pointColumns(q.filter, from, from + q.span));
            expect(columns).toEqual(pointColumnsOf(db.points(q.filter, from, from + q.span)));
          }
          store.close();
        },
      ),
      { seed: 42, numRuns: 150 },
    );
  });
});
