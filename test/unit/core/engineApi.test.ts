/**
 * The engine end to end on small hand-computed logs: rejects (docs/methodology.md section 1),
 * maxRateAge, the listener, OHLC tracking, snapshots and the rest of the API. The rules are in
 * engine.test.ts.
 *
 * Unless said otherwise: the first event is at 00:00:00.1 on 2024-01-01, so T0 = 00:00:01 (the
 * first eligibility refresh), and every market trades at 00:00:00.5 so that it is eligible at T0.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, restoreEngine, type EngineSnapshot } from '../../../src/core/engine.js';
import { parseEvent } from '../../../src/core/events.js';
import { formatTime } from '../../../src/core/time.js';
import type { XrateEvent } from '../../../src/core/types.js';
import { events, Scenario, US, us } from '../../helpers/scenario.js';

const excludedReasons = (s: Scenario, b: string, q: string) =>
  Object.fromEntries(s.engine.explainPair(b, q)!.excluded.map((m) => [m.symbol_id, m.reason]));

describe('section 1: rejects', () => {
  const rows = `
    x 00:00:00.1 A true 0
    t 00:00:00.5 A_SPOT_BTC_USD 100 1
    q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1`;

  it('late events (time <= last tick) are rejected and change nothing', () => {
    const s = new Scenario().feed(rows).to('00:00:05');
    const before = JSON.stringify(s.engine.snapshot());
    for (const t of ['00:00:05', '00:00:04.9', '00:00:00.1']) {
      const r = s.engine.apply(
        parseEvent({
          type: 'quote',
          time: `2024-01-01T${t}Z`,
          symbol_id: 'A_SPOT_BTC_USD',
          bid_price: 199,
          bid_size: 1,
          ask_price: 201,
          ask_size: 1,
        }) as XrateEvent,
      );
      expect(r).toMatchObject({ kind: 'reject', reason: 'late', field: 'time' });
    }
    const late = s.engine.apply(events('x 00:00:03 A false 0')[0]);
    expect(late?.reason).toBe('late');
    const after = JSON.parse(JSON.stringify(s.engine.snapshot())) as EngineSnapshot;
    expect(after.stats.rejects).toEqual({ late: 4 });
    after.stats.rejects = {};
    expect(JSON.stringify(after)).toBe(before);
    s.to('00:00:06');
    expect(s.rate('BTC', 'USD')).toBe(100);
    // 1 µs after the last tick is on time
    expect(s.engine.apply(events('q 00:00:06.000001 A_SPOT_BTC_USD 199 1 201 1')[0])).toBeUndefined();
    s.to('00:00:07');
    expect(s.rate('BTC', 'USD')).toBe(200);
  });

  it('an unknown symbol that cannot be parsed is rejected; a parsed non-SPOT one is never used', () => {
    const s = new Scenario()
      .feed(rows)
      .feed(`
        q 00:00:00.6 NOSUCHSYMBOL 1 1 2 1
        t 00:00:00.6 BTCUSD 1 1
        t 00:00:00.6 A_PERP_BTC_USD 500 10
        q 00:00:00.6 A_PERP_BTC_USD 499 1 501 1
        s 00:00:00.6 B_FUT B FUTURES BTC USD
        t 00:00:00.6 B_FUT 300 10
        q 00:00:00.6 B_FUT 299 1 301 1`)
      .to('00:00:01');
    expect(s.rejects.map((r) => r.reason)).toEqual(['unknown_symbol', 'unknown_symbol']);
    expect(s.rejects[0].message).toBe('quote for unknown symbol "NOSUCHSYMBOL" (no symbol event, and the id matches no known pattern)');
    expect(s.engine.getStats().rejects).toEqual({ unknown_symbol: 2 });
    expect(s.rate('BTC', 'USD')).toBe(100);
    const ex = s.engine.explainPair('BTC', 'USD')!;
    expect(ex.excluded.map((m) => [m.symbol_id, m.reason, m.detail])).toEqual([
      ['A_PERP_BTC_USD', 'not_spot', 'symbol type PERPETUAL'],
      ['B_FUT', 'not_spot', 'symbol type FUTURES'],
    ]);
    expect(s.engine.listedPairs()).toEqual(['BTC/USD']);
    expect(s.engine.getStats().events).toEqual({ exchange: 1, symbol: 1, quote: 3, trade: 3, metric: 0, metricDefinition: 0 });
  });

  it('rejects events with a non-integer time or an unknown type', () => {
    const e = createEngine();
    expect(
      e.apply({ type: 'trade', time: 1.5, symbolId: 'A_SPOT_BTC_USD', price: { value: 1, text: '1' }, size: { value: 1, text: '1' } })
        ?.reason,
    ).toBe('bad_time');
    expect(e.apply({ type: 'nope', time: 1_000_000 } as unknown as XrateEvent)?.reason).toBe('unknown_type');
    expect(e.getStats().rejects).toEqual({ bad_time: 1, unknown_type: 1 });
    // A rejected event changes nothing, the clock included: no T0 yet.
    expect(e.firstTickTime).toBeUndefined();
    expect(e.apply({ type: 'nope', time: 9_000_000 } as unknown as XrateEvent)?.reason).toBe('unknown_type');
    expect(e.lastTickTime).toBeUndefined();
  });
});

describe('rule 13: maxRateAge', () => {
  it('keeps the last rate (fresh false) until older than maxRateAge, then drops it', () => {
    const s = new Scenario({ staleAfterSeconds: 5, maxRateAgeSeconds: 10 }).feed(`
      x 00:00:00.1 A true 0
      t 00:00:00.5 A_SPOT_BTC_USD 100 1
      t 00:00:00.5 A_SPOT_ETH_BTC 0.05 1
      q 00:00:01 A_SPOT_BTC_USD 99 1 101 1
      q 00:00:01 A_SPOT_ETH_BTC 0.05 1 0.05 1`);
    s.to('00:00:06'); // age 5 s: fresh
    expect(s.engine.rate('BTC', 'USD')).toMatchObject({ rate: 100, fresh: true });
    s.to('00:00:07'); // age 6 s > 5 s: stale, rate carried
    expect(s.engine.rate('BTC', 'USD')).toMatchObject({ rate: 100, fresh: false, time: us('00:00:01') });
    s.feed('q 00:00:08 A_SPOT_ETH_BTC 0.05 1 0.05 1'); // keeps ETH/BTC fresh
    expect(s.engine.explainPair('BTC', 'USD')).toMatchObject({ rate: 100, fresh: false, rank: 0, time: '2024-01-01T00:00:01.0000000Z' });
    s.to('00:00:11'); // 11 - 1 = 10 s: not older than 10 s
    expect(s.engine.rate('BTC', 'USD')).toMatchObject({ rate: 100, fresh: false });
    // a cross rate through the carried leg: 0.05 * 100 = 5, not fresh, time of the older leg
    expect(s.engine.rate('ETH', 'USD')).toMatchObject({ rate: 5, fresh: false, time: us('00:00:01'), path: ['ETH', 'BTC', 'USD'] });
    s.to('00:00:12'); // 11 s > 10 s: gone
    expect(s.engine.rate('BTC', 'USD')).toBeUndefined();
    expect(s.engine.rate('ETH', 'USD')).toBeUndefined();
    expect(s.engine.explain('BTC', 'USD').kind).toBe('none');
    expect(s.engine.explainPair('BTC', 'USD')).toMatchObject({ rate: null, time: null, rank: null, fresh: false });
    expect(s.engine.pairs().map((p) => `${p.base}/${p.quote}`)).toEqual(['ETH/BTC']);
    expect(s.changes.filter((c) => c.base === 'BTC').map((c) => [formatTime(c.tick), c.rate, c.fresh])).toEqual([
      ['2024-01-01T00:00:01.0000000Z', 100, true],
      ['2024-01-01T00:00:07.0000000Z', 100, false], // went stale: same rate, fresh false
      ['2024-01-01T00:00:12.0000000Z', null, false], // expired
    ]);
  });
});

describe('listener: onPairRate only on change', () => {
  it('emits when rate, time, rank, used or freshness change, not on every tick', () => {
    const ticks: number[] = [];
    const s = new Scenario();
    s.engine.setListener({ onPairRate: (c) => s.changes.push(c), onTick: (t) => ticks.push(t) });
    s.feed(`
      x 00:00:00.1 A true 0
      t 00:00:00.5 A_SPOT_BTC_USD 100 1
      q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1
      q 00:00:05.5 A_SPOT_BTC_USD 100 1 102 1
      q 00:00:06.5 A_SPOT_BTC_USD 100 1 102 1
      q 00:00:07.5 A_SPOT_BTC_USD 100 1 102 1
      q 00:00:07.6 A_SPOT_BTC_USD 100 1 102 1`);
    s.to('00:00:20');
    // tick 1: 100 (new); tick 6: 101 (new rate); tick 7: same rate, newer time; tick 8: newer time (07.6)
    expect(s.changes.map((c) => [formatTime(c.tick), c.rate, formatTime(c.time!)])).toEqual([
      ['2024-01-01T00:00:01.0000000Z', 100, '2024-01-01T00:00:00.5000000Z'],
      ['2024-01-01T00:00:06.0000000Z', 101, '2024-01-01T00:00:05.5000000Z'],
      ['2024-01-01T00:00:07.0000000Z', 101, '2024-01-01T00:00:06.5000000Z'],
      ['2024-01-01T00:00:08.0000000Z', 101, '2024-01-01T00:00:07.6000000Z'],
    ]);
    expect(s.changes[0]).toMatchObject({ base: 'BTC', quote: 'USD', pair: 0, rank: 0, used: 1, fresh: true });
    expect(ticks).toHaveLength(20); // ticks 00:00:01 .. 00:00:20
    expect(s.engine.getStats().ticks).toBe(20);
    expect(s.engine.lastTickTime).toBe(us('00:00:20'));
  });
});

describe('section 6: track() and flush()', () => {
  const rows = `
    x 00:00:00.1 A true 0
    t 00:00:00.5 A_SPOT_BTC_USD 100 1
    q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1
    q 00:00:01.5 A_SPOT_BTC_USD 101 1 103 1
    q 00:00:02.5 A_SPOT_BTC_USD 98 1 100 1
    q 00:00:03.5 A_SPOT_BTC_USD 100 1 102 1`;
  const b = (t0: string, t1: string, start: string, end: string, o: number, h: number, l: number, c: number, count: number) => ({
    start: us(start),
    end: us(end),
    timeOpen: us(t0),
    timeClose: us(t1),
    open: o,
    high: h,
    low: l,
    close: c,
    count,
  });

  it('emits 1SEC and 1MIN buckets with hand-checked open/high/low/close', () => {
    const s = new Scenario();
    const tr = s.engine.track('BTC', 'USD', ['1SEC', '1MIN']);
    expect(s.engine.track('BTC', 'USD')).toBe(tr);
    const inv = s.engine.track('USD', 'BTC', ['1MIN']);
    expect(s.engine.trackedPairs()).toEqual([tr, inv]);
    // ticks 1, 2, 3, 4: rates 100, 102, 99, 101
    s.feed(rows).to('00:00:04');
    // 1SEC buckets close when the next tick arrives: ticks 1, 2, 3
    expect(s.buckets).toEqual([
      { pair: 'BTC/USD', period: '1SEC', bucket: b('00:00:01', '00:00:01', '00:00:01', '00:00:02', 100, 100, 100, 100, 1) },
      { pair: 'BTC/USD', period: '1SEC', bucket: b('00:00:02', '00:00:02', '00:00:02', '00:00:03', 102, 102, 102, 102, 1) },
      { pair: 'BTC/USD', period: '1SEC', bucket: b('00:00:03', '00:00:03', '00:00:03', '00:00:04', 99, 99, 99, 99, 1) },
    ]);
    expect(s.engine.openBuckets(tr).map((o) => o.period.period_id)).toEqual(['1SEC', '1MIN']);
    s.engine.flush();
    expect(s.buckets.slice(3)).toEqual([
      { pair: 'BTC/USD', period: '1SEC', bucket: b('00:00:04', '00:00:04', '00:00:04', '00:00:05', 101, 101, 101, 101, 1) },
      // 1MIN [00:00, 00:01): open 100 at tick 1, high 102, low 99, close 101 at tick 4
      { pair: 'BTC/USD', period: '1MIN', bucket: b('00:00:01', '00:00:04', '00:00:00', '00:01:00', 100, 102, 99, 101, 4) },
      // the inverse series: 1/100, high 1/99, low 1/102, close 1/101
      { pair: 'USD/BTC', period: '1MIN', bucket: b('00:00:01', '00:00:04', '00:00:00', '00:01:00', 1 / 100, 1 / 99, 1 / 102, 1 / 101, 4) },
    ]);
    expect(s.engine.openBuckets(tr)).toEqual([]);
  });

  it('closes the minute at the first tick of the next one; stale ticks are left out', () => {
    const s = new Scenario();
    s.engine.track('BTC', 'USD', ['1MIN']);
    s.feed(rows).to('00:01:00');
    // the quote of 00:00:03.5 stays fresh: ticks 1..59 feed [00:00, 00:01), tick 60 opens the next
    expect(s.buckets).toEqual([
      { pair: 'BTC/USD', period: '1MIN', bucket: b('00:00:01', '00:00:59', '00:00:00', '00:01:00', 100, 102, 99, 101, 59) },
    ]);
    const st = new Scenario({ staleAfterSeconds: 2 });
    st.engine.track('BTC', 'USD', ['1MIN']);
    st.feed(['x 00:00:00.1 A true 0', 't 00:00:00.5 A_SPOT_BTC_USD 100 1', 'q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1']).to('00:00:30');
    st.engine.flush();
    // fresh at ticks 1 and 2 (ages 0.5, 1.5 s); stale from tick 3 (2.5 s) on
    expect(st.buckets).toEqual([
      { pair: 'BTC/USD', period: '1MIN', bucket: b('00:00:01', '00:00:02', '00:00:00', '00:01:00', 100, 100, 100, 100, 2) },
    ]);
  });

  it('refuses an unknown period', () => {
    expect(() => createEngine().track('BTC', 'USD', ['7SEC'])).toThrow(/^unknown period id "7SEC"$/);
  });
});

describe('snapshots', () => {
  const log = events(`
    x 00:00:00.1 A true 1
    x 00:00:00.1 B true 1
    x 00:00:00.1 C true 1
    t 00:00:00.5 A_SPOT_BTC_USD 100 2
    t 00:00:00.5 B_SPOT_BTC_USD 100 1
    t 00:00:00.5 B_SPOT_ETH_BTC 0.05 3
    q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1
    q 00:00:00.5 B_SPOT_BTC_USD 101 2 103 2
    q 00:00:00.7 B_SPOT_ETH_BTC 0.049 1 0.051 1
    q 00:00:02.2 A_SPOT_BTC_USD 100 1 102 1
    q 00:00:02.4 A_SPOT_BTC_USD 50 1 150 1
    x 00:00:02.6 B false 1
    t 00:00:02.6 C_SPOT_BTC_USD 100 1
    q 00:00:03.1 C_SPOT_BTC_USD 103 1 105 1
    x 00:00:04.3 B true 1
    q 00:00:04.3 B_SPOT_ETH_BTC 0.05 1 0.052 1
    t 03:00:00 C_SPOT_BTC_USD 100 5
    q 03:59:59.5 A_SPOT_BTC_USD 100 1 102 1
    q 03:59:59.5 C_SPOT_BTC_USD 103 1 105 1
    q 03:59:59.5 B_SPOT_ETH_BTC 0.05 1 0.052 1
    q 04:00:00 B_SPOT_BTC_USD 100 1 106 1
    q 04:00:01.5 A_SPOT_BTC_USD 101 1 103 1`);
  const END = '04:00:03';

  function runAll(): { s: Scenario; out: string } {
    const s = new Scenario();
    s.engine.track('ETH', 'USD', ['1SEC', '1MIN', '1HRS']);
    s.feed(log).to(END);
    s.engine.flush();
    return { s, out: outputs(s) };
  }
  function outputs(s: Scenario): string {
    return JSON.stringify({
      changes: s.changes,
      buckets: s.buckets,
      explain: s.engine.explain('ETH', 'USD'),
      pairs: s.engine.pairs(),
      stats: s.engine.getStats(),
    });
  }

  it('snapshot -> JSON -> restore -> continue equals an uninterrupted run, at every split point', () => {
    const whole = runAll();
    // sanity: the whole run has ETH/USD through BTC, and C joins BTC/USD at 04:00
    expect(whole.s.engine.rate('ETH', 'USD')!.path).toEqual(['ETH', 'BTC', 'USD']);
    expect(whole.s.engine.explainPair('BTC', 'USD')!.used.map((m) => m.symbol_id)).toEqual([
      'A_SPOT_BTC_USD',
      'B_SPOT_BTC_USD',
      'C_SPOT_BTC_USD',
    ]);
    for (let split = 0; split <= log.length; split++) {
      const first = new Scenario();
      first.engine.track('ETH', 'USD', ['1SEC', '1MIN', '1HRS']);
      first.feed(log.slice(0, split));
      const text = JSON.stringify(first.engine.snapshot());
      const second = new Scenario({}, restoreEngine(JSON.parse(text) as EngineSnapshot));
      second.feed(log.slice(split)).to(END);
      second.engine.flush();
      const joined = new Scenario();
      joined.changes.push(...first.changes, ...second.changes);
      joined.buckets.push(...first.buckets, ...second.buckets);
      const out = JSON.stringify({
        changes: joined.changes,
        buckets: joined.buckets,
        explain: second.engine.explain('ETH', 'USD'),
        pairs: second.engine.pairs(),
        stats: second.engine.getStats(),
      });
      expect(out, `split at event ${split}`).toBe(whole.out);
      expect(JSON.stringify(second.engine.snapshot()), `state after split ${split}`).toBe(JSON.stringify(whole.s.engine.snapshot()));
    }
  });

  it('restores mid-run with a tick already computed and continues', () => {
    const a = new Scenario().feed(log.slice(0, 10)).to('00:00:03');
    const b = new Scenario({}, restoreEngine(JSON.parse(JSON.stringify(a.engine.snapshot()))));
    const before = a.changes.length;
    expect(b.engine.rate('ETH', 'USD')).toEqual(a.engine.rate('ETH', 'USD'));
    expect(b.engine.explain('ETH', 'USD')).toEqual(a.engine.explain('ETH', 'USD'));
    a.feed(log.slice(10)).to(END);
    b.feed(log.slice(10)).to(END);
    expect(b.changes.length).toBeGreaterThan(0);
    expect(b.changes).toEqual(a.changes.slice(before));
    expect(b.engine.snapshot()).toEqual(a.engine.snapshot());
  });

  it('refuses an unknown snapshot version', () => {
    const snap = createEngine().snapshot();
    expect(() => restoreEngine({ ...snap, version: 2 })).toThrow(/^unsupported engine snapshot version 2/);
  });
});

describe('memory', () => {
  it('the volume window does not grow with trades', () => {
    const s = new Scenario().feed(['x 00:00:00.1 A true 0', 't 00:00:00.5 A_SPOT_BTC_USD 100 1', 't 00:00:00.5 B_SPOT_BTC_USD 100 1']);
    const size0 = s.engine.snapshot().volume.sums.length;
    // 4,000 trades over 10 hours on the two markets
    for (let i = 1; i <= 4000; i++) {
      s.engine.apply(events(`t ${formatTime(us('00:00:01') + i * 9 * US).slice(11, 19)} ${i % 2 ? 'A' : 'B'}_SPOT_BTC_USD 100 1`)[0]);
    }
    expect(s.engine.snapshot().volume.sums.length).toBe(size0);
    expect(s.engine.getStats().events.trade).toBe(4002);
  });
});

describe('engine API odds and ends', () => {
  it('advanceTo before any event computes nothing', () => {
    const e = createEngine();
    e.advanceTo(us('00:10:00'));
    expect(e.lastTickTime).toBeUndefined();
    expect(e.firstTickTime).toBeUndefined();
    expect(e.getStats().ticks).toBe(0);
  });

  it('a symbol event that moves a market to another pair makes it qualify again', () => {
    const s = new Scenario()
      .feed(`
        x 00:00:00.1 A true 0
        s 00:00:00.2 M1 A SPOT BTC USD
        t 00:00:00.5 M1 100 1
        q 00:00:00.5 M1 99 1 101 1`)
      .to('00:00:01');
    expect(s.rate('BTC', 'USD')).toBe(100);
    s.feed('s 00:00:01.5 M1 A SPOT ETH USD').to('00:00:02');
    // BTC/USD has no market left: its rate is carried; ETH/USD waits for the next refresh
    expect(s.engine.rate('BTC', 'USD')).toMatchObject({ rate: 100, fresh: false });
    expect(s.engine.explainPair('BTC', 'USD')!.excluded).toEqual([]);
    expect(excludedReasons(s, 'ETH', 'USD')).toEqual({ M1: 'not_eligible' });
    expect(s.engine.listedPairs()).toEqual(['BTC/USD', 'ETH/USD']);
    // declared as non-SPOT: leaves every pair
    s.feed('s 00:00:02.5 M1 A PERPETUAL ETH USD').to('00:00:03');
    expect(s.engine.explainPair('ETH', 'USD')!.excluded.map((m) => m.reason)).toEqual(['not_spot']);
  });

  it('trackDirectPairs tracks each listed pair from the tick it first has a rate', () => {
    const s = new Scenario();
    s.engine.trackDirectPairs(['1MIN']);
    expect(() => s.engine.trackDirectPairs(['2SEC', '9SEC'])).toThrow(/^unknown period id "9SEC"$/);
    s.feed(`
      x 00:00:00.1 A true 0
      t 00:00:00.5 A_SPOT_BTC_USD 100 1
      t 00:00:00.5 A_SPOT_ETH_USD 10 1
      q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1
      q 00:00:02.5 A_SPOT_ETH_USD 9 1 11 1`).to('00:00:03');
    expect(s.engine.trackedPairs().map((t) => `${t.base}/${t.quote}`)).toEqual(['BTC/USD', 'ETH/USD']);
    s.engine.flush();
    // BTC/USD at 100 on ticks 1, 2, 3; ETH/USD at 10 from tick 3 only
    expect(s.buckets.map((b) => [b.pair, b.period, b.bucket.open, b.bucket.close, b.bucket.count, formatTime(b.bucket.timeOpen)])).toEqual([
      ['BTC/USD', '1MIN', 100, 100, 3, '2024-01-01T00:00:01.0000000Z'],
      ['ETH/USD', '1MIN', 10, 10, 1, '2024-01-01T00:00:03.0000000Z'],
    ]);
    // called again once rates exist: pairs already tracked keep their periods
    s.engine.trackDirectPairs();
    expect(s.engine.trackedPairs().map((t) => t.periods.length)).toEqual([1, 1]);
  });

  it('trackDirectPairs called late tracks the pairs that already have a rate at once', () => {
    const s = new Scenario()
      .feed(['x 00:00:00.1 A true 0', 't 00:00:00.5 A_SPOT_BTC_USD 100 1', 'q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1'])
      .to('00:00:02');
    s.engine.trackDirectPairs(['1SEC']);
    expect(s.engine.trackedPairs().map((t) => [`${t.base}/${t.quote}`, t.periods.map((p) => p.period_id)])).toEqual([
      ['BTC/USD', ['1SEC']],
    ]);
  });

  it('emitAllAtNextTick reports every pair with a rate once, changed or not', () => {
    const s = new Scenario()
      .feed([
        'x 00:00:00.1 A true 0',
        't 00:00:00.5 A_SPOT_BTC_USD 100 1',
        't 00:00:00.5 A_SPOT_ETH_USD 10 1',
        'q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1',
        'q 00:00:00.5 A_SPOT_ETH_USD 9 1 11 1',
      ])
      .to('00:00:05');
    expect(s.changes).toHaveLength(2); // both at tick 1
    s.engine.emitAllAtNextTick();
    s.to('00:00:07');
    expect(s.changes.slice(2).map((c) => [formatTime(c.tick), `${c.base}/${c.quote}`, c.rate])).toEqual([
      ['2024-01-01T00:00:06.0000000Z', 'BTC/USD', 100],
      ['2024-01-01T00:00:06.0000000Z', 'ETH/USD', 10],
    ]);
  });

  it('snapshots keep auto-tracking and a pending emit-all', () => {
    const rows = events([
      'x 00:00:00.1 A true 0',
      't 00:00:00.5 A_SPOT_BTC_USD 100 1',
      'q 00:00:00.5 A_SPOT_BTC_USD 99 1 101 1',
      'q 00:00:03.5 A_SPOT_BTC_USD 100 1 102 1',
    ]);
    const run = (split: number | undefined) => {
      const a = new Scenario();
      a.engine.trackDirectPairs(['1SEC', '1MIN']);
      a.feed(rows.slice(0, 2)).to('00:00:00');
      a.engine.emitAllAtNextTick();
      if (split === undefined) {
        a.feed(rows.slice(2)).to('00:00:05');
        a.engine.flush();
        return JSON.stringify([a.changes, a.buckets]);
      }
      a.feed(rows.slice(2, split));
      const b = new Scenario({}, restoreEngine(JSON.parse(JSON.stringify(a.engine.snapshot()))));
      b.feed(rows.slice(split)).to('00:00:05');
      b.engine.flush();
      return JSON.stringify([
        [...a.changes, ...b.changes],
        [...a.buckets, ...b.buckets],
      ]);
    };
    const whole = run(undefined);
    // tick 1: 100 (emit-all and a change anyway); tick 4: 101
    expect(JSON.parse(whole)[0].map((c: { rate: number }) => c.rate)).toEqual([100, 101]);
    for (const split of [2, 3, 4]) expect(run(split), `split ${split}`).toBe(whole);
  });

  it('refuses a snapshot that tracks an unknown period', () => {
    const e = createEngine();
    e.track('BTC', 'USD', ['1SEC']);
    const snap = JSON.parse(JSON.stringify(e.snapshot())) as EngineSnapshot;
    snap.tracked[0].periods = ['7SEC'];
    expect(() => restoreEngine(snap)).toThrow(/^snapshot tracks unknown period "7SEC"$/);
  });
});
