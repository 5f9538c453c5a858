/**
 * A rejected line changes nothing, the clock included (docs/methodology.md section 2): inserting
 * events the engine rejects (a quote or trade for a symbol that cannot be known, an unknown event
 * type, a time that is not an integer) anywhere in a log, stamped at any time (far in the future
 * included), leaves every output unchanged; only the reject counters differ.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, type Engine, type EngineListener } from '../../src/core/engine.js';
import type { XrateEvent } from '../../src/core/types.js';
import { ev, logArb, recorder, t, TRACKED, type Log } from './arbitraries.js';

const YEAR_US = 365 * 86_400 * 1_000_000;

function newEngine(log: Log, listener: EngineListener): Engine {
  const e = createEngine(log.config, listener);
  for (const [b, q] of TRACKED) e.track(b, q);
  return e;
}

/** An event the engine rejects whatever its state, at time `time` (µs). */
function rejected(kind: 'quote' | 'trade' | 'type' | 'time', time: number): XrateEvent {
  if (kind === 'quote') {
    return ev({ type: 'quote', time: t(time), symbol_id: '???', bid_price: '1', bid_size: '1', ask_price: '1.01', ask_size: '1' });
  }
  if (kind === 'trade') return ev({ type: 'trade', time: t(time), symbol_id: 'NO SUCH MARKET', price: '1', size: '1' });
  if (kind === 'type') return { type: 'book_snapshot', time } as unknown as XrateEvent;
  return { ...ev({ type: 'trade', time: t(0), symbol_id: 'NO SUCH MARKET', price: '1', size: '1' }), time: time + 0.5 };
}

describe('rejected lines and the clock', () => {
  it('inserting rejected events anywhere, at any time, changes no output and no accepted result', () => {
    const insertArb = fc.array(
      fc.record({
        pos: fc.nat(),
        kind: fc.constantFrom('quote', 'trade', 'type', 'time'),
        // seconds to a year after the first event, or before it
        offset: fc.oneof(
          fc.integer({ min: -600, max: 600 }).map((s) => s * 1_000_000),
          fc.integer({ min: 1, max: YEAR_US }),
        ),
      }),
      { minLength: 1, maxLength: 5 },
    );
    fc.assert(
      fc.property(logArb(), insertArb, (log, inserts) => {
        const plain = recorder();
        const a = newEngine(log, plain.listener);
        const plainResults = log.events.map((x) => a.apply(x));
        a.advanceTo(log.end);
        a.flush();

        const mixed = recorder();
        const b = newEngine(log, mixed.listener);
        const n = log.events.length;
        const results = [];
        for (let i = 0; i <= n; i++) {
          for (const ins of inserts) {
            if (ins.pos % (n + 1) !== i) continue;
            const r = b.apply(rejected(ins.kind, log.first + ins.offset));
            expect(r).toBeDefined();
          }
          if (i < n) results.push(b.apply(log.events[i]));
        }
        b.advanceTo(log.end);
        b.flush();

        expect(results).toEqual(plainResults);
        expect(mixed.rec.changes).toEqual(plain.rec.changes);
        expect(mixed.rec.buckets).toEqual(plain.rec.buckets);
        expect(b.lastTickTime).toBe(a.lastTickTime);
        expect(b.firstTickTime).toBe(a.firstTickTime);
        const state = (e: Engine) => {
          const { stats: _stats, ...rest } = e.snapshot() as unknown as { stats: unknown };
          return JSON.stringify(rest);
        };
        expect(state(b)).toBe(state(a));
      }),
      { seed: 42, numRuns: 80 },
    );
  });
});
