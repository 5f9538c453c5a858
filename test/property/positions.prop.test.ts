/**
 * Positions (docs/methodology.md section 11), invariants over random event sequences:
 * - the book is "the last snapshot per (account, symbol_id_exchange), quantity 0 removed", and
 *   each exchange's reachability is its last connectivity event's;
 * - inserted anywhere in a generated log, position and connectivity events change no rate and no
 *   bucket, and the engine's book is that model;
 * - snapshot at any point, restore, continue: the same book and the same valued positions as the
 *   uninterrupted run;
 * - the replay database's rows rebuild, as of any tick, the book of the events up to it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine, type EngineListener, restoreEngine } from '../../src/core/engine.js';
import { parseDec } from '../../src/core/decimal.js';
import { type AccountPositions, PositionBook } from '../../src/core/positions/book.js';
import type { ConnectivityEvent, PositionEvent } from '../../src/core/positions/events.js';
import { ReplayStore } from '../../src/io/store.js';
import { logArb, recorder, TRACKED, US, type Log } from './arbitraries.js';

const dir = mkdtempSync(join(tmpdir(), 'xrate-positions-prop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Drawn =
  | { kind: 'position'; account: string; sym: string; symbolId?: string; qty: string; price: string; side: 'BUY' | 'SELL' }
  | { kind: 'connectivity'; exchange: string; reachable: boolean };

const drawnArb: fc.Arbitrary<Drawn> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('position' as const),
      account: fc.constantFrom('EXA', 'EXA~hedge', 'EXA/2574', 'EXB', 'EXB-x'),
      sym: fc.constantFrom('BTCUSD', 'ETHBTC', 'BTCEUR'),
      symbolId: fc.constantFrom(undefined, 'EXA_SPOT_BTC_USD', 'EXA_SPOT_ETH_BTC', 'EXB_SPOT_BTC_EUR', 'EXC_PERP_ETH_USD', 'NOPATTERN'),
      qty: fc.constantFrom('0', '0.000', '1', '0.5', '2.25', '-0'),
      price: fc.constantFrom('100', '62000.5', '0.07', '0'),
      side: fc.constantFrom('BUY' as const, 'SELL' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('connectivity' as const), exchange: fc.constantFrom('EXA', 'EXB'), reachable: fc.boolean() }),
  },
);

function eventAt(d: Drawn, time: number): PositionEvent | ConnectivityEvent {
  if (d.kind === 'connectivity') return { type: 'connectivity', time, exchangeId: d.exchange, reachable: d.reachable };
  return {
    type: 'position',
    time,
    account: d.account,
    symbolIdExchange: d.sym,
    ...(d.symbolId !== undefined && { symbolId: d.symbolId }),
    avgEntryPrice: parseDec(d.price)!,
    quantity: parseDec(d.qty)!,
    side: d.side,
  };
}

/** The model: last snapshot per key with a non-zero quantity, sorted; reachability per exchange. */
function model(events: readonly (PositionEvent | ConnectivityEvent)[]): { open: [string, string, string][]; down: string[] } {
  const last = new Map<string, PositionEvent>();
  const reach = new Map<string, boolean>();
  for (const e of events) {
    if (e.type === 'connectivity') reach.set(e.exchangeId, e.reachable);
    else last.set(JSON.stringify([e.account, e.symbolIdExchange]), e);
  }
  const open = [...last.values()]
    .filter((e) => Number(e.quantity.text) !== 0)
    .map((e) => [e.account, e.symbolIdExchange, canon(e)] as [string, string, string])
    .sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1));
  const down = [...reach]
    .filter(([, r]) => !r)
    .map(([x]) => x)
    .sort();
  return { open, down };
}

/** An event as text with its keys sorted (restored and stored events build their keys in another order). */
function canon(e: PositionEvent): string {
  const rec = e as unknown as Record<string, unknown>;
  return JSON.stringify(
    Object.keys(rec)
      .sort()
      .map((k) => [k, rec[k]]),
  );
}

function flat(accounts: readonly AccountPositions[]): [string, string, string][] {
  return accounts.flatMap((a) => a.positions.map((p) => [a.account, p.event.symbolIdExchange, canon(p.event)] as [string, string, string]));
}

const insertsArb = fc.array(fc.record({ pos: fc.nat(), drawn: drawnArb }), { minLength: 1, maxLength: 30 });

/** The log with the drawn events inserted before the events at their positions (at those events' times). */
function mixed(log: Log, inserts: { pos: number; drawn: Drawn }[]) {
  const n = log.events.length;
  const all: (Log['events'][number] | PositionEvent | ConnectivityEvent)[] = [];
  const added: (PositionEvent | ConnectivityEvent)[] = [];
  for (let i = 0; i < n; i++) {
    for (const ins of inserts) {
      if (ins.pos % n !== i) continue;
      const e = eventAt(ins.drawn, log.events[i].time);
      all.push(e);
      added.push(e);
    }
    all.push(log.events[i]);
  }
  return { all, added };
}

