/**
 * Test helper: compact rows -> typed events -> an engine, with its outputs collected.
 *
 * A row is one whitespace-separated line (blank lines and `#` comments are skipped):
 *
 * | row | fields |
 * |---|---|
 * | `q TIME SYMBOL BID BID_SIZE ASK ASK_SIZE` | quote |
 * | `t TIME SYMBOL PRICE SIZE` | trade |
 * | `x TIME EXCHANGE LEGITIMATE [RANK]` | exchange (LEGITIMATE = true/false) |
 * | `s TIME SYMBOL EXCHANGE TYPE BASE QUOTE` | symbol |
 *
 * TIME is `HH:MM:SS[.fraction]` on 2024-01-01 (UTC), or a full ISO time (`2024-01-02T04:00:00Z`).
 * Every row goes through {@link parseEvent}, so numbers keep their exact decimal text.
 */
import type { EngineConfig } from '../../src/core/config.js';
import { createEngine, type Engine, type PairRateChange, type TrackedPair } from '../../src/core/engine.js';
import { parseEvent } from '../../src/core/events.js';
import type { OhlcBucket } from '../../src/core/ohlc.js';
import type { PeriodRecord } from '../../src/core/periods.js';
import { parseTime } from '../../src/core/time.js';
import { isReject, type Reject, type XrateEvent } from '../../src/core/types.js';

/** The day every `HH:MM:SS` time refers to. */
export const DAY = '2024-01-01';
export const US = 1_000_000;

/** µs since the epoch of `HH:MM:SS[.f]` on {@link DAY}, or of a full ISO time. */
export function us(text: string): number {
  const iso = text.includes('T') ? text : `${DAY}T${text}Z`;
  const t = parseTime(iso);
  if (t === undefined) throw new Error(`scenario: bad time ${JSON.stringify(text)}`);
  return t;
}

/** One compact row to an event record (snake_case, as in the log). */
export function record(row: string): Record<string, unknown> {
  const f = row.trim().split(/\s+/);
  const time = f[1].includes('T') ? f[1] : `${DAY}T${f[1]}Z`;
  switch (f[0]) {
    case 'q':
      return { type: 'quote', time, symbol_id: f[2], bid_price: f[3], bid_size: f[4], ask_price: f[5], ask_size: f[6] };
    case 't':
      return { type: 'trade', time, symbol_id: f[2], price: f[3], size: f[4] };
    case 'x':
      return { type: 'exchange', time, exchange_id: f[2], legitimate: f[3], rank: f[4] ?? '0' };
    case 's':
      return { type: 'symbol', time, symbol_id: f[2], exchange_id: f[3], symbol_type: f[4], asset_id_base: f[5], asset_id_quote: f[6] };
    default:
      throw new Error(`scenario: unknown row kind in ${JSON.stringify(row)}`);
  }
}

/** One compact row to a typed event (throws if the row does not parse: a bug in the test). */
export function ev(row: string): XrateEvent {
  const e = parseEvent(record(row));
  if (isReject(e)) throw new Error(`scenario: row ${JSON.stringify(row)} rejected: ${e.message}`);
  return e;
}

/** Many rows (one per line, or an array) to events. */
export function events(rows: string | readonly string[]): XrateEvent[] {
  const lines = typeof rows === 'string' ? rows.split('\n') : rows;
  return lines
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map(ev);
}

/** A closed OHLC bucket as the listener saw it. */
export interface SeenBucket {
  pair: string;
  period: string;
  bucket: OhlcBucket;
}

/** An engine plus everything its listener reported. */
export class Scenario {
  readonly engine: Engine;
  readonly changes: PairRateChange[] = [];
  readonly buckets: SeenBucket[] = [];
  readonly rejects: Reject[] = [];

  constructor(config: Partial<EngineConfig> = {}, engine?: Engine) {
    this.engine = engine ?? createEngine(config);
    this.engine.setListener({
      onPairRate: (c) => this.changes.push(c),
      onBucket: (t: TrackedPair, p: PeriodRecord, b: OhlcBucket) =>
        this.buckets.push({ pair: `${t.base}/${t.quote}`, period: p.period_id, bucket: b }),
    });
  }

  /** Applies rows (or events) in order; rejects are collected, not thrown. */
  feed(rows: string | readonly string[] | readonly XrateEvent[]): this {
    const evs =
      typeof rows === 'string' || (rows.length > 0 && typeof rows[0] === 'string')
        ? events(rows as string | string[])
        : (rows as XrateEvent[]);
    for (const e of evs) {
      const r = this.engine.apply(e);
      if (r) this.rejects.push(r);
    }
    return this;
  }

  /** Computes every tick up to and including `time` (HH:MM:SS or ISO). */
  to(time: string): this {
    this.engine.advanceTo(us(time));
    return this;
  }

  /** rate(base, quote).rate at the last tick, or undefined. */
  rate(base: string, quote: string): number | undefined {
    return this.engine.rate(base, quote)?.rate;
  }
}
