/**
 * The pair-major layout (docs/performance.md, tick/L) is a copy: whenever it is in use, every slot
 * holds exactly its market's exchange, eligibility, volume and id, and each pair's slots list its
 * markets in the pair's order, through quotes, refreshes, symbol redefinitions and snapshot
 * restores. The committed quotes, which live in the layout while it is valid and in the
 * per-market record otherwise, are always the last accepted quote of each market as of the last
 * tick, with its exact texts (a third of the quotes with texts long enough to be kept).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, type Engine, restoreEngine } from '../../src/core/engine.js';
import type { EngineState } from '../../src/core/engine/state.js';
import {
  FLOAT64_EXACT_CHARS,
  Q_ASK,
  Q_ASK_SIZE,
  Q_BID,
  Q_BID_SIZE,
  Q_TIME,
  S_EXCHANGE,
  S_MARKET,
  S_VOLUME,
  SLOT_STRIDE,
} from '../../src/core/engine/tables/markets.js';
import type { QuoteEvent } from '../../src/core/types.js';
import { logArb } from './arbitraries.js';

const S = 1_000_000;

/** The same decimal with a text longer than FLOAT64_EXACT_CHARS (trailing zeros). */
function padded(d: { value: number; text: string }): { value: number; text: string } {
  return { value: d.value, text: `${d.text}${d.text.includes('.') ? '' : '.'}${'0'.repeat(FLOAT64_EXACT_CHARS)}` };
}

/** Every third quote of a log with long exact texts (same values), so that the engine keeps them. */
function withLongTexts<E extends { type: string }>(events: readonly E[]): E[] {
  let n = 0;
  return events.map((ev) => {
    if (ev.type !== 'quote' || n++ % 3 !== 0) return ev;
    const q = ev as unknown as QuoteEvent;
    return { ...q, bidPrice: padded(q.bidPrice), askSize: padded(q.askSize) } as unknown as E;
  });
}

/** The engine's state (a private field: this test checks an internal invariant). */
function stateOf(e: Engine): EngineState {
  return (e as unknown as { state: EngineState }).state;
}

/** Checks the layout against the columns; returns the number of slots checked. */
function checkLayout(e: Engine): number {
  const s = stateOf(e);
  const M = s.markets;
  if (!M.layoutValid) return 0;
  const lists = s.pairs.markets;
  // The market's record keeps its slot and pair for the staging of quotes.
  const rec = (M as unknown as { rec: Int32Array }).rec;
  let slots = 0;
  for (let pr = 0; pr + 1 < M.pStart.length; pr++) {
    const from = M.pStart[pr];
    expect(M.pStart[pr + 1] - from).toBe(lists[pr].length);
    lists[pr].forEach((m, i) => {
      const sl = from + i;
      expect(M.pMarket[sl]).toBe(m);
      expect(M.slotOf[m]).toBe(sl);
      expect(M.pExchange[sl]).toBe(M.exchange[m]);
      const o = SLOT_STRIDE * sl;
      expect(M.pq[o + S_EXCHANGE]).toBe(M.eligible[m] ? M.exchange[m] : -1);
      expect(M.pq[o + S_VOLUME]).toBe(M.volume[m]);
      expect(M.pq[o + S_MARKET]).toBe(m);
      expect([rec[4 * m + 1], rec[4 * m + 2]]).toEqual([sl, pr]);
      slots++;
    });
  }
  return slots;
}

/** Checks every market's committed quote against `committed` (by symbol id); returns the number checked. */
function checkQuotes(e: Engine, committed: Map<string, QuoteEvent>): number {
  const M = stateOf(e).markets;
  const names = M.index.names;
  for (let m = 0; m < names.length; m++) {
    const q = committed.get(names[m]);
    if (q === undefined) {
      expect(M.quoteTime(m)).toBeNaN();
      continue;
    }
    const values = [q.bidPrice.value, q.askPrice.value, q.bidSize.value, q.askSize.value];
    expect([Q_BID, Q_ASK, Q_BID_SIZE, Q_ASK_SIZE, Q_TIME].map((k) => M.quoteAt(m, k))).toEqual([...values, q.time]);
    const texts = [q.bidPrice.text, q.askPrice.text, q.bidSize.text, q.askSize.text];
    expect(M.exactTexts(m)).toEqual(texts.some((t) => t.length > FLOAT64_EXACT_CHARS) ? texts : values.map(String));
  }
  return names.length;
}

describe('pair-major layout', () => {
  it('always equals the market columns, and the committed quotes are the last accepted ones', () => {
    let checked = 0;
    let quotes = 0;
    fc.assert(
      fc.property(logArb(), fc.nat(), (log, cut) => {
        let engine = createEngine(log.config);
        const events = withLongTexts(log.events);
        const at = events.length > 0 ? cut % events.length : 0;
        // The model: each symbol's last accepted quote, committed and staged.
        const committed = new Map<string, QuoteEvent>();
        let staged = new Map<string, QuoteEvent>();
        const commit = (): void => {
          for (const [id, q] of staged) committed.set(id, q);
          staged = new Map();
        };
        events.forEach((ev, i) => {
          if (i === at) engine = restoreEngine(JSON.parse(JSON.stringify(engine.snapshot())));
          const s = stateOf(engine);
          const lastTick = s.lastTick;
          const seen = s.stats.events.quote;
          const discarded = s.stats.quotesDiscarded;
          engine.apply(ev);
          if (stateOf(engine).lastTick !== lastTick) commit();
          if (ev.type === 'quote' && s.stats.events.quote > seen && s.stats.quotesDiscarded === discarded) staged.set(ev.symbolId, ev);
          checked += checkLayout(engine);
          quotes += checkQuotes(engine, committed);
        });
        engine.advanceTo(log.end + 3 * S);
        commit();
        checked += checkLayout(engine);
        quotes += checkQuotes(engine, committed);
      }),
      { seed: 20261123, numRuns: 80 },
    );
    expect(checked).toBeGreaterThan(1000);
    expect(quotes).toBeGreaterThan(1000);
  });
});