function newEngine(log: Log, listener: EngineListener = {}): Engine {
  const e = createEngine(log.config, listener);
  for (const [b, q] of TRACKED) e.track(b, q);
  return e;
}

describe('the position book', () => {
  it('is the last snapshot per account and symbol, quantity 0 removed; reachability from the last connectivity event', () => {
    fc.assert(
      fc.property(fc.array(drawnArb, { maxLength: 60 }), (drawn) => {
        const events = drawn.map((d, i) => eventAt(d, i * US));
        const book = new PositionBook();
        for (const e of events) e.type === 'position' ? book.apply(e) : book.applyConnectivity(e);
        const m = model(events);
        expect(flat(book.open())).toEqual(m.open);
        expect(book.unreachable()).toEqual(m.down);
        // Filtering by a bare exchange keeps exactly its accounts.
        expect(flat(book.open('EXA'))).toEqual(m.open.filter(([a]) => a === 'EXA' || /^EXA[~/]/.test(a)));
        const copy = new PositionBook();
        copy.restore(JSON.parse(JSON.stringify(book.toJSON())));
        expect(flat(copy.open())).toEqual(m.open);
        expect(copy.unreachable()).toEqual(m.down);
      }),
      { seed: 7, numRuns: 300 },
    );
  });
});

describe('positions in generated logs', () => {
  it('change no rate or bucket, and the engine book is the model; snapshot, restore, continue = uninterrupted', () => {
    fc.assert(
      fc.property(logArb(), insertsArb, fc.nat(), (log, inserts, cutAt) => {
        const plain = recorder();
        const a = newEngine(log, plain.listener);
        for (const x of log.events) a.apply(x);
        a.advanceTo(log.end);
        a.flush();

        const { all, added } = mixed(log, inserts);
        const withPos = recorder();
        const b = newEngine(log, withPos.listener);
        const cut = cutAt % all.length;
        let restored: Engine | undefined;
        for (let i = 0; i < all.length; i++) {
          if (i === cut) restored = restoreEngine(JSON.parse(JSON.stringify(b.snapshot())));
          const r = b.apply(all[i]);
          const r2 = restored?.apply(all[i]);
          expect(r2).toEqual(restored ? r : undefined);
          // Inserted at the time of an accepted event of the log: never late.
          if (all[i].type === 'position' || all[i].type === 'connectivity') expect(r).toBeUndefined();
        }
        b.advanceTo(log.end);
        b.flush();
        restored?.advanceTo(log.end);

        expect(withPos.rec.changes).toEqual(plain.rec.changes);
        expect(withPos.rec.buckets).toEqual(plain.rec.buckets);
        const m = model(added);
        expect(flat(b.positions())).toEqual(m.open);
        expect(b.unreachableExchanges()).toEqual(m.down);
        expect(b.getStats().events.position ?? 0).toBe(added.filter((e) => e.type === 'position').length);
        if (restored) {
          expect(restored.positions()).toEqual(b.positions());
          expect(restored.valuedPositions()).toEqual(b.valuedPositions());
          expect(restored.unreachableExchanges()).toEqual(b.unreachableExchanges());
          expect(restored.rates('BTC')).toEqual(b.rates('BTC'));
        }
      }),
      { seed: 11, numRuns: 50 },
    );
  });

  it('the replay database rebuilds, as of any tick, the book of the events up to it', () => {
    let run = 0;
    fc.assert(
      fc.property(logArb({ maxSteps: 40 }), insertsArb, fc.array(fc.nat(), { minLength: 1, maxLength: 5 }), (log, inserts, picks) => {
        const store = ReplayStore.open(join(dir, `db${run++}.sqlite`));
        try {
          const w = store.writers();
          let seq = 0;
          const e = newEngine(log, {
            onPosition: (p, assets) => w.position(p, assets, ++seq, 1),
            onConnectivity: (c) => w.connectivity(c, ++seq, 1),
          });
          const { all, added } = mixed(log, inserts);
          store.begin();
          for (const x of all) e.apply(x);
          store.commit();
          const stored = store.positions();
          expect(stored.count()).toBe(added.length);
          expect(stored.bookAt().open()).toEqual(e.positions());
          expect(stored.bookAt().unreachable()).toEqual(e.unreachableExchanges());
          for (const p of picks) {
            const T = added[p % added.length].time + (p % 3) - 1;
            const upTo = added.filter((x) => x.time <= T);
            const m = model(upTo);
            const book = stored.bookAt(T);
            expect(flat(book.open())).toEqual(m.open);
            expect(book.unreachable()).toEqual(m.down);
          }
        } finally {
          store.close();
        }
      }),
      { seed: 13, numRuns: 25 },
    );
  });
});
