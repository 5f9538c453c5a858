/**
 * Event-driven ticks (docs/methodology.md section 2): the engine skips the ticks at which nothing
 * can change, and that must be invisible. On random logs stretched by random gaps (minutes to
 * days, across refreshes and past the volume window), an engine that computes every second in
 * full and the default one give the same rate changes, the same OHLC buckets, the same rejects,
 * the same counters and the same snapshot, also when the replay is stopped and resumed from a
 * snapshot, when every direct pair is auto-tracked, when the listener wants every tick and when it
 * takes xrate's own metrics (the same data points at the same ticks).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, type Engine, type EngineListener, restoreEngine } from '../../src/core/engine.js';
import type { XrateEvent } from '../../src/core/types.js';
import { ev, logArb, recorder, t, TRACKED, type Log, type Recording } from './arbitraries.js';

const S = 1_000_000;
const H = 3600 * S;

/**
 * The clock's configuration: the default (refresh every 4 h, 24 h volume window, staleness 301 s,
 * expiry 24 h) or a short one that reaches every deadline, and an empty volume window, within
 * minutes (so that the per-second reference stays fast).
 */
const SHORT = { staleAfterSeconds: 7, volumeWindowSeconds: 40, refreshEverySeconds: 10, maxRateAgeSeconds: 30 };

/** Gaps to insert: before event `at` (mod length), all later events move by `us`. */
function gapsArb(short: boolean): fc.Arbitrary<{ at: number; us: number }[]> {
  const us = short
    ? fc.oneof(
        fc.integer({ min: 1, max: 120 }).map((s) => s * S),
        fc.integer({ min: 1, max: 3600 * S }),
      )
    : fc.oneof(
        { arbitrary: fc.integer({ min: 1, max: 900 }).map((s) => s * S), weight: 4 },
        { arbitrary: fc.integer({ min: 1, max: 3 }).map((h) => h * H + 1), weight: 1 },
        { arbitrary: fc.integer({ min: 1, max: 4 * H }), weight: 1 },
      );
  return fc.array(fc.record({ at: fc.nat(), us }), { maxLength: 4 });
}

/** The log with the gaps inserted (times stay in log order). */
function stretch(log: Log, gaps: { at: number; us: number }[]): { events: XrateEvent[]; end: number } {
  const n = log.events.length;
  const shift = new Array<number>(n + 1).fill(0);
  for (const g of gaps) shift[g.at % (n + 1)] += g.us;
  let add = 0;
  const events = log.events.map((e, i) => {
    add += shift[i];
    return { ...e, time: e.time + add } as XrateEvent;
  });
  return { events, end: log.end + add + shift[n] };
}

interface Mode {
  everySecond: boolean;
  autoTrack: boolean;
  wantTicks: boolean;
  /** Whether the listener takes xrate's own metrics (the engine computes them only then). */
  own: boolean;
}

interface Outcome {
  rec: Recording;
  ticks: number[];
  own: unknown[];
  results: unknown[];
  stats: unknown;
  snapshot: string;
  explain: unknown;
}

function engineFor(log: Log, listener: EngineListener, mode: Mode): Engine {
  const e = createEngine(log.config, listener);
  e.setTickEverySecond(mode.everySecond);
  if (mode.autoTrack) e.trackDirectPairs();
  for (const [b, q] of TRACKED) e.track(b, q);
  return e;
}

/** Replays `events`, stopping and resuming from a snapshot after event `stopAt` when given. */
function run(log: Log, events: XrateEvent[], end: number, mode: Mode, stopAt: number | undefined): Outcome {
  const { rec, listener } = recorder();
  const ticks: number[] = [];
  if (mode.wantTicks) listener.onTick = (T) => void ticks.push(T);
  const own: unknown[] = [];
  if (mode.own) listener.onOwnMetrics = (b) => void own.push(...b.events());
  let engine = engineFor(log, listener, mode);
  const results: unknown[] = [];
  events.forEach((e, i) => {
    results.push(engine.apply(e));
    if (i === stopAt) {
      engine = restoreEngine(JSON.parse(JSON.stringify(engine.snapshot())), listener);
      engine.setTickEverySecond(mode.everySecond);
    }
  });
  engine.advanceTo(end);
  const snapshot = JSON.stringify(engine.snapshot());
  const explain = TRACKED.map(([b, q]) => engine.explain(b, q));
  engine.flush();
  return { rec, ticks, own, results, stats: engine.getStats(), snapshot, explain };
}

describe('event-driven ticks', () => {
  it('skipping the ticks at which nothing can change gives every output of computing each second', () => {
    let ownPoints = 0;
    fc.assert(
      fc.property(
        logArb().chain((log) =>
          fc
            .boolean()
            .chain((short) =>
              fc.tuple(
                fc.constant(short ? { ...log, config: { ...log.config, ...SHORT } } : log),
                gapsArb(short),
                fc.integer({ min: 0, max: short ? 600 : 6 * 3600 }),
              ),
            ),
        ),
        fc.record({ autoTrack: fc.boolean(), wantTicks: fc.boolean(), own: fc.boolean(), stop: fc.option(fc.nat(), { nil: undefined }) }),
        ([log, gaps, tail], o) => {
          const { events, end } = stretch(log, gaps);
          const stopAt = o.stop === undefined ? undefined : o.stop % events.length;
          const last = end + tail * S; // sometimes hours past the last event
          const mode = { autoTrack: o.autoTrack, wantTicks: o.wantTicks, own: o.own };
          const full = run(log, events, last, { ...mode, everySecond: true }, stopAt);
          const fast = run(log, events, last, { ...mode, everySecond: false }, stopAt);
          expect(fast.results).toEqual(full.results);
          expect(fast.rec.changes).toEqual(full.rec.changes);
          expect(fast.rec.buckets).toEqual(full.rec.buckets);
          expect(fast.ticks).toEqual(full.ticks);
          expect(fast.own).toEqual(full.own);
          ownPoints += full.own.length;
          expect(fast.stats).toEqual(full.stats);
          expect(fast.explain).toEqual(full.explain);
          expect(fast.snapshot).toBe(full.snapshot);
        },
      ),
      { seed: 20261123, numRuns: 120 },
    );
    expect(ownPoints).toBeGreaterThan(100);
  });

  it('a long gap costs its deadlines, not its seconds', () => {
    // A year without events after a trade and a quote: per second that is 31.5 M ticks. The
    // engine counts them all but computes only the staleness and expiry deadlines and the
    // refreshes until the volume window is empty (24 h: seven of them), and none after that.
    const e = createEngine({}, recorder().listener);
    e.track('BTC', 'USD');
    const t0 = Date.parse('2024-01-01T00:00:00Z') * 1000;
    const quote = (time: number, bid: string): XrateEvent =>
      ev({
        type: 'quote',
        time: t(time),
        symbol_id: 'EXA_SPOT_BTC_USD',
        bid_price: bid,
        bid_size: '1',
        ask_price: `${bid}.5`,
        ask_size: '1',
      });
    e.apply(ev({ type: 'trade', time: t(t0), symbol_id: 'EXA_SPOT_BTC_USD', price: '100', size: '1' }));
    e.apply(quote(t0 + S, '100'));
    const year = 365 * 24 * H;
    const [ticks, computed] = [e.getStats().ticks, e.computedTicks];
    expect(e.apply(quote(t0 + year, '101'))).toBeUndefined();
    expect(e.getStats().ticks - ticks).toBe(year / S - 1); // every second of the gap counts as a tick
    expect(e.lastTickTime).toBe(t0 + year - S);
    expect(e.computedTicks - computed).toBeLessThan(20);
    expect(e.rate('BTC', 'USD')).toBeUndefined(); // expired after 24 h (rule 13)
  });
});
